"""Writing primary-key tables (as Paimon's ``MergeTreeWriter``): the rows of one commit are
merged per key by the table's merge function, oldest first in the order given (Paimon's write
buffer, ``sequence.field`` included), numbered per (partition, bucket) from one above the
highest sequence number already live there (an empty bucket starts at 0), sorted by key and
written at level 0, one file per bucket. A row's kind is +I (or the ``rowkind.field`` column's
``+I``/``-U``/``+U``/``-D``); with ``ignore-delete`` -U/-D rows are not written.
``_MIN_KEY``/``_MAX_KEY`` are the file's first and last key, ``_KEY_STATS`` the stats of the
key columns, ``_DELETE_ROW_COUNT`` its retract rows.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.keyed import (
    INSERT,
    RETRACT,
    ROW_KINDS,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    merge_key_columns,
)
from schemalab.engine.merge.function import MergeInput
from schemalab.engine.merge.keyed_read import FUNCTIONS
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.scan import quote
from schemalab.engine.spark_reader import all_nullable
from schemalab.errors import CommitConflictError
from schemalab.paimon import binaryrow
from schemalab.paimon.listing import ManifestReader, live_files, partition_values
from schemalab.paimon.manifest import ManifestEntry, SimpleStats
from schemalab.paimon.merge_options import merge_options
from schemalab.paimon.primary_key import (
    KEY_FIELD_ID_START,
    KEY_PREFIX,
    SEQUENCE_NUMBER_ID,
    VALUE_KIND_ID,
    check_writable,
)
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.paimon.write import files as write
from schemalab.paimon.write.bucket_column import bucket_column
from schemalab.paimon.write.files import WriteTarget
from schemalab.schema.table_schema import TableSchema
from schemalab.types.spark import FIELD_ID_KEY, spark_field, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame



#: internal column names of a primary-key write
_ORD = "__sl_ord"
_POS = "__sl_pos"
_BASE = "__sl_base"


def write_entries(target: WriteTarget, df: DataFrame, *, kind: int = INSERT
                  ) -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
    """Write ``df`` (rows in the target's schema, as
    :func:`~schemalab.engine.frames.to_frame` gives them) as key-value files with row
    kind ``kind`` (inserts: or the ``rowkind.field`` column's); return the files and their
    ADD entries (not yet committed)."""
    from pyspark.sql import functions as F

    schema = target.schema
    trimmed = check_writable(schema, target.name)
    opts = merge_options(schema, target.name)
    bucket = bucket_column(schema, target.name)
    assert bucket is not None  # check_writable: primary-key writes have fixed buckets
    bucket_col = write.BUCKET_COLUMN
    kinds = _row_kind(schema, target.name, opts.rowkind_field) if kind == INSERT \
        else F.lit(kind).cast("tinyint")
    out = df.withColumn(KIND_COL, kinds).withColumn(SEQ_COL, F.monotonically_increasing_id())
    if opts.ignore_delete:
        out = out.where(~F.col(KIND_COL).isin(*RETRACT))
    m = MergeInput(target.name, tuple(merge_key_columns(schema)), schema.fields, opts)
    out = FUNCTIONS[opts.engine](out, m)
    out = out.withColumn(_ORD, F.col(SEQ_COL)).withColumn(bucket_col, bucket)
    out = _number(target, out, bucket_col)
    return write_key_values(target, out.withColumn(SEQ_COL, F.col(_POS)), trimmed)


def write_key_values(target: WriteTarget, df: DataFrame, trimmed: list[str]
                     ) -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
    """Write ``df`` (one row per key, in the target's schema, with each row's sequence
    number and kind as ``__sl_seq``, ``__sl_kind``) as one sorted key-value file per
    bucket; return the files and their ADD entries at level 0."""
    from pyspark.sql import functions as F

    schema = target.schema
    bucket = bucket_column(schema, target.name)
    assert bucket is not None  # primary-key tables written here have fixed buckets
    bucket_col = write.BUCKET_COLUMN
    fields = {f.name: f for f in schema.fields}
    key_cols = [F.col(quote(k)).alias(
        KEY_PREFIX + k, metadata={FIELD_ID_KEY: KEY_FIELD_ID_START + fields[k].id})
        for k in trimmed]
    system = [F.col(SEQ_COL).cast("bigint").alias(SEQUENCE_NUMBER,
                                                  metadata={FIELD_ID_KEY: SEQUENCE_NUMBER_ID}),
              F.col(KIND_COL).cast("tinyint").alias(VALUE_KIND,
                                                    metadata={FIELD_ID_KEY: VALUE_KIND_ID})]
    # Re-typed and re-labelled: a fold through structs loses the field ids Spark writes
    values = [F.col(quote(f.name)).cast(all_nullable(to_spark(f.type)))
              .alias(f.name, metadata=spark_field(f).metadata) for f in schema.fields]
    kv = df.withColumn(bucket_col, bucket).select(*key_cols, *system, *values,
                                                  F.col(bucket_col))
    files = write.write_files(target.spark, kv, target.path, schema, table=target.name,
                              bucket_column=F.col(bucket_col),
                              sort_by=[quote(KEY_PREFIX + k) for k in trimmed])
    entries = [_entry(f, schema, trimmed) for f in files]
    return files, entries


def _row_kind(schema: TableSchema, table: str, field: str | None) -> Column:
    """Each inserted row's kind: +I, or the ``rowkind.field`` column's value (Java's
    ``RowKindGenerator``: ``+I``, ``-U``, ``+U`` or ``-D``; anything else fails the write)."""
    from pyspark.sql import functions as F

    if field is None:
        return F.lit(INSERT).cast("tinyint")
    col = F.col(quote(field))
    out = F.when(col.isNull(), F.raise_error(F.lit(
        f"Table {table}: rowkind.field `{field}` is NULL; it must hold +I, -U, +U or -D.")))
    for byte, text in ROW_KINDS.items():
        out = out.when(col == text, F.lit(byte))
    message = F.concat(F.lit(f"Table {table}: rowkind.field `{field}` holds '"), col,
                       F.lit("', which is not a row kind (+I, -U, +U or -D)."))
    return out.otherwise(F.raise_error(message)).cast("tinyint")


def _number(target: WriteTarget, df: DataFrame, bucket_col: str) -> DataFrame:
    """Column ``_POS``: each row's sequence number, counting on per (partition, bucket) from
    one above the highest sequence number live there (as pypaimon's ``max_seq_number``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    schema = target.schema
    parts = [quote(k) for k in schema.partition_keys]
    pos = Window.partitionBy(*[F.col(p) for p in parts], F.col(bucket_col)) \
        .orderBy(F.col(_ORD))
    df = df.withColumn(_POS, F.row_number().over(pos))
    base = max_sequence_numbers(target.path, schema, target.reader,
                                meta_path=target.meta_path)
    if not base:
        return df.withColumn(_POS, F.col(_POS) - 1)
    part_types = [schema.type_of(k) for k in schema.partition_keys]
    base_schema = st.StructType(
        [st.StructField(f"__sl_bp{i}", to_spark(t), True) for i, t in enumerate(part_types)]
        + [st.StructField("__sl_bb", st.IntegerType(), False),
           st.StructField(_BASE, st.LongType(), False)])
    rows = [(*p, b, s) for (p, b), s in sorted(base.items(), key=repr)]
    bdf = target.spark.createDataFrame(rows, base_schema)
    conds = [F.col(p) == F.col(f"__sl_bp{i}") for i, p in enumerate(parts)]
    conds.append(F.col(bucket_col) == F.col("__sl_bb"))
    joined = df.join(F.broadcast(bdf), on=functools.reduce(operator.and_, conds), how="left")
    seq = F.coalesce(F.col(_BASE), F.lit(-1)) + F.col(_POS)
    return joined.withColumn(_POS, seq).drop(_BASE, "__sl_bb",
                                             *[f"__sl_bp{i}" for i in range(len(parts))])


def max_sequence_numbers(table_path: str, schema: TableSchema,
                         reader: ManifestReader | None = None, *, meta_path: str | None = None
                         ) -> dict[tuple[tuple[Any, ...], int], int]:
    """The highest live sequence number of each (partition values, bucket) at the latest
    snapshot (of the branch whose snapshot/ is under ``meta_path``; default: main's)."""
    out: dict[tuple[tuple[Any, ...], int], int] = {}
    latest = SnapshotManager(meta_path or table_path).latest()
    for e in [] if latest is None else live_files(table_path, latest, reader):
        key = (partition_values(e, schema), e.bucket)
        out[key] = max(out.get(key, -1), e.file.max_sequence_number)
    return out


def _entry(f: write.WrittenFile, schema: TableSchema, trimmed: list[str]) -> ManifestEntry:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    key_names = [KEY_PREFIX + k for k in trimmed]
    # ParquetFile, not read_table: read_table would take `dt=...` in the path for a column
    t = pq.ParquetFile(fileio.open_input(f.path)).read(
        columns=[*key_names, SEQUENCE_NUMBER, VALUE_KIND])
    fields = [schema.field(k) for k in trimmed]
    key_types = [fld.type for fld in fields if fld is not None]
    first = [write.normalize_stat(t.column(n)[0].as_py(), fld)
             for n, fld in zip(key_names, fields, strict=True) if fld is not None]
    last = [write.normalize_stat(t.column(n)[-1].as_py(), fld)
            for n, fld in zip(key_names, fields, strict=True) if fld is not None]
    seqs = pc.min_max(t.column(SEQUENCE_NUMBER))
    retracts = pc.sum(pc.is_in(t.column(VALUE_KIND), value_set=pa.array(RETRACT, pa.int8())))
    idx = [schema.field_names.index(k) for k in trimmed]
    key_stats = SimpleStats.of([f.stats[i].min for i in idx], [f.stats[i].max for i in idx],
                               [f.stats[i].null_count for i in idx], key_types)
    return write.data_file_entry(
        f, schema, min_seq=seqs["min"].as_py(), max_seq=seqs["max"].as_py(),
        min_key=binaryrow.encode_row(first, key_types),
        max_key=binaryrow.encode_row(last, key_types), key_stats=key_stats,
        delete_rows=retracts.as_py() or 0)


def sequence_guard(table_path: str, table: str, entries: Sequence[ManifestEntry],
                   then: Callable[[Snapshot | None], list[ManifestEntry]] | None = None, *,
                   reader: ManifestReader | None = None
                   ) -> Callable[[Snapshot | None], list[ManifestEntry]]:
    """A ``replaces`` callback for ``commit.commit`` that refuses the commit when the snapshot
    it would build on has, in a bucket this commit writes to, a sequence number as high as
    this commit's: another writer committed there after these files were numbered, and the
    merge could no longer tell which version of a key is newer. ``then`` (INSERT OVERWRITE's
    callback) gives the DELETE entries, whose files do not count."""
    lowest: dict[tuple[bytes, int], int] = {}
    for e in entries:
        k = (e.partition, e.bucket)
        lowest[k] = min(lowest.get(k, e.file.min_sequence_number), e.file.min_sequence_number)

    def replaces(snap: Snapshot | None) -> list[ManifestEntry]:
        deleted = then(snap) if then is not None else []
        gone = {(d.partition, d.bucket, d.file.file_name) for d in deleted}
        for e in [] if snap is None else live_files(table_path, snap, reader):
            ours = lowest.get((e.partition, e.bucket))
            if ours is not None and e.file.max_sequence_number >= ours \
                    and (e.partition, e.bucket, e.file.file_name) not in gone:
                raise CommitConflictError(
                    f"Table {table}: another commit (snapshot {snap.id if snap else '?'}) "
                    f"wrote sequence numbers up to {e.file.max_sequence_number} to bucket "
                    f"{e.bucket} while this write numbered its rows from {ours}, so the "
                    "merge could not tell which version of a key is newer. Nothing of this "
                    "commit is visible; run it again.", table=table,
                    rule="primary-key-sequence-conflict")
        return deleted

    return replaces
