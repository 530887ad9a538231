"""The newer version of a key as array lookups, for ``pair`` buckets (see
:mod:`schemalab.engine.merge.runs`): no hash join, hash table or shuffle.

In a ``pair`` bucket a key has at most two versions, the base's and a newer one, and the
newer files are few. Their rows are read once (evolved by Spark like any scan), sorted by
key on the driver and sent back as one ARRAY per column in a one-row frame; a base row
finds its key's newer version at the key's *rank* among the newer keys — which the bitmap
of those keys already answers: the set bits before the key's bit, counted as the set bits
of the words before its word (an array of running counts, one per 64 keys) plus those
below it in its own word (``bit_count``). Every array sits in a scalar subquery (past
:data:`MAX_BYTES`, in a broadcast frame: below), so the lookups run in the base scan's own
generated code, and a query of two columns looks up two arrays: Spark prunes the others.

Measured (``bench/merge_read.py``, partial-update, 3M rows, a tenth of the keys newer,
quiet machine): the broadcast left join ran the narrow query in 0.40 s against a plain
read's 0.18 s; the lookups in 0.22 s.

The frame is kept per session (the files never change): a second read of the same files
sends nothing. It is used only where it is known to round-trip exactly (atomic types
through Arrow) and stays within :data:`BROADCAST_BYTES`; otherwise the caller joins. Past
:data:`MAX_BYTES` the arrays do not go in scalar subqueries, whose values Spark puts in
every task (each task deserializes its own copy), but in the one-row frame itself,
broadcast and cross-joined to the base: each executor holds one copy, and Spark caches the
frame's rows (memory only) rather than converting every array from Arrow for each query;
the cache is let go when the session's cache of frames drops the frame. Measured
(2026-11-29, partial-update, 30M rows, 3M newer rows: 111 MB of arrays; local[2], 2 GB
heap): in scalar subqueries the full query ran out of heap while Spark serialized its
tasks; broadcast, it took 1.48x a plain read (the broadcast join of the newer rows: 1.71x)
and the narrow query 1.37x (not cached: 1.73x; the join: 2.9-3.6x). Below the bound the
subqueries stay: at 10M rows the broadcast frame was no faster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from schemalab.engine.deletes import array_scalar, bit_position, bitmap_words
from schemalab.engine.merge.function import Fold, MergeInput, folded_two_inserts
from schemalab.engine.merge.keyset import KeyBitmap
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.session_cache import Releasable, hold, local_frame, session_frames
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

#: the most bytes of newer rows (as Arrow) a read sends in scalar subqueries (each task
#: gets them all), and in a broadcast one-row frame (each executor gets them; the driver
#: holds the frame and builds the broadcast)
MAX_BYTES = 64 << 20
BROADCAST_BYTES = 128 << 20
_KEY = "__sl_lookup_key"
_RANK = "__sl_rank"


def fold_newer(base: DataFrame, rest: DataFrame, m: MergeInput, fold: Fold,
               bitmap: KeyBitmap, rest_files: Sequence[DataFile], plan: ReadPlan,
               spark: SparkSession) -> DataFrame | None:
    """Each row of ``base`` folded with its key's version among ``rest`` (whose keys are
    ``bitmap``'s, each once; neither side retracts) by ``fold``'s ``add`` steps, looked up
    in arrays: the fields read, ``__sl_seq``, ``__sl_kind``. None where the lookup does
    not apply (a type outside :func:`_round_trips`, more than :data:`MAX_BYTES`, or keys
    that are not the bitmap's): the caller joins.

    What is built — the arrays and every expression of the fold — is kept for the session
    with the arrays (the same files, table schema and session time zone): a later read of
    the same files builds nothing, as each call into Spark to build an expression costs the
    driver about a quarter of a millisecond, and a fold takes hundreds."""
    from pyspark.sql import functions as F

    frames = session_frames(spark)
    columns = [n for n in (SEQ_COL, KIND_COL, *m.names) if n not in m.keys]
    # what the evolved values depend on: the files, the table's schema, the cast mode and
    # the session's time zone and ANSI mode (a cast's result)
    conf = [spark.conf.get(k) for k in ("spark.sql.session.timeZone", "spark.sql.ansi.enabled")]
    identity = repr((tuple((f.path, f.file_size, f.row_count, f.schema_id) for f in rest_files),
                     plan.target, plan.cast_mode, m, conf))
    digest = b"lookup" + hashlib.blake2b(identity.encode(), digest_size=20).digest()
    hit = frames.get(digest)
    if hit is not None:
        hold(hit[0])
        built = cast("_Built", hit[1])
    else:
        arrays = _arrays(rest, m.keys[0], columns, bitmap, spark)
        if arrays is None:
            return None
        nbytes, frame = arrays
        # past MAX_BYTES the frame is broadcast and its row joined to every base row; Spark
        # caches its rows (else each query converts every array from Arrow again: 0.3 s of
        # a 1.4 s narrow query at 3M newer rows), and may drop them when short of memory
        broadcast = _cached(frame) if nbytes > MAX_BYTES else None
        looked = [F.col(_column(i)) if broadcast is not None else
                  frame.select(F.col(_column(i))).scalar() for i in range(len(columns))]
        # whether the key has a newer version, and its rank: once per row, in a column each
        # lookup reads
        rank = F.when(bitmap.test(spark), rank_of(bitmap, spark))
        newer = {c: F.element_at(array, F.col(_RANK))
                 for c, array in zip(columns, looked, strict=True)}
        built = _Built(rank, folded_two_inserts(m, fold, newer, F.col(_RANK).isNotNull()),
                       broadcast)
        frames.put(digest, (nbytes, built))
    if built.broadcast is not None:
        base = base.crossJoin(F.broadcast(built.broadcast))
    return base.select("*", built.rank.alias(_RANK)).select(*built.results)


@dataclass(frozen=True, eq=False)  # Spark's columns compare as expressions, not values
class _Built(Releasable):
    """What :func:`fold_newer` built, kept for the session: the rank, the fold's result
    columns and the broadcast frame of arrays (None: the arrays are in subqueries)."""

    rank: Column
    results: list[Column]
    broadcast: DataFrame | None

    def release(self) -> None:
        """Called when the session's cache drops this: Spark's copy of the frame let go."""
        if self.broadcast is not None:
            self.broadcast.unpersist()


def _cached(frame: DataFrame) -> DataFrame:
    """``frame`` cached by Spark in memory only (rebuilt from its Arrow rows if dropped)."""
    from pyspark.storagelevel import StorageLevel

    return frame.persist(StorageLevel.MEMORY_ONLY)


def _arrays(rest: DataFrame, key: str, columns: Sequence[str], bitmap: KeyBitmap,
            spark: SparkSession) -> tuple[int, DataFrame] | None:
    """(bytes, a one-row frame of each of ``columns`` of ``rest`` as an array in key order,
    column ``__sl_v<i>`` for the i-th); None where they cannot be (see
    :func:`fold_newer`)."""
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    schema = {f.name: f.dataType for f in rest.schema.fields}
    if not all(_round_trips(schema[c]) for c in columns):
        return None
    rows = rest.select(F.col(quote(key)).alias(_KEY),
                       *[F.col(quote(c)).alias(_column(i)) for i, c in enumerate(columns)]
                       ).where(F.col(_KEY).isNotNull()).toArrow()
    keys = rows.column(_KEY).to_numpy().astype(np.int64)
    order = np.argsort(keys, kind="stable")
    held = np.flatnonzero(bitmap.bits) + bitmap.lo
    if len(keys) != len(held) or not np.array_equal(keys[order], held):
        return None  # not each of the bitmap's keys once: the caller joins
    if rows.nbytes > BROADCAST_BYTES:
        return None  # the driver would hold too much
    rows = rows.take(pa.array(order))
    offsets = pa.array([0, rows.num_rows], pa.int32())
    table = pa.table({_column(i): pa.ListArray.from_arrays(
        offsets, rows.column(_column(i)).combine_chunks()) for i in range(len(columns))})
    return rows.nbytes, local_frame(spark, table, st.StructType([
        st.StructField(_column(i), st.ArrayType(schema[c], True), True)
        for i, c in enumerate(columns)]))


def _column(i: int) -> str:
    return f"__sl_v{i}"


def rank_of(bitmap: KeyBitmap, spark: SparkSession) -> Column:
    """The 1-based rank of the row's key among ``bitmap``'s keys (where it holds it): the
    set bits of the words before its word plus those below its bit."""
    import numpy as np
    from pyspark.sql import functions as F

    words = bitmap_words(bitmap.bits)
    counts = np.bitwise_count(words.view(np.uint64)).astype(np.int32)
    before = np.concatenate([np.zeros(1, np.int32), np.cumsum(counts, dtype=np.int32)[:-1]])
    _, w, bit = bit_position(F.col(quote(bitmap.key)), bitmap.lo, int_index=bitmap.int_key)
    word = F.get(array_scalar(words, spark), w)
    below = word.bitwiseAND(F.call_function("shiftleft", F.lit(1).cast("bigint"), bit) - 1)
    return F.get(array_scalar(before, spark), w) + F.bit_count(below) + 1


def _round_trips(t: st.DataType) -> bool:
    """Whether values of Spark type ``t`` come back from Arrow as they went (atomic types
    whose conversion is exact both ways)."""
    from pyspark.sql import types as st

    return isinstance(t, (st.BooleanType, st.ByteType, st.ShortType, st.IntegerType,
                          st.LongType, st.FloatType, st.DoubleType, st.DecimalType,
                          st.StringType, st.BinaryType, st.DateType, st.TimestampType,
                          st.TimestampNTZType))
