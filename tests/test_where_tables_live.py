"""Tables where they live (issue 13): S3 on loopback, Spark Connect, a standalone cluster.

Opt-in, like the browser tests: `make test-cluster` (sets SCHEMALAB_CLUSTER=1, builds the
executors' venv .venv-executor first). Servers come from tests/infra (session-scoped, on
127.0.0.1, stopped after the session). `remote_spark` runs each Spark test twice: over Spark
Connect (server's Python workers = the executor venv) and on a standalone master + worker
(driver = this venv with schemalab, executors = the executor venv without it).

No executor has schemalab installed: everything schemalab asks of the cluster is Spark SQL
(the primary-key bucket is a Spark expression, not a Python UDF), and nothing touches a
SparkContext, which Spark Connect sessions do not have. S3 is tested in
tests/test_object_store.py, which make test runs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["infra.fixtures"]

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(os.environ.get("SCHEMALAB_CLUSTER") != "1",
                       reason="starts S3/Spark servers: run `make test-cluster` "
                              "(sets SCHEMALAB_CLUSTER=1)"),
]

FLIP_226 = """CREATE TABLE T (a STRING, b STRING, c STRING);
INSERT INTO T VALUES ('a1', 'b1', 'c1');
ALTER TABLE T DROP COLUMN c;
ALTER TABLE T ADD COLUMN c STRING;
INSERT INTO T VALUES ('a2', 'b2', 'c2')"""
FLIP_226_ROWS = [("a1", "b1", None), ("a2", "b2", "c2")]

ACCOUNTS = [
    "CREATE TABLE accounts (id BIGINT, owner STRING, balance INT, "
    "PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '2')",
    "INSERT INTO accounts VALUES (1, 'ann', 100), (2, 'bob', 50), (3, 'cy', 7)",
    "INSERT INTO accounts VALUES (2, 'bob', 75)",  # upsert
    "DELETE FROM accounts WHERE id = 1",
]
ACCOUNTS_ROWS = [(2, "bob", 75), (3, "cy", 7)]

# A test for one kind of remote_spark (same cached session as the parametrized fixture's).
ONLY_CONNECT = pytest.mark.parametrize("remote_spark", ["connect"], indirect=True)

# Why things fail today (the lead fixes src/; these reasons say where).
CONFIGURE_SESSION = ("issue 13: Warehouse(spark=...) calls configure_session "
                     "(warehouse.py:54), whose spark.sparkContext.setLogLevel (spark.py:80) "
                     "raises PySparkAttributeError JVM_ATTRIBUTE_NOT_SUPPORTED over Spark Connect")
BUCKET_UDF = ("issue 13: a primary-key write computes the bucket in a row-at-a-time Python UDF "
              "(store.py:135-151, used at primary_key.py:163) that unpickles schemalab.bucket "
              "on the executors: ModuleNotFoundError: No module named 'schemalab'")
LOCAL_ONLY = ("issue 13: metadata I/O is os/open only (fileio.py, table.py:229 "
              "os.path.abspath): s3:// URIs become local paths")


def _plan_text(df: Any) -> str:
    """``df``'s physical plan, as ``explain`` prints it (on a cluster and over Connect)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain()
    return out.getvalue()


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _python_exception() -> type[BaseException]:
    from pyspark.errors import PythonException

    return PythonException


def _runtime_error() -> type[BaseException]:
    from pyspark.errors import PySparkRuntimeError

    return PySparkRuntimeError


def _attribute_error() -> type[BaseException]:
    from pyspark.errors import PySparkAttributeError

    return PySparkAttributeError




# ==== the infrastructure itself ===============================================================


def test_infra_failure_names_the_server_and_shows_its_log_tail(tmp_path: Path) -> None:
    from infra.procs import InfraError, ServerProcess

    server = ServerProcess("doomed server", ["bash", "-c", "echo starting; echo boom >&2; exit 3"],
                           tmp_path / "doomed.log")
    with pytest.raises(InfraError) as e:
        server.wait_ready(lambda: False, timeout=30, what="listening")
    text = str(e.value)
    assert "doomed server: exited before listening (exited with code 3" in text
    assert "starting\nboom" in text and str(tmp_path / "doomed.log") in text


