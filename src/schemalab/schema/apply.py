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

from schemalab.errors import SchemaChangeError
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
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
    change_problem,
    create_problem,
    path_text,
)
from schemalab.schema.defaults import default_value_problem
from schemalab.schema.nested_retype import is_container, retype_inside
from schemalab.schema.table_schema import CURRENT_VERSION, TableSchema
from schemalab.types.casts import cast_kind, cast_mode, has_cast_executor, supports_cast
from schemalab.types.model import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)
from schemalab.types.visitor import assign_field_ids, contains_row, iter_fields, strip_ids

# Paimon's CoreOptions marked @Immutable: they cannot change once a table has data.
IMMUTABLE_OPTIONS = frozenset({
    "type", "bucket-key", "bucket-function.type", "data-file.path-directory", "merge-engine",
    "sequence.snapshot-ordering", "aggregation.remove-record-on-delete",
    "partial-update.remove-record-on-delete", "partial-update.remove-record-on-sequence-group",
    "rowkind.field", "primary-key", "primary-key.nullable", "partition",
    "dynamic-bucket.initial-buckets", "force-lookup", "row-tracking.enabled",
    "data-evolution.enabled", "index-file-in-data-file-dir", "blob-field",
    "blob-descriptor-field", "blob-view-field", "pk-clustering-override",
})
# Keys are part of the schema itself here; changing them through options would bypass
# the key rules, so they are refused even on an empty table.
KEY_OPTIONS = frozenset({"primary-key", "partition"})
NULL_TO_NOT_NULL_OPTION = "alter-column-null-to-not-null.disabled"
ADD_COLUMN_BEFORE_PARTITION_OPTION = "add-column-before-partition"
# Options whose values name columns; a rename rewrites them (Paimon's applyRenameColumnsToOptions).
_COLUMN_LIST_OPTIONS = ("bucket-key", "sequence.field")


class _Ctx:
    def __init__(self, table: str) -> None:
        self.table = table

    def fail(self, message: str, *, column: str | None = None, rule: str,
             names_table: bool = False) -> SchemaChangeError:
        text = message if names_table else f"{message} (table {self.table})"
        return SchemaChangeError(text, table=self.table, column=column, rule=rule)

    def check_values(self, change: object) -> None:
        """Refuse a change (or column) built in Python whose fields hold the wrong types."""
        problem = change_problem(change)
        if problem is not None:
            raise self.fail(problem[0], column=problem[1], rule="change-value")

    def not_exists(self, column: str) -> SchemaChangeError:
        return self.fail(f"Column {column} does not exist in the {self.table} table.",
                         column=column, rule="column-must-exist", names_table=True)

    def already_exists(self, column: str) -> SchemaChangeError:
        return self.fail(f"Column {column} already exists in the {self.table} table.",
                         column=column, rule="column-must-be-new", names_table=True)


@dataclass
class _Draft:
    """The schema being built: each ``_apply_<kind>`` checks one change against it and
    updates it. ``old`` is the schema the changes started from."""

    ctx: _Ctx
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
    ctx = _Ctx(table)
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
        options=_rename_in_options(draft.options, draft.renames),
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
    if _unchanged_option(change.key, old_value, change.value, d.old):
        return
    _check_option_change(d.ctx, change.key, old_value, change.value, d.has_snapshots)
    if change.key == "cast.mode":
        try:
            cast_mode({"cast.mode": change.value})
        except ValueError as e:
            raise d.ctx.fail(str(e), rule="cast-mode") from None
    d.options[change.key] = change.value


def _apply_remove_option(d: _Draft, change: RemoveOption) -> None:
    _check_option_reset(d.ctx, change.key, d.has_snapshots)
    d.options.pop(change.key, None)


def _apply_update_comment(d: _Draft, change: UpdateComment) -> None:
    d.comment = change.comment


def _apply_add_column(d: _Draft, change: AddColumn) -> None:
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
        return _insert(d.ctx, fs, new_field, change, d.partition_keys, add_before_partition)

    d.fields = _edit_container(d.ctx, d.fields, change.path, add)


