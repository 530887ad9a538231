"""schemalab's own Spark functions, written in Java (``src/schemalab/jvm/*.java``, shipped
as package data), for the per-row steps that Spark expressions do slowly:

- ``KeptRows`` (:mod:`schemalab.engine.kept_rows`): the rows a read keeps, tested by
  position or by key against the scan's current input file: a ``LongPredicate`` that
  :func:`predicate` puts in the plan, called with the primitive value;
- ``NewerValues`` (:mod:`schemalab.engine.merge.lookup`): a merge's newer version of a key,
  a value looked up by the key's rank in primitive arrays: a UDF (:func:`udf`).

The classes are compiled when a session first needs them by the Janino compiler Spark ships
(Spark compiles its generated code with it): no JDK and no build step. The driver's
instances come from the compiler's class loaders; the executors get the classes in one jar
given to ``SparkContext.addJar`` (a cluster's fetch it like any added jar). An instance's
data is written by Python to a temporary file, read by its constructor and sent to the
executors as one broadcast, fetched once per executor, not in every task.

They need the JVM of a classic session. Under Spark Connect, where the client has no JVM,
where a class cannot be built (a Spark without Janino, a compiler that refuses it), or with
:data:`ENABLED` set to ``false``, :func:`udf_class` returns None and the callers do the same
work in Spark expressions: slower, the same rows.
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
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, SparkSession
    from pyspark.sql import types as st

#: the session setting that turns schemalab's JVM classes off (``false``) for that session
ENABLED = "spark.schemalab.jvm.enabled"
_PACKAGE = "schemalab.spark"
_FOLDER = "jvm"
_ATTR = "_schemalab_jvm_udfs"
#: Catalyst's expression that calls a method of an object in generated code (Spark 4.3's
#: constructor: target, method, result type, arguments, their types, propagateNull,
#: returnNullable, isDeterministic)
_INVOKE = "org.apache.spark.sql.catalyst.expressions.objects.Invoke"
#: where a SparkContext keeps whether it builds that Invoke (:func:`invokes`)
_INVOKES_ATTR = "_schemalab_jvm_invokes"
_lock = threading.Lock()
_log = logging.getLogger(__name__)


def udf_class(spark: SparkSession, name: str) -> object | None:
    """The class ``schemalab.spark.<name>`` in ``spark``'s JVM, compiled (with the others,
    and their jar added) on first use; None under Spark Connect, with :data:`ENABLED`
    false, or where it cannot be built."""
    sc = getattr(spark, "sparkContext", None) if hasattr(spark, "_jsparkSession") else None
    if sc is None or sc._jvm is None:
        return None
    if str(spark.conf.get(ENABLED, "true")).lower() == "false":
        return None
    with _lock:
        classes = getattr(sc, _ATTR, None)
        if classes is None:
            classes = _build(sc)
            setattr(sc, _ATTR, classes)
    return classes.get(name)


def missing(spark: SparkSession) -> list[str]:
    """The package's classes (``src/schemalab/jvm/*.java``) that ``spark`` has not built:
    all of them where it cannot (see :func:`udf_class`)."""
    return [name for name in _sources() if udf_class(spark, name) is None]


def instance(spark: SparkSession, cls: object, payload: bytes) -> object:
    """A new ``cls(JavaSparkContext, path)``, its constructor reading ``payload`` from the
    file at ``path`` (removed after)."""
    sc = spark.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    fd, path = tempfile.mkstemp(prefix="schemalab-jvm-", suffix=".bin")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        ctor = cls.getConstructors()[0]  # type: ignore[attr-defined]
        return ctor.newInstance(_array(spark, jvm.java.lang.Object, sc._jsc, path))
    finally:
        os.unlink(path)


def kept_instance(spark: SparkSession, cls: object, payload: bytes, kind: bytes) -> object:
    """:func:`instance` of ``cls`` reading ``payload``, kept for the session by a digest of
    ``kind`` and the payload (a data file and its keys or deletes never change): built, and
    its data broadcast, once. Charged to the read being built by the payload's bytes."""
    from schemalab.engine.session_cache import hold, session_frames

    digest = kind + hashlib.blake2b(payload, digest_size=20).digest()
    frames = session_frames(spark)
    hit = frames.get(digest)
    if hit is not None:
        hold(hit[0])
        return hit[1]
    made = instance(spark, cls, payload)
    frames.put(digest, (len(payload), made))
    hold(len(payload))
    return made


