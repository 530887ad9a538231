"""Writing data files: any input → a Spark DataFrame in the current schema → Parquet files in
Paimon's layout (``<k>=<v>/bucket-<b>/data-<uuid>-<n>.parquet``), each described by its row
count, size, partition, bucket and full value statistics read back from the Parquet footer.

Spark writes into a hidden staging directory inside the table; files are then moved to their
final names. Until a snapshot references them they are invisible to readers, so a writer that
dies leaves only orphans (``schemalab clean-orphans`` removes them), never a torn table.
"""

from __future__ import annotations

import decimal
import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.parquet_footer import annotate_columns
from schemalab.engine.parquet_types import ColumnStorage, column_storage
from schemalab.engine.spark_reader import quote, store_error
from schemalab.errors import SchemaLabError
from schemalab.paimon import binaryrow, paths
from schemalab.paimon.manifest import DataFileMeta, FileKind, ManifestEntry, SimpleStats
from schemalab.paimon.primary_key import KEY_PREFIX
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import (
    TIMESTAMP_ROOTS,
    AtomicType,
    DataField,
    DataType,
    RowType,
    TypeRoot,
)
from schemalab.types.spark import FIELD_ID_KEY, spark_field, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

STAGING_PREFIX = ".staging-"
#: starts the message of the Spark error a bad value raises while writing: a NULL in a NOT NULL
#: column, or a value the column's type cannot hold. ``[schemalab:<rule>:<column index>]``
WRITE_ERROR = re.compile(r"\[schemalab:([a-z-]+):(\d+)\] ?")
_BUCKET_COL = "__sl_bucket"
#: the column ``write_files`` partitions files into buckets by (primary-key writes set it)
BUCKET_COLUMN = _BUCKET_COL
_PART_COL = "__sl_p"
#: Parquet row groups of at most this many (buffered) bytes and rows: a reader splits a file
#: at row groups only, so a compacted file of 10M rows written as one 128 MB row group
#: (Parquet's default) was read by one task while the other core idled (5.3 s vs 3.9 s for
#: the same rows in 20 files, bench/evolved_read.py --compact); by bytes alone, well-encoded
#: rows still made groups of 6.5M rows
ROW_GROUP_BYTES = 32 * 1024 * 1024
ROW_GROUP_ROWS = 500_000


@dataclass(frozen=True)
class WriteTarget:
    """What a write needs of a table: its directory, its name for messages, the schema the
    rows are written in, and how to get a SparkSession (asked only once rows are written, so
    a write refused by the rules never starts Spark)."""

    path: str
    name: str
    schema: TableSchema
    session: Callable[[], SparkSession]

    @property
    def spark(self) -> SparkSession:
        return self.session()


@dataclass(frozen=True)
class ColumnStats:
    min: Any
    max: Any
    null_count: int | None


@dataclass(frozen=True)
class WrittenFile:
    path: str
    file_name: str
    row_count: int
    file_size: int
    partition: tuple[Any, ...]
    bucket: int
    stats: tuple[ColumnStats, ...]


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


def _default_value(f: DataField, table: str) -> Column:
    """Column ``f``'s ``defaultValue`` (Paimon 1.2+), which Java Paimon's writer puts in
    place of an omitted *or NULL* value (``DefaultValueRow`` in ``TableWriteImpl``): the text,
    less one pair of enclosing quotes, cast from STRING by Java's rules
    (``DefaultValueUtils.convertDefaultValue``). A text the type cannot hold fails the write."""
    from pyspark.sql import functions as F

    from schemalab.engine.paimon_casts import java_cast
    from schemalab.types.model import STRING

    text = f.default_value or ""
    if len(text) >= 2 and text.startswith("'") and text.endswith("'"):
        text = text[1:-1]
    literal = F.lit(text)
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


