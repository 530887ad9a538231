"""pytest fixtures for tables where they live (issue 13). Load with
``pytest_plugins = ["infra.fixtures"]`` in a test module (``tests/`` is on ``sys.path``).

Session-scoped servers, each on 127.0.0.1 with free ports, stopped by their finalizer (and
at exit, and by PR_SET_PDEATHSIG if the test process is killed):

``s3``                   moto S3 server + bucket → :class:`infra.s3.S3Server`
``s3_env``               (function) the standard AWS_* variables set for ``s3``; yields it
``executor_python``      path of the executors' Python (``make executor-venv``): pyarrow,
                         pandas, numpy and no schemalab
``spark_connect_server`` Spark Connect server (local[2], Python workers = executor_python)
                         → :class:`infra.spark.ConnectServer` (``.url`` is ``sc://…``)
``standalone_cluster``   master + one worker → :class:`infra.spark.StandaloneCluster`
``remote_spark``         a SparkSession, parametrized ``connect`` (``builder.remote(url)``)
                         and ``standalone`` (classic driver in this process, executors on the
                         cluster running executor_python). Session-scoped and parametrized,
                         so pytest keeps one alive at a time: they cannot share a process.
``remote_kind``          (function) ``"connect"`` or ``"standalone"`` for the current test

Importing this module costs nothing: moto, boto3 and pyspark are imported by the fixtures.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.procs import InfraError, group_pids

REPO = Path(__file__).resolve().parents[2]
STARTUP: dict[str, float] = {}

REMOTE_KINDS = ("connect", "standalone")


@pytest.fixture(scope="session")
def infra_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Work and log directory of this session's servers."""
    return tmp_path_factory.mktemp("where-tables-live")


def _check_stopped(name: str, pgid: int) -> None:
    left = group_pids(pgid)
    if left:
        raise InfraError(f"{name}: processes {left} of group {pgid} survived stop()")


# ---- S3 --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def s3(infra_dir: Path) -> Iterator[Any]:
    pytest.importorskip("moto", reason="moto[server] is in the dev extra")
    from infra.s3 import start_s3

    server = start_s3(infra_dir / "s3")
    STARTUP["moto S3 server"] = server.startup_seconds
    yield server
    server.stop()
    _check_stopped("moto", server.server.pid)


@pytest.fixture()
def s3_env(s3: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    return s3


# ---- Spark -----------------------------------------------------------------------------------

_EXECUTOR_CHECK = """
import importlib.util, json, sys
print(json.dumps({"version": list(sys.version_info[:2]),
                  "has": {m: importlib.util.find_spec(m) is not None
                          for m in ("pyarrow", "pandas", "numpy", "schemalab", "pyspark")}}))
"""


@pytest.fixture(scope="session")
def executor_python() -> str:
    import json

    path = os.environ.get("SCHEMALAB_EXECUTOR_PYTHON") or str(REPO / ".venv-executor/bin/python")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no executor Python at {path}: run `make executor-venv` (or "
                    "`make test-cluster`, which builds it), or set SCHEMALAB_EXECUTOR_PYTHON",
                    pytrace=False)
    out = subprocess.run([path, "-I", "-c", _EXECUTOR_CHECK], capture_output=True, text=True,
                         timeout=60, env={"PATH": os.environ.get("PATH", "")})
    if out.returncode:
        pytest.fail(f"{path} does not run: {out.stderr[-2000:]}", pytrace=False)
    info = json.loads(out.stdout)
    problems = [f"cannot import {m}" for m in ("pyarrow", "pandas", "numpy") if not info["has"][m]]
    if info["has"]["schemalab"]:
        problems.append("imports schemalab (the executors must not have it)")
    if tuple(info["version"]) != sys.version_info[:2]:
        problems.append(f"is Python {info['version']}, the driver {sys.version_info[:2]}: "
                        "PySpark needs the same minor version on both sides")
    if problems:
        pytest.fail(f"executor Python {path}: " + "; ".join(problems) +
                    " — rebuild it with `make executor-venv`", pytrace=False)
    return path


def _need_java() -> None:
    if subprocess.run(["java", "-version"], capture_output=True).returncode:
        pytest.fail("no working `java` on PATH (Spark needs Java 17+)", pytrace=False)


@pytest.fixture(scope="session")
def spark_connect_server(infra_dir: Path, executor_python: str) -> Iterator[Any]:
    pytest.importorskip("grpc", reason="Spark Connect clients need the connect extra")
    _need_java()
    from infra.spark import start_connect_server

    server = start_connect_server(infra_dir / "connect", python=executor_python)
    STARTUP["Spark Connect server"] = server.startup_seconds
    yield server
    server.stop()
    _check_stopped("Spark Connect server", server.server.pid)


@pytest.fixture(scope="session")
def standalone_cluster(infra_dir: Path) -> Iterator[Any]:
    _need_java()
    from infra.spark import start_standalone

    cluster = start_standalone(infra_dir / "standalone")
    STARTUP["standalone master + worker"] = cluster.startup_seconds
    yield cluster
    cluster.stop()
    _check_stopped("standalone worker", cluster.worker.pid)
    _check_stopped("standalone master", cluster.master.pid)


@pytest.fixture(scope="session", params=REMOTE_KINDS)
def remote_spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    import time

    from infra import spark as infra_spark

    kind = request.param
    if kind == "connect":
        server = request.getfixturevalue("spark_connect_server")
        t0 = time.monotonic()
        session = infra_spark.connect_session(server.url)
        session.range(1).collect()  # the server builds its session on the first request
        STARTUP["Spark Connect client, first query"] = time.monotonic() - t0
        yield session
        infra_spark.stop_connect_session(session)
    else:
        cluster = request.getfixturevalue("standalone_cluster")
        python = request.getfixturevalue("executor_python")
        t0 = time.monotonic()
        session = infra_spark.classic_session(cluster.master_url, executor_python=python)
        try:
            session.range(1).collect()  # executors are launched for the first job
        except Exception as e:
            infra_spark.stop_classic_session(session)
            raise InfraError(f"first job on {cluster.master_url} failed: {e}\n"
                             f"{cluster.log_tails()}") from e
        STARTUP["standalone driver + executors, first job"] = time.monotonic() - t0
        yield session
        infra_spark.stop_classic_session(session)


@pytest.fixture()
def remote_kind(request: pytest.FixtureRequest) -> str:
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or "remote_spark" not in callspec.params:
        pytest.fail("remote_kind needs a test that uses remote_spark", pytrace=False)
    return str(callspec.params["remote_spark"])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if STARTUP:
        terminalreporter.section("tables where they live: server start-up")
        for name, seconds in STARTUP.items():
            terminalreporter.write_line(f"{name:45s} {seconds:6.1f} s")
