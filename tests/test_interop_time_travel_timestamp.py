"""Java judges ``TIMESTAMP AS OF`` on tables schemalab wrote (issue 24): at a millisecond
before, at and after every commit, the engine picks the same snapshot as schemalab and reads
the same columns and rows; before the first snapshot both refuse with the same message.

* Java Iceberg 1.12: ``SnapshotUtil.snapshotIdAsOfTime`` (and ``TableScan.asOfTime``) on
  the table ``HadoopCatalog`` opens — ALTERs and a v2 DELETE between commits, a branch
  commit (no snapshot-log entry, so never a time-travel target);
* Java Paimon 2.0: a read with ``scan.timestamp-millis`` (``TimeTravelUtil
  .tryTravelToSnapshot``) — ALTERs between commits, an expired snapshot kept by a tag (tags
  do not count), and a branch read as of its own snapshots' times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.canonical import canonical_rows
from oracles.java_iceberg import JavaIceberg
from oracles.java_paimon import JavaPaimon, JavaPaimonError
from test_interop_java_iceberg import comparable
from test_time_travel_timestamp import literal

import schemalab as sl
from schemalab.errors import SchemaLabError

pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark


def around(times: list[int]) -> list[int]:
    """A millisecond before, at and after each commit time."""
    return sorted({t + d for t in times for d in (-1, 0, 1)})


def test_java_iceberg_travels_to_the_same_snapshot(tmp_path: Path, spark: Any,
                                                   java_iceberg: JavaIceberg) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, a STRING); INSERT INTO t VALUES (1, 'x');"
           "ALTER TABLE t ADD COLUMN b INT; INSERT INTO t VALUES (2, 'y', 20);"
           "ALTER TABLE t RENAME COLUMN a TO aa; INSERT INTO t VALUES (3, 'z', 30);"
           "DELETE FROM t WHERE id = 1; ALTER TABLE t CREATE BRANCH dev;"
           "INSERT INTO t.branch_dev VALUES (4, 'w', 40)")
    t = wh.table("t")
    assert len(t.metadata.snapshot_log) == 4 and len(t.snapshots) == 5
    compared = refused = 0
    for ms in around([s.timestamp_ms for s in t.snapshots]):
        sql = f"SELECT * FROM t TIMESTAMP AS OF {literal(spark, ms)}"
        try:
            theirs = java_iceberg.as_of_time(tmp_path, "default.t", ms)
        except JavaPaimonError as java:
            assert java.java_class == "java.lang.IllegalArgumentException", java
            with pytest.raises(SchemaLabError) as ours:
                wh.sql(sql)
            assert ours.value.rule == "snapshot-as-of-time"
            assert java.message in str(ours.value)  # "Cannot find a snapshot older than .."
            refused += 1
            continue
        assert theirs["snapshot_id"] == theirs["scan_snapshot_id"]
        assert t.snapshot_id_of(t.snapshot_as_of(ms)) == theirs["snapshot_id"], ms
        columns, _, rows = canonical_frame(wh.sql(sql))
        assert columns == theirs["columns"], ms
        assert comparable(rows) == comparable(theirs["rows"]), ms
        compared += 1
    assert refused == 1 and compared == 14


def _java_paimon(java: JavaPaimon, warehouse: Path, table: str, ms: int
                 ) -> tuple[int, dict[str, Any]]:
    options = {"scan.timestamp-millis": str(ms)}
    sid = java.time_travel(warehouse, table, options)
    read = java.read(warehouse, table, options=options)
    return sid, {"columns": read["columns"], "rows": read["rows"]}


def test_java_paimon_travels_to_the_same_snapshot(tmp_path: Path, spark: Any,
                                                  java_paimon_2: JavaPaimon) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE t (id INT, a STRING); INSERT INTO t VALUES (1, 'x');
              CALL sys.create_tag(table => 't', tag => 'v1');
              ALTER TABLE t ADD COLUMN b INT; INSERT INTO t VALUES (2, 'y', 20);
              CALL sys.create_branch(table => 't', branch => 'dev', tag => 'v1');
              INSERT INTO `t$branch_dev` VALUES (5, 'v');
              ALTER TABLE t RENAME COLUMN a TO aa; INSERT INTO t VALUES (3, 'z', 30)""")
    times = [s.time_millis for s in wh.table("t").snapshots]
    branch_times = [s.time_millis for s in wh.table("t$branch_dev").snapshots]
    # snapshot 1 expires; tag v1 keeps it, but a time travel by time sees snapshots only
    wh.sql("CALL sys.expire_snapshots(table => 't', retain_max => 2, retain_min => 1)")
    assert [s.id for s in wh.table("t").snapshots] == [2, 3]
    compared = refused = 0
    for table, ms in [*(("t", ms) for ms in around(times)),
                      *(("t$branch_dev", ms) for ms in around(branch_times))]:
        sql = f"SELECT * FROM `{table}` TIMESTAMP AS OF {literal(spark, ms)}"
        try:
            sid, theirs = _java_paimon(java_paimon_2, tmp_path, table, ms)
        except JavaPaimonError as java:
            assert "There is currently no snapshot earlier than or equal to timestamp" \
                in java.text(), java
            with pytest.raises(SchemaLabError) as ours:
                wh.sql(sql)
            assert ours.value.rule == "snapshot-as-of-time"
            assert java.message in str(ours.value), (java.message, str(ours.value))
            refused += 1
            continue
        t = wh.table(table)
        assert t.snapshot_as_of(ms).id == sid, (table, ms)
        df = wh.sql(sql)
        assert {"columns": list(df.columns), "rows": canonical_rows(df)} == theirs, (table, ms)
        compared += 1
    # t: snapshot 1's three times and the one before snapshot 2 are refused; the branch's
    # first snapshot is the tag's (snapshot 1's time): only the millisecond before it is
    assert (refused, compared) == (5, 10)
