"""Notebook widgets: history, lineage and snapshot views, time travel, and the explorer.

Each widget takes a table — ours, a Paimon table from elsewhere (``sl.open_table``), or an
Iceberg table — and wires the figures of :mod:`schemalab.widgets.figures` to ipywidgets
controls. Errors show as messages inside the widget, never as tracebacks; without a kernel
each shows a readable static view (:class:`~schemalab.widgets.common.ReadableWidget`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W
from schemalab.widgets.common import (
    NOTE,
    FullWidthFigure,
    ReadableWidget,
    error_html,
    guarded,
    one_at_a_time,
    preview_html,
    progress_html,
)
from schemalab.widgets.figures import (
    branch_lanes_figure,
    diff_html,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)
from schemalab.widgets.lineage_figure import MAX_COLUMNS
from schemalab.widgets.timeline_figure import format_time, snapshot_label
from schemalab.widgets.tree_figure import reads_text, rows_text

from schemalab.format import TableLike
from schemalab.history.graph import table_history
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import gc_paused
from schemalab.render.html import explanation_html, partial_html, render_history_html
from schemalab.render.lineage_layout import lineage_layout
from schemalab.render.tables import html_table

#: field rows per page of the lineage view
PAGE_ROWS = 40
WIDE = {"description_width": "initial"}


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def snapshot_option(s: SnapshotNode) -> str:
    """A snapshot in a dropdown: Paimon's id, or Iceberg's sequence number, with its time and
    kind (an Iceberg id is 19 random digits; the view shows it next to the dropdown)."""
    when = format_time(s.time_millis)
    return f"{snapshot_label(s)} · {s.kind}" + (f" · {when}" if when else "")


def _summary(h: TableHistory) -> str:
    v = len(h.schemas)
    return (f"{h.name} ({h.format}): {v} schema version{'s' if v != 1 else ''}, "
            f"{len(h.lineage)} field{'s' if len(h.lineage) != 1 else ''}, "
            f"{len(h.snapshots)} snapshot{'s' if len(h.snapshots) != 1 else ''}")


def _refs_text(h: TableHistory) -> str:
    """``; refs: branch main, branch dev (forked at 3), tag v1`` (nothing for main alone)."""
    if len(h.refs) <= 1:
        return ""
    parts = []
    for r in h.refs:
        fork = h.forks.get(r.name)
        at = f" (forked at {fork.snapshot_id})" if fork and fork.snapshot_id is not None else ""
        parts.append(f"{r.kind} {r.name}{at}")
    return "; refs: " + ", ".join(parts)


def ref_options(h: TableHistory, none: str) -> list[tuple[str, str | None]]:
    """A ref dropdown's options: ``none`` (no ref), then every branch and tag."""
    return [(none, None)] + [(f"{r.kind} {r.name}", r.name) for r in h.refs]