def udf(spark: SparkSession, name: str, function: object, returns: st.DataType, *,
        nullable: bool = True) -> object:
    """A deterministic UserDefinedFunction of ``function`` (a ``UDF1``) returning Spark type
    ``returns``, shown in plans as ``name``."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    # functions.udf(UDF1, DataType) by reflection: py4j would pick the untyped Scala
    # overload udf(Object, DataType), which Spark refuses
    of_class = jvm.java.lang.Class.forName
    udf_of = of_class("org.apache.spark.sql.functions").getMethod("udf", _array(
        spark, jvm.java.lang.Class, of_class("org.apache.spark.sql.api.java.UDF1"),
        of_class("org.apache.spark.sql.types.DataType")))
    data_type = jvm.org.apache.spark.sql.types.DataType.fromJson(returns.json())
    made = udf_of.invoke(None, _array(spark, jvm.java.lang.Object, function, data_type))
    made = made.withName(name)
    return made if nullable else made.asNonNullable()


def call(spark: SparkSession, function: object, value: Column) -> Column:
    """``function`` (from :func:`udf`) applied to ``value``."""
    from pyspark.sql.classic.column import Column as ClassicColumn

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    seq = jvm.PythonUtils.toSeq([value._jc])  # type: ignore[attr-defined]
    return cast("Column", ClassicColumn(function.apply(seq)))  # type: ignore[attr-defined]


def invokes(spark: SparkSession) -> bool:
    """Whether ``spark`` builds the Catalyst ``Invoke`` that :func:`predicate` makes: tried
    once per SparkContext, and logged where it does not (another Spark's ``Invoke`` or
    column conversion)."""
    from py4j.protocol import Py4JError
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    with _lock:
        found = getattr(sc, _INVOKES_ATTR, None)
        if found is None:
            try:
                _predicate_column(spark, None, F.lit(None).cast("bigint"), "")
                found = True
            except (Py4JError, TypeError) as e:  # a constructor it lacks; a class it lacks
                _log.info("schemalab: this Spark builds no Invoke of a predicate (%s); Spark "
                          "expressions do its work", e)
                found = False
            setattr(sc, _INVOKES_ATTR, found)
    return bool(found)


def predicate(spark: SparkSession, test: object, value: Column, if_null: str
              ) -> Column | None:
    """Whether ``test`` (a ``java.util.function.LongPredicate`` of ``spark``'s JVM) holds
    for ``value`` (a BIGINT column), as a Catalyst ``Invoke`` of its ``test(long)``: Spark's
    generated code calls it with the primitive value, where a UDF boxes the value and its
    result per row. Plans show it as ``invoke(<test's toString>.test(...))``. A NULL value
    fails the read with the message ``if_null``. None where this Spark builds no such
    expression (:func:`invokes`): the callers then use Spark expressions."""
    if not invokes(spark):
        return None
    return _predicate_column(spark, test, value, if_null)


def _predicate_column(spark: SparkSession, test: object, value: Column, if_null: str
                      ) -> Column:
    """:func:`predicate`'s column, built whatever this Spark is (py4j's errors raised)."""
    from pyspark.sql import functions as F
    from pyspark.sql.classic.column import Column as ClassicColumn

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    types = jvm.org.apache.spark.sql.types
    expressions = jvm.org.apache.spark.sql.catalyst.expressions
    target = expressions.Literal(test, types.ObjectType(
        jvm.java.lang.Class.forName("java.util.function.LongPredicate")))
    # the value is never NULL past the coalesce: no null test in the Invoke
    arg = spark._jsparkSession.expression(  # type: ignore[attr-defined]
        F.coalesce(value, F.raise_error(F.lit(if_null)))._jc)
    seq = jvm.PythonUtils.toSeq  # type: ignore[attr-defined]
    invoke = _java_class(jvm, _INVOKE)(
        target, "test", types.DataTypes.BooleanType, seq([arg]), seq([]),
        False, False, True)  # propagateNull, returnNullable, isDeterministic
    column = jvm.org.apache.spark.sql.classic.ExpressionUtils.column(invoke)
    return cast("Column", ClassicColumn(column))


def _java_class(jvm: object, name: str) -> Any:
    """The py4j view of the JVM class ``name`` (a package where the JVM has no such class:
    calling it raises ``TypeError``)."""
    view = jvm
    for part in name.split("."):
        view = getattr(view, part)
    return view


def text(s: str) -> bytes:
    """``s`` as a payload's text: its UTF-8 length (little-endian INT), then its bytes."""
    b = s.encode("utf-8")
    return struct.pack("<i", len(b)) + b


def _array(spark: SparkSession, kind: object, *items: object) -> object:
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    out = gateway.new_array(kind, len(items))
    for i, item in enumerate(items):
        out[i] = item
    return out


def _sources() -> dict[str, str]:
    """Each class's name and Java source (the package's ``jvm/*.java``)."""
    folder = resources.files("schemalab").joinpath(_FOLDER)
    return {f.name.removesuffix(".java"): f.read_text("utf-8")
            for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".java")}


