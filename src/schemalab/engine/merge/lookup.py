"""The newer version of a key as lookups by rank, for ``pair`` buckets (see
:mod:`schemalab.engine.merge.runs`): no hash join, hash table or shuffle.

In a ``pair`` bucket a key has at most two versions, the base's and a newer one, and the
newer files are few. Their rows are read once (evolved by Spark like any scan) and sorted
by key on the driver; a base row finds its key's newer version at the key's *rank* among
the newer keys — which the bitmap of those keys already answers: the set bits before the
key's bit, counted as the set bits of the words before its word (an array of running
counts, one per 64 keys) plus those below it in its own word (``bit_count``). The rank is
a column of the base scan's own generated code; each newer value is looked up at it, once
per row that has one, in a column of its own that a query which does not read it prunes.

Where the values are held:

- on a classic session, in the JVM: ``NewerValues`` (``src/schemalab/jvm/``,
  :mod:`schemalab.engine.jvm_udfs`) holds each column in a primitive array, one broadcast
  per executor for all of them, and a UDF per column looks a value up;
- else (Spark Connect, a decimal of more than 18 digits, ``spark.schemalab.jvm.enabled``
  false), as one ARRAY per column in a one-row frame: in scalar subqueries (each task gets
  them all), or past :data:`MAX_BYTES` in the frame itself, broadcast and cross-joined to
  the base (one copy per executor), its rows cached by Spark (memory only) rather than
  converted from Arrow for each query; the cache is let go when the session's cache of
  frames drops the frame.

Measured (``bench/merge_read.py``'s layout a, 30M rows, 3M newer rows, one process, 5
interleaved rounds, load 2.4–2.5; merge/plain wall): partial-update narrow / full 1.02 /
1.07 in the JVM against 1.87 / 1.67 in the cross-joined arrays, aggregation 1.33 / 1.28
against 2.06 / 1.41. The cross join alone cost a third of a plain read: every base row
passes through it. At 10M rows (arrays in subqueries) partial-update's narrow query took
0.96x a plain read in the JVM, 1.18x in arrays. Before the arrays, a broadcast left join
of the newer rows ran the narrow query at 3M rows in 2.2x a plain read; the arrays, 1.2x.

The values are kept per session (the files never change): a second read of the same files
sends nothing. They are used only where they are known to round-trip exactly (atomic types
through Arrow) and stay within :data:`BROADCAST_BYTES`; otherwise the caller joins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from schemalab.engine import jvm_udfs
from schemalab.engine.deletes import array_scalar, bit_position, bitmap_words
from schemalab.engine.merge.function import Fold, MergeInput, folded_two_inserts
from schemalab.engine.merge.keyset import KeyBitmap
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.session_cache import Releasable, hold, local_frame, session_frames
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

#: the most bytes of newer rows (as Arrow) a read sends in scalar subqueries (each task
#: gets them all), and in a broadcast one-row frame (each executor gets them; the driver
#: holds the frame and builds the broadcast)
MAX_BYTES = 64 << 20
BROADCAST_BYTES = 128 << 20
_KEY = "__sl_lookup_key"
_NEWER_VALUES = "NewerValues"
#: a lookup's name in Spark's plans
UDF_NAME = "schemalab_newer_value"
#: some of the kinds of column ``NewerValues`` holds (``_jvm_kind`` has them all)
_BOOLEAN, _STRING, _BINARY, _DATE, _DECIMAL = 0, 7, 8, 9, 12
#: each fixed-width kind's values as the payload holds them: numpy's little-endian type,
#: and the integer Arrow gives a date's days or a timestamp's microseconds as
_JVM_NUMPY = {0: "u1", 1: "<i1", 2: "<i2", 3: "<i4", 4: "<i8", 5: "<f4", 6: "<f8",
              9: "<i4", 10: "<i8", 11: "<i8"}
_JVM_ARROW = {9: "int32", 10: "int64", 11: "int64"}
_RANK = "__sl_rank"


def fold_newer(base: DataFrame, rest: DataFrame, m: MergeInput, fold: Fold,
               bitmap: KeyBitmap, rest_files: Sequence[DataFile], plan: ReadPlan,
               spark: SparkSession) -> DataFrame | None:
    """Each row of ``base`` folded with its key's version among ``rest`` (whose keys are
    ``bitmap``'s, each once; neither side retracts) by ``fold``'s ``add`` steps, looked up
    by rank (in the JVM or in arrays: see the module's docstring): the fields read,
    ``__sl_seq``, ``__sl_kind``. None where the lookup does not apply (a type outside
    :func:`_round_trips`, more than :data:`BROADCAST_BYTES`, or keys that are not the
    bitmap's): the caller joins.

    What is built — the values and every expression of the fold — is kept for the session
    with the values (the same files, table schema and session time zone): a later read of
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
        schema = {f.name: f.dataType for f in rest.schema.fields}
        types = [schema[c] for c in columns]
        rows = _newer_rows(rest, m.keys[0], columns, types, bitmap)
        if rows is None:
            return None
        # whether the key has a newer version, and its rank: once per row, in a column each
        # lookup reads
        rank = F.when(bitmap.test(spark), rank_of(bitmap, spark))
        looked = _in_jvm(rows, types, m.table, spark)
        broadcast = None
        if looked is None:
            looked, broadcast = _in_arrays(rows, types, spark)
        # each newer value in a column of its own, looked up once where the row has a
        # newer version (a fold reads a value up to six times); a query's unread columns
        # are pruned, lookups and all
        present = F.col(_RANK).isNotNull()
        newer = {c: F.when(present, v).alias(_newer(i))
                 for i, (c, v) in enumerate(zip(columns, looked, strict=True))}
        built = _Built(rank, list(newer.values()), folded_two_inserts(
            m, fold, {c: F.col(_newer(i)) for i, c in enumerate(columns)}, present),
            broadcast)
        frames.put(digest, (rows.nbytes, built))
    if built.broadcast is not None:
        base = base.crossJoin(F.broadcast(built.broadcast))
    return base.select("*", built.rank.alias(_RANK)).select("*", *built.newer).select(
        *built.results)


@dataclass(frozen=True, eq=False)  # Spark's columns compare as expressions, not values
class _Built(Releasable):
    """What :func:`fold_newer` built, kept for the session: the rank, the newer values, the
    fold's result columns and the broadcast frame of arrays (None: the arrays are in
    subqueries, or the values in the JVM)."""

    rank: Column
    newer: list[Column]
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


def _newer_rows(rest: DataFrame, key: str, columns: Sequence[str],
                types: Sequence[st.DataType], bitmap: KeyBitmap) -> pa.Table | None:
    """``columns`` of ``rest`` (of Spark ``types``) in key order (column ``__sl_v<i>`` for
    the i-th), each of ``bitmap``'s keys once; None where they cannot be looked up (see
    :func:`fold_newer`)."""
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import functions as F

    if not all(_round_trips(t) for t in types):
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
    return rows.drop_columns([_KEY]).take(pa.array(order))


def _in_arrays(rows: pa.Table, types: Sequence[st.DataType], spark: SparkSession
               ) -> tuple[list[Column], DataFrame | None]:
    """Each column of ``rows`` as ``element_at`` of an ARRAY at the row's rank: the arrays
    in scalar subqueries, or past :data:`MAX_BYTES` in a one-row frame (returned) that
    Spark caches, to be cross-joined to the base."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    offsets = pa.array([0, rows.num_rows], pa.int32())
    names = [_column(i) for i in range(len(types))]
    frame = local_frame(spark, pa.table({n: pa.ListArray.from_arrays(
        offsets, rows.column(n).combine_chunks()) for n in names}), st.StructType([
            st.StructField(n, st.ArrayType(t, True), True) for n, t in zip(names, types,
                                                                           strict=True)]))
    # past MAX_BYTES the frame is broadcast and its row joined to every base row; Spark
    # caches its rows (else each query converts every array from Arrow again: 0.3 s of a
    # 1.4 s narrow query at 3M newer rows), and may drop them when short of memory
    broadcast = _cached(frame) if rows.nbytes > MAX_BYTES else None
    arrays = [F.col(n) if broadcast is not None else frame.select(F.col(n)).scalar()
              for n in names]
    return [F.element_at(array, F.col(_RANK)) for array in arrays], broadcast


def _in_jvm(rows: pa.Table, types: Sequence[st.DataType], table: str,
            spark: SparkSession) -> list[Column] | None:
    """Each column of ``rows`` looked up at the row's rank by ``NewerValues``
    (:mod:`schemalab.engine.jvm_udfs`), which holds them in primitive arrays, one broadcast
    per executor; None where that class is not available or a type is not one it holds."""
    import struct

    from pyspark.sql import functions as F

    kinds = [_jvm_kind(t, rows.column(_column(i)).type) for i, t in enumerate(types)]
    cls = jvm_udfs.udf_class(spark, _NEWER_VALUES)
    if cls is None or None in kinds:
        return None
    parts = [jvm_udfs.text(table), struct.pack("<ii", rows.num_rows, len(types))]
    for i, (t, kind) in enumerate(zip(types, kinds, strict=True)):
        parts.extend(_jvm_column(rows.column(_column(i)).combine_chunks(), t, cast(int, kind)))
    values = jvm_udfs.instance(spark, cls, b"".join(parts))
    column = values.column  # type: ignore[attr-defined]
    return [jvm_udfs.call(spark, jvm_udfs.udf(spark, UDF_NAME, column(i), t), F.col(_RANK))
            for i, t in enumerate(types)]


def _jvm_kind(t: st.DataType, arrow: pa.DataType) -> int | None:
    """The kind of column ``NewerValues`` holds values of Spark type ``t`` (``arrow`` in
    Arrow) in (see its source); None for none."""
    import pyarrow as pa
    from pyspark.sql import types as st

    if pa.types.is_timestamp(arrow) and arrow.unit != "us":
        return None  # Spark gives microseconds; anything else goes to the arrays
    if isinstance(t, st.DecimalType):
        return _DECIMAL if t.precision <= 18 else None
    kinds = (st.BooleanType, st.ByteType, st.ShortType, st.IntegerType, st.LongType,
             st.FloatType, st.DoubleType, st.StringType, st.BinaryType, st.DateType,
             st.TimestampType, st.TimestampNTZType)  # in the order of their numbers
    return next((k for k, of in enumerate(kinds) if isinstance(t, of)), None)


def _jvm_column(values: pa.Array, t: st.DataType, kind: int) -> list[bytes]:
    """The payload of one ``NewerValues`` column (see its constructor): its kind, precision
    and scale, its validity bits where it holds a NULL, then its values."""
    import struct

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import types as st

    n = len(values)
    precision, scale = (t.precision, t.scale) if isinstance(t, st.DecimalType) else (0, 0)
    parts = [struct.pack("<iiii", kind, precision, scale, 1 if values.null_count else 0)]
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        parts.append(np.packbits(valid, bitorder="little").tobytes())
    if kind in (_STRING, _BINARY):
        data = pc.fill_null(values.cast(pa.binary()), b"")
        ends = np.frombuffer(data.buffers()[1], dtype="<i4")[data.offset:data.offset + n + 1]
        first, last = int(ends[0]), int(ends[-1])
        body = data.buffers()[2]
        parts += [(ends - first).astype("<i4").tobytes(),
                  b"" if body is None else memoryview(body)[first:last].tobytes()]
    elif kind == _DECIMAL:
        # the unscaled value: the low 64 bits of each little-endian 128-bit decimal
        words = np.frombuffer(values.buffers()[1], dtype="<i8")
        parts.append(words[2 * values.offset:2 * (values.offset + n):2].tobytes())
    else:
        numbers = values.cast(_JVM_ARROW[kind]) if kind >= _DATE else values
        filled = pc.fill_null(numbers, False if kind == _BOOLEAN else 0)
        parts.append(filled.to_numpy(zero_copy_only=False).astype(_JVM_NUMPY[kind]).tobytes())
    return parts


def _column(i: int) -> str:
    return f"__sl_v{i}"


def _newer(i: int) -> str:
    return f"__sl_newer{i}"


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
