"""Rows a read keeps, tested in the JVM: ``schemalab/jvm/KeptRows.java``, a Spark UDF that
asks the scan which file it is reading (the thread-local ``input_file_name()`` reads), once
per file, and tests one value per row:

- :func:`position_filter`: the row's position (the reader's row-index column) against its
  file's bitmap of deleted positions (deletion vectors, position deletes);
- :func:`key_filter`: the row's key against each key's winning run, a byte per key, where
  a merge keeps each key's version of one run (:mod:`schemalab.engine.merge.superseded`):
  no row position read at all.

The filter :mod:`schemalab.engine.deletes` writes in Spark expressions must tell each row's
file by ``_metadata.file_size``, and Spark builds the whole ``_metadata`` struct for every
row to give it. On layout c of ``bench/merge_read.py`` at 10M rows (9.75M versions read,
narrow query, one process, interleaved rounds) the merge read took 1.59x the plain copy's
wall time with that filter, 1.19x by position here and 1.04x by key.

The class is compiled when a session first needs it by the Janino compiler Spark ships
(Spark compiles its generated code with it): no JDK and no build step, and the source is
the package's own file. The driver's instance comes from the compiler's class loader; the
executors get the class in a jar given to ``SparkContext.addJar`` (a cluster's fetch it
like any added jar). The filter's data goes to the executors as one broadcast, fetched
once per executor, not in every task.

It needs the JVM of a classic session. Under Spark Connect, where the client has no JVM,
or where the class cannot be built (a Spark without Janino, a compiler that refuses it),
the filters return None and the callers use Spark expressions: slower, the same rows. The
setting :data:`ENABLED` (``false``) turns it off for a session.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import shutil
import struct
import tempfile
import threading
import zipfile
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, cast

from schemalab.engine.session_cache import hold, session_frames

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import Column, SparkSession

#: the session setting that turns the JVM filter off (``false``) for that session
ENABLED = "spark.schemalab.keptRowsFilter.enabled"
_CLASS = "schemalab.spark.KeptRows"
_SOURCE = "jvm/KeptRows.java"
_ATTR = "_schemalab_kept_rows"
_lock = threading.Lock()
_log = logging.getLogger(__name__)


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
        parts += [_text(name), struct.pack("<i", len(words)), words.astype("<i8").tobytes()]
    return _filter(spark, table, parts, position)


def key_filter(spark: SparkSession, first: int, domains: Sequence[npt.NDArray[np.uint8]],
               files: Sequence[tuple[str, int, int]], key: Column, table: str
               ) -> Column | None:
    """Whether a row is its key's winning version: ``domains[d][key - first]`` (the run
    that wins the key among the files of domain ``d``, 0 for none) is the row's file's run,
    ``files`` giving every scanned file's (unique name, domain, run from 1 to 255). ``key``
    is a BIGINT column. A key outside the domain's span, a NULL key or a file not among
    ``files`` fails the read naming ``table``. None where the JVM filter is not available."""
    import numpy as np

    parts = [struct.pack("<iiqi", _BY_KEY, len(files), first, len(domains))]
    for winners in domains:
        parts += [struct.pack("<i", len(winners)), winners.astype(np.uint8).tobytes()]
    for name, domain, run in files:
        parts += [_text(name), struct.pack("<ii", domain, run)]
    return _filter(spark, table, parts, key)


def available(spark: SparkSession) -> bool:
    """Whether :func:`position_filter` and :func:`key_filter` test rows in ``spark``'s JVM
    (the class is built on first use)."""
    return _compiled(spark) is not None


#: the kinds of test ``KeptRows`` makes (see the Java source)
_BY_POSITION, _BY_KEY = 0, 1


def _text(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<i", len(b)) + b


def _filter(spark: SparkSession, table: str, parts: list[bytes], value: Column
            ) -> Column | None:
    """The filter of a ``KeptRows`` reading ``parts`` after the table's name (what its
    constructor reads: little-endian, each text and array after its length), applied to
    ``value``; kept for the session by its payload's digest."""
    cls = _compiled(spark)
    if cls is None:
        return None
    from pyspark.sql.classic.column import Column as ClassicColumn

    payload = b"".join([_text(table), *parts])
    digest = b"kept-rows" + hashlib.blake2b(payload, digest_size=20).digest()
    frames = session_frames(spark)
    hit = frames.get(digest)
    if hit is not None:
        hold(hit[0])
        udf = hit[1]
    else:
        udf = _udf(spark, cls, payload)
        frames.put(digest, (len(payload), udf))
        hold(len(payload))
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    seq = jvm.PythonUtils.toSeq([value._jc])  # type: ignore[attr-defined]
    return cast("Column", ClassicColumn(udf.apply(seq)))  # type: ignore[attr-defined]