class SchemaHistoryView(ReadableWidget, W.VBox):
    """A timeline of schema versions and snapshots; pick any two versions to see their
    diff."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table_history(table)
        ids = [v.id for v in self.history.schemas]
        options = [(f"schema {i}", i) for i in ids]
        self.old = W.Dropdown(options=options, value=ids[max(len(ids) - 2, 0)] if ids else None,
                              description="from", style=WIDE)
        self.new = W.Dropdown(options=options, value=ids[-1] if ids else None,
                              description="to", style=WIDE)
        self.axis = W.ToggleButtons(options=[("in order", "order"), ("by time", "time")],
                                    value="order", style={"button_width": "auto"})
        self.figure_box = W.Box(layout=W.Layout(width="100%"))
        self.lanes_box = W.Box(layout=W.Layout(width="100%"))
        self.diff = W.HTML()
        self.error = W.HTML()
        self.old.observe(lambda _: self._show_diff(), names="value")
        self.new.observe(lambda _: self._show_diff(), names="value")
        self.axis.observe(lambda _: self._draw(), names="value")
        #: one lane per branch, when the table has more than main or snapshots off every
        #: branch (None: the table's history is one line)
        self.lanes: Any = None
        if len(self.history.branches) > 1 or self.history.marks or \
                self.history.warnings():
            self.lanes = branch_lanes_figure(self.history, show_times=True)
            self.lanes_box.children = [FullWidthFigure(self.lanes)]
        super().__init__([self.lanes_box, self.axis, self.figure_box,
                          W.HBox([W.HTML("<b>diff</b>"), self.old, self.new]), self.diff,
                          self.error], layout=W.Layout(width="100%"))
        self._draw()
        self._show_diff()

    def _draw(self) -> None:
        def draw() -> None:
            self.figure = schema_timeline_figure(self.history, x=self.axis.value,
                                                 show_times=True)
            self.figure_box.children = [FullWidthFigure(self.figure)]
        guarded(self.error)(draw)

    def _show_diff(self) -> None:
        def show() -> None:
            if self.old.value is not None and self.new.value is not None:
                self.diff.value = diff_html(self.history.diff(self.old.value, self.new.value))
        guarded(self.error)(show)

    def static_text(self) -> str:
        return f"SchemaHistoryView of {_summary(self.history)}{_refs_text(self.history)}"

    def static_html(self) -> str:
        return (f"<p><b>{_e(self.history.name)}</b>: {len(self.history.schemas)} schema "
                f"versions</p>" + self.diff.value)


class LineageView(ReadableWidget, W.VBox):
    """One row per field id across every schema version (see :func:`lineage_figure`), with
    a focus on one field or name, pages of rows, a time axis, and a window of versions."""

    def __init__(self, table: TableLike, history: TableHistory | None = None, *,
                 page_rows: int = PAGE_ROWS) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table_history(table)
        self.page_rows = page_rows
        names = sorted({f.full_name for lin in self.history.lineage for _, f in lin.states})
        self.focus = W.Combobox(options=names, placeholder="every field", description="focus",
                                ensure_option=False, continuous_update=False, style=WIDE,
                                tooltip="a field name (every field that ever had it) or id")
        self.axis = W.ToggleButtons(options=[("versions", "version"), ("time", "time")],
                                    value="version", style={"button_width": "auto"})
        self.page = W.Dropdown(options=[("fields", 0)], value=0, description="rows",
                               style=WIDE)
        n = len(self.history.schemas)
        self.window = W.IntRangeSlider(value=(max(0, n - MAX_COLUMNS), max(n - 1, 0)), min=0,
                                       max=max(n - 1, 0), description="versions",
                                       continuous_update=False, style=WIDE,
                                       layout=W.Layout(width="420px",
                                                       display="" if n > 12 else "none"))
        branches = list(self.history.branches)
        self.branch = W.Dropdown(
            options=[("the table", None)] + [(f"branch {b}", b) for b in branches]
            + [("every branch", "all")], value=None, description="branch", style=WIDE,
            layout=W.Layout(display="" if len(branches) > 1 else "none"))
        self.figure_box = W.Box(layout=W.Layout(width="100%"))
        self.error = W.HTML()
        for control in (self.focus, self.axis, self.page, self.branch):
            control.observe(lambda _: self._draw(), names="value")
        self.window.observe(lambda _: self._zoom(), names="value")
        super().__init__([W.HBox([self.branch, self.focus, self.page, self.axis, self.window],
                                 layout=W.Layout(flex_flow="row wrap")),
                          self.figure_box, self.error], layout=W.Layout(width="100%"))
        self._draw()

    def _focus(self) -> str | None:
        text = (self.focus.value or "").strip()
        return text or None

    def _draw(self) -> None:
        def draw() -> None:
            focus = self._focus()
            branch = self.branch.value
            shown = self.history if branch in (None, "all") else self.history.branch(branch)
            total = lineage_layout(shown, focus=focus).total_rows
            pages = max(1, -(-total // self.page_rows))
            options = [(f"fields {p * self.page_rows + 1}–{min(total, (p + 1) * self.page_rows)}"
                        f" of {total}", p) for p in range(pages)] or [("fields", 0)]
            if [o[1] for o in self.page.options] != [o[1] for o in options] or \
                    list(self.page.options) != options:
                with self.page.hold_trait_notifications():
                    page = min(self.page.value or 0, pages - 1)
                    self.page.options = options
                    self.page.value = page
            self.page.layout.display = "" if pages > 1 else "none"
            self.figure = lineage_figure(self.history, focus=focus, x=self.axis.value,
                                         page=self.page.value or 0,
                                         page_size=self.page_rows, branch=branch)
            self.figure_box.children = [FullWidthFigure(self.figure)]
            self._zoom()
        guarded(self.error)(draw)

    @one_at_a_time
    def _zoom(self) -> None:
        """Show the versions the slider picks (the figure pans to the rest)."""
        box = self.figure_box.children
        if not box or self.axis.value != "version" or self.branch.value == "all":
            return
        lo, hi = self.window.value
        box[0].widget.layout.xaxis.range = [lo - 0.6, hi + 3.0]

    def static_text(self) -> str:
        return f"LineageView of {_summary(self.history)}"

    def static_html(self) -> str:
        rows = [[lin.field_id, " → ".join(lin.names),
                 ", ".join(f"{ev.kind.replace('_', ' ')} in schema {ev.schema_id}"
                           for ev in lin.events)] for lin in self.history.lineage[:60]]
        more = len(self.history.lineage) - len(rows)
        return (f"<p><b>{_e(self.history.name)}</b>: each field's life by id</p>"
                + html_table(["field", "names", "changes"], rows,
                             caption=f"… and {more} more fields" if more > 0 else ""))


class SnapshotTreeView(ReadableWidget, W.VBox):
    """Snapshot → manifest lists → manifests → data files, coloured by schema id; pick a
    file (or click it in the tree) to see its stats and how it is read today."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table_history(table)
        snaps = list(self.history.snapshots)
        self.newest = max((v.id for v in self.history.schemas), default=0)
        self.snapshot = W.Dropdown(options=[(snapshot_option(s), s.id) for s in snaps],
                                   value=snaps[-1].id if snaps else None,
                                   description="snapshot", style=WIDE,
                                   layout=W.Layout(width="auto"))
        self.snapshot_id = W.HTML()
        self.ref = W.Dropdown(options=ref_options(self.history, "every snapshot"), value=None,
                              description="ref", style=WIDE,
                              layout=W.Layout(display="" if len(self.history.refs) > 1
                                              else "none"))
        self.ref.observe(lambda _: self._pick_ref(), names="value")
        self.files = W.Select(options=[], rows=6, description="live files", style=WIDE,
                              layout=W.Layout(width="95%"))
        self.figure_box = W.Box(layout=W.Layout(width="100%"))
        self.detail = W.HTML()
        self.error = W.HTML()
        self.snapshot.observe(lambda _: self._show_tree(), names="value")
        self.files.observe(lambda _: self._show_file(), names="value")
        children: list[W.Widget] = [W.HBox([self.ref, self.snapshot, self.snapshot_id]),
                                    self.figure_box,
                                    self.files, self.detail, self.error]
        if not snaps:
            children = [W.HTML("<p>This table has no snapshots yet: no data was written.</p>")]
        super().__init__(children, layout=W.Layout(width="100%"))
        self._show_tree()

    def _shown(self) -> TableHistory:
        """The history the snapshots come from: a branch's own (Paimon's branches number
        their snapshots apart from main's), else the table's."""
        name = self.ref.value
        if name is not None and name in self.history.branches:
            return self.history.branch(name)
        return self.history

    def _pick_ref(self) -> None:
        """A branch lists its snapshots (its head picked), a tag its one snapshot."""
        def pick() -> None:
            ref = next((r for r in self.history.refs if r.name == self.ref.value), None)
            snaps = list(self._shown().snapshots)
            if ref is not None and ref.kind == "tag":
                snaps = [s for s in snaps if s.id == ref.snapshot_id]
            head = ref.snapshot_id if ref is not None else (snaps[-1].id if snaps else None)
            with self.snapshot.hold_trait_notifications():
                self.snapshot.options = [(snapshot_option(s), s.id) for s in snaps]
                self.snapshot.value = head if head in {s.id for s in snaps} else None
            self._show_tree()
        guarded(self.error)(pick)

    def _show_tree(self) -> None:
        def show() -> None:
            if self.snapshot.value is None:
                return
            node = self._shown().tree(self.snapshot.value)
            self.node = node
            label = snapshot_label(node)
            self.snapshot_id.value = (f"<span style='{NOTE}'>id {node.id}</span>"
                                      if label != str(node.id) else "")
            self.figure = snapshot_tree_figure(node, newest_schema=self.newest,
                                               reads=reads_text(self.table, node.schema_id))
            figure = FullWidthFigure(self.figure)
            for trace in figure.widget.data:
                if trace.name and trace.name.startswith(("file", "delete")):
                    trace.on_click(self._clicked)
            self.figure_box.children = [figure]
            self.files.options = [(f"{f.path} (schema {f.schema_id}, {rows_text(f.row_count)})",
                                   i) for i, f in enumerate(node.live_files)]
            if node.summary.get("tree_error"):
                self.error.value = error_html(RuntimeError(node.summary["tree_error"]))
        guarded(self.error)(show)

    @one_at_a_time
    def _clicked(self, trace: Any, points: Any, _selector: Any) -> None:
        """A click on a file in the tree selects it below (live files are matched by path)."""
        for i in getattr(points, "point_inds", []) or []:
            path = trace.customdata[i]
            for k, f in enumerate(self.node.live_files):
                if f.path == path:
                    self.files.value = k
                    return

    def _show_file(self) -> None:
        def show() -> None:
            if self.files.value is None:
                return
            f = self.node.live_files[self.files.value]
            stats = html_table(["column (today's name)", "min", "max", "nulls"],
                               [(k, *v) for k, v in f.stats.items()],
                               caption="" if f.stats else "no value statistics in the manifest")
            how = []
            ex = self.table.explain_read(self.snapshot.value, "current")
            for g in ex.groups:
                if g.schema_id == f.schema_id:
                    how = [(c.column, c.text) for c in g.columns]
            self.detail.value = (
                f"<p><b>{_e(f.path)}</b>: written under schema {f.schema_id}, "
                f"{rows_text(f.row_count)}</p>{stats}"
                + (("<p>Read today as:</p>" + html_table(["column", "how"], how)) if how
                   else ""))
        guarded(self.error)(show)

    def static_text(self) -> str:
        return f"SnapshotTreeView of {_summary(self.history)}"

    def static_html(self) -> str:
        rows = [(snapshot_label(s), s.kind, s.schema_id, s.record_count)
                for s in self.history.snapshots[-20:]]
        return (f"<p><b>{_e(self.history.name)}</b>: snapshots</p>"
                + html_table(["snapshot", "kind", "schema", "rows"], rows))


