"""The merge read of ``superseded`` buckets (see :mod:`schemalab.engine.merge.runs`): files
that overlap in many sorted runs, merged without a merge function.

Deduplicate keeps each key's newest version and first-row its oldest; with no
``sequence.field`` and no -U/-D rows, and each run's sequence numbers above the former
runs', that version is the one in the key's newest (oldest) run. So each file's rows whose
key a newer (older) run holds are *superseded*, and knowing which is enough. Partial-update
and aggregation read the same way where their merge is the newest version
(:func:`newest_wins`: no version of a field is NULL, by the manifests' null counts):

1. Every file's key column is read on the driver with pyarrow
   (:func:`schemalab.engine.merge.keyset.key_values`: one column, kept per file for the
   session) and the bucket's runs are walked from the winning end with a ``seen`` array of
   booleans over the bucket's key span: a row whose key is seen already is superseded, the
   others mark their keys. That is O(rows) numpy work, with no sort. Keys spanning more than
   :data:`schemalab.engine.merge.keyset.MAX_SPAN` numbers are sorted instead (a stable sort
   of the keys in walk order: the first of each key wins).
2. On a classic session, the walk's result is each key's winning run (a byte per key of
   the span): a file keeps the rows whose key its run wins. Each file's kept (or dropped)
   keys are sent to the JVM, which tests every row by its key
   (:func:`schemalab.engine.kept_rows.key_filter`, :func:`_read_by_winning_run`): the
   scan reads no row position, and a row a deletion vector deletes is simply no version.
   Otherwise (Spark Connect, or past :data:`WINNER_BYTES`) each file is read with its
   superseded positions dropped exactly as a deletion vector's are
   (:func:`schemalab.engine.deletes.drop_deleted_positions`: a bitmap in the scan's own
   filter), beside its real deletion vectors or position deletes, whose rows are no
   version at all (they supersede nothing). Either way every row left is its key's only
   version: no shuffle, sort, join or grouping.

A file that holds a key twice (no writer makes one; it would take a merge function to
choose) makes the read fall back to ``full``.

    >>> import numpy as np
    >>> new, old = np.array([3, 1]), np.array([1, 2, 3, 4])
    >>> [p.tolist() for p in superseded_positions([new, old], [None, None])]
    [[], [0, 2]]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemalab.engine import kept_rows
from schemalab.engine.deletes import BITMAP_FILES, deleted_positions, file_name
from schemalab.engine.keyed import INSERT
from schemalab.engine.merge.keyset import MAX_SPAN, integer_key, key_values
from schemalab.engine.merge.options import AGGREGATION, FIRST_ROW, PARTIAL_UPDATE, MergeOptions
from schemalab.engine.merge.records import KIND_COL, versions
from schemalab.engine.merge.runs import BucketPlan
from schemalab.engine.plan import DataFile, PositionDeletes, ReadPlan
from schemalab.engine.spark_reader import quote
from schemalab.types.casts import cast_kind
from schemalab.types.model import DataType

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import DataFrame, SparkSession

#: the most files with deletes one scan reads: past it, a scan drops deleted positions by a
#: join instead of its bitmap filter
FILES_PER_SCAN = BITMAP_FILES


def walk_key(plan: ReadPlan, opts: MergeOptions) -> str | None:
    """The column that tells a bucket's keys apart, where the walk applies: the primary key
    without the partition keys (a bucket lies in one partition) is one integer column, and
    no value column holds row kinds. None otherwise."""
    if opts.rowkind_field is not None:
        return None
    schema = plan.target
    field = integer_key([k for k in schema.primary_keys if k not in schema.partition_keys],
                        plan)
    return None if field is None else field.name


def newest_wins(plan: ReadPlan, opts: MergeOptions) -> bool:
    """Whether partial-update's or aggregation's merge of a key's versions is its newest
    version, for every key of ``plan``: each field takes the newest version's value where
    none is NULL (partial-update, ``last_non_null_value``: aggregation's default) or
    whatever it is (``last_value``). So where the manifests' value statistics count no NULL
    in any file for each such field (read as the table's type: the field is in the file's
    schema and its cast is the same type or an implicit one), no sequence groups and no other
    function apply, the buckets are read as deduplicate's ``superseded`` ones. The result
    is Paimon's own: its sequence number the newest version's, its kind +I."""
    if opts.engine not in (PARTIAL_UPDATE, AGGREGATION) or opts.sequence_groups \
            or opts.sequence_fields or opts.rowkind_field is not None:
        return False
    skip = {*plan.target.primary_keys, *plan.target.partition_keys}
    checked = []
    for f in plan.target.fields:
        if f.name in skip:
            continue
        agg = opts.aggregate_of(f.name)
        function = agg.function if agg is not None else (
            "last_non_null_value" if opts.engine == AGGREGATION else None)
        if function == "last_value":
            continue
        if function not in (None, "last_non_null_value"):
            return False
        checked.append(f)
    # per schema: every checked field is in it, and its cast keeps a value non-NULL
    fits: dict[int, bool] = {}
    for file in plan.files:
        if file.schema_id not in fits:
            schema = plan.schemas.get(file.schema_id)
            by_id = {} if schema is None else {g.id: g for g in schema.fields}
            fits[file.schema_id] = schema is not None and all(
                f.id in by_id and _never_null(by_id[f.id].type, f.type) for f in checked)
        if not fits[file.schema_id] or file.non_null is None \
                or any(f.id not in file.non_null for f in checked):
            return False
    return True


def _never_null(source: DataType, target: DataType) -> bool:
    """Whether a non-NULL value of ``source`` reads as a non-NULL ``target``: the same type,
    or a cast Paimon makes implicitly, which fits (``types.casts.cast_kind``: INT to BIGINT
    or DOUBLE, a DECIMAL, VARCHAR or TIMESTAMP to a wider one, ...). An explicit
    cast (a narrowing, STRING to INT) may fail, and the read makes its value NULL."""
    return cast_kind(source, target) in ("identity", "implicit")


def superseded_positions(keys: Sequence[npt.NDArray[np.int64]],
                         deleted: Sequence[npt.NDArray[np.int64] | None]
                         ) -> list[npt.NDArray[np.int64]] | None:
    """The positions of each file's rows whose key an earlier file of ``keys`` holds, the
    files in walk order (the winning end first: newest first for deduplicate). ``keys``:
    each file's key of every row, by position; ``deleted``: each file's deleted positions
    (those rows are no version: they neither win nor lose). None where a file holds a key
    twice among its live rows."""
    import numpy as np

    live = [None if d is None or not len(d) else _alive(len(k), d)
            for k, d in zip(keys, deleted, strict=True)]
    present = [k if a is None else k[a] for k, a in zip(keys, live, strict=True)]
    if not any(len(k) for k in present):
        return [np.zeros(0, np.int64) for _ in keys]
    lo = min(int(k.min()) for k in present if len(k))
    hi = max(int(k.max()) for k in present if len(k))
    if hi - lo >= MAX_SPAN:
        return _sorted_walk(keys, live)
    seen = np.zeros(hi - lo + 1, dtype=bool)
    out = []
    for k, alive in zip(keys, live, strict=True):
        i = k - lo
        if alive is None:
            lost = seen[i]
            won = i[~lost]
        else:
            i = np.where(alive, i, 0)  # a deleted row's key may lie outside the span
            lost = seen[i] & alive
            won = i[alive & ~lost]
        if _twice(k, won):
            return None
        seen[won] = True
        out.append(np.flatnonzero(lost).astype(np.int64))
    return out


def _twice(keys: npt.NDArray[np.int64], won: npt.NDArray[np.int64]) -> bool:
    """Whether a key is twice among a file's winning rows ``won`` (of its ``keys``): never
    where the keys strictly increase, as a sorted run's do (checked in O(rows)), else by
    sorting them."""
    import numpy as np

    if _strictly_increasing(keys):
        return False
    return len(np.unique(won)) != len(won)


def _alive(rows: int, deleted: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    import numpy as np

    alive = np.ones(rows, dtype=bool)
    alive[deleted] = False
    return alive


def _sorted_walk(keys: Sequence[npt.NDArray[np.int64]],
                 live: Sequence[npt.NDArray[np.bool_] | None]
                 ) -> list[npt.NDArray[np.int64]] | None:
    """:func:`superseded_positions` by a stable sort of every live row's key (any span)."""
    import numpy as np

    which = np.concatenate([np.full(len(k), n, np.int64) for n, k in enumerate(keys)])
    pos = np.concatenate([np.arange(len(k), dtype=np.int64) for k in keys])
    alive = np.concatenate([np.ones(len(k), bool) if a is None else a
                            for k, a in zip(keys, live, strict=True)])
    key, which, pos = np.concatenate(keys)[alive], which[alive], pos[alive]
    order = np.argsort(key, kind="stable")  # walk order kept among a key's rows
    key, which, pos = key[order], which[order], pos[order]
    later = np.r_[False, key[1:] == key[:-1]]  # a key's row after its first: superseded
    winner = which[~later][np.cumsum(~later) - 1]  # the file of each row's key's first row
    if bool(np.any(later & (which == winner))):
        return None  # a key twice in the file that wins it
    which, pos = which[later], pos[later]
    by_file = np.argsort(which, kind="stable")
    which, pos = which[by_file], pos[by_file]
    bounds = np.searchsorted(which, np.arange(len(keys) + 1))
    return [np.sort(pos[bounds[n]:bounds[n + 1]]) for n in range(len(keys))]


def implied_deletes(plan: ReadPlan, buckets: Sequence[BucketPlan], opts: MergeOptions
                    ) -> dict[str, PositionDeletes] | None:
    """Per data file path, its superseded rows as deletes by position (files with none
    left out); None where the walk does not apply (see :func:`walk_key`) or a file's keys
    cannot be read on the driver (a file that lacks the key, or holds a key twice)."""
    key = walk_key(plan, opts)
    if key is None:
        return None
    files = [f for b in buckets for f in b.files]
    keys = _keys(plan, key, files)
    if keys is None:
        return None
    out: dict[str, PositionDeletes] = {}
    for b in buckets:
        walk = [f for run in b.runs for f in run]
        if opts.engine != FIRST_ROW:
            walk.reverse()  # deduplicate: the newest run wins
        lost = superseded_positions(
            [keys[f.path] for f in walk],
            [deleted_positions(f, plan.table) if f.deletes else None for f in walk])
        if lost is None:
            return None
        for f, pos in zip(walk, lost, strict=True):
            if len(pos):
                out[f.path] = _as_deletes(f, pos)
    return out


def _keys(plan: ReadPlan, key: str, files: Sequence[DataFile]
          ) -> dict[str, npt.NDArray[np.int64]] | None:
    """Each file's key of every row, by position (deleted rows too); None where they
    cannot be read, or a key is NULL (a file holds no more rows than its manifest says,
    so the NULLs :func:`key_values` drops show in the total)."""
    import numpy as np

    values = key_values([key], [dataclasses.replace(f, deletes=()) for f in files], plan)
    if values is None or len(values) != sum(f.row_count for f in files):
        return None
    ends = np.cumsum([f.row_count for f in files])[:-1]
    return {f.path: v for f, v in zip(files, np.split(values, ends), strict=True)}


def _as_deletes(f: DataFile, positions: npt.NDArray[np.int64]) -> PositionDeletes:
    """``positions`` of ``f`` as deletes by position held in memory (no file on disk)."""
    positions.setflags(write=False)
    return PositionDeletes("deletion vector",
                           f"(rows of {file_name(f)} superseded by other versions of their "
                           "keys, found by the merge read)", len(positions),
                           load=lambda: positions)


def read_superseded(plan: ReadPlan, spark: SparkSession, buckets: Sequence[BucketPlan],
                    opts: MergeOptions) -> DataFrame | None:
    """Every version of the buckets' keys that the merge keeps (each key once), with its
    sequence number and kind (+I for partial-update and aggregation, see
    :func:`newest_wins`): on a classic session each row kept where its key's winning run
    is its file's (:func:`_read_by_winning_run`), else the files read with their superseded
    rows dropped as deletion vectors are. None where :func:`implied_deletes` does not apply
    either: the caller merges the buckets in full."""
    out = _read_by_winning_run(plan, spark, buckets, opts)
    if out is not None:
        return _as_merged(out, opts)
    implied = implied_deletes(plan, buckets, opts)
    if implied is None:
        return None
    files = [f for b in buckets for f in b.files]
    with_deletes = plan.map_files(lambda f: dataclasses.replace(
        f, deletes=(*f.deletes, implied[f.path])) if f.path in implied else f)
    deleted = [f for f in files if f.path in implied or f.deletes]
    whole = [f for f in files if not (f.path in implied or f.deletes)]
    # at most FILES_PER_SCAN files with deletes a scan, about as many in each, where Spark
    # expressions test the positions; the JVM's filter takes any number
    per_scan = max(len(deleted), 1) if kept_rows.available(spark) else FILES_PER_SCAN
    scans = -(-len(deleted) // per_scan)
    chunks = [deleted[n::scans] for n in range(scans)] + ([whole] if whole else [])
    frames = [versions(with_deletes, spark, files=chunk) for chunk in chunks]
    out = None
    for df in frames:
        if df is not None:
            out = df if out is None else out.union(df)
    return None if out is None else _as_merged(out, opts)


def _as_merged(df: DataFrame, opts: MergeOptions) -> DataFrame:
    from pyspark.sql import functions as F

    if opts.engine in (PARTIAL_UPDATE, AGGREGATION):
        # their merge's result is an insert whatever the newest version's kind (Java's
        # getResult: RowKind.INSERT); a compaction writes it so
        df = df.withColumn(KIND_COL, F.lit(INSERT).cast("tinyint"))
    return df


#: the most bytes of winning runs (a byte per key of the span, per domain) the driver holds
#: to tell each file's kept keys; past it the superseded rows are dropped by their positions
WINNER_BYTES = 32 << 20


def _read_by_winning_run(plan: ReadPlan, spark: SparkSession, buckets: Sequence[BucketPlan],
                         opts: MergeOptions) -> DataFrame | None:
    """The buckets' winning versions kept by the JVM's key filter
    (:func:`schemalab.engine.kept_rows.key_filter`): each key's winning run, found on the
    driver (:func:`_winning_runs`), tells which of each file's keys it keeps, and each row
    is tested by its key against those. The scan reads no row position (Spark's row-index
    column cost 0.19 s of CPU per 10M rows), and a row a deletion vector deletes needs none
    either: it is no version, so its key's winning run is another (or none). None where the
    JVM filter is not available, or where this does not apply: a key twice in a file or in
    a run, more than 255 runs in a bucket, file names not unique, a file Spark would not
    scan (Avro), or more than :data:`WINNER_BYTES` of arrays."""
    from pyspark.sql import functions as F

    key = walk_key(plan, opts)
    files = [f for b in buckets for f in b.files]
    if key is None or not kept_rows.available(spark) \
            or any(f.format not in ("parquet", "orc") for f in files) \
            or len({file_name(f) for f in files}) != len(files) \
            or any(len(b.runs) > 255 for b in buckets):
        return None
    keys = _keys(plan, key, files)
    if keys is None or not all(_strictly_increasing(keys[f.path]) for f in files):
        return None
    present = [k for k in keys.values() if len(k)]
    if not present:
        return None
    first = min(int(k[0]) for k in present)
    span = max(int(k[-1]) for k in present) - first + 1
    if span > WINNER_BYTES:
        return None
    found = _winning_runs(plan, buckets, keys, first, span, opts)
    if found is None:
        return None
    domains, place = found
    bare = plan.map_files(
        lambda f: dataclasses.replace(f, deletes=()) if f.path in place else f)
    kept = []
    for f in files:
        d, run = place[f.path]
        k = keys[f.path]
        kept.append((file_name(f), k, domains[d][k - first] == run))
    keep = kept_rows.key_filter(spark, kept, F.col(quote(key)).cast("bigint"), plan.table)
    df = versions(bare, spark, files=files)
    return None if keep is None or df is None else df.where(keep)


def _winning_runs(plan: ReadPlan, buckets: Sequence[BucketPlan],
                  keys: dict[str, npt.NDArray[np.int64]], first: int, span: int,
                  opts: MergeOptions
                  ) -> tuple[list[npt.NDArray[np.uint8]], dict[str, tuple[int, int]]] | None:
    """Each key's winning run (from 1, 0 for none), a byte per key from ``first`` over
    ``span`` keys, in as few arrays (domains) as the buckets allow: buckets whose keys never
    meet share one (all of a table's buckets where its partitions do not repeat keys). With
    each file's (domain, run) by path. None where a run's files share a key, or more than
    :data:`WINNER_BYTES` of arrays would be needed."""
    import numpy as np

    domains: list[tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint8]]] = []
    place: dict[str, tuple[int, int]] = {}
    for b in buckets:
        if not _runs_are_disjoint(b, keys):
            return None
        every = np.concatenate([keys[f.path] for f in b.files]) - first
        d = next((n for n, (used, _) in enumerate(domains) if not used[every].any()), None)
        if d is None:
            if (len(domains) + 1) * span > WINNER_BYTES:
                return None
            domains.append((np.zeros(span, bool), np.zeros(span, np.uint8)))
            d = len(domains) - 1
        used, winners = domains[d]
        used[every] = True
        runs = list(enumerate(b.runs, start=1))
        # the winning run written last: deduplicate's newest, first-row's oldest
        for run, fs in (runs[::-1] if opts.engine == FIRST_ROW else runs):
            for f in fs:
                k = keys[f.path]
                if f.deletes:
                    k = k[_alive(len(k), deleted_positions(f, plan.table))]
                winners[k - first] = run
                place[f.path] = (d, run)
    if len(place) != sum(len(b.files) for b in buckets):
        return None  # a file of no run (the runs are made of the buckets' files)
    return [w for _, w in domains], place


def _strictly_increasing(keys: npt.NDArray[np.int64]) -> bool:
    import numpy as np

    return len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1]))


def _runs_are_disjoint(b: BucketPlan, keys: dict[str, npt.NDArray[np.int64]]) -> bool:
    """Whether no two files of one of ``b``'s runs share a key (each file's keys strictly
    increase): by their first and last keys."""
    for run in b.runs:
        ranges = sorted((int(k[0]), int(k[-1])) for f in run if len(k := keys[f.path]))
        if any(prev[1] >= nxt[0] for prev, nxt in zip(ranges, ranges[1:], strict=False)):
            return False
    return True
