"""Notebook widgets: history, lineage and snapshot views, the ALTER stepper, the explorer.

Each widget takes a table — ours, a Paimon table from elsewhere (``sl.open_table``), or an
Iceberg table — and wires the figures of :mod:`schemalab.widgets.figures` to ipywidgets
controls. Errors show as messages inside the widget, never as tracebacks.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
from schemalab.widgets.figures import (
    diff_html,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)

from schemalab.history.model import TableHistory
from schemalab.table import Table, TableLike
from schemalab.warehouse import Warehouse

PREVIEW_ROWS = 20


def error_html(err: BaseException) -> str:
    """A clear one-paragraph message for an error: ours, or Spark's first line."""
    text = getattr(err, "message", None) or str(err)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(err).__name__)
    return (f"<div class='sl-error' style='color:#cf222e;border-left:3px solid #cf222e;"
            f"padding:4px 8px'><b>{html.escape(type(err).__name__)}</b>: "
            f"{html.escape(first)}</div>")


def _figure_widget(fig: go.Figure) -> go.FigureWidget:
    # A FigureWidget, not display() inside an Output widget: Output capture depends on the
    # front end (nbval's kernel client has none), a widget view renders the same everywhere.
    return go.FigureWidget(fig)


def _guarded(target: W.HTML) -> Callable[[Callable[[], Any]], Any]:
    def run(fn: Callable[[], Any]) -> Any:
        try:
            target.value = ""
            return fn()
        except Exception as err:  # shown to the user inside the widget
            target.value = error_html(err)
            return None
    return run


