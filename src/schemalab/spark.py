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
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import TYPE_CHECKING

from schemalab.errors import SchemaLabError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

#: SQL settings schemalab's reads and writes rely on; applied to a user's session too.
SESSION_SQL_CONF = {
    # Java Paimon stores TIMESTAMP(7..9) as INT96; schemalab's other timestamps are written
    # as integers whatever this says (engine/parquet_types.py). INT96 is Spark's default,
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
    # A VARIANT column as Java Paimon 2.0 and pypaimon write it: a plain group of `value`
    # and `metadata` binaries. Spark 4.1+ annotates the group with Parquet's VARIANT logical
    # type, which pyarrow 19 and Paimon's Parquet reader cannot open ("Thrift LogicalType
    # that is not recognized").
    "spark.sql.parquet.variant.annotateLogicalType.enabled": "false",
    # ... and unshredded, as Java writes it unless told (`variant.shreddingSchema`): Spark
    # 4.3 shreds by default, into `typed_value` groups without the field ids Java needs.
    "spark.sql.variant.writeShredding.enabled": "false",
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
        # PySpark otherwise records the Python call site of every Column function in the
        # JVM (8 py4j calls each): a merge read's planning made 908 calls, half of them
        # these, and the call sites named schemalab's own code, not the user's
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
    )
    for key, value in {**SESSION_SQL_CONF, **(extra_conf or {})}.items():
        builder = builder.config(key, value)
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    conf = extra_conf or {}
    packages = conf.get("spark.jars.packages")
    if packages:
        _announce_download(packages, conf.get("spark.jars.ivy"))
    with _jvm_notice_filtered(hold=bool(packages)) as start:
        try:
            spark = builder.getOrCreate()
        except Exception as e:
            start.release()
            if packages:
                raise _packages_error(e, packages, start.lines,
                                      conf.get("spark.jars.ivy")) from None
            raise
        start.discard()  # Ivy's resolution report of a start that went well
    configure_session(spark)
    spark.sparkContext.setLogLevel("FATAL")
    # PySpark logs every failed query with its whole JVM stack as JSON on stderr; the
    # exception that reaches the caller already says it all.
    # DataFrame operations log through their own logger the same way.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return spark


#: Hadoop's S3A connector on Maven Central; its version must be the Hadoop version Spark's
#: jars were built with (:func:`hadoop_version`). It brings the AWS SDK bundle it was built
#: with along (transitively), so ``spark.jars.packages`` needs only this one coordinate.
HADOOP_AWS = "org.apache.hadoop:hadoop-aws"


def hadoop_version() -> str:
    """The Hadoop version of the installed PySpark (``pyspark/jars/hadoop-client-api-V.jar``):
    the version of ``hadoop-aws`` that session needs."""
    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    prefix = "hadoop-client-api-"
    names = os.listdir(jars) if os.path.isdir(jars) else []
    for name in sorted(names):
        if name.startswith(prefix) and name.endswith(".jar"):
            return name[len(prefix):-len(".jar")]
    raise SchemaLabError(
        f"No {prefix}*.jar in {jars}: this PySpark has no Hadoop of its own (a Spark Connect "
        "client?). Configure S3 on the Spark that runs the queries, with the hadoop-aws "
        "version of its Hadoop.", rule="spark-store")