class TimeTravelView(ReadableWidget, W.VBox):
    """Read any snapshot under its own schema or today's, with the explanation of the
    read."""

    def __init__(self, table: TableLike, history: TableHistory | None = None, *,
                 reads: bool = True) -> None:
        self.table = table
        self.history = history if history is not None else table_history(table)
        #: False: the view explains each read from the metadata and reads no rows
        self.reads = reads
        snaps = list(self.history.snapshots)
        self.snapshot = W.Dropdown(options=[(snapshot_option(s), s.id) for s in snaps],
                                   value=snaps[-1].id if snaps else None,
                                   description="snapshot", style=WIDE,
                                   layout=W.Layout(width="auto"))
        self.schema = W.ToggleButtons(options=[("its own schema", "snapshot"),
                                               ("today's schema", "current")],
                                      value="snapshot", style={"button_width": "auto"},
                                      tooltip="a ref's own schema is the one its engine binds")
        self.ref = W.Dropdown(options=ref_options(self.history, "a snapshot"), value=None,
                              description="read", style=WIDE,
                              layout=W.Layout(display="" if len(self.history.refs) > 1
                                              else "none"))
        self.ref.observe(lambda _: setattr(self.snapshot, "disabled",
                                           self.ref.value is not None), names="value")
        self.button = W.Button(description="Read" if reads else "Explain",
                               icon="table" if reads else "info", button_style="primary")
        self.result = W.HTML()
        self.error = W.HTML()
        self.button.on_click(lambda _: self.show())
        super().__init__([W.HBox([self.ref, self.snapshot, self.schema, self.button],
                                 layout=W.Layout(flex_flow="row wrap")),
                          self.result, self.error], layout=W.Layout(width="100%"))

    def show(self) -> None:
        def run() -> None:
            ref = self.ref.value
            if self.snapshot.value is None and ref is None:
                self.result.value = "<p>This table has no snapshots yet: nothing to read.</p>"
                return
            text = ""
            # a ref reads in the schema its engine binds, unless another one is picked
            schema = (None if self.schema.value == "snapshot" else self.schema.value) \
                if ref is not None else self.schema.value
            snapshot = None if ref is not None else self.snapshot.value
            if self.reads:
                self.result.value = progress_html("reading on Spark")
                df = self.table.read(snapshot_id=snapshot, schema=schema, ref=ref)
                text = preview_html(df)
            text += explanation_html(self.table.explain_read(snapshot, schema, ref=ref))
            self.result.value = text
        guarded(self.error)(run)
        if self.error.value:
            self.result.value = ""

    def static_text(self) -> str:
        return f"TimeTravelView of {_summary(self.history)}"

    def static_html(self) -> str:
        return (f"<p><b>{_e(self.history.name)}</b>: read any of its "
                f"{len(self.history.snapshots)} snapshots in its own schema or today's.</p>")


