"""The merge read of a primary-key table: per bucket, only the rows that can have other
versions go through the merge function (see :mod:`schemalab.engine.merge.runs`), the
others are read as they are; then retracting results are dropped, as Paimon's
``DropDeleteReader`` drops them.

Two ways to bring the versions of a key together (``how``):

``bucket``   (the default) as Paimon's reader, from the bucket plans: ``newest`` and
             ``split`` buckets pass their base rows through by looking their keys up among
             the few other files' keys (:mod:`schemalab.engine.merge.keyset`: a bitmap in
             the scan's filter, or a broadcast join; no shuffle, no sort); ``pair``
             buckets find the other version of each base row's key — looked up in arrays
             by the key's rank (:mod:`schemalab.engine.merge.lookup`), else by a broadcast
             join — and fold the two row by row;
             ``full`` buckets are dealt into a few task groups, each read (every file
             evolved by its own schema first) and ``coalesce(1)``-ed into one Spark
             partition — a single partition satisfies any clustering, so the merge
             function's per-key window or aggregation runs in that task without an
             exchange. Nothing but Spark expressions runs on executors.
``shuffle``  the former way: every row of a bucket with two files sharing keys is shuffled
             by key into the merge function. ``bench/merge_read.py`` measures both.

    >>> wh.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES "   # doctest: +SKIP
    ...        "('primary-key' = 'id', 'bucket' = '2')")
    >>> wh.sql("INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b')")  # doctest: +SKIP
    >>> print(wh.table("t").explain_read(key={"id": 1}).key)     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from schemalab.engine.merge.aggregation import aggregation, aggregation_fold
from schemalab.engine.merge.deduplicate import deduplicate
from schemalab.engine.merge.first_row import first_row
from schemalab.engine.merge.function import Fold, MergeInput, fold_two, fold_two_inserts
from schemalab.engine.merge.keyset import (
    KeyBitmap,
    KeyRange,
    dense_keys,
    held_bitmap,
    int_key,
    key_bitmap,
    key_values,
    not_held,
    without_held,
)
from schemalab.engine.merge.lookup import fold_newer
from schemalab.engine.merge.options import (
    AGGREGATION,
    DEDUPLICATE,
    FIRST_ROW,
    PARTIAL_UPDATE,
    MergeOptions,
)
from schemalab.engine.merge.partial_update import partial_update, partial_update_fold
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, key_columns, retract, versions
from schemalab.engine.merge.runs import BucketPlan, bucket_plans, limit_broadcast, supersede
from schemalab.engine.merge.superseded import newest_wins, read_superseded, walk_key
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.spark_reader import quote
from schemalab.errors import SchemaLabError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: each merge engine's function: the versions of each key → one row per key
FUNCTIONS: dict[str, Callable[[DataFrame, MergeInput], DataFrame]] = {
    DEDUPLICATE: deduplicate, FIRST_ROW: first_row, PARTIAL_UPDATE: partial_update,
    AGGREGATION: aggregation,
}
#: the merge engines that fold a key's versions, as folds (``pair`` buckets step them)
FOLDS: dict[str, Callable[[MergeInput], Fold]] = {
    PARTIAL_UPDATE: partial_update_fold, AGGREGATION: aggregation_fold,
}

#: how the versions of a key are brought together (see the module's docstring)
MERGE_HOW = ("bucket", "shuffle")
#: split buckets whose rows to merge (their newer files' rows, as many of the base's) are
#: at most this many are merged together in one task; more, in task groups of buckets
SPLIT_IN_ONE_TASK = 500_000
_BASE = "__sl_base"
_NEWEST = "__sl_newest"
_NEWER = "__sl_newer"


def merge_input(plan: ReadPlan) -> MergeInput:
    """What the merge function needs of ``plan``: its keys, fields and merge options."""
    opts = plan.merge
    if opts is None:
        raise SchemaLabError(f"Table {plan.table}: a merging read needs the table's merge "
                             "options (an append table's plan has none)", table=plan.table,
                             rule="merge-options")
    inserts_only = opts.rowkind_field is None and all(
        f.delete_row_count == 0 for f in plan.files)  # None: not recorded, so maybe
    return MergeInput(plan.table, tuple(key_columns(plan)), plan.target.fields, opts,
                      inserts_only)


def plans_of(plan: ReadPlan, opts: MergeOptions, *, batch: bool = True) -> list[BucketPlan]:
    """How each bucket of ``plan`` is merged."""
    plans = limit_broadcast(bucket_plans(plan.files, opts.engine,
                                         sequence_fields=opts.sequence_fields, batch=batch))
    # partial-update and aggregation whose merge is each key's newest version: as deduplicate
    engine = DEDUPLICATE if newest_wins(plan, opts) else opts.engine
    return supersede(plans, engine, eligible=not opts.sequence_fields
                     and walk_key(plan, opts) is not None)


def merged(plan: ReadPlan, spark: SparkSession, *, batch: bool = True,
           how: str = "bucket") -> DataFrame | None:
    """One row per key that the merge keeps, in the plan's schema plus its result's
    ``__sl_seq`` and ``__sl_kind``; None when no file is read. ``batch``: a batch read
    (False: a compaction, which merges what a batch read of first-row takes as it is)."""

    if how not in MERGE_HOW:
        raise ValueError(f"how must be one of {MERGE_HOW}, not {how!r}")
    m = merge_input(plan)
    buckets = plans_of(plan, m.opts, batch=batch)
    names = [*m.names, SEQ_COL, KIND_COL]
    out: list[DataFrame] = []

    def read(files: list[DataFile], drop_held: KeyBitmap | None = None) -> DataFrame | None:
        df = versions(plan, spark, files=files, drop_held=drop_held)
        return None if df is None else _ordered(df, names)

    raw = read([f for b in buckets if b.strategy == "raw" for f in b.files])
    if raw is not None:
        out.append(raw)
    single_files = [f for b in buckets if b.strategy == "single" for f in b.files]
    single = read(single_files)
    if single is not None:
        out.append(_inserts(single, single_files, m))
    if how == "shuffle":
        rows = read([f for b in buckets if b.strategy not in ("raw", "single")
                     for f in b.files])
        if rows is not None:
            out.append(_kept(FUNCTIONS[m.opts.engine](rows, m)))
        return _union(out) if out else None
    newest = [b for b in buckets if b.strategy == "newest"]
    if newest:
        out.append(_ordered(_newest(plan, spark, read, newest, m), names))
    split = [b for b in buckets if b.strategy == "split"]
    pair = [b for b in buckets if b.strategy == "pair"]
    if pair:
        paired = _pair(plan, spark, read, pair, m)
        if paired is None:  # no bitmap of the base's keys: their rows are merged as split
            split.extend(pair)
        else:
            out.append(_ordered(paired, names))
    full = [b for b in buckets if b.strategy == "full"]
    superseded = [b for b in buckets if b.strategy == "superseded"]
    if superseded:  # each key's one version kept, the others dropped as by deletion vectors
        kept = read_superseded(plan, spark, superseded, m.opts)
        if kept is None:
            full.extend(BucketPlan(b.partition, b.bucket, b.runs, "full") for b in superseded)
        else:
            out.append(_ordered(kept, names))
    if split and sum(b.merged_rows() for b in split) <= SPLIT_IN_ONE_TASK:
        # one lookup and one scan for every split bucket's base, and their few rows to
        # merge in one task (merging them per task group cost a plan per group: 4x slower)
        passed, rest = _split(plan, spark, read, split, m)
        out.extend([_inserts(passed, [f for b in split for f in b.base], m),
                    _kept(FUNCTIONS[m.opts.engine](rest.coalesce(1), m))])
        split = []
    # two task groups per core: an uneven bucket does not leave a core idle for long
    for group in task_groups([*split, *full], 2 * _cores(spark)):
        in_split = [b for b in group if b.strategy == "split"]
        rows = read([f for b in group if b.strategy == "full" for f in b.files])
        if in_split:
            passed, rest = _split(plan, spark, read, in_split, m)
            out.append(_inserts(passed, [f for b in in_split for f in b.base], m))
            rows = rest if rows is None else _union([rows, rest])
        assert rows is not None  # a bucket to merge has files
        out.append(_kept(FUNCTIONS[m.opts.engine](rows.coalesce(1), m)))
    return _union(out) if out else None


def _ordered(df: DataFrame, names: list[str]) -> DataFrame:
    """``df``'s columns ``names``, in that order: ``df`` itself where they are its columns
    already (asking its schema costs the driver less than analysing a projection)."""
    from pyspark.sql import functions as F

    return df if df.columns == names else df.select(*[F.col(quote(n)) for n in names])


def _inserts(rows: DataFrame, files: Sequence[DataFile], m: MergeInput) -> DataFrame:
    """``rows`` of ``files`` without their retractions (-U/-D); as they are when the
    manifest says no file holds any (the kind column is then not even read) — unless the
    kind is a value column (``rowkind.field``), which the count does not see."""
    from pyspark.sql import functions as F

    if m.opts.rowkind_field is None and all(f.delete_row_count == 0 for f in files):
        return rows
    return rows.where(~retract(F.col(KIND_COL)))


def _kept(result: DataFrame) -> DataFrame:
    """A merge function's rows that the read returns: not retracting, not emptied."""
    from pyspark.sql import functions as F

    kind = F.col(KIND_COL)
    return result.where(kind.isNotNull() & ~retract(kind))


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


