"""Field lineage across branches: each branch's lineage figure (:func:`lineage_figure`) as
one stacked panel, main first, so the same field id renamed differently on two branches
reads side by side; the fields whose names differ between branches are listed in the
subtitle."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from schemalab.widgets.frame import cut, frame

from schemalab.history.graph import lineage_across
from schemalab.history.model import TableHistory

#: a panel's top tick labels, the branch name above them, and the space between panels
TICKS_PX = 18
ABOVE_PX = TICKS_PX + 20
GAP_PX = 14
#: y axis settings carried from a branch's own figure to its panel
_AXIS_KEYS = ("tickvals", "ticktext", "range", "tickfont", "showgrid", "zeroline",
              "automargin", "fixedrange")


def lineage_across_figure(h: TableHistory, draw: Callable[..., go.Figure],
                          **kwargs: Any) -> go.Figure:
    """One panel per branch of ``h``: ``draw(branch history, **kwargs)`` (the one-branch
    :func:`~schemalab.widgets.lineage_figure.lineage_figure`) stacked."""
    names = list(h.branches) or ["main"]
    subs = [draw(h.branch(n), **kwargs) for n in names]
    # each panel's plot area as its branch's own figure has it, and above each its top
    # tick labels and its branch's name
    panels = [max((f.layout.height or 300) - (f.layout.margin.t or 0)
                  - (f.layout.margin.b or 0), 40) for f in subs]
    plot_px = sum(panels) + (GAP_PX + ABOVE_PX) * (len(subs) - 1)
    fig = make_subplots(rows=len(subs), cols=1, row_heights=[p / sum(panels) for p in panels],
                        vertical_spacing=(GAP_PX + ABOVE_PX) / plot_px if len(subs) > 1 else 0,
                        subplot_titles=[f"branch {html.escape(n, quote=False)}"
                                        for n in names])
    for a in fig.layout.annotations:  # a panel's name over its tick labels, at the left
        a.update(x=0, xanchor="left", yshift=TICKS_PX, font=dict(size=12))
    fig._validate = False
    for i, sub in enumerate(subs, start=1):
        for trace in sub.data:
            trace = go.Scatter(trace) if isinstance(trace, go.Scatter) else trace
            trace.showlegend = bool(i == 1 and trace.showlegend is not False)
            trace.legendgroup = trace.name
            fig.add_trace(trace, row=i, col=1)
        suffix = "" if i == 1 else str(i)
        for key in _AXIS_KEYS:
            value = sub.layout.yaxis[key]
            if value is not None:
                fig.layout[f"yaxis{suffix}"][key] = value
        for key in ("tickvals", "ticktext", "range", "side", "showgrid", "gridcolor",
                    "zeroline", "tickfont", "type"):
            value = sub.layout.xaxis[key]
            if value is not None:
                fig.layout[f"xaxis{suffix}"][key] = value
    fig._validate = True
    diverged = [x for x in lineage_across(h) if x.diverged]
    sub_text = (f"{len(names)} branch{'es' if len(names) != 1 else ''}; "
                + (", ".join(f"field {x.field_id}: " + " / ".join(
                    f"{b} {n or '(dropped)'}" for b, n in x.names.items())
                    for x in diverged[:6]) or "every field has the same name on every branch"))
    fig.update_layout(autosize=True, template="plotly_white", margin=dict(l=10, r=20, b=30),
                      hoverlabel=dict(align="left"), legend=dict(itemsizing="constant"))
    # the title and subtitle as one text (plotly's own subtitle overprints the title)
    frame(fig, html.escape(f"{cut(h.name)}: field lineage across branches", quote=False),
          [html.escape(sub_text, quote=False)], plot_px=plot_px, below=ABOVE_PX)
    return fig
