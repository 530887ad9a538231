"""The merge read of a primary-key table: per bucket, only the rows that can have other
versions go through the merge function (see :mod:`schemalab.engine.merge.runs`), the
others are read as they are; then retracting results are dropped, as Paimon's
``DropDeleteReader`` drops them.

Two ways to bring the versions of a key together (``how``):

``bucket``   (the default) as Paimon's reader: all versions of a key live in one bucket, so
             the buckets to merge are split into a few task groups, each read (every file
             evolved by its own schema first) and ``coalesce(1)``-ed into one Spark partition
             — no shuffle. A single partition satisfies any clustering, so the merge
             function's per-key window or aggregation runs in that task without an exchange;
             the task groups run in parallel. Nothing but Spark expressions runs on executors.
``shuffle``  the former way: every row to merge is shuffled by key (``newest`` and ``split``
             buckets save part of that with broadcast joins). ``bench/merge_read.py``
             measures both.

    >>> wh.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES "   # doctest: +SKIP
    ...        "('primary-key' = 'id', 'bucket' = '2')")
    >>> wh.sql("INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b')")  # doctest: +SKIP
    >>> print(wh.table("t").explain_read(key={"id": 1}).key)     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from schemalab.engine.merge.aggregation import aggregation
from schemalab.engine.merge.deduplicate import deduplicate
from schemalab.engine.merge.first_row import first_row
from schemalab.engine.merge.function import MergeInput
from schemalab.engine.merge.partial_update import partial_update
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, key_columns, retract, versions
from schemalab.engine.merge.runs import BucketPlan, bucket_plans, limit_broadcast
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.spark_reader import quote
from schemalab.paimon.merge_options import (
    AGGREGATION,
    DEDUPLICATE,
    FIRST_ROW,
    PARTIAL_UPDATE,
    MergeOptions,
)
from schemalab.paimon.primary_key import check_readable

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

#: each merge engine's function: the versions of each key → one row per key
FUNCTIONS: dict[str, Callable[[DataFrame, MergeInput], DataFrame]] = {
    DEDUPLICATE: deduplicate, FIRST_ROW: first_row, PARTIAL_UPDATE: partial_update,
    AGGREGATION: aggregation,
}

#: how the versions of a key are brought together (see the module's docstring)
MERGE_HOW = ("bucket", "shuffle")
_RUN = "__sl_run"
_NEWEST = "__sl_newest"


def merge_input(plan: ReadPlan) -> MergeInput:
    """What the merge function needs of ``plan``, after checking that schemalab reads the
    table's merge options."""
    opts = check_readable(plan.target, plan.table)
    return MergeInput(plan.table, tuple(key_columns(plan)), plan.target.fields, opts)


def plans_of(plan: ReadPlan, opts: MergeOptions, *, batch: bool = True) -> list[BucketPlan]:
    """How each bucket of ``plan`` is merged."""
    return limit_broadcast(bucket_plans(plan.files, opts.engine,
                                        sequence_fields=opts.sequence_fields, batch=batch))


def merged(plan: ReadPlan, spark: SparkSession, *, batch: bool = True,
           how: str = "bucket") -> DataFrame | None:
    """One row per key that the merge keeps, in the plan's schema plus its result's
    ``__sl_seq`` and ``__sl_kind``; None when no file is read. ``batch``: a batch read
    (False: a compaction, which merges what a batch read of first-row takes as it is)."""
    from pyspark.sql import functions as F

    m = merge_input(plan)
    if how == "bucket":
        return _per_bucket(plan, spark, m, bucket_plans(
            plan.files, m.opts.engine, sequence_fields=m.opts.sequence_fields, batch=batch))
    if how != "shuffle":
        raise ValueError(f"how must be one of {MERGE_HOW}, not {how!r}")
    buckets = plans_of(plan, m.opts, batch=batch)
    columns = [F.col(quote(n)) for n in (*m.names, SEQ_COL, KIND_COL)]
    kind = F.col(KIND_COL)
    out: list[DataFrame] = []

    def files(strategy: str) -> list[DataFile]:
        return [f for b in buckets if b.strategy == strategy for f in b.files]

    raw = versions(plan, spark, files=files("raw"))
    if raw is not None:
        out.append(raw.select(*columns))
    single = versions(plan, spark, files=files("single"))
    if single is not None:
        out.append(single.where(~retract(kind)).select(*columns))
    newest = [b for b in buckets if b.strategy == "newest"]
    if newest:
        out.append(_newest(plan, spark, newest, m).select(*columns))
    to_merge: list[DataFrame] = []
    split = [b for b in buckets if b.strategy == "split"]
    if split:
        passed, rest = _split(plan, spark, split, m)
        out.append(passed.where(~retract(kind)).select(*columns))
        to_merge.append(rest.select(*columns))
    full = versions(plan, spark, files=files("full"))
    if full is not None:
        to_merge.append(full.select(*columns))
    if to_merge:
        result = FUNCTIONS[m.opts.engine](_union(to_merge), m)
        out.append(result.where(kind.isNotNull() & ~retract(kind)).select(*columns))
    return _union(out) if out else None


