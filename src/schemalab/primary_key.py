"""Primary-key tables: Paimon's key-value file layout and its deduplicate merge engine.

A primary-key table's data files hold, before the value columns (the whole row, under the
names of the schema it was written with), the trimmed primary key as ``_KEY_<pk>`` columns,
``_SEQUENCE_NUMBER`` (BIGINT) and ``_VALUE_KIND`` (TINYINT: 0 ``+I``, 1 ``-U``, 2 ``+U``,
3 ``-D``). Every row of a key lives in the bucket Paimon's bucket function gives it.

Writing (as pypaimon's ``KeyValueDataWriter``): rows of one commit are folded per key (the
last one given wins), numbered per (partition, bucket) from one above the highest sequence
number already live there (an empty bucket starts at 0), sorted by key and written at
level 0, one file per bucket. ``_MIN_KEY``/``_MAX_KEY`` are the file's first and last key,
``_KEY_STATS`` the stats of the key columns, ``_DELETE_ROW_COUNT`` its retract rows.

Reading (the deduplicate merge engine): each group of files is first evolved to the schema
read (renamed, retyped, added and dropped columns as for append tables), and only then are
the rows of one key merged, so a renamed or retyped column merges correctly: the version
with the highest sequence number wins, and a key whose winner is a delete is gone.

    >>> wh.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES "   # doctest: +SKIP
    ...        "('primary-key' = 'id', 'bucket' = '2')")
    >>> wh.sql("INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b')")  # doctest: +SKIP
    >>> print(wh.table("t").explain_read(key={"id": 1}).key)     # doctest: +SKIP
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import binaryrow, write
from schemalab import commit as commits
from schemalab.errors import CommitConflictError, SchemaLabError
from schemalab.manifest import ManifestEntry, SimpleStats
from schemalab.read import quote
from schemalab.schema import TableSchema
from schemalab.types import FIELD_ID_KEY, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.read import ReadPlan
    from schemalab.snapshot import Snapshot
    from schemalab.table import Table

KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
#: Java's SpecialFields: key columns carry the value field's id plus Integer.MAX_VALUE / 2
KEY_FIELD_ID_START = (2**31 - 1) // 2
SEQUENCE_NUMBER_ID = 2**31 - 2
VALUE_KIND_ID = 2**31 - 3

#: RowKind bytes
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
ROW_KINDS = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}
RETRACT = (UPDATE_BEFORE, DELETE)

#: internal Spark column names of a merge read
SEQ_COL = "__sl_seq"
KIND_COL = "__sl_kind"
FILE_COL = "__sl_file"
_ORD = "__sl_ord"
_RANK = "__sl_rank"
_MAX_SEQ = "__sl_max_seq"
_POS = "__sl_pos"
_BASE = "__sl_base"


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def trimmed_primary_keys(schema: TableSchema, table: str) -> list[str]:
    """The key of the table's files: the primary key without the partition keys (Java's
    ``TableSchema.trimmedPrimaryKeys``, with its messages)."""
    pk, parts = list(schema.primary_keys), list(schema.partition_keys)
    if not set(parts) <= set(pk):
        raise SchemaLabError(
            f"Primary key constraint {_jlist(pk)} should include all partition fields "
            f"{_jlist(parts)} (table {table})", table=table, rule="primary-key-partition")
    trimmed = [k for k in pk if k not in parts]
    if not trimmed:
        raise SchemaLabError(
            f"Primary key constraint {_jlist(pk)} should not be same with partition fields "
            f"{_jlist(parts)}, this will result in only one record in a partition (table "
            f"{table})", table=table, rule="primary-key-partition")
    return trimmed


def _jlist(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


def check_merge_engine(schema: TableSchema, table: str) -> None:
    """Refuse options that change how rows merge: reading such a table with the deduplicate
    engine would return wrong rows."""
    opts = schema.effective_options()
    engine = opts.get("merge-engine", "deduplicate")
    if engine != "deduplicate":
        raise SchemaLabError(
            f"Table {table} uses merge-engine '{engine}'; schemalab implements Paimon's "
            "'deduplicate' merge engine only. Read this table with Paimon (Flink, Spark, "
            "pypaimon).", table=table, rule="merge-engine")
    if opts.get("deletion-vectors.enabled", "false").lower() == "true":
        # Compaction then marks replaced rows in deletion vectors instead of keeping the newer
        # version next to them; merging files without the vectors could bring rows back.
        raise SchemaLabError(
            f"Table {table} has deletion vectors ('deletion-vectors.enabled'); schemalab's "
            "merge does not apply them. Read this table with Paimon.", table=table,
            rule="deletion-vectors")
    if opts.get("sequence.field"):
        raise SchemaLabError(
            f"Table {table} sets 'sequence.field'; schemalab's deduplicate merge orders rows "
            "by _SEQUENCE_NUMBER only. Read this table with Paimon.", table=table,
            rule="sequence.field")


def check_writable(schema: TableSchema, table: str) -> list[str]:
    """The trimmed key, after checking that schemalab can write the table."""
    trimmed = trimmed_primary_keys(schema, table)
    check_merge_engine(schema, table)
    if schema.effective_options().get("rowkind.field"):
        # Reads are fine (the kind is in _VALUE_KIND); writes would have to take it from
        # that column.
        raise SchemaLabError(
            f"Table {table} sets 'rowkind.field'; schemalab writes every inserted row as +I. "
            "Write this table with Paimon, or use DELETE FROM.", table=table,
            rule="rowkind.field")
    n = int(schema.effective_options().get("bucket", "-1"))
    if n <= 0:
        raise SchemaLabError(
            f"Table {table} has a primary key and 'bucket' = '{n}': schemalab writes "
            "primary-key tables with a fixed number of buckets only (Paimon's dynamic and "
            "postpone bucket modes need a key index). Create the table with "
            "TBLPROPERTIES ('bucket' = 'N').", table=table, rule="primary-key-bucket")
    return trimmed


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def write_entries(table: Table, df: DataFrame, schema: TableSchema, *,
                  kind: int = INSERT) -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
    """Write ``df`` (rows in ``schema``, as ``write.to_frame`` gives them) as key-value files
    with row kind ``kind``; return the files and their ADD entries (not yet committed)."""
    from pyspark.sql import functions as F

    from schemalab.bucket import bucket_keys
    from schemalab.store import bucket_udf

    trimmed = check_writable(schema, table.name)
    n = int(schema.effective_options()["bucket"])
    keys = bucket_keys(schema.effective_options(), schema.primary_keys, schema.partition_keys)
    bucket_col = write.BUCKET_COLUMN
    out = df.withColumn(_ORD, F.monotonically_increasing_id()) \
        .withColumn(bucket_col, bucket_udf(schema, keys, n))
    out = _fold(out, [quote(k) for k in schema.primary_keys])
    out = _number(table, out, schema, bucket_col)
    fields = {f.name: f for f in schema.fields}
    key_cols = [F.col(quote(k)).alias(
        KEY_PREFIX + k, metadata={FIELD_ID_KEY: KEY_FIELD_ID_START + fields[k].id})
        for k in trimmed]
    system = [F.col(_POS).cast("bigint").alias(SEQUENCE_NUMBER,
                                               metadata={FIELD_ID_KEY: SEQUENCE_NUMBER_ID}),
              F.lit(kind).cast("tinyint").alias(VALUE_KIND, metadata={FIELD_ID_KEY: VALUE_KIND_ID})]
    values = [F.col(quote(f.name)) for f in schema.fields]
    kv = out.select(*key_cols, *system, *values, F.col(bucket_col))
    files = write.write_files(table.spark, kv, table.path, schema, table=table.name,
                              bucket_column=F.col(bucket_col),
                              sort_by=[quote(KEY_PREFIX + k) for k in trimmed])
    entries = [_entry(f, schema, trimmed) for f in files]
    return files, entries


def _fold(df: DataFrame, pk: list[str]) -> DataFrame:
    """One row per key: the last one given (a commit's rows are numbered in input order)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # _ORD is unique, so the maximum is one row (an unordered window: see merge_read)
    last = Window.partitionBy(*[F.col(k) for k in pk])
    return df.withColumn(_RANK, F.max(_ORD).over(last)).where(F.col(_ORD) == F.col(_RANK)) \
        .drop(_RANK)


def _number(table: Table, df: DataFrame, schema: TableSchema, bucket_col: str) -> DataFrame:
    """Column ``_POS``: each row's sequence number, counting on per (partition, bucket) from
    one above the highest sequence number live there (as pypaimon's ``max_seq_number``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    parts = [quote(k) for k in schema.partition_keys]
    pos = Window.partitionBy(*[F.col(p) for p in parts], F.col(bucket_col)) \
        .orderBy(F.col(_ORD))
    df = df.withColumn(_POS, F.row_number().over(pos))
    base = max_sequence_numbers(table, schema)
    if not base:
        return df.withColumn(_POS, F.col(_POS) - 1)
    part_types = [schema.type_of(k) for k in schema.partition_keys]
    base_schema = st.StructType(
        [st.StructField(f"__sl_bp{i}", to_spark(t), True) for i, t in enumerate(part_types)]
        + [st.StructField("__sl_bb", st.IntegerType(), False),
           st.StructField(_BASE, st.LongType(), False)])
    rows = [(*p, b, s) for (p, b), s in sorted(base.items(), key=repr)]
    bdf = table.spark.createDataFrame(rows, base_schema)
    conds = [F.col(p) == F.col(f"__sl_bp{i}") for i, p in enumerate(parts)]
    conds.append(F.col(bucket_col) == F.col("__sl_bb"))
    joined = df.join(F.broadcast(bdf), on=functools.reduce(operator.and_, conds), how="left")
    seq = F.coalesce(F.col(_BASE), F.lit(-1)) + F.col(_POS)
    return joined.withColumn(_POS, seq).drop(_BASE, "__sl_bb",
                                             *[f"__sl_bp{i}" for i in range(len(parts))])


def max_sequence_numbers(table: Table, schema: TableSchema
                         ) -> dict[tuple[tuple[Any, ...], int], int]:
    """The highest live sequence number of each (partition values, bucket)."""
    part_types = [schema.type_of(k) for k in schema.partition_keys]
    out: dict[tuple[tuple[Any, ...], int], int] = {}
    for e in table.live_entries(table.latest_snapshot):
        values = tuple(e.partition_values(part_types)) if part_types else ()
        key = (values, e.bucket)
        out[key] = max(out.get(key, -1), e.file.max_sequence_number)
    return out


def _entry(f: write.WrittenFile, schema: TableSchema, trimmed: list[str]) -> ManifestEntry:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    key_names = [KEY_PREFIX + k for k in trimmed]
    # ParquetFile, not read_table: read_table would take `dt=...` in the path for a column
    t = pq.ParquetFile(f.path).read(columns=[*key_names, SEQUENCE_NUMBER, VALUE_KIND])
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
    return commits.data_file_entry(
        f, schema, min_seq=seqs["min"].as_py(), max_seq=seqs["max"].as_py(),
        min_key=binaryrow.encode_row(first, key_types),
        max_key=binaryrow.encode_row(last, key_types), key_stats=key_stats,
        delete_rows=retracts.as_py() or 0)


def sequence_guard(table: Table, entries: Sequence[ManifestEntry],
                   then: Callable[[Snapshot | None], list[ManifestEntry]] | None = None
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
        for e in table.live_entries(snap):
            ours = lowest.get((e.partition, e.bucket))
            if ours is not None and e.file.max_sequence_number >= ours \
                    and (e.partition, e.bucket, e.file.file_name) not in gone:
                raise CommitConflictError(
                    f"Table {table.name}: another commit (snapshot {snap.id if snap else '?'}) "
                    f"wrote sequence numbers up to {e.file.max_sequence_number} to bucket "
                    f"{e.bucket} while this write numbered its rows from {ours}, so the "
                    "merge could not tell which version of a key is newer. Nothing of this "
                    "commit is visible; run it again.", table=table.name,
                    rule="primary-key-sequence-conflict")
        return deleted

    return replaces


def delete_where(table: Table, where: str | None, rows: DataFrame | None = None
                 ) -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
    """Delete records (``-D``) for every row of today's merged read that ``where`` (a Spark
    SQL condition) selects, or for ``rows`` (that read already filtered: ``Warehouse.sql``
    passes them so the condition may have subqueries); no file when no row matches."""
    from pyspark.sql import functions as F

    schema = table.schema
    check_writable(schema, table.name)
    if rows is None:
        rows = table.read()
        if where is not None:
            rows = rows.where(F.expr(where))
    df = write.to_frame(table.spark, rows, schema, table.name)
    return write_entries(table, df, schema, kind=DELETE)


# --------------------------------------------------------------------------------------------
# Reading: the deduplicate merge engine
# --------------------------------------------------------------------------------------------


def versions(plan: ReadPlan, spark: SparkSession, *, with_file: bool = False) -> DataFrame:
    """Every row of every file, evolved to the plan's schema, with its sequence number and
    row kind (and, with ``with_file``, its file): the input of the merge."""
    from schemalab.read import read_group

    check_merge_engine(plan.target, plan.table)
    frames = [read_group(plan, g, spark, system=True, with_file=with_file)
              for g in plan.groups if g.files]
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def merge_key_columns(schema: TableSchema) -> list[str]:
    keys = list(schema.primary_keys)
    return keys + [k for k in schema.partition_keys if k not in keys]


def merge_read(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """The deduplicate merge of the plan's files: per key, the row with the highest sequence
    number, unless it retracts the key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from schemalab.read import empty_frame

    if not any(g.files for g in plan.groups):
        return empty_frame(plan, spark)
    df = versions(plan, spark)
    ignore_delete = plan.target.effective_options().get("ignore-delete", "false") == "true"
    if ignore_delete:
        df = df.where(~F.col(KIND_COL).isin(*RETRACT))
    keys = [F.col(quote(k)) for k in merge_key_columns(plan.target)]
    # The highest sequence number of each key, then its row. A per-key max rather than
    # row_number() == 1: Spark plans the latter with a partial "window group limit" that
    # sorts every row once more before the shuffle (25% slower at 10M rows; bench/README.md).
    # A writer numbers each record of a bucket once, so a key's maximum is one row.
    latest = Window.partitionBy(*keys)
    merged = df.withColumn(_MAX_SEQ, F.max(SEQ_COL).over(latest)) \
        .where((F.col(SEQ_COL) == F.col(_MAX_SEQ)) & ~F.col(KIND_COL).isin(*RETRACT))
    return merged.select(*[F.col(quote(f.name)) for f in plan.target.fields])


