"""The Arrow types that hold Paimon values (as pyarrow writes them to Parquet), and back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemalab.errors import UnknownTypeError
from schemalab.types.model import (
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    STRING,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.visitor import TypeVisitor, visit

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


ARROW_FIELD_ID_KEY = b"PARQUET:field_id"


def _time_unit(precision: int) -> str:
    return "s" if precision == 0 else "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def to_arrow(t: DataType) -> pa.DataType:
    """The Arrow type pyarrow holds (and writes to Parquet) values of ``t`` in; ROW fields
    carry their ids as ``PARQUET:field_id`` metadata."""
    return visit(t, _ToArrow())


class _ToArrow(TypeVisitor[Any]):
    def atomic(self, t: AtomicType) -> pa.DataType:
        import pyarrow as pa

        r = t.root
        simple = {
            TypeRoot.BOOLEAN: pa.bool_(), TypeRoot.TINYINT: pa.int8(),
            TypeRoot.SMALLINT: pa.int16(), TypeRoot.INTEGER: pa.int32(),
            TypeRoot.BIGINT: pa.int64(), TypeRoot.FLOAT: pa.float32(),
            TypeRoot.DOUBLE: pa.float64(), TypeRoot.DATE: pa.date32(),
            TypeRoot.CHAR: pa.string(), TypeRoot.VARCHAR: pa.string(),
            TypeRoot.VARBINARY: pa.binary(), TypeRoot.NULL: pa.null(),
            TypeRoot.BLOB: pa.large_binary(),
        }
        if r in simple:
            return simple[r]
        if r is TypeRoot.BINARY:
            return pa.binary(t.length or 1)
        if r is TypeRoot.DECIMAL:
            return pa.decimal128(t.precision or 10, t.scale or 0)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            p = t.precision or 0
            return pa.time32("ms") if p <= 3 else pa.time64("us" if p <= 6 else "ns")
        if r is TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE:
            return pa.timestamp(_time_unit(t.precision or 0))
        if r is TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
            return pa.timestamp(_time_unit(t.precision or 0), tz="UTC")
        raise UnknownTypeError(f"No Arrow type for {t.sql()}", type_text=t.sql())

    def field(self, f: DataField, result: pa.DataType) -> pa.Field:
        return arrow_field(f, arrow_type=result)

    def row(self, t: RowType, fields: list[pa.Field]) -> pa.DataType:
        import pyarrow as pa

        return pa.struct(fields)

    def array(self, t: ArrayType, element: pa.DataType) -> pa.DataType:
        import pyarrow as pa

        return pa.list_(pa.field("element", element, t.element.nullable))

    def multiset(self, t: MultisetType, element: pa.DataType) -> pa.DataType:
        import pyarrow as pa

        return pa.map_(pa.field("key", element, False), pa.field("value", pa.int32(), False))

    def map(self, t: MapType, key: pa.DataType, value: pa.DataType) -> pa.DataType:
        import pyarrow as pa

        return pa.map_(pa.field("key", key, False), pa.field("value", value, t.value.nullable))


def arrow_field(f: DataField, *, with_id: bool = True,
                arrow_type: pa.DataType | None = None) -> pa.Field:
    """Column ``f`` as an Arrow field with its id as ``PARQUET:field_id``."""
    import pyarrow as pa

    meta = {ARROW_FIELD_ID_KEY: str(f.id).encode()} if with_id and f.id >= 0 else None
    return pa.field(f.name, to_arrow(f.type) if arrow_type is None else arrow_type,
                    f.type.nullable, metadata=meta)


def arrow_schema(fields: tuple[DataField, ...] | list[DataField], *,
                 with_ids: bool = True) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([arrow_field(f, with_id=with_ids) for f in fields])


def from_arrow(t: pa.DataType, nullable: bool = True) -> DataType:
    import pyarrow.types as pat

    if pat.is_boolean(t):
        return BOOLEAN(nullable)
    ints = {8: TypeRoot.TINYINT, 16: TypeRoot.SMALLINT, 32: TypeRoot.INTEGER, 64: TypeRoot.BIGINT}
    if pat.is_signed_integer(t):
        return AtomicType(ints[t.bit_width], nullable)
    if pat.is_float32(t):
        return FLOAT(nullable)
    if pat.is_float64(t):
        return DOUBLE(nullable)
    if pat.is_decimal(t):
        return DECIMAL(t.precision, t.scale, nullable)
    if pat.is_string(t) or pat.is_large_string(t):
        return STRING(nullable)
    if pat.is_fixed_size_binary(t):
        return AtomicType(TypeRoot.BINARY, nullable, length=t.byte_width)
    if pat.is_binary(t) or pat.is_large_binary(t):
        return BYTES(nullable)
    if pat.is_date32(t):
        return DATE(nullable)
    if pat.is_time(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, nullable, precision=p)
    if pat.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        root = (TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE if t.tz
                else TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE)
        return AtomicType(root, nullable, precision=p)
    if pat.is_map(t):
        return MapType(from_arrow(t.key_type, False),
                       from_arrow(t.item_type, t.item_field.nullable), nullable)
    if pat.is_list(t) or pat.is_large_list(t):
        return ArrayType(from_arrow(t.value_type, t.value_field.nullable), nullable)
    if pat.is_struct(t):
        fields = []
        for i in range(t.num_fields):
            f: pa.Field = t.field(i)
            meta = f.metadata or {}
            fid = int(meta.get(ARROW_FIELD_ID_KEY, b"-1"))
            fields.append(DataField(fid, f.name, from_arrow(f.type, f.nullable)))
        return RowType(tuple(fields), nullable)
    raise UnknownTypeError(f"No Paimon type for Arrow type {t}", type_text=str(t))
