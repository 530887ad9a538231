"""The lineage figure: one row per field id, one column per schema version.

A grey line follows each field through the versions it exists in; a coloured marker and a
short label sit only where something changes (added, renamed, retyped, nullability, comment,
moved, dropped), so a 50-version history reads as a few dozen labels, not thousands. Swaps
are drawn as a dashed connector between the two rows, a name used again by a new field as a
dotted one from the old field to the new. Nested fields sit indented under their parent.
Hovering any version of a field gives its name, type and changes there.

The layout (which cell gets which label, where connectors go) is
:func:`schemalab.render.lineage_layout.lineage_layout`; this module only draws it.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from typing import Any, Literal

import plotly.graph_objects as go
from schemalab.widgets.branch_lineage_figure import lineage_across_figure
from schemalab.widgets.frame import cut, frame, sparse_labels

from schemalab.history.model import TableHistory
from schemalab.render.lineage_layout import Cell, LineageLayout, Row, lineage_layout
from schemalab.render.palette import (
    EVENT_COLORS,
    EVENT_LABELS,
    REUSE_COLOR,
    SWAP_COLOR,
)

#: pixels per field row, and the figure's room above and below the rows
ROW_PX = 21
#: what the x axis on top takes above the plot: its tick labels and title
AXIS_TOP_PX = 40
BOTTOM_PX = 24
#: versions shown at once before the figure starts panned to the newest ones
MAX_COLUMNS = 60
#: an estimate of the plot area's width (the figure itself fills the cell), to cut labels
#: that would run into the next change of their row
PLOT_PX = 1250
CHAR_PX = 5.9
#: longest field name shown in full on a row
MAX_NAME = 30
#: a white outline around labels, so a row's line never strikes through its text
HALO = "1px 1px 1px #fff, -1px -1px 1px #fff, 1px -1px 1px #fff, -1px 1px 1px #fff"
#: marker symbol of each change kind (colour and shape both tell the kind)
SYMBOLS = {"added": "circle", "renamed": "diamond", "retyped": "square",
           "nullability_changed": "triangle-up", "commented": "star", "moved": "triangle-right",
           "default_changed": "hexagon",
           "dropped": "x"}

XAxis = Literal["version", "time"]


def _esc(text: Any) -> str:
    # plotly renders hover and text labels as HTML: names must not become markup
    return html.escape(str(text), quote=False)


def lineage_figure(h: TableHistory, *, focus: int | str | Sequence[int | str] | None = None,
                   x: XAxis = "version", page: int = 0, page_size: int | None = None,
                   max_columns: int = MAX_COLUMNS, branch: str | None = None) -> go.Figure:
    """The lineage of ``h`` as a plotly figure that fills its cell's width.

    ``branch``: one branch's lineage (its own schemas), or ``"all"``: one panel per branch
    (:func:`~schemalab.widgets.branch_lineage_figure.lineage_across_figure`).

    ``focus``: a field id or a name ("everything that was ever called `c`"), or several;
    ``x="time"`` spaces the versions by when they were written; ``page``/``page_size`` show
    one page of rows; with more than ``max_columns`` versions the figure opens on the newest
    ones and pans (drag) to the rest."""
    if branch == "all":
        return lineage_across_figure(h, lineage_figure, focus=focus, x=x, page=page,
                                     page_size=page_size, max_columns=max_columns)
    if branch is not None:
        h = h.branch(branch)
    layout = lineage_layout(h, focus=focus, page=page, page_size=page_size)
    return draw_lineage(layout, h.name, x=x, max_columns=max_columns)


def draw_lineage(layout: LineageLayout, name: str, *, x: XAxis = "version",
                 max_columns: int = MAX_COLUMNS) -> go.Figure:
    cols = layout.columns
    times = [c.time_millis for c in cols]
    use_time = x == "time" and all(t is not None and t > 0 for t in times) and len(cols) > 0

    def xpos(col: float) -> Any:
        """A column's x: its index, or when its version was written (a half column, for a
        connector's middle, is half way in time)."""
        if not use_time:
            return col
        lo, hi = times[int(col)] or 0, times[min(int(col) + 1, len(times) - 1)] or 0
        millis = lo + (hi - lo) * (col - int(col))
        return dt.datetime.fromtimestamp(millis / 1000, dt.UTC)

    window = (max(0, len(cols) - max_columns), len(cols) - 1) if len(cols) > max_columns \
        else (0, max(len(cols) - 1, 0))
    px_per_col = PLOT_PX / max(window[1] - window[0] + 3.5, 1)
    labels = _label_texts(layout, px_per_col, use_time, window)
    covered: set[tuple[int, int]] = set()
    gaps: dict[int, list[tuple[float, float]]] = {}
    if not use_time:  # lines and version dots a label covers are left out: it reads cleanly
        for c, _, span in labels:
            covered.update((c.row, k) for k in range(c.col + 1, c.col + 1 + int(span)))
            gaps.setdefault(c.row, []).append((c.col + 0.25, c.col + span))
    traces: list[go.Scatter] = [_life_lines(layout, xpos, gaps)]
    traces.append(_unchanged_points(layout, xpos, covered))
    for kind in EVENT_LABELS:
        cells = [c for c in layout.cells if c.kind == kind]
        if cells:
            traces.append(_event_points(kind, cells, layout, xpos))
    traces.extend(_labels(labels, xpos))
    traces.extend(_connector_traces(layout, xpos))
    fig = go.Figure()
    fig._validate = False  # the traces' values unchecked (see FullWidthFigure), the layout not:
    fig.add_traces(traces)  # that is where a named template is expanded
    fig._validate = True
    n_rows = max(len(layout.rows), 1)
    title = f"{cut(name)}: field lineage by id"
    shown = f"{len(layout.rows)} field{'s' if len(layout.rows) != 1 else ''}"
    if layout.total_rows > len(layout.rows):
        shown = (f"fields {layout.first_row + 1}–{layout.first_row + len(layout.rows)} of "
                 f"{layout.total_rows}")
    sub = [f"{shown} × {len(cols)} schema version{'s' if len(cols) != 1 else ''}"]
    more = [layout.focus_text] if layout.focus_text else []
    if len(cols) > max_columns:
        more.append(f"showing the newest {max_columns}: drag to pan")
    fig.update_layout(
        autosize=True, template="plotly_white", margin=dict(l=10, r=20, b=BOTTOM_PX),
        legend=dict(itemsizing="constant"), hoverlabel=dict(align="left"),
        dragmode="pan" if len(cols) > max_columns else "zoom")
    frame(fig, _esc(title), [_esc(line) for line in (sub + [" · ".join(more)] if more
                                                       else sub)],
          plot_px=ROW_PX * n_rows, below=AXIS_TOP_PX)
    tickvals = [c.col for c in cols]
    if use_time:
        fig.update_xaxes(type="date", side="top", showgrid=True, gridcolor="#eef1f4",
                         title=None)
    else:
        left, right = window
        fig.update_xaxes(tickvals=tickvals, ticktext=sparse_labels(
                             [str(c.schema_id) for c in cols], right - left + 3.6),
                         side="top", showgrid=True, gridcolor="#eef1f4", zeroline=False,
                         range=[left - 0.6, right + 3.0], tickfont=dict(size=10),
                         title=dict(text="schema version", standoff=4, font=dict(size=11)))
    fig.update_yaxes(tickvals=list(range(n_rows)), ticktext=_row_labels(layout.rows),
                     range=[n_rows - 0.5, -0.6], showgrid=False, zeroline=False,
                     automargin=True, tickfont=dict(size=11, family="monospace"),
                     fixedrange=True)
    return fig


