"""HTML of ``t.why(column)``: the headline, the field's history, and one table row per group
of files with its rows, NULLs, common values and how the column is read from them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.render.html import BOX, NOTE, e, schema_badge
from schemalab.render.tables import Html, html_table

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.explain.why import WhyAnswer


def why_html(a: WhyAnswer) -> str:
    parts = [f"<div class='sl-why' style='{BOX}'><b>{e(a.headline())}</b>"]
    parts += [f"<p style='margin:2px 0'>{e(line)}</p>" for line in a.history]
    if a.merge:
        parts.append(f"<p style='{NOTE}'>{e(a.merge)}</p>")
    if not a.groups:
        parts.append(f"<p>No rows: {e(a.no_rows_text())}.</p>")
        return "".join(parts) + _deletes_html(a) + "</div>"
    parts.append(f"<p style='margin:4px 0'>{a.rows} row{'s' if a.rows != 1 else ''}, "
                 f"{a.nulls} NULL</p>")
    newest = max(g.schema_id for g in a.groups)
    rows = [[Html(schema_badge(g.schema_id, newest)), g.files, g.rows, g.nulls,
             ", ".join(f"{v} ×{n}" for v, n in g.values),
             Html(e(g.text) + (f"<br><i>{e(g.note)}</i>" if g.note else ""))] for g in a.groups]
    parts.append(html_table(["files written under", "files", "rows", "NULL", "values",
                             "why"], rows, row_classes=[f"sl-{g.kind}" for g in a.groups]))
    return "".join(parts) + _deletes_html(a) + "</div>"


def _deletes_html(a: WhyAnswer) -> str:
    if not a.deletes:
        return ""
    items = "".join("<li>" + "<br>".join(e(x.strip()) for x in d.splitlines()) + "</li>"
                    for d in a.deletes)
    return (f"<p style='margin:6px 0 2px 0'>{e(a.deletes_title())}</p>"
            f"<ul class='sl-deletes' style='margin:0'>{items}</ul>")