def test_infra_stop_ends_the_whole_process_group(tmp_path: Path) -> None:
    """A server's children (a worker's executors, Spark's Python workers) go with it, even
    one that ignores SIGTERM (SIGKILL after the grace period)."""
    import time

    from infra.procs import ServerProcess, group_pids

    script = "trap '' TERM; (trap '' TERM; sleep 600) & sleep 600 & echo up; wait"
    server = ServerProcess("stubborn server", ["bash", "-c", script], tmp_path / "s.log")
    server.wait_ready(lambda: server.log_contains("up"), timeout=30, what="up")
    assert len(group_pids(server.pid)) >= 3
    t0 = time.monotonic()
    server.stop(grace=1)
    assert group_pids(server.pid) == []
    assert time.monotonic() - t0 < 10


# ==== S3 on loopback (no Spark) ===============================================================


# ==== Spark: Connect and standalone ===========================================================

_PROBE = """
def probe(_):
    import importlib, json, sys
    try:
        importlib.import_module("schemalab")
        err = None
    except ImportError as e:
        err = repr(e)
    have = {m: importlib.util.find_spec(m) is not None for m in ("pyarrow", "pandas", "numpy")}
    return json.dumps({"python": sys.executable, "schemalab": err, "have": have})
"""


def test_plain_python_udf_runs_on_the_executor_python(remote_spark: Any,
                                                      executor_python: str) -> None:
    """Python UDFs work, on the executors' own venv, which cannot import schemalab."""
    from pyspark.sql import functions as F

    scope: dict[str, Any] = {}
    exec(_PROBE, scope)  # noqa: S102 - a function defined nowhere importable: pickled by value
    udf = F.udf(scope["probe"], "string")
    got = [json.loads(r[0]) for r in remote_spark.range(0, 4, 1, 2).select(udf("id")).collect()]
    assert {g["python"] for g in got} == {executor_python}
    assert all(g["schemalab"] == "ModuleNotFoundError(\"No module named 'schemalab'\")"
               for g in got)
    assert all(g["have"] == {"pyarrow": True, "pandas": True, "numpy": True} for g in got)


def test_connect_session_has_no_spark_context(remote_spark: Any, remote_kind: str) -> None:
    if remote_kind == "connect":
        with pytest.raises(_attribute_error(), match="JVM_ATTRIBUTE_NOT_SUPPORTED"):
            remote_spark.sparkContext  # noqa: B018
    else:
        assert remote_spark.sparkContext.master.startswith("spark://127.0.0.1:")


def test_warehouse_accepts_the_session(remote_spark: Any, tmp_path: Path,
                                       request: pytest.FixtureRequest) -> None:
    import schemalab as sl

    wh = sl.Warehouse(tmp_path / "wh", spark=remote_spark)
    assert wh.spark is remote_spark


