"""HTML for notebooks: every name escaped, one palette for change kinds."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from schemalab.render.palette import event_color

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.explain.read import ReadExplanation
    from schemalab.history.model import TableHistory
    from schemalab.history.versions import FieldEvent

def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def event_badge(ev: FieldEvent) -> str:
    color = event_color(ev.kind)
    return (f'<span class="sl-ev sl-{e(ev.kind)}" style="color:{color}">'
            f"{e(ev.describe())}</span>")


def render_history_html(h: TableHistory) -> str:
    rows = []
    for v in h.schemas:
        evs = ", ".join(event_badge(ev) for ev in v.events) or "—"
        rows.append(f"<tr><td>{v.id}</td><td>{e(_fmt_time(v.time_millis))}</td>"
                    f"<td>{len(v.top_level)}</td><td>{evs}</td></tr>")
    lin_rows = []
    for lin in h.lineage:
        flags = []
        if lin.name_reused_from:
            flags.append("name reused from field " + ", ".join(map(str, lin.name_reused_from)))
        if lin.swapped_with:
            flags.append("swapped with field " + ", ".join(map(str, lin.swapped_with)))
        lin_rows.append(
            f"<tr><td>{lin.field_id}</td><td>{' → '.join(e(n) for n in lin.names)}</td>"
            f"<td>{'; '.join(event_badge(ev) for ev in lin.events)}</td>"
            f"<td>{e('; '.join(flags))}</td></tr>")
    snap_rows = [f"<tr><td>{s.id}</td><td>{'' if s.schema_id is None else s.schema_id}</td>"
                 f"<td>{e(s.kind)}</td><td>{'' if s.record_count is None else s.record_count}"
                 f"</td><td>{len(s.live_files)}</td></tr>" for s in h.snapshots]
    return (
        f'<div class="sl-history"><h4>{e(h.name)} <small>({e(h.format)})</small></h4>'
        "<table><thead><tr><th>schema</th><th>time</th><th>columns</th><th>changes</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        "<table><thead><tr><th>field id</th><th>names</th><th>events</th><th>flags</th></tr>"
        f"</thead><tbody>{''.join(lin_rows)}</tbody></table>"
        "<table><thead><tr><th>snapshot</th><th>schema</th><th>kind</th><th>rows</th>"
        f"<th>live files</th></tr></thead><tbody>{''.join(snap_rows)}</tbody></table></div>")


def _fmt_time(millis: int | None) -> str:
    import datetime as dt

    if millis is None or millis <= 0:
        return ""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def explanation_html(ex: ReadExplanation) -> str:
    """A read explanation for a notebook: per file group, each column and why."""
    parts = [f"<div class='sl-explain'><b>{e(ex.table)}</b>: snapshot "
             f"{e(ex.snapshot_id)}, schema {ex.schema_id}, {e(ex.mode_text)}"]
    if ex.merge:
        parts.append(f"<p class='sl-merge'>{e(ex.merge)}</p>")
    if ex.key is not None:
        rows = "".join(
            f"<tr class='{'sl-winner' if v is ex.key.winner else 'sl-loser'}'>"
            f"<td>{v.sequence_number}</td><td>{e(v.kind_text)}</td><td><code>"
            f"{e(v.file.rsplit('/', 1)[-1])}</code></td><td>{v.schema_id}</td>"
            f"<td>{v.level}</td><td>{e(v.values)}</td></tr>" for v in ex.key.versions)
        parts.append(f"<p class='sl-key'>{e(ex.key.reason)}</p><table><tr><th>seq</th>"
                     "<th>kind</th><th>file</th><th>schema</th><th>level</th><th>row</th>"
                     f"</tr>{rows}</table>")
    if ex.deletes:
        items = "".join(f"<li>{e(d.text)}</li>" for d in ex.deletes)
        parts.append(f"<p>deletes</p><ul class='sl-deletes'>{items}</ul>")
    for g in ex.groups:
        rows = "".join(f"<tr class='sl-{e(c.kind)}'><td><code>{e(c.column)}</code></td>"
                       f"<td>{e(c.text)}</td></tr>" for c in g.columns)
        ignored = "".join(f"<li>{e(i)}</li>" for i in g.ignored)
        parts.append(f"<p>{e(g.title)}</p><table>{rows}</table>"
                     + (f"<ul>{ignored}</ul>" if ignored else ""))
    return "".join(parts) + "</div>"
