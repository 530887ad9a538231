"""Iceberg schemas as JSON (the spec's form, as Java's SchemaParser writes it), and new
schemas from CREATE TABLE's columns with fresh field ids assigned the way Java's
``TypeUtil.assignFreshIds`` does: a struct's own fields first, then each one's children::

    >>> from schemalab.types import parse_type as t
    >>> from schemalab.schema.changes import ColumnSpec
    >>> fields, last = fresh_fields([ColumnSpec("a", t("INT NOT NULL")),
    ...                              ColumnSpec("s", t("ROW<x INT, y STRING>")),
    ...                              ColumnSpec("b", t("ARRAY<BIGINT>"))])
    >>> [(f.id, f.name) for f in fields], last
    ([(1, 'a'), (2, 's'), (3, 'b')], 6)
    >>> field_json(fields[2])["type"]
    {'type': 'list', 'element-id': 6, 'element': 'long', 'element-required': False}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemalab.errors import SchemaLabError
from schemalab.iceberg.metadata import IcebergSchema
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergNestedField,
    IcebergPrimitiveType,
    IcebergStructType,
    IcebergType,
)
from schemalab.schema.changes import ColumnSpec
from schemalab.types.model import ArrayType, AtomicType, DataType, MapType, RowType, TypeRoot

R = TypeRoot
_SIMPLE = {R.BOOLEAN: "boolean", R.TINYINT: "int", R.SMALLINT: "int", R.INTEGER: "int",
           R.BIGINT: "long", R.FLOAT: "float", R.DOUBLE: "double", R.DATE: "date",
           R.CHAR: "string", R.VARCHAR: "string", R.BINARY: "binary", R.VARBINARY: "binary",
           R.TIMESTAMP_WITHOUT_TIME_ZONE: "timestamp",
           R.TIMESTAMP_WITH_LOCAL_TIME_ZONE: "timestamptz"}


def primitive(name: str) -> IcebergPrimitiveType:
    from schemalab.iceberg.types import parse_iceberg_type

    t = parse_iceberg_type(name)
    assert isinstance(t, IcebergPrimitiveType)
    return t


class FieldIds:
    """Fresh field ids: each one above the last."""

    def __init__(self, last: int) -> None:
        self.last = last

    def next(self) -> int:
        self.last += 1
        return self.last


def iceberg_type_of(t: DataType, ids: FieldIds, table: str, column: str,
                    version: int = 2) -> IcebergType:
    """The Iceberg type of a Spark/Paimon type (as Iceberg's Spark catalog converts it),
    nested ids drawn from ``ids`` in Java's order."""
    if isinstance(t, RowType):
        own = [(ids.next(), f) for f in t.fields]
        return IcebergStructType(tuple(
            IcebergNestedField(i, f.name, iceberg_type_of(f.type, ids, table,
                                                          f"{column}.{f.name}", version),
                               not f.type.nullable, f.description) for i, f in own))
    if isinstance(t, ArrayType):
        eid = ids.next()
        return IcebergListType(eid, iceberg_type_of(t.element, ids, table, f"{column}.element",
                                                    version), not t.element.nullable)
    if isinstance(t, MapType):
        kid, vid = ids.next(), ids.next()
        return IcebergMapType(kid, iceberg_type_of(t.key, ids, table, f"{column}.key", version),
                              vid, iceberg_type_of(t.value, ids, table, f"{column}.value",
                                                   version), not t.value.nullable)
    if isinstance(t, AtomicType):
        if t.root is R.DECIMAL:
            return primitive(f"decimal({t.precision},{t.scale})")
        if t.root in (R.TIMESTAMP_WITHOUT_TIME_ZONE, R.TIMESTAMP_WITH_LOCAL_TIME_ZONE) \
                and (t.precision or 6) > 6:
            name = "timestamp_ns" if t.root is R.TIMESTAMP_WITHOUT_TIME_ZONE \
                else "timestamptz_ns"
            if version >= 3:
                return primitive(name)
        elif t.root in _SIMPLE:
            return primitive(_SIMPLE[t.root])
    raise SchemaLabError(f"Table {table}: column {column} has type {t.sql()}, which schemalab "
                         "does not write to Iceberg tables (Iceberg has boolean, int, long, "
                         "float, double, decimal, date, timestamp, timestamptz, string, "
                         "binary, struct, list and map)", table=table, column=column,
                         rule="iceberg-type-unsupported")


def fresh_fields(columns: Sequence[ColumnSpec], *, table: str = "t", version: int = 2,
                 last_column_id: int = 0) -> tuple[tuple[IcebergNestedField, ...], int]:
    """Top-level fields for ``columns`` and the new last column id."""
    ids = FieldIds(last_column_id)
    own = [(ids.next(), c) for c in columns]
    out = tuple(IcebergNestedField(i, c.name, iceberg_type_of(c.data_type, ids, table, c.name,
                                                              version),
                                   not c.data_type.nullable, c.comment) for i, c in own)
    return out, ids.last


def type_json(t: IcebergType) -> Any:
    if isinstance(t, IcebergPrimitiveType):
        return t.name
    if isinstance(t, IcebergStructType):
        return {"type": "struct", "fields": [field_json(f) for f in t.fields]}
    if isinstance(t, IcebergListType):
        return {"type": "list", "element-id": t.element_id, "element": type_json(t.element),
                "element-required": t.element_required}
    return {"type": "map", "key-id": t.key_id, "key": type_json(t.key), "value-id": t.value_id,
            "value": type_json(t.value), "value-required": t.value_required}


def field_json(f: IcebergNestedField) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.id, "name": f.name, "required": f.required,
                           "type": type_json(f.type)}
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = f.initial_default
    if f.write_default is not None:
        out["write-default"] = f.write_default
    return out


def schema_json(s: IcebergSchema) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "schema-id": s.schema_id}
    if s.identifier_field_ids:
        out["identifier-field-ids"] = list(s.identifier_field_ids)
    out["fields"] = [field_json(f) for f in s.fields]
    return out
