"""One format's run of an ALTER stepper's script: its warehouse, the checkpoint before each
statement, the table in focus, and what a step shows for it (the metadata files the step
wrote, the schema diff, the lineage, the evolved read and why each value is what it is).

A stepper with one format has one lane on the user's warehouse; ``formats=("paimon",
"iceberg")`` gives one lane per format, each on its own warehouse, and the stepper says where
the two formats' rules differ (:func:`difference_html`).
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
from schemalab.widgets.common import NOTE, FullWidthFigure, error_html, preview_html
from schemalab.widgets.figures import diff_html, lineage_figure

from schemalab import fileio
from schemalab.checkpoint import Checkpoint
from schemalab.format import TableLike
from schemalab.render.html import explanation_html
from schemalab.warehouse import Warehouse

#: the directories of a table whose files a step's "metadata" line lists
METADATA_DIRS = ("schema", "snapshot", "metadata", "tag", "branch")
#: Iceberg table-metadata fields a step's change is shown in (the ones an ALTER, a partition
#: change or a commit moves), in the spec's order
ICEBERG_FIELDS = ("format-version", "last-column-id", "current-schema-id", "last-partition-id",
                  "default-spec-id", "default-sort-order-id", "current-snapshot-id",
                  "last-sequence-number", "next-row-id")


@dataclass
class MetadataState:
    """A table's metadata files (relative paths) and, for Iceberg, its current metadata."""

    files: frozenset[str] = frozenset()
    iceberg: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)


def metadata_state(table: TableLike | None) -> MetadataState:
    """What :func:`metadata_change_html` compares, read from ``table``'s directory."""
    if table is None:
        return MetadataState()
    files = set()
    for d in METADATA_DIRS:
        for name in fileio.list_names(os.path.join(table.path, d)):
            files.add(f"{d}/{name}")
    # an Iceberg table's parsed metadata (the widgets import no format package)
    m = getattr(table, "metadata", None)
    if m is None or not hasattr(m, "last_column_id"):
        return MetadataState(frozenset(files))
    iceberg = {"format-version": m.format_version, "last-column-id": m.last_column_id,
               "current-schema-id": m.current_schema_id,
               "last-partition-id": m.last_partition_id, "default-spec-id": m.default_spec_id,
               "default-sort-order-id": m.default_sort_order_id,
               "current-snapshot-id": m.current_snapshot_id,
               "last-sequence-number": m.last_sequence_number, "next-row-id": m.next_row_id}
    counts = {"schemas": len(m.schemas), "partition-specs": len(m.specs),
              "sort-orders": len(m.sort_orders), "snapshots": len(m.snapshots)}
    return MetadataState(frozenset(files), iceberg, counts)


def metadata_change_html(before: MetadataState, after: MetadataState) -> str:
    """The files a step wrote under the table's metadata directories, and for an Iceberg
    table the ``metadata.json`` fields it changed (``last-column-id 3 → 4``)."""
    new = sorted(after.files - before.files)
    gone = sorted(before.files - after.files)
    if not new and not gone:
        return f"<p class='sl-meta' style='{NOTE}'>no metadata file written</p>"
    parts = []
    if new:
        shown = new if len(new) <= 6 else [*new[:5], f"… {len(new) - 5} more"]
        parts.append("wrote " + ", ".join(f"<code>{html.escape(n)}</code>" for n in shown))
    if gone:
        parts.append("removed " + ", ".join(f"<code>{html.escape(n)}</code>" for n in gone[:5]))
    if after.iceberg is not None:
        old = before.iceberg or {}
        moved = [f"<code>{k}</code> {html.escape(_value(old.get(k)))} → "
                 f"{html.escape(_value(after.iceberg.get(k)))}"
                 for k in ICEBERG_FIELDS if old.get(k) != after.iceberg.get(k)]
        moved += [f"<code>{k}</code> {before.counts.get(k, 0)} → {n}"
                  for k, n in after.counts.items() if before.counts.get(k, 0) != n]
        if moved:
            parts.append("metadata.json: " + "; ".join(moved))
    return f"<p class='sl-meta'>{'<br>'.join(parts)}</p>"


