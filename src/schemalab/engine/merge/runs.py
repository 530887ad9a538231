"""Which files of a bucket need merging at all, from the manifests alone (no data read).

All versions of a key live in one bucket, and each bucket's files form *sorted runs*: every
level-0 file is a run, every higher level one run; a run holds each key once, sorted. So a
key found in one run only has one version, which Paimon's reducer returns as it is. Per
bucket, the merge read chooses (:class:`BucketPlan`):

``raw``     first-row, no file with -U/-D rows: Paimon reads the files as they are
``single``  one run: every row is its key's only version (retractions dropped)
``newest``  deduplicate without ``sequence.field``, runs in sequence order (each run's
            sequence numbers above the previous run's): the row of the newest run holding a
            key wins, so each row is kept or dropped by looking up its key among the keys of
            newer runs, with no shuffle of the rows
``split``   the largest run is the base: its rows whose key no other run holds are their
            key's only version; only the others, and the other runs' rows, are merged
``full``    every row is merged (the other runs hold more rows than the base, or too many
            keys to broadcast)

    >>> from schemalab.engine.plan import DataFile
    >>> f = lambda n, lvl, lo, hi, rows=10: DataFile(n, 0, rows, level=lvl,
    ...     min_sequence_number=lo, max_sequence_number=hi)
    >>> b = bucket_plans([f("a", 5, 0, 99, 100), f("b", 0, 100, 109), f("c", 0, 110, 119)],
    ...                  "deduplicate", sequence_fields=())[0]
    >>> [len(r) for r in b.runs], b.ordered, b.strategy
    ([1, 1, 1], True, 'newest')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from schemalab.engine.plan import DataFile
from schemalab.paimon.merge_options import DEDUPLICATE, FIRST_ROW

Strategy = Literal["raw", "single", "newest", "split", "full"]

#: the most rows whose keys a merge broadcasts to every task (``newest``, ``split``)
BROADCAST_ROWS = 5_000_000


@dataclass(frozen=True)
class BucketPlan:
    partition: tuple[object, ...]
    bucket: int
    #: the bucket's sorted runs, oldest first
    runs: tuple[tuple[DataFile, ...], ...]
    strategy: Strategy
    #: ``split``: the index of the base run
    base: int = 0

    @property
    def files(self) -> list[DataFile]:
        return [f for run in self.runs for f in run]

    @property
    def ordered(self) -> bool:
        """Whether each run's sequence numbers are all above the previous run's."""
        pairs = zip(self.runs, self.runs[1:], strict=False)
        return all(_max_seq(a) < _min_seq(b) for a, b in pairs)

    @property
    def rows(self) -> int:
        return sum(f.row_count for f in self.files)

    def merged_rows(self) -> int:
        """Rows that may go through the merge function (an upper bound)."""
        if self.strategy in ("raw", "single", "newest"):
            return 0
        if self.strategy == "split":
            return self.rows - sum(f.row_count for f in self.runs[self.base])
        return self.rows


def _max_seq(run: Sequence[DataFile]) -> int:
    return max(f.max_sequence_number for f in run)


def _min_seq(run: Sequence[DataFile]) -> int:
    return min(f.min_sequence_number for f in run)


def sorted_runs(files: Sequence[DataFile]) -> tuple[tuple[DataFile, ...], ...]:
    """The sorted runs of one bucket's files, oldest first: a run per level above 0 (the
    highest level is the oldest), then each level-0 file by sequence number."""
    levels: dict[int, list[DataFile]] = {}
    for f in files:
        levels.setdefault(f.level, []).append(f)
    runs = [tuple(levels[lvl]) for lvl in sorted(levels, reverse=True) if lvl > 0]
    runs += [(f,) for f in sorted(levels.get(0, []),
                                  key=lambda f: (f.max_sequence_number, f.min_sequence_number))]
    return tuple(runs)


def bucket_plans(files: Sequence[DataFile], engine: str, *, sequence_fields: Sequence[str],
                 batch: bool = True) -> list[BucketPlan]:
    """One plan per (partition, bucket) of ``files``. ``batch``: a batch read, which reads
    a first-row table's compacted files as they are (a compaction merges them)."""
    by_bucket: dict[tuple[tuple[object, ...], int], list[DataFile]] = {}
    for f in files:
        by_bucket.setdefault((f.partition, f.bucket), []).append(f)
    return [_plan(p, b, sorted_runs(fs), engine, sequence_fields, batch)
            for (p, b), fs in sorted(by_bucket.items(), key=lambda kv: repr(kv[0]))]


def _plan(partition: tuple[object, ...], bucket: int, runs: tuple[tuple[DataFile, ...], ...],
          engine: str, sequence_fields: Sequence[str], batch: bool) -> BucketPlan:
    files = [f for r in runs for f in r]
    if batch and engine == FIRST_ROW and all(
            f.level > 0 and not f.delete_row_count for f in files):
        return BucketPlan(partition, bucket, runs, "raw")
    if len(runs) == 1:
        return BucketPlan(partition, bucket, runs, "single")
    plan = BucketPlan(partition, bucket, runs, "full")
    if engine == DEDUPLICATE and not sequence_fields and plan.ordered:
        return BucketPlan(partition, bucket, runs, "newest")
    sizes = [sum(f.row_count for f in r) for r in runs]
    base = max(range(len(runs)), key=lambda i: (sizes[i], -i))
    if sizes[base] >= sum(sizes) - sizes[base]:
        return BucketPlan(partition, bucket, runs, "split", base)
    return plan


def limit_broadcast(plans: list[BucketPlan], broadcast_rows: int = BROADCAST_ROWS
                    ) -> list[BucketPlan]:
    """``newest`` and ``split`` broadcast the keys of every run but the oldest (``newest``)
    or the base (``split``); past ``broadcast_rows`` of them, the buckets merge in full."""
    total = 0
    for p in plans:
        if p.strategy == "newest":
            total += p.rows - sum(f.row_count for f in p.runs[0])
        elif p.strategy == "split":
            total += p.merged_rows()
    if total <= broadcast_rows:
        return plans
    return [BucketPlan(p.partition, p.bucket, p.runs, "full")
            if p.strategy in ("newest", "split") else p for p in plans]
