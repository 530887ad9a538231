"""Merge engines against the real engines, both ways (issue 12).

1. Java Paimon 1.0 writes tables of each merge engine, with retractions and ALTERs between
   commits; schemalab's read equals Java's at every snapshot, and where Java's read fails
   (a delete that partial-update or an aggregate cannot take) ours fails with Java's message.
2. schemalab writes tables of each merge engine (its commits merged by the table's merge
   function, as Paimon's write buffer merges them); Java Paimon and pypaimon read them as we
   do, at every snapshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oracles.compare import assert_equal_every_snapshot, java_read, ours
from oracles.java_paimon import JavaPaimon, JavaPaimonError, add_column, rename_column
from test_interop_pypaimon import assert_reads_agree

import schemalab as sl

pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark


@pytest.fixture()
def w(tmp_path: Path) -> Path:
    return tmp_path / "wh"


# --------------------------------------------------------------------------------------------
# 1. Java writes, we read
# --------------------------------------------------------------------------------------------


def test_aggregation_retractions_and_options(java_paimon: JavaPaimon, w: Path,
                                             spark: Any) -> None:
    """-U/-D versions retract (sum subtracts, last_value empties, last_non_null_value empties
    when it names a value); the default function, a listagg delimiter, ignore-retract."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("s", "BIGINT"), ("lv", "STRING"),
                            ("lnn", "STRING"), ("mx", "INT"), ("la", "STRING"),
                            ("d", "DOUBLE")],
                   primary_keys=["id"], options={
                       "bucket": "2", "merge-engine": "aggregation",
                       "fields.default-aggregate-function": "sum",
                       "fields.lv.aggregate-function": "last_value",
                       "fields.lnn.aggregate-function": "last_non_null_value",
                       "fields.mx.aggregate-function": "max",
                       "fields.mx.ignore-retract": "true",
                       "fields.la.aggregate-function": "listagg",
                       "fields.la.list-agg-delimiter": "|",
                       "fields.la.ignore-retract": "true"})
    j.write(w, "t", [[1, 10, "a", "a", 5, "x", "F:1.5"], [2, 1, "b", "b", 1, "y", None],
                     [3, 7, "c", "c", 3, "z", "F:0.25"]])
    j.write(w, "t", [[1, 3, "a2", None, 9, "x2", "F:2.0"], [2, 1, "b", "b", 1, "y", None],
                     [3, 7, "c", None, 3, "z", "F:0.25"]],
            row_kinds=["+I", "-U", "-D"])
    j.alter(w, "t", add_column("extra", "INT"), rename_column("d", "dd"))
    j.write(w, "t", [[2, 5, None, None, 0, None, "F:3.0", 4], [4, None, "n", None, None,
                                                                 None, None, None]])
    assert java_read(j, w, "t")["rows"] == [
        [1, 13, "a2", "a", 9, "x|x2", "F:3.5", None], [2, 5, None, None, 1, "y", "F:3.0", 4],
        [3, 0, None, "c", 3, "z", "F:0.0", None], [4, None, "n", None, None, None, None, None]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3


def test_aggregation_retraction_a_function_cannot_take(java_paimon: JavaPaimon, w: Path,
                                                       spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("mx", "INT")], primary_keys=["id"],
                   options={"bucket": "1", "merge-engine": "aggregation",
                            "fields.mx.aggregate-function": "max"})
    j.write(w, "t", [[1, 5]])
    j.write(w, "t", [[1, 5]], row_kinds=["-D"])
    with pytest.raises(JavaPaimonError, match="does not support retraction"):
        java_read(j, w, "t")
    with pytest.raises(Exception, match="Aggregate function 'max' does not support retraction"):
        ours(w, "t", spark=spark)
    assert java_read(j, w, "t", 1)["rows"] == ours(w, "t", 1, spark)["rows"] == [[1, 5]]


