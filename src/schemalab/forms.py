"""The notebook (HTML) and text forms of schemalab's values, as a registry: a value class
asks for its form by a kind name, and :mod:`schemalab.render` — the edge, which knows HTML —
registers the forms (``schemalab.render.attach``, imported by :mod:`schemalab`). The values
themselves import nothing of the presentation, and ``import schemalab`` stays light.

    >>> register("example", html=lambda v: f"<b>{v}</b>")
    >>> html("example", 3)
    '<b>3</b>'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_HTML: dict[str, Callable[[Any], str]] = {}
_TEXT: dict[str, Callable[[Any], str]] = {}


def register(kind: str, *, html: Callable[[Any], str] | None = None,
             text: Callable[[Any], str] | None = None) -> None:
    """The forms of the values of ``kind`` (a later registration replaces an earlier one)."""
    if html is not None:
        _HTML[kind] = html
    if text is not None:
        _TEXT[kind] = text


def _form(forms: dict[str, Callable[[Any], str]], what: str, kind: str) -> Callable[[Any], str]:
    form = forms.get(kind)
    if form is None:
        # render/ registers every kind when schemalab is imported, which importing any of
        # its modules does first: a missing form is a bug, not a user's mistake
        raise LookupError(f"no {what} form is registered for {kind!r} values")
    return form


def html(kind: str, value: Any) -> str:
    """``value``'s HTML (its ``_repr_html_``)."""
    return _form(_HTML, "HTML", kind)(value)


def text(kind: str, value: Any) -> str:
    """``value``'s text (its ``__str__``)."""
    return _form(_TEXT, "text", kind)(value)