def _cores(spark: SparkSession) -> int:
    """The session's parallelism; 2 where it cannot be asked (Spark Connect has no
    SparkContext)."""
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - no SparkContext
        return 2


def _union(frames: Sequence[DataFrame]) -> DataFrame:
    """The frames' rows together, matched by column name: a join on the key columns puts
    them first, so the frames' column orders may differ."""
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return df


def _newest(plan: ReadPlan, spark: SparkSession, read: Callable[..., DataFrame | None],
            buckets: list[BucketPlan], m: MergeInput) -> DataFrame:
    """Deduplicate without a shuffle or sort of the rows. Every file outside the base is
    newer than the base, so a base row stays if no other file holds its key (looked up
    among their few keys: :mod:`schemalab.engine.merge.keyset`; with a bitmap of them, the
    base's rows are dropped by Spark's Parquet reader itself, :mod:`schemalab.engine.kept_scan`,
    else by a filter or a join). Where they share no key, each of their rows is its key's
    newest; otherwise the newest sequence number of each of their keys is broadcast and a
    row stays if it is its key's newest. Retractions are dropped after."""
    from pyspark.sql import functions as F

    keys = [F.col(quote(k)) for k in m.keys]
    base_files = [f for b in buckets for f in b.base]
    rest_files = [f for b in buckets for f in b.rest]
    rest = read(rest_files)
    assert rest is not None  # newest buckets have both
    if m.opts.ignore_delete:
        rest = _inserts(rest, rest_files, m)
    if all(b.rest_disjoint for b in buckets):
        held = held_bitmap(m.keys, rest_files, plan, inserts_only=m.opts.ignore_delete)
        if held is not None:
            passed = read(base_files, drop_held=held)
            assert passed is not None
        else:
            base = read(base_files)
            assert base is not None
            # the newer keys make no bitmap: a broadcast anti-join
            passed = not_held(_inserts(base, base_files, m) if m.opts.ignore_delete else base,
                              m.keys, rest)
        return _union([_inserts(passed, base_files, m), _inserts(rest, rest_files, m)])
    base = read(base_files)
    assert base is not None
    if m.opts.ignore_delete:
        base = _inserts(base, base_files, m)
    newest = rest.groupBy(*keys).agg(F.max(SEQ_COL).alias(_NEWEST))
    rows = base.withColumn(_BASE, F.lit(True)).union(rest.withColumn(_BASE, F.lit(False)))
    joined = rows.join(F.broadcast(newest), on=list(m.keys), how="left")
    top = F.col(_NEWEST)
    keep = F.when(F.col(_BASE), top.isNull()).otherwise(F.col(SEQ_COL) == top)
    return joined.where(keep & ~retract(F.col(KIND_COL)))


