"""Any input → a Spark DataFrame in the table's current schema: a Spark or pandas
DataFrame, or rows (tuples or dicts), by name or by position, each value cast to its column
with Paimon's rules and the column's default filling what is not given. The data files are
written from it (:mod:`schemalab.paimon.write.files`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import (
    TIMESTAMP_ROOTS,
    AtomicType,
    DataField,
    DataType,
    VectorType,
)
from schemalab.types.spark import FIELD_ID_KEY, spark_field, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession


def spark_write_schema(schema: TableSchema) -> Any:
    """The Spark schema data is written with: current names, Parquet field ids on every
    (nested) field."""
    from pyspark.sql import types as st

    return st.StructType([spark_field(f) for f in schema.fields])


def to_frame(spark: SparkSession, data: Any, schema: TableSchema, table: str, *,
             columns: Sequence[str] | None = None, by_position: bool = False) -> DataFrame:
    """Any of a Spark DataFrame, a pandas DataFrame, a list of tuples/dicts/Rows → a Spark
    DataFrame in ``schema`` (names, order, types, field ids). Columns are matched by name
    (``columns`` or the input's own names) or, with ``by_position``, by position as SQL's
    INSERT does. Missing columns are NULL; unknown columns are an error."""
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql import functions as F

    _check_spark_can_tell_names_apart(spark, schema, table)
    if isinstance(data, SparkDataFrame):
        df = data
    else:
        df = _local_to_frame(spark, data, schema, table)
    names = list(columns) if columns is not None else None
    if by_position or names is not None:
        given = names if names is not None else schema.field_names[: len(df.columns)]
        if len(df.columns) != len(given):
            raise SchemaLabError(
                f"Table {table}: {len(df.columns)} values given for {len(given)} columns "
                f"({', '.join(given)})", table=table, rule="insert-arity")
        df = df.toDF(*[f"__sl_in{i}" for i in range(len(df.columns))])
        source = dict(zip(given, df.columns, strict=True))
    else:
        source = {c: c for c in df.columns}
    unknown = [c for c in source if schema.field(c) is None]
    if unknown:
        raise SchemaLabError(
            f"Table {table} has no column {unknown[0]!r} (columns: "
            f"{', '.join(schema.field_names)})", table=table, column=unknown[0],
            rule="column-must-exist")
    given_types = {x.name: x.dataType for x in df.schema.fields}
    out = []
    for i, f in enumerate(schema.fields):
        target = to_spark(f.type)  # nested ROW fields carry their ids in the type
        default = None if f.default_value is None else _default_value(f, table)
        if f.name in source:
            value = F.col("`" + source[f.name].replace("`", "``") + "`")
            col = _at_precision(_checked_cast(value, given_types[source[f.name]], f, i, table),
                                f.type)
            if default is not None:
                col = F.coalesce(col, default)
        elif default is not None:
            col = default
        else:
            if not f.type.nullable:
                raise SchemaLabError(f"Table {table}: column {f.name} is NOT NULL and was not "
                                     "given a value", table=table, column=f.name,
                                     rule="not-null")
            col = F.lit(None).cast(target)
        if isinstance(f.type, VectorType):
            col = _vector_checked(col, f.type, f.name, i, table)
        if not f.type.nullable:
            # Spark's writer does not enforce nullability: without this a NULL lands in a NOT
            # NULL column and every later read of the column is wrong. Failing the job
            # fails the insert before anything is committed (write_files turns the message
            # into a SchemaLabError).
            col = F.when(col.isNull(), F.raise_error(F.lit(
                f"[schemalab:not-null:{i}] Table {table}: column {f.name} is NOT NULL but a "
                "row gives it NULL"))).otherwise(col)
        # The id must sit on the alias: DataFrame.to(schema) loses field metadata when the
        # optimizer drops a projection it sees as a no-op, and the file gets no ids.
        out.append(col.alias(f.name, metadata={FIELD_ID_KEY: f.id}))
    return df.select(*out)


def _vector_checked(col: Column, t: VectorType, name: str, index: int, table: str) -> Column:
    """A VECTOR value as Java Paimon 2.0's writers take it: exactly ``t.length`` elements
    (ParquetRowDataWriter: "Vector length mismatch"), none of them NULL (BinaryVector
    "refuse null elements"). Any other value fails the write, so nothing is committed."""
    from pyspark.sql import functions as F

    def refuse(tag: str, what: str) -> Column:  # tag: "[schemalab:<rule>:<index>]"
        return F.raise_error(F.concat(
            F.lit(f"{tag} Table {table}: column {name} is {t.sql()}, and a row gives it "),
            F.coalesce(col.cast("string"), F.lit("?")),
            F.lit(", a value of "), F.size(col).cast("string"), F.lit(f" elements{what}"))
        ).cast(to_spark(t))

    wrong_length = col.isNotNull() & (F.size(col) != F.lit(t.length))
    null_element = col.isNotNull() & F.exists(col, lambda x: x.isNull())
    return F.when(wrong_length, refuse(
        f"[schemalab:vector-length:{index}]", f"; a {t.sql()} holds exactly {t.length}")).when(
        null_element, refuse(f"[schemalab:vector-element-not-null:{index}]",
                             ", one of them NULL; a VECTOR's elements are never NULL")
    ).otherwise(col)


def _default_value(f: DataField, table: str) -> Column:
    """Column ``f``'s ``defaultValue`` (Paimon 1.2+), which Java Paimon's writer puts in
    place of an omitted *or NULL* value (``DefaultValueRow`` in ``TableWriteImpl``): the text,
    less one pair of enclosing quotes, cast from STRING by Java's rules
    (``DefaultValueUtils.convertDefaultValue``). A text the type cannot hold fails the write."""
    from pyspark.sql import functions as F

    from schemalab.engine.paimon_casts import java_cast
    from schemalab.schema.defaults import unquoted
    from schemalab.types.model import STRING

    literal = F.lit(unquoted(f.default_value or ""))
    cast = java_cast(literal, STRING(), f.type)
    if cast is None:
        return literal.cast(to_spark(f.type))
    if cast.fails is None:
        return cast.value
    return F.when(cast.fails, F.raise_error(F.lit(
        f"Table {table}: the default value {f.default_value} of column {f.name} is not a "
        f"{f.type.sql()} ({cast.failure})"))).otherwise(cast.value)


def _checked_cast(col: Column, given: Any, f: DataField, index: int, table: str) -> Column:
    """``col`` (of Spark type ``given``) cast to column ``f``'s type. A value the type cannot
    hold (1000 for a TINYINT, 'abc' for an INT) fails the write with a message naming the
    table, the column and the value, where Spark's own error names neither table nor column."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    target = to_spark(f.type)
    if _same_shape(given, target) or isinstance(given, st.NullType):
        return col.cast(target)
    if isinstance(target, st.StructType | st.ArrayType | st.MapType) or isinstance(
            given, st.StructType | st.ArrayType | st.MapType):
        return col.cast(target)  # nested values: Spark's own error (it names the field)
    converted = col.try_cast(target)
    message = F.concat(
        F.lit(f"[schemalab:insert-cast:{index}] Table {table}: column {f.name} is "
              f"{f.type}, and the value "), F.coalesce(col.cast("string"), F.lit("?")),
        F.lit(f" ({given.simpleString().upper()}) cannot be stored in it"))
    return F.when(col.isNotNull() & converted.isNull(),
                  F.raise_error(message).cast(target)).otherwise(converted)


def _same_shape(a: Any, b: Any) -> bool:
    """Equal Spark types, ignoring nullability and field metadata (ids)."""
    from pyspark.sql import types as st

    if isinstance(a, st.StructType) and isinstance(b, st.StructType):
        return len(a.fields) == len(b.fields) and all(
            x.name == y.name and _same_shape(x.dataType, y.dataType)
            for x, y in zip(a.fields, b.fields, strict=True))
    if isinstance(a, st.ArrayType) and isinstance(b, st.ArrayType):
        return _same_shape(a.elementType, b.elementType)
    if isinstance(a, st.MapType) and isinstance(b, st.MapType):
        return _same_shape(a.keyType, b.keyType) and _same_shape(a.valueType, b.valueType)
    return bool(a == b)


def _at_precision(col: Column, t: DataType) -> Column:
    """A TIMESTAMP(p) column with p < 6 truncated to p fraction digits. Spark keeps
    microseconds whatever the declared precision, and Paimon readers take the stored value as
    it is: TIMESTAMP(3) must hold milliseconds, as Paimon's writers store it. Truncated
    toward the past, as Paimon's Timestamp keeps floor milliseconds."""
    from pyspark.sql import functions as F

    if not (isinstance(t, AtomicType) and t.root in TIMESTAMP_ROOTS):
        return col
    p = t.precision if t.precision is not None else 6
    if p >= 6:
        return col
    unit = 10 ** (6 - p)
    micros = F.unix_micros(col.cast("timestamp"))
    truncated = F.timestamp_micros(micros - F.pmod(micros, F.lit(unit)))
    return truncated.cast(to_spark(t))


def _check_spark_can_tell_names_apart(spark: SparkSession, schema: TableSchema,
                                      table: str) -> None:
    if str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true":
        return
    seen: dict[str, str] = {}
    for name in schema.field_names:
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise SchemaLabError(
                f"Table {table} has columns {other!r} and {name!r}, which differ only in "
                "case: Spark resolves names case-insensitively (spark.sql.caseSensitive = "
                "false), so it can neither select nor write them apart. Rename one of them "
                "or set spark.sql.caseSensitive = true.", table=table, column=name,
                rule="case-insensitive-names")


def _local_to_frame(spark: SparkSession, data: Any, schema: TableSchema,
                    table: str) -> DataFrame:
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        if data.empty and len(data.columns) == 0:
            return spark.createDataFrame([], spark_write_schema(schema))
        return spark.createDataFrame(data)
    rows = list(data)
    if not rows:
        return spark.createDataFrame([], spark_write_schema(schema))
    first = rows[0]
    if isinstance(first, dict):
        # Keys are column names: one that is not a column must fail as an unknown column of
        # a DataFrame does, not be dropped silently.
        for r in rows:
            unknown = [k for k in r if schema.field(k) is None]
            if unknown:
                raise SchemaLabError(
                    f"Table {table} has no column {unknown[0]!r} (columns: "
                    f"{', '.join(schema.field_names)})", table=table, column=str(unknown[0]),
                    rule="column-must-exist")
        names = [n for n in schema.field_names if any(n in r for r in rows)]
        tuples = [tuple(r.get(n) for n in names) for r in rows]
        sub = [schema.field(n) for n in names]
        return _rows_frame(spark, tuples, [f for f in sub if f], table)
    width = len(first)
    ragged = next((r for r in rows if len(r) != width), None)
    if ragged is not None:
        raise SchemaLabError(
            f"Table {table}: rows of {width} and of {len(ragged)} values in one insert; give "
            "every row the same columns", table=table, rule="insert-arity")
    if width > len(schema.fields):
        raise SchemaLabError(
            f"Table {table}: {width} values given for {len(schema.fields)} columns "
            f"({', '.join(schema.field_names)})", table=table, rule="insert-arity")
    return _rows_frame(spark, [tuple(r) for r in rows], list(schema.fields[:width]), table)


def _rows_frame(spark: SparkSession, rows: list[tuple[Any, ...]], fields: list[DataField],
                table: str) -> DataFrame:
    """Python rows as a DataFrame of the columns ``fields``. PySpark checks every value
    against its column's type here; a value that does not fit is an error naming the table
    and the column (PySpark's own names neither)."""
    try:
        return spark.createDataFrame(rows, _nullable_schema(fields))
    except (TypeError, ValueError) as e:  # PySparkTypeError / PySparkValueError
        for i, f in enumerate(fields):
            try:
                spark.createDataFrame([(r[i],) for r in rows], _nullable_schema([f]))
            except (TypeError, ValueError) as one:
                detail = str(one).splitlines()[0] if str(one) else type(one).__name__
                raise SchemaLabError(
                    f"Table {table}: column {f.name} is {f.type}, and a value given for it "
                    f"cannot be stored in it: {detail}", table=table, column=f.name,
                    rule="insert-cast") from None
        raise e


def _nullable_schema(fields: list[DataField]) -> Any:
    from pyspark.sql import types as st

    return st.StructType([st.StructField(f.name, to_spark(f.type), True) for f in fields])
