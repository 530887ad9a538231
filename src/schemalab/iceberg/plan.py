"""Iceberg reads planned as engine read plans (:mod:`schemalab.engine.plan`).

Each data file's columns are what its footer holds by field id (Parquet ``field_id``, ORC
``iceberg.id``, Avro ``field-id``), named as the file names them and typed as the schema it
was written under says (Iceberg keeps no schema per file: it is the schema of the snapshot
that added it). A file without any field id (``add_files`` of foreign Parquet) is read
through the table's name mapping (``schema.name-mapping.default``). A field the file lacks
reads, in the spec's order, the file's identity-partition value, else the field's
``initial-default``, else NULL. Iceberg's type promotions are all implicit: the read never
fails on a value. Delete files are matched to data files by :mod:`schemalab.iceberg.deletes`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.footer import FileField, field_ids, file_fields
from schemalab.engine.plan import (
    Constant,
    DataFile,
    EqualityDeletes,
    FileFormat,
    ReadPlan,
    extra_name,
    plan_read,
)
from schemalab.errors import SchemaLabError
from schemalab.iceberg.deletes import DeleteIndex, equality_scope, scope
from schemalab.iceberg.metadata import IcebergSchema
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergNestedField,
    IcebergPrimitiveType,
    IcebergStructType,
    IcebergType,
    to_paimon,
)
from schemalab.schema import TableSchema
from schemalab.types.casts import CastMode
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    RowType,
    TypeRoot,
)

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.iceberg.listing import IcebergDataFile, IcebergSource

NAME_MAPPING = "schema.name-mapping.default"
FORMATS: tuple[FileFormat, ...] = ("parquet", "orc", "avro")


def target_schema(s: IcebergSchema) -> TableSchema:
    """An Iceberg schema as the engine reads into: Paimon types, ``unknown`` columns as
    always-NULL columns. Identifier fields are not a merge key (Iceberg never merges)."""
    fields = []
    for f in s.fields:
        fields.append(_data_field(f))
    return TableSchema(s.schema_id, tuple(fields), s.highest_field_id)


def _data_field(f: IcebergNestedField, name: str | None = None) -> DataField:
    t = to_paimon(f.type, not f.required)
    return DataField(f.id, name or f.name, AtomicType(TypeRoot.NULL) if t is None else t, f.doc)


def plan_iceberg_read(table: IcebergSource, target: IcebergSchema,
                      files: Sequence[IcebergDataFile], snapshot_id: int | None = None, *,
                      deletes: Sequence[IcebergDataFile] = ()) -> ReadPlan:
    """The engine plan of a read of ``files`` in schema ``target``, without the rows the
    live ``deletes`` of the snapshot delete."""
    for df in (*files, *deletes):
        if df.entry.file_format not in (*FORMATS, "puffin"):
            raise SchemaLabError(f"Table {table.name}: file {df.path} is "
                                 f"{df.entry.file_format.upper()}; schemalab reads Parquet, "
                                 "ORC and Avro files", table=table.name,
                                 rule="iceberg-file-format")
    for df in files:  # each read, as Paimon's planning does: kept reads build nothing more
        fileio.check_data_file(df.path, df.entry.file_size, table=table.name)
    index = DeleteIndex.of(table, deletes)
    equality = index.equality_for(files)
    extra = _equality_fields(table, target, equality)
    by_path = {df.path: df for df in files}
    # one schema object per distinct (schema, footer): planning caches by schema object
    sources: dict[tuple[int, tuple[FileField, ...]], TableSchema] = {}
    mapping = _name_mapping(table)

    def source_of(f: DataFile) -> TableSchema:
        fields = file_fields(f.path, f.format)
        key = (f.schema_id, fields)
        if key not in sources:
            sources[key] = file_source(table, f.schema_id, f.path, fields, mapping)
        return sources[key]

    extra_by_id = {f.id: f for f in extra}

    def constant_of(f: DataFile, field: DataField) -> Constant | None:
        nested = target.find(field.id) if field.id not in extra_by_id else \
            _newest_field(table, field.id)
        return _constant(table, by_path[f.path], nested)

    data_files = [DataFile(df.path, table.written_schema_id(df.entry), df.entry.record_count,
                           file_size=df.entry.file_size, format=_format(df),
                           deletes=index.position_deletes(df),
                           data_sequence_number=df.entry.sequence_number or 0,
                           delete_scope=scope(df.entry))
                  for df in files]
    eq_deletes = [EqualityDeletes(
        d.path, d.entry.sequence_number or 0, d.entry.equality_ids,
        equality_scope(table, d.entry),
        plan_iceberg_read(table, _equality_schema(table, d.entry.equality_ids), [d]),
        d.entry.record_count) for d in equality]
    return plan_read(table.name, target_schema(target), data_files, source_of,
                     CastMode.EXPLICIT, constant_of=constant_of,
                     defaults=dict(_nested_defaults(target.fields)), snapshot_id=snapshot_id,
                     format="iceberg", equality_deletes=eq_deletes, extra=extra,
                     ignored_deletes=index.ignored(files))


def _format(df: IcebergDataFile) -> FileFormat:
    fmt = df.entry.file_format
    return fmt if fmt in FORMATS else "parquet"  # type: ignore[return-value]


def file_source(table: IcebergSource, schema_id: int, path: str, fields: tuple[FileField, ...],
                mapping: Mapping[int, tuple[str, ...]] | None) -> TableSchema:
    """The schema the columns of data file ``path`` (whose footer holds ``fields``) are read
    by: schema ``schema_id`` it was written under, as far as the file holds its fields (by
    field id, else through the name mapping), with the names the file gives them."""
    ids = field_ids(fields)
    written = target_schema(table.schema_at(schema_id))
    if ids:
        return replace(written, fields=_present(written.fields, ids))
    if mapping is None:
        raise SchemaLabError(
            f"Table {table.name}: data file {path} has no field ids (added from outside, "
            f"e.g. with add_files) and the table has no name mapping ('{NAME_MAPPING}') to "
            "read it by; set one (Iceberg's add_files does) and read again.",
            table=table.name, rule="iceberg-name-mapping")
    return replace(written, fields=_mapped(written.fields, fields, mapping))


def _name_mapping(table: IcebergSource) -> dict[int, tuple[str, ...]] | None:
    """Field id → the names a file without ids may give it (spec Appendix C), from the
    table's ``schema.name-mapping.default``; None when the table has none."""
    raw = table.metadata.properties.get(NAME_MAPPING)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise SchemaLabError(f"Table {table.name}: '{NAME_MAPPING}' is not JSON ({e})",
                             table=table.name, rule="iceberg-name-mapping") from None
    out: dict[int, tuple[str, ...]] = {}

    def walk(fields: Any) -> None:
        for f in fields or ():
            if not isinstance(f, dict):
                continue
            if isinstance(f.get("field-id"), int):
                out[f["field-id"]] = tuple(str(n) for n in f.get("names") or ())
            walk(f.get("fields"))

    walk(doc)
    return out


