"""HTML tables that read the same in a notebook output, inside a widget and on GitHub: the
styling is inline (a widget's HTML gets none of JupyterLab's table CSS), every value escaped,
NULL shown as NULL.

    >>> print(html_table(["a", "b"], [[1, None]]))  # doctest: +ELLIPSIS
    <table class='sl-table' ...<th ...>a</th>...<td ...>1</td><td ...><span ...>NULL</span></td>...
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from schemalab.explain.values import value_text

TABLE = "border-collapse:collapse;font-size:12px;margin:4px 0 8px 0;line-height:1.4"
TH = ("text-align:left;padding:3px 10px;border-bottom:2px solid #d0d7de;"
      "background:#f6f8fa;font-weight:600;white-space:nowrap")
TD = "text-align:left;padding:2px 10px;border-bottom:1px solid #eaeef2;vertical-align:top"
NULL_HTML = "<span style='color:#8c959f;font-style:italic'>NULL</span>"


def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


class Html(str):
    """Text that is HTML already: :func:`html_table` puts it in a cell as it is."""

    __slots__ = ()


def cell_html(value: Any) -> str:
    """A value for a table cell: HTML as it is, NULL as NULL, anything else as text."""
    if isinstance(value, Html):
        return str(value)
    if value is None:
        return NULL_HTML
    return e(value_text(value))


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *,
               css_class: str = "sl-table", row_classes: Sequence[str] | None = None,
               caption: str = "") -> str:
    """A styled table; ``caption`` (plain text) goes under it in small grey."""
    head = "".join(f"<th style='{TH}'>{e(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f" class='{e(row_classes[i])}'" if row_classes else ""
        zebra = " style='background:#fbfcfd'" if i % 2 else ""
        body.append(f"<tr{cls}{zebra}>" + "".join(f"<td style='{TD}'>{cell_html(v)}</td>"
                                                  for v in row) + "</tr>")
    cap = (f"<div style='font-size:11px;color:#57606a'>{e(caption)}</div>" if caption else "")
    return (f"<table class='{e(css_class)}' style='{TABLE}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{cap}")
