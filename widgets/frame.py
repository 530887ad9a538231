"""The frame every figure shares: title and subtitle as one text, the legend under them, the
modebar in its own column, and the top margin that holds them all, so nothing overprints.

Plotly places a ``title.subtitle`` by its own rule, which the widget front end's plotly.js
draws over the title; a title and a legend placed at fixed container heights collide when the
legend wraps; the modebar floats over whatever is at the top right. Here instead:

- the title and the subtitle lines are one text (``<br>``, the subtitle smaller and grey),
  anchored at the top of the figure;
- the legend starts under the last line; its rows are estimated from its entries' text at the
  narrowest width the views are shown at (:data:`NARROW_PX`), so a wrapped legend still fits;
- the modebar stands vertically in a right margin of its own (:data:`MODEBAR_PX`), with only
  the buttons the views use;
- :func:`frame` returns the top margin: what the title, the legend and (for axes on top) the
  tick labels take.

Long names are cut by :func:`cut` (``…``); the figures' hover texts carry the full names.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go

#: the narrowest plot the views are laid out for: a 900 px window's notebook cell
NARROW_PX = 640
#: the right margin the vertical modebar stands in
MODEBAR_PX = 36
TITLE_SIZE = 16
SUB_SIZE = 12
#: the height of the title's first line, and of each smaller subtitle line
TITLE_LINE_PX = 24
SUB_LINE_PX = 17
LEGEND_ROW_PX = 22
PAD_PX = 8
#: what the title of a table's figure shows of its name at most
NAME_CHARS = 32
#: a subtitle line longer than this is wrapped (it fits the narrowest plot)
SUB_CHARS = 76
SUB_COLOR = "#57606a"
# the modebar buttons the views do not use (selections, autoscale, spikes)
_REMOVE = ["lasso2d", "select2d", "autoScale2d", "toggleSpikelines", "hoverClosestCartesian",
           "hoverCompareCartesian"]


def cut(name: str, limit: int = NAME_CHARS) -> str:
    """``name``, cut to ``limit`` characters with an ellipsis at the end.

    >>> cut("default.orders")
    'default.orders'
    >>> cut("default.a_table_with_a_very_long_name", 20)
    'default.a_table_wit…'
    """
    return name if len(name) <= limit else name[:limit - 1] + "…"


def _text_px(text: str, size: float) -> float:
    """A generous estimate of ``text``'s width in plotly's sans-serif at ``size`` px."""
    return 0.62 * size * len(text)


def _legend_rows(names: Sequence[str], size: float = 11) -> int:
    """Rows a horizontal legend of ``names`` takes at :data:`NARROW_PX` (an entry is its
    symbol, 40 px, and its text)."""
    if not names:
        return 0
    rows, used = 1, 0.0
    for n in names:
        w = 40 + _text_px(n, size)
        if used and used + w > NARROW_PX - MODEBAR_PX:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def frame(fig: go.Figure, title: str, subtitle: Sequence[str] = (), *, plot_px: int,
          below: int = 0) -> int:
    """Lay out ``fig``'s title (escaped by the caller: it may hold markup), its subtitle
    lines and its legend from the top, the modebar in its own column; ``below`` px more for
    what the plot puts above its area (tick labels and title of a top x axis), ``plot_px``
    for the plot area itself. Sets the layout's title, legend, modebar, margins and height,
    and returns the height."""
    subtitle = [part for line in subtitle
                for part in (textwrap.wrap(line, SUB_CHARS) or [""])]
    text = f"<span style='font-size:{TITLE_SIZE}px'>{title}</span>" + "".join(
        f"<br><span style='font-size:{SUB_SIZE}px;color:{SUB_COLOR}'>{line}</span>"
        for line in subtitle)
    title_px = TITLE_LINE_PX + SUB_LINE_PX * len(subtitle)
    names = [t.name for t in fig.data if t.name and t.showlegend is not False]
    legend_px = LEGEND_ROW_PX * _legend_rows(names)
    top = PAD_PX + title_px + PAD_PX + legend_px + below + (PAD_PX if legend_px else 0)
    margin = fig.layout.margin
    bottom = margin.b if margin.b is not None else 20
    height = top + plot_px + bottom
    fig.update_layout(
        height=height,
        # the first line's baseline: plotly's yanchor "top" misplaces a text of several
        # lines (it lifts it by the lines below, out of the figure)
        title=dict(text=text, x=0, xref="container", xanchor="left", pad=dict(l=10),
                   y=1 - (PAD_PX + TITLE_SIZE) / height, yref="container", yanchor="bottom",
                   font=dict(size=TITLE_SIZE), automargin=False),
        legend=dict(orientation="h", x=0, xref="container", xanchor="left",
                    y=1 - (PAD_PX * 2 + title_px) / height, yref="container",
                    yanchor="top", font=dict(size=11)),
        modebar=dict(orientation="v", remove=_REMOVE),
        margin=dict(t=top, r=max(margin.r or 0, MODEBAR_PX), l=margin.l if margin.l is not None
                    else 10, b=bottom))
    return height


def esc(text: object) -> str:
    """Text for a plotly label: HTML-escaped (plotly reads tags in labels)."""
    return html.escape(str(text), quote=False)


def integer_axis(max_value: float) -> dict[str, object]:
    """Tick settings for an axis that counts (changes, files): integer ticks only, about
    five of them."""
    step = max(1, math.ceil(max_value / 5))
    return dict(tickmode="linear", tick0=0, dtick=step, tickformat="d")


def sparse_labels(texts: Sequence[str], slots: float, *, left_px: int = 260,
                  char_px: float = 7.0) -> list[str]:
    """Tick texts for ``slots`` evenly spaced columns, blank but for every k-th and the last,
    k in 1, 2, 5, 10, … the smallest that keeps the labels apart at :data:`NARROW_PX` (less
    ``left_px`` of row labels). Every column keeps its tick and grid line.

    >>> sparse_labels([str(i) for i in range(12)], 12)
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']
    >>> sparse_labels([str(i) for i in range(50)], 53.5)[:11]
    ['0', '', '', '', '', '5', '', '', '', '', '10']
    """
    if not texts:
        return []
    widest = max(len(t) for t in texts) * char_px + 6
    per_slot = (NARROW_PX - left_px) / max(slots, 1)
    step = next(k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9)
                if per_slot * k >= widest)
    last = len(texts) - 1
    return [t if k % step == 0 and (k == last or last - k >= step / 2 or step == 1) or k == last
            else "" for k, t in enumerate(texts)]