# --------------------------------------------------------------------------------------------
# Which row won
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyVersion:
    """One row of a key in one file, evolved to the schema read."""

    file: str
    schema_id: int
    bucket: int
    level: int
    sequence_number: int
    value_kind: int
    values: dict[str, Any]

    @property
    def kind_text(self) -> str:
        return ROW_KINDS.get(self.value_kind, str(self.value_kind))


@dataclass(frozen=True)
class KeyExplanation:
    """Every version of one key in the files read, newest first, and which one the
    deduplicate merge keeps."""

    table: str
    key: dict[str, Any]
    versions: tuple[KeyVersion, ...]

    @property
    def winner(self) -> KeyVersion | None:
        return self.versions[0] if self.versions else None

    @property
    def deleted(self) -> bool:
        w = self.winner
        return w is not None and w.value_kind in RETRACT

    @property
    def reason(self) -> str:
        key = ", ".join(f"{k}={v!r}" for k, v in self.key.items())
        w = self.winner
        if w is None:
            return f"key ({key}) is in no file read"
        n = len(self.versions)
        why = (f"the only version of key ({key})" if n == 1 else
               f"highest _SEQUENCE_NUMBER {w.sequence_number} of {n} versions of key ({key}) "
               "(deduplicate merge engine)")
        where = (f"file {os.path.basename(w.file)} (schema {w.schema_id}, bucket {w.bucket}, "
                 f"level {w.level})")
        if w.value_kind in RETRACT:
            return f"{where} wins as {why}; it is a {w.kind_text} record, so the key is deleted"
        return f"{where} wins as {why}"

    def text(self) -> str:
        lines = [self.reason]
        for v in self.versions:
            mark = "*" if v is self.winner else " "
            lines.append(f" {mark} seq {v.sequence_number:>4} {v.kind_text} "
                         f"{os.path.basename(v.file)} (schema {v.schema_id}, level {v.level}): "
                         + ", ".join(f"{k}={x!r}" for k, x in v.values.items()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def explain_key(plan: ReadPlan, spark: SparkSession, key: Mapping[str, Any] | Sequence[Any]
                ) -> KeyExplanation:
    """Every version of ``key`` (a mapping of primary-key column → value in the schema read,
    or the values in primary-key order) in the plan's files, newest first."""
    from pyspark.sql import functions as F

    target = plan.target
    pk = list(target.primary_keys)
    if not pk:
        raise SchemaLabError(f"Table {plan.table} has no primary key: every row is read, none "
                             "wins over another.", table=plan.table, rule="primary-key")
    if isinstance(key, Mapping):
        unknown = [k for k in key if k not in pk]
        missing = [k for k in pk if k not in key]
        if unknown or missing:
            raise SchemaLabError(
                f"Table {plan.table}: a key gives a value for each primary-key column "
                f"({', '.join(pk)}); got {', '.join(map(str, key))}", table=plan.table,
                rule="primary-key")
        wanted = {k: key[k] for k in pk}
    else:
        values = list(key) if isinstance(key, list | tuple) else [key]
        if len(values) != len(pk):
            raise SchemaLabError(f"Table {plan.table}: the primary key is ({', '.join(pk)}); "
                                 f"got {len(values)} values", table=plan.table,
                                 rule="primary-key")
        wanted = dict(zip(pk, values, strict=True))
    if not any(g.files for g in plan.groups):
        return KeyExplanation(plan.table, wanted, ())
    df = versions(plan, spark, with_file=True)
    cond = functools.reduce(operator.and_, [
        F.col(quote(k)) == F.lit(v).cast(to_spark(target.type_of(k)))
        for k, v in wanted.items()])
    rows = df.where(cond).collect()
    by_path = {_norm_path(f.path): f for f in plan.files}
    out = []
    names = target.field_names
    for r in rows:
        d = r.asDict()
        path = _norm_path(d[FILE_COL])
        meta = by_path.get(path)
        out.append(KeyVersion(path, meta.schema_id if meta else -1, meta.bucket if meta else -1,
                              meta.level if meta else -1, int(d[SEQ_COL]), int(d[KIND_COL]),
                              {n: d[n] for n in names}))
    out.sort(key=lambda v: v.sequence_number, reverse=True)
    return KeyExplanation(plan.table, wanted, tuple(out))


def _norm_path(p: str) -> str:
    from urllib.parse import unquote, urlparse

    if p.startswith("file:"):
        p = unquote(urlparse(p).path)
    return os.path.normpath(p)
