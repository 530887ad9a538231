"""An Iceberg warehouse on ``s3://`` (moto's server on 127.0.0.1) written end to end: Spark
writes the data files through Hadoop's S3A connector, schemalab the manifests and each
``v<N>.metadata.json`` with a create-only PUT. CREATE / INSERT / ALTER / INSERT read the same
as on a local warehouse at every snapshot, pyiceberg (its S3 FileIO on the same endpoint)
reads every snapshot equal, and two writers inserting at once lose no commit.

Opt-in with tests/test_spark_on_s3.py: ``make test-cluster`` (its session has hadoop-aws).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from test_spark_on_s3 import _options, spark  # noqa: F401 - the S3A session fixture

import schemalab as sl

pytest_plugins = ["infra.fixtures"]

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(os.environ.get("SCHEMALAB_CLUSTER") != "1",
                       reason="starts moto and a Spark with hadoop-aws: run `make test-cluster`"),
]

SCRIPT = [
    "CREATE TABLE t (id INT, name STRING, d DECIMAL(9, 2), s STRUCT<x: INT, y: STRING>) "
    "USING iceberg PARTITIONED BY (bucket(4, name), truncate(10, d)) "
    "TBLPROPERTIES ('format-version' = '3')",
    "INSERT INTO t VALUES (1, 'a', 1.25, named_struct('x', 1, 'y', 'p')), "
    "(2, 'b', -3.50, NULL), (3, NULL, NULL, named_struct('x', 3, 'y', NULL))",
    "ALTER TABLE t ADD COLUMN note STRING DEFAULT 'n/a'",
    "ALTER TABLE t ALTER COLUMN s.y FIRST",
    "ALTER TABLE t ALTER COLUMN id TYPE BIGINT",
    "INSERT INTO t (id, name, d, s) VALUES (4, 'über', 99.99, named_struct('y', 'q', 'x', 4))",
    "ALTER TABLE t ADD PARTITION FIELD truncate(2, note)",
    "INSERT INTO t VALUES (5, 'e', 0.01, named_struct('y', 'r', 'x', 5), 'five')",
]


def _pyiceberg_rows(s3: Any, metadata_file: str, snapshot_id: int) -> list[str]:
    from infra.s3 import ACCESS_KEY, REGION, SECRET_KEY
    from pyiceberg.table import StaticTable
    from test_iceberg_write import _rows

    t = StaticTable.from_metadata(metadata_file, properties={
        "s3.endpoint": s3.endpoint, "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY, "s3.region": REGION})
    return _rows(t.scan(snapshot_id=snapshot_id).to_arrow().to_pylist())


def test_iceberg_statements_on_s3(spark: Any, s3: Any, tmp_path: Path,  # noqa: F811
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from test_iceberg_write import ours

    monkeypatch.chdir(tmp_path)
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    remote = sl.Warehouse(s3.uri("ice-spark"), spark=spark, format="iceberg",
                          options=_options(s3))
    local = sl.Warehouse(tmp_path / "local", spark=spark, format="iceberg")
    for statement in SCRIPT:
        remote.sql(statement)
        local.sql(statement)
    there, here = remote.table("t"), local.table("t")
    # one commit per statement: v1 (CREATE) .. v8
    assert there.metadata_file == s3.uri("ice-spark/default/t/metadata/v8.metadata.json")
    assert here.metadata_file.endswith("/v8.metadata.json")
    assert len(there.snapshots) == len(here.snapshots) == 3
    for a, b in zip(there.snapshots, here.snapshots, strict=True):
        assert ours(there, a.snapshot_id) == ours(here, b.snapshot_id)
        assert _pyiceberg_rows(s3, there.metadata_file, a.snapshot_id) == \
            ours(there, a.snapshot_id)
    assert all(f.path.startswith(s3.uri("ice-spark/default/t/data/"))
               for f in there.data_files())
    assert not any(p.name.startswith("s3") for p in tmp_path.iterdir())


def test_two_writers_inserting_on_s3_lose_no_commit(spark: Any, s3: Any,  # noqa: F811
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    wh = sl.Warehouse(s3.uri("ice-spark-race"), spark=spark, format="iceberg",
                      options=_options(s3))
    wh.sql("CREATE TABLE t (w INT, i INT)")
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            t = sl.Warehouse(s3.uri("ice-spark-race"), spark=spark, format="iceberg",
                             options=_options(s3)).table("t")
            for i in range(3):
                t.insert([(w, i)])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    t = wh.table("t")
    assert sorted(tuple(r) for r in t.read().collect()) == [(w, i) for w in range(2)
                                                            for i in range(3)]
    assert len(t.snapshots) == 6
    assert _pyiceberg_rows(s3, t.metadata_file, t.snapshots[-1].snapshot_id) == ours_rows(t)


def ours_rows(t: Any) -> list[str]:
    from test_iceberg_write import ours

    return ours(t, None)
