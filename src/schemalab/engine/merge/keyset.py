"""Rows of many files whose key a few other files hold: the lookup behind the merge read's
``newest`` and ``split`` buckets (see :mod:`schemalab.engine.merge.runs`).

Two ways, chosen per read:

``bitmap``     one integer key (TINYINT … BIGINT) whose values among the few files span at
               most :data:`MAX_SPAN` numbers: their keys are read on the driver (only that
               column, with pyarrow), set as bits of a bitmap, and each row tests its bit
               in a filter of its own scan — a scalar subquery holds the bitmap, so the test
               runs inside the scan's generated code, with no join, shuffle or hash table.
``broadcast``  any other key: a broadcast hash join against the few files' keys (Spark
               builds the hash table on the driver and ships it to every task).

Measured by ``bench/merge_read.py`` (3M rows, a tenth of the keys upserted): the broadcast
join cost 0.5 s over the scan of the other 2.7M rows, the bitmap 0.2 s with its driver read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.engine.arrow_read import read_file
from schemalab.engine.deletes import bitmap_test
from schemalab.engine.keyed import RETRACT, VALUE_KIND
from schemalab.engine.lru import SizedLru
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.spark_reader import quote
from schemalab.types.model import TINYINT, AtomicType, DataField, DataType, TypeRoot

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import Column, DataFrame, SparkSession

#: the widest range of key values a bitmap covers (16 MiB of bits; built from 128 MiB of bools)
MAX_SPAN = 1 << 27
#: the most keys the driver keeps of the files it read them from (a data file is never
#: rewritten, so its keys are its own for good): 128 MiB of int64
CACHED_KEYS = 1 << 24
_INTEGERS = (TypeRoot.TINYINT, TypeRoot.SMALLINT, TypeRoot.INTEGER, TypeRoot.BIGINT)


def without_held(rows: DataFrame, keys: Sequence[str], others: DataFrame,
                 other_files: Sequence[DataFile], plan: ReadPlan, spark: SparkSession, *,
                 inserts_only: bool = False) -> tuple[DataFrame, DataFrame]:
    """(``rows`` whose key ``others`` — the rows of ``other_files`` — does not hold, ``rows``
    whose key it does). ``inserts_only``: ``others`` holds only the files' +I/+U rows
    (``ignore-delete``), so the bitmap counts only those."""
    test = _bitmap(keys, other_files, plan, spark, inserts_only=inserts_only)
    if test is not None:
        return rows.where(~test), rows.where(test)
    return _joined(rows, keys, others, "left_anti"), _joined(rows, keys, others, "left_semi")


def not_held(rows: DataFrame, keys: Sequence[str], others: DataFrame) -> DataFrame:
    """``rows`` whose key ``others`` does not hold, by a broadcast anti-join: for keys that
    make no bitmap (:func:`held_bitmap`; those that do are dropped by the scan itself, see
    :func:`schemalab.engine.scan.read_group`)."""
    return _joined(rows, keys, others, "left_anti")


def _joined(rows: DataFrame, keys: Sequence[str], others: DataFrame, how: str) -> DataFrame:
    """``rows`` semi- or anti-joined to ``others``' keys, broadcast."""
    from pyspark.sql import functions as F

    broadcast = F.broadcast(others.select(*[F.col(quote(k)) for k in keys]))
    # A join on column names puts those columns first; callers union these frames with
    # others by position, so each keeps ``rows``' own column order (the key columns are
    # not the leading ones once a column is moved before them, or the key's order differs).
    columns = [F.col(quote(c)) for c in rows.columns]
    return rows.join(broadcast, on=list(keys), how=how).select(*columns)


