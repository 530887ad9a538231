"""Iceberg reads planned as engine read plans (:mod:`schemalab.engine.plan`).

Each data file's columns are what its footer holds by field id, named and typed as the
schema it was written under says (Iceberg keeps no schema per file: it is the schema of the
snapshot that added it). A field the file lacks reads, in the spec's order, the file's
identity-partition value, else the field's ``initial-default``, else NULL. Iceberg's type
promotions are all implicit: the read never fails on a value.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from schemalab.engine.footer import parquet_fields_by_id
from schemalab.engine.plan import Constant, DataFile, ReadPlan, plan_read
from schemalab.errors import SchemaLabError
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
    from schemalab.iceberg.table import IcebergDataFile, IcebergTable


def target_schema(s: IcebergSchema) -> TableSchema:
    """An Iceberg schema as the engine reads into: Paimon types, ``unknown`` columns as
    always-NULL columns. Identifier fields are not a merge key (Iceberg never merges)."""
    fields = []
    for f in s.fields:
        t = to_paimon(f.type, not f.required)
        fields.append(DataField(f.id, f.name, AtomicType(TypeRoot.NULL) if t is None else t,
                                f.doc))
    return TableSchema(s.schema_id, tuple(fields), s.highest_field_id)


def plan_iceberg_read(table: IcebergTable, target: IcebergSchema,
                      files: Sequence[IcebergDataFile],
                      snapshot_id: int | None = None) -> ReadPlan:
    """The engine plan of a read of ``files`` in schema ``target``."""
    for df in files:
        if df.entry.file_format != "parquet":
            raise SchemaLabError(f"Table {table.name}: data file {df.path} is "
                                 f"{df.entry.file_format.upper()}; schemalab reads Parquet "
                                 "data files only", table=table.name,
                                 rule="iceberg-file-format")
    by_path = {df.path: df for df in files}
    sources: dict[tuple[int, frozenset[int]], TableSchema] = {}

    def source_of(f: DataFile) -> TableSchema:
        ids = frozenset(parquet_fields_by_id(f.path))
        if not ids:
            raise SchemaLabError(
                f"Table {table.name}: data file {f.path} has no Parquet field ids (added from "
                "outside, e.g. with add_files); reading it needs the table's name mapping, "
                "which schemalab does not apply", table=table.name, rule="iceberg-name-mapping")
        key = (f.schema_id, ids)
        if key not in sources:
            written = target_schema(table.schema_at(f.schema_id))
            sources[key] = replace(written, fields=_present(written.fields, ids))
        return sources[key]

    def constant_of(f: DataFile, field: DataField) -> Constant | None:
        return _constant(table, by_path[f.path], target.find(field.id))

    data_files = [DataFile(df.path, table.written_schema_id(df.entry), df.entry.record_count,
                           file_size=df.entry.file_size)
                  for df in files]
    return plan_read(table.name, target_schema(target), data_files, source_of,
                     CastMode.EXPLICIT, constant_of=constant_of,
                     defaults=dict(_nested_defaults(target.fields)), snapshot_id=snapshot_id,
                     format="iceberg")


def _present(fields: tuple[DataField, ...], ids: frozenset[int]) -> tuple[DataField, ...]:
    """``fields`` as far as a file holds them: the fields whose id the file has, and inside
    a ROW only the nested fields it has."""
    return tuple(replace(f, type=_present_type(f.type, ids)) for f in fields if f.id in ids)


def _present_type(t: DataType, ids: frozenset[int]) -> DataType:
    if isinstance(t, RowType):
        return RowType(_present(t.fields, ids), t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_present_type(t.element, ids), t.nullable)
    if isinstance(t, MapType):
        return MapType(_present_type(t.key, ids), _present_type(t.value, ids), t.nullable)
    return t


def _constant(table: IcebergTable, df: IcebergDataFile,
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

