"""Writing data files: a Spark DataFrame in the current schema (from any input:
:mod:`schemalab.engine.frames`) → Parquet files in Paimon's layout
(``<k>=<v>/bucket-<b>/data-<uuid>-<n>.parquet``), each described by its row count, size,
partition, bucket and full value statistics read back from the Parquet footer.

Spark writes into a hidden staging directory inside the table; files are then moved to their
final names. Until a snapshot references them they are invisible to readers, so a writer that
dies leaves only orphans (``schemalab clean-orphans`` removes them), never a torn table.
"""

from __future__ import annotations

import decimal
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.parquet_types import ColumnStorage
from schemalab.engine.spark_write import (
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    STAGING_PREFIX,
    as_java_stores,
    staged_parquet_files,
    write_error,
)
from schemalab.errors import SchemaLabError
from schemalab.paimon import binaryrow, paths
from schemalab.paimon.listing import ManifestReader
from schemalab.paimon.manifest import DataFileMeta, FileKind, ManifestEntry, SimpleStats
from schemalab.paimon.primary_key import KEY_PREFIX
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import (
    AtomicType,
    DataField,
    RowType,
    TypeRoot,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.paimon.commit import SnapshotCommitter

_BUCKET_COL = "__sl_bucket"
#: the column ``write_files`` partitions files into buckets by (primary-key writes set it)
BUCKET_COLUMN = _BUCKET_COL
_PART_COL = "__sl_p"


@dataclass(frozen=True)
class WriteTarget:
    """What a write needs of a table: its directory, its name for messages, the schema the
    rows are written in, and how to get a SparkSession (asked only once rows are written, so
    a write refused by the rules never starts Spark). ``reader`` is the table object's
    manifest reader, so a write lists the files its table object has read already without
    reading their manifests again."""

    path: str
    name: str
    schema: TableSchema
    session: Callable[[], SparkSession]
    reader: ManifestReader | None = None
    #: where the branch written to keeps its schema/ and snapshot/ (None: ``path``, main)
    meta_path: str | None = None
    #: how snapshots are committed (None: files in ``snapshot/``; a catalog's commit API)
    committer: SnapshotCommitter | None = None

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


def write_files(spark: SparkSession, df: DataFrame, table_path: str, schema: TableSchema, *,
                bucket_column: Any = None, sort_by: Sequence[str] | None = None,
                table: str | None = None, drop: Sequence[str] = ()) -> list[WrittenFile]:
    """Write ``df`` (already in ``schema``) as Paimon data files. ``bucket_column`` is a Spark
    column expression giving each row's bucket for fixed-bucket tables (else bucket 0).
    ``sort_by`` (primary-key files) writes one file per bucket, its rows sorted by those
    columns; ``drop`` names columns (of ``sort_by``) left out of the files once sorted.
    Returns the files in their final places; no snapshot references them yet."""
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
    out, storage = as_java_stores(out, schema, KEY_PREFIX)
    if sort_by is not None:
        # One task per (partition, bucket), sorted by the key after the write's own grouping
        # columns, so Spark's writer (which needs that grouping order) adds no sort of its own
        # and each file comes out sorted by key.
        out = out.repartition(*group_cols) if group_cols else out.coalesce(1)
        if group_cols or sort_by:  # an unpartitioned, unbucketed, unsorted write: one file
            out = out.sortWithinPartitions(*group_cols, *sort_by)
    if drop:
        out = out.drop(*drop)
    try:
        writer = out.write.mode("overwrite").option("compression", "zstd") \
            .option("parquet.block.size", str(ROW_GROUP_BYTES)) \
            .option("parquet.block.row.count.limit", str(ROW_GROUP_ROWS))
        if group_cols:
            writer = writer.partitionBy(*group_cols)
        try:
            writer.parquet(fileio.spark_uri(staging))
        except Exception as e:
            error = write_error(e, fileio.spark_uri(staging), schema, table)
            if error is None:
                raise
            raise error from None
        return _place_files(staging, table_path, schema, bucket_column is not None, storage)
    finally:
        fileio.delete_dir(staging)


def _place_files(staging: str, table_path: str, schema: TableSchema, bucketed: bool,
                 storage: dict[str, ColumnStorage] | None = None) -> list[WrittenFile]:
    import pyarrow.parquet as pq

    prefix = f"data-{uuid.uuid4()}-"
    placed: list[WrittenFile] = []
    counter = 0
    for d, src in staged_parquet_files(staging, storage):
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
