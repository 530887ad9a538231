"""Partition evolution (``ADD`` / ``DROP`` / ``REPLACE PARTITION FIELD``) and identifier
fields (``SET`` / ``DROP IDENTIFIER FIELDS``) with Java's rules (``BaseUpdatePartitionSpec``,
``Schema.validateIdentifierField``): a new spec becomes the default (an equal earlier spec is
reused), new fields get ids above ``last-partition-id`` (in v2+ a field with the same source
and transform as one of an earlier spec gets that field's id back), a v1 table keeps a
dropped field as a ``void`` one. Evolution names fields as Java's ``PartitionNameGenerator``:
``id_bucket_16``, ``name_trunc_4``, ``ts_day`` (CREATE TABLE's builder says ``id_bucket``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemalab.errors import SchemaChangeError, SchemaLabError
from schemalab.iceberg.metadata import IcebergSchema, PartitionField, parse_table_metadata
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergStructType, iceberg_type_text
from schemalab.iceberg.write.partitioning import check_transform
from schemalab.iceberg.write.sort_order import java_field_text, java_type_text
from schemalab.iceberg.write.tablemeta import set_current_schema, set_default_spec

_RULE = "iceberg-partition-transform"


def evolved_name(transform: str, column: str) -> str:
    base = transform.split("[")[0]
    arg = transform[len(base) + 1:-1] if "[" in transform else ""
    suffix = {"bucket": f"bucket_{arg}", "truncate": f"trunc_{arg}", "void": "null"}
    return column if transform == "identity" else f"{column}_{suffix.get(base, base)}"


def _fail(message: str, table: str, column: str | None = None,
          rule: str = _RULE) -> SchemaChangeError:
    return SchemaChangeError(f"{message} (table {table})", table=table, column=column,
                             rule=rule)


def apply_iceberg_alter(d: dict[str, Any], action: str,
                        transforms: Sequence[tuple[str, str]], alias: str | None,
                        identifier_fields: Sequence[str], table: str) -> None:
    """Apply one statement to metadata ``d`` in place: ``action`` ADD / DROP / REPLACE
    (``transforms``: the field, or the replaced one and its replacement, as (transform,
    column), or (name, "") for a field named) or, with ``identifier_fields``, SET / DROP."""
    m = parse_table_metadata(d, table)
    if action in ("SET", "DROP") and identifier_fields:
        _identifier_fields(d, m.schema(), action, identifier_fields, table, m.last_column_id)
        return
    spec = m.spec(m.default_spec_id)
    assert spec is not None
    schema = m.schema()
    fields = list(spec.fields)
    last = m.last_partition_id or 999
    if action in ("DROP", "REPLACE"):
        fields = _drop(fields, transforms[0], schema, m.format_version, table)
    if action in ("ADD", "REPLACE"):
        transform, column = transforms[-1]
        source = _bind(schema, transform, column, table)
        existing = next((f for f in fields
                         if f.source_ids[0] == source and f.transform == transform), None)
        shown = "null" if alias is None else alias  # Java's %s of a null name
        if existing is not None:
            raise _fail(f"Cannot add duplicate partition field {shown}="
                        f"{_term(transform, column)}, conflicts with {_field_text(existing)}",
                        table, column)
        name = alias or evolved_name(transform, column)
        if any(f.name == name for f in fields if f.transform != "void"):
            # (Java names the alias given: "null" when the name was generated)
            raise _fail(f"Cannot add duplicate partition field name: {shown}", table, column)
        # a v1 field dropped earlier (void) gives its name up, as Java renames it
        fields = [PartitionField(f.field_id, f.source_ids, f"{f.name}_{f.field_id}", f.transform)
                  if f.transform == "void" and f.name == name else f for f in fields]
        fid = _recycled(m.specs, source, transform) if m.format_version >= 2 else None
        if fid is None:
            fid = max([last, *(f.field_id for f in fields)]) + 1
        fields.append(PartitionField(fid, (source,), name, transform))
    set_default_spec(d, fields)


def _term(transform: str, column: str) -> str:
    """A partition term as Java's ``UnboundTerm.toString`` prints it."""
    ref = f'ref(name="{column}")'
    return ref if transform == "identity" else f"{transform}({ref})"


