"""The notebook (``_repr_html_``) and text forms of schemalab's values, attached to their
classes here: the values know nothing of HTML, and this edge module knows every form.
Importing :mod:`schemalab` attaches them, so a notebook shows a schema, a history, a
snapshot tree, a read explanation or a why-answer as before.

    >>> import schemalab
    >>> from schemalab.schema.table_schema import TableSchema
    >>> "<table" in TableSchema(0, (), -1)._repr_html_()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemalab.explain.read import ReadExplanation
from schemalab.explain.why import WhyAnswer
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import FieldLineage, SchemaVersion
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
from schemalab.schema.table_schema import TableSchema

#: (class, method name, form): each form takes the value and returns its text or HTML
FORMS: tuple[tuple[type, str, Callable[[Any], str]], ...] = (
    (TableSchema, "_repr_html_", schema_html),
    (SchemaVersion, "_repr_html_", version_html),
    (FieldLineage, "_repr_html_", lineage_html),
    (SnapshotNode, "_repr_html_", snapshot_html),
    (TableHistory, "_repr_html_", render_history_html),
    (TableHistory, "__str__", history_text),
    (ReadExplanation, "_repr_html_", explanation_html),
    (WhyAnswer, "_repr_html_", why_html),
)


def attach() -> None:
    """Give each class of :data:`FORMS` its form (idempotent)."""
    for cls, name, form in FORMS:
        setattr(cls, name, form)


attach()