def _pair(plan: ReadPlan, spark: SparkSession,
          read: Callable[[list[DataFile]], DataFrame | None], buckets: list[BucketPlan],
          m: MergeInput) -> DataFrame | None:
    """A key has at most one version in the base and one, newer, in the other files: each
    base row meets its key's newer version (looked up in arrays of the other files' rows,
    :mod:`schemalab.engine.merge.lookup`; where those do not apply, joined, broadcast) and
    the two are folded by the engine's own steps, row by row; other files' rows whose key
    the base lacks are their key's only version — whether there are any is known on the
    driver, from both sides' keys. The base is scanned once, and nothing is shuffled,
    sorted or grouped. None when the keys have no bitmap (that takes one integer key of a
    narrow span): the caller then merges these buckets as ``split``."""
    from pyspark.sql import functions as F

    base_files = [f for b in buckets for f in b.base]
    rest_files = [f for b in buckets for f in b.rest]
    # the base's keys from its manifests where they are every key of a range; else read
    key_is_int = int_key(m.keys, plan)
    in_base: KeyBitmap | KeyRange | None = dense_keys(m.keys, base_files, plan)
    if in_base is None:
        base_keys = key_values(m.keys, base_files, plan)
        in_base = None if base_keys is None else key_bitmap(m.keys[0], base_keys,
                                                            int_key=key_is_int)
    rest_keys = None if in_base is None else key_values(m.keys, rest_files, plan)
    if in_base is None or rest_keys is None:
        return None
    base, rest = read(base_files), read(rest_files)
    assert base is not None and rest is not None  # pair buckets have both
    key = F.col(quote(m.keys[0]))
    in_rest = key_bitmap(m.keys[0], rest_keys, int_key=key_is_int)
    fold = FOLDS[m.opts.engine](m)
    retracts = m.opts.rowkind_field is not None or any(  # None: not recorded, so maybe
        f.delete_row_count != 0 for f in (*base_files, *rest_files))
    # the newer version looked up by the key's rank among the newer keys: no join (its
    # columns are those of ``names``, in that order)
    folded = None if retracts or in_rest is None or fold.add is None else \
        fold_newer(base, rest, m, fold, in_rest, rest_files, plan, spark)
    names = [*m.names, SEQ_COL, KIND_COL]
    if folded is None:
        record = [n for n in (SEQ_COL, KIND_COL, *m.names) if n not in m.keys]
        folded = _ordered(_joined_pairs(base, rest, key, in_rest, m, fold, record, retracts,
                                        spark), names)
    out = [folded]
    if not in_base.holds(rest_keys).all():
        out.append(_ordered(_inserts(rest.where(~in_base.test(spark)), rest_files, m), names))
    return _union(out)


