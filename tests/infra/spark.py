"""Spark servers from the pip-installed PySpark's own jars and scripts, on 127.0.0.1.

* Spark Connect: ``bin/spark-submit --class org.apache.spark.sql.connect.service.
  SparkConnectServer spark-internal`` (``spark-connect_2.13-4.3.0.jar`` ships in
  ``pyspark/jars``; no ``--packages`` needed). Its own Spark runs ``local[2]``.
* Standalone: ``bin/spark-class org.apache.spark.deploy.master.Master`` and
  ``...deploy.worker.Worker``; executors' Python is whatever ``PYSPARK_PYTHON`` the driver
  names, PySpark itself reaches them as ``pyspark/python/lib/pyspark.zip``.

Spark Connect clients and a classic (py4j) driver cannot share one Python process at the same
time: a Connect session sets ``SPARK_CONNECT_MODE_ENABLED``, after which every
``pyspark.sql.functions`` call builds Connect columns, and a classic ``SparkContext`` makes
``builder.remote()`` raise SESSION_ALREADY_EXIST. :func:`stop_connect_session` and
:func:`stop_classic_session` undo each, so one may follow the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.procs import LOOPBACK, InfraError, ServerProcess, free_port, port_open

#: JVM options for test servers: C1 only starts the JVM faster (Spark notes: 2-3 s of a cold
#: start; scans are slower, which small test tables do not notice).
TEST_JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_home() -> str:
    """The pip PySpark's directory, which is a complete SPARK_HOME (bin/, sbin/, jars/)."""
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    if not os.path.isfile(os.path.join(home, "bin", "spark-submit")):
        raise InfraError(f"{home} has no bin/spark-submit: not a pip PySpark with its jars")
    return home


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def bundled_jars(pattern: str = "") -> list[str]:
    return sorted(j for j in os.listdir(os.path.join(spark_home(), "jars")) if pattern in j)


def hadoop_version() -> str:
    """The Hadoop version PySpark's jars were built with (from ``hadoop-client-api-*.jar``)."""
    for j in bundled_jars("hadoop-client-api-"):
        return j[len("hadoop-client-api-"):-len(".jar")]
    raise InfraError("no hadoop-client-api-*.jar in pyspark/jars")