def _apply_rename_column(d: _Draft, change: RenameColumn) -> None:
    if len(change.path) == 1 and change.path[0] in d.partition_keys:
        raise d.ctx.fail(f"Cannot rename partition column: [{change.path[0]}]",
                         column=change.path[0], rule="partition-keys-immutable")

    def rename(fs: tuple[DataField, ...], name: str) -> tuple[DataField, ...]:
        idx = _index(fs, name)
        if idx < 0:
            raise d.ctx.not_exists(path_text(change.path))
        if _index(fs, change.new_name) >= 0:
            raise d.ctx.already_exists(path_text((*change.path[:-1], change.new_name)))
        return fs[:idx] + (replace(fs[idx], name=change.new_name),) + fs[idx + 1:]

    d.fields = _edit_container(d.ctx, d.fields, change.path, rename)
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
        idx = _index(fs, name)
        if idx < 0:
            raise d.ctx.not_exists(path_text(change.path))
        rest = fs[:idx] + fs[idx + 1:]
        if not rest:
            raise d.ctx.fail("Cannot drop all fields in table", column=path_text(change.path),
                             rule="table-needs-a-column")
        return rest

    d.fields = _edit_container(d.ctx, d.fields, change.path, drop)


def _apply_update_column_type(d: _Draft, change: UpdateColumnType) -> None:
    top = change.path[0]
    if len(change.path) == 1 and top in d.partition_keys:
        raise d.ctx.fail(f"Cannot update partition column: [{top}]", column=top,
                         rule="partition-keys-immutable")
    if len(change.path) == 1 and top in d.primary_keys:
        raise d.ctx.fail("Cannot update primary key", column=top,
                         rule="primary-keys-immutable")
    d.fields = _edit_field(d.ctx, d.fields, change.path, _retype(
        d.ctx, change, d.allow_explicit, d.null_to_not_null_disabled))


def _apply_update_column_nullability(d: _Draft, change: UpdateColumnNullability) -> None:
    if change.nullable and len(change.path) == 1 and change.path[0] in d.primary_keys:
        raise d.ctx.fail("Cannot change nullability of primary key", column=change.path[0],
                         rule="primary-keys-immutable")

    def renull(f: DataField, sub: tuple[str, ...]) -> DataField:
        old_t = _type_at(f.type, sub)
        _check_nullability(d.ctx, old_t.nullable, change.nullable, path_text(change.path),
                           d.null_to_not_null_disabled)
        return replace(f, type=_replace_at(f.type, sub, old_t.with_nullable(change.nullable)))

    d.fields = _edit_field(d.ctx, d.fields, change.path, renull)


def _apply_update_column_comment(d: _Draft, change: UpdateColumnComment) -> None:
    def recomment(f: DataField, sub: tuple[str, ...]) -> DataField:
        return replace(f, description=change.comment)

    d.fields = _edit_field(d.ctx, d.fields, change.path, recomment)


def _apply_update_column_default(d: _Draft, change: UpdateColumnDefault) -> None:
    def set_default(f: DataField, sub: tuple[str, ...]) -> DataField:
        if change.default is not None:
            problem = default_value_problem(f.type, change.default)
            if problem is not None:
                raise d.ctx.fail(problem, column=path_text(change.path), rule="default-value")
        return replace(f, default_value=change.default)

    d.fields = _edit_field(d.ctx, d.fields, change.path, set_default)


def _apply_update_column_position(d: _Draft, change: UpdateColumnPosition) -> None:
    d.fields = _apply_move(d.ctx, d.fields, change.move)


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


