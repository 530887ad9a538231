"""The notebook (``_repr_html_``) and text forms of schemalab's values, registered here
(:mod:`schemalab.forms`): the values know nothing of HTML, this edge module knows every form.
Importing :mod:`schemalab` registers them, so a notebook shows a schema, a history, a
snapshot tree, a read explanation or a why-answer as before.

    >>> from schemalab.schema.table_schema import TableSchema
    >>> "<table" in TableSchema(0, (), -1)._repr_html_()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemalab import forms
from schemalab.render.history_text import history_text
from schemalab.render.html import (
    explanation_html,
    lineage_html,
    render_history_html,
    schema_html,
    snapshot_html,
    version_html,
)
from schemalab.render.why_html import why_html

#: kind → its HTML form (each takes the value and returns HTML)
HTML_FORMS: dict[str, Callable[[Any], str]] = {
    "schema": schema_html,
    "schema-version": version_html,
    "field-lineage": lineage_html,
    "snapshot": snapshot_html,
    "history": render_history_html,
    "read-explanation": explanation_html,
    "why": why_html,
}
#: kind → its text form
TEXT_FORMS: dict[str, Callable[[Any], str]] = {"history": history_text}


def attach() -> None:
    """Register every form (idempotent)."""
    for kind, form in HTML_FORMS.items():
        forms.register(kind, html=form)
    for kind, form in TEXT_FORMS.items():
        forms.register(kind, text=form)


attach()
