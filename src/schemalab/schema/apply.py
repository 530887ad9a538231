"""Changes applied to a schema by one pure function: ``apply_changes(schema, changes)``.

Validation follows Paimon's ``SchemaManager.generateTableSchema`` and keeps its messages,
naming the table where Paimon's message does not::

    >>> from schemalab.schema import TableSchema
    >>> from schemalab.types import DataField, STRING
    >>> s0 = TableSchema(0, (DataField(0, "a", STRING()), DataField(1, "c", STRING())), 1)
    >>> s1 = apply_changes(s0, [DropColumn(("c",))], time_millis=1)
    >>> s2 = apply_changes(s1, [AddColumn(("c",), STRING())], time_millis=2)
    >>> [(f.id, f.name) for f in s2.fields], s2.highest_field_id
    ([(0, 'a'), (2, 'c')], 2)

Field ids are never reused and ``highestFieldId`` only grows. Each change kind has its own
``_apply_<kind>`` function over a draft of the new schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from schemalab.schema.changes import (
    AddColumn,
    ChangeContext,
    ColumnSpec,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnDefault,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
    create_problem,
    path_text,
)
from schemalab.schema.defaults import default_value_problem
from schemalab.schema.nested_edit import (
    apply_move,
    edit_container,
    edit_field,
    index_of,
    insert_field,
    replace_at,
    type_at,
)
from schemalab.schema.table_schema import CURRENT_VERSION, TableSchema
from schemalab.schema.validate import (
    ADD_COLUMN_BEFORE_PARTITION_OPTION,
    NULL_TO_NOT_NULL_OPTION,
    check_nullability,
    check_option_change,
    check_option_reset,
    rename_in_options,
    retype,
    unchanged_option,
    validate_schema,
)
from schemalab.types.casts import cast_mode
from schemalab.types.model import (
    DataField,
    TypeRoot,
)
from schemalab.types.visitor import assign_field_ids


@dataclass
class _Draft:
    """The schema being built: each ``_apply_<kind>`` checks one change against it and
    updates it. ``old`` is the schema the changes started from."""

    ctx: ChangeContext
    old: TableSchema
    has_snapshots: bool
    fields: tuple[DataField, ...]
    highest: int
    options: dict[str, str]
    comment: str | None
    primary_keys: list[str]
    renames: list[tuple[str, str]] = field(default_factory=list)

    @property
    def old_options(self) -> dict[str, str]:
        return self.old.effective_options()

    @property
    def partition_keys(self) -> tuple[str, ...]:
        return self.old.partition_keys

    @property
    def allow_explicit(self) -> bool:
        try:
            return cast_mode(self.old_options).allows_explicit
        except ValueError as e:
            raise self.ctx.fail(str(e), rule="cast-mode") from None

    @property
    def null_to_not_null_disabled(self) -> bool:
        return self.old_options.get(NULL_TO_NOT_NULL_OPTION, "true").lower() == "true"


def apply_changes(schema: TableSchema, changes: Iterable[SchemaChange], *,
                  table: str = "default.T", has_snapshots: bool = False,
                  time_millis: int | None = None) -> TableSchema:
    """The schema that ``changes`` turn ``schema`` into, as schema ``schema.id + 1``.

    Pure: nothing is read or written. Raises :class:`SchemaChangeError` naming the table,
    the column and the rule when Paimon would refuse a change; then no schema results.
    ``has_snapshots`` enables the rules that only apply once a table holds data.
    """
    ctx = ChangeContext(table)
    draft = _Draft(ctx, schema, has_snapshots, schema.fields, schema.highest_field_id,
                   dict(schema.effective_options()), schema.comment, list(schema.primary_keys))
    _ = draft.allow_explicit  # a table whose cast.mode is unreadable takes no change
    for change in changes:
        apply = _APPLY.get(type(change))
        if apply is None:
            raise ctx.fail(f"Unsupported change: {change!r}", rule="unsupported-change")
        ctx.check_values(change)
        apply(draft, change)
    new_schema = TableSchema(
        id=schema.id + 1,
        fields=draft.fields,
        highest_field_id=draft.highest,
        partition_keys=schema.partition_keys,
        primary_keys=tuple(draft.primary_keys),
        options=rename_in_options(draft.options, draft.renames),
        comment=draft.comment,
        time_millis=int(time.time() * 1000) if time_millis is None else time_millis,
        version=CURRENT_VERSION,
        extra=schema.extra,
        layout=schema.layout,
    )
    validate_schema(new_schema, table=table)
    return new_schema


def _apply_set_option(d: _Draft, change: SetOption) -> None:
    old_value = d.old_options.get(change.key)
    if unchanged_option(change.key, old_value, change.value, d.old):
        return
    check_option_change(d.ctx, change.key, old_value, change.value, d.has_snapshots)
    if change.key == "cast.mode":
        try:
            cast_mode({"cast.mode": change.value})
        except ValueError as e:
            raise d.ctx.fail(str(e), rule="cast-mode") from None
    d.options[change.key] = change.value


def _apply_remove_option(d: _Draft, change: RemoveOption) -> None:
    check_option_reset(d.ctx, change.key, d.has_snapshots)
    d.options.pop(change.key, None)


def _apply_update_comment(d: _Draft, change: UpdateComment) -> None:
    d.comment = change.comment


def _apply_add_column(d: _Draft, change: AddColumn) -> None:
    if change.default is not None:
        name = path_text(change.path)
        raise d.ctx.fail(f"Unsupported DEFAULT for column {name}: Paimon adds no column with a "
                         f"default; add it, then ALTER COLUMN {name} SET DEFAULT "
                         f"{change.default}", column=name, rule="unsupported-sql")
    ref_parent = change.move.reference_parent if change.move else None
    if ref_parent is not None and ref_parent != change.path[:-1]:
        name = path_text(change.path)
        raise d.ctx.fail(f"Cannot add column {name} {change.move.sql()}: Paimon places a "  # type: ignore[union-attr]
                         "column among its siblings", column=name, rule="unsupported-sql")
    if not change.data_type.nullable:
        raise d.ctx.fail(
            f"Column {path_text(change.path)} cannot specify NOT NULL in the "
            f"{d.ctx.table} table.", column=path_text(change.path),
            rule="added-column-must-be-nullable", names_table=True)
    fid = d.highest + 1
    new_type, d.highest = assign_field_ids(change.data_type, fid)
    new_field = DataField(fid, change.path[-1], new_type, change.comment)
    add_before_partition = d.old_options.get(ADD_COLUMN_BEFORE_PARTITION_OPTION,
                                             "false") == "true"

    def add(fs: tuple[DataField, ...], name: str) -> tuple[DataField, ...]:
        return insert_field(d.ctx, fs, new_field, change, d.partition_keys, add_before_partition)

    d.fields = edit_container(d.ctx, d.fields, change.path, add)


def _apply_rename_column(d: _Draft, change: RenameColumn) -> None:
    if len(change.path) == 1 and change.path[0] in d.partition_keys:
        raise d.ctx.fail(f"Cannot rename partition column: [{change.path[0]}]",
                         column=change.path[0], rule="partition-keys-immutable")

    def rename(fs: tuple[DataField, ...], name: str) -> tuple[DataField, ...]:
        idx = index_of(fs, name)
        if idx < 0:
            raise d.ctx.not_exists(path_text(change.path))
        if index_of(fs, change.new_name) >= 0:
            raise d.ctx.already_exists(path_text((*change.path[:-1], change.new_name)))
        if len(change.path) == 1 and fs[idx].type.root is TypeRoot.BLOB:
            raise d.ctx.fail(f"Cannot rename BLOB column: [{name}]", column=name,
                             rule="blob-column-rename")
        return fs[:idx] + (replace(fs[idx], name=change.new_name),) + fs[idx + 1:]

    d.fields = edit_container(d.ctx, d.fields, change.path, rename)
    if len(change.path) == 1:
        d.renames.append((change.path[0], change.new_name))
        d.primary_keys = [change.new_name if k == change.path[0] else k
                          for k in d.primary_keys]


def _apply_drop_column(d: _Draft, change: DropColumn) -> None:
    if len(change.path) == 1 and (change.path[0] in d.partition_keys
                                  or change.path[0] in d.old.primary_keys):
        raise d.ctx.fail(f"Cannot drop partition key or primary key: [{change.path[0]}]",
                         column=change.path[0], rule="keys-cannot-be-dropped")

    def drop(fs: tuple[DataField, ...], name: str) -> tuple[DataField, ...]:
        idx = index_of(fs, name)
        if idx < 0:
            raise d.ctx.not_exists(path_text(change.path))
        rest = fs[:idx] + fs[idx + 1:]
        if not rest:
            raise d.ctx.fail("Cannot drop all fields in table", column=path_text(change.path),
                             rule="table-needs-a-column")
        return rest

    d.fields = edit_container(d.ctx, d.fields, change.path, drop)


def _apply_update_column_type(d: _Draft, change: UpdateColumnType) -> None:
    top = change.path[0]
    if len(change.path) == 1 and top in d.partition_keys:
        raise d.ctx.fail(f"Cannot update partition column: [{top}]", column=top,
                         rule="partition-keys-immutable")
    if len(change.path) == 1 and top in d.primary_keys:
        raise d.ctx.fail("Cannot update primary key", column=top,
                         rule="primary-keys-immutable")
    d.fields = edit_field(d.ctx, d.fields, change.path, retype(
        d.ctx, change, d.allow_explicit, d.null_to_not_null_disabled))


def _apply_update_column_nullability(d: _Draft, change: UpdateColumnNullability) -> None:
    if change.nullable and len(change.path) == 1 and change.path[0] in d.primary_keys:
        raise d.ctx.fail("Cannot change nullability of primary key", column=change.path[0],
                         rule="primary-keys-immutable")

    def renull(f: DataField, sub: tuple[str, ...]) -> DataField:
        old_t = type_at(f.type, sub)
        check_nullability(d.ctx, old_t.nullable, change.nullable, path_text(change.path),
                           d.null_to_not_null_disabled)
        return replace(f, type=replace_at(f.type, sub, old_t.with_nullable(change.nullable)))

    d.fields = edit_field(d.ctx, d.fields, change.path, renull)


def _apply_update_column_comment(d: _Draft, change: UpdateColumnComment) -> None:
    def recomment(f: DataField, sub: tuple[str, ...]) -> DataField:
        return replace(f, description=change.comment)

    d.fields = edit_field(d.ctx, d.fields, change.path, recomment)


def _apply_update_column_default(d: _Draft, change: UpdateColumnDefault) -> None:
    def set_default(f: DataField, sub: tuple[str, ...]) -> DataField:
        if change.default is not None:
            problem = default_value_problem(f.type, change.default)
            if problem is not None:
                raise d.ctx.fail(problem, column=path_text(change.path), rule="default-value")
        return replace(f, default_value=change.default)

    d.fields = edit_field(d.ctx, d.fields, change.path, set_default)


def _apply_update_column_position(d: _Draft, change: UpdateColumnPosition) -> None:
    if change.parent or change.move.reference_parent:
        column = path_text(change.path)
        raise d.ctx.fail(f"Unsupported FIRST/AFTER for nested column {column}: Paimon moves "
                         "top-level columns only", column=column, rule="unsupported-sql")
    d.fields = apply_move(d.ctx, d.fields, change.move)


_APPLY: dict[type, Callable[[_Draft, Any], None]] = {
    SetOption: _apply_set_option,
    RemoveOption: _apply_remove_option,
    UpdateComment: _apply_update_comment,
    AddColumn: _apply_add_column,
    RenameColumn: _apply_rename_column,
    DropColumn: _apply_drop_column,
    UpdateColumnType: _apply_update_column_type,
    UpdateColumnNullability: _apply_update_column_nullability,
    UpdateColumnComment: _apply_update_column_comment,
    UpdateColumnDefault: _apply_update_column_default,
    UpdateColumnPosition: _apply_update_column_position,
}


def new_table_schema(columns: Sequence[ColumnSpec], *, partition_keys: Sequence[str] = (),
                     primary_keys: Sequence[str] = (), options: dict[str, str] | None = None,
                     comment: str | None = None, table: str = "default.T",
                     time_millis: int | None = None) -> TableSchema:
    """Schema 0 of a new table, with ids assigned as Paimon's ``Schema.Builder`` does: each
    column takes the next id, then its nested ROW fields, depth first. Primary-key columns
    become NOT NULL. ``'primary-key'`` / ``'partition'`` options are folded into the keys."""
    ctx = ChangeContext(table)
    problem = create_problem(partition_keys, primary_keys, options, comment)
    if problem is not None:
        raise ctx.fail(problem, rule="change-value")
    opts = dict(options or {})
    pk = list(primary_keys)
    pt = list(partition_keys)
    for key, target in (("primary-key", pk), ("partition", pt)):
        if key in opts:
            listed = [c.strip() for c in opts.pop(key).split(",") if c.strip()]
            if target and target != listed:
                raise ctx.fail(f"Cannot define '{key}' in both the DDL and the table options "
                               f"({target} vs {listed})", rule="keys-defined-once")
            target[:] = listed
    if not columns:
        raise ctx.fail("A table needs at least one column", rule="table-needs-a-column")
    for col in columns:
        if not isinstance(col, ColumnSpec):
            raise ctx.fail(f"A column is a ColumnSpec, not {col!r}", rule="change-value")
        ctx.check_values(col)
    if "cast.mode" in opts:
        try:
            cast_mode(opts)
        except ValueError as e:
            raise ctx.fail(str(e), rule="cast-mode") from None
    last_id = -1
    fields = []
    for col in columns:
        fid = last_id + 1
        t, last_id = assign_field_ids(col.data_type, fid)
        if col.name in pk:
            t = t.with_nullable(False)
        if col.default is not None and (
                problem := default_value_problem(t, col.default)) is not None:
            raise ctx.fail(problem, column=col.name, rule="default-value")
        fields.append(DataField(fid, col.name, t, col.comment, col.default))
    schema = TableSchema(
        id=0, fields=tuple(fields), highest_field_id=last_id, partition_keys=tuple(pt),
        primary_keys=tuple(pk), options=opts, comment=comment,
        time_millis=int(time.time() * 1000) if time_millis is None else time_millis)
    validate_schema(schema, table=table)
    return schema