def test_flip_226(remote_spark: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    import schemalab as sl

    wh = sl.Warehouse(tmp_path / "wh", spark=remote_spark)
    wh.sql(FLIP_226)
    assert _rows(wh.sql("SELECT * FROM T")) == FLIP_226_ROWS
    # local rows, pandas frames (createDataFrame of local data) and the evolved read
    import pandas as pd

    t = wh.table("T")
    t.insert([("a3", "b3", "c3")])
    t.insert(pd.DataFrame({"a": ["a4"], "b": ["b4"], "c": [None]}))
    assert len(_rows(t.read())) == 4
    assert [s.id for s in t.history().snapshots] == [1, 2, 3, 4]


def test_a_read_is_kept_until_a_setting_changes(remote_spark: Any, tmp_path: Path) -> None:
    """The session keeps a built read on this session too (over Spark Connect its settings
    come in one request), and builds again under another time zone."""
    from test_session_cache import built_again_under_another_zone

    import schemalab as sl

    built_again_under_another_zone(sl.Warehouse(tmp_path / "wh", spark=remote_spark))


def test_primary_key_table(remote_spark: Any, tmp_path: Path) -> None:
    """Upserts, a DELETE, a rename and time travel on a primary-key table, with every key in
    the bucket Paimon's bucket function gives it (computed on executors without schemalab)."""
    import pyarrow.parquet as pq

    import schemalab as sl
    from schemalab.paimon.bucket import bucket_of
    from schemalab.types import BIGINT

    wh = sl.Warehouse(tmp_path / "wh", spark=remote_spark)
    for stmt in ACCOUNTS:
        wh.sql(stmt)
    assert _rows(wh.sql("SELECT * FROM accounts")) == ACCOUNTS_ROWS
    wh.sql("ALTER TABLE accounts RENAME COLUMN owner TO holder; "
           "INSERT INTO accounts VALUES (3, 'cy', 8), (4, 'di', 1)")
    t = wh.table("accounts")
    assert _rows(t.read()) == [(2, "bob", 75), (3, "cy", 8), (4, "di", 1)]
    assert _rows(t.read(snapshot_id=2)) == [(1, "ann", 100), (2, "bob", 75), (3, "cy", 7)]
    assert t.explain_read(key={"id": 3}).key.winner.values["balance"] == 8
    for f in t.data_files(t.latest_snapshot):
        keys = pq.read_table(f.path, columns=["_KEY_id"]).column(0).to_pylist()
        assert {bucket_of([k], [BIGINT(False)], 2) for k in keys} == {f.bucket}


def test_base_rows_dropped_by_the_reader_on_the_remote_session(remote_spark: Any,
                                                               tmp_path: Path,
                                                               remote_kind: str) -> None:
    """Issue 25: a deduplicate table whose newer files share no key (``newest`` buckets):
    on a cluster the base's rows whose key a newer file holds are dropped by schemalab's
    Parquet reader (compiled by the driver, its jar fetched by the executors, the newer
    keys' bitmap broadcast); over Connect, where the client has no JVM, by a filter."""
    import schemalab as sl
    from schemalab.engine import kept_scan

    wh = sl.Warehouse(tmp_path / "wh", spark=remote_spark)
    wh.sql("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
           "TBLPROPERTIES ('bucket' = '2')")
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'old{i}')" for i in range(200)))
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'new{i}')" for i in range(0, 200, 7)))
    df = wh.table("t").read()
    plan = _plan_text(df.select("v"))
    assert (kept_scan.FORMAT_NAME in plan) == (remote_kind != "connect"), plan
    assert _rows(df) == sorted(((i, f"new{i}" if i % 7 == 0 else f"old{i}")
                                for i in range(200)), key=repr)
    assert df.select("v").count() == 200


