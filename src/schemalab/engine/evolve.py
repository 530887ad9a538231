"""Evolution of a column read in its file's type into the type read, as Spark column
expressions: nested ROW fields by id (added → NULL or their default, dropped → gone,
renamed → by id), atomic values cast under the table's cast mode, and constants.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from schemalab.engine.paimon_casts import java_cast
from schemalab.engine.plan import Constant
from schemalab.engine.spark_reader import cast_to, spark_reader_widens, spark_sig
from schemalab.errors import UnsupportedFeatureError
from schemalab.types.casts import CastMode, alters_values, cast_kind
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)
from schemalab.types.spark import to_spark
from schemalab.types.visitor import PartnerVisitor, id_signature, visit_with_partner

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

#: turns a column (and the innermost named field it belongs to) into the target's values;
#: None where the column already is the target
Evolution = Callable[["Column", DataField], "Column"] | None


def evolve(col: Column, source: DataType, target: DataType, mode: CastMode, table: str,
           field: DataField, defaults: Mapping[int, Constant] | None = None) -> Column:
    """``col``, read in the file's type ``source``, as values of ``target``."""
    fn = visit_with_partner(target, source, _Evolve(mode, table, dict(defaults or {})))
    return col if fn is None else fn(col, field)


class _Evolve(PartnerVisitor[Evolution]):
    def __init__(self, mode: CastMode, table: str, defaults: dict[int, Constant]) -> None:
        self.mode = mode
        self.table = table
        self.defaults = defaults

    def atomic(self, t: AtomicType, partner: DataType | None) -> Evolution:
        if partner is None or (spark_sig(partner) == spark_sig(t)
                               and not alters_values(partner, t)):
            return None
        source = partner

        def cast(c: Column, f: DataField) -> Column:
            return cast_column(c, source, t, self.mode, self.table, f)

        return cast

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, Evolution]]) -> Evolution:
        if partner is None:
            return None
        if spark_sig(partner) == spark_sig(t) and id_signature(partner) == id_signature(t) \
                and not alters_values(partner, t):
            return None

        def rebuild(c: Column, _: DataField) -> Column:
            from pyspark.sql import functions as F

            parts = []
            for f, pf, fn in fields:
                if pf is None:
                    const = self.defaults.get(f.id)
                    value = (literal(const.value, f.type) if const is not None
                             else cast_to(F.lit(None), to_spark(f.type)))
                else:
                    inner = c.getField(pf.name)
                    value = inner if fn is None else fn(inner, f)
                parts.append(value.alias(f.name))
            return F.when(c.isNull(), cast_to(F.lit(None), to_spark(t))).otherwise(F.struct(*parts))

        return rebuild

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: Evolution) -> Evolution:
        if element is None:
            return None
        fn = element

        def each(c: Column, f: DataField) -> Column:
            from pyspark.sql import functions as F

            if isinstance(t, MultisetType):  # held by Spark as MAP<element, count>
                return F.transform_keys(c, lambda k, v: fn(k, f))
            return F.transform(c, lambda x: fn(x, f))

        return each

    def map(self, t: MapType, partner: MapType | None, key: Evolution,
            value: Evolution) -> Evolution:
        if key is None and value is None:
            return None
        key_fn, value_fn = key, value

        def each(c: Column, f: DataField) -> Column:
            from pyspark.sql import functions as F

            m = c
            if key_fn is not None:
                m = F.transform_keys(m, lambda k, v: key_fn(k, f))
            if value_fn is not None:
                m = F.transform_values(m, lambda k, v: value_fn(v, f))
            return m

        return each


def cast_column(col: Column, source: DataType, target: DataType, mode: CastMode, table: str,
                field: DataField) -> Column:
    """One atomic value of type ``source`` as ``target``, under the table's cast mode:
    Java Paimon's cast (:mod:`schemalab.engine.paimon_casts`) by default, where Java's
    failures fail the read too; FLIP-226's ``explicit`` / ``explicit-null`` fail or read NULL
    on every value the cast does not keep."""
    from pyspark.sql import functions as F

    spark_type = to_spark(target)
    kind = cast_kind(source, target)
    java = java_cast(col, source, target)
    if java is None:
        if kind in ("identity", "implicit") or spark_reader_widens(source, target):
            return cast_to(col, spark_type)
        converted = col.try_cast(spark_type)
        if mode is CastMode.EXPLICIT_NULL or kind is None:
            return converted
        unconverted = col.isNotNull() & converted.isNull()
        why = ("Java Paimon's read fails on it" if mode.javas_values else
               "the table's cast.mode is 'explicit', which fails the read on such a value")
        return F.when(unconverted, _read_error(col, source, target, table, field, why,
                                               spark_type)).otherwise(converted)
    value, changed, fails = java.value, java.changed, java.fails
    if mode.javas_values:
        if fails is None:
            return value
        why = f"Java Paimon's read fails on it ({java.failure})"
        return F.when(fails, _read_error(col, source, target, table, field, why, spark_type)) \
            .otherwise(value)
    bad = _either(changed, fails)
    if bad is None:
        return value
    if mode is CastMode.EXPLICIT_NULL:
        return F.when(bad, cast_to(F.lit(None), spark_type)).otherwise(value)
    why = "the table's cast.mode is 'explicit', which fails the read on such a value"
    return F.when(bad, _read_error(col, source, target, table, field, why, spark_type)) \
        .otherwise(value)


def _either(a: Column | None, b: Column | None) -> Column | None:
    if a is None or b is None:
        return a if b is None else b
    return a | b


def _read_error(col: Column, source: DataType, target: DataType, table: str,
                field: DataField, why: str, spark_type: object) -> Column:
    """A Spark expression that fails the read with a message naming the table, the column,
    the value, the rule, and what to do."""
    from pyspark.sql import functions as F

    message = F.concat(
        F.lit(f"Table {table}, column `{field.name}` (field {field.id}): value '"),
        col.cast("string"),
        F.lit(f"' cannot be cast from {source.sql()} to {target.sql()}: {why}; set "
              "'cast.mode' = 'explicit-null' to read such values as NULL."))
    return F.raise_error(message).cast(spark_type)  # type: ignore[arg-type]


def literal(value: object, t: DataType) -> Column:
    """A constant column of type ``t`` holding ``value`` (a Python value of the type)."""
    from pyspark.sql import functions as F

    spark_type = to_spark(t)
    if value is None:
        return cast_to(F.lit(None), spark_type)
    if isinstance(value, dt.datetime):
        # Spark would read a naive datetime literal in the session zone: pass the UTC wall
        # time as text instead.
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return cast_to(F.lit(value.isoformat()), spark_type)
    if isinstance(value, Decimal):
        return cast_to(F.lit(str(value)), spark_type)
    if isinstance(value, dict | list | tuple):
        raise UnsupportedFeatureError(
            f"A constant of type {t.sql()} ({value!r}, a default or partition value) is not "
            "supported: schemalab reads constant values of atomic types only",
            feature="nested constant")
    return cast_to(F.lit(value), spark_type)