def write_files(spark: SparkSession, df: DataFrame, table_path: str, schema: TableSchema, *,
                bucket_column: Any = None, sort_by: Sequence[str] | None = None,
                table: str | None = None) -> list[WrittenFile]:
    """Write ``df`` (already in ``schema``) as Paimon data files. ``bucket_column`` is a Spark
    column expression giving each row's bucket for fixed-bucket tables (else bucket 0).
    ``sort_by`` (primary-key files) writes one file per bucket, its rows sorted by those
    columns. Returns the files in their final places; no snapshot references them yet."""
    from pyspark.sql import functions as F

    staging = os.path.join(table_path, f"{STAGING_PREFIX}{uuid.uuid4().hex}")
    part_keys = list(schema.partition_keys)
    group_cols = []
    out = df
    for i, k in enumerate(part_keys):
        name = f"{_PART_COL}{i}"
        out = out.withColumn(name, F.col("`" + k.replace("`", "``") + "`"))
        group_cols.append(name)
    if bucket_column is not None:
        out = out.withColumn(_BUCKET_COL, bucket_column)
        group_cols.append(_BUCKET_COL)
    out, storage = _as_java_stores(out, schema)
    if sort_by is not None:
        # One task per (partition, bucket), sorted by the key after the write's own grouping
        # columns, so Spark's writer (which needs that grouping order) adds no sort of its own
        # and each file comes out sorted by key.
        out = out.repartition(*group_cols) if group_cols else out.coalesce(1)
        if group_cols or sort_by:  # an unpartitioned, unbucketed, unsorted write: one file
            out = out.sortWithinPartitions(*group_cols, *sort_by)
    try:
        writer = out.write.mode("overwrite").option("compression", "zstd") \
            .option("parquet.block.size", str(ROW_GROUP_BYTES)) \
            .option("parquet.block.row.count.limit", str(ROW_GROUP_ROWS))
        if group_cols:
            writer = writer.partitionBy(*group_cols)
        try:
            writer.parquet(fileio.spark_uri(staging))
        except Exception as e:
            m = WRITE_ERROR.search(str(e))
            if m is None:
                error = store_error(e, fileio.spark_uri(staging))
                if error is not None:
                    raise error from None
                raise
            message = str(e)[m.end():].split(" SQLSTATE")[0].split("\n")[0]
            column = schema.fields[int(m.group(2))].name
            raise SchemaLabError(message.strip(), table=table, column=column,
                                 rule=m.group(1)) from None
        return _place_files(staging, table_path, schema, bucket_column is not None, storage)
    finally:
        fileio.delete_dir(staging)


def _as_java_stores(df: DataFrame, schema: TableSchema
                    ) -> tuple[DataFrame, dict[str, ColumnStorage]]:
    """``df`` with every column whose type Java Paimon stores otherwise than Spark would
    turned into what Java stores (see :mod:`schemalab.engine.parquet_types`), and how each
    such column's footer must be completed once Spark wrote it. Key columns of primary-key
    files (``_KEY_<k>``) are stored as their field."""
    from pyspark.sql import functions as F

    storage: dict[str, ColumnStorage] = {}
    cols = []
    for sf in df.schema.fields:
        f = schema.field(sf.name)
        if f is None and sf.name.startswith(KEY_PREFIX):
            f = schema.field(sf.name[len(KEY_PREFIX):])
        how = column_storage(f.type) if f is not None else None
        if how is None or (how.convert is None and not how.int96):
            cols.append(F.col(quote(sf.name)))
            continue
        storage[sf.name] = how
        cols.append(F.col(quote(sf.name)) if how.convert is None else
                    how.convert(F.col(quote(sf.name))).alias(sf.name, metadata=sf.metadata))
    return (df.select(*cols) if storage else df), storage


def _complete_footer(path: str, storage: dict[str, ColumnStorage]) -> None:
    annotations = {(name, *p): a for name, how in storage.items() for p, a in how.annotations}
    int96 = [(name, *p) for name, how in storage.items() for p in how.int96]
    if annotations or int96:
        annotate_columns(path, annotations, int96)


