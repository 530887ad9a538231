"""What every view shares: error messages inside the widget, read previews, figures as
widgets that fill the cell, progress messages, and a readable fallback for a notebook seen
without a kernel (GitHub, nbconvert, JupyterLab before Run All)."""

from __future__ import annotations

import functools
import html
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anywidget
import ipywidgets as W
import plotly.graph_objects as go
import traitlets

from schemalab.render.tables import html_table

PREVIEW_ROWS = 20
NOTE = "font-size:12px;color:#57606a"

F = TypeVar("F", bound=Callable[..., Any])

#: Held by every widget action (a click, a picked value) while it runs. JupyterLab 4.6 sends
#: widget messages on a kernel subshell, and ipykernel 7 runs each on the thread of the
#: subshell that last published on that widget's comm: seen in the tour's browser test, Back
#: and Step ran on the subshell's thread and the next Reset on the main thread. So two clicks
#: can run at once, and a Reset deleted the files of a read that a Step was still collecting.
#: Reentrant: Play runs Step, a cell may call ``stepper.play()`` too.
ACTIONS = threading.RLock()


def one_at_a_time(fn: F) -> F:
    """``fn`` holding :data:`ACTIONS`: widget actions run one after another, whichever
    thread the kernel runs them on."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with ACTIONS:
            return fn(*args, **kwargs)
    return run  # type: ignore[return-value]


def error_html(err: BaseException) -> str:
    """A clear one-paragraph message for an error: ours, or Spark's first line. A JVM error
    that PySpark passes on as it is (``Py4JJavaError``) says first which call failed
    ("An error occurred while calling o585.collectToPython."); the line shown is the Java
    exception's own."""
    text = getattr(err, "message", None) or str(err)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].startswith("An error occurred while calling"):
        lines = [lines[1].removeprefix(":").strip(), *lines[2:]]
    first = lines[0] if lines else type(err).__name__
    return (f"<div class='sl-error' style='color:#cf222e;border-left:3px solid #cf222e;"
            f"padding:4px 8px'><b>{html.escape(type(err).__name__)}</b>: "
            f"{html.escape(first)}</div>")


def progress_html(what: str) -> str:
    """A message shown while Spark works; the first start of Spark says it takes a while."""
    starting = "" if spark_running() else " (starting Spark first: about 20 seconds)"
    return (f"<div class='sl-progress' style='{NOTE};padding:4px 0'>⏳ {html.escape(what)}"
            f"{starting}…</div>")


def spark_running() -> bool:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return False
    return SparkSession.getActiveSession() is not None


class CellWidth(anywidget.AnyWidget):  # type: ignore[misc]
    """An invisible widget beside a figure that reports the width its front end draws it
    at (the width of the box it is in), again whenever that changes, and whether the
    figure beside it still has not drawn its data after a few seconds (``blank``)."""

    # The width is sent once the figure beside it has drawn its data (or after 10 s): a
    # relayout that reaches plotly's placeholder plot before the first draw can race it.
    _esm = """
    function render({ model, el }) {
      el.style.height = '0px';
      const box = () => el.closest('.sl-figure');
      const drawn = () => {
        const gd = box() && box().querySelector('.js-plotly-plot');
        return !!(gd && gd.data && gd.data.length);
      };
      let waited = 0, pending = false;
      const send = () => {
        if (!drawn() && waited < 10000) {
          if (box() && waited >= 4000 && !model.get('blank')) {
            model.set('blank', true);
            model.save_changes();
          }
          if (!pending) {
            pending = true;
            setTimeout(() => { pending = false; waited += 250; send(); }, 250);
          }
          return;
        }
        const w = Math.floor((box() || el).getBoundingClientRect().width);
        if (w > 0 && w !== model.get('width')) { model.set('width', w); model.save_changes(); }
      };
      model.on('change:blank', () => { if (!model.get('blank')) { waited = 0; send(); } });
      const seen = new ResizeObserver(send);
      seen.observe(el);
      send();
      return () => seen.disconnect();
    }
    export default { render };
    """
    width = traitlets.Int(0).tag(sync=True)
    blank = traitlets.Bool(False).tag(sync=True)