def _build(sc: object) -> dict[str, object]:
    """Each class that Janino compiles in the driver, by name; all of them written to one
    jar given to ``addJar`` for the executors. A class that fails is left out (logged: its
    callers use Spark expressions)."""
    jvm = sc._jvm  # type: ignore[attr-defined]
    loaders: dict[str, object] = {}
    bytecodes: dict[str, bytes] = {}
    for name, source in _sources().items():
        try:
            compiler = jvm.org.codehaus.janino.SimpleCompiler()
            compiler.setParentClassLoader(
                jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader())
            compiler.cook(f"{_FOLDER}/{name}.java", jvm.java.io.StringReader(source))
            codes = {str(k): bytes(v) for k, v in compiler.getBytecodes().items()}
        except Exception as e:  # noqa: BLE001 - any failure leaves the expressions
            _log.info("schemalab: the JVM class %s is not available (%s); Spark expressions "
                      "do its work", name, e)
            continue
        loaders[name] = compiler.getClassLoader()
        bytecodes.update(codes)
    if not loaders:
        return {}
    try:
        sc._jsc.addJar(_jar(bytecodes))  # type: ignore[attr-defined]
        return {name: loader.loadClass(f"{_PACKAGE}.{name}")  # type: ignore[attr-defined]
                for name, loader in loaders.items()}
    except Exception as e:  # noqa: BLE001 - the executors could not get the classes
        _log.info("schemalab: the JVM classes are not available (%s); Spark expressions do "
                  "their work", e)
        return {}


def _jar(bytecodes: dict[str, bytes]) -> str:
    """A jar of ``bytecodes`` (class name → bytes), in a directory of this process's own (a
    shared, predictable path would let another user of the machine put a class of theirs
    in our JVM), removed at exit."""
    digest = hashlib.blake2b(b"".join(bytecodes[k] for k in sorted(bytecodes)),
                             digest_size=8).hexdigest()
    folder = tempfile.mkdtemp(prefix="schemalab-jvm-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    jar = os.path.join(folder, f"schemalab-udfs-{digest}.jar")
    with zipfile.ZipFile(jar, "w") as z:
        for name, code in sorted(bytecodes.items()):
            z.writestr(name.replace(".", "/") + ".class", code)
    return jar
