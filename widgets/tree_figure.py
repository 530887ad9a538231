"""A snapshot's tree drawn left to right: snapshot → manifest lists → manifests → file
entries, each box as tall as the files under it.

The snapshot and its lists take narrow columns, the files most of the width (their names and
row counts are what a reader looks for). Data files are coloured by the schema id they were
written with (the teal ramp of :mod:`schemalab.render.palette`); an entry that removes a
file (Paimon's DELETE, Iceberg's DELETED) is hatched grey, never a schema's colour; delete
files and deletion vectors (Iceberg's position/equality delete files and Puffin vectors,
Paimon's deletion-vector index files) are cross-hatched rose, and a data file with a deletion
vector says how many of its rows it deletes. The subtitle says what the snapshot's row count
counts and how the table's reads merge and delete.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
from schemalab.widgets.frame import frame

from schemalab.history.snapshots import FileNode, SnapshotNode
from schemalab.render.palette import (
    DELETE_FILE_COLOR,
    INDEX_FILE_COLOR,
    REMOVED_FILE_COLOR,
    schema_color,
    schema_text_color,
)

#: where each level starts on the x axis and how wide it is (the files get the most room)
LEVELS = ((0.0, 0.9), (0.9, 1.15), (2.05, 1.6), (3.65, 6.35))
ROW_PX = 24
#: the x axis's tick labels on top of the plot
AXIS_TOP_PX = 22
#: file rows drawn before the rest of a manifest is summed up in one "… N more" box
MAX_FILES = 60


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=False)


def rows_text(n: int | None) -> str:
    """``1 row``, ``2 rows``, ``1,250 rows``; ``? rows`` when unknown."""
    return "? rows" if n is None else f"{n:,} row{'' if n == 1 else 's'}"


def removes(f: FileNode) -> bool:
    """Whether an entry removes its file (Paimon says ADD/DELETE, Iceberg
    ADDED/EXISTING/DELETED)."""
    return not f.kind.startswith(("ADD", "EXISTING"))


def deletes_rows(f: FileNode) -> bool:
    """Whether an entry is a delete file or deletion vector rather than data."""
    return "delet" in f.kind.split(" ", 1)[-1] if " " in f.kind else False


def file_group(f: FileNode) -> str:
    """Which legend entry a file entry belongs to."""
    if removes(f):
        return "removed"
    if deletes_rows(f):
        return "deletes"
    if "index" in f.kind:
        return "index"
    return f"schema {f.schema_id}"


def file_text(f: FileNode) -> str:
    """A file entry's label: kind, name, rows (and a deletion vector's deleted rows)."""
    rows = rows_text(f.row_count)
    if "deletion vectors" in f.kind:
        rows = f"{f.row_count} data file{'s' if f.row_count != 1 else ''}"
    elif deletes_rows(f) and f.row_count is not None:
        rows = f"{f.row_count:,} delete row{'s' if f.row_count != 1 else ''}"
    dv = "" if not f.deleted_rows else f", {f.deleted_rows:,} deleted by a deletion vector"
    return f"{_esc(f.kind)} {_esc(_short(f.path))} · {rows}{dv}"


def _file_hover(f: FileNode) -> str:
    part = ", ".join(f"{_esc(k)}={_esc(v)}" for k, v in f.partition.items())
    rows = rows_text(f.row_count)
    if "deletion vectors" in f.kind:
        rows = f"deletion vectors for {f.row_count} data file{'s' if f.row_count != 1 else ''}"
    elif deletes_rows(f):
        rows = f"{rows} (delete rows)"
    out = (f"<b>{_esc(f.path)}</b><br>{_esc(f.kind)}, written under schema {f.schema_id}, "
           f"{rows}" + (f"<br>{part}" if part else "")
           + ("" if f.bucket is None else f"<br>bucket {f.bucket}") + _lsm_text(f))
    if f.target:
        out += f"<br>deletes rows of {_esc(_short(f.target, 80))}"
    if f.deleted_rows:
        out += (f"<br>{f.deleted_rows:,} of its rows deleted by the deletion vector in "
                f"{_esc(f.deleted_by or '?')}")
    return out


@dataclass
class _Box:
    level: int
    top: float
    span: float
    text: str
    hover: str
    group: str
    schema_id: int | None = None
    path: str = ""


def _short(path: str, limit: int = 56) -> str:
    """A long file name with its middle cut: its directory and both ends stay readable."""
    if len(path) <= limit:
        return path
    head = (limit - 1) * 3 // 5
    return path[:head] + "…" + path[-(limit - 1 - head):]


def _layout(node: SnapshotNode, max_files: int) -> list[_Box]:
    boxes: list[_Box] = []
    budget = max_files
    y = 0.0
    for lst in node.lists:
        list_top = y
        for m in lst.manifests:
            m_top = y
            files: Sequence[FileNode] = m.files
            shown = list(files[:max(budget, 1)])
            budget -= len(shown)
            for f in shown:
                boxes.append(_Box(3, y, 1, file_text(f), _file_hover(f), file_group(f),
                                  f.schema_id, f.path))
                y += 1
            if len(files) > len(shown):
                rest = files[len(shown):]
                boxes.append(_Box(3, y, 1, f"… {len(rest)} more file entries",
                                  f"{len(rest)} more entries, "
                                  f"{rows_text(sum(f.row_count for f in rest))}", "more"))
                y += 1
            if y == m_top:
                y += 1
            boxes.append(_Box(2, m_top, y - m_top, f"manifest +{m.added} −{m.deleted}",
                              f"<b>{_esc(m.name)}</b><br>{m.added} added, {m.deleted} deleted"
                              + ("" if m.schema_id is None else f"<br>schema {m.schema_id}"),
                              "manifest"))
        if y == list_top:
            y += 1
        kind = (lst.kind if lst.kind.endswith(("list", "manifests")) else
                "index manifest" if lst.kind == "index" else f"{lst.kind} list")
        boxes.append(_Box(1, list_top, y - list_top, _esc(kind), f"<b>{_esc(kind)}</b><br>"
                          f"{_esc(lst.name)}<br>{len(lst.manifests)} manifest"
                          f"{'s' if len(lst.manifests) != 1 else ''}", "list"))
    if y == 0:
        y = 1
    label = _esc(node.label)
    boxes.append(_Box(0, 0, y, f"snapshot {label}",
                      f"<b>snapshot {label}</b>"
                      + (f"<br>id {_esc(node.id)}" if node.label != str(node.id) else "")
                      + f"<br>{_esc(node.kind)}, schema "
                      f"{node.schema_id}, {rows_text(node.record_count)}<br>"
                      f"{len(node.live_files)} live file{'s' if len(node.live_files) != 1 else ''}",
                      "snapshot"))
    return boxes


def _bar(boxes: list[_Box], name: str, color: str | list[str], text_color: str | list[str],
         *, showlegend: bool, pattern: str = "") -> go.Bar:
    return go.Bar(_validate=False,
        orientation="h", name=name, showlegend=showlegend,
        y=[b.top + b.span / 2 for b in boxes], width=[b.span - 0.1 for b in boxes],
        base=[LEVELS[b.level][0] for b in boxes], x=[LEVELS[b.level][1] * 0.985 for b in boxes],
        text=[b.text for b in boxes], textposition="inside", insidetextanchor="start",
        textfont=dict(size=11, color=text_color), constraintext="none",
        marker=dict(color=color, line=dict(width=0), pattern=dict(shape=pattern) if pattern
                    else None),
        hovertext=[b.hover for b in boxes], hoverinfo="text",
        customdata=[b.path for b in boxes])


def snapshot_tree_figure(node: SnapshotNode, title: str = "", *, newest_schema: int | None = None,
                         max_files: int = MAX_FILES, reads: str = "") -> go.Figure:
    """The tree of ``node`` (from ``TableHistory.tree``). ``newest_schema``: the table's
    newest schema id, so file colours match the other views' (default: the files' own
    newest). ``reads``: how the table's reads merge and delete (:func:`reads_text`), shown
    under the title. A click on a file reports its path in the point's ``customdata``."""
    boxes = _layout(node, max_files)
    ids = [b.schema_id for b in boxes if b.group.startswith("schema ")
           and b.schema_id is not None]
    newest = newest_schema if newest_schema is not None else max(ids, default=0)
    traces = [
        _bar([b for b in boxes if b.group == "snapshot"], "snapshot", "#24292f", "#ffffff",
             showlegend=False),
        _bar([b for b in boxes if b.group == "list"], "manifest list", "#57606a", "#ffffff",
             showlegend=False),
        _bar([b for b in boxes if b.group == "manifest"], "manifest", "#d8dee4", "#1f2328",
             showlegend=False)]
    for sid in sorted(set(ids)):
        part = [b for b in boxes if b.group == f"schema {sid}"]
        traces.append(_bar(part, f"file, schema {sid}", schema_color(sid, newest),
                           schema_text_color(sid, newest), showlegend=True))
    for group, name, color in (("deletes", "delete file / deletion vector", DELETE_FILE_COLOR),
                               ("index", "index file", INDEX_FILE_COLOR)):
        part = [b for b in boxes if b.group == group]
        if part:
            traces.append(_bar(part, name, color, "#1f2328", showlegend=True,
                               pattern="x" if group == "deletes" else ""))
    removed = [b for b in boxes if b.group == "removed"]
    if removed:
        traces.append(_bar(removed, "removed (DELETE entry)", REMOVED_FILE_COLOR, "#57606a",
                           showlegend=True, pattern="/"))
    more = [b for b in boxes if b.group == "more"]
    if more:
        traces.append(_bar(more, "more", "#f6f8fa", "#57606a", showlegend=False))
    fig = go.Figure()
    fig._validate = False  # the traces' values unchecked (see FullWidthFigure), the layout not:
    fig.add_traces([t for t in traces if len(t.y)])  # that is where a named template is expanded
    fig._validate = True
    units = max((b.top + b.span for b in boxes), default=1)
    sub = [f"{_esc(node.kind)}, schema {node.schema_id}, {rows_text(node.record_count)}, "
           f"{len(node.live_files)} live file{'s' if len(node.live_files) != 1 else ''}"]
    if node.record_count_text:
        sub.append(_esc(node.record_count_text))
    if reads:
        sub.append(_esc(reads))
    fig.update_layout(barmode="overlay", autosize=True, template="plotly_white",
                      margin=dict(l=10, r=10, b=20), hoverlabel=dict(align="left"),
                      uniformtext=dict(minsize=8, mode="hide"))
    frame(fig, _esc(title) if title else f"snapshot {_esc(node.label)}: manifest tree"
          + (f" <span style='font-size:11px;color:#57606a'>(id {_esc(node.id)})</span>"
             if node.label != str(node.id) else ""), sub,
          plot_px=max(16 + ROW_PX * units, 80), below=AXIS_TOP_PX)
    fig.update_xaxes(range=[0, 10], showgrid=False, zeroline=False, fixedrange=True,
                     tickvals=[lo + w / 2 for lo, w in LEVELS],
                     ticktext=["snapshot", "manifest lists", "manifests", "file entries"],
                     side="top", tickfont=dict(size=11, color="#57606a"))
    fig.update_yaxes(range=[units, 0], showticklabels=False, showgrid=False, zeroline=False,
                     fixedrange=True)
    return fig


