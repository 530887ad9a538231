"""What a Spark session keeps of the reads schemalab built for it.

A data file, its deletion vector or position deletes and a delete file never change once
written, so what a read built of them holds for as long as the session's settings do:

- **arrays** (:func:`session_frames`): the one-row frames of the driver's bitmaps and
  lookup arrays, keyed by a digest of their values, bounded by :data:`CACHED_ARRAY_BYTES`;
- **reads** (:func:`cached_read`): the whole DataFrame :func:`schemalab.engine.execute.execute`
  built for a read plan, keyed by the plan (every file, delete file, schema and option it
  names) and every setting of the session, bounded by :data:`CACHED_READ_BYTES` of the
  driver's data its frames hold. A read of the same snapshot again — a notebook cell run
  twice, a widget redrawn, the same ``t.read()`` in two queries — builds nothing: Spark's
  own catalog tables keep their resolved relations the same way, and building a merge read
  takes a hundred or more calls into the JVM. Planning still runs first (the snapshot and
  manifests are read, each file is checked), so a new commit, a changed schema or a file
  gone missing is seen as before.

Every frame a read builds from the driver's data goes through :func:`local_frame` (or says
its bytes with :func:`hold`), so the reads kept are charged for what they keep alive.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from schemalab.engine.lru import SizedLru

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import types as st

#: bytes of arrays whose one-row frames a session keeps (see
#: :func:`schemalab.engine.deletes.array_scalar`)
CACHED_ARRAY_BYTES = 128 << 20
#: bytes of the driver's data (arrays, rows read on the driver) that the kept reads hold;
#: mostly the same frames the arrays' cache holds, so both together keep at most 256 MB
CACHED_READ_BYTES = 128 << 20
#: what a kept read counts beyond its data: at most 256 reads are kept
READ_OVERHEAD = CACHED_READ_BYTES // 256
#: a read holding more of the driver's data than this is not kept: the most a merge's
#: lookup arrays hold in scalar subqueries (``merge.lookup.MAX_BYTES``), as at 10M rows of
#: a tenth upserted. A read whose arrays pass it (a broadcast frame, to
#: ``merge.lookup.BROADCAST_BYTES``) is built again each time, reusing the frame and fold
#: the frames' cache keeps
MAX_READ_BYTES = 64 << 20
_ATTR = "_schemalab_session_cache"

#: the bytes of driver data held by the frames of the reads being built (innermost last)
_building: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "schemalab_read_bytes", default=None)


@dataclass
class SessionCache:
    """One session's caches (see the module's docstring)."""

    frames: SizedLru[bytes, tuple[int, object]] = field(default_factory=lambda: SizedLru(
        CACHED_ARRAY_BYTES, lambda entry: entry[0], _release))
    reads: SizedLru[bytes, tuple[int, object]] = field(default_factory=lambda: SizedLru(
        CACHED_READ_BYTES, lambda entry: entry[0]))


def session_cache(spark: SparkSession) -> SessionCache:
    """``spark``'s caches, made on first use."""
    cache = cast("SessionCache | None", getattr(spark, _ATTR, None))
    if cache is None:
        cache = SessionCache()
        try:
            setattr(spark, _ATTR, cache)
        except AttributeError:  # pragma: no cover - a session that takes no attribute
            pass
    return cache


def session_frames(spark: SparkSession) -> SizedLru[bytes, tuple[int, object]]:
    """The session's cache of what was built of the driver's arrays — scalar subqueries of
    one-row frames — by a digest of what they hold: (bytes held, what was built), bounded
    by :data:`CACHED_ARRAY_BYTES`. Spark's expressions hold no state, so a later query may
    use them again. Whoever uses an entry says its bytes (:func:`hold`)."""
    return session_cache(spark).frames


def clear(spark: SparkSession) -> None:
    """Forget what ``spark`` kept: the next read builds everything again."""
    cache = cast("SessionCache | None", getattr(spark, _ATTR, None))
    if cache is not None:
        cache.frames.clear()
    try:
        delattr(spark, _ATTR)
    except AttributeError:
        pass


class Releasable:
    """A value of the frames' cache that holds something in Spark (data it asked Spark to
    cache), let go by :meth:`release` when the cache drops it. A base class, not a method
    looked up by name: a py4j object answers any name with a JVM method."""

    def release(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def _release(entry: tuple[int, object]) -> None:
    """What a dropped frame entry holds in Spark let go (a :class:`Releasable`'s)."""
    if isinstance(entry[1], Releasable):
        entry[1].release()


def hold(nbytes: int) -> None:
    """Charge the read being built (if any) with ``nbytes`` of driver data its frames hold."""
    held = _building.get()
    if held is not None:
        held.append(nbytes)


def local_frame(spark: SparkSession, table: pa.Table,
                schema: st.StructType | None = None) -> DataFrame:
    """``spark.createDataFrame(table, schema)``, charged to the read being built."""
    hold(table.nbytes)
    if schema is None:
        return spark.createDataFrame(table)
    return spark.createDataFrame(table, schema=schema)


def cached_read(key: object, spark: SparkSession,
                build: Callable[[], DataFrame]) -> DataFrame:
    """The DataFrame ``build`` makes for ``key`` (a read plan: its ``repr`` names every file,
    schema and option), kept for the session while its settings stay as they are; built
    again past :data:`MAX_READ_BYTES` of driver data."""
    digest = hashlib.blake2b(repr((key, _settings(spark))).encode(),
                             digest_size=24).digest()
    reads = session_cache(spark).reads
    hit = reads.get(digest)
    if hit is not None:
        hold(hit[0] - READ_OVERHEAD)
        return cast("DataFrame", hit[1])
    held: list[int] = []
    token = _building.set(held)
    try:
        df = build()
    finally:
        _building.reset(token)
    nbytes = sum(held)
    hold(nbytes)  # a read built inside another (a blob join's) is held by that one too
    if nbytes <= MAX_READ_BYTES:
        reads.put(digest, (nbytes + READ_OVERHEAD, df))
    return df


def _settings(spark: SparkSession) -> str:
    """Every setting of the session, as one text: a read built under other settings (time
    zone, ANSI mode, case sensitivity, any other) is not reused. One call into the JVM."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is not None:
        return str(jsession.conf().getAll().toString())
    return repr(sorted(spark.conf.getAll.items()))  # Spark Connect: one request