def validate_schema(schema: TableSchema, *, table: str = "default.T") -> None:
    """Paimon's ``Schema``/``SchemaValidation`` checks on a whole schema: unique names, keys
    that exist, primary keys NOT NULL, field ids unique and at most ``highestFieldId``."""
    ctx = _Ctx(table)
    names = schema.field_names
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ctx.fail(f"Table column {names} must not contain duplicate fields. Found: {dups}",
                       column=dups[0], rule="unique-column-names")
    for keys, what in ((schema.partition_keys, "partition fields"),
                       (schema.primary_keys, "primary key constraint")):
        if len(set(keys)) != len(keys):
            raise ctx.fail(f"Key constraint {list(keys)} must not contain duplicate columns.",
                           rule="unique-key-columns")
        missing = [k for k in keys if k not in names]
        if missing:
            raise ctx.fail(f"Table column {names} should include all {what} {list(keys)}",
                           column=missing[0], rule="keys-must-exist")
    for k in schema.primary_keys:
        f = schema.field(k)
        if f is not None and f.type.nullable:
            raise ctx.fail(f"Primary key column {k} must be NOT NULL", column=k,
                           rule="primary-keys-not-null")
    ids = [f.id for _, f in iter_fields(schema.fields)]
    dup_ids = sorted({i for i in ids if ids.count(i) > 1})
    if dup_ids:
        raise ctx.fail(f"Field ids must be unique; repeated: {dup_ids}", rule="unique-field-ids")
    if ids and max(ids) > schema.highest_field_id:
        raise ctx.fail(f"Field id {max(ids)} is above highestFieldId "
                       f"{schema.highest_field_id}", rule="highest-field-id")
    for path, f in iter_fields(schema.fields):
        if isinstance(f.type, RowType):
            inner = [g.name for g in f.type.fields]
            nd = sorted({n for n in inner if inner.count(n) > 1})
            if nd:
                raise ctx.fail(f"Nested row {path_text(path)} has duplicate fields: {nd}",
                               column=path_text(path), rule="unique-column-names")


# ---- option rules -----------------------------------------------------------------------


def _unchanged_option(key: str, old: str | None, new: str, schema: TableSchema) -> bool:
    """Paimon's ``isUnchangedNormalizedKey``: setting an option to what it already means is
    no change at all (``type`` = ``table`` when unset, ``primary-key`` naming today's keys)."""
    if old == new:
        return True
    if old is not None:
        return False
    if key == "type":
        return new.strip().lower() == "table"
    listed = [c.strip() for c in new.split(",") if c.strip()]
    if key == "primary-key":
        return listed == list(schema.primary_keys)
    if key == "partition":
        return listed == list(schema.partition_keys)
    return False


def _check_option_change(ctx: _Ctx, key: str, old: str | None, new: str,
                         has_snapshots: bool) -> None:
    if key == "type" or key in KEY_OPTIONS or (has_snapshots and key in IMMUTABLE_OPTIONS):
        raise ctx.fail(f"Change '{key}' is not supported yet.", rule="immutable-option",
                       column=None)
    if key == "bucket":
        try:
            new_bucket = int(new)
            old_bucket = -1 if old is None else int(old)
        except ValueError:
            raise ctx.fail(f"Option 'bucket' must be an integer, not '{new}'",
                           rule="bucket-is-integer") from None
        if has_snapshots and old_bucket == -1:
            raise ctx.fail("Cannot change bucket when it is -1.", rule="bucket-mode-fixed")
        if has_snapshots and new_bucket == -1:
            raise ctx.fail("Cannot change bucket to -1.", rule="bucket-mode-fixed")
        if new_bucket == 0 or new_bucket < -2:
            raise ctx.fail(f"The number of buckets must be positive or -1, not {new_bucket}",
                           rule="bucket-is-integer")


def _check_option_reset(ctx: _Ctx, key: str, has_snapshots: bool) -> None:
    if key == "type" or key in KEY_OPTIONS or (has_snapshots and key in IMMUTABLE_OPTIONS):
        raise ctx.fail(f"Change '{key}' is not supported yet.", rule="immutable-option")
    if has_snapshots and key == "bucket":
        raise ctx.fail("Cannot reset bucket.", rule="bucket-mode-fixed")


