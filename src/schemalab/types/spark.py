"""The Spark types that hold Paimon values, and back.

Nested ROW fields carry their Paimon field ids as ``parquet.field.id`` metadata, which Spark
writes into Parquet and can match on read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from schemalab.types.visitor import TypeVisitor, visit

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import types as st

FIELD_ID_KEY = "parquet.field.id"


def to_spark(t: DataType) -> st.DataType:
    """The Spark type that holds values of ``t``. CHAR/VARCHAR become StringType and
    BINARY/VARBINARY BinaryType, as in Paimon's Spark connector; MULTISET is MAP<e, INT>.
    ROW fields carry their ids as ``parquet.field.id`` metadata."""
    return visit(t, _ToSpark())


class _ToSpark(TypeVisitor[Any]):
    def atomic(self, t: AtomicType) -> st.DataType:
        from pyspark.sql import types as st

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
            TypeRoot.NULL: st.NullType(),
            TypeRoot.VARIANT: st.VariantType(),
            # Paimon's Spark integration reads a BLOB as its bytes (BinaryType)
            TypeRoot.BLOB: st.BinaryType(),
        }
        if r in simple:
            return simple[r]
        if r is TypeRoot.DECIMAL:
            return st.DecimalType(t.precision or 10, t.scale or 0)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            return st.TimeType(min(t.precision or 0, 6))
        raise UnknownTypeError(f"No Spark type for {t.sql()}", type_text=t.sql())

    def field(self, f: DataField, result: st.DataType) -> st.StructField:
        return spark_field(f, spark_type=result)

    def row(self, t: RowType, fields: list[st.StructField]) -> st.DataType:
        from pyspark.sql import types as st

        return st.StructType(fields)

    def array(self, t: ArrayType, element: st.DataType) -> st.DataType:
        from pyspark.sql import types as st

        # a VECTOR too: Paimon's Spark shows it as an ARRAY (there without NULL elements;
        # a read's nested nullability is the plan's, which casts need nullable)
        return st.ArrayType(element, t.element.nullable)

    def multiset(self, t: MultisetType, element: st.DataType) -> st.DataType:
        from pyspark.sql import types as st

        return st.MapType(element, st.IntegerType(), False)

    def map(self, t: MapType, key: st.DataType, value: st.DataType) -> st.DataType:
        from pyspark.sql import types as st

        return st.MapType(key, value, t.value.nullable)


def spark_field(f: DataField, *, with_id: bool = True,
                spark_type: st.DataType | None = None) -> st.StructField:
    """Column ``f`` as a Spark field: its id as ``parquet.field.id``, its comment."""
    from pyspark.sql import types as st

    meta: dict[str, Any] = {FIELD_ID_KEY: f.id} if with_id and f.id >= 0 else {}
    if f.description is not None:
        meta["comment"] = f.description
    return st.StructField(f.name, to_spark(f.type) if spark_type is None else spark_type,
                          f.type.nullable, meta)


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


