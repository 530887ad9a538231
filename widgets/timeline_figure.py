"""The schema timeline: schema versions and snapshots on one axis, and what each version
changed.

The top lanes hold the versions (diamonds) and the snapshots (circles), both coloured by
schema id (a snapshot has its schema's colour); the bars below count each version's changes
by kind, in the change-kind colours. The two colour schemes never share a colour
(:mod:`schemalab.render.palette`). The x axis is the order things were written in, or time.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from schemalab.widgets.frame import cut, frame, integer_axis

from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import SchemaVersion
from schemalab.render.palette import EVENT_COLORS, EVENT_LABELS, schema_color

XAxis = Literal["order", "time"]
#: an estimate of the plot's width, to decide how many labels fit
PLOT_PX = 1250


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=False)


def format_time(millis: int | None) -> str:
    """``2024-05-01 12:00:03`` (UTC), or "" for no time."""
    if millis is None or millis <= 0:
        return ""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def snapshot_label(s: SnapshotNode) -> str:
    """How a snapshot is named on screen (``SnapshotNode.label``): Iceberg's 19-digit ids
    by sequence number, the id itself on hover."""
    return s.label


def snapshot_hover(s: SnapshotNode, *, with_time: bool = True) -> str:
    rows = "? rows" if s.record_count is None else \
        f"{s.record_count:,} row{'' if s.record_count == 1 else 's'}"
    head = f"<b>snapshot {_esc(snapshot_label(s))}</b>"
    if snapshot_label(s) != str(s.id):
        head += f"<br>id {s.id}"
    when = format_time(s.time_millis) if with_time else ""
    return (f"{head}<br>{_esc(s.kind)}, schema {s.schema_id}, {rows}"
            + (f"<br>{when} UTC" if when else ""))


@dataclass(frozen=True)
class _Item:
    kind: str  # "schema" or "snapshot"
    schema_id: int | None
    time: int | None
    version: SchemaVersion | None = None
    snapshot: SnapshotNode | None = None


def _in_order(versions: Sequence[SchemaVersion], snaps: Sequence[SnapshotNode]
              ) -> list[_Item]:
    """Versions and snapshots in the order they were written: each snapshot after the
    schema version it records (the table's newest version when it committed, in Paimon and
    Iceberg alike) and before the next one. Derived from ids, not times, so two commits in
    one millisecond cannot swap places and a stored figure is the same every run."""
    by_schema: dict[int | None, list[SnapshotNode]] = {}
    for s in snaps:
        by_schema.setdefault(s.schema_id, []).append(s)
    out: list[_Item] = []
    placed: set[int | None] = set()
    for v in versions:
        out.append(_Item("schema", v.id, v.time_millis, version=v))
        out.extend(_Item("snapshot", s.schema_id, s.time_millis, snapshot=s)
                   for s in by_schema.get(v.id, []))
        placed.add(v.id)
    out.extend(_Item("snapshot", s.schema_id, s.time_millis, snapshot=s)
               for s in snaps if s.schema_id not in placed)
    return out


def schema_timeline_figure(h: TableHistory, *, x: XAxis = "order",
                           show_times: bool = False) -> go.Figure:
    """Schema versions and snapshots of ``h`` (see the module docstring). ``x="time"``
    places them by when they were written; ``show_times`` adds the times to the hover text
    (the widgets do; without them a figure stored in a notebook is the same every run)."""
    versions = [v for v in h.schemas if v.kind == "schema"]
    snaps = list(h.snapshots)
    newest = max((v.id for v in versions), default=0)
    items = _in_order(versions, snaps)
    timed = x == "time" and all(i.time for i in items) and bool(items)
    xs: list[Any] = [dt.datetime.fromtimestamp((i.time or 0) / 1000, dt.UTC) if timed else k
                     for k, i in enumerate(items)]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.5, 0.5],
                        vertical_spacing=0.06)
    fig._validate = False  # the traces' values unchecked (see FullWidthFigure), the layout not
    pos = [(i.time or 0) if timed else k for k, i in enumerate(items)]
    px = PLOT_PX / max((max(pos) - min(pos)) if pos else 1, 1)
    sv = [(k, xx, it) for k, (xx, it) in enumerate(zip(xs, items, strict=True))
          if it.kind == "schema"]
    ss = [(k, xx, it) for k, (xx, it) in enumerate(zip(xs, items, strict=True))
          if it.kind == "snapshot"]
    keep_v = _spaced([pos[k] * px for k, _, _ in sv], 20)
    keep_s = _spaced([pos[k] * px for k, _, _ in ss], 30)
    fig.add_trace(go.Scatter(_validate=False,
        x=[xx for _, xx, _ in sv], y=[1] * len(sv), mode="markers+text",
        name="schema version",
        text=[str(it.schema_id) if n in keep_v else "" for n, (_, _, it) in enumerate(sv)],
        textposition="top center", textfont=dict(size=10),
        marker=dict(symbol="diamond", size=14, color=[schema_color(it.schema_id, newest)
                                                      for _, _, it in sv],
                    line=dict(width=1, color="#57606a")),
        hovertext=[_version_hover(it.version, show_times) for _, _, it in sv if it.version],
        hoverinfo="text"), row=1, col=1)
    if ss:
        fig.add_trace(go.Scatter(_validate=False,
            x=[xx for _, xx, _ in ss], y=[0] * len(ss), mode="markers+text", name="snapshot",
            text=[_esc(snapshot_label(it.snapshot)) if it.snapshot and n in keep_s else ""
                  for n, (_, _, it) in enumerate(ss)],
            textposition="bottom center", textfont=dict(size=10),
            marker=dict(size=11, color=[schema_color(it.schema_id, newest) for _, _, it in ss],
                        line=dict(width=1, color="#57606a")),
            hovertext=[snapshot_hover(it.snapshot, with_time=show_times) for _, _, it in ss
                       if it.snapshot], hoverinfo="text"), row=1, col=1)
    first = versions[0].id if versions else None
    _add_change_bars(fig, [(xx, it.version) for _, xx, it in sv], first)
    created = f"created with {len(versions[0].fields)} fields" if versions else "no schema"
    fig._validate = True
    fig.update_layout(barmode="stack", bargap=0.35, autosize=True, template="plotly_white",
                      margin=dict(l=10, r=20, b=30), hoverlabel=dict(align="left"),
                      legend=dict(traceorder="normal"))
    sub = [_esc(f"{len(versions)} schema version{'s' if len(versions) != 1 else ''}, "
                f"{len(snaps)} snapshot{'s' if len(snaps) != 1 else ''}; schema {first} "
                f"{created}"), "bars count each later version's changes"]
    frame(fig, f"{_esc(cut(h.name))}: schema versions and snapshots", sub, plot_px=254)
    fig.update_yaxes(row=1, col=1, tickvals=[0, 1], ticktext=["snapshots", "schemas"],
                     range=[-0.9, 1.9], showgrid=False, zeroline=False, fixedrange=True)
    fig.update_yaxes(row=2, col=1, title=dict(text="changes", font=dict(size=11)),
                     rangemode="tozero", fixedrange=True,
                     **integer_axis(_most_changes(sv)))
    if timed:
        fig.update_xaxes(type="date", row=2, col=1, ticklabeloverflow="hide past domain")
    else:
        fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False,
                         range=[-0.7, max(len(items), 1) - 0.3])
        fig.update_xaxes(row=2, col=1, title=dict(
            text="in the order they were written (an ALTER is a version, an INSERT a "
                 "snapshot)", font=dict(size=11), standoff=4))
    return fig


def _add_change_bars(fig: go.Figure, versions: list[tuple[Any, SchemaVersion | None]],
                     first: int | None) -> None:
    """One stacked bar per event kind: the changes of each version but the first (which
    adds every field it was created with), at the version's x."""
    for kind, label in EVENT_LABELS.items():
        bx, by, bh = [], [], []
        for xx, v in versions:
            if v is None or v.id == first:
                continue
            evs = [ev for ev in v.events if ev.kind == kind]
            if evs:
                bx.append(xx)
                by.append(len(evs))
                bh.append(f"<b>schema {v.id}</b>: {len(evs)} {_esc(label)}<br>"
                          + "<br>".join(_esc(ev.describe()) for ev in evs[:10])
                          + (f"<br>… {len(evs) - 10} more" if len(evs) > 10 else ""))
        if bx:
            fig.add_trace(go.Bar(_validate=False, x=bx, y=by, name=label,
                                 marker_color=EVENT_COLORS[kind],
                                 hovertext=bh, hoverinfo="text"),
                          row=2, col=1)


def _spaced(px: Sequence[float], gap: float) -> set[int]:
    """Which of the labels at ``px`` (pixels, ascending) to draw so that none is nearer
    than ``gap`` to the last drawn one; the last label is always drawn."""
    keep: set[int] = set()
    last = -1e18
    for k, p in enumerate(px):
        if p - last >= gap:
            keep.add(k)
            last = p
    if px and len(px) - 1 not in keep:
        keep.discard(max((k for k in keep if px[-1] - px[k] < gap), default=-1))
        keep.add(len(px) - 1)
    return keep


def _version_hover(v: SchemaVersion, show_times: bool) -> str:
    when = format_time(v.time_millis) if show_times else ""
    head = f"<b>schema {v.id}</b>" + (f" · {when} UTC" if when else "")
    detail = "<br>".join(_esc(ev.describe()) for ev in v.events[:12])
    if len(v.events) > 12:
        detail += f"<br>… {len(v.events) - 12} more"
    return f"{head}<br>{detail or 'no field changes (options only)'}"


def _most_changes(sv: Sequence[tuple[int, Any, _Item]]) -> int:
    """The tallest stacked bar: the most changes of one version."""
    return max((len(it.version.events) for _, _, it in sv if it.version), default=1)