def merge_read(plan: ReadPlan, spark: SparkSession, *, how: str = "bucket") -> DataFrame:
    """The merged rows of the plan's files, in the plan's schema."""
    from pyspark.sql import functions as F

    df = merged(plan, spark, how=how)
    if df is None:  # pragma: no cover - execute() reads no plan without files
        raise AssertionError("merge_read of a plan without files")
    return df.select(*[F.col(quote(f.name)) for f in plan.target.fields])


def task_groups(buckets: Sequence[BucketPlan], tasks: int) -> list[list[BucketPlan]]:
    """The buckets to merge, dealt into at most ``tasks`` groups of about equal rows (the
    largest bucket first, each to the group with the fewest rows so far)."""
    groups: list[list[BucketPlan]] = [[] for _ in range(max(1, min(tasks, len(buckets))))]
    sizes = [0] * len(groups)
    for b in sorted(buckets, key=lambda b: -b.rows):
        i = sizes.index(min(sizes))
        groups[i].append(b)
        sizes[i] += b.rows
    return [g for g in groups if g]


def _per_bucket(plan: ReadPlan, spark: SparkSession, m: MergeInput,
                buckets: list[BucketPlan]) -> DataFrame | None:
    """The merge, bucket by bucket where the files are (see the module's docstring)."""
    from pyspark.sql import functions as F

    columns = [F.col(quote(n)) for n in (*m.names, SEQ_COL, KIND_COL)]
    kind = F.col(KIND_COL)
    out: list[DataFrame] = []
    as_is = [f for b in buckets if b.strategy == "raw" for f in b.files]
    raw = versions(plan, spark, files=as_is)
    if raw is not None:
        out.append(raw.select(*columns))
    single = versions(plan, spark, files=[f for b in buckets if b.strategy == "single"
                                          for f in b.files])
    if single is not None:
        out.append(single.where(~retract(kind)).select(*columns))
    merging = [b for b in buckets if b.strategy not in ("raw", "single")]
    # two task groups per core: an uneven bucket does not leave a core idle for long
    for group in task_groups(merging, 2 * _cores(spark)):
        rows = versions(plan, spark, files=[f for b in group for f in b.files])
        assert rows is not None  # a bucket to merge has files
        result = FUNCTIONS[m.opts.engine](rows.select(*columns).coalesce(1), m)
        out.append(result.where(kind.isNotNull() & ~retract(kind)).select(*columns))
    return _union(out) if out else None


def _cores(spark: SparkSession) -> int:
    """The session's parallelism; 2 where it cannot be asked (Spark Connect has no
    SparkContext)."""
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - no SparkContext
        return 2


def _union(frames: Sequence[DataFrame]) -> DataFrame:
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def _newest(plan: ReadPlan, spark: SparkSession, buckets: list[BucketPlan],
            m: MergeInput) -> DataFrame:
    """Deduplicate without a shuffle of the rows: a row stays if no newer run of its bucket
    holds its key (with ``ignore-delete``, no newer insert), and is not a retraction."""
    from pyspark.sql import functions as F

    keys = list(m.keys)
    kind = F.col(KIND_COL)
    rows: list[DataFrame] = []
    newer_keys: list[DataFrame] = []
    for i in range(max(len(b.runs) for b in buckets)):
        df = versions(plan, spark, files=[f for b in buckets if i < len(b.runs)
                                          for f in b.runs[i]])
        if df is None:
            continue
        df = df.withColumn(_RUN, F.lit(i))
        if m.opts.ignore_delete:
            df = df.where(~retract(kind))
        rows.append(df)
        if i > 0:
            newer_keys.append(df.select(*[F.col(quote(k)) for k in keys], F.col(_RUN)))
    newest = _union(newer_keys).groupBy(*[F.col(quote(k)) for k in keys]) \
        .agg(F.max(_RUN).alias(_NEWEST))
    joined = _union(rows).join(F.broadcast(newest), on=keys, how="left")
    keep = (F.col(_NEWEST).isNull() | (F.col(_NEWEST) == F.col(_RUN))) & ~retract(kind)
    return joined.where(keep)


def _split(plan: ReadPlan, spark: SparkSession, buckets: list[BucketPlan], m: MergeInput
           ) -> tuple[DataFrame, DataFrame]:
    """(base rows whose key no other run holds, the rows to merge)."""
    from pyspark.sql import functions as F

    keys = list(m.keys)
    base = versions(plan, spark, files=[f for b in buckets for f in b.runs[b.base]])
    rest = versions(plan, spark, files=[f for b in buckets for i, r in enumerate(b.runs)
                                        if i != b.base for f in r])
    assert base is not None and rest is not None  # split buckets have two runs or more
    rest_keys = F.broadcast(rest.select(*[F.col(quote(k)) for k in keys]))
    passed = base.join(rest_keys, on=keys, how="left_anti")
    merging = base.join(rest_keys, on=keys, how="left_semi")
    return passed, _union([merging.select(*[F.col(quote(c)) for c in rest.columns]), rest])
