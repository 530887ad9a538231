"""The ALTER stepper: SQL statements run one at a time on the warehouse's Spark session, with
what each did shown after it (the statement, the schema diff, the lineage, the evolved read,
and why each value is what it is). Back and Reset restore the warehouse exactly."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import ipywidgets as W
from schemalab.widgets.common import (
    NOTE,
    FullWidthFigure,
    ReadableWidget,
    error_html,
    preview_html,
    progress_html,
)
from schemalab.widgets.figures import diff_html, lineage_figure

from schemalab import sql
from schemalab.checkpoint import Checkpoint
from schemalab.errors import SqlError
from schemalab.render.html import explanation_html
from schemalab.table import Table
from schemalab.warehouse import Warehouse


def statement_text(text: str) -> str:
    """A statement as the stepper shows it: without the comment lines before it (a script's
    header comments belong to no statement).

        >>> statement_text("-- a script\\n-- about T\\n\\nCREATE TABLE T (a INT)")
        'CREATE TABLE T (a INT)'
    """
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).strip()


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _statement_texts(statements: str | Sequence[str]) -> list[str]:
    """The statements of a script, or of a list of statement texts (empty ones dropped);
    anything else is a SqlError, as ``Warehouse.sql`` says it."""
    if isinstance(statements, str):
        return sql.split_statements(statements)
    if isinstance(statements, Sequence) and all(isinstance(s, str) for s in statements):
        return [s for s in statements if s.strip()]
    raise SqlError(f"AlterStepper takes SQL text or a list of statement texts, not "
                   f"{type(statements).__name__}", rule="sql-syntax")


class AlterStepper(ReadableWidget, W.VBox):
    """Steps through SQL statements live on the warehouse's Spark session.

    After each step it shows the statement, the schema diff it made, the updated lineage, a
    preview of the evolved read, and the read explanation. ``back()`` restores the warehouse
    exactly as it was before the last step, through :meth:`Warehouse.checkpoint` and
    :meth:`Warehouse.restore` (no copy of the data; local and ``s3://`` warehouses alike)."""

    def __init__(self, warehouse: Warehouse, statements: str | Sequence[str]) -> None:
        self.warehouse = warehouse
        self.statements = _statement_texts(statements)
        self._statements: dict[int, sql.Statement | Exception] = {}
        #: the warehouse before each statement that ran, and after the last one
        self._checkpoints: list[Checkpoint] = []
        self._save(0)
        self.position = 0
        self.focus: str | None = None
        self.last_error: BaseException | None = None
        self.header = W.HTML()
        self.statement = W.HTML()
        self.diff = W.HTML()
        self.lineage = W.VBox(layout=W.Layout(width="100%"))
        self.preview = W.HTML()
        self.explanation = W.HTML()
        self.status = W.HTML()
        self.play_button = W.Button(description="Play", icon="play", tooltip="run every step")
        self.step_button = W.Button(description="Step", icon="step-forward",
                                    button_style="primary", tooltip="run the next statement")
        self.back_button = W.Button(description="Back", icon="step-backward",
                                    tooltip="undo the last statement")
        self.reset_button = W.Button(description="Reset", icon="undo",
                                     tooltip="back to before the first statement")
        self.play_button.on_click(lambda _: self.play())
        self.step_button.on_click(lambda _: self.step())
        self.back_button.on_click(lambda _: self.back())
        self.reset_button.on_click(lambda _: self.reset())
        super().__init__([
            self.header,
            W.HBox([self.back_button, self.step_button, self.play_button, self.reset_button]),
            self.status, self.statement, self.diff, self.lineage, self.preview,
            self.explanation], layout=W.Layout(width="100%"))
        self.add_class("sl-stepper")
        self._render()

    # ---- state ------------------------------------------------------------------------------

    def _save(self, position: int) -> None:
        del self._checkpoints[position:]
        self._checkpoints.append(self.warehouse.checkpoint())

    def _restore(self, position: int) -> None:
        # later checkpoints go first: what they alone list is then removed without a copy
        del self._checkpoints[position + 1:]
        self.warehouse.restore(self._checkpoints[position])

    # ---- actions ------------------------------------------------------------------------------

    def step(self) -> bool:
        """Run the next statement. Returns False when there is none left."""
        if self.position >= len(self.statements):
            return False
        text = self.statements[self.position]
        first = statement_text(text).split(None, 2)[:2]
        self.status.value = progress_html(f"running {' '.join(first)} …")
        self.last_error = None
        try:
            # parsed once per statement (a 1,000-row INSERT costs more to parse than to run)
            self.warehouse.execute(self._parsed(self.position))
        except Exception as err:  # shown in the widget: a refused ALTER is a lesson too
            self.last_error = err
        self.focus = self._table_of(self.position) or self.focus
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

    def _parsed(self, position: int) -> sql.Statement:
        """Statement ``position``, parsed once (a SqlError is kept and raised again)."""
        if position not in self._statements:
            try:
                self._statements[position] = sql.parse_statement(self.statements[position])
            except Exception as err:
                self._statements[position] = err
        stmt = self._statements[position]
        if isinstance(stmt, Exception):
            raise stmt
        return stmt

    def _table_of(self, position: int) -> str | None:
        try:
            stmt = self._parsed(position)
        except Exception:
            return None
        name = getattr(stmt, "name", None)
        if isinstance(stmt, sql.RenameTable):
            name = stmt.new_name
        if name is None and isinstance(stmt, sql.Query) and stmt.tables:
            name = stmt.tables[0]
        return None if name is None else name.qualified()

    def _focus_at(self, position: int) -> str | None:
        for before in reversed(range(position)):
            name = self._table_of(before)
            if name:
                return name
        return None

    @property
    def table(self) -> Table | None:
        if self.focus is None or not self.warehouse.has_table(self.focus):
            return None
        t = self.warehouse.table(self.focus)
        return t if isinstance(t, Table) else None  # the stepper steps Paimon tables

    @property
    def schema_id(self) -> int | None:
        t = self.table
        return None if t is None else t.schema.id

    def _where(self, t: Table | None) -> str:
        if t is None:
            return ""
        snap = t.snapshot_manager.latest_id()
        data = "no data yet" if snap is None else f"snapshot {snap}"
        return (f" — table <code>{html.escape(t.name)}</code>, schema {t.schema.id}, "
                f"{data}")

    def _render(self) -> None:
        n = len(self.statements)
        t = self.table
        self.header.value = (f"<b class='sl-position'>step {self.position} of {n}</b>"
                             f"<span class='sl-where'>{self._where(t)}</span>")
        self.step_button.disabled = self.play_button.disabled = self.position >= n
        self.back_button.disabled = self.position == 0
        self.status.value = "" if self.last_error is None else error_html(self.last_error)
        if self.position == 0:
            upcoming = html.escape(statement_text(self.statements[0])) if n else \
                "(no statements)"
            self.statement.value = (f"<p style='{NOTE}'>next (press <b>Step</b>):</p>"
                                    f"<pre class='sl-statement'>{upcoming}</pre>")
            self.diff.value = self.preview.value = self.explanation.value = ""
            self.lineage.children = []
            return
        ran = html.escape(statement_text(self.statements[self.position - 1]))
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
            self.lineage.children = [FullWidthFigure(lineage_figure(h))]
            self.preview.value = "<p><b>evolved read</b></p>" + preview_html(t.read())
            self.explanation.value = ("<p><b>why each value is what it is</b></p>"
                                      + explanation_html(t.explain_read()))
        except Exception as err:
            self.status.value = error_html(err)

    def static_text(self) -> str:
        n = len(self.statements)
        nxt = (statement_text(self.statements[self.position]).splitlines()[0]
               if self.position < n else "(done)")
        return f"AlterStepper: step {self.position} of {n}; next: {nxt}"

    def static_html(self) -> str:
        bold = " style='font-weight:600'"
        items = "".join(
            f"<li{bold if i == self.position else ''}><code>"
            f"{html.escape(_one_line(statement_text(s)))}</code></li>"
            for i, s in enumerate(self.statements))
        return (f"<p><b>AlterStepper</b>: step {self.position} of {len(self.statements)}. "
                "Each <b>Step</b> runs the next statement and shows the schema diff, the "
                "lineage, the evolved read and why each value is what it is.</p>"
                f"<ol style='margin:2px 0'>{items}</ol>")