def _rename_in_options(options: dict[str, str], renames: list[tuple[str, str]]) -> dict[str, str]:
    if not renames:
        return options
    def rename_list(text: str, old: str, new: str) -> str:
        return ",".join(new if c.strip() == old else c.strip() for c in text.split(","))

    out: dict[str, str] = {}
    for key, value in options.items():
        for old, new in renames:
            if key in _COLUMN_LIST_OPTIONS:
                value = rename_list(value, old, new)
            elif key.startswith("fields.") and key.endswith(".sequence-group"):
                # fields.<a,b>.sequence-group = <c,d>: both sides name columns
                middle = key[len("fields."):-len(".sequence-group")]
                key = f"fields.{rename_list(middle, old, new)}.sequence-group"
                value = rename_list(value, old, new)
            elif key.startswith(f"fields.{old}."):
                key = f"fields.{new}." + key[len(f"fields.{old}."):]
        out[key] = value
    return out


# ---- column rules -----------------------------------------------------------------------


def _check_nullability(ctx: _Ctx, old_nullable: bool, new_nullable: bool, column: str,
                       disabled: bool) -> None:
    if disabled and old_nullable and not new_nullable:
        raise ctx.fail(
            f"Cannot update column type from nullable to non nullable for {column}. "
            "You can set table configuration option 'alter-column-null-to-not-null.disabled' "
            "= 'false' to allow converting null columns to not null",
            column=column, rule="nullable-to-not-null")


def _retype(ctx: _Ctx, change: UpdateColumnType, allow_explicit: bool,
            null_to_not_null_disabled: bool) -> Callable[[DataField, tuple[str, ...]], DataField]:
    def apply(f: DataField, sub: tuple[str, ...]) -> DataField:
        column = path_text(change.path)
        source = _type_at(f.type, sub)
        target = change.new_type
        if change.keep_nullability:
            target = target.with_nullable(source.nullable)
        else:
            _check_nullability(ctx, source.nullable, target.nullable, column,
                               null_to_not_null_disabled)
        if contains_row(target) or contains_row(source):
            if target.with_nullable(True) != strip_ids(source).with_nullable(True):
                raise ctx.fail(
                    f"Column type {f.name}[{source.sql()}] cannot be converted to "
                    f"{target.sql()} without losing information. Change the fields of a "
                    f"ROW one by one (e.g. ALTER COLUMN {column}.x TYPE ...)",
                    column=column, rule="type-change")
            target = _replace_nullability_only(source, target)
        elif is_container(source) and not has_cast_executor(source, target):
            # no cast of the whole ARRAY/MAP: changed value by value, as Paimon's catalog
            # ALTER splits it (schemalab.schema.nested_retype)
            target = retype_inside(
                source, target, column, leaf=lambda s, t, path: judged(f, s, t, path),
                nullability=lambda s, t, path: _check_nullability(
                    ctx, s.nullable, t.nullable, path, null_to_not_null_disabled),
                fail=lambda message, path: ctx.fail(message, column=path, rule="type-change"))
        else:
            judged(f, source, target, column)
        return replace(f, type=_replace_at(f.type, sub, target))

    def judged(f: DataField, source: DataType, target: DataType, column: str) -> DataType:
        """``target``, if SchemaManager takes the change from ``source`` (at ``column``)."""
        if column != path_text(change.path):  # a value inside: its nullability too
            _check_nullability(ctx, source.nullable, target.nullable, column,
                               null_to_not_null_disabled)
        if supports_cast(source, target, allow_explicit) and has_cast_executor(source, target):
            return target
        why = ""
        kind = cast_kind(source, target)
        if kind is not None and not has_cast_executor(source, target):
            why = " (Paimon's CastExecutors has no cast from it to that type)"
        elif kind == "explicit" and not allow_explicit:
            why = " (explicit casts are disabled for this table: cast.mode = implicit)"
        raise ctx.fail(
            f"Column type {f.name}[{source.sql()}] cannot be converted to {target.sql()} "
            f"without losing information.{why}", column=column, rule="type-change")

    return apply