def _joined_pairs(base: DataFrame, rest: DataFrame, key: Column, in_rest: KeyBitmap | None,
                  m: MergeInput, fold: Fold, record: list[str], retracts: bool,
                  spark: SparkSession) -> DataFrame:
    """The base rows folded with their key's newer version, found by a broadcast left join
    of the newer rows (``record``: their columns besides the key)."""
    from pyspark.sql import functions as F

    # the newer version as flat columns (a struct per row cost a third more to broadcast)
    newer = {n: f"{_NEWER}_{i}" for i, n in enumerate(record)}
    # only rows whose key has a newer version probe the hash table: the join skips a NULL
    # key, and the bitmap's test is cheaper than a probe (a pair has one integer key)
    newer_key = f"{_NEWER}_key"
    probe = key if in_rest is None else F.when(in_rest.test(spark), key)
    # the newer side's key tells a joined row (the join skips NULL keys): a query that
    # needs no sequence number broadcasts none
    joined = base.join(F.broadcast(rest.select(
        key.alias(newer_key), *[F.col(quote(n)).alias(alias) for n, alias in newer.items()])),
        on=probe == F.col(newer_key), how="left")
    present = F.col(newer_key).isNotNull()
    if not retracts and fold.add is not None:
        # column by column: a query of a few columns reads only those of either side
        return fold_two_inserts(joined, m, fold, {n: F.col(quote(a)) for n, a in newer.items()},
                                present)
    return _fold_pairs(joined, m, fold, newer, retracts, present)


def _fold_pairs(joined: DataFrame, m: MergeInput, fold: Fold, newer: dict[str, str],
                retracts: bool, present: Column) -> DataFrame:
    """The pairs of ``joined`` (``present``: a row with a newer version) folded as structs
    (any record kind); results that retract dropped where a version may retract."""
    from pyspark.sql import functions as F

    paired = F.struct(*[F.col(quote(newer.get(n, n))).alias(n)
                        for n in (SEQ_COL, KIND_COL, *m.names)])
    folded = fold_two(joined.withColumn(_NEWER, F.when(present, paired)), m, fold, _NEWER)
    if retracts:
        # results that retract are dropped by a generator (one row or none each), not a
        # filter: a filter on the result's kind would be pushed below the fold's
        # projections, inlining their states into its condition
        names = [F.col(quote(n)) for n in (*m.names, SEQ_COL, KIND_COL)]
        kind = F.col(KIND_COL)
        folded = folded.select(F.inline(F.when(kind.isNotNull() & ~retract(kind),
                                               F.array(F.struct(*names)))))
    return folded


def _split(plan: ReadPlan, spark: SparkSession,
           read: Callable[[list[DataFile]], DataFrame | None], buckets: list[BucketPlan],
           m: MergeInput) -> tuple[DataFrame, DataFrame]:
    """(base rows whose key no other file holds, the rows to merge)."""
    base_files = [f for b in buckets for f in b.base]
    rest_files = [f for b in buckets for f in b.rest]
    base, rest = read(base_files), read(rest_files)
    assert base is not None and rest is not None  # split buckets have both
    passed, merging = without_held(base, m.keys, rest, rest_files, plan, spark)
    return passed, _union([merging, rest])
