"""SQL on Iceberg tables schemalab writes: time travel by ``VERSION AS OF`` (snapshot id,
tag) and Iceberg's metadata tables as its Spark integration names them (``t.snapshots``),
beside Paimon's spelling (``t$history``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemalab as sl


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> sl.Warehouse:
    wh = sl.Warehouse(str(tmp_path_factory.mktemp("iceberg-sql") / "wh"), spark=spark,
                      format="iceberg")
    wh.sql("CREATE TABLE t (id INT, a STRING); INSERT INTO t VALUES (1, 'x');"
           "ALTER TABLE t ADD COLUMN b INT; INSERT INTO t VALUES (2, 'y', 3)")
    return wh


def test_version_as_of_a_snapshot_reads_it_in_its_schema(wh: sl.Warehouse) -> None:
    first = wh.table("t").snapshots[0].snapshot_id
    rows = wh.sql(f"SELECT * FROM t VERSION AS OF {first}").collect()
    assert [tuple(r) for r in rows] == [(1, "x")]
    assert sorted(tuple(r) for r in wh.sql("SELECT * FROM t").collect()) == [
        (1, "x", None), (2, "y", 3)]


def test_metadata_tables_in_both_spellings(wh: sl.Warehouse) -> None:
    t = wh.table("t")
    snaps = wh.sql("SELECT snapshot_id, parent_id, operation FROM t.snapshots "
                   "ORDER BY committed_at").collect()
    assert [r[0] for r in snaps] == [s.snapshot_id for s in t.snapshots]
    assert [r[2] for r in snaps] == ["append", "append"]
    assert wh.sql("SELECT count(*) FROM `t$history`").collect()[0][0] == 2


def test_a_name_that_is_no_table_is_still_spark_s_error(wh: sl.Warehouse,
                                                        tmp_path: Path) -> None:
    with pytest.raises(Exception) as e:
        wh.sql("SELECT * FROM nosuch.snapshots").collect()
    assert "nosuch" in str(e.value)