def _replace_nullability_only(source: DataType, target: DataType) -> DataType:
    return source.with_nullable(target.nullable)


# ---- navigating nested columns ------------------------------------------------------------


def _index(fields: tuple[DataField, ...], name: str) -> int:
    for i, f in enumerate(fields):
        if f.name == name:
            return i
    return -1


def _edit_container(ctx: _Ctx, fields: tuple[DataField, ...], path: tuple[str, ...],
                    edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]
                    ) -> tuple[DataField, ...]:
    """Apply ``edit`` to the field list that holds ``path[-1]`` (top level, or the fields of a
    ROW reached through ``path[:-1]``, passing ARRAY ``element`` / MAP ``value`` steps)."""
    return _edit_rows(ctx, fields, path, 0, edit)


def _edit_rows(ctx: _Ctx, fields: tuple[DataField, ...], path: tuple[str, ...], depth: int,
               edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]
               ) -> tuple[DataField, ...]:
    if depth == len(path) - 1:
        return edit(fields, path[depth])
    idx = _index(fields, path[depth])
    if idx < 0:
        raise ctx.not_exists(path_text(path[:depth + 1]))
    f = fields[idx]
    new_type = _edit_inside(ctx, f.type, path, depth + 1, edit)
    return fields[:idx] + (replace(f, type=new_type),) + fields[idx + 1:]


def _edit_inside(ctx: _Ctx, t: DataType, path: tuple[str, ...], depth: int,
                 edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]) -> DataType:
    if isinstance(t, RowType):
        return RowType(_edit_rows(ctx, t.fields, path, depth, edit), t.nullable)
    if depth < len(path) - 1:
        step = path[depth]
        if isinstance(t, ArrayType) and step == "element":
            return ArrayType(_edit_inside(ctx, t.element, path, depth + 1, edit), t.nullable)
        if isinstance(t, MultisetType) and step == "element":
            return MultisetType(_edit_inside(ctx, t.element, path, depth + 1, edit), t.nullable)
        if isinstance(t, MapType) and step == "value":
            return MapType(t.key, _edit_inside(ctx, t.value, path, depth + 1, edit), t.nullable)
    raise ctx.not_exists(path_text(path))


def _edit_field(ctx: _Ctx, fields: tuple[DataField, ...], path: tuple[str, ...],
                edit: Callable[[DataField, tuple[str, ...]], DataField]) -> tuple[DataField, ...]:
    """Apply ``edit(field, sub)`` to the field named by ``path``. A path may end in
    ``element``/``value`` steps into an ARRAY or MAP (``sub``), as Paimon's nested updates do
    for ``ARRAY<INT> → ARRAY<BIGINT>``."""
    for split in range(len(path), 0, -1):
        head, sub = path[:split], path[split:]
        if sub and not all(s in ("element", "value") for s in sub):
            continue
        try:
            def one(fs: tuple[DataField, ...], name: str,
                    s: tuple[str, ...] = sub) -> tuple[DataField, ...]:
                return _edit_one(ctx, fs, name, path, s, edit)

            return _edit_container(ctx, fields, head, one)
        except _NoSuchStep:
            continue
        except SchemaChangeError as e:
            # ("tags", "element") is not a ROW path; try it as a step into the ARRAY.
            if e.rule != "column-must-exist" or split == 1:
                raise
    raise ctx.not_exists(path_text(path))


class _NoSuchStep(Exception):
    pass


def _edit_one(ctx: _Ctx, fs: tuple[DataField, ...], name: str, path: tuple[str, ...],
              sub: tuple[str, ...], edit: Callable[[DataField, tuple[str, ...]], DataField]
              ) -> tuple[DataField, ...]:
    idx = _index(fs, name)
    if idx < 0:
        if sub:
            raise _NoSuchStep()
        raise ctx.not_exists(path_text(path))
    if sub and not _has_sub(fs[idx].type, sub):
        raise _NoSuchStep()
    return fs[:idx] + (edit(fs[idx], sub),) + fs[idx + 1:]


