"""How each Paimon type is stored in Parquet: as Java Paimon's ``ParquetSchemaConverter``
and ``ParquetRowDataWriter`` store it, so that Java reads every value schemalab writes.

=============================================== =======================================
Paimon type                                     Parquet (Java Paimon)
=============================================== =======================================
TIMESTAMP(p), p <= 3                            INT64 TIMESTAMP(MILLIS, UTC = false)
TIMESTAMP(p), 4 <= p <= 6                       INT64 TIMESTAMP(MICROS, UTC = false)
TIMESTAMP(p) WITH LOCAL TIME ZONE, p <= 3 / <= 6 the same with UTC = true
TIMESTAMP(p) (WITH LOCAL TIME ZONE), p > 6      INT96 (no logical type)
TIME(p)                                         INT32 TIME(MILLIS, UTC = true) (*)
everything else                                 as Spark writes it (the same as Java's)
=============================================== =======================================

(*) top-level TIME columns only; a TIME nested in a ROW, ARRAY or MAP is written as Spark
writes it (INT64 microseconds), which Java Paimon cannot read.

Java's reader takes an INT64 timestamp by the column's *precision* (milliseconds up to 3,
microseconds up to 6), whatever the file's annotation says, and accepts only INT96 above 6
and only INT32 for TIME. Spark's writer stores every TIMESTAMP as INT64 microseconds and
every TIME as INT64 microseconds, and chooses between INT96 and INT64 for all columns of a
write at once (``spark.sql.parquet.outputTimestampType``). So Spark is given the integers
Java stores (a BIGINT of milliseconds for a TIMESTAMP(3), an INT of milliseconds for a TIME)
and the footer is then told their logical type (:mod:`schemalab.engine.parquet_thrift`);
precision > 6 is written as Spark's INT96, which every schemalab session writes (see
:data:`schemalab.spark.SESSION_SQL_CONF`). The data pages are Spark's, the speed Spark's.

    >>> from schemalab.types import parse_type as t
    >>> stored_type(t("TIMESTAMP(3)")).sql(), stored_type(t("ARRAY<TIMESTAMP(0)>")).sql()
    ('BIGINT', 'ARRAY<BIGINT>')
    >>> stored_type(t("TIME(3)")).sql(), stored_type(t("ARRAY<TIME(3)>")).sql()
    ('INT', 'ARRAY<TIME(3)>')
    >>> stored_type(t("TIMESTAMP(9)")).sql(), stored_type(t("TIMESTAMP(6)")).sql()
    ('TIMESTAMP(9) WITH LOCAL TIME ZONE', 'TIMESTAMP(6)')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.engine.parquet_thrift import Annotation
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.spark import to_spark
from schemalab.types.visitor import TypeTransform, TypeVisitor, visit

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

R = TypeRoot
#: stored as a BIGINT of milliseconds / microseconds, or an INT of milliseconds of the day
_MILLIS, _MICROS, _TIME, _INT96 = "millis", "micros", "time-millis", "int96"
#: not a storage of its own: a VARIANT group, whose two binaries get field ids
_VARIANT = "variant"


def _storage(t: AtomicType, nested: bool) -> str | None:
    """How Java stores an atomic type where Spark would store it otherwise (else None).
    A TIME inside a ROW, ARRAY or MAP stays as Spark writes it: Spark cannot read an INT32
    TIME back, and schemalab's reader converts only top-level columns (a top-level TIME is
    read as its INT32 and converted)."""
    if t.root is R.TIME_WITHOUT_TIME_ZONE:
        return None if nested else _TIME
    if t.root not in (R.TIMESTAMP_WITHOUT_TIME_ZONE, R.TIMESTAMP_WITH_LOCAL_TIME_ZONE):
        return None
    p = 6 if t.precision is None else t.precision
    if p > 6:
        return _INT96
    if p <= 3:
        return _MILLIS
    # Spark writes a TIMESTAMP(4..6) exactly as Java does; a WITH LOCAL TIME ZONE one as the
    # session's outputTimestampType says, which is INT96 for schemalab's writes
    return _MICROS if t.root is R.TIMESTAMP_WITH_LOCAL_TIME_ZONE else None


class _StoredType(TypeTransform):
    def __init__(self, nested: bool) -> None:
        self.nested = nested

    def atomic(self, t: AtomicType) -> DataType:
        how = _storage(t, self.nested)
        if how in (_MILLIS, _MICROS):
            return AtomicType(R.BIGINT, t.nullable)
        if how == _TIME:
            return AtomicType(R.INTEGER, t.nullable)
        if how == _INT96 and t.root is R.TIMESTAMP_WITHOUT_TIME_ZONE:
            return AtomicType(R.TIMESTAMP_WITH_LOCAL_TIME_ZONE, t.nullable, precision=t.precision)
        return t


def stored_type(t: DataType) -> DataType:
    """The type Spark is given to write a value of ``t`` as Java stores it."""
    return visit(t, _StoredType(nested=not isinstance(t, AtomicType)))


@dataclass(frozen=True)
class ColumnStorage:
    """What writing one column takes: ``convert`` turns its values into the stored form
    (None: written as they are), ``annotations`` are the logical types its leaf columns get
    in the footer (by Parquet path), ``int96`` the leaves Spark must write as INT96."""

    convert: Callable[[Column], Column] | None
    annotations: tuple[tuple[tuple[str, ...], Annotation], ...] = ()
    int96: tuple[tuple[str, ...], ...] = ()
    #: leaf columns Java needs a Parquet field id on that Spark writes none for: a VARIANT's
    #: ``value`` (0) and ``metadata`` (1), as Paimon's ParquetSchemaConverter writes them
    field_ids: tuple[tuple[tuple[str, ...], int], ...] = ()


#: one leaf column below a node: (its Parquet path from there, how it is stored, whether it
#: is WITH LOCAL TIME ZONE)
_Leaf = tuple[tuple[str, ...], str, bool]
#: per node: a value conversion (or None) and its leaves
_Node = tuple["Callable[[Column], Column] | None", tuple[_Leaf, ...]]


class _Conversions(TypeVisitor[_Node]):
    def __init__(self, nested: bool) -> None:
        self.nested = nested

    def atomic(self, t: AtomicType) -> _Node:
        if t.root is R.VARIANT:
            return None, (((), _VARIANT, False),)
        how = _storage(t, self.nested)
        if how is None:
            return None, ()
        return _converter(t, how), (((), how, t.root is R.TIMESTAMP_WITH_LOCAL_TIME_ZONE),)

    def field(self, f: DataField, result: _Node) -> _Node:
        fn, leaves = result
        return fn, _under((f.name,), leaves)

    def row(self, t: RowType, fields: list[_Node]) -> _Node:
        leaves = tuple(leaf for _, ls in fields for leaf in ls)
        if all(fn is None for fn, _ in fields):
            return None, leaves
        names = [f.name for f in t.fields]
        fns = [fn for fn, _ in fields]

        def rebuild(c: Column) -> Column:
            from pyspark.sql import functions as F

            parts = [(fn(c.getField(n)) if fn else c.getField(n)).alias(n)
                     for n, fn in zip(names, fns, strict=True)]
            return F.when(c.isNull(), F.lit(None)).otherwise(F.struct(*parts))

        return rebuild, leaves

    def array(self, t: ArrayType, element: _Node) -> _Node:
        fn, leaves = element
        each = None if fn is None else _each_element(fn)
        return each, _under(("list", "element"), leaves)

    def multiset(self, t: MultisetType, element: _Node) -> _Node:
        # held by Spark as MAP<element, count>
        fn, leaves = element
        each = None if fn is None else _each_key(fn)
        return each, _under(("key_value", "key"), leaves)

    def map(self, t: MapType, key: _Node, value: _Node) -> _Node:
        (kfn, kleaves), (vfn, vleaves) = key, value
        leaves = _under(("key_value", "key"), kleaves) + _under(("key_value", "value"), vleaves)
        if kfn is None and vfn is None:
            return None, leaves

        def each(c: Column) -> Column:
            from pyspark.sql import functions as F

            m = c if kfn is None else F.transform_keys(c, lambda k, v: kfn(k))
            return m if vfn is None else F.transform_values(m, lambda k, v: vfn(v))

        return each, leaves


def _under(prefix: tuple[str, ...], leaves: tuple[_Leaf, ...]) -> tuple[_Leaf, ...]:
    return tuple(((*prefix, *p), how, local) for p, how, local in leaves)


def _each_element(fn: Callable[[Column], Column]) -> Callable[[Column], Column]:
    def each(c: Column) -> Column:
        from pyspark.sql import functions as F

        return F.transform(c, fn)

    return each


def _each_key(fn: Callable[[Column], Column]) -> Callable[[Column], Column]:
    def each(c: Column) -> Column:
        from pyspark.sql import functions as F

        return F.transform_keys(c, lambda k, v: fn(k))

    return each


def _converter(t: AtomicType, how: str) -> Callable[[Column], Column]:
    """Spark values of ``t`` → the stored integers (or the INT96 instant). A TIMESTAMP is
    measured from the epoch in its own wall time, whatever the session's time zone."""

    def convert(c: Column) -> Column:
        from pyspark.sql import functions as F

        if how == _TIME:
            return F.call_function("time_diff", F.lit("MILLISECOND"),
                                   F.lit("00:00:00").cast("time(0)"), c).cast("int")
        local = t.root is R.TIMESTAMP_WITH_LOCAL_TIME_ZONE
        epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
        if how == _MILLIS:
            return F.unix_millis(c) if local else F.timestamp_diff("MILLISECOND", epoch, c)
        if how == _MICROS:
            return F.unix_micros(c) if local else F.timestamp_diff("MICROSECOND", epoch, c)
        # INT96 of a TIMESTAMP: the instant whose UTC wall time is the value
        return F.timestamp_micros(F.timestamp_diff("MICROSECOND", epoch, c))

    return convert