def _place_files(staging: str, table_path: str, schema: TableSchema, bucketed: bool,
                 storage: dict[str, ColumnStorage] | None = None) -> list[WrittenFile]:
    import pyarrow.parquet as pq

    prefix = f"data-{uuid.uuid4()}-"
    placed: list[WrittenFile] = []
    counter = 0
    for d, _, names in sorted(fileio.walk(staging)):
        for n in sorted(names):
            if not n.endswith(".parquet"):
                continue
            src = os.path.join(d, n)
            if storage:
                _complete_footer(src, storage)
            meta = pq.ParquetFile(fileio.open_input(src)).metadata
            if meta.num_rows == 0:
                continue
            stats = file_stats(meta, schema)
            partition = tuple(
                _partition_value(stats[schema.field_names.index(k)], meta.num_rows, src,
                                 schema.field_names.index(k), schema.field(k))
                for k in schema.partition_keys)
            bucket = _bucket_from_dir(fileio.display(d, staging)) if bucketed else 0
            dest_dir = paths.bucket_dir(
                table_path, [(k, schema.type_of(k), v) for k, v in
                             zip(schema.partition_keys, partition, strict=True)],
                bucket, paths.PartitionNaming.of(schema.options))
            fileio.makedirs(dest_dir)
            file_name = f"{prefix}{counter}.parquet"
            counter += 1
            dest = os.path.join(dest_dir, file_name)
            fileio.move(src, dest)
            placed.append(WrittenFile(dest, file_name, meta.num_rows, fileio.size(dest),
                                      partition, bucket, stats))
    return placed


def _bucket_from_dir(rel: str) -> int:
    for part in rel.split("/"):
        if part.startswith(f"{_BUCKET_COL}="):
            return int(part.split("=", 1)[1])
    raise SchemaLabError(f"staging directory {rel!r} has no bucket", rule="internal-error")


def _partition_value(stats: ColumnStats, num_rows: int, path: str, index: int,
                     f: DataField | None) -> Any:
    if stats.min is None:
        if stats.null_count == num_rows:
            return None
        # No min/max in the footer although there are values (Parquet writers drop
        # statistics of long values, and some types have none): read the value itself
        # rather than file the rows under the NULL partition.
        import pyarrow.parquet as pq

        assert f is not None
        # by name: primary-key files have key and system columns before the values
        values = pq.ParquetFile(fileio.open_input(path)).read(
            columns=[f.name]).column(0).to_pylist()
        return _normalize(values[0], f)
    if stats.min != stats.max and not (_is_nan(stats.min) and _is_nan(stats.max)):
        # pragma: no cover - Spark's partitionBy guarantees one value per file
        raise SchemaLabError("a data file spans two partitions", rule="internal-error")
    return stats.min


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def file_stats(meta: Any, schema: TableSchema) -> tuple[ColumnStats, ...]:
    """Min, max and null count of every top-level column, combined over row groups.
    Nested columns (ROW/ARRAY/MAP) have no min/max, as in Paimon."""
    # Leaf columns are found by position, not by dotted path: a top-level column named
    # "a.b" and field b of a ROW column "a" have the same path string. The file's own
    # top-level fields say how many leaves each column spans.
    first_leaf: dict[str, int] = {}
    try:
        leaf = 0
        for af in meta.schema.to_arrow_schema():
            first_leaf.setdefault(af.name, leaf)
            leaf += _leaf_count(af.type)
    except (ValueError, TypeError, NotImplementedError):  # a type pyarrow cannot map
        for i in range(meta.num_columns):
            first_leaf.setdefault(meta.schema.column(i).path, i)
    out = []
    for f in schema.fields:
        idx = first_leaf.get(f.name) if isinstance(f.type, AtomicType) else None
        if idx is not None and (idx >= meta.num_columns
                                or meta.schema.column(idx).name != f.name):
            idx = None
        if idx is None:
            out.append(ColumnStats(None, None, None if not isinstance(f.type, AtomicType)
                                   else meta.num_rows))
            continue
        lo = hi = None
        nulls: int | None = 0
        complete = True
        for rg in range(meta.num_row_groups):
            st = meta.row_group(rg).column(idx).statistics
            if st is None:
                nulls = None
                complete = False
                continue
            if nulls is not None:
                nulls = nulls + st.null_count if st.has_null_count else None
            bounds = _min_max(st, f) if st.has_min_max else None
            if bounds is None:
                # A row group without bounds (e.g. all NULL) leaves the others valid, but
                # one whose bounds cannot be read makes any file-wide bound a guess.
                complete = complete and (st.has_null_count and st.null_count
                                         == meta.row_group(rg).num_rows)
                continue
            mn, mx = bounds
            lo = mn if lo is None or mn < lo else lo
            hi = mx if hi is None or mx > hi else hi
        if not complete:
            lo = hi = None
        out.append(ColumnStats(_normalize(lo, f), _normalize(hi, f), nulls))
    return tuple(out)