class Explorer(ReadableWidget, W.Tab):
    """Tabs: schema history, lineage, snapshot tree, and time travel."""

    PAGES: list[tuple[str, Callable[[TableLike, TableHistory], W.Widget]]] = [
        ("Schema history", SchemaHistoryView), ("Lineage", LineageView),
        ("Snapshots", SnapshotTreeView), ("Time travel", TimeTravelView)]

    def __init__(self, table: TableLike, *, reads: bool = True) -> None:
        """``reads=False``: a metadata-only Explorer (``schemalab serve`` without
        ``--allow-reads``): Time travel explains each read and reads no rows."""
        self.table = table
        self.history: TableHistory | None = None
        children: list[W.Widget] = []
        try:
            self.history = table_history(table)  # one history for every page
        except Exception as err:
            children = [W.HTML(error_html(err)) for _ in self.PAGES]
        else:
            # the pages' layouts and figures are tens of thousands of small objects that all
            # stay alive: collector passes over them freed nothing and took a third of the
            # time on a 1,000-version table (bench/interactive.py)
            with gc_paused():
                for _, cls in self.PAGES:
                    try:
                        children.append(TimeTravelView(table, self.history, reads=reads)
                                        if cls is TimeTravelView else cls(table, self.history))
                    except Exception as err:
                        children.append(W.HTML(error_html(err)))
        #: the pages, in tab order (each under the partial-history banner when there is one)
        self.pages = list(children)
        banner = "" if self.history is None else partial_html(self.history)
        if banner:  # a catalog returned only some snapshots: every tab says so
            children = [W.VBox([W.HTML(banner), page], layout=W.Layout(width="100%"))
                        for page in children]
        super().__init__(children=children, layout=W.Layout(width="100%"))
        for i, (title, _) in enumerate(self.PAGES):
            self.set_title(i, title)

    def static_text(self) -> str:
        if self.history is None:
            return f"Explorer of {self.table.name}: its history could not be read"
        partial = f"\nPARTIAL HISTORY: {self.history.partial}" if self.history.partial else ""
        return (f"Explorer of {_summary(self.history)} — tabs: "
                + ", ".join(title for title, _ in self.PAGES) + partial)

    def static_html(self) -> str:
        if self.history is None:
            return f"<p>Explorer of {_e(self.table.name)}: its history could not be read.</p>"
        return ("<p><b>Explorer</b> — tabs: "
                + ", ".join(title for title, _ in self.PAGES) + "</p>"
                + render_history_html(self.history, times=False))
