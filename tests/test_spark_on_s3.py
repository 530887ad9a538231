"""Spark's own data path on an object store: warehouses on ``s3://`` and ``s3a://`` (moto's
server on 127.0.0.1) whose data files Spark writes and reads through Hadoop's S3A connector,
while schemalab writes the metadata through fileio (pyarrow, boto3's conditional PUT).

The session is started the way the README's "Your tables, your cluster" says:
``local_spark(extra_conf=s3a_conf(options))``, ``hadoop-aws`` at PySpark's Hadoop version
fetched with ``spark.jars.packages`` (the first run downloads it and the AWS SDK bundle,
~690 MB, from Maven Central into the ignored ``.cache/ivy``, or ``$SCHEMALAB_IVY_DIR``). The
README's explicit builder recipe runs verbatim in a fresh interpreter.

Every statement runs on an S3 warehouse and on a local one in the same session, and every
read (latest and each snapshot) must give the same rows; pypaimon 2.1.0 (pyarrow's S3) reads
the S3 tables equal too.

Opt-in: ``make test-cluster`` runs this module in its own pytest process (the session needs
hadoop-aws on its classpath from the start, which the suite's shared session has not).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import schemalab as sl
from schemalab import fileio
from schemalab.spark import HADOOP_AWS, hadoop_version, s3a_conf

pytest_plugins = ["infra.fixtures"]

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(os.environ.get("SCHEMALAB_CLUSTER") != "1",
                       reason="starts moto and a Spark with hadoop-aws (downloaded on first "
                              "use): run `make test-cluster` (sets SCHEMALAB_CLUSTER=1)"),
]

REPO = Path(__file__).resolve().parents[1]
#: Ivy cache of the tests (ignored by git); a shared one may be named instead
IVY = os.environ.get("SCHEMALAB_IVY_DIR") or str(REPO / ".cache" / "ivy")
#: the test servers' settings for a Spark started in a fresh interpreter (not the recipe's)
LOOPBACK_SUBMIT_ARGS = (f"--conf spark.jars.ivy={IVY} --conf spark.driver.host=127.0.0.1 "
                        "--conf spark.driver.bindAddress=127.0.0.1 --conf spark.ui.enabled=false "
                        "--conf spark.sql.shuffle.partitions=2 pyspark-shell")

EVOLVE = [
    "CREATE TABLE events (id INT, name STRING, qty INT, note STRING) PARTITIONED BY (name)",
    "INSERT INTO events VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'y'), (3, 'a', 5, NULL)",
    "ALTER TABLE events ADD COLUMN score DOUBLE",
    "INSERT INTO events VALUES (4, 'a', 30, 'z', 1.5)",
    "ALTER TABLE events RENAME COLUMN qty TO amount",
    "ALTER TABLE events DROP COLUMN note",
    "ALTER TABLE events ALTER COLUMN amount TYPE BIGINT",
    "INSERT INTO events VALUES (5, 'c', 40000000000, 2.5)",
    "ALTER TABLE events ADD COLUMN note STRING",  # a new column, not the dropped one
    "INSERT INTO events VALUES (6, 'b', 7, NULL, 'new')",
    "INSERT OVERWRITE events VALUES (1, 'a', 11, 0.5, 'over')",
    "CALL sys.compact(table => 'default.events')",
]
PRIMARY_KEY = [
    "CREATE TABLE accounts (id BIGINT, owner STRING, balance INT, "
    "PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '2')",
    "INSERT INTO accounts VALUES (1, 'ann', 100), (2, 'bob', 50), (3, 'cy', 7)",
    "INSERT INTO accounts VALUES (2, 'bob', 75), (5, 'ed', 0)",  # upserts
    "ALTER TABLE accounts RENAME COLUMN owner TO holder",
    "ALTER TABLE accounts ALTER COLUMN balance TYPE BIGINT",
    "DELETE FROM accounts WHERE id = 1 OR balance = 0",
    "INSERT INTO accounts VALUES (3, 'cy', 8), (4, 'di', 1)",
    "ALTER TABLE accounts ADD COLUMN tier STRING",
    "INSERT INTO accounts VALUES (6, 'fay', 60, 'gold')",
    "CALL sys.compact(table => 'default.accounts')",
]
SCENARIOS = {"events": EVOLVE, "accounts": PRIMARY_KEY}


def _options(s3: Any) -> dict[str, str]:
    """Paimon's catalog options for the moto server: one dictionary for metadata (fileio),
    data (Spark's S3A, through s3a_conf) and pypaimon."""
    from infra.s3 import ACCESS_KEY, REGION, SECRET_KEY

    return {"s3.endpoint": s3.endpoint, "s3.access-key": ACCESS_KEY,
            "s3.secret-key": SECRET_KEY, "s3.region": REGION, "s3.path.style.access": "true"}


@pytest.fixture(scope="module")
def spark(s3: Any) -> Any:
    """This module's session: schemalab's local one with the S3A connector (overrides the
    suite's shared session, which has no hadoop-aws)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # pyarrow: no IMDS probe
    active = SparkSession.getActiveSession()
    if active is not None and HADOOP_AWS not in (active.conf.get("spark.jars.packages", "")
                                                  or ""):
        pytest.fail("a SparkSession without hadoop-aws already runs in this process: run "
                    "tests/test_spark_on_s3.py in its own pytest process (make test-cluster)",
                    pytrace=False)
    return sl.local_spark(extra_conf=s3a_conf(_options(s3), ivy_dir=IVY))


Read = tuple[list[str], list[tuple[Any, ...]]]


def _read(df: Any) -> Read:
    from test_interop_pypaimon import ours

    return ours(df)


def _keys(s3: Any, prefix: str) -> list[str]:
    c = s3.client()
    return sorted(o["Key"] for page in c.get_paginator("list_objects_v2").paginate(
        Bucket=s3.bucket, Prefix=prefix) for o in page.get("Contents", []))


def _snapshots(t: sl.Table) -> list[tuple[Any, ...]]:
    """What each snapshot is, without where its files are."""
    return [(s.id, s.schema_id, s.commit_kind, s.total_record_count, s.delta_record_count)
            for s in t.snapshots]


@dataclass
class Replay:
    """A scenario's statements run on one warehouse, and the table's rows after each."""

    warehouse: sl.Warehouse
    reads: list[Read | None]


@pytest.fixture(scope="module")
def replays(spark: Any, s3: Any, tmp_path_factory: pytest.TempPathFactory
            ) -> Callable[[str, str], Replay]:
    """``replays(where, table)``: the scenario of ``table`` run once per module on a local
    warehouse (``where="local"``) or on ``s3://`` / ``s3a://`` in the bucket, with a read of
    the whole table after every statement but the CREATE (after an ALTER, that is an evolved
    read of files written under an older schema)."""
    done: dict[tuple[str, str], Replay] = {}

    def get(where: str, table: str) -> Replay:
        if (where, table) not in done:
            wh = (sl.Warehouse(tmp_path_factory.mktemp("local"), spark=spark)
                  if where == "local" else
                  sl.Warehouse(f"{where}://{s3.bucket}/{where}-wh", spark=spark,
                               options=_options(s3)))
            reads: list[Read | None] = []
            for stmt in SCENARIOS[table]:
                wh.sql(stmt)
                reads.append(None if stmt.startswith("CREATE")
                             else _read(wh.sql(f"SELECT * FROM {table}")))
            done[where, table] = Replay(wh, reads)
        return done[where, table]

    return get


@pytest.mark.parametrize("scheme", ["s3", "s3a"])
@pytest.mark.parametrize("table", sorted(SCENARIOS))
def test_statements_on_s3_give_the_rows_of_a_local_warehouse(
        replays: Callable[[str, str], Replay], s3: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, scheme: str, table: str) -> None:
    """INSERT, evolved reads (after ADD / RENAME / DROP / retype), INSERT OVERWRITE, DELETE
    on a primary-key table and compaction on an s3:// or s3a:// warehouse: after every
    statement the table reads as the local one does, and so does every snapshot."""
    monkeypatch.chdir(tmp_path)  # a stray local "s3:" / "s3a:" directory would land here
    remote, local = replays(scheme, table), replays("local", table)
    assert remote.warehouse.path == f"s3://{s3.bucket}/{scheme}-wh"
    for stmt, got, want in zip(SCENARIOS[table], remote.reads, local.reads, strict=True):
        assert got == want, stmt
    there, here = remote.warehouse.table(table), local.warehouse.table(table)
    assert _snapshots(there) == _snapshots(here)
    assert there.snapshots[-1].commit_kind == "COMPACT"
    for snap in here.snapshots:
        assert _read(there.read(snapshot_id=snap.id)) == _read(here.read(snapshot_id=snap.id)), \
            f"snapshot {snap.id}"
    assert not any(p.name.startswith("s3") for p in tmp_path.iterdir())

    # the data files live in the bucket, and Spark wrote them (pyarrow would say parquet-cpp)
    files = there.data_files(there.latest_snapshot)
    assert len(files) == len(here.data_files(here.latest_snapshot))
    prefix = f"{scheme}-wh/default.db/{table}/"
    stored = set(_keys(s3, prefix))
    for f in files:
        assert f.path.startswith(f"s3://{s3.bucket}/{prefix}")
        assert f.path.split("/", 3)[3] in stored
        created_by = pq.ParquetFile(fileio.open_input(f.path)).metadata.created_by
        assert created_by.startswith("parquet-mr"), (f.path, created_by)
    # nothing of a write's staging is left behind
    assert not [k for k in stored if "/_" in k[len(prefix):] or "staging" in k]


def test_pypaimon_reads_the_s3_tables_equal(replays: Callable[[str, str], Replay],
                                            s3: Any) -> None:
    """pypaimon 2.1.0 reads the s3:// tables (pyarrow's S3, given the same options) as
    schemalab reads their local twins, at the latest snapshot and at every older one."""
    import pypaimon
    from test_interop_pypaimon import theirs

    for table in SCENARIOS:
        remote, local = replays("s3", table), replays("local", table)
        catalog = pypaimon.CatalogFactory.create({"warehouse": remote.warehouse.path,
                                                  **_options(s3)})
        here = local.warehouse.table(table)
        py = catalog.get_table(f"default.{table}")
        assert theirs(py) == _read(here.read()), table
        for snap in here.snapshots:
            travelled = py.copy({"scan.snapshot-id": str(snap.id)})
            assert theirs(travelled) == _read(here.read(snapshot_id=snap.id)), \
                f"{table} snapshot {snap.id}"


def test_user_code_reads_s3_and_s3a_uris_alike(spark: Any, s3: Any) -> None:
    """``fs.s3.impl`` maps s3:// onto S3A: a user's own ``spark.read`` of a table's data
    files by the s3:// URIs schemalab reports reads what schemalab's s3a:// read does."""
    wh = sl.Warehouse(s3.uri("user-wh"), spark=spark, options=_options(s3))
    wh.sql("CREATE TABLE t (a INT, b STRING); INSERT INTO t VALUES (1, 'x'), (2, 'y')")
    t = wh.table("t")
    paths = [f.path for f in t.data_files(t.latest_snapshot)]
    assert paths and all(p.startswith("s3://") for p in paths)
    by_s3 = spark.read.parquet(*paths).select("a", "b")
    by_s3a = spark.read.parquet(*(fileio.spark_uri(p) for p in paths)).select("a", "b")
    assert _read(by_s3) == _read(by_s3a) == _read(t.read()) == (["a", "b"], [(1, "x"),
                                                                            (2, "y")])


def test_s3a_conf_sets_what_the_readme_recipe_sets(s3: Any) -> None:
    """The one-call configuration and the README's explicit builder set the same keys to the
    same values for the same store."""
    recipe = _readme_recipe()
    keys = dict(re.findall(r'\.config\("([^"]+)",\s*\n?\s*([^)]+)\)', recipe))
    env = {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing"}
    recipe_values = {k: eval(v, {"os": type("os", (), {"environ": env})})  # noqa: S307
                     for k, v in keys.items()}
    assert recipe_values == s3a_conf(_options(s3))
    assert recipe_values["spark.jars.packages"] == f"{HADOOP_AWS}:{hadoop_version()}"


# ---- the README's recipe, verbatim, in a fresh interpreter ----------------------------------


def _readme_recipe() -> str:
    """The Python block of the README that follows the marker naming this test."""
    text = (REPO / "README.md").read_text()
    marker = "<!-- tested by tests/test_spark_on_s3.py: the S3A recipe -->"
    assert marker in text, "README.md lost the S3A recipe's marker"
    block = text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return block


_AFTER_RECIPE = """
import json
t = wh.table("orders")
print("RESULT " + json.dumps({
    "rows": sorted(tuple(r) for r in wh.sql("SELECT * FROM orders").collect()),
    "files": [f.path for f in t.data_files(t.latest_snapshot)],
    "packages": spark.conf.get("spark.jars.packages")}))
"""


def test_readme_recipe_runs_verbatim(s3: Any, spark: Any, tmp_path: Path) -> None:
    """The README's builder recipe and its example, unchanged, in a fresh interpreter with
    the standard AWS_* environment: the rows come back through Spark's S3A, the data files
    are in the bucket, and a local warehouse given the same statements holds the same rows."""
    recipe = _readme_recipe()
    bucket = re.search(r'Warehouse\("s3://([^/"]+)/', recipe)
    assert bucket is not None
    s3.client().create_bucket(Bucket=bucket.group(1))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "SPARK_", "PYSPARK_"))}
    env.update(s3.env, PYSPARK_SUBMIT_ARGS=LOOPBACK_SUBMIT_ARGS)
    out = subprocess.run([sys.executable, "-c", recipe + _AFTER_RECIPE], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    got = json.loads(out.stdout.split("RESULT ", 1)[1])
    assert got["packages"] == f"{HADOOP_AWS}:{hadoop_version()}"
    assert got["files"] and all(f.startswith(f"s3://{bucket.group(1)}/") for f in got["files"])
    stored = s3.client().list_objects_v2(Bucket=bucket.group(1))["Contents"]
    assert {f.split("/", 3)[3] for f in got["files"]} <= {o["Key"] for o in stored}
    statements = re.findall(r'wh\.sql\("([^"]+)"\)', recipe)
    local = sl.Warehouse(tmp_path / "local", spark=spark)
    for stmt in statements:
        result = local.sql(stmt)
    assert [list(r) for r in sorted(tuple(r) for r in result.collect())] == got["rows"]
    assert not (tmp_path / "s3:").exists()


# ---- a fresh machine: the connector is fetched, or the error says which -------------------


_FETCH = """
import sys
import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.spark import s3a_conf
try:
    sl.local_spark(extra_conf=s3a_conf(ivy_dir=sys.argv[1]))
except SchemaLabError as e:
    print("RULE", e.rule)
    print("MESSAGE", e.message)
else:
    print("STARTED")
"""


def test_unreachable_maven_central_is_a_clear_error_naming_the_package(tmp_path: Path) -> None:
    """A machine that cannot reach Maven Central (every HTTP(S) connection goes to a closed
    port on 127.0.0.1) with an empty Ivy cache: the session does not start, and the error
    names the package, the cache and what to do, not 'Java gateway process exited'."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]  # closed again once the with-block ends
    proxy = " ".join(f"-D{p}.proxyHost=127.0.0.1 -D{p}.proxyPort={closed}"
                     for p in ("http", "https"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "SPARK_", "PYSPARK_"))}
    env.update(JAVA_TOOL_OPTIONS=proxy, HOME=str(tmp_path))  # no ~/.m2 to fall back on
    ivy = tmp_path / "empty-ivy"
    out = subprocess.run([sys.executable, "-c", _FETCH, str(ivy)], capture_output=True,
                         text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]
    assert "STARTED" not in out.stdout, "Spark started although Maven Central was unreachable"
    assert "RULE spark-packages" in out.stdout, out.stdout + out.stderr[-3000:]
    message = out.stdout.split("MESSAGE ", 1)[1]
    assert f"{HADOOP_AWS}:{hadoop_version()}" in message
    assert "Maven Central" in message and str(ivy) in message
    assert "unresolved dependency" in message
    # said before the download started, and Spark's own report shown once it failed
    assert f"schemalab: Spark fetches {HADOOP_AWS}:{hadoop_version()}" in out.stderr
    assert "UNRESOLVED DEPENDENCIES" in out.stderr