def _value(v: Any) -> str:
    return "–" if v is None else json.dumps(v) if not isinstance(v, str) else v


class Lane:
    """One format's run of the script (see the module docstring)."""

    def __init__(self, warehouse: Warehouse, label: str | None) -> None:
        self.warehouse = warehouse
        #: the format's name shown above its column (None: a stepper of one format)
        self.label = label
        self.checkpoints: list[Checkpoint] = []
        #: per checkpoint, the metadata before and after its step and the step's error
        self.shown: list[tuple[MetadataState, MetadataState, BaseException | None]] = []
        self.focus: str | None = None
        self.last_error: BaseException | None = None
        self.before = MetadataState()
        self.after = MetadataState()
        self.where = W.HTML()
        self.status = W.HTML()
        self.meta = W.HTML()
        self.diff = W.HTML()
        self.lineage = W.VBox(layout=W.Layout(width="100%"))
        self.preview = W.HTML()
        self.explanation = W.HTML()
        self.rows: list[tuple[Any, ...]] | None = None

    def box(self) -> W.VBox:
        head = [] if self.label is None else [W.HTML(
            f"<h4 class='sl-lane' style='margin:4px 0'>{html.escape(self.label)}</h4>")]
        box = W.VBox([*head, self.where, self.status, self.meta, self.diff, self.lineage,
                      self.preview, self.explanation],
                     # side by side where two fit, one above the other in a narrow cell
                     layout=W.Layout(width="100%") if self.label is None else
                     W.Layout(flex="1 1 0%", min_width="560px"))
        box.add_class("sl-lane-box")
        return box

    # ---- state ------------------------------------------------------------------------------

    def save(self, position: int) -> None:
        """Checkpoint the warehouse after step ``position``, and what the step showed."""
        del self.checkpoints[position:]
        del self.shown[position:]
        self.checkpoints.append(self.warehouse.checkpoint())
        self.shown.append((self.before, self.after, self.last_error))

    def restore(self, position: int) -> None:
        """The warehouse as after step ``position``, and what that step showed (its files,
        its error): Back shows the step before again, not the change it undid."""
        # later checkpoints go first: what they alone list is then removed without a copy
        del self.checkpoints[position + 1:]
        del self.shown[position + 1:]
        self.warehouse.restore(self.checkpoints[position])
        self.before, self.after, self.last_error = self.shown[position]

    @property
    def table(self) -> Any:
        if self.focus is None or not self.warehouse.has_table(self.focus):
            return None
        return self.warehouse.table(self.focus)

    def run(self, stmt: Any, focus: str | None) -> None:
        """Run ``stmt`` on this lane's warehouse; an error is kept (a refused ALTER is a
        lesson too)."""
        self.last_error = None
        self.before = metadata_state(self._focus_table(focus))
        try:
            self.warehouse.execute(stmt)
        except Exception as err:
            self.last_error = err
        self.focus = focus or self.focus
        self.after = metadata_state(self.table)

    def _focus_table(self, name: str | None) -> Any:
        if name is None or not self.warehouse.has_table(name):
            return None
        return self.warehouse.table(name)

    # ---- what is shown ----------------------------------------------------------------------

    def where_html(self) -> str:
        t = self.table
        if t is None:
            return ""
        snaps = t.snapshots
        data = "no data yet" if not snaps else f"snapshot {t.snapshot_id_of(snaps[-1])}"
        return (f" — table <code>{html.escape(t.name)}</code>, schema {t.schema.id}, "
                f"{data}")

    def clear(self) -> None:
        self.meta.value = self.diff.value = self.preview.value = self.explanation.value = ""
        self.where.value = ""
        self.lineage.children = []
        self.rows = None

    def render(self, ran: bool, preview_rows: bool) -> None:
        """Fill the lane's widgets after a step (``ran``) or at the start."""
        self.status.value = "" if self.last_error is None else error_html(self.last_error)
        t = self.table
        if not ran or t is None:
            self.clear()
            return
        if self.label is not None:
            self.where.value = f"<span class='sl-where' style='{NOTE}'>{self.where_html()}</span>"
        self.meta.value = metadata_change_html(self.before, self.after)
        try:
            h = t.history()
            ids = [v.id for v in h.schemas]
            self.diff.value = (diff_html(h.diff(ids[-2], ids[-1])) if len(ids) > 1
                               else f"<p>schema {ids[-1]}: created</p>")
            self.lineage.children = [FullWidthFigure(lineage_figure(h))]
            df = t.read()
            self.preview.value = "<p><b>evolved read</b></p>" + preview_html(df)
            self.rows = _small_rows(df) if preview_rows else None
            self.explanation.value = ("<p><b>why each value is what it is</b></p>"
                                      + explanation_html(t.explain_read()))
        except Exception as err:
            self.status.value = error_html(err)