def _server_env(work: Path, python: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_", "PYSPARK_")) and k != "PYTHONPATH"}
    env.update(
        SPARK_HOME=spark_home(),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOG_DIR=str(work / "logs"),
        SPARK_PID_DIR=str(work / "pids"),
        SPARK_WORKER_DIR=str(work / "worker"),
        SPARK_LOCAL_DIRS=str(work / "local"),
        SPARK_CONF_DIR=str(work / "conf"),  # empty: no user spark-defaults.conf leaks in
        SPARK_DAEMON_JAVA_OPTS=TEST_JAVA_OPTS,
    )
    if python is not None:
        env["PYSPARK_PYTHON"] = python
    for d in ("logs", "pids", "worker", "local", "conf"):
        (work / d).mkdir(parents=True, exist_ok=True)
    return env


# ---- Spark Connect ---------------------------------------------------------------------------


@dataclass
class ConnectServer:
    server: ServerProcess
    port: int
    work: Path
    python: str
    startup_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"sc://{LOOPBACK}:{self.port}"

    def stop(self) -> None:
        self.server.stop()


def start_connect_server(work: Path, *, python: str, conf: dict[str, str] | None = None,
                         timeout: float = 180) -> ConnectServer:
    """A Spark Connect server (local[2]) whose Python workers run ``python``."""
    work = Path(work)
    port = free_port()
    home = spark_home()
    settings = {
        "spark.connect.grpc.binding.address": LOOPBACK,
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.warehouse.dir": str(work / "spark-warehouse"),
        "spark.driver.extraJavaOptions":
            f"{TEST_JAVA_OPTS} -Dderby.system.home={work / 'derby'}",
        "spark.pyspark.python": python,
        **(conf or {}),
    }
    argv = [os.path.join(home, "bin", "spark-submit"), "--master", "local[2]",
            "--name", "schemalab-test-connect",
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    for k, v in settings.items():
        argv += ["--conf", f"{k}={v}"]
    argv.append("spark-internal")
    server = ServerProcess("Spark Connect server", argv, work / "connect-server.log",
                           env=_server_env(work, python), cwd=work)
    seconds = server.wait_ready(
        lambda: server.log_contains("Spark Connect server started at") and port_open(port),
        timeout=timeout, what=f"listening on {LOOPBACK}:{port}")
    return ConnectServer(server, port, work, python, seconds)


def connect_session(url: str) -> Any:
    """``SparkSession.builder.remote(url).getOrCreate()``, after checking that no classic
    SparkContext lives in this process (pyspark would refuse with SESSION_ALREADY_EXIST)."""
    from pyspark.sql import SparkSession

    try:
        from pyspark import SparkContext

        if SparkContext._active_spark_context is not None:
            raise InfraError("a classic SparkContext is running in this process; stop it "
                             "(infra.spark.stop_classic_session) before a Spark Connect "
                             "session: pyspark allows only one kind at a time")
    except ImportError:  # pragma: no cover - pyspark-client without the classic side
        pass
    return SparkSession.builder.remote(url).getOrCreate()


def stop_connect_session(session: Any, timeout: float = 15) -> None:
    import threading

    # stop() releases the session on the server, retrying with backoff for minutes if the
    # server is gone (a dead server would hang the teardown): bounded here.
    def stop() -> None:
        with contextlib.suppress(Exception):
            session.stop()

    t = threading.Thread(target=stop, name="stop-connect-session", daemon=True)
    t.start()
    t.join(timeout)
    # stop() leaves this set for an sc:// session (it only clears it for local remotes), and
    # with it set every pyspark.sql.functions call builds Connect columns.
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    os.environ.pop("SPARK_REMOTE", None)


# ---- Standalone cluster ----------------------------------------------------------------------


@dataclass
class StandaloneCluster:
    master: ServerProcess
    worker: ServerProcess
    master_port: int
    master_web_port: int
    work: Path
    cores: int
    memory: str
    startup_seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def web_url(self) -> str:
        return f"http://{LOOPBACK}:{self.master_web_port}"

    def state(self) -> dict[str, Any]:
        """The master's JSON status (workers, cores, running applications)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=2) as r:
            return dict(json.load(r))

    def log_tails(self) -> str:
        return (f"---- master ({self.master.log_path}) ----\n{self.master.log_tail()}\n"
                f"---- worker ({self.worker.log_path}) ----\n{self.worker.log_tail()}")

    def stop(self) -> None:
        self.worker.stop()
        self.master.stop()


def start_standalone(work: Path, *, cores: int = 2, memory: str = "3g",
                     timeout: float = 120) -> StandaloneCluster:
    """A master and one worker on 127.0.0.1; ready when the master lists the worker ALIVE."""
    work = Path(work)
    home = spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    mport, mweb, wport, wweb = (free_port() for _ in range(4))
    # The worker's executors are started with the worker's environment; their Python is
    # chosen by the driver (PYSPARK_PYTHON of the driver process), not here.
    env = _server_env(work, None)
    t0 = time.monotonic()
    master = ServerProcess(
        "Spark standalone master",
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
         "--port", str(mport), "--webui-port", str(mweb)],
        work / "master.log", env=env, cwd=work)
    web = f"http://{LOOPBACK}:{mweb}"

    def master_alive() -> bool:
        with urllib.request.urlopen(f"{web}/json/", timeout=1) as r:
            return bool(json.load(r).get("status") == "ALIVE")

    master.wait_ready(master_alive, timeout=timeout, what="ALIVE (web UI /json/)")
    worker = ServerProcess(
        "Spark standalone worker",
        [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
         "--port", str(wport), "--webui-port", str(wweb), "--cores", str(cores),
         "--memory", memory, "--work-dir", str(work / "worker"),
         f"spark://{LOOPBACK}:{mport}"],
        work / "worker.log", env=env, cwd=work)

    def worker_registered() -> bool:
        with urllib.request.urlopen(f"{web}/json/", timeout=1) as r:
            return any(w.get("state") == "ALIVE" for w in json.load(r).get("workers", []))

    try:
        worker.wait_ready(worker_registered, timeout=timeout,
                          what="registered ALIVE with the master")
    except InfraError as e:
        master.stop()
        raise InfraError(f"{e}\n---- master ({master.log_path}) ----\n{master.log_tail()}"
                         ) from None
    cluster = StandaloneCluster(master, worker, mport, mweb, work, cores, memory,
                                time.monotonic() - t0)
    cluster.info = cluster.state()
    return cluster


def classic_session(master_url: str, *, executor_python: str, app_name: str = "schemalab-test",
                    conf: dict[str, str] | None = None) -> Any:
    """A classic (py4j) SparkSession driven from this process on ``master_url``: the driver
    is this Python (with schemalab), executors run ``executor_python``.

    PySpark takes the executors' Python from the *driver's* ``PYSPARK_PYTHON`` when the
    SparkContext starts (``SparkContext.pythonExec``), so it is set for the start and put
    back afterwards."""
    from pyspark.sql import SparkSession

    if os.environ.get("SPARK_CONNECT_MODE_ENABLED"):
        raise InfraError("a Spark Connect session is active in this process; stop it "
                         "(infra.spark.stop_connect_session) before a classic driver")
    from importlib import resources

    log_conf = resources.files("schemalab").joinpath("log4j2.properties")
    local = tempfile.mkdtemp(prefix="schemalab-driver-")
    builder = (
        SparkSession.builder.master(master_url).appName(app_name)
        .config("spark.driver.host", LOOPBACK)
        .config("spark.driver.bindAddress", LOOPBACK)
        .config("spark.driver.extraJavaOptions",
                f"{TEST_JAVA_OPTS} -Dlog4j2.configurationFile=file:{log_conf} "
                f"-Dderby.system.home={local}")
        .config("spark.executor.extraJavaOptions", TEST_JAVA_OPTS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executor.memory", "1g")
        .config("spark.cores.max", "2")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", os.path.join(local, "spark-warehouse"))
        .config("spark.local.dir", os.path.join(local, "tmp"))
        .config("spark.pyspark.python", executor_python)
        .config("spark.pyspark.driver.python", sys.executable)
    )
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    os.environ["PYSPARK_PYTHON"] = executor_python
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    try:
        return builder.getOrCreate()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def stop_classic_session(session: Any, timeout: float = 30) -> None:
    """Stop the session *and* its driver JVM (pyspark keeps the py4j gateway for reuse
    otherwise), so that the process is free for a Spark Connect session or another driver."""
    from pyspark import SparkContext

    with contextlib.suppress(Exception):
        session.stop()
    gateway = SparkContext._gateway
    SparkContext._gateway = None
    SparkContext._jvm = None
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    with contextlib.suppress(Exception):
        gateway.shutdown()
    if proc is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()  # the JVM's PythonGatewayServer exits on EOF of its stdin
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
