"""Reads of Paimon row-tracking and data-evolution tables: the plan that merges the files of
one row-id range column by column (:mod:`schemalab.engine.row_merge`) and adds the system
columns ``_ROW_ID`` / ``_SEQUENCE_NUMBER``; and how each merged column was supplied, in
words, for ``explain_read`` and ``why``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from schemalab.engine.plan import DataFile, ReadPlan, plan_read
from schemalab.engine.row_merge import (
    SYSTEM_COLUMNS,
    RowIdGroup,
    RowMerge,
    file_columns,
    plan_row_merge,
)
from schemalab.errors import SchemaLabError
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import cast_mode


def plan_row_tracking_read(table: str, target: TableSchema, snapshot: Snapshot | None,
                           files: Sequence[DataFile], schema_at: Callable[[int], TableSchema],
                           system: Sequence[str] = ()) -> ReadPlan:
    """The read plan of a row-tracking table's ``files`` in ``target``: a data-evolution
    table's files of one row-id range merged by row id (Java Paimon 2.0's rule, see
    :mod:`schemalab.engine.row_merge`), and the ``system`` columns after the table's."""
    from schemalab.paimon.features import data_evolution_enabled, row_tracking_enabled

    bad = [c for c in system if c not in SYSTEM_COLUMNS]
    if bad:
        raise SchemaLabError(f"Table {table}: {bad[0]} is not a system column; the read can "
                             f"add {', '.join(SYSTEM_COLUMNS)}", table=table, column=bad[0],
                             rule="column-must-exist")
    if system and (not row_tracking_enabled(target) or target.primary_keys):
        raise SchemaLabError(
            f"Table {table}: {system[0]} is a column of row-tracking tables only; this table "
            "does not set 'row-tracking.enabled' = 'true'.", table=table, column=system[0],
            rule="row-tracking-columns")
    try:
        mode = cast_mode(target.effective_options())
    except ValueError as e:
        raise SchemaLabError(f"Table {table}: {e}", table=table, rule="cast-mode") from None

    def schema_of(f: DataFile) -> TableSchema:
        return schema_at(f.schema_id)

    merge, source_of = RowMerge(), schema_of
    if data_evolution_enabled(target) or any(f.write_cols is not None for f in files):
        merge, source_of = plan_row_merge(table, target, files, schema_of)
    plan = plan_read(table, target, files, source_of, mode,
                     snapshot_id=None if snapshot is None else snapshot.id)
    return dataclasses.replace(
        plan, schemas={sid: schema_at(sid) for sid in plan.schemas},
        row_merge=dataclasses.replace(merge, system=tuple(system)))


def _file(f: DataFile) -> str:
    return f.path.rsplit("/", 1)[-1]


def _what(f: DataFile, schema: TableSchema) -> str:
    """A file of a row-id group, in words: which columns it holds, when it was written."""
    cols = ", ".join(f"`{sf.name}`" for sf in file_columns(f, schema).fields)
    kind = f"the update file of {cols}" if f.write_cols is not None else "the file of the rows"
    return f"{kind} {_file(f)} (sequence number {f.max_sequence_number})"


def supplier_lines(plan: ReadPlan, group: RowIdGroup) -> list[str]:
    """For one merged row-id range, which file supplies each column of the read, and why
    that one: the newest file (max sequence number) that holds the column wins."""
    out = [f"rows {group.first_row_id}..{group.last_row_id} merged by row id from "
           f"{len(group.files)} files, newest first:"]
    for t in plan.target.fields:
        f = group.supplier(t.id)
        if f is None:
            out.append(f"  `{t.name}` is NULL: no file of these rows holds field id {t.id}")
            continue
        schema = plan.schemas.get(f.schema_id) or plan.target
        older = [o for o in group.files if o is not f
                 and any(sf.id == t.id for sf in file_columns(o, plan.schemas.get(
                     o.schema_id) or plan.target).fields)]
        source = next(sf for sf in schema.fields if sf.id == t.id)
        named = "" if source.name == t.name else f" (written as `{source.name}`)"
        line = f"  `{t.name}` from {_what(f, schema)}{named}"
        if older:
            line += ", newer than " + ", ".join(
                f"{_file(o)} (sequence number {o.max_sequence_number})" for o in older)
        out.append(line)
    return out


def merge_lines(plan: ReadPlan) -> list[str]:
    """Every merged row-id range of the plan, column by column (empty: nothing merged)."""
    if plan.row_merge is None:
        return []
    out = []
    for g in plan.row_merge.groups:
        out.extend(supplier_lines(plan, g))
    return out