def _row_labels(rows: Sequence[Row]) -> list[str]:
    """Each row's name, nested names indented under their parent, and its field id. Tick
    labels are right-aligned, so every label is padded to one width (in a monospace font):
    then the names line up on the left and the indentation shows. Dropped fields are grey."""
    def name(r: Row) -> str:
        text = r.name if len(r.name) <= MAX_NAME else r.name[:MAX_NAME - 1] + "…"
        return "\u00a0" * (2 * (r.depth - 1)) + "└\u00a0" + text if r.depth else text

    names = [name(r) for r in rows]
    width = max((len(n) for n in names), default=0)
    id_width = max((len(str(r.field_id)) for r in rows), default=1) + 1
    out = []
    for r, n in zip(rows, names, strict=True):
        color = "#8c959f" if r.dropped_at is not None else "#1f2328"
        pad = "\u00a0" * (width - len(n) + 1 + id_width - len(str(r.field_id)) - 1)
        out.append(f"<span style='color:{color}'>{_esc(n)}</span>{pad}"
                   f"<span style='color:#8c959f'>#{r.field_id}</span>")
    return out


def _life_lines(layout: LineageLayout, xpos: Any,
                gaps: dict[int, list[tuple[float, float]]]) -> go.Scatter:
    """Each field's line from its first version to its last (or its drop), with a gap where
    a label's text runs along it."""
    xs: list[Any] = []
    ys: list[Any] = []
    for r in layout.rows:
        end = float(r.dropped_at if r.dropped_at is not None else r.last)
        start = float(r.first)
        for a, b in sorted(gaps.get(r.row, [])):
            if a > start:
                xs += [xpos(start), xpos(min(a, end)), None]
                ys += [r.row, r.row, None]
            start = max(start, b)
        if end > start or (end == start and not gaps.get(r.row)):
            xs += [xpos(start), xpos(end), None]
            ys += [r.row, r.row, None]
    return go.Scatter(_validate=False, x=xs, y=ys, mode="lines",
                      line=dict(color=EVENT_COLORS["unchanged"], width=2),
                      hoverinfo="skip", showlegend=False, name="life")