def preview_html(df: Any, limit: int = PREVIEW_ROWS) -> str:
    """The first rows of a Spark DataFrame as an HTML table; NULL shown as NULL."""
    rows = df.limit(limit).collect()
    cols = list(df.columns)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(
            "<td><i style='color:#8c959f'>NULL</i></td>" if v is None
            else f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    return (f"<table class='sl-preview'><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            f"</table><small>{len(rows)} row{'s' if len(rows) != 1 else ''} shown</small>")


class SchemaHistoryView(W.VBox):
    """A timeline of schema versions; pick any two to see their diff."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table.history()
        ids = [v.id for v in self.history.schemas]
        self.old = W.Dropdown(options=ids, value=ids[max(len(ids) - 2, 0)] if ids else None,
                              description="from schema")
        self.new = W.Dropdown(options=ids, value=ids[-1] if ids else None,
                              description="to schema")
        self.diff = W.HTML()
        self.error = W.HTML()
        self.old.observe(lambda _: self._show_diff(), names="value")
        self.new.observe(lambda _: self._show_diff(), names="value")
        super().__init__([_figure_widget(schema_timeline_figure(self.history)),
                          W.HBox([self.old, self.new]), self.diff, self.error])
        self._show_diff()

    def _show_diff(self) -> None:
        def show() -> None:
            if self.old.value is not None and self.new.value is not None:
                self.diff.value = diff_html(self.history.diff(self.old.value, self.new.value))
        _guarded(self.error)(show)


class LineageView(W.VBox):
    """One row per field id across every schema version (see :func:`lineage_figure`)."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table.history()
        self.figure = lineage_figure(self.history)
        super().__init__([_figure_widget(self.figure)])


class SnapshotTreeView(W.VBox):
    """Snapshot → manifest lists → manifests → data files, coloured by schema id; pick a
    file to see its stats and how it is read today."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        self.history: TableHistory = history if history is not None else table.history()
        ids = [s.id for s in self.history.snapshots]
        self.snapshot = W.Dropdown(options=ids, value=ids[-1] if ids else None,
                                   description="snapshot")
        self.files = W.Select(options=[], rows=6, description="files",
                              layout=W.Layout(width="95%"))
        self.figure_box = W.VBox()
        self.detail = W.HTML()
        self.error = W.HTML()
        self.snapshot.observe(lambda _: self._show_tree(), names="value")
        self.files.observe(lambda _: self._show_file(), names="value")
        children: list[W.Widget] = [self.snapshot, self.figure_box, self.files, self.detail,
                                    self.error]
        if not ids:
            children = [W.HTML("<p>This table has no snapshots yet.</p>")]
        super().__init__(children)
        self._show_tree()

    def _show_tree(self) -> None:
        def show() -> None:
            if self.snapshot.value is None:
                return
            node = self.history.tree(self.snapshot.value)
            self.node = node
            figure = _figure_widget(snapshot_tree_figure(node))
            figure.data[0].on_click(self._clicked)
            self.figure_box.children = [figure]
            self.files.options = [(f"{f.path} (schema {f.schema_id}, {f.row_count} rows)", i)
                                  for i, f in enumerate(node.live_files)]
        _guarded(self.error)(show)

    def _clicked(self, trace: Any, points: Any, _selector: Any) -> None:
        """A click on a file in the tree selects it below (live files are matched by path)."""
        for i in getattr(points, "point_inds", []) or []:
            hover = str(trace.hovertext[i]).split("<br>", 1)[0]
            for k, f in enumerate(self.node.live_files):
                if html.escape(f.path, quote=False) == hover:
                    self.files.value = k
                    return

    def _show_file(self) -> None:
        def show() -> None:
            if self.files.value is None:
                return
            f = self.node.live_files[self.files.value]
            stats = "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(str(v[0]))}</td>"
                f"<td>{html.escape(str(v[1]))}</td><td>{html.escape(str(v[2]))}</td></tr>"
                for k, v in f.stats.items()) or "<tr><td colspan=4>no value stats</td></tr>"
            how = ""
            ex = self.table.explain_read(self.snapshot.value, "current")
            for g in ex.groups:
                if g.schema_id == f.schema_id:
                    how = "".join(f"<li><code>{html.escape(c.column)}</code>: "
                                  f"{html.escape(c.text)}</li>" for c in g.columns)
            self.detail.value = (
                f"<p><b>{html.escape(f.path)}</b> — written under schema {f.schema_id}, "
                f"{f.row_count} rows</p><table><tr><th>column (today)</th><th>min</th>"
                f"<th>max</th><th>nulls</th></tr>{stats}</table>"
                + (f"<p>Read today as:</p><ul>{how}</ul>" if how else ""))
        _guarded(self.error)(show)


class AlterStepper(W.VBox):
    """Steps through SQL statements live on the warehouse's Spark session.

    After each step it shows the statement, the schema diff it made, the updated lineage, a
    preview of the evolved read, and the read explanation. ``back()`` restores the warehouse
    exactly as it was before the last step (from a copy taken before the step ran)."""

    def __init__(self, warehouse: Warehouse, statements: str | Sequence[str]) -> None:
        from schemalab import sql

        self.warehouse = warehouse
        self.statements = (sql.split_statements(statements) if isinstance(statements, str)
                           else [s for s in statements if s.strip()])
        self._checkpoints = tempfile.mkdtemp(prefix="schemalab-stepper-")
        self._save(0)
        self.position = 0
        self.focus: str | None = None
        self.last_error: BaseException | None = None
        self.header = W.HTML()
        self.statement = W.HTML()
        self.diff = W.HTML()
        self.lineage = W.VBox()
        self.preview = W.HTML()
        self.explanation = W.HTML()
        self.status = W.HTML()
        self.play_button = W.Button(description="Play", icon="play", tooltip="run every step")
        self.step_button = W.Button(description="Step", icon="step-forward")
        self.back_button = W.Button(description="Back", icon="step-backward")
        self.reset_button = W.Button(description="Reset", icon="undo")
        self.play_button.on_click(lambda _: self.play())
        self.step_button.on_click(lambda _: self.step())
        self.back_button.on_click(lambda _: self.back())
        self.reset_button.on_click(lambda _: self.reset())
        super().__init__([
            self.header,
            W.HBox([self.back_button, self.step_button, self.play_button, self.reset_button]),
            self.status, self.statement, self.diff, self.lineage, self.preview,
            self.explanation])
        self.add_class("sl-stepper")
        self._render()

    # ---- state ------------------------------------------------------------------------------

    def _save(self, position: int) -> None:
        dest = os.path.join(self._checkpoints, str(position))
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.warehouse.path, dest)

    def _restore(self, position: int) -> None:
        src = os.path.join(self._checkpoints, str(position))
        for name in os.listdir(self.warehouse.path):
            p = os.path.join(self.warehouse.path, name)
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        shutil.copytree(src, self.warehouse.path, dirs_exist_ok=True)

    # ---- actions ------------------------------------------------------------------------------

    def step(self) -> bool:
        """Run the next statement. Returns False when there is none left."""
        if self.position >= len(self.statements):
            return False
        text = self.statements[self.position]
        self.status.value = "<i>running on Spark…</i>"
        self.last_error = None
        try:
            self.warehouse.execute_sql(text)
        except Exception as err:  # shown in the widget: a refused ALTER is a lesson too
            self.last_error = err
        self.focus = self._table_of(text) or self.focus
        self.position += 1
        self._save(self.position)
        self._render()
        return True

    def back(self) -> bool:
        if self.position == 0:
            return False
        self.position -= 1
        self._restore(self.position)
        self.last_error = None
        self.focus = self._focus_at(self.position)
        self._render()
        return True

    def reset(self) -> None:
        self.position = 0
        self._restore(0)
        self.last_error = None
        self.focus = None
        self._render()

    def play(self) -> None:
        while self.step():
            pass

    # ---- what is shown -----------------------------------------------------------------------

    def _table_of(self, text: str) -> str | None:
        from schemalab import sql

        try:
            stmt = sql.parse_statement(text)
        except Exception:
            return None
        name = getattr(stmt, "name", None)
        if isinstance(stmt, sql.RenameTable):
            name = stmt.new_name
        if name is None and isinstance(stmt, sql.Query) and stmt.tables:
            name = stmt.tables[0]
        return None if name is None else name.qualified()

    def _focus_at(self, position: int) -> str | None:
        for text in reversed(self.statements[:position]):
            name = self._table_of(text)
            if name:
                return name
        return None

    @property
    def table(self) -> Table | None:
        if self.focus is None or not self.warehouse.has_table(self.focus):
            return None
        return self.warehouse.table(self.focus)

    @property
    def schema_id(self) -> int | None:
        t = self.table
        return None if t is None else t.schema.id

    def _render(self) -> None:
        n = len(self.statements)
        t = self.table
        where = "" if t is None else (
            f" — table <code>{html.escape(t.name)}</code>, schema {t.schema.id}, "
            f"snapshot {t.snapshot_manager.latest_id()}")
        self.header.value = (f"<b class='sl-position'>step {self.position} of {n}</b>"
                             f"<span class='sl-where'>{where}</span>")
        self.step_button.disabled = self.play_button.disabled = self.position >= n
        self.back_button.disabled = self.position == 0
        self.status.value = "" if self.last_error is None else error_html(self.last_error)
        if self.position == 0:
            upcoming = html.escape(self.statements[0]) if n else "(no statements)"
            self.statement.value = f"<p>next:</p><pre class='sl-statement'>{upcoming}</pre>"
            self.diff.value = self.preview.value = self.explanation.value = ""
            self.lineage.children = []
            return
        ran = html.escape(self.statements[self.position - 1])
        self.statement.value = f"<pre class='sl-statement'>{ran}</pre>"
        if t is None:
            self.diff.value = self.preview.value = self.explanation.value = ""
            self.lineage.children = []
            return
        try:
            h = t.history()
            ids = [v.id for v in h.schemas]
            self.diff.value = (diff_html(h.diff(ids[-2], ids[-1])) if len(ids) > 1
                               else f"<p>schema {ids[-1]}: created</p>")
            self.lineage.children = [_figure_widget(lineage_figure(h))]
            self.preview.value = "<p><b>evolved read</b></p>" + preview_html(t.read())
            self.explanation.value = ("<p><b>why each value is what it is</b></p>"
                                      + t.explain_read()._repr_html_())
        except Exception as err:
            self.status.value = error_html(err)


class TimeTravelView(W.VBox):
    """Read any snapshot under its own schema or today's."""

    def __init__(self, table: TableLike, history: TableHistory | None = None) -> None:
        self.table = table
        history = history if history is not None else table.history()
        ids = [s.id for s in history.snapshots]
        self.snapshot = W.Dropdown(options=ids, value=ids[-1] if ids else None,
                                   description="snapshot")
        self.schema = W.ToggleButtons(options=[("its own schema", "snapshot"),
                                               ("today's schema", "current")],
                                      value="snapshot")
        self.button = W.Button(description="Read", icon="table")
        self.result = W.HTML()
        self.error = W.HTML()
        self.button.on_click(lambda _: self.show())
        super().__init__([W.HBox([self.snapshot, self.schema, self.button]), self.result,
                          self.error])

    def show(self) -> None:
        def run() -> None:
            if self.snapshot.value is None:
                self.result.value = "<p>This table has no snapshots yet.</p>"
                return
            self.result.value = "<i>reading on Spark…</i>"
            df = self.table.read(snapshot_id=self.snapshot.value, schema=self.schema.value)
            text = preview_html(df)
            text += self.table.explain_read(self.snapshot.value, self.schema.value)._repr_html_()
            self.result.value = text
        _guarded(self.error)(run)


class Explorer(W.Tab):
    """Tabs: schema history, lineage, snapshot tree, and time travel."""

    def __init__(self, table: TableLike) -> None:
        pages: list[tuple[str, Callable[[TableLike, TableHistory], W.Widget]]] = [
            ("Schema history", SchemaHistoryView), ("Lineage", LineageView),
            ("Snapshots", SnapshotTreeView), ("Time travel", TimeTravelView)]
        children: list[W.Widget] = []
        try:
            history = table.history()  # one history for every page
        except Exception as err:
            children = [W.HTML(error_html(err)) for _ in pages]
        else:
            for _, cls in pages:
                try:
                    children.append(cls(table, history))
                except Exception as err:
                    children.append(W.HTML(error_html(err)))
        super().__init__(children=children)
        for i, (title, _) in enumerate(pages):
            self.set_title(i, title)
