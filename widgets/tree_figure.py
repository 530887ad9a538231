"""A snapshot's tree drawn left to right: snapshot → manifest lists → manifests → file
entries, each box as tall as the files under it.

The snapshot and its lists take narrow columns, the files most of the width (their names and
row counts are what a reader looks for). Files are coloured by the schema id they were
written with (the teal ramp of :mod:`schemalab.render.palette`); an entry that removes a
file (Paimon's DELETE, Iceberg's DELETED) is hatched grey, never a schema's colour.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from schemalab.history.snapshots import FileNode, SnapshotNode
from schemalab.render.palette import REMOVED_FILE_COLOR, schema_color, schema_text_color

#: where each level starts on the x axis and how wide it is (the files get the most room)
LEVELS = ((0.0, 0.9), (0.9, 1.15), (2.05, 1.6), (3.65, 6.35))
ROW_PX = 24
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
                part = ", ".join(f"{_esc(k)}={_esc(v)}" for k, v in f.partition.items())
                boxes.append(_Box(
                    3, y, 1, f"{_esc(f.kind)} {_esc(_short(f.path))} · {rows_text(f.row_count)}",
                    f"<b>{_esc(f.path)}</b><br>{_esc(f.kind)}, written under schema "
                    f"{f.schema_id}, {rows_text(f.row_count)}"
                    + (f"<br>{part}" if part else "")
                    + ("" if f.bucket is None else f"<br>bucket {f.bucket}") + _lsm_text(f),
                    "removed" if removes(f) else f"schema {f.schema_id}",
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
        kind = lst.kind if lst.kind.endswith(("list", "manifests")) else f"{lst.kind} list"
        boxes.append(_Box(1, list_top, y - list_top, _esc(kind), f"<b>{_esc(kind)}</b><br>"
                          f"{_esc(lst.name)}<br>{len(lst.manifests)} manifest"
                          f"{'s' if len(lst.manifests) != 1 else ''}", "list"))
    if y == 0:
        y = 1
    boxes.append(_Box(0, 0, y, f"snapshot {_esc(node.id)}",
                      f"<b>snapshot {_esc(node.id)}</b><br>{_esc(node.kind)}, schema "
                      f"{node.schema_id}, {rows_text(node.record_count)}<br>"
                      f"{len(node.live_files)} live file{'s' if len(node.live_files) != 1 else ''}",
                      "snapshot"))
    return boxes


def _bar(boxes: list[_Box], name: str, color: str | list[str], text_color: str | list[str],
         *, showlegend: bool, pattern: str = "") -> go.Bar:
    return go.Bar(
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
                         max_files: int = MAX_FILES) -> go.Figure:
    """The tree of ``node`` (from ``TableHistory.tree``). ``newest_schema``: the table's
    newest schema id, so file colours match the other views' (default: the files' own
    newest). A click on a file reports its path in the point's ``customdata``."""
    boxes = _layout(node, max_files)
    ids = [b.schema_id for b in boxes if b.level == 3 and b.schema_id is not None]
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
    removed = [b for b in boxes if b.group == "removed"]
    if removed:
        traces.append(_bar(removed, "removed (DELETE entry)", REMOVED_FILE_COLOR, "#57606a",
                           showlegend=True, pattern="/"))
    more = [b for b in boxes if b.group == "more"]
    if more:
        traces.append(_bar(more, "more", "#f6f8fa", "#57606a", showlegend=False))
    fig = go.Figure(data=[t for t in traces if len(t.y)])
    units = max((b.top + b.span for b in boxes), default=1)
    height = int(96 + 36 + ROW_PX * units)
    sub = (f"{_esc(node.kind)}, schema {node.schema_id}, {rows_text(node.record_count)}, "
           f"{len(node.live_files)} live file{'s' if len(node.live_files) != 1 else ''}")
    fig.update_layout(
        barmode="overlay", height=max(height, 220), autosize=True, template="plotly_white",
        title=dict(text=_esc(title) if title else f"snapshot {_esc(node.id)}: manifest tree",
                   subtitle=dict(text=sub, font=dict(size=12, color="#57606a")),
                   x=0.005, xanchor="left", y=1 - 10 / max(height, 220), yanchor="top",
                   yref="container"),
        margin=dict(l=10, r=10, t=96, b=20),
        legend=dict(orientation="h", x=0, xanchor="left", yref="container",
                    y=1 - 62 / max(height, 220), yanchor="top", font=dict(size=11)),
        hoverlabel=dict(align="left"), uniformtext=dict(minsize=8, mode="hide"))
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