def _hover(c: Cell, layout: LineageLayout) -> str:
    f = c.field
    col = layout.columns[c.col]
    head = f"<b>field {c.field_id}</b> in schema {col.schema_id}"
    if c.kind == "dropped" and all(ev.kind == "dropped" for ev in c.events):
        return f"{head}<br>dropped (was `{_esc(f.full_name)}` {_esc(f.type)})"
    lines = [head, f"`{_esc(f.full_name)}` {_esc(f.type)}{'' if f.nullable else ' NOT NULL'}"]
    if f.comment:
        lines.append(f"comment: {_esc(f.comment)}")
    lines += [_esc(ev.describe()) for ev in c.events]
    row = layout.rows[c.row]
    if row.lineage.swapped_with:
        lines.append("swapped names with field " + ", ".join(map(str, row.lineage.swapped_with)))
    if row.lineage.name_reused_from:
        lines.append("a name of it was used before by field "
                     + ", ".join(map(str, row.lineage.name_reused_from)))
    return "<br>".join(lines)


def _unchanged_points(layout: LineageLayout, xpos: Any, covered: set[tuple[int, int]]
                      ) -> go.Scatter:
    cells = [c for c in layout.cells if c.kind == "unchanged" and (c.row, c.col) not in covered]
    return go.Scatter(_validate=False, x=[xpos(c.col) for c in cells],
                      y=[c.row for c in cells], mode="markers",
                      marker=dict(size=5, color=EVENT_COLORS["unchanged"]),
                      hovertext=[_hover(c, layout) for c in cells], hoverinfo="text",
                      name="unchanged", legendrank=900)


def _event_points(kind: str, cells: list[Cell], layout: LineageLayout, xpos: Any
                  ) -> go.Scatter:
    return go.Scatter(_validate=False, x=[xpos(c.col) for c in cells], y=[c.row for c in cells],
                      mode="markers", name=EVENT_LABELS[kind],
                      marker=dict(size=11 if kind != "dropped" else 12, symbol=SYMBOLS[kind],
                                  color=EVENT_COLORS[kind],
                                  line=dict(width=1, color="#ffffff")),
                      hovertext=[_hover(c, layout) for c in cells], hoverinfo="text")