def _min_max(st: Any, f: DataField) -> tuple[Any, Any] | None:
    """A row group's (min, max) of column ``f``, or None when they cannot be read."""
    try:
        return st.min, st.max
    except NotImplementedError:
        # pyarrow (< 20) cannot convert statistics of a DECIMAL stored as INT32/INT64, which
        # is how Spark writes precision <= 18: every DECIMAL(10, 2) column. The raw values
        # are the unscaled integers.
        if isinstance(f.type, AtomicType) and f.type.root is TypeRoot.DECIMAL \
                and isinstance(st.min_raw, int) and isinstance(st.max_raw, int):
            scale = f.type.scale or 0
            return (decimal.Decimal(st.min_raw).scaleb(-scale),
                    decimal.Decimal(st.max_raw).scaleb(-scale))
        return None


def _leaf_count(t: Any) -> int:
    """How many Parquet leaf columns an Arrow type is stored as."""
    import pyarrow as pa

    if pa.types.is_struct(t):
        return sum(_leaf_count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_count(t.value_type)
    return 1


def normalize_stat(value: Any, f: DataField) -> Any:
    """A value read back from a data file as the Python value BinaryRow encodes."""
    return _normalize(value, f)


def _normalize(value: Any, f: DataField) -> Any:
    """Footer statistics as the Python values BinaryRow encodes."""
    import datetime as dt

    if value is None:
        return None
    if isinstance(f.type, RowType):
        return None
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


#: DataFileMeta._FILE_SOURCE of files an INSERT writes (Java's FileSource.APPEND)
FILE_SOURCE_APPEND = 0


def total_buckets(schema: TableSchema) -> int:
    return int(schema.effective_options().get("bucket", "-1"))


def data_file_entry(f: WrittenFile, schema: TableSchema, *, min_seq: int = 0,
                    max_seq: int = 0, min_key: bytes = binaryrow.EMPTY_ROW,
                    max_key: bytes = binaryrow.EMPTY_ROW,
                    key_stats: SimpleStats | None = None,
                    delete_rows: int = 0) -> ManifestEntry:
    """The ADD entry of a written file, with full value stats over the atomic columns.
    ``delete_rows``: its retract records (primary-key files), ``_DELETE_ROW_COUNT``."""
    part_types = [schema.type_of(k) for k in schema.partition_keys]
    atomic = [(i, fld) for i, fld in enumerate(schema.fields) if isinstance(fld.type, AtomicType)]
    all_atomic = len(atomic) == len(schema.fields)
    stats = SimpleStats.of([f.stats[i].min for i, _ in atomic],
                           [f.stats[i].max for i, _ in atomic],
                           [f.stats[i].null_count for i, _ in atomic],
                           [fld.type for _, fld in atomic])
    meta = DataFileMeta(
        file_name=f.file_name, file_size=f.file_size, row_count=f.row_count,
        min_key=min_key, max_key=max_key,
        key_stats=key_stats if key_stats is not None else SimpleStats(),
        value_stats=stats, min_sequence_number=min_seq, max_sequence_number=max_seq,
        schema_id=schema.id, level=0, extra_files=(), creation_time=int(time.time() * 1000),
        delete_row_count=delete_rows, embedded_index=None, file_source=FILE_SOURCE_APPEND,
        # null: the stats cover every field of the file's schema, in order
        value_stats_cols=None if all_atomic else tuple(fld.name for _, fld in atomic),
    )
    return ManifestEntry(FileKind.ADD, binaryrow.encode_row(list(f.partition), part_types),
                         f.bucket, total_buckets(schema), meta)
