"""A table's history as lanes: one lane per branch with its schema versions (diamonds) and
snapshots (circles, coloured by schema id), a line from each branch's fork point on main to
its first snapshot of its own, tags as labelled markers above the snapshots they name, and a
lane of the snapshots no branch reaches (staged by write-audit-publish, rolled back, kept
only by a tag). A red ring marks a snapshot holding a file whose columns are not those of
the schema file its schema id names (a rewritten history: ``TableHistory.warnings()``).

A snapshot a branch shares with main (same id and commit time) is drawn once, on main's lane;
a branch's lane holds what it has of its own. A schema version is drawn on main's lane, and on
a branch's lane when main has no version of that id with the same fields (a Paimon branch's
own ALTERs); Iceberg's branches share the table's schemas, so their lanes hold snapshots only.
The x axis is the order things were written in (by commit time, then id).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
from schemalab.widgets.frame import cut, frame

from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import SchemaVersion
from schemalab.refs import MAIN
from schemalab.render.palette import schema_color

#: the lane of snapshots no branch reaches
UNREACHED = "not on a branch"


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=False)


@dataclass(frozen=True)
class Lane:
    """One lane: its name, y, the snapshots and schema versions drawn on it."""

    name: str
    y: int
    snapshots: tuple[SnapshotNode, ...]
    versions: tuple[SchemaVersion, ...]


def lanes(h: TableHistory) -> list[Lane]:
    """The lanes of ``h``: main first (y 0), then every other branch (y -1, -2, ...), then the
    snapshots no branch reaches if there are any."""
    per = dict(h.branches) or {MAIN: h}
    main = per.get(MAIN, h)
    on_main = {(s.id, s.time_millis) for s in main.snapshots}
    main_versions = {(v.id, v.fields) for v in main.schemas if v.kind == "schema"}
    out = [Lane(MAIN, 0, tuple(main.snapshots),
                tuple(v for v in main.schemas if v.kind == "schema"))]
    for name, bh in per.items():
        if name == MAIN:
            continue
        own = tuple(s for s in bh.snapshots if (s.id, s.time_millis) not in on_main)
        versions = tuple(v for v in bh.schemas
                         if v.kind == "schema" and (v.id, v.fields) not in main_versions)
        out.append(Lane(name, -len(out), own, versions))
    unreached = tuple(s for s in h.snapshots if s.id in h.marks)
    if unreached:
        out.append(Lane(UNREACHED, -len(out), unreached, ()))
    return out


def _positions(all_lanes: Sequence[Lane]) -> tuple[dict[tuple[int, int | None], int],
                                                    dict[tuple[str, int], float]]:
    """x of each snapshot (by commit time, then id) and of each lane's schema versions (just
    before the first snapshot written with it on that lane; at its time if it has no
    snapshot, else at the end)."""
    snaps = sorted({(s.time_millis, s.id) for lane in all_lanes for s in lane.snapshots},
                   key=lambda p: (p[0] or 0, p[1]))
    sx = {(sid, t): k for k, (t, sid) in enumerate(snaps)}
    vx: dict[tuple[str, int], float] = {}
    for lane in all_lanes:
        for v in lane.versions:
            firsts = [sx[(s.id, s.time_millis)] for s in lane.snapshots if s.schema_id == v.id]
            later = [k for k, (t, _) in enumerate(snaps)
                     if v.time_millis is not None and (t or 0) >= v.time_millis]
            at = min(firsts) if firsts else min(later) if later else len(snaps)
            vx[(lane.name, v.id)] = at - 0.4
    return sx, vx


def branch_lanes_figure(h: TableHistory, *, show_times: bool = False) -> go.Figure:
    """The lanes of ``h`` (see the module docstring) as a plotly figure."""
    all_lanes = lanes(h)
    sx, vx = _positions(all_lanes)
    newest = max((v.id for v in h.schemas if v.kind == "schema"), default=0)
    fig = go.Figure()
    fig._validate = False
    for lane in all_lanes:
        xs = [sx[(s.id, s.time_millis)] for s in lane.snapshots]
        if xs:
            fig.add_trace(go.Scatter(
                x=[min(xs), max(xs)], y=[lane.y, lane.y], mode="lines", hoverinfo="skip",
                line=dict(color="#d0d7de", width=2, dash="dot" if lane.name == UNREACHED
                          else "solid"), showlegend=False, name=f"lane {lane.name}"))
        fig.add_trace(go.Scatter(
            x=xs, y=[lane.y] * len(xs), mode="markers", name=f"snapshots: {lane.name}",
            marker=dict(size=11, color=[schema_color(s.schema_id, newest)
                                        for s in lane.snapshots],
                        line=dict(width=1, color="#57606a"),
                        symbol=["circle-open" if s.id in h.marks else "circle"
                                for s in lane.snapshots]),
            customdata=[s.id for s in lane.snapshots],
            hovertext=[_snapshot_hover(h, s, show_times) for s in lane.snapshots],
            hoverinfo="text", showlegend=False))
        if lane.versions:
            fig.add_trace(go.Scatter(
                x=[vx[(lane.name, v.id)] for v in lane.versions],
                y=[lane.y + 0.28] * len(lane.versions), mode="markers+text",
                name=f"schema versions: {lane.name}", text=[str(v.id) for v in lane.versions],
                textposition="top center", textfont=dict(size=10),
                marker=dict(symbol="diamond", size=12, color=[schema_color(v.id, newest)
                                                              for v in lane.versions],
                            line=dict(width=1, color="#57606a")),
                customdata=[v.id for v in lane.versions],
                hovertext=[f"<b>schema {v.id}</b> on {_esc(lane.name)}<br>"
                           + "<br>".join(_esc(e.describe()) for e in v.events[:8])
                           for v in lane.versions], hoverinfo="text", showlegend=False))
    _add_forks(fig, h, all_lanes, sx)
    _add_tags(fig, h, all_lanes, sx)
    warned = _add_warnings(fig, h, all_lanes, sx)
    fig._validate = True
    fig.update_layout(autosize=True, template="plotly_white", showlegend=False,
                      margin=dict(l=10, r=20, b=30), hoverlabel=dict(align="left"))
    # the title and subtitle as one text (plotly's own subtitle overprints the title)
    frame(fig, f"{_esc(cut(h.name))}: branches, tags and snapshots",
          [_esc(_subtitle(h, all_lanes, warned))], plot_px=40 + 70 * len(all_lanes))
    fig.update_yaxes(tickvals=[lane.y for lane in all_lanes],
                     ticktext=[_esc(lane.name) for lane in all_lanes],
                     range=[all_lanes[-1].y - 0.7, 0.9], showgrid=False, zeroline=False,
                     fixedrange=True, automargin=True)
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False,
                     title=dict(text="in the order they were written", font=dict(size=11),
                                standoff=4))
    return fig


def _subtitle(h: TableHistory, all_lanes: Sequence[Lane], warned: int = 0) -> str:
    branches = sum(1 for lane in all_lanes if lane.name != UNREACHED)
    tags = sum(1 for r in h.refs if r.kind == "tag")
    text = (f"{branches} branch{'es' if branches != 1 else ''}, {tags} tag"
            f"{'s' if tags != 1 else ''}, {len(h.snapshots)} snapshot"
            f"{'s' if len(h.snapshots) != 1 else ''}")
    if h.marks:
        text += f"; {len(h.marks)} on no branch (open circles)"
    if warned:
        text += (f"; {warned} hold{'s' if warned == 1 else ''} files written under another "
                 "schema than the one on disk (red rings)")
    return text


def _snapshot_hover(h: TableHistory, s: SnapshotNode, show_times: bool) -> str:
    from schemalab.widgets.timeline_figure import snapshot_hover

    text = snapshot_hover(s, with_time=show_times)
    tags = h.tags_at(s.id)
    if tags:
        text += "<br>tags: " + _esc(", ".join(tags))
    if s.id in h.marks:
        text += f"<br><i>{_esc(h.marks[s.id])}</i>"
    return text


def _add_forks(fig: go.Figure, h: TableHistory, all_lanes: Sequence[Lane],
               sx: dict[tuple[int, int | None], int]) -> None:
    """A line from each branch's fork point on main to its first own snapshot (or to the
    start of its lane), with the fork snapshot hovered."""
    xs: list[Any] = []
    ys: list[Any] = []
    hover: list[Any] = []
    for lane in all_lanes:
        fork = h.forks.get(lane.name)
        if fork is None or fork.snapshot_id is None:
            continue
        x0 = sx.get((fork.snapshot_id, fork.time_millis))
        if x0 is None:
            continue
        x1 = min((sx[(s.id, s.time_millis)] for s in lane.snapshots), default=x0 + 0.5)
        xs += [x0, x1, None]
        ys += [0, lane.y, None]
        hover += [_esc(str(fork)), _esc(str(fork)), None]
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="fork",
                                 line=dict(color="#8c959f", width=1.5, dash="dash"),
                                 hovertext=hover, hoverinfo="text", showlegend=False))


def _add_tags(fig: go.Figure, h: TableHistory, all_lanes: Sequence[Lane],
              sx: dict[tuple[int, int | None], int]) -> None:
    """A labelled marker above each tagged snapshot, on the lane that draws it."""
    where = {s.id: (sx[(s.id, s.time_millis)], lane.y) for lane in all_lanes
             for s in lane.snapshots}
    tags = [(r.name, where[r.snapshot_id]) for r in h.refs
            if r.kind == "tag" and r.snapshot_id in where]
    if not tags:
        return
    fig.add_trace(go.Scatter(
        x=[x for _, (x, _) in tags], y=[y - 0.3 for _, (_, y) in tags], mode="markers+text",
        name="tags", text=[_esc(n) for n, _ in tags], textposition="bottom center",
        textfont=dict(size=10, color="#57606a"),
        marker=dict(symbol="triangle-up", size=10, color="#57606a"),
        customdata=[n for n, _ in tags], hovertext=[f"tag {_esc(n)}" for n, _ in tags],
        hoverinfo="text", showlegend=False))


def _add_warnings(fig: go.Figure, h: TableHistory, all_lanes: Sequence[Lane],
                  sx: dict[tuple[int, int | None], int]) -> int:
    """A red ring around each snapshot its branch's history warns about (a file whose
    columns are not its schema's: a rewritten history), hovered with the warnings; the
    number of snapshots ringed."""
    xs, ys, hover = [], [], []
    for lane in all_lanes:
        if lane.name == UNREACHED:
            continue
        bh = h if lane.name == MAIN else h.branches.get(lane.name)
        if bh is None:
            continue
        by_snapshot: dict[int, list[str]] = {}
        for w in bh.warnings():
            for sid in w.snapshot_ids:
                by_snapshot.setdefault(sid, []).append(w.message)
        for s in lane.snapshots:
            if s.id in by_snapshot:
                xs.append(sx[(s.id, s.time_millis)])
                ys.append(lane.y)
                msgs = by_snapshot[s.id]
                more = f"<br>(and {len(msgs) - 3} more)" if len(msgs) > 3 else ""
                hover.append(f"<b>snapshot {s.id}: rewritten history</b><br>"
                             + "<br>".join(_esc(m) for m in msgs[:3]) + more)
    if xs:
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="markers", name="rewritten", hovertext=hover, hoverinfo="text",
            marker=dict(symbol="circle-open", size=20, color="#cf222e",
                        line=dict(width=2.5, color="#cf222e")), showlegend=False))
    return len(xs)