def _has_sub(t: DataType, sub: tuple[str, ...]) -> bool:
    for step in sub:
        if isinstance(t, ArrayType | MultisetType) and step == "element":
            t = t.element
        elif isinstance(t, MapType) and step == "value":
            t = t.value
        else:
            return False
    return True


def _type_at(t: DataType, sub: tuple[str, ...]) -> DataType:
    for step in sub:
        t = t.element if step == "element" else t.value  # type: ignore[union-attr]
    return t


def _replace_at(t: DataType, sub: tuple[str, ...], new: DataType) -> DataType:
    if not sub:
        return new
    if isinstance(t, ArrayType):
        return ArrayType(_replace_at(t.element, sub[1:], new), t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(_replace_at(t.element, sub[1:], new), t.nullable)
    assert isinstance(t, MapType)
    return MapType(t.key, _replace_at(t.value, sub[1:], new), t.nullable)


def _insert(ctx: _Ctx, fs: tuple[DataField, ...], new: DataField, change: AddColumn,
            partition_keys: tuple[str, ...], add_before_partition: bool) -> tuple[DataField, ...]:
    if _index(fs, new.name) >= 0:
        raise ctx.already_exists(path_text(change.path))
    move = change.move
    items = list(fs)
    if move is None or move.kind == "LAST":
        if move is None and add_before_partition and partition_keys and len(change.path) == 1:
            at = next((i for i, f in enumerate(items) if f.name in partition_keys), len(items))
            items.insert(at, new)
        else:
            items.append(new)
    elif move.kind == "FIRST":
        items.insert(0, new)
    else:
        ref = _index(fs, move.reference or "")
        if ref < 0:
            # Java names the reference bare; the error's column still has the full path.
            err = ctx.not_exists(move.reference or "")
            err.column = path_text((*change.path[:-1], move.reference or ""))
            raise err
        items.insert(ref + 1 if move.kind == "AFTER" else ref, new)
    return tuple(items)


def _apply_move(ctx: _Ctx, fields: tuple[DataField, ...], move: Move) -> tuple[DataField, ...]:
    items = list(fields)
    at = _index(fields, move.field_name)
    if at < 0:
        raise ctx.fail(f"Field name not found: {move.field_name}", column=move.field_name,
                       rule="column-must-exist")
    if move.kind in ("FIRST", "LAST"):
        target = 0 if move.kind == "FIRST" else len(items) - 1
        if target == at:
            raise ctx.fail(f"Cannot move itself for column {move.field_name}",
                           column=move.field_name, rule="move-needs-another-column")
    else:
        ref = _index(fields, move.reference or "")
        if ref < 0:
            raise ctx.fail(f"Reference field name not found: {move.reference}",
                           column=move.reference, rule="column-must-exist")
        if ref == at:
            raise ctx.fail(f"Cannot move itself for column {move.field_name}",
                           column=move.field_name, rule="move-needs-another-column")
        target = ref
        if move.kind == "AFTER" and at > ref:
            target += 1
        if move.kind == "BEFORE" and at < ref:
            target -= 1
        target = min(target, len(items) - 1)
    f = items.pop(at)
    items.insert(target, f)
    return tuple(items)


# --------------------------------------------------------------------------------------------
def new_table_schema(columns: Sequence[ColumnSpec], *, partition_keys: Sequence[str] = (),
                     primary_keys: Sequence[str] = (), options: dict[str, str] | None = None,
                     comment: str | None = None, table: str = "default.T",
                     time_millis: int | None = None) -> TableSchema:
    """Schema 0 of a new table, with ids assigned as Paimon's ``Schema.Builder`` does: each
    column takes the next id, then its nested ROW fields, depth first. Primary-key columns
    become NOT NULL. ``'primary-key'`` / ``'partition'`` options are folded into the keys."""
    ctx = _Ctx(table)
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
