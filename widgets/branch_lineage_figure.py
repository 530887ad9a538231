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

from schemalab.history.graph import lineage_across
from schemalab.history.model import TableHistory

#: y axis settings carried from a branch's own figure to its panel
_AXIS_KEYS = ("tickvals", "ticktext", "range", "tickfont", "showgrid", "zeroline",
              "automargin", "fixedrange")


def lineage_across_figure(h: TableHistory, draw: Callable[..., go.Figure],
                          **kwargs: Any) -> go.Figure:
    """One panel per branch of ``h``: ``draw(branch history, **kwargs)`` (the one-branch
    :func:`~schemalab.widgets.lineage_figure.lineage_figure`) stacked."""
    names = list(h.branches) or ["main"]
    subs = [draw(h.branch(n), **kwargs) for n in names]
    rows = [max(len(f.layout.yaxis.tickvals or ()), 1) for f in subs]
    fig = make_subplots(rows=len(subs), cols=1, row_heights=[r / sum(rows) for r in rows],
                        vertical_spacing=min(0.25, 0.6 / len(subs)) if len(subs) > 1 else 0,
                        subplot_titles=[f"branch {html.escape(n, quote=False)}"
                                        for n in names])
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
    height = sum(subs[i].layout.height or 300 for i in range(len(subs)))
    fig.update_layout(
        height=height, autosize=True, template="plotly_white",
        title=dict(text=html.escape(f"{h.name}: field lineage across branches", quote=False),
                   subtitle=dict(text=html.escape(sub_text, quote=False),
                                 font=dict(size=12, color="#57606a")),
                   x=0.005, xanchor="left", y=1 - 12 / height, yanchor="top",
                   yref="container"),
        margin=dict(l=10, r=20, t=110, b=30), hoverlabel=dict(align="left"))
    return fig
