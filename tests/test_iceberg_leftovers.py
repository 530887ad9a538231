"""Issue 24's leftovers on the Iceberg tables schemalab writes, each as Iceberg (Java 1.12 and
its Spark integration) does it; Java judges the same cases in
``tests/test_interop_iceberg_leftovers.py``:

1. DROP COLUMN of a source of the current sort order or partition spec: refused with
   ``TableMetadata.Builder.build``'s message (nothing committed); a v1 ``void`` partition
   field no longer holds its column;
2. a DELETE that matches no row commits an empty snapshot (``delete``; ``overwrite`` for a
   condition with a subquery), one that Spark folds to FALSE commits nothing;
3. ``DELETE FROM db.t WHERE db.t.c = ..``: columns qualified as Spark resolves them, and a
   qualifier naming another table refused, naming the column;
4. every snapshot names schemalab in ``engine-name`` / ``engine-version``, not
   ``iceberg-version``;
5. ``write.distribution-mode``: ``hash`` (a partitioned table's default) writes one file per
   partition from shuffled rows, ``none`` one per task, an unknown mode is refused;
6. UPDATE as Iceberg's Spark merge-on-read writes it (position deletes and the new rows in
   one ``overwrite`` commit), read by pyiceberg as by schemalab.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError, SqlError

pytestmark = pytest.mark.spark


def _md(wh: sl.Warehouse, name: str = "t") -> dict[str, Any]:
    return json.loads(Path(wh.table(name).metadata_file.removeprefix("file:")).read_text())


def _refused(wh: sl.Warehouse, statement: str) -> SchemaLabError:
    before = wh.table("t").metadata_file
    with pytest.raises(SchemaLabError) as e:
        wh.sql(statement)
    assert wh.table("t").metadata_file == before  # nothing committed
    return e.value


# ---- 1. a source column of the sort order or partition spec ---------------------------------


def test_drop_sort_order_source_refused(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT, b STRING, s STRUCT<x: INT, y: INT>)")
    wh.sql("ALTER TABLE t WRITE ORDERED BY b DESC NULLS LAST, s.y")
    e = _refused(wh, "ALTER TABLE t DROP COLUMN b")
    assert str(e).startswith("Cannot find source column for sort field: identity(2) DESC "
                             "NULLS LAST (table default.t: column b is in its current sort "
                             "order;")
    assert (e.rule, e.table, e.column) == ("iceberg-source-column-in-use", "default.t", "b")
    e = _refused(wh, "ALTER TABLE t DROP COLUMN s")  # the struct holding s.y
    assert "for sort field: identity(5) ASC NULLS FIRST (table default.t: column s.y" in str(e)
    wh.sql("ALTER TABLE t DROP COLUMN s.x")  # not in the order
    wh.sql("ALTER TABLE t WRITE UNORDERED")
    wh.sql("ALTER TABLE t DROP COLUMN b")
    assert [f.name for f in wh.table("t").schema.fields] == ["a", "s"]


@pytest.mark.parametrize("version", [1, 2])
def test_drop_partition_source_refused(version: int, tmp_path: Path, spark: Any) -> None:
    """Refused while the default spec has a field of the column; after DROP PARTITION FIELD
    allowed (v1 keeps the field as ``void``, which Java's check skips), and the table takes
    rows again."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(f"CREATE TABLE t (a INT, p STRING) PARTITIONED BY (bucket(4, p)) "
           f"TBLPROPERTIES ('format-version' = '{version}')")
    e = _refused(wh, "ALTER TABLE t DROP COLUMN p")
    assert str(e).startswith("Cannot find source column for partition field: 1000: p_bucket: "
                             "bucket[4](2) (table default.t: column p is in its current "
                             "partition spec;")
    assert (e.rule, e.column) == ("iceberg-source-column-in-use", "p")
    wh.sql("ALTER TABLE t DROP PARTITION FIELD bucket(4, p)")
    wh.sql("ALTER TABLE t DROP COLUMN p")
    spec = _md(wh)["partition-specs"][-1]["fields"]
    assert [f["transform"] for f in spec] == (["void"] if version == 1 else [])
    wh.sql("INSERT INTO t VALUES (1), (2)")
    assert sorted(r[0] for r in wh.sql("SELECT a FROM t").collect()) == [1, 2]


# ---- 2. a DELETE that matches nothing ------------------------------------------------------