def _mapped(fields: tuple[DataField, ...], file: tuple[FileField, ...],
            mapping: Mapping[int, tuple[str, ...]]) -> tuple[DataField, ...]:
    """``fields`` as far as a file without ids holds them through the name mapping, each
    named as the file names it (the first of the mapping's names the file has)."""
    by_name = {ff.name: ff for ff in file}
    out = []
    for f in fields:
        hit = next((by_name[n] for n in mapping.get(f.id, ()) if n in by_name), None)
        if hit is not None:
            out.append(replace(f, name=hit.name, type=_mapped_type(f.type, hit.children,
                                                                   mapping)))
    return tuple(out)


def _mapped_type(t: DataType, children: tuple[FileField, ...],
                 mapping: Mapping[int, tuple[str, ...]]) -> DataType:
    if isinstance(t, RowType):
        return RowType(_mapped(t.fields, children, mapping), t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_mapped_type(t.element, children, mapping), t.nullable)
    if isinstance(t, MapType):
        return MapType(t.key, _mapped_type(t.value, children, mapping), t.nullable)
    return t


def _equality_fields(table: IcebergSource, target: IcebergSchema,
                     equality: Sequence[IcebergDataFile]) -> list[DataField]:
    """The equality delete fields the read target lacks at its top level (dropped since, or
    a time travel's older schema): read beside it as ``__sl_eq_<id>``."""
    top = {f.id for f in target.fields}
    ids = sorted({i for d in equality for i in d.entry.equality_ids} - top)
    return [_data_field(_newest_top_level(table, i, equality), extra_name(i)) for i in ids]