def _lsm_text(f: FileNode) -> str:
    """A primary-key file's place in its bucket's LSM tree: level, key range, sequence
    numbers (what the deduplicate merge orders by)."""
    if f.min_key is None or f.max_key is None:
        return ""
    keys = ", ".join(_esc(k) for k in f.min_key) + " … " + ", ".join(_esc(k) for k in f.max_key)
    return (f"<br>level {f.level}, keys [{keys}], sequence numbers "
            f"{f.min_sequence_number}–{f.max_sequence_number}")


def reads_text(table: Any, schema_id: int | None) -> str:
    """How the table's reads merge and delete, from its options under ``schema_id``: a
    Paimon table's merge engine (primary-key tables) and deletion-vector mode, an Iceberg
    table's delete mode (merge-on-read writes delete files, copy-on-write rewrites)."""
    if hasattr(table, "metadata"):  # Iceberg
        props = dict(getattr(table.metadata, "properties", {}) or {})
        mode = props.get("write.delete.mode", "copy-on-write")
        how = ("writes delete files that reads apply" if mode == "merge-on-read" else
               "rewrites data files; delete files come only from other writers")
        return (f"Iceberg format v{getattr(table.metadata, 'format_version', '?')}, no merge "
                f"engine; write.delete.mode = {mode}: a DELETE {how}")
    try:
        schema = table.schema_at(schema_id) if schema_id is not None else table.schema
    except Exception:  # a schema file not on this machine: say nothing rather than guess
        return ""
    opts = schema.effective_options()
    dv = opts.get("deletion-vectors.enabled", "false").lower() == "true"
    if schema.primary_keys:
        engine = opts.get("merge-engine", "deduplicate")
        return (f"primary key ({', '.join(schema.primary_keys)}): merge engine {engine}"
                + ("; deletion vectors on (files above level 0 are read with their deletion "
                   "vectors, unmerged)" if dv else "; rows of a key merged on read"))
    return "append table: no merge engine" + (
        "; deletion vectors on (deleted rows are marked, not rewritten)" if dv else "")
