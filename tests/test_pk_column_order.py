"""Primary-key tables whose key columns are not the leading columns (issue 21, item 3).

The merge read looks a base file's keys up among the newer files' keys with a join on the
key columns' names, which puts those columns first; the merge then unioned that frame with
others *by position*. Wherever the key columns (primary key, then partition keys) were not
the schema's first columns in that order — ``ALTER COLUMN amt FIRST`` on a table
partitioned by a STRING column, a key declared ``(dt, id)`` over columns ``(id, dt)``, or a
key column after a value column — a read, DELETE or compaction either failed
(``CAST_INVALID_INPUT: The value 'p1' of the type "STRING" cannot be cast to "BIGINT"``) or,
where the swapped columns had one type, returned one column's values under the other's name.

Each case here failed (or read swapped values) before the fix: schemalab's own history read
at every snapshot, DELETE and compaction; the same history written by Java Paimon 1.0 read
equal by schemalab; and Java reading what schemalab wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oracles.compare import assert_equal_every_snapshot, ours
from oracles.java_paimon import JavaPaimon, move_column

import schemalab as sl

pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark

CREATE = ("CREATE TABLE t (id BIGINT, dt STRING, amt INT, PRIMARY KEY (dt, id) NOT ENFORCED) "
          "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '1')")
# the rows at snapshots 1..5 (read in each snapshot's own schema)
EXPECTED = {
    1: (["id", "dt", "amt"], [[1, "p1", 10], [2, "p1", 20], [3, "p2", 30]]),
    2: (["amt", "id", "dt"], [[11, 1, "p1"], [20, 2, "p1"], [30, 3, "p2"], [40, 4, "p2"]]),
    3: (["amt", "id", "dt"], [[11, 1, "p1"], [21, 2, "p1"], [30, 3, "p2"], [40, 4, "p2"]]),
    4: (["amt", "id", "dt"], [[21, 2, "p1"], [30, 3, "p2"], [40, 4, "p2"]]),
    5: (["amt", "id", "dt"], [[21, 2, "p1"], [30, 3, "p2"], [40, 4, "p2"]]),
}


@pytest.fixture()
def w(tmp_path: Path) -> Path:
    return tmp_path / "wh"


def _assert_expected(w: Path, spark: Any, last: int) -> None:
    for sid in range(1, last + 1):
        got = ours(w, "t", sid, spark)
        assert (got["columns"], got["rows"]) == EXPECTED[sid], f"snapshot {sid}"


def test_moved_column_before_string_partition_key(w: Path, spark: Any) -> None:
    wh = sl.Warehouse(w, spark=spark)
    wh.sql(CREATE)
    wh.sql("INSERT INTO t VALUES (1, 'p1', 10), (2, 'p1', 20), (3, 'p2', 30)")
    wh.sql("ALTER TABLE t ALTER COLUMN amt FIRST")
    wh.sql("INSERT INTO t VALUES (11, 1, 'p1'), (40, 4, 'p2')")
    wh.sql("INSERT INTO t VALUES (21, 2, 'p1')")
    _assert_expected(w, spark, 3)
    wh.sql("DELETE FROM t WHERE dt = 'p1' AND id = 1")
    wh.sql("CALL sys.compact(table => 't')")
    _assert_expected(w, spark, 5)
    t = wh.table("t")
    assert t.snapshots[-1].commit_kind == "COMPACT"
    # a DELETE and a merge after the compaction (one compacted file, one new file)
    wh.sql("INSERT INTO t VALUES (22, 2, 'p1')")
    wh.sql("DELETE FROM t WHERE dt = 'p2' AND id = 3")
    assert ours(w, "t", None, spark)["rows"] == [[22, 2, "p1"], [40, 4, "p2"]]


def test_key_declared_in_another_order_than_the_columns(w: Path, spark: Any) -> None:
    """No ALTER at all: the key (dt, id) over columns (id, dt, amt)."""
    wh = sl.Warehouse(w, spark=spark)
    wh.sql(CREATE)
    wh.sql("INSERT INTO t VALUES (1, 'p1', 10), (2, 'p1', 20)")
    wh.sql("INSERT INTO t VALUES (1, 'p1', 11)")
    assert ours(w, "t", None, spark)["rows"] == [[1, "p1", 11], [2, "p1", 20]]


def test_key_after_a_value_column_of_the_same_type_is_not_swapped(w: Path, spark: Any) -> None:
    """Where the swapped columns share a type nothing failed: the values came back under the
    other column's name."""
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("CREATE TABLE t (v STRING, k STRING, PRIMARY KEY (k) NOT ENFORCED) "
           "TBLPROPERTIES ('bucket' = '1')")
    wh.sql("INSERT INTO t VALUES ('v1', 'a'), ('v2', 'b')")
    wh.sql("INSERT INTO t VALUES ('v3', 'a')")
    assert ours(w, "t", None, spark)["rows"] == [["v2", "b"], ["v3", "a"]]
    wh.sql("CALL sys.compact(table => 't')")
    assert ours(w, "t", None, spark)["rows"] == [["v2", "b"], ["v3", "a"]]


def test_java_reads_schemalabs_history(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    wh = sl.Warehouse(w, spark=spark)
    wh.sql(CREATE)
    wh.sql("INSERT INTO t VALUES (1, 'p1', 10), (2, 'p1', 20), (3, 'p2', 30)")
    wh.sql("ALTER TABLE t ALTER COLUMN amt FIRST")
    wh.sql("INSERT INTO t VALUES (11, 1, 'p1'), (40, 4, 'p2')")
    wh.sql("INSERT INTO t VALUES (21, 2, 'p1')")
    wh.sql("DELETE FROM t WHERE dt = 'p1' AND id = 1")
    wh.sql("CALL sys.compact(table => 't')")
    assert assert_equal_every_snapshot(java_paimon, w, "t", spark) == 5


def test_java_written_history_read_deleted_and_compacted(java_paimon: JavaPaimon, w: Path,
                                                         spark: Any) -> None:
    """Java Paimon 1.0 writes the same history (its own -D for the delete, its own full
    compaction); schemalab reads it equal at every snapshot, then deletes and compacts it
    itself, and Java reads that equal too."""
    j = java_paimon
    j.create_table(w, "t", [("id", "BIGINT NOT NULL"), ("dt", "STRING NOT NULL"),
                            ("amt", "INT")], partition_keys=["dt"], primary_keys=["dt", "id"],
                   options={"bucket": "1"})
    j.write(w, "t", [[1, "p1", 10], [2, "p1", 20], [3, "p2", 30]])
    j.alter(w, "t", move_column("amt", first=True))
    j.write(w, "t", [[11, 1, "p1"], [40, 4, "p2"]])
    j.write(w, "t", [[21, 2, "p1"]])
    j.write(w, "t", [[None, 1, "p1"]], row_kinds=["-D"])
    j.compact(w, "t")
    assert assert_equal_every_snapshot(j, w, "t", spark) == 5
    _assert_expected(w, spark, 5)
    j.write(w, "t", [[22, 2, "p1"], [50, 5, "p1"]])
    assert assert_equal_every_snapshot(j, w, "t", spark) == 6
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("DELETE FROM t WHERE dt = 'p1' AND id = 5")
    wh.sql("CALL sys.compact(table => 't')")
    assert ours(w, "t", None, spark)["rows"] == [[22, 2, "p1"], [30, 3, "p2"], [40, 4, "p2"]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 8