def s3a_conf(options: Mapping[str, str] | None = None, *, ivy_dir: str | None = None,
             version: str | None = None) -> dict[str, str]:
    """Spark settings that let a session read and write data files on S3 (or an
    S3-compatible store) through Hadoop's S3A connector: ``spark.jars.packages`` with
    ``hadoop-aws`` at Spark's Hadoop version (downloaded from Maven Central on first use into
    the Ivy cache, ``ivy_dir`` or Spark's default ``~/.ivy2.5.2``), the ``s3a://`` and
    ``s3://`` schemes on ``S3AFileSystem``, and the store's endpoint, region, addressing and
    credentials as ``spark.hadoop.fs.s3a.*``.

    ``options`` are the Paimon catalog options a :class:`~schemalab.Warehouse` takes
    (``s3.endpoint``, ``s3.region``, ``s3.access-key``, ``s3.secret-key``,
    ``s3.path.style.access``), so one dictionary configures metadata and data alike; what
    they leave out comes from the standard environment (``AWS_ENDPOINT_URL[_S3]``,
    ``AWS_REGION``) as pyarrow and boto3 read it. Credentials not given stay with S3A's
    default chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, instance roles ...),
    which must then reach every executor. With an endpoint (MinIO, Ceph, moto ...) path-style
    addressing is the default, as in pyarrow; leave the endpoint out for AWS itself.

    JVM settings: pass them when the session starts (``local_spark(extra_conf=...)``,
    ``SparkSession.builder.config(map=...)``, or a cluster's/Connect server's config)."""
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    s3a = "org.apache.hadoop.fs.s3a.S3AFileSystem"
    conf = {
        "spark.jars.packages": f"{HADOOP_AWS}:{version or hadoop_version()}",
        "spark.hadoop.fs.s3a.impl": s3a,
        # s3:// paths a user's own Spark code names go through S3A as well (schemalab
        # itself hands Spark s3a:// URIs)
        "spark.hadoop.fs.s3.impl": s3a,
    }
    if ivy_dir:
        conf["spark.jars.ivy"] = os.path.abspath(ivy_dir)
    endpoint = opts.get("s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") \
        or os.environ.get("AWS_ENDPOINT_URL")
    region = opts.get("s3.region") or os.environ.get("AWS_REGION") \
        or os.environ.get("AWS_DEFAULT_REGION")
    path_style = opts.get("s3.path.style.access")
    if endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = endpoint
        if endpoint.lower().startswith("http://"):
            conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false"
        path_style = path_style or "true"
        region = region or "us-east-1"  # S3-compatible stores ignore it; the SDK needs one
    if region:
        conf["spark.hadoop.fs.s3a.endpoint.region"] = region
    if path_style:
        conf["spark.hadoop.fs.s3a.path.style.access"] = path_style.lower()
    if opts.get("s3.access-key"):
        conf["spark.hadoop.fs.s3a.aws.credentials.provider"] = \
            "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        conf["spark.hadoop.fs.s3a.access.key"] = opts["s3.access-key"]
        conf["spark.hadoop.fs.s3a.secret.key"] = opts.get("s3.secret-key", "")
    return conf


def _announce_download(packages: str, ivy_dir: str | None) -> None:
    """Say so before Spark downloads packages its Ivy cache lacks (hadoop-aws brings the AWS
    SDK bundle, ~690 MB: minutes on a slow line, with nothing else printed meanwhile)."""
    jars = os.path.join(ivy_dir or os.path.expanduser("~/.ivy2.5.2"), "jars")
    missing = []
    for coordinate in packages.split(","):
        group, artifact, version = (coordinate.strip().split(":") + ["", ""])[:3]
        if not os.path.exists(os.path.join(jars, f"{group}_{artifact}-{version}.jar")):
            missing.append(coordinate.strip())
    if missing:
        import sys

        size = (" (hadoop-aws brings the AWS SDK bundle, ~690 MB)"
                if any(HADOOP_AWS in m for m in missing) else "")
        print(f"schemalab: Spark fetches {', '.join(missing)} with its dependencies from "
              f"Maven Central into {os.path.dirname(jars)}, once{size}", file=sys.stderr,
              flush=True)