def _field_text(f: PartitionField) -> str:
    """A partition field as Java's ``PartitionField.toString``: ``1000: id_bucket:
    bucket[8](1)``."""
    return f"{f.field_id}: {f.name}: {f.transform}({f.source_ids[0]})"


def _bind(schema: IcebergSchema, transform: str, column: str, table: str) -> int:
    """The source id of ``transform(column)``, bound as Java's ``UnboundTerm.bind`` does,
    with its messages."""
    by_name = {schema.full_name(i): i for i in schema.index}
    source = by_name.get(column)
    if source is None:
        raise _fail(f"Cannot find field '{column}' in struct: {java_type_text(schema)}",
                    table, column)
    src = schema.find(source)
    assert src is not None
    try:
        check_transform(transform, src.type, table, column)
    except SchemaChangeError:
        raise
    except SchemaLabError as e:
        raise _fail(f"Cannot bind: {transform} cannot transform {iceberg_type_text(src.type)} "
                    f"values from '{column}'", table, column) from e
    return source


def _drop(fields: list[PartitionField], term: tuple[str, str], schema: IcebergSchema,
          version: int, table: str) -> list[PartitionField]:
    name_or_transform, column = term
    if column:
        source = _bind(schema, name_or_transform, column, table)
        hit = [f for f in fields if f.transform == name_or_transform
               and f.source_ids[0] == source]
        shown = _term(name_or_transform, column)
    else:
        hit = [f for f in fields if f.name == name_or_transform and f.transform != "void"]
        shown = name_or_transform
    if not hit:
        raise _fail(f"Cannot find partition field to remove: {shown}", table, column or None)
    gone = hit[0]
    if version == 1:  # v1 specs cannot lose fields: the field stays, always null
        return [PartitionField(f.field_id, f.source_ids, f.name, "void") if f is gone else f
                for f in fields]
    return [f for f in fields if f is not gone]


def _recycled(specs: Any, source: int, transform: str) -> int | None:
    for spec in specs:
        for f in spec.fields:
            if f.source_ids[0] == source and f.transform == transform:
                return f.field_id
    return None


def _identifier_fields(d: dict[str, Any], schema: IcebergSchema, action: str,
                       names: Sequence[str], table: str, last_column_id: int) -> None:
    by_name = {schema.full_name(i): i for i in schema.index}
    current = [i for i in schema.identifier_field_ids]
    if action == "DROP":
        for name in names:
            if by_name.get(name) not in current:
                raise _fail(f"Cannot complete drop identifier fields operation: {name} is not "
                            "an identifier field", table, name, "iceberg-schema-update")
        ids = [i for i in current if schema.full_name(i) not in names]
    else:
        ids = []
        for name in names:
            fid = by_name.get(name)
            if fid is None:
                raise _fail(f"Cannot add field {name} as an identifier field: not found in "
                            "current schema or added columns", table, name,
                            "iceberg-schema-update")
            _check_identifier(schema, fid, name, table)
            ids.append(fid)
    new = IcebergSchema(max(s["schema-id"] for s in d["schemas"]) + 1, schema.fields,
                        tuple(ids))
    if new.identifier_field_ids != schema.identifier_field_ids:
        set_current_schema(d, new, last_column_id)


def _check_identifier(schema: IcebergSchema, fid: int, name: str, table: str) -> None:
    f = schema.find(fid)
    assert f is not None
    leaf = f.name  # Java's messages name the field itself, not its path
    why = None
    if not isinstance(f.type, IcebergPrimitiveType):
        why = "not a primitive type field"
    elif not f.required:
        why = "not a required field"
    elif f.type.kind in ("float", "double"):
        why = "must not be float or double field"
    else:
        parts = (schema.full_name(fid) or "").split(".")
        for depth in range(1, len(parts)):  # from the root, as Java walks the parents
            parent = schema.find(schema_id_of(schema, ".".join(parts[:depth])))
            if parent is not None and not isinstance(parent.type, IcebergStructType):
                why = f"must not be nested in {java_field_text(parent)}"
            elif parent is not None and not parent.required:
                why = f"must not be nested in an optional field {java_field_text(parent)}"
            if why is not None:
                break
    if why is not None:
        raise _fail(f"Cannot add field {leaf} as an identifier field: {why}", table, name,
                    "iceberg-schema-update")


def schema_id_of(schema: IcebergSchema, full_name: str) -> int:
    return next(i for i in schema.index if schema.full_name(i) == full_name)
