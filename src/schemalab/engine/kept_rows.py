"""Rows a read keeps, tested in the JVM: ``schemalab/jvm/KeptRows.java``, a predicate in
the scan's filter (:func:`schemalab.engine.jvm_udfs.predicate`) that asks the scan which
file it is reading (the thread-local ``input_file_name()`` reads), once per file, and
tests one value per row:

- :func:`position_filter`: the row's position (the reader's row-index column) against its
  file's bitmap of deleted positions (deletion vectors, position deletes);
- :func:`key_filter`: the row's key against its file's kept or dropped keys (whichever are
  fewer), where a merge keeps each key's version of one run
  (:mod:`schemalab.engine.merge.superseded`): no row position read at all. A file's keys
  increase, so a cursor walks that list with the rows.

The filter :mod:`schemalab.engine.deletes` writes in Spark expressions must tell each row's
file by ``_metadata.file_size``, and Spark builds the whole ``_metadata`` struct for every
row to give it. On layout c of ``bench/merge_read.py`` at 10M rows (9.75M versions read,
narrow query, one process, interleaved rounds) the merge read took 1.59x the plain copy's
wall time with that filter, 1.19x by position here and 1.04x by key (each key's winning
run then a byte per key of the span). Testing a file's listed keys with a cursor instead
took 0.314 s against that byte array's 0.391 s (every version read, no filter: 0.209 s;
15 interleaved rounds, load 1.9-2.0); called as a predicate with the primitive key instead
of as a UDF, 0.258-0.298 s against 0.284-0.358 s (three runs of 25-41 rounds, load
1.5-2.6).

Where the class is not available (Spark Connect, a class that cannot be built, the
session's ``spark.schemalab.jvm.enabled`` false: see :mod:`schemalab.engine.jvm_udfs`), or
the Spark has no ``Invoke`` as :func:`schemalab.engine.jvm_udfs.predicate` builds it, the
filters return None and the callers use Spark expressions: slower, the same rows.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemalab.engine import jvm_udfs
from schemalab.engine.jvm_udfs import text

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import Column, SparkSession

_CLASS = "KeptRows"
#: the filter's name in Spark's plans, ``invoke(schemalab_kept_rows.test(...))``
#: (``KeptRows``' toString)
FILTER_NAME = "schemalab_kept_rows"


def position_filter(spark: SparkSession, bitmaps: Sequence[tuple[str, npt.NDArray[np.int64]]],
                    position: Column, table: str) -> Column | None:
    """Whether a row survives: the bit of ``position`` (a BIGINT column: the row's position
    in its file) in its file's 64-bit words, from ``bitmaps`` (every file of the scan, by
    unique name, each with its words: bit ``i`` of word ``w`` is position ``64 w + i``;
    none for a file without deletes). A row past its file's words stays. A scan that
    reads a file not among ``bitmaps``, or gives no position, fails naming ``table``.
    None where the JVM filter is not available (see the module's docstring)."""
    parts = [struct.pack("<ii", _BY_POSITION, len(bitmaps))]
    for name, words in bitmaps:
        parts += [text(name), struct.pack("<i", len(words)), words.astype("<i8").tobytes()]
    return _filter(spark, table, parts, position, "position from Spark's reader")


def key_filter(spark: SparkSession,
               files: Sequence[tuple[str, npt.NDArray[np.int64], npt.NDArray[np.bool_]]],
               key: Column, table: str) -> Column | None:
    """Whether a row is kept, by its key: ``files`` gives every scanned file's (unique name,
    its keys in strictly increasing order, whether each is kept). Each file's keys are sent
    as its lowest and highest and the fewer of those kept and those dropped. ``key`` is a
    BIGINT column. A key outside its file's lowest and highest (the file changed under the
    read), a NULL key or a file not among ``files`` fails the read naming ``table``. None
    where the JVM filter is not available."""
    return _filter(spark, table, _key_payload(table, files), key, "key")


def _key_payload(table: str,
                 files: Sequence[tuple[str, npt.NDArray[np.int64], npt.NDArray[np.bool_]]]
                 ) -> list[bytes]:
    """What ``KeptRows`` reads of :func:`key_filter`'s ``files`` after the table's name."""
    import numpy as np

    parts = [struct.pack("<ii", _BY_KEY, len(files))]
    for name, keys, kept in files:
        lowest, highest = (int(keys[0]), int(keys[-1])) if len(keys) else (0, -1)
        if highest - lowest > _MAX_OFFSET:
            raise ValueError(f"Reading {table}: the keys of {name} span more than "
                             f"{_MAX_OFFSET + 1} numbers")
        listed_kept = 2 * int(np.count_nonzero(kept)) <= len(kept)
        listed = keys[kept] if listed_kept else keys[~kept]
        parts += [text(name), struct.pack("<qqii", lowest, highest, listed_kept, len(listed)),
                  (listed - lowest).astype("<i4").tobytes()]
    return parts


def available(spark: SparkSession) -> bool:
    """Whether :func:`position_filter` and :func:`key_filter` test rows in ``spark``'s JVM:
    the class is built (on first use) and the Spark puts it in a plan
    (:func:`schemalab.engine.jvm_udfs.invokes`)."""
    return jvm_udfs.udf_class(spark, _CLASS) is not None and jvm_udfs.invokes(spark)


#: the kinds of test ``KeptRows`` makes (see the Java source)
_BY_POSITION, _BY_KEY = 0, 1
#: the widest span of one file's keys: ``KeptRows`` holds them as INT offsets from its lowest
_MAX_OFFSET = 2**31 - 1


def _filter(spark: SparkSession, table: str, parts: list[bytes], value: Column, what: str
            ) -> Column | None:
    """The filter of a ``KeptRows`` reading ``parts`` after the table's name (what its
    constructor reads: little-endian, each text and array after its length), applied to
    ``value`` (a row's ``what``); the instance kept for the session by its payload's
    digest."""
    if not available(spark):
        return None
    cls = jvm_udfs.udf_class(spark, _CLASS)
    test = jvm_udfs.kept_instance(spark, cls, b"".join([text(table), *parts]), b"kept-rows")
    return jvm_udfs.predicate(spark, test, value,
                              f"Reading {table}: a row has no {what} (NULL)")