def _equality_schema(table: IcebergSource, ids: Sequence[int]) -> IcebergSchema:
    """The columns an equality delete file is read into: each field under its newest type,
    named ``__sl_eq_<id>``."""
    fields = tuple(replace(_newest_top_level(table, i, ()), name=extra_name(i),
                           required=False, initial_default=None) for i in ids)
    return IcebergSchema(-1, fields)


def _newest_field(table: IcebergSource, field_id: int) -> IcebergNestedField | None:
    for s in sorted(table.schemas, key=lambda s: -s.schema_id):
        f = s.find(field_id)
        if f is not None:
            return f
    return None


def _newest_top_level(table: IcebergSource, field_id: int,
                      equality: Sequence[IcebergDataFile]) -> IcebergNestedField:
    for s in sorted(table.schemas, key=lambda s: -s.schema_id):
        f = s.find(field_id)
        if f is None:
            continue
        if f not in s.fields:
            break
        return f
    raise SchemaLabError(
        f"Table {table.name}: an equality delete file compares field {field_id}, which is "
        "not a top-level column of any schema; schemalab applies equality deletes on "
        "top-level columns only, so the read is refused.", table=table.name,
        rule="iceberg-equality-deletes")


def _present(fields: tuple[DataField, ...], ids: Mapping[int, str]) -> tuple[DataField, ...]:
    """``fields`` as far as a file holds them: the fields whose id the file has (named as
    the file names them), and inside a ROW only the nested fields it has."""
    return tuple(replace(f, name=ids[f.id], type=_present_type(f.type, ids))
                 for f in fields if f.id in ids)


def _present_type(t: DataType, ids: Mapping[int, str]) -> DataType:
    if isinstance(t, RowType):
        return RowType(_present(t.fields, ids), t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_present_type(t.element, ids), t.nullable)
    if isinstance(t, MapType):
        return MapType(_present_type(t.key, ids), _present_type(t.value, ids), t.nullable)
    return t


def _constant(table: IcebergSource, df: IcebergDataFile,
              f: IcebergNestedField | None) -> Constant | None:
    """How a top-level field absent from a data file is filled (Iceberg's projection rule):
    the identity partition value of the file's spec first, then the v3 ``initial-default``;
    None means NULL."""
    if f is None:
        return None
    spec = table.metadata.spec(df.entry.spec_id)
    for pf in spec.fields if spec else ():
        if pf.transform.strip().lower() == "identity" and pf.source_ids == (f.id,):
            if pf.field_id in df.entry.partition:
                return Constant("partition", _python_value(df.entry.partition[pf.field_id],
                                                           f.type, from_json=False))
    if f.initial_default is not None:
        return Constant("default", _python_value(f.initial_default, f.type, from_json=True))
    return None


def _nested_defaults(fields: Sequence[IcebergNestedField], top: bool = True
                     ) -> Iterator[tuple[int, Constant]]:
    """Every nested field with an ``initial-default`` (top-level ones are constants)."""
    for f in fields:
        if not top and f.initial_default is not None:
            yield f.id, Constant("default", _python_value(f.initial_default, f.type,
                                                          from_json=True))
        yield from _nested_defaults(_children(f.type), top=False)


def _children(t: IcebergType) -> tuple[IcebergNestedField, ...]:
    if isinstance(t, IcebergStructType):
        return t.fields
    if isinstance(t, IcebergListType):
        return _children(t.element)
    if isinstance(t, IcebergMapType):
        return _children(t.key) + _children(t.value)
    return ()


def _python_value(value: Any, t: IcebergType, *, from_json: bool) -> Any:
    """A partition value as Avro decoded it, or an ``initial-default`` in the spec's JSON
    single-value form (Appendix D), as the Python value the engine's literals take."""
    if not isinstance(t, IcebergPrimitiveType) or value is None:
        return value
    if isinstance(value, uuid.UUID):
        return value.bytes
    if from_json and isinstance(value, str):
        if t.kind in ("binary", "fixed"):
            return bytes.fromhex(value)
        if t.kind == "uuid":
            return uuid.UUID(value).bytes
        if t.kind == "decimal":
            return Decimal(value)
    if t.kind == "uuid" and isinstance(value, str):
        return uuid.UUID(value).bytes
    return value

