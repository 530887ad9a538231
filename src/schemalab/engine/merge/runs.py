"""Which files of a bucket need merging at all, from the manifests alone (no data read).

All versions of a key live in one bucket. Each level above 0 is a sorted run (each key once),
and two files whose key ranges (``_MIN_KEY``..``_MAX_KEY``) do not overlap share no key: so a
key found in one file only has one version, which Paimon's reducer returns as it is (Paimon's
``IntervalPartition`` reads such files without merging). Per bucket, the merge read chooses
(:class:`BucketPlan`):

``raw``     first-row, no file with -U/-D rows: Paimon reads the files as they are
``single``  no two files share a key: every row is its key's only version (retractions
            dropped)
``newest``  deduplicate without ``sequence.field``: the *base* is the oldest files (by
            sequence number) that share no key, every other file is newer than all of
            them; the newest version of each key is then found by looking up its key among
            the (few) rows of the other files, with no shuffle or sort of the rows
``pair``    partial-update or aggregation without ``sequence.field``: a base as for
            ``newest``, and the other files share no key either, so a key has at most two
            versions, the base's older than the other's; each base row meets the other
            version of its key, if any — looked up by the key's rank in arrays of the other
            files' rows, or in a broadcast join — and the two are folded row by row (the
            engine's own fold step, twice): one scan of the base, no shuffle, sort or
            grouping
``split``   the base is the largest set of files that share no key: its rows whose key no
            other file holds are their key's only version; only the others, and the other
            files' rows, are merged
``superseded``  deduplicate or first-row without ``sequence.field`` or -U/-D rows (and
            partial-update or aggregation whose merge is each key's newest version:
            :func:`schemalab.engine.merge.superseded.newest_wins`), whose
            files overlap in many runs (else ``full``, or deduplicate's ``newest`` whose
            newer files share keys): each file's rows whose key a newer
            (deduplicate) or older (first-row) run holds are found on the driver from every
            file's keys, and dropped as deletion vectors are, so every row left is its key's
            only version and none is merged (:mod:`schemalab.engine.merge.superseded`)
``full``    every row is merged (the other files hold more rows than the base, or too many
            keys to broadcast)

    >>> from schemalab.engine.plan import DataFile
    >>> f = lambda n, lvl, lo, hi, keys, rows=10: DataFile(n, 0, rows, level=lvl,
    ...     min_sequence_number=lo, max_sequence_number=hi, key_range=keys)
    >>> b = bucket_plans([f("a", 0, 0, 9, ((0,), (9,))), f("b", 0, 10, 19, ((10,), (19,))),
    ...                   f("c", 0, 20, 21, ((3,), (15,)), rows=2)],
    ...                  "deduplicate", sequence_fields=())[0]
    >>> b.strategy, [x.path for x in b.base], [x.path for x in b.rest]
    ('newest', ['a', 'b'], ['c'])
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from schemalab.engine.merge.options import AGGREGATION, DEDUPLICATE, FIRST_ROW, PARTIAL_UPDATE
from schemalab.engine.plan import DataFile

Strategy = Literal["raw", "single", "newest", "pair", "split", "superseded", "full"]

#: the most rows whose keys a merge broadcasts to every task (``newest``, ``split``)
BROADCAST_ROWS = 5_000_000
#: the most rows, and bytes of their files, that ``pair`` buckets broadcast (every column a
#: query reads: the driver holds them, 2 GB by default); past either they are ``split``,
#: which reads the base twice and groups the rows of its keys that have a newer version.
#: Measured (2026-11-29, partial-update, 30M rows, 3M newer rows in 33 MB of files, local[2],
#: 2 GB heap): ``pair`` (a broadcast join there, past the lookups' bound) against ``split``,
#: the full query 1.71x a plain read against 2.64x, the narrow one 2.87x against 5.67x; the
#: heap's old generation peaked at 0.93 GB against 0.72 GB in the full query.
PAIR_ROWS = 4_000_000
PAIR_FILE_BYTES = 48 << 20
#: the most rows of ``superseded`` buckets, whose keys the driver reads and holds (as
#: int64, 128 MiB: :data:`schemalab.engine.merge.keyset.CACHED_KEYS`); past it, ``full``
SUPERSEDED_ROWS = 1 << 24
#: the engines whose merge is a fold of a key's versions, oldest first
_FOLDS = (PARTIAL_UPDATE, AGGREGATION)


@dataclass(frozen=True)
class BucketPlan:
    partition: tuple[object, ...]
    bucket: int
    #: the bucket's sorted runs, oldest first
    runs: tuple[tuple[DataFile, ...], ...]
    strategy: Strategy
    #: ``newest``, ``pair`` and ``split``: files that share no key (see the module's
    #: docstring)
    base: tuple[DataFile, ...] = ()
    #: whether the files outside the base share no key either (each key once among them)
    rest_disjoint: bool = False

    @property
    def files(self) -> list[DataFile]:
        return [f for run in self.runs for f in run]

    @property
    def rest(self) -> list[DataFile]:
        """The files outside the base."""
        base = {f.path for f in self.base}
        return [f for f in self.files if f.path not in base]

    @property
    def rows(self) -> int:
        return sum(f.row_count for f in self.files)

    def merged_rows(self) -> int:
        """Rows that may go through the merge function (an upper bound)."""
        if self.strategy in ("raw", "single", "newest", "pair", "superseded"):
            return 0
        if self.strategy == "split":
            return sum(f.row_count for f in self.rest)
        return self.rows

    def broadcast_rows(self) -> int:
        """Rows whose keys the merge broadcasts (``newest``, ``pair``, ``split``: the
        rest's; ``pair`` broadcasts every column of them)."""
        if self.strategy in ("newest", "pair", "split"):
            return sum(f.row_count for f in self.rest)
        return 0


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


class _KeyRanges:
    """Files that share no key, by their key ranges (a sorted list of disjoint intervals)."""

    def __init__(self) -> None:
        self._lows: list[Any] = []
        self._highs: list[Any] = []

    def add(self, f: DataFile) -> bool:
        """Add ``f`` if its keys overlap no file's added so far; whether it was added."""
        assert f.key_range is not None
        lo, hi = f.key_range
        try:
            i = bisect.bisect_left(self._lows, lo)
            if (i > 0 and not self._highs[i - 1] < lo) or (
                    i < len(self._lows) and not hi < self._lows[i]):
                return False
        except TypeError:  # keys that do not compare (a NULL in a key written by others)
            return False
        self._lows.insert(i, lo)
        self._highs.insert(i, hi)
        return True


def _disjoint(files: Sequence[DataFile]) -> bool:
    """Whether no two of ``files`` share a key, as far as their key ranges tell."""
    if len(files) < 2:
        return True
    if any(f.key_range is None for f in files):
        return False
    ranges = _KeyRanges()
    return all(ranges.add(f) for f in files)


def _oldest_disjoint(runs: Sequence[Sequence[DataFile]]) -> tuple[DataFile, ...]:
    """The longest prefix of the bucket's files in sequence order that share no key and
    whose sequence numbers are all below every other file's; () if there is none."""
    files = [f for r in runs for f in r]
    if any(f.key_range is None for f in files):
        # without key ranges only a level's files are known to share no key
        oldest, others = runs[0], [f for r in runs[1:] for f in r]
        if max(f.max_sequence_number for f in oldest) < min(
                f.min_sequence_number for f in others):
            return tuple(oldest)
        return ()
    files.sort(key=lambda f: (f.max_sequence_number, f.min_sequence_number))
    below = [0] * (len(files) + 1)  # below[i]: the lowest sequence number of files[i:]
    below[-1] = 2**63
    for i in range(len(files) - 1, -1, -1):
        below[i] = min(below[i + 1], files[i].min_sequence_number)
    ranges, best, top = _KeyRanges(), 0, -1
    for i, f in enumerate(files):
        if not ranges.add(f):
            break
        top = max(top, f.max_sequence_number)
        if top < below[i + 1]:
            best = i + 1
    return tuple(files[:best])


def _largest_disjoint(runs: Sequence[Sequence[DataFile]]) -> tuple[DataFile, ...]:
    """A large set of the bucket's files that share no key (largest files first)."""
    files = [f for r in runs for f in r]
    if any(f.key_range is None for f in files):
        return tuple(max(runs, key=lambda r: sum(f.row_count for f in r)))
    ranges = _KeyRanges()
    return tuple(f for f in sorted(files, key=lambda f: -f.row_count) if ranges.add(f))


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
    if engine in (DEDUPLICATE, *_FOLDS) and not sequence_fields:
        # the versions of a key merge in the order the files were written: the oldest
        # files sharing no key are a base every other file is newer than
        base = _oldest_disjoint(runs)
        if len(base) == len(files):
            return BucketPlan(partition, bucket, runs, "single")
        if base:
            in_base = {f.path for f in base}
            rest = [f for f in files if f.path not in in_base]
            if engine == DEDUPLICATE:
                return BucketPlan(partition, bucket, runs, "newest", base, _disjoint(rest))
            if _disjoint(rest) and \
                    sum(f.row_count for f in rest) <= sum(f.row_count for f in base):
                return BucketPlan(partition, bucket, runs, "pair", base, True)
    base = _largest_disjoint(runs)
    if len(base) == len(files):
        return BucketPlan(partition, bucket, runs, "single")
    base_rows = sum(f.row_count for f in base)
    if base and base_rows >= sum(f.row_count for f in files) - base_rows:
        return BucketPlan(partition, bucket, runs, "split", base)
    return BucketPlan(partition, bucket, runs, "full")


def limit_broadcast(plans: list[BucketPlan], broadcast_rows: int = BROADCAST_ROWS,
                    pair_rows: int = PAIR_ROWS, pair_bytes: int = PAIR_FILE_BYTES
                    ) -> list[BucketPlan]:
    """``newest``, ``pair`` and ``split`` broadcast the keys of the files outside their base
    (``pair`` every column of them); past ``pair_rows`` of those or ``pair_bytes`` of their
    files, ``pair`` buckets merge as ``split`` (their base shares no key), and past
    ``broadcast_rows`` in all, the buckets merge in full."""
    pairs = [p for p in plans if p.strategy == "pair"]
    if sum(p.broadcast_rows() for p in pairs) > pair_rows or \
            sum(f.file_size for p in pairs for f in p.rest) > pair_bytes:
        plans = [BucketPlan(p.partition, p.bucket, p.runs, "split", p.base)
                 if p.strategy == "pair" else p for p in plans]
    if sum(p.broadcast_rows() for p in plans) <= broadcast_rows:
        return plans
    return [BucketPlan(p.partition, p.bucket, p.runs, "full")
            if p.strategy in ("newest", "pair", "split") else p for p in plans]


def ordered_runs(runs: Sequence[Sequence[DataFile]]) -> bool:
    """Whether every version in each run is newer than every version in the runs before it
    (each run's sequence numbers above the former runs'): then a key's newest version is
    the one in its newest run, found without comparing sequence numbers."""
    top = -1
    for run in runs:
        if min(f.min_sequence_number for f in run) <= top:
            return False
        top = max(f.max_sequence_number for f in run)
    return True


def supersede(plans: list[BucketPlan], engine: str, *, eligible: bool,
              max_rows: int = SUPERSEDED_ROWS) -> list[BucketPlan]:
    """``full`` buckets, and ``newest`` ones whose newer files share keys (each newer key's
    newest version found by grouping them), read as ``superseded`` where that applies
    (``eligible``: the read's key is one integer column and no value column holds row
    kinds; the caller knows), largest first while their rows stay within ``max_rows``
    (:data:`SUPERSEDED_ROWS`)."""
    if not eligible or engine not in (DEDUPLICATE, FIRST_ROW):
        return plans
    chosen: set[int] = set()
    rows = 0
    for i, p in sorted(enumerate(plans), key=lambda ip: -ip[1].rows):
        overlapping = p.strategy == "full" or (p.strategy == "newest" and not p.rest_disjoint)
        if overlapping and ordered_runs(p.runs) and rows + p.rows <= max_rows \
                and all(f.delete_row_count == 0 for f in p.files):
            chosen.add(i)
            rows += p.rows
    return [BucketPlan(p.partition, p.bucket, p.runs, "superseded") if i in chosen else p
            for i, p in enumerate(plans)]