def _udf(spark: SparkSession, cls: object, payload: bytes) -> object:
    """A UserDefinedFunction (deterministic, never NULL) of a new ``KeptRows`` holding
    ``payload``'s bitmaps in a broadcast."""
    sc = spark.sparkContext
    jvm, gateway = sc._jvm, sc._gateway
    assert jvm is not None and gateway is not None

    def array(kind: object, *items: object) -> object:
        out = gateway.new_array(kind, len(items))
        for i, item in enumerate(items):
            out[i] = item
        return out

    fd, path = tempfile.mkstemp(prefix="schemalab-kept-rows-", suffix=".bin")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        ctor = cls.getConstructors()[0]  # type: ignore[attr-defined]
        instance = ctor.newInstance(array(jvm.java.lang.Object, sc._jsc, path))
    finally:
        os.unlink(path)
    # functions.udf(UDF1, DataType) by reflection: py4j would pick the untyped Scala
    # overload udf(Object, DataType), which Spark refuses
    of_class = jvm.java.lang.Class.forName
    udf_of = of_class("org.apache.spark.sql.functions").getMethod("udf", array(
        jvm.java.lang.Class, of_class("org.apache.spark.sql.api.java.UDF1"),
        of_class("org.apache.spark.sql.types.DataType")))
    boolean = jvm.org.apache.spark.sql.types.DataTypes.BooleanType
    return udf_of.invoke(None, array(jvm.java.lang.Object, instance, boolean)).asNonNullable()


def _compiled(spark: SparkSession) -> object | None:
    """The ``KeptRows`` class of ``spark``'s JVM, compiled (and its jar added) on first use;
    None under Spark Connect, with :data:`ENABLED` false, or where it cannot be built."""
    sc = getattr(spark, "sparkContext", None) if hasattr(spark, "_jsparkSession") else None
    if sc is None or sc._jvm is None:
        return None
    if str(spark.conf.get(ENABLED, "true")).lower() == "false":
        return None
    with _lock:
        state = getattr(sc, _ATTR, None)
        if state is None:
            state = _build(sc)
            setattr(sc, _ATTR, state)
    return state[0]


def _source() -> str:
    return resources.files("schemalab").joinpath(_SOURCE).read_text("utf-8")


def _build(sc: object) -> tuple[object | None]:
    """(the class) compiled by Janino in the driver and, for the executors, written to a
    jar given to ``addJar``; (None,) where that fails (logged: the expression filter runs)."""
    try:
        jvm = sc._jvm  # type: ignore[attr-defined]
        source = _source()
        compiler = jvm.org.codehaus.janino.SimpleCompiler()
        compiler.setParentClassLoader(
            jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader())
        compiler.cook(_SOURCE, jvm.java.io.StringReader(source))
        classes = {str(k): bytes(v) for k, v in compiler.getBytecodes().items()}
        digest = hashlib.blake2b(b"".join(classes.values()), digest_size=8).hexdigest()
        # a directory of this process's own (a shared, predictable path would let another
        # user of the machine put a class of theirs in our JVM), removed at exit
        folder = tempfile.mkdtemp(prefix="schemalab-jvm-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        jar = os.path.join(folder, f"schemalab-kept-rows-{digest}.jar")
        with zipfile.ZipFile(jar, "w") as z:
            for name, code in sorted(classes.items()):
                z.writestr(name.replace(".", "/") + ".class", code)
        sc._jsc.addJar(jar)  # type: ignore[attr-defined]
        return (compiler.getClassLoader().loadClass(_CLASS),)
    except Exception as e:  # noqa: BLE001 - any failure leaves the expression filter
        _log.info("schemalab: the JVM row filter is not available (%s); deletes by position "
                  "are tested by Spark expressions", e)
        return (None,)