def array_element_field_id(field_id: int, depth: int = 1) -> int:
    """The Parquet field id Java Paimon gives the element of the list column ``field_id``
    (``SpecialFields.getArrayElementFieldId``: a base of ``Integer.MAX_VALUE / 4``, 1024
    ids per field, ``depth`` 1 for a top-level column's element).

        >>> array_element_field_id(1)
        536871936
    """
    return (2**31 - 1) // 4 + field_id * 1024 + depth


def column_storage(t: DataType) -> ColumnStorage:
    """How to write a column of type ``t`` as Java Paimon stores it."""
    fn, leaves = visit(t, _Conversions(nested=not isinstance(t, AtomicType)))
    spark_type = to_spark(stored_type(t))
    convert = None if fn is None else _cast_to(fn, spark_type)
    annotations = tuple(
        (p, Annotation("time" if how == _TIME else "timestamp",
                       "MICROS" if how == _MICROS else "MILLIS", how == _TIME or local))
        for p, how, local in leaves if how not in (_INT96, _VARIANT))
    field_ids = tuple(((*p, child), fid) for p, how, _ in leaves if how == _VARIANT
                      for child, fid in (("value", 0), ("metadata", 1)))
    return ColumnStorage(convert, annotations,
                         tuple(p for p, how, _ in leaves if how == _INT96), field_ids)


def _cast_to(fn: Callable[[Column], Column], spark_type: object) -> Callable[[Column], Column]:
    def convert(c: Column) -> Column:
        return fn(c).cast(spark_type)  # type: ignore[arg-type]

    return convert
