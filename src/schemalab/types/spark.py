"""The Spark types that hold Paimon values, and back.

Nested ROW fields carry their Paimon field ids as ``parquet.field.id`` metadata, which Spark
writes into Parquet and can match on read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.errors import UnknownTypeError
from schemalab.types.model import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TIMESTAMP,
    TINYINT,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import types as st

FIELD_ID_KEY = "parquet.field.id"


def to_spark(t: DataType) -> st.DataType:
    """The Spark type that holds values of ``t``. CHAR/VARCHAR become StringType and
    BINARY/VARBINARY BinaryType, as in Paimon's Spark connector; MULTISET is MAP<e, INT>."""
    from pyspark.sql import types as st

    if isinstance(t, AtomicType):
        r = t.root
        simple: dict[TypeRoot, st.DataType] = {
            TypeRoot.BOOLEAN: st.BooleanType(),
            TypeRoot.TINYINT: st.ByteType(),
            TypeRoot.SMALLINT: st.ShortType(),
            TypeRoot.INTEGER: st.IntegerType(),
            TypeRoot.BIGINT: st.LongType(),
            TypeRoot.FLOAT: st.FloatType(),
            TypeRoot.DOUBLE: st.DoubleType(),
            TypeRoot.DATE: st.DateType(),
            TypeRoot.CHAR: st.StringType(),
            TypeRoot.VARCHAR: st.StringType(),
            TypeRoot.BINARY: st.BinaryType(),
            TypeRoot.VARBINARY: st.BinaryType(),
            TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: st.TimestampNTZType(),
            TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: st.TimestampType(),
        }
        if r in simple:
            return simple[r]
        if r is TypeRoot.DECIMAL:
            return st.DecimalType(t.precision or 10, t.scale or 0)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            return st.TimeType(min(t.precision or 0, 6))
        if r is TypeRoot.NULL:
            return st.NullType()
        if r is TypeRoot.VARIANT:
            return st.VariantType()
        raise UnknownTypeError(f"No Spark type for {t.sql()}", type_text=t.sql())
    if isinstance(t, ArrayType):
        return st.ArrayType(to_spark(t.element), t.element.nullable)
    if isinstance(t, MultisetType):
        return st.MapType(to_spark(t.element), st.IntegerType(), False)
    if isinstance(t, MapType):
        return st.MapType(to_spark(t.key), to_spark(t.value), t.value.nullable)
    return st.StructType([spark_field(f) for f in t.fields])


def spark_field(f: DataField, *, with_id: bool = True) -> st.StructField:
    from pyspark.sql import types as st

    meta = {FIELD_ID_KEY: f.id} if with_id and f.id >= 0 else {}
    if f.description is not None:
        meta["comment"] = f.description  # type: ignore[assignment]
    return st.StructField(f.name, to_spark(f.type), f.type.nullable, meta)


def spark_schema(fields: tuple[DataField, ...] | list[DataField], *,
                 with_ids: bool = True) -> st.StructType:
    from pyspark.sql import types as st

    return st.StructType([spark_field(f, with_id=with_ids) for f in fields])


def from_spark(t: st.DataType, nullable: bool = True) -> DataType:
    """The Paimon type for a Spark type. Nested ROW fields take their ids from the
    ``parquet.field.id`` metadata, or -1."""
    from pyspark.sql import types as st

    simple: list[tuple[type, AtomicType]] = [
        (st.BooleanType, BOOLEAN()), (st.ByteType, TINYINT()), (st.ShortType, SMALLINT()),
        (st.IntegerType, INT()), (st.LongType, BIGINT()), (st.FloatType, FLOAT()),
        (st.DoubleType, DOUBLE()), (st.DateType, DATE()), (st.StringType, STRING()),
        (st.BinaryType, BYTES()), (st.TimestampNTZType, TIMESTAMP(6)),
        (st.TimestampType, AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=6)),
        (st.VariantType, AtomicType(TypeRoot.VARIANT)),
    ]
    if isinstance(t, st.CharType):
        return AtomicType(TypeRoot.CHAR, nullable, length=t.length)
    if isinstance(t, st.VarcharType):
        return AtomicType(TypeRoot.VARCHAR, nullable, length=t.length)
    for cls, pt in simple:
        if isinstance(t, cls):
            return pt.with_nullable(nullable)
    if isinstance(t, st.DecimalType):
        return DECIMAL(t.precision, t.scale, nullable)
    if isinstance(t, st.TimeType):
        return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, nullable, precision=t.precision)
    if isinstance(t, st.ArrayType):
        return ArrayType(from_spark(t.elementType, t.containsNull), nullable)
    if isinstance(t, st.MapType):
        return MapType(from_spark(t.keyType, False), from_spark(t.valueType, t.valueContainsNull),
                       nullable)
    if isinstance(t, st.StructType):
        return RowType(tuple(
            DataField(int(f.metadata.get(FIELD_ID_KEY, -1)), f.name,
                      from_spark(f.dataType, f.nullable), f.metadata.get("comment"))
            for f in t.fields), nullable)
    raise UnknownTypeError(f"No Paimon type for Spark type {t.simpleString()}",
                           type_text=t.simpleString())