@dataclass(frozen=True)
class KeyBitmap:
    """The keys of some files as bits: key ``lo + i`` is held where ``bits[i]``."""

    key: str
    lo: int
    bits: npt.NDArray[np.bool_]
    #: the key is an INT (or narrower) column: the test then needs no 64-bit arithmetic
    int_key: bool = False

    def holds(self, values: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which of ``values`` are held."""
        import numpy as np

        i = values - self.lo
        inside = (i >= 0) & (i < len(self.bits))
        out = np.zeros(len(values), dtype=bool)
        out[inside] = self.bits[i[inside]]
        return out

    def test(self, spark: SparkSession) -> Column:
        """Whether a row's key is held, as a filter of the row's own scan (the bitmap in a
        scalar subquery: the test runs in the scan's generated code)."""
        from pyspark.sql import functions as F

        return bitmap_test(F.col(quote(self.key)), self.lo, self.bits, spark,
                           int_index=self.int_key)


@dataclass(frozen=True)
class KeyRange:
    """Every key from ``lo`` to ``hi`` (a :class:`KeyBitmap` of all ones, without its bits)."""

    key: str
    lo: int
    hi: int

    def holds(self, values: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which of ``values`` are held."""
        return (values >= self.lo) & (values <= self.hi)

    def test(self, spark: SparkSession) -> Column:
        """Whether a row's key is held (False for a NULL key, as the bitmap's test)."""
        from pyspark.sql import functions as F

        return F.coalesce(F.col(quote(self.key)).between(self.lo, self.hi), F.lit(False))


def dense_keys(keys: Sequence[str], files: Sequence[DataFile],
               plan: ReadPlan) -> KeyRange | None:
    """The keys of ``files`` — a base: files of one partition that share no key, as the
    buckets of a partition share none — as a range, when their manifests show it is
    dense: as many rows as keys from the least to the greatest (a data file holds each key
    once). None where that does not show, or the key is not one integer column."""
    if integer_key(keys, plan) is None or not files or len({f.partition for f in files}) > 1:
        return None
    lows, highs = [], []
    for f in files:
        if f.deletes or f.key_range is None or len(f.key_range[0]) != 1:
            return None
        (lo,), (hi,) = f.key_range
        if type(lo) is not int or type(hi) is not int:
            return None
        lows.append(lo)
        highs.append(hi)
    lo, hi = min(lows), max(highs)
    if sum(f.row_count for f in files) != hi - lo + 1:
        return None
    return KeyRange(keys[0], lo, hi)


def integer_key(keys: Sequence[str], plan: ReadPlan) -> DataField | None:
    """The plan's field of the key ``keys``, where it is one integer column."""
    if len(keys) != 1:
        return None
    target = plan.target.field(keys[0])
    if target is None or not isinstance(target.type, AtomicType) or \
            target.type.root not in _INTEGERS:
        return None
    return target


class _KeyCache(SizedLru[tuple[object, ...], "npt.NDArray[np.int64]"]):
    """The keys read of data files, least recently used dropped past :data:`CACHED_KEYS`
    keys; what it keeps is read-only (no caller changes it)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit, len)

    def put(self, key: tuple[object, ...], values: npt.NDArray[np.int64]) -> None:
        values.setflags(write=False)
        super().put(key, values)


_CACHE = _KeyCache(CACHED_KEYS)


def key_values(keys: Sequence[str], files: Sequence[DataFile], plan: ReadPlan, *,
               inserts_only: bool = False) -> npt.NDArray[np.int64] | None:
    """The key of every row of ``files`` (``inserts_only``: of every +I/+U row), read on the
    driver, one column with pyarrow; None where the key is not one integer column, or a
    file lacks it or has rows deleted by position."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    target = integer_key(keys, plan)
    if target is None or (inserts_only and _rowkind_field(plan) is not None):
        return None  # not one integer key column, or row kinds in a value column: join
    reads = []
    for f in files:
        schema = plan.schemas.get(f.schema_id)
        source = None if schema is None else next(
            (x for x in schema.fields if x.id == target.id), None)
        if source is None or f.deletes:
            return None  # a key the file lacks, or rows deleted by position: join instead
        retracts = inserts_only and f.delete_row_count != 0
        reads.append((f, [(source.name, source.type)]
                      + ([(VALUE_KIND, TINYINT())] if retracts else [])))

    def keys_of(f: DataFile, columns: list[tuple[str, DataType]]) -> npt.NDArray[np.int64]:
        cached = (f.path, f.file_size, f.row_count, f.format, repr(columns))
        values = _CACHE.get(cached)
        if values is not None:
            return values
        t = read_file(f, columns)
        key = t.column(0)
        if len(columns) > 1:  # the +I/+U rows' keys only
            kind = t.column(1).fill_null(0)
            key = key.filter(pc.invert(pc.is_in(kind, pa.array(RETRACT, pa.int8()))))
        values = key.drop_null().to_numpy().astype(np.int64)
        _CACHE.put(cached, values)
        return values

    # pyarrow decodes without the GIL: a thread per core reads the files side by side
    with ThreadPoolExecutor(max_workers=max(1, min(len(reads), os.cpu_count() or 1))) as pool:
        values = list(pool.map(lambda r: keys_of(*r), reads))
    return np.concatenate(values) if values else np.zeros(0, np.int64)


def key_bitmap(key: str, values: npt.NDArray[np.int64], *,
               int_key: bool = False) -> KeyBitmap | None:
    """``values`` as a bitmap; None where they span :data:`MAX_SPAN` numbers or more.
    ``int_key``: the key column is an INT or narrower (see :class:`KeyBitmap`)."""
    import numpy as np

    if not len(values):
        return KeyBitmap(key, 0, np.zeros(0, dtype=bool), int_key)
    lo, hi = int(values.min()), int(values.max())
    if hi - lo >= MAX_SPAN:
        return None
    bits = np.zeros((((hi - lo) >> 6) + 1) * 64, dtype=bool)
    bits[values - lo] = True
    return KeyBitmap(key, lo, bits, int_key)


def int_key(keys: Sequence[str], plan: ReadPlan) -> bool:
    """Whether the plan's key is one INT (or narrower) column."""
    target = integer_key(keys, plan)
    return target is not None and target.type.root is not TypeRoot.BIGINT


def _rowkind_field(plan: ReadPlan) -> str | None:
    return plan.target.effective_options().get("rowkind.field")


def held_bitmap(keys: Sequence[str], files: Sequence[DataFile], plan: ReadPlan, *,
                inserts_only: bool = False) -> KeyBitmap | None:
    """The keys of ``files`` as a bitmap (``inserts_only``: of their +I/+U rows), or None
    where the key is not one integer column, a file's keys cannot be read on the driver, or
    they span :data:`MAX_SPAN` numbers or more."""
    values = key_values(keys, files, plan, inserts_only=inserts_only)
    return None if values is None else key_bitmap(keys[0], values,
                                                  int_key=int_key(keys, plan))


def _bitmap(keys: Sequence[str], files: Sequence[DataFile], plan: ReadPlan,
            spark: SparkSession, *, inserts_only: bool) -> Column | None:
    """The bitmap test of the module's docstring, or None where it does not apply."""
    bitmap = held_bitmap(keys, files, plan, inserts_only=inserts_only)
    return None if bitmap is None else bitmap.test(spark)
