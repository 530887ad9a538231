"""The merge read of a primary-key table: per bucket, only the rows that can have other
versions go through the merge function (see :mod:`schemalab.engine.merge.runs`), the
others are read as they are; then retracting results are dropped, as Paimon's
``DropDeleteReader`` drops them.

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


def merged(plan: ReadPlan, spark: SparkSession, *, batch: bool = True) -> DataFrame | None:
    """One row per key that the merge keeps, in the plan's schema plus its result's
    ``__sl_seq`` and ``__sl_kind``; None when no file is read. ``batch``: a batch read
    (False: a compaction, which merges what a batch read of first-row takes as it is)."""
    from pyspark.sql import functions as F

    m = merge_input(plan)
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


def merge_read(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """The merged rows of the plan's files, in the plan's schema."""
    from pyspark.sql import functions as F

    df = merged(plan, spark)
    if df is None:  # pragma: no cover - execute() reads no plan without files
        raise AssertionError("merge_read of a plan without files")
    return df.select(*[F.col(quote(f.name)) for f in plan.target.fields])


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