def _small_rows(df: Any, limit: int = 1000) -> list[tuple[Any, ...]] | None:
    """The rows of a small read, sorted, to compare two formats' reads (None if larger)."""
    rows = df.limit(limit + 1).collect()
    if len(rows) > limit:
        return None
    return sorted((tuple(r) for r in rows), key=repr)


def wrote_schema(lane: Lane) -> bool:
    """Whether the lane's last step wrote a schema (a ``schema/`` file, or a schema more in
    the Iceberg metadata)."""
    return any(f.startswith("schema/") for f in lane.after.files - lane.before.files) or \
        lane.after.counts.get("schemas", 0) > lane.before.counts.get("schemas", 0)


def difference_html(lanes: list[Lane], layout_note: bool = False) -> str:
    """Where the formats' rules differ on the step that just ran: one refused what the other
    ran, or both ran and their reads differ; ``layout_note`` adds how each keeps its
    schemas (for the first step that wrote one in both)."""
    if len(lanes) < 2:
        return ""
    a, b = lanes[0], lanes[1]
    name_a, name_b = a.label or "", b.label or ""
    items = []
    if (a.last_error is None) != (b.last_error is None):
        refused, ran = (a, b) if a.last_error is not None else (b, a)
        msg = getattr(refused.last_error, "message", None) or str(refused.last_error)
        rule = getattr(refused.last_error, "rule", None)
        items.append(f"<b>{html.escape(refused.label or '')}</b> refuses what "
                     f"<b>{html.escape(ran.label or '')}</b> runs"
                     f"{f' (rule <code>{html.escape(rule)}</code>)' if rule else ''}: "
                     f"{html.escape(msg.splitlines()[0] if msg else '')}")
    elif a.last_error is None and a.rows is not None and b.rows is not None \
            and a.rows != b.rows:
        what = (f"{html.escape(name_a)} reads {len(a.rows)} rows, {html.escape(name_b)} "
                f"{len(b.rows)}" if len(a.rows) != len(b.rows) else
                f"the same {len(a.rows)} rows, with different values")
        items.append(f"the reads differ: {what}; compare the previews and the explanations "
                     "below")
    if layout_note and (a.after.iceberg is None) != (b.after.iceberg is None):
        items.append("Paimon writes a new <code>schema/schema-N</code> file per schema; "
                     "Iceberg writes the whole table's metadata again "
                     "(<code>metadata/vN.metadata.json</code>), every schema in it")
    if not items:
        return ""
    lis = "".join(f"<li>{i}</li>" for i in items)
    return (f"<div class='sl-difference' style='border-left:3px solid #9a6700;padding:2px 8px'>"
            f"<b>where the formats differ</b><ul style='margin:2px 0'>{lis}</ul></div>")
