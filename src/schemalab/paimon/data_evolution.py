"""Reads of Paimon row-tracking and data-evolution tables: the plan that merges the files of
one row-id range column by column (:mod:`schemalab.engine.row_merge`) and adds the system
columns ``_ROW_ID`` / ``_SEQUENCE_NUMBER``; and how each merged column was supplied, in
words, for ``explain_read`` and ``why``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from schemalab.engine.plan import DataFile, ReadPlan, RowMerge, plan_read
from schemalab.engine.row_merge import SYSTEM_COLUMNS, plan_row_merge
from schemalab.engine.spark_reader import quote
from schemalab.errors import SchemaLabError
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import cast_mode

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

#: a Paimon Table (schemalab.table.Table)
Table = Any


def plan_row_tracking_read(table: str, target: TableSchema, snapshot: Snapshot | None,
                           files: Sequence[DataFile], schema_at: Callable[[int], TableSchema]
                           ) -> ReadPlan:
    """The read plan of a data-evolution table's ``files`` in ``target``: the files of one
    row-id range merged by row id (Java Paimon 2.0's rule, see
    :mod:`schemalab.engine.row_merge`)."""
    try:
        mode = cast_mode(target.effective_options())
    except ValueError as e:
        raise SchemaLabError(f"Table {table}: {e}", table=table, rule="cast-mode") from None

    def schema_of(f: DataFile) -> TableSchema:
        return schema_at(f.schema_id)

    merge, source_of = plan_row_merge(table, target, files, schema_of)
    plan = plan_read(table, target, files, source_of, mode,
                     snapshot_id=None if snapshot is None else snapshot.id)
    return dataclasses.replace(plan, schemas={sid: schema_at(sid) for sid in plan.schemas},
                               row_merge=merge)


def with_system_columns(plan: ReadPlan, columns: Sequence[str]) -> ReadPlan:
    """``plan`` adding the row-tracking ``columns`` (``_ROW_ID``, ``_SEQUENCE_NUMBER``) after
    the table's, as Paimon exposes them; refused for a table without row tracking."""
    from schemalab.paimon.features import row_tracking_enabled

    table = plan.table
    bad = [c for c in columns if c not in SYSTEM_COLUMNS]
    if bad:
        raise SchemaLabError(f"Table {table}: {bad[0]} is not a system column; the read can "
                             f"add {', '.join(SYSTEM_COLUMNS)}", table=table, column=bad[0],
                             rule="column-must-exist")
    if not columns:
        return plan
    if not row_tracking_enabled(plan.target) or plan.target.primary_keys:
        raise SchemaLabError(
            f"Table {table}: {columns[0]} is a column of row-tracking tables only; this table "
            "does not set 'row-tracking.enabled' = 'true'.", table=table, column=columns[0],
            rule="row-tracking-columns")
    merge = plan.row_merge or RowMerge()
    return dataclasses.replace(plan, row_merge=dataclasses.replace(merge, system=tuple(columns)))


#: system tables read from the table's data (the others are metadata: system_tables.py)
DATA_SYSTEM_TABLES = ("audit_log", "row_tracking")


def data_system_table(t: Table, name: str) -> DataFrame:
    """Paimon's ``$row_tracking`` (the table's columns, then ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER``: Java's ``RowTrackingTable``) and ``$audit_log`` (``rowkind``, then
    the table's columns: Java's ``AuditLogTable``; an append table's rows are all ``+I``, a
    primary-key table's as :mod:`schemalab.paimon.audit_log` reads them)."""
    from pyspark.sql import functions as F

    from schemalab.paimon.features import row_tracking_enabled

    if name == "row_tracking":
        if not row_tracking_enabled(t.schema):
            raise SchemaLabError(
                f"Table {t.name} has no system table $row_tracking: it does not set "
                "'row-tracking.enabled' = 'true'.", table=t.name, rule="row-tracking-columns")
        return t.read(system_columns=list(SYSTEM_COLUMNS))
    if t.schema.primary_keys:
        from schemalab.paimon.audit_log import keyed_audit_log

        return keyed_audit_log(t)
    df = t.read()
    return df.select(F.lit("+I").alias("rowkind"), *[F.col(quote(c)) for c in df.columns])