def test_delete_matching_nothing_commits_empty_snapshot(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)")
    wh.sql("DELETE FROM t WHERE id = 1")  # no snapshot yet: Spark's DeleteFiles still commits
    wh.sql("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
    for cond in ("id = 99", "p = 'nope'"):
        msg = wh.execute_sql(f"DELETE FROM t WHERE {cond}")[0].message
        assert msg.startswith("Deleted 0 rows from default.t as snapshot ")
    wh.sql("CREATE TABLE o (k INT)")
    wh.sql("DELETE FROM t WHERE id IN (SELECT k FROM o)")  # row-level: an empty RowDelta
    snaps = _md(wh)["snapshots"]
    assert [s["summary"]["operation"] for s in snaps] == \
        ["delete", "append", "delete", "delete", "overwrite"]
    for s in snaps[2:]:
        assert s["summary"]["changed-partition-count"] == "0"
        assert s["summary"]["total-records"] == "2" and "deleted-records" not in s["summary"]
    assert sorted(r[0] for r in wh.sql("SELECT id FROM t").collect()) == [1, 2]


@pytest.mark.parametrize("cond", ["false", "50 <> 50", "1 > null"])
def test_delete_always_false_commits_nothing(cond: str, tmp_path: Path, spark: Any) -> None:
    """``SparkTable.deleteWhere`` skips a condition that is always false."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT)")
    wh.sql("INSERT INTO t VALUES (1), (2)")
    before = wh.table("t").metadata_file
    assert "no commit" in wh.execute_sql(f"DELETE FROM t WHERE {cond}")[0].message
    assert wh.table("t").metadata_file == before


def test_delete_always_true_drops_every_file(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT)")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES (1), (2), (3)")
    wh.sql("DELETE FROM t WHERE id = 2")  # a position delete
    wh.sql("DELETE FROM t WHERE 1 = 1")  # as DELETE FROM t: whole files, their deletes too
    s = _md(wh)["snapshots"][-1]["summary"]
    assert (s["operation"], s["deleted-data-files"], s["removed-delete-files"]) == \
        ("delete", "1", "1")
    assert wh.sql("SELECT * FROM t").collect() == []


# ---- 3. qualified column names --------------------------------------------------------------


def test_delete_with_qualified_columns(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE db.t (id INT, s STRUCT<x: INT>)")
    wh.sql("INSERT INTO db.t VALUES (1, named_struct('x', 10)), (2, named_struct('x', 20)), "
           "(3, named_struct('x', 30)), (4, named_struct('x', 40))")
    wh.sql("DELETE FROM db.t WHERE db.t.id = 1")
    wh.sql("DELETE FROM db.t WHERE spark_catalog.db.t.id = 2 OR `DB`.`T`.s.x = 30")
    wh.sql("DELETE FROM db.t WHERE t.id = 99")
    assert [r[0] for r in wh.sql("SELECT id FROM db.t").collect()] == [4]
    with pytest.raises(SqlError) as e:
        wh.sql("DELETE FROM db.t WHERE other.t.id = 4")
    assert (e.value.rule, e.value.column) == ("column-must-exist", "other.t.id")
    assert str(e.value).startswith("DELETE FROM db.t: cannot resolve `other`.`t`.`id`")
    assert "id, t.id or db.t.id" in str(e.value)


# ---- 4. who wrote a snapshot ----------------------------------------------------------------


def test_snapshots_name_schemalab(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT)")
    wh.sql("INSERT INTO t VALUES (1), (2)")
    wh.sql("DELETE FROM t WHERE id = 1")
    wh.sql("ALTER TABLE t CREATE TAG v1")
    for s in _md(wh)["snapshots"]:
        assert "iceberg-version" not in s["summary"]
        assert list(s["summary"].items())[-2:] == [("engine-name", "schemalab"),
                                                   ("engine-version", sl.__version__)]


# ---- 5. write.distribution-mode -------------------------------------------------------------

#: 4 partitions × 50 rows, shuffled
SHUFFLED = random.Random(24).sample([(i, f"p{i % 4}") for i in range(200)], 200)


def _files_per_partition(wh: sl.Warehouse) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in wh.table("t").data_files():
        key = str(sorted(f.entry.partition.items()))
        out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize(("mode", "files"), [(None, 1), ("hash", 1), ("range", 1),
                                             ("none", 4)])
def test_distribution_mode(mode: str | None, files: int, tmp_path: Path, spark: Any) -> None:
    """Rows of every partition in each of 4 tasks: ``none`` writes a file per task and
    partition, ``hash`` (the default of a partitioned table) and ``range`` one per
    partition."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    props = "" if mode is None else f" TBLPROPERTIES ('write.distribution-mode' = '{mode}')"
    wh.sql(f"CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p){props}")
    df = spark.createDataFrame(SHUFFLED, "id INT, p STRING").repartition(4)
    assert df.rdd.glom().map(lambda rows: len({r.p for r in rows})).collect() == [4] * 4
    wh.table("t").insert(df)
    assert sorted(_files_per_partition(wh).values()) == [files] * 4
    assert wh.sql("SELECT count(*) FROM t").collect()[0][0] == 200


def test_distribution_mode_session_setting(tmp_path: Path, spark: Any) -> None:
    """Spark's ``spark.sql.iceberg.distribution-mode`` comes before the table property."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)")
    df = spark.createDataFrame(SHUFFLED, "id INT, p STRING").repartition(4)
    spark.conf.set("spark.sql.iceberg.distribution-mode", "none")
    try:
        wh.table("t").insert(df)
    finally:
        spark.conf.unset("spark.sql.iceberg.distribution-mode")
    assert set(_files_per_partition(wh).values()) == {4}


def test_unknown_distribution_mode_refused(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p) "
           "TBLPROPERTIES ('write.distribution-mode' = 'bogus')")
    with pytest.raises(SqlError) as e:
        wh.sql("INSERT INTO t VALUES (1, 'x')")
    assert str(e.value).startswith("Invalid distribution mode: bogus (table default.t: table "
                                   "property write.distribution-mode is 'bogus';")
    assert e.value.rule == "iceberg-distribution-mode"
    assert wh.table("t").current_snapshot is None
    assert not list((tmp_path / "default" / "t").rglob("*.parquet"))


# ---- 6. UPDATE, merge-on-read -----------------------------------------------------------------

UPDATES = [
    "UPDATE t SET name = upper(name) WHERE id IN (1, 3)",
    "UPDATE t SET p = 'z', id = id * 10 WHERE id = 2",  # moves to another partition
    "UPDATE default.t SET name = concat(default.t.name, '!') WHERE t.p = 'y'",  # a file merged
    "UPDATE t SET name = NULL WHERE id > 1000",  # nothing: an empty commit
    "UPDATE t SET name = (SELECT max(k) FROM o) WHERE id IN (SELECT cast(k AS INT) FROM o)",
]


def update_table(wh: sl.Warehouse) -> None:
    """t (id, name, p) partitioned by p, then every UPDATE of :data:`UPDATES`."""
    wh.sql("CREATE TABLE t (id INT, name STRING, p STRING) PARTITIONED BY (p)")
    wh.sql("CREATE TABLE o (k STRING)")
    wh.sql("INSERT INTO o VALUES ('4')")
    wh.sql("INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y'), "
           "(5, 'e', 'x')")
    for statement in UPDATES:
        wh.sql(statement)


def test_update_merge_on_read(tmp_path: Path, spark: Any) -> None:
    """The rows and summaries; pyiceberg reads the result as schemalab does (every snapshot,
    and Java's read: ``test_interop_iceberg_leftovers.py``)."""
    from test_iceberg_write import ours, pyiceberg_rows

    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    update_table(wh)
    t = wh.table("t")
    rows = sorted(tuple(r) for r in wh.sql("SELECT id, name, p FROM t").collect())
    assert rows == [(1, "A", "x"), (3, "C!", "y"), (4, "4", "y"), (5, "e", "x"),
                    (20, "b", "z")]
    summaries = [s.summary for s in t.snapshots[1:]]
    assert [s["operation"] for s in summaries] == ["overwrite"] * 5
    first = summaries[0]
    assert (first["added-data-files"], first["added-records"], first["added-delete-files"],
            first["added-position-deletes"], first["total-records"]) == ("2", "2", "2", "2", "7")
    third = summaries[2]  # y's file had C's delete: merged and replaced
    assert (third["removed-position-delete-files"], third["added-position-deletes"]) == ("1",
                                                                                         "3")
    assert "added-data-files" not in summaries[3] and summaries[3]["total-records"] == \
        summaries[2]["total-records"]
    assert pyiceberg_rows(t.metadata_file, None) == ours(t, None)


@pytest.mark.parametrize(("version", "rule"), [(1, "iceberg-update-format"),
                                               (3, "iceberg-update-format")])
def test_update_refused_outside_v2(version: int, rule: str, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql(f"CREATE TABLE t (id INT) TBLPROPERTIES ('format-version' = '{version}')")
    e = _refused(wh, "UPDATE t SET id = 1")
    assert (e.rule, e.table) == (rule, "default.t")
    assert str(e).startswith(f"UPDATE default.t: format v{version} ")


def test_update_bad_column(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (id INT)")
    e = _refused(wh, "UPDATE t SET nope = 1")
    assert (e.rule, e.column) == ("column-must-exist", "nope")
