"""The rules a schema change is checked by, as Paimon's ``SchemaManager`` and
``SchemaValidation`` check them (with their messages): options that cannot change, a whole
schema's consistency (:func:`validate_schema`), nullability and type changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from schemalab.schema.changes import (
    ChangeContext,
    UpdateColumnType,
    path_text,
)
from schemalab.schema.nested_edit import replace_at, type_at
from schemalab.schema.nested_retype import is_container, retype_inside
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import cast_kind, has_cast_executor, supports_cast
from schemalab.types.model import (
    DataField,
    DataType,
    RowType,
)
from schemalab.types.visitor import contains_row, iter_fields, strip_ids

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
COLUMN_LIST_OPTIONS = ("bucket-key", "sequence.field")


def validate_schema(schema: TableSchema, *, table: str = "default.T") -> None:
    """Paimon's ``Schema``/``SchemaValidation`` checks on a whole schema: unique names, keys
    that exist, primary keys NOT NULL, field ids unique and at most ``highestFieldId``."""
    ctx = ChangeContext(table)
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


def unchanged_option(key: str, old: str | None, new: str, schema: TableSchema) -> bool:
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


def check_option_change(ctx: ChangeContext, key: str, old: str | None, new: str,
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


def check_option_reset(ctx: ChangeContext, key: str, has_snapshots: bool) -> None:
    if key == "type" or key in KEY_OPTIONS or (has_snapshots and key in IMMUTABLE_OPTIONS):
        raise ctx.fail(f"Change '{key}' is not supported yet.", rule="immutable-option")
    if has_snapshots and key == "bucket":
        raise ctx.fail("Cannot reset bucket.", rule="bucket-mode-fixed")


def rename_in_options(options: dict[str, str], renames: list[tuple[str, str]]) -> dict[str, str]:
    if not renames:
        return options
    def rename_list(text: str, old: str, new: str) -> str:
        return ",".join(new if c.strip() == old else c.strip() for c in text.split(","))

    out: dict[str, str] = {}
    for key, value in options.items():
        for old, new in renames:
            if key in COLUMN_LIST_OPTIONS:
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


def check_nullability(ctx: ChangeContext, old_nullable: bool, new_nullable: bool, column: str,
                       disabled: bool) -> None:
    if disabled and old_nullable and not new_nullable:
        raise ctx.fail(
            f"Cannot update column type from nullable to non nullable for {column}. "
            "You can set table configuration option 'alter-column-null-to-not-null.disabled' "
            "= 'false' to allow converting null columns to not null",
            column=column, rule="nullable-to-not-null")


def retype(ctx: ChangeContext, change: UpdateColumnType, allow_explicit: bool,
            null_to_not_null_disabled: bool) -> Callable[[DataField, tuple[str, ...]], DataField]:
    def apply(f: DataField, sub: tuple[str, ...]) -> DataField:
        column = path_text(change.path)
        source = type_at(f.type, sub)
        target = change.new_type
        if change.keep_nullability:
            target = target.with_nullable(source.nullable)
        else:
            check_nullability(ctx, source.nullable, target.nullable, column,
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
                nullability=lambda s, t, path: check_nullability(
                    ctx, s.nullable, t.nullable, path, null_to_not_null_disabled),
                fail=lambda message, path: ctx.fail(message, column=path, rule="type-change"))
        else:
            judged(f, source, target, column)
        return replace(f, type=replace_at(f.type, sub, target))

    def judged(f: DataField, source: DataType, target: DataType, column: str) -> DataType:
        """``target``, if SchemaManager takes the change from ``source`` (at ``column``)."""
        if column != path_text(change.path):  # a value inside: its nullability too
            check_nullability(ctx, source.nullable, target.nullable, column,
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