@pytest.mark.parametrize("held", ["jvm", "subqueries", "broadcast"])
def test_partial_update_pairs_on_the_remote_session(remote_spark: Any, tmp_path: Path,
                                                    held: str, remote_kind: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: a partial-update read whose newer versions are looked up by rank — in the
    JVM (``NewerValues``, compiled by the driver, its jar fetched by the executors, its
    values broadcast; over Connect, where the client has no JVM, in arrays) or in arrays
    (sent to the session through Arrow, in scalar subqueries or, past their bound, in a
    broadcast frame Spark caches) — reads the same rows twice (the second time from the
    session's cache) on a cluster and over Spark Connect."""
    from schemalab.engine import jvm_udfs
    from schemalab.engine.merge import lookup

    if held == "broadcast":
        monkeypatch.setattr(lookup, "MAX_BYTES", 1)
    if held != "jvm":
        remote_spark.conf.set(jvm_udfs.ENABLED, "false")
    try:
        _read_pairs(remote_spark, tmp_path, held == "jvm" and remote_kind != "connect",
                    held == "broadcast")
    finally:
        remote_spark.conf.unset(jvm_udfs.ENABLED)


def _read_pairs(remote_spark: Any, tmp_path: Path, in_jvm: bool, broadcast: bool) -> None:
    import schemalab as sl
    from schemalab.engine.merge import lookup
    from schemalab.engine.merge.keyed_read import merge_input, plans_of

    wh = sl.Warehouse(tmp_path / "wh", spark=remote_spark)
    wh.sql("""
        CREATE TABLE p (id INT NOT NULL, a STRING, n INT, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES (1, 'a1', 1), (2, 'a2', 2), (3, 'a3', NULL), (64, 'a64', 64);
        ALTER TABLE p ALTER COLUMN n TYPE BIGINT;
        INSERT INTO p VALUES (2, NULL, 20), (3, 'x3', 30), (64, 'x64', NULL)""")
    t = wh.table("p")
    plan = t.read_plan()
    assert [b.strategy for b in plans_of(plan, merge_input(plan).opts)] == ["pair"]
    expected = [(1, "a1", 1), (2, "a2", 20), (3, "x3", 30), (64, "x64", 64)]
    assert _rows(t.read()) == expected
    assert _rows(t.read()) == expected
    assert (lookup.UDF_NAME in _plan_text(t.read())) == in_jvm
    if broadcast:
        assert "BroadcastNestedLoopJoin" in _plan_text(t.read())


def test_open_table_without_a_session_uses_the_active_one(
        remote_spark: Any, remote_kind: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """A table opened without ``spark=`` reads with the active session: the running
    classic driver, or the process's Spark Connect session."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)  # local_spark() setdefaults it
    import schemalab as sl

    sl.Warehouse(tmp_path / "wh", spark=remote_spark).sql(FLIP_226)
    t = sl.open_table(tmp_path / "wh" / "default.db" / "T")
    assert _rows(t.read()) == FLIP_226_ROWS


@ONLY_CONNECT
def test_cli_over_spark_connect(remote_spark: Any, tmp_path: Path,
                                request: pytest.FixtureRequest) -> None:
    """``SPARK_REMOTE=sc://… schemalab sql`` (pyspark's own way to pick Connect)."""
    url = request.getfixturevalue("spark_connect_server").url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env["SPARK_REMOTE"] = url
    out = subprocess.run(
        [sys.executable, "-m", "schemalab.cli", "sql", str(tmp_path / "wh"), "-e",
         FLIP_226 + ";\nSELECT * FROM T"], capture_output=True, text=True, env=env,
        timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "a2" in out.stdout and "c2" in out.stdout


def test_iceberg_system_tables(remote_spark: Any, tmp_path: Path) -> None:
    """Iceberg's metadata tables (issue 23) are built with createDataFrame only: over Spark
    Connect and on a cluster they come back with the schema and rows schemalab computed."""
    import tarfile

    from iceberg_canonical import canonical_value

    import schemalab as sl
    from schemalab.iceberg.system_tables import SYSTEM_TABLES, system_table_data

    tarball = Path(__file__).parent / "fixtures" / "iceberg-java-1.10" / \
        "iceberg-java-1.10.2-tables.tar.gz"
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    for name in ("t08_partition_evolution", "t14_v3_deletion_vectors"):
        t = sl.open_table(tmp_path / "db" / name, spark=remote_spark)
        for system in SYSTEM_TABLES:
            df = t.system_table(system)
            want = system_table_data(t, system)
            assert df.schema == want.schema, (name, system)
            fields = want.schema.fields
            got = sorted(json.dumps([canonical_value(v, f.dataType) for v, f in
                                     zip(r, fields, strict=True)]) for r in df.collect())
            assert got == sorted(json.dumps([canonical_value(v, f.dataType) for v, f in
                                             zip(r, fields, strict=True)])
                                 for r in want.rows), (name, system)


def test_iceberg_deletion_vectors_read_as_iceberg_reads_them(remote_spark: Any,
                                                             tmp_path: Path,
                                                             remote_kind: str) -> None:
    """Deletes by position over Spark Connect and on a cluster's executors: each row's
    position comes from a column Spark's Parquet reader fills by name; on the cluster the
    JVM's filter (compiled by the driver, its jar fetched by the executors, its bitmaps
    broadcast) tests it, over Connect a bitmap found by a hash of the file's size; t14's
    deletion vectors (Iceberg 1.10.2, v3) read at every snapshot as Iceberg read them."""
    import tarfile

    from iceberg_canonical import canonical_frame

    import schemalab as sl
    from schemalab.engine import kept_rows

    fixtures = Path(__file__).parent / "fixtures" / "iceberg-java-1.10"
    with tarfile.open(fixtures / "iceberg-java-1.10.2-tables.tar.gz") as tar:
        tar.extractall(tmp_path, members=[m for m in tar.getmembers()
                                          if m.name.startswith("db/t14_")], filter="data")
    expected = json.loads((fixtures / "expected" / "t14_v3_deletion_vectors.json")
                          .read_text())["reads"]
    t = sl.open_table(tmp_path / "db" / "t14_v3_deletion_vectors", spark=remote_spark)
    assert len(expected) > 2
    tested = 0
    for label, want in expected.items():
        df = t.read(snapshot_id=None if label == "current" else int(label))
        assert canonical_frame(df)[2] == want["rows"], label
        plan = _plan_text(df)
        if "_tmp_metadata_row_index" not in plan:
            continue  # a snapshot without deletion vectors
        tested += 1
        if remote_kind == "connect":  # no JVM on the client: Spark expressions
            assert "file_size" in plan and kept_rows.FILTER_NAME + ".test(" not in plan, plan
        else:
            assert kept_rows.FILTER_NAME + ".test(" in plan and "file_size" not in plan, plan
    assert tested
