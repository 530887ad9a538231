"""A local SparkSession configured for schemalab.

Quiet (log4j2 at FATAL, no progress bars, no UI), bound to loopback, two shuffle partitions,
its own temporary ``spark.sql.warehouse.dir``, Parquet timestamps as Java Paimon writes
them, Parquet field ids written and readable, and the session time zone in UTC so that reads of
``TIMESTAMP WITH LOCAL TIME ZONE`` values print the same everywhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

#: SQL settings schemalab's reads and writes rely on; applied to a user's session too.
SESSION_SQL_CONF = {
    # Java Paimon stores TIMESTAMP(7..9) as INT96; schemalab's other timestamps are written
    # as integers whatever this says (paimon/write/parquet_types.py). INT96 is Spark's default,
    # and CORRECTED writes dates before 1900 as they are (Java's proleptic calendar).
    "spark.sql.parquet.outputTimestampType": "INT96",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.fieldId.write.enabled": "true",
    # Reads by field id are requested per scan: a read schema whose fields carry no id
    # falls back to names, so enabling this changes nothing for other reads.
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # Paimon's TIME maps to Spark's TimeType, which Spark 4.3 still keeps behind this flag
    # (without it any table with a TIME column fails to read or write).
    "spark.sql.timeType.enabled": "true",
}


def local_spark(app_name: str = "schemalab", *, cores: int = 2, driver_memory: str = "2g",
                extra_conf: dict[str, str] | None = None) -> SparkSession:
    """Start (or return the running) local SparkSession with schemalab's settings.

    JVM settings only take effect when this call starts the JVM; with a session already
    running, only the SQL settings are applied (Spark ignores the rest)."""
    from pyspark.sql import SparkSession

    log_conf = resources.files("schemalab").joinpath("log4j2.properties")
    warehouse_dir = tempfile.mkdtemp(prefix="schemalab-spark-warehouse-")
    java_opts = f"-Dlog4j2.configurationFile=file:{log_conf} -Dderby.system.home={warehouse_dir}"
    builder = (
        SparkSession.builder.appName(app_name)
        .master(f"local[{cores}]")
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", str(cores))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.warehouse.dir", warehouse_dir)
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        # A read names each data file; past 32 paths Spark would "list" them with a
        # distributed job, which on a local disk only adds a job: a 100-file evolved read
        # planned in ~450 ms with it and ~180 ms without (bench/evolved_read.py, V=50).
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
    )
    for key, value in {**SESSION_SQL_CONF, **(extra_conf or {})}.items():
        builder = builder.config(key, value)
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    with _jvm_notice_filtered():
        spark = builder.getOrCreate()
    configure_session(spark)
    spark.sparkContext.setLogLevel("FATAL")
    # PySpark logs every failed query with its whole JVM stack as JSON on stderr; the
    # exception that reaches the caller already says it all.
    # DataFrame operations log through their own logger the same way.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return spark


def configure_session(spark: SparkSession) -> SparkSession:
    """Apply the SQL settings schemalab relies on to any session: a user's own, a cluster's or
    a Spark Connect one. Only SQL settings: nothing here needs a SparkContext, which Spark
    Connect sessions do not have, and the session's log level stays the user's."""
    for key, value in SESSION_SQL_CONF.items():
        if spark.conf.get(key, None) != value:
            spark.conf.set(key, value)
    return spark


def default_session() -> SparkSession:
    """The session a table reads with when none was given: the active session (a user's,
    a cluster's, or Spark Connect's, also when ``SPARK_REMOTE`` names one), else
    :func:`local_spark`."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None and os.environ.get("SPARK_REMOTE"):
        active = SparkSession.builder.getOrCreate()
    if active is not None:
        return configure_session(active)
    return local_spark()


#: what the JVM prints on stderr when it starts and that no reader needs: Spark 4's launcher
#: adds the incubating vector module, and the JVM announces it
JVM_NOTICES = (b"WARNING: Using incubator modules",)


@contextlib.contextmanager
def _jvm_notice_filtered() -> Iterator[None]:
    """While Spark starts, stderr (file descriptor 2, which the JVM inherits) is a pipe, and
    a thread copies what comes through it on to the real stderr, but for
    :data:`JVM_NOTICES`. In a notebook that notice was a pink stderr box in every notebook
    that starts Spark. The JVM keeps the pipe for its whole life, so its real errors still
    reach stderr; Python's own stderr is restored as soon as Spark runs."""
    if os.name != "posix":
        yield
        return
    try:
        real = os.dup(2)
        read, write = os.pipe()
    except OSError:  # no stderr to filter
        yield
        return
    os.dup2(write, 2)
    os.close(write)
    threading.Thread(target=_copy_filtered, args=(read, real), daemon=True,
                     name="schemalab-jvm-stderr").start()
    try:
        yield
    finally:
        os.dup2(real, 2)


def _copy_filtered(read: int, real: int) -> None:
    with os.fdopen(read, "rb", buffering=0) as pipe:
        for line in iter(pipe.readline, b""):
            if not line.startswith(JVM_NOTICES):
                os.write(real, line)


def _python() -> str:
    import sys

    return sys.executable