def _packages_error(e: BaseException, packages: str, lines: list[str],
                    ivy_dir: str | None) -> SchemaLabError:
    """A clear error for a session that did not start because ``spark.jars.packages`` could
    not be resolved (Maven Central unreachable, a version that does not exist)."""
    unresolved = [m for ln in lines for m in re.findall(r"unresolved dependency: [^\]]+", ln)]
    access = [ln.strip() for ln in lines if "server access error" in ln.lower()]
    if not unresolved:
        return SchemaLabError(f"Spark did not start (it was asked for the packages "
                              f"{packages}): {e}", rule="spark-packages")
    reasons = "; ".join([*dict.fromkeys(unresolved), *access[:1]])
    cache = ivy_dir or "Spark's default Ivy cache (~/.ivy2.5.2)"
    return SchemaLabError(
        f"Spark could not fetch {packages} from Maven Central (https://repo1.maven.org/maven2) "
        f"into {cache} ({reasons}). Check that this machine reaches Maven Central (or name a "
        "mirror in spark.jars.repositories), or copy the jars into the Ivy cache.",
        rule="spark-packages")


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
JVM_NOTICES = (b"WARNING: Using incubator modules",
               # a component of the AWS SDK bundle (S3A) without an SLF4J 1.x binding
               b'SLF4J: Failed to load class "org.slf4j.impl.StaticLoggerBinder"',
               b"SLF4J: Defaulting to no-operation (NOP) logger implementation",
               b"SLF4J: See http://www.slf4j.org/codes.html#StaticLoggerBinder")


class _StartLog:
    """What the JVM wrote on stderr while Spark started: ``lines`` (the last
    :data:`_KEPT_LINES`, for an error message) and, while ``holding``, the bytes held back
    from the real stderr until :meth:`release` (a failed start) or :meth:`discard`."""

    def __init__(self, real: int | None, hold: bool) -> None:
        self.real = real
        self.lines: list[str] = []
        self.held: list[bytes] = []
        self.holding = threading.Event()
        if hold:
            self.holding.set()
        self._lock = threading.Lock()

    def take(self, line: bytes) -> None:
        self.lines.append(line.decode("utf-8", "replace").rstrip())
        del self.lines[:-_KEPT_LINES]
        if line.startswith(JVM_NOTICES) or self.real is None:
            return
        with self._lock:
            if self.holding.is_set():
                self.held.append(line)
                return
        os.write(self.real, line)

    def release(self) -> None:
        time.sleep(0.3)  # what a JVM that just exited wrote may still be in the pipe
        with self._lock:
            self.holding.clear()
            held, self.held = self.held, []
        if self.real is not None:
            for line in held:
                os.write(self.real, line)

    def discard(self) -> None:
        with self._lock:
            self.holding.clear()
            self.held = []


@contextlib.contextmanager
def _jvm_notice_filtered(hold: bool = False) -> Iterator[_StartLog]:
    """While Spark starts, stderr (file descriptor 2, which the JVM inherits) is a pipe, and
    a thread copies what comes through it on to the real stderr, but for
    :data:`JVM_NOTICES`. In a notebook that notice was a pink stderr box in every notebook
    that starts Spark. The JVM keeps the pipe for its whole life, so its real errors still
    reach stderr; Python's own stderr is restored as soon as Spark runs. With ``hold``, what
    comes through is held back until the start succeeds (then dropped: Ivy's resolution
    report of ``spark.jars.packages``) or fails (then shown)."""
    if os.name != "posix":
        yield _StartLog(None, False)
        return
    try:
        real = os.dup(2)
        read, write = os.pipe()
    except OSError:  # no stderr to filter
        yield _StartLog(None, False)
        return
    log = _StartLog(real, hold)
    os.dup2(write, 2)
    os.close(write)
    threading.Thread(target=_copy_filtered, args=(read, log), daemon=True,
                     name="schemalab-jvm-stderr").start()
    try:
        yield log
    finally:
        os.dup2(real, 2)


_KEPT_LINES = 400


def _copy_filtered(read: int, log: _StartLog) -> None:
    with os.fdopen(read, "rb", buffering=0) as pipe:
        for line in iter(pipe.readline, b""):
            log.take(line)


def _python() -> str:
    import sys

    return sys.executable