class FullWidthFigure(W.Box):
    """A plotly figure as a widget the width of the cell: a ``FigureWidget`` (plotly's own
    anywidget) drawn at the width the front end gives its box (:class:`CellWidth`). Plotly
    itself draws a figure without a width at its default 700 px, whatever the cell: too
    wide for a 684 px tab at a 900 px window (its right edge, the modebar's column, cut off),
    too narrow for a wide one. A FigureWidget view that never draws its data (plotly's
    widget sometimes misses its first draw) is replaced by a new one."""

    def __init__(self, fig: go.Figure) -> None:
        # A FigureWidget, not display() inside an Output widget: Output capture depends on
        # the front end (nbval's kernel client has none); a widget view renders everywhere.
        # _validate=False here and where the figures' traces are built: plotly checks every
        # value in Python, a third of the Explorer's time on a 1,000-version table; the
        # values are ours, and the browser tests render every figure
        self.figure = fig
        self.widget = go.FigureWidget(fig, _validate=False)
        self.cell = CellWidth()
        self.cell.observe(self._fit, names="width")
        self.cell.observe(self._redraw, names="blank")
        super().__init__([self.cell, self.widget], layout=W.Layout(width="100%",
                                                                   display="block"))
        self.add_class("sl-figure")

    @one_at_a_time
    def _fit(self, change: dict[str, Any]) -> None:
        if change["new"] > 0:
            self.widget.layout.width = change["new"]

    @one_at_a_time
    def _redraw(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            return
        layout = self.widget.layout
        self.widget = go.FigureWidget(self.figure, _validate=False)
        self.widget.layout = layout  # what was changed since (a zoom, the width)
        self.children = [self.cell, self.widget]
        self.cell.blank = False


def guarded(target: W.HTML) -> Callable[[Callable[[], Any]], Any]:
    """Run a callback, showing its error in ``target`` instead of raising."""
    @one_at_a_time
    def run(fn: Callable[[], Any]) -> Any:
        try:
            target.value = ""
            return fn()
        except Exception as err:  # shown to the user inside the widget
            target.value = error_html(err)
            return None
    return run


def _sortable(df: Any) -> list[str]:
    from pyspark.sql import types as st

    return [f.name for f in df.schema.fields
            if not isinstance(f.dataType, st.MapType | st.VariantType)]


def preview_html(df: Any, limit: int = PREVIEW_ROWS) -> str:
    """The first rows of a Spark DataFrame, ordered by its columns (left to right, so a
    re-run shows the same rows in the same order), as a styled table: NULL as NULL, nested
    values as ``{name: value}``, ``[...]``."""
    from pyspark.sql import functions as F

    cols = list(df.columns)
    order = [F.col(f"`{c.replace('`', '``')}`").asc_nulls_first() for c in _sortable(df)]
    ordered = df.orderBy(*order) if order else df
    rows = ordered.limit(limit + 1).collect()
    more = len(rows) > limit
    rows = rows[:limit]
    note = (f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
            + (f" shown (the first {limit}, ordered by the columns)" if more else ""))
    return html_table(cols, [tuple(r) for r in rows], css_class="sl-preview", caption=note)


class ReadableWidget:
    """A widget that stays readable without a kernel: its ``text/plain`` is a summary and
    its ``text/html`` a static view, next to the live widget's view. JupyterLab shows the
    live widget when the kernel runs; GitHub, nbconvert and a notebook opened before Run All
    show the static view (``make notebooks`` stores only that)."""

    def static_text(self) -> str:  # pragma: no cover - every widget defines it
        raise NotImplementedError

    def static_html(self) -> str:  # pragma: no cover - every widget defines it
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.static_text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data: dict[str, Any] = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data["text/plain"] = self.static_text()
        data["text/html"] = (f"<div class='sl-static'>{self.static_html()}"
                             f"<p style='{NOTE}'><i>A live widget: run the notebook in "
                             "JupyterLab to use it.</i></p></div>")
        return data
