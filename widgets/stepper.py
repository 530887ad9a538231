"""The ALTER stepper: SQL statements run one at a time on the warehouse's Spark session, with
what each did shown after it (the statement, the metadata files written, the schema diff, the
lineage, the evolved read, and why each value is what it is), on one format or on Paimon and
Iceberg side by side. Back and Reset restore the warehouse exactly."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence

import ipywidgets as W
from schemalab.widgets.common import (
    NOTE,
    ReadableWidget,
    one_at_a_time,
    progress_html,
)
from schemalab.widgets.stepper_lane import Lane, difference_html, wrote_schema

from schemalab import sql
from schemalab.errors import SqlError
from schemalab.format import TableLike
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

    After each step it shows the statement, the metadata files it wrote, the schema diff it
    made, the updated lineage, a preview of the evolved read, and the read explanation.
    ``back()`` restores the warehouse exactly as it was before the last step, through
    :meth:`Warehouse.checkpoint` and :meth:`Warehouse.restore` (no copy of the data; local
    and ``s3://`` warehouses alike).

    ``formats=("paimon", "iceberg")`` runs every statement on both formats side by side, each
    in its own warehouse under this one (``<warehouse>/paimon``, ``<warehouse>/iceberg``),
    and says where the formats' rules differ (one refuses what the other runs, the reads
    differ, one schema file vs the whole metadata again)."""

    def __init__(self, warehouse: Warehouse, statements: str | Sequence[str],
                 formats: Sequence[str] | None = None) -> None:
        self.warehouse = warehouse
        self.statements = _statement_texts(statements)
        self._statements: dict[int, sql.Statement | Exception] = {}
        self.lanes = _lanes(warehouse, formats)
        #: the first step that wrote a schema in every format (where the stepper says how
        #: each format keeps its schemas)
        self._layout_step: int | None = None
        for lane in self.lanes:
            lane.save(0)
        self.position = 0
        self.header = W.HTML()
        self.statement = W.HTML()
        self.difference = W.HTML()
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
        boxes = [lane.box() for lane in self.lanes]
        body: list[W.Widget] = boxes if len(boxes) == 1 else [
            W.HBox(boxes, layout=W.Layout(width="100%", flex_flow="row wrap"))]
        super().__init__([
            self.header,
            W.HBox([self.back_button, self.step_button, self.play_button, self.reset_button]),
            self.statement, self.difference, *body], layout=W.Layout(width="100%"))
        self.add_class("sl-stepper")
        self._render()

    # ---- one format's view, as before lanes (a stepper of one format) ------------------------

    @property
    def formats(self) -> tuple[str, ...]:
        return tuple(lane.label or "" for lane in self.lanes)

    @property
    def focus(self) -> str | None:
        return self.lanes[0].focus

    @property
    def last_error(self) -> BaseException | None:
        return self.lanes[0].last_error

    @property
    def status(self) -> W.HTML:
        return self.lanes[0].status

    @property
    def diff(self) -> W.HTML:
        return self.lanes[0].diff

    @property
    def lineage(self) -> W.VBox:
        return self.lanes[0].lineage

    @property
    def preview(self) -> W.HTML:
        return self.lanes[0].preview

    @property
    def explanation(self) -> W.HTML:
        return self.lanes[0].explanation

    # ---- actions ------------------------------------------------------------------------------

    @one_at_a_time
    def step(self) -> bool:
        """Run the next statement (on every format). Returns False when there is none left."""
        if self.position >= len(self.statements):
            return False
        text = self.statements[self.position]
        first = statement_text(text).split(None, 2)[:2]
        self.lanes[0].status.value = progress_html(f"running {' '.join(first)} …")
        focus = self._table_of(self.position)
        for lane in self.lanes:
            try:
                # parsed once per statement (a 1,000-row INSERT costs more to parse than run)
                stmt = self._parsed(self.position)
            except Exception as err:  # shown in the widget: a refused ALTER is a lesson too
                lane.last_error = err
                continue
            lane.run(stmt, focus)
        self.position += 1
        for lane in self.lanes:
            lane.save(self.position)
        if self._layout_step is None and len(self.lanes) > 1 and \
                all(wrote_schema(lane) for lane in self.lanes):
            self._layout_step = self.position
        self._render()
        return True

    @one_at_a_time
    def back(self) -> bool:
        if self.position == 0:
            return False
        self.position -= 1
        for lane in self.lanes:
            lane.restore(self.position)
            lane.focus = self._focus_at(self.position)
        self._render()
        return True

    @one_at_a_time
    def reset(self) -> None:
        self.position = 0
        for lane in self.lanes:
            lane.restore(0)
            lane.focus = None
        self._render()

    @one_at_a_time
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
    def table(self) -> TableLike | None:
        """The table the last statements were about, in the first format."""
        return self.lanes[0].table

    @property
    def schema_id(self) -> int | None:
        t = self.table
        return None if t is None else t.schema.id

    def _render(self) -> None:
        n = len(self.statements)
        where = self.lanes[0].where_html() if len(self.lanes) == 1 else ""
        self.header.value = (f"<b class='sl-position'>step {self.position} of {n}</b>"
                             f"<span class='sl-where'>{where}</span>")
        self.step_button.disabled = self.play_button.disabled = self.position >= n
        self.back_button.disabled = self.position == 0
        if self.position == 0:
            upcoming = html.escape(statement_text(self.statements[0])) if n else \
                "(no statements)"
            self.statement.value = (f"<p style='{NOTE}'>next (press <b>Step</b>):</p>"
                                    f"<pre class='sl-statement'>{upcoming}</pre>")
        else:
            ran = html.escape(statement_text(self.statements[self.position - 1]))
            self.statement.value = f"<pre class='sl-statement'>{ran}</pre>"
        for lane in self.lanes:
            lane.render(self.position > 0, preview_rows=len(self.lanes) > 1)
        self.difference.value = "" if self.position == 0 else difference_html(
            self.lanes, layout_note=self.position == self._layout_step)

    def static_text(self) -> str:
        n = len(self.statements)
        nxt = (statement_text(self.statements[self.position]).splitlines()[0]
               if self.position < n else "(done)")
        on = "" if len(self.lanes) == 1 else f" on {' and '.join(self.formats)}"
        return f"AlterStepper{on}: step {self.position} of {n}; next: {nxt}"

    def static_html(self) -> str:
        bold = " style='font-weight:600'"
        items = "".join(
            f"<li{bold if i == self.position else ''}><code>"
            f"{html.escape(_one_line(statement_text(s)))}</code></li>"
            for i, s in enumerate(self.statements))
        on = "" if len(self.lanes) == 1 else f" on {html.escape(' and '.join(self.formats))}"
        return (f"<p><b>AlterStepper</b>{on}: step {self.position} of {len(self.statements)}. "
                "Each <b>Step</b> runs the next statement and shows the schema diff, the "
                "lineage, the evolved read and why each value is what it is.</p>"
                f"<ol style='margin:2px 0'>{items}</ol>")


FORMATS = ("paimon", "iceberg")


def _lanes(warehouse: Warehouse, formats: Sequence[str] | None) -> list[Lane]:
    """One lane on ``warehouse`` (no ``formats``), or one per format, each on a warehouse of
    that format under ``warehouse``."""
    if formats is None:
        return [Lane(warehouse, None)]
    chosen = [formats] if isinstance(formats, str) else list(formats)
    bad = [f for f in chosen if f not in FORMATS]
    if not chosen or bad or len(set(chosen)) != len(chosen):
        raise SqlError(f"AlterStepper formats must be distinct names of {FORMATS}, not "
                       f"{formats!r}", rule="stepper-formats")
    spark = warehouse.spark if warehouse.spark_started else None
    return [Lane(Warehouse(os.path.join(warehouse.path, f), spark=spark, format=f),
                 "Paimon" if f == "paimon" else "Iceberg") for f in chosen]