def test_partial_update_delete_without_options_fails_both(java_paimon: JavaPaimon, w: Path,
                                                          spark: Any) -> None:
    """A -D meeting other versions: Java refuses it, and so do we; a -D alone is just not
    read (Paimon's reducer returns a lone version as it is)."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("a", "STRING")], primary_keys=["id"],
                   options={"bucket": "1", "merge-engine": "partial-update"})
    j.write(w, "t", [[1, "a"]])
    j.write(w, "t", [[1, None], [2, None]], row_kinds=["-D", "-D"])
    with pytest.raises(JavaPaimonError, match="Partial update can not accept delete records"):
        java_read(j, w, "t")
    with pytest.raises(Exception, match="Partial update can not accept delete records"):
        ours(w, "t", spark=spark)


def test_partial_update_remove_record_on_delete(java_paimon: JavaPaimon, w: Path,
                                                spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("a", "STRING"), ("b", "INT")],
                   primary_keys=["id"], options={
                       "bucket": "1", "merge-engine": "partial-update",
                       "partial-update.remove-record-on-delete": "true"})
    j.write(w, "t", [[1, "a", None], [2, "b", None], [3, None, 3]])
    j.write(w, "t", [[1, None, 10], [2, None, None], [3, None, None]],
            row_kinds=["+I", "-D", "-U"])
    assert java_read(j, w, "t")["rows"] == [[1, "a", 10], [3, None, 3]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 2


def test_partial_update_sequence_group_retract_and_aggregate(java_paimon: JavaPaimon, w: Path,
                                                             spark: Any) -> None:
    """A -D newer than a group's sequence empties the group's fields (an aggregated field is
    retracted); a group field with an aggregate sums while the group moves on; an older
    version updates nothing but aggregates reversed."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("a", "STRING"), ("s", "BIGINT"),
                            ("g1", "INT"), ("b", "STRING"), ("g2", "INT")],
                   primary_keys=["id"], options={
                       "bucket": "1", "merge-engine": "partial-update",
                       "fields.g1.sequence-group": "a,s", "fields.s.aggregate-function": "sum",
                       "fields.g2.sequence-group": "b"})
    j.write(w, "t", [[1, "a1", 1, 1, "b1", 1], [2, "x", 5, 5, "y", 5]])
    j.write(w, "t", [[1, "a0", 10, 0, "b2", 2], [2, "x", 5, 6, None, None]],
            row_kinds=["+I", "-D"])
    j.write(w, "t", [[1, None, 100, None, None, 3], [2, "z", 1, 7, "w", 7]])
    assert java_read(j, w, "t")["rows"] == [[1, "a1", 11, 1, None, 3], [2, "z", 1, 7, "w", 7]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3


def test_sequence_field_nulls_and_two_fields(java_paimon: JavaPaimon, w: Path,
                                             spark: Any) -> None:
    """Sequence values compare NULL first; two sequence fields compare in order."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("v", "STRING"), ("hi", "INT"),
                            ("lo", "INT")], primary_keys=["id"],
                   options={"bucket": "2", "sequence.field": "hi,lo"})
    j.write(w, "t", [[1, "a", 1, 5], [2, "b", None, None], [3, "c", 2, None]])
    j.write(w, "t", [[1, "older", 1, 4], [2, "newer", None, 1], [3, "newer", 2, 0]])
    j.write(w, "t", [[1, "newest", 2, None], [2, "null-again", None, None]])
    assert java_read(j, w, "t")["rows"] == [[1, "newest", 2, None], [2, "newer", None, 1],
                                            [3, "newer", 2, 0]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3


def test_deduplicate_update_before_and_after(java_paimon: JavaPaimon, w: Path,
                                             spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("v", "STRING")], primary_keys=["id"],
                   options={"bucket": "2"})
    j.write(w, "t", [[i, f"v{i}"] for i in range(6)])
    j.write(w, "t", [[1, "v1"], [1, "v1b"], [2, "v2"], [5, None]],
            row_kinds=["-U", "+U", "-U", "-D"])
    j.write(w, "t", [[2, "back"]])
    assert java_read(j, w, "t")["rows"] == [[0, "v0"], [1, "v1b"], [2, "back"], [3, "v3"],
                                            [4, "v4"]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3


# --------------------------------------------------------------------------------------------
# 2. We write, Java Paimon and pypaimon read
# --------------------------------------------------------------------------------------------


def _ours_equal_java_and_pypaimon(j: JavaPaimon, w: Path, spark: Any, table: str,
                                  pypaimon: bool = True) -> None:
    assert assert_equal_every_snapshot(j, w, table, spark) >= 2
    if pypaimon:
        t = sl.Warehouse(w, spark=spark).table(table)
        assert_reads_agree(t, w, f"default.{table}")


def test_our_partial_update_table_reads_the_same_in_java_and_pypaimon(
        java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """Rows of one commit are merged as Paimon's write buffer merges them (key 1's two
    partial rows in the first INSERT become one), then across commits by the reader."""
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("""CREATE TABLE pu (id INT NOT NULL, a STRING, b INT, c DOUBLE,
                               PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'partial-update');
              INSERT INTO pu VALUES (1, 'a1', NULL, NULL), (1, NULL, 10, NULL), (2, 'a2', 2, NULL);
              INSERT INTO pu VALUES (2, NULL, NULL, 2.5), (3, NULL, 3, NULL);
              ALTER TABLE pu RENAME COLUMN a TO label;
              ALTER TABLE pu ALTER COLUMN b TYPE BIGINT;
              ALTER TABLE pu ADD COLUMN d STRING;
              INSERT INTO pu VALUES (1, NULL, 5000000000, NULL, 'd1'),
                                    (3, 'c3', NULL, NULL, NULL)""")
    assert java_read(java_paimon, w, "pu")["rows"] == [
        [1, "a1", 5000000000, None, "d1"], [2, "a2", 2, "F:2.5", None], [3, "c3", 3, None, None]]
    _ours_equal_java_and_pypaimon(java_paimon, w, spark, "pu")


def test_our_aggregation_table_reads_the_same_in_java_and_pypaimon(
        java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("""CREATE TABLE agg (id INT NOT NULL, total BIGINT, top INT, tags STRING, seen BOOLEAN,
                                last STRING, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'aggregation',
                             'fields.total.aggregate-function' = 'sum',
                             'fields.top.aggregate-function' = 'max',
                             'fields.tags.aggregate-function' = 'listagg',
                             'fields.seen.aggregate-function' = 'bool_or');
              INSERT INTO agg VALUES (1, 1, 5, 'x', false, 'l1'), (1, 2, 7, 'y', false, NULL),
                                     (2, 10, 1, NULL, true, 'l2');
              ALTER TABLE agg ALTER COLUMN top TYPE BIGINT;
              INSERT INTO agg VALUES (1, 3, 6, 'z', true, NULL), (3, 1, 1, 'w', NULL, 'l3')""")
    assert java_read(java_paimon, w, "agg")["rows"] == [
        [1, 6, 7, "x,y,z", True, "l1"], [2, 10, 1, None, True, "l2"], [3, 1, 1, "w", None, "l3"]]
    _ours_equal_java_and_pypaimon(java_paimon, w, spark, "agg")


@pytest.mark.parametrize("options", [
    "'merge-engine' = 'partial-update'",
    "'merge-engine' = 'aggregation', 'fields.b.aggregate-function' = 'last_value'",
])
def test_overlapping_commits_without_nulls_read_the_same_in_java_and_pypaimon(
        java_paimon: JavaPaimon, w: Path, spark: Any, options: str) -> None:
    """Commits over the same keys with every value set (aggregation's last_value column
    with NULLs too): schemalab reads each key's newest version without merging
    (``superseded``, see engine/merge/superseded.py ``newest_wins``), Java merges."""
    from schemalab.engine.merge.keyed_read import merge_input, plans_of

    wh = sl.Warehouse(w, spark=spark)
    wh.sql(f"""CREATE TABLE o (id INT NOT NULL, a STRING, b INT, PRIMARY KEY (id) NOT ENFORCED)
               TBLPROPERTIES ('bucket' = '2', {options})""")
    for c in range(4):
        b = "NULL" if "last_value" in options and c == 3 else str(c)
        wh.sql("INSERT INTO o VALUES " + ", ".join(
            f"({k}, 'c{c}k{k}', {b})" for k in range(c, 40, 1 + c % 3)))
        if c == 1:
            wh.sql("ALTER TABLE o ALTER COLUMN b TYPE BIGINT")
    plan = wh.table("o").read_plan()
    assert {p.strategy for p in plans_of(plan, merge_input(plan).opts)} == {"superseded"}
    _ours_equal_java_and_pypaimon(java_paimon, w, spark, "o")


def test_our_sequence_field_and_rowkind_tables_read_the_same_in_java(
        java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """``sequence.field`` orders the rows of one commit too; ``rowkind.field`` gives each
    row's kind (its -D rows delete)."""
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("""CREATE TABLE sq (id INT NOT NULL, v STRING, ts BIGINT, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '1', 'sequence.field' = 'ts');
              INSERT INTO sq VALUES (1, 'new', 10), (1, 'old', 5), (2, 'b', NULL);
              INSERT INTO sq VALUES (1, 'late-but-old', 7), (2, 'c', 1);
              CREATE TABLE rk (id INT NOT NULL, v STRING, op STRING, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '2', 'rowkind.field' = 'op');
              INSERT INTO rk VALUES (1, 'a', '+I'), (2, 'b', '+I'), (3, 'c', '+I');
              INSERT INTO rk VALUES (2, 'b', '-D'), (3, 'c2', '+U')""")
    assert java_read(java_paimon, w, "sq")["rows"] == [[1, "new", 10], [2, "c", 1]]
    assert java_read(java_paimon, w, "rk")["rows"] == [[1, "a", "+I"], [3, "c2", "+U"]]
    assert assert_equal_every_snapshot(java_paimon, w, "sq", spark) == 2
    assert assert_equal_every_snapshot(java_paimon, w, "rk", spark) == 2
    with pytest.raises(Exception, match="holds 'X', which is not a row kind"):
        wh.sql("INSERT INTO rk VALUES (4, 'd', 'X')")


def test_delete_on_an_ignore_delete_table_writes_nothing(spark: Any, tmp_path: Path) -> None:
    """Java's writer drops -U/-D rows of an ignore-delete table: a DELETE changes nothing."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '1', 'ignore-delete' = 'true');
              INSERT INTO t VALUES (1, 'a'), (2, 'b');
              DELETE FROM t WHERE id = 1""")
    t = wh.table("t")
    assert len(t.snapshots) == 1
    assert sorted(tuple(r) for r in t.read().collect()) == [(1, "a"), (2, "b")]
