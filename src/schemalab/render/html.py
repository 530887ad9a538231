"""HTML for notebooks: a table's history, schemas, lineages, snapshots and read explanations.

Every name is escaped; tables are styled inline (:mod:`schemalab.render.tables`), change kinds
coloured by :mod:`schemalab.render.palette`. Long histories show their newest part and say
how much is left out (``print(h)`` and ``schemalab inspect`` show everything).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from schemalab.explain.values import value_text
from schemalab.render.palette import event_color, schema_color, schema_text_color
from schemalab.render.tables import Html, html_table

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.explain.key import KeyExplanation
    from schemalab.explain.read import ReadExplanation
    from schemalab.history.model import TableHistory
    from schemalab.history.snapshots import SnapshotNode
    from schemalab.history.versions import FieldEvent, FieldLineage, SchemaVersion
    from schemalab.schema.table_schema import TableSchema

#: rows of a long list shown in a repr: the first and last half of this many
MAX_ROWS = 40
NOTE = "font-size:11px;color:#57606a;margin:2px 0 8px 0"
BOX = "font-family:var(--jp-ui-font-family, sans-serif);font-size:13px"


def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def event_badge(ev: FieldEvent) -> str:
    color = event_color(ev.kind)
    return (f'<span class="sl-ev sl-{e(ev.kind)}" style="color:{color}">'
            f"{e(ev.describe())}</span>")


def schema_badge(schema_id: int | None, newest: int | None = None) -> str:
    """``schema N`` on its schema colour (the same as in the figures)."""
    if schema_id is None:
        return "<span>no schema</span>"
    return (f"<span style='background:{schema_color(schema_id, newest)};color:"
            f"{schema_text_color(schema_id, newest)};border-radius:3px;padding:0 4px'>"
            f"schema {schema_id}</span>")


def fmt_time(millis: int | None) -> str:
    import datetime as dt

    if millis is None or millis <= 0:
        return ""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _shown(n: int, limit: int = MAX_ROWS) -> tuple[list[int], int]:
    """Which of ``n`` rows to show (the first and last ``limit/2``) and how many are left
    out."""
    if n <= limit:
        return list(range(n)), 0
    half = limit // 2
    return list(range(half)) + list(range(n - half, n)), n - 2 * half


def _with_gap(rows: list[list[Any]], keep: list[int], left_out: int, width: int,
              what: str) -> list[list[Any]]:
    out: list[list[Any]] = []
    for k, i in enumerate(keep):
        if k and i != keep[k - 1] + 1:
            out.append([Html(f"<i style='color:#57606a'>… {left_out} {what} not shown</i>")]
                       + [""] * (width - 1))
        out.append(rows[i])
    return out


def partial_html(h: TableHistory) -> str:
    """A banner for a partial history (a catalog that returned only the snapshots its refs
    name): what is missing and how to load it all; empty for a whole history."""
    if not h.partial:
        return ""
    return ("<div class='sl-partial' role='note' style='border-left:3px solid #bf8700;"
            "background:#fff8c5;color:#3b2300;padding:4px 8px;margin:2px 0 6px 0;"
            f"{BOX}'><b>Partial history</b>: {e(h.partial)}</div>")


def render_history_html(h: TableHistory, *, times: bool = True) -> str:
    """A table's history: its schema versions and their changes, each field's lineage, and
    the snapshots with what each changed and its live files. ``times=False`` leaves out
    when each was written (a notebook's stored output then stays the same run to run)."""
    versions = [v for v in h.schemas if v.kind == "schema"]
    newest = max((v.id for v in versions), default=0)
    v_rows = []
    for i, v in enumerate(versions):
        changes = (f"created with {len(v.top_level)} columns" if i == 0 else
                   ", ".join(event_badge(ev) for ev in v.events) or "options only")
        v_rows.append([Html(schema_badge(v.id, newest))]
                      + ([fmt_time(v.time_millis)] if times else [])
                      + [len(v.top_level), Html(changes)])
    keep, left = _shown(len(v_rows))
    parts = [f"<div class='sl-history' style='{BOX}'><h4 style='margin:4px 0'>{e(h.name)} "
             f"<small style='color:#57606a'>({e(h.format)})</small></h4>", partial_html(h),
             f"<p style='{NOTE}'>{len(versions)} schema version"
             f"{'s' if len(versions) != 1 else ''}, {len(h.lineage)} field"
             f"{'s' if len(h.lineage) != 1 else ''} over its life, {len(h.snapshots)} snapshot"
             f"{'s' if len(h.snapshots) != 1 else ''}</p>",
             html_table(["schema"] + (["time (UTC)"] if times else []) + ["columns", "changes"],
                        _with_gap(v_rows, keep, left, 4 if times else 3, "versions"))]
    l_rows = []
    for lin in h.lineage:
        flags = []
        if lin.name_reused_from:
            flags.append("name reused from field " + ", ".join(map(str, lin.name_reused_from)))
        if lin.swapped_with:
            flags.append("swapped with field " + ", ".join(map(str, lin.swapped_with)))
        l_rows.append([lin.field_id, " → ".join(lin.names),
                       Html("; ".join(event_badge(ev) for ev in lin.events)),
                       "; ".join(flags)])
    keep, left = _shown(len(l_rows))
    parts.append(html_table(["field id", "names", "events", "flags"],
                            _with_gap(l_rows, keep, left, 4, "fields"), css_class="sl-lineage"))
    parts.append(_warnings_html(h))
    parts.append(_snapshots_html(h, newest, times))
    return "".join(parts) + "</div>"


def _warnings_html(h: TableHistory) -> str:
    """What does not add up in the history (a rewritten history's files), in red; nothing
    when all is well or when it cannot be checked (an unreadable manifest)."""
    try:
        found = list(h.warnings())
    except Exception:  # noqa: BLE001 - the rest of the history still shows
        return ""
    if not found:
        return ""
    items = "".join(f"<li>snapshot{'s' if len(w.snapshot_ids) != 1 else ''} "
                    f"{e(', '.join(map(str, w.snapshot_ids)))}: {e(w.message)}</li>"
                    for w in found[:MAX_ROWS])
    more = f"<li>… and {len(found) - MAX_ROWS} more</li>" if len(found) > MAX_ROWS else ""
    return (f"<div class='sl-warnings' style='color:#cf222e;margin:6px 0'><b>Rewritten "
            f"history</b><ul style='margin:2px 0'>{items}{more}</ul></div>")


def _snapshots_html(h: TableHistory, newest: int, times: bool) -> str:
    snaps = list(h.snapshots)
    if not snaps:
        return f"<p style='{NOTE}'>No snapshots yet: no data was written.</p>"
    shown = snaps[-MAX_ROWS:]
    try:
        changes = {c.snapshot_id: c for c in h.changes([s.id for s in shown])}
    except Exception:  # an unreadable manifest: the rest of the history still shows
        changes = {}
    rows: list[list[Any]] = []
    for s in shown:
        c = changes.get(s.id)
        row: list[Any] = [s.label]
        rows.append(row + ([fmt_time(s.time_millis)] if times else [])
                    + [s.kind, Html(schema_badge(s.schema_id, newest)),
                     s.record_count, "" if c is None else f"+{len(c.added)}",
                     "" if c is None else f"−{len(c.removed)}",
                     "" if c is None else c.live_files])
    note = (f"the newest {len(shown)} of {len(snaps)} snapshots" if len(shown) < len(snaps)
            else "")
    return html_table(["snapshot"] + (["time (UTC)"] if times else [])
                      + ["kind", "schema", "rows", "files added", "files removed", "live files"],
                      rows, css_class="sl-snapshots", caption=note)


def explanation_html(ex: ReadExplanation) -> str:
    """A read explanation for a notebook: per file group, each column and why."""
    what = (f"no data yet (no snapshot); schema {ex.schema_id}" if ex.snapshot_id is None
            else f"read of snapshot {ex.snapshot_id} in schema {ex.schema_id}")
    parts = [f"<div class='sl-explain' style='{BOX}'><b>{e(ex.table)}</b>: {e(what)} "
             f"<span style='color:#57606a'>({e(ex.mode_text)})</span>"]
    if ex.binding:
        parts.append(f"<p class='sl-binding'>{e(ex.binding)}</p>")
    if ex.merge:
        parts.append(f"<p class='sl-merge'>{e(ex.merge)}</p>")
    if ex.key is not None:
        parts.append(key_html(ex.key))
    if ex.deletes:
        items = "".join(f"<li>{e(d.text)}</li>" for d in ex.deletes)
        parts.append("<p style='margin:6px 0 2px 0'>deletes: why rows are absent, or present "
                     f"despite a delete file</p><ul class='sl-deletes'>{items}</ul>")
    if not ex.groups:
        parts.append(f"<p style='{NOTE}'>No data files: every read is empty.</p>")
    for g in ex.groups:
        rows = [[Html(f"<code>{e(c.column)}</code>"), c.text] for c in g.columns]
        rows += [["", Html(f"<i>{e(i)}</i>")] for i in g.ignored]
        parts.append(f"<p style='margin:6px 0 2px 0'>{e(g.title)}</p>"
                     + html_table(["column", "how it is read"], rows,
                                  row_classes=[f"sl-{c.kind}" for c in g.columns]
                                  + ["sl-ignored"] * len(g.ignored)))
    return "".join(parts) + "</div>"


def key_html(key: KeyExplanation) -> str:
    rows = [[v.sequence_number, v.kind_text, Html(f"<code>{e(v.file.rsplit('/', 1)[-1])}</code>"),
             v.schema_id, v.level, ", ".join(f"{k}={value_text(x)}" for k, x in v.values.items())]
            for v in key.versions]
    return (f"<p class='sl-key'>{e(key.reason)}</p>"
            + html_table(["seq", "kind", "file", "schema", "level", "row"], rows,
                         row_classes=["sl-winner" if v is key.winner else "sl-loser"
                                      for v in key.versions]))


def schema_html(s: TableSchema) -> str:
    """A schema version: its fields with ids (nested ones indented), keys and options."""
    from schemalab.types.visitor import iter_fields

    rows = []
    for path, f in iter_fields(s.fields):
        depth = len(path) - 1
        name = "\u2003" * depth + ("└ " if depth else "") + f.name
        notes = []
        if f.name in s.primary_keys and not depth:
            notes.append("primary key")
        if f.name in s.partition_keys and not depth:
            notes.append("partition key")
        if f.description:
            notes.append(f.description)
        rows.append([f.id, Html(f"<code>{e(name)}</code>"), f.type.sql(), "; ".join(notes)])
    opts = ", ".join(f"{k} = {v}" for k, v in sorted(s.options.items()))
    return (f"<div class='sl-schema' style='{BOX}'><b>schema {s.id}</b> "
            f"<span style='color:#57606a'>{len(s.fields)} columns, highest field id "
            f"{s.highest_field_id}" + (f"; options: {e(opts)}" if opts else "") + "</span>"
            + html_table(["id", "name", "type", "notes"], rows) + "</div>")


def version_html(v: SchemaVersion) -> str:
    rows = [[f.id, Html("<code>" + e("\u2003" * len(f.path[:-1]) + f.name) + "</code>"), f.type,
             "" if f.nullable else "NOT NULL"] for f in v.fields]
    changes = ", ".join(event_badge(ev) for ev in v.events)
    return (f"<div class='sl-version' style='{BOX}'><b>schema {v.id}</b> "
            f"<span style='color:#57606a'>{e(fmt_time(v.time_millis))}</span>"
            + (f"<p style='margin:2px 0'>{changes}</p>" if changes else "")
            + html_table(["id", "name", "type", ""], rows) + "</div>")


def lineage_html(lin: FieldLineage) -> str:
    rows = [[ev.schema_id, Html(event_badge(ev))] for ev in lin.events]
    flags = []
    if lin.name_reused_from:
        flags.append("its name was used before by field "
                     + ", ".join(map(str, lin.name_reused_from)))
    if lin.swapped_with:
        flags.append("swapped names with field " + ", ".join(map(str, lin.swapped_with)))
    return (f"<div class='sl-field' style='{BOX}'><b>field {lin.field_id}</b>: "
            f"{e(' → '.join(lin.names))}" + ("" if lin.alive else " (dropped)")
            + (f"<p style='{NOTE}'>{e('; '.join(flags))}</p>" if flags else "")
            + html_table(["schema", "change"], rows) + "</div>")


def snapshot_html(s: SnapshotNode) -> str:
    rows = [[f.kind, Html(f"<code>{e(f.path)}</code>"), f.schema_id, f.row_count,
             ", ".join(f"{k}={value_text(v)}" for k, v in f.partition.items())]
            for lst in s.lists for m in lst.manifests for f in m.files]
    head = (f"<div class='sl-snapshot' style='{BOX}'><b>snapshot {e(s.id)}</b> "
            f"<span style='color:#57606a'>{e(s.kind)}, schema {s.schema_id}, "
            f"{'?' if s.record_count is None else s.record_count} rows"
            + (f", {e(fmt_time(s.time_millis))} UTC" if s.time_millis else "") + "</span>")
    if not rows:
        return (head + f"<p style='{NOTE}'>(its files: history().tree({e(s.id)}))</p>"
                + "</div>")
    return head + html_table(["entry", "file", "schema", "rows", "partition"], rows) + "</div>"