def _label_texts(layout: LineageLayout, px_per_col: float, use_time: bool,
                 window: tuple[int, int]) -> list[tuple[Cell, str, float]]:
    """Each change's label, cut to the room before the next change of its row, and how many
    columns its text covers."""
    cells = layout.labelled
    next_label: dict[tuple[int, int], int] = {}
    by_row: dict[int, list[int]] = {}
    for c in cells:
        by_row.setdefault(c.row, []).append(c.col)
    for row, cs in by_row.items():
        for a, b in zip(cs, cs[1:], strict=False):
            next_label[(row, a)] = b
    times = [col.time_millis or 0 for col in layout.columns]
    px_per_ms = PLOT_PX / max(times[-1] - times[0], 1) if use_time and times else 0.0
    out = []
    for c in cells:
        nxt = next_label.get((c.row, c.col), window[1] + 3)
        if use_time:
            end = times[nxt] if nxt < len(times) else times[-1] + 160 / max(px_per_ms, 1e-9)
            room = (end - times[c.col]) * px_per_ms
        else:
            room = (nxt - c.col) * px_per_col
        text = _cut(c.label, int((room - 14) / CHAR_PX))
        out.append((c, text, (len(text) * CHAR_PX + 14) / max(px_per_col, 1e-9)))
    return out


def _labels(labels: list[tuple[Cell, str, float]], xpos: Any) -> list[go.Scatter]:
    """Labels of the first version (the fields a table was created with: their types) in
    grey, every later change in black; a white outline keeps lines from striking through."""
    out = []
    for first, color in ((True, "#6e7781"), (False, "#1f2328")):
        part = [(c, t) for c, t, _ in labels if (c.col == 0 and c.kind == "added") == first]
        out.append(go.Scatter(_validate=False,
            x=[xpos(c.col) for c, _ in part], y=[c.row for c, _ in part], mode="text",
            text=["\u2002\u2009" + _esc(t) for _, t in part], textposition="middle right",
            textfont=dict(size=10, color=color, shadow=HALO), hoverinfo="skip",
            showlegend=False, name="labels", meta="labels"))
    return out


def _cut(text: str, chars: int) -> str:
    chars = max(chars, 2)
    return text if len(text) <= chars else text[:chars - 1] + "…"


def _connector_traces(layout: LineageLayout, xpos: Any) -> list[go.Scatter]:
    out = []
    for kind, title, color, dash in (("swap", "swapped names", SWAP_COLOR, "dash"),
                                     ("reuse", "name used again", REUSE_COLOR, "dot")):
        conns = [k for k in layout.connectors if k.kind == kind]
        if not conns:
            continue
        xs: list[Any] = []
        ys: list[Any] = []
        hx: list[Any] = []
        hy: list[Any] = []
        ht: list[str] = []
        for k in conns:
            xs += [xpos(k.from_col), xpos(k.to_col), None]
            ys += [k.from_row, k.to_row, None]
            hx.append(xpos((k.from_col + k.to_col) / 2))
            hy.append((k.from_row + k.to_row) / 2)
            ht.append(f"<b>{_esc(title)}</b><br>" + (
                f"fields {k.from_field} and {k.to_field}: {_esc(k.name)}" if kind == "swap"
                else f"`{_esc(k.name)}` was field {k.from_field}, then field {k.to_field}"))
        out.append(go.Scatter(_validate=False, x=xs, y=ys, mode="lines", name=title,
                              legendgroup=kind,
                              line=dict(color=color, width=1.5, dash=dash), hoverinfo="skip"))
        out.append(go.Scatter(_validate=False, x=hx, y=hy, mode="markers", legendgroup=kind,
                              showlegend=False,
                              marker=dict(size=9, color=color, symbol="circle-open"),
                              hovertext=ht, hoverinfo="text", name=title))
    return out
