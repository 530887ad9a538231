"""Refs and write order on Iceberg tables schemalab writes (issues 22 and 24), with the
syntax and semantics of Iceberg's Spark SQL extensions (Iceberg 1.12):
``ALTER TABLE t CREATE|REPLACE|DROP BRANCH|TAG``, ``WRITE [LOCALLY] ORDERED BY`` /
``DISTRIBUTED BY PARTITION`` / ``UNORDERED``, and writes to ``t.branch_<name>``.

The fast tests here need no Spark: a branch created on a table without snapshots gets an
empty snapshot (``ManageSnapshots.createBranch(name)``), which gives refs something to point
at. Java Iceberg judges the same statements in ``tests/test_interop_iceberg_write.py``."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.sql import IcebergRefStatement, IcebergWriteOrder, parse_statement

DAY = 86_400_000


def _md(wh: sl.Warehouse) -> dict[str, Any]:
    t = wh.table("t")
    return json.loads(Path(t.metadata_file).read_text())


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def wh(tmp_path: Path) -> sl.Warehouse:
    """A v2 table whose main has one (empty) snapshot, a branch dev and a tag v1 on it."""
    w = sl.Warehouse(tmp_path, format="iceberg")
    w.sql("CREATE TABLE t (id BIGINT, s STRING, st STRUCT<x: INT>, ts TIMESTAMP)")
    w.sql("ALTER TABLE t CREATE BRANCH main")  # createBranch(main): a fast append to main
    w.sql("ALTER TABLE t CREATE BRANCH dev; ALTER TABLE t CREATE TAG v1")
    return w


# ---- parsing ------------------------------------------------------------------------------

PARSED = [
    ("ALTER TABLE t CREATE BRANCH b", dict(kind="branch", create=True, replace=False)),
    ("alter table db.t create or replace branch `b-1` as of version 5",
     dict(kind="branch", ref="b-1", create=True, replace=True, snapshot_id=5)),
    ("ALTER TABLE t REPLACE BRANCH b RETAIN 3 HOURS",
     dict(create=False, replace=True, max_ref_age_ms=3 * 3_600_000)),
    ("ALTER TABLE t CREATE BRANCH IF NOT EXISTS b WITH SNAPSHOT RETENTION 7 DAYS",
     dict(if_not_exists=True, max_snapshot_age_ms=7 * DAY, min_snapshots_to_keep=None)),
    ("ALTER TABLE t CREATE BRANCH b AS OF VERSION 1 RETAIN 1 MINUTES WITH SNAPSHOT "
     "RETENTION 4 SNAPSHOTS 2 DAYS",
     dict(snapshot_id=1, max_ref_age_ms=60_000, min_snapshots_to_keep=4,
          max_snapshot_age_ms=2 * DAY)),
    ("ALTER TABLE t CREATE TAG IF NOT EXISTS v AS OF VERSION 9 RETAIN 2 DAYS",
     dict(kind="tag", if_not_exists=True, snapshot_id=9, max_ref_age_ms=2 * DAY)),
    ("ALTER TABLE t CREATE OR REPLACE TAG v", dict(kind="tag", create=True, replace=True)),
    ("ALTER TABLE t DROP BRANCH IF EXISTS b;", dict(action="drop", if_exists=True)),
    ("ALTER TABLE t DROP TAG v", dict(action="drop", kind="tag", if_exists=False)),
]


@pytest.mark.parametrize(("text", "fields"), PARSED)
def test_parse_ref_statements(text: str, fields: dict[str, Any]) -> None:
    stmt = parse_statement(text)
    assert isinstance(stmt, IcebergRefStatement)
    for k, v in fields.items():
        assert getattr(stmt, k) == v, k


@pytest.mark.parametrize(("text", "order", "mode"), [
    ("ALTER TABLE t WRITE ORDERED BY id", (("identity", "id", "asc", "nulls-first"),), "range"),
    ("ALTER TABLE t WRITE LOCALLY ORDERED BY id DESC NULLS FIRST, days(ts)",
     (("identity", "id", "desc", "nulls-first"), ("day", "ts", "asc", "nulls-first")), None),
    ("ALTER TABLE t WRITE ORDERED BY truncate(s, 3) ASC NULLS LAST",
     (("truncate[3]", "s", "asc", "nulls-last"),), "range"),
    ("ALTER TABLE t WRITE DISTRIBUTED BY PARTITION", (), "hash"),
    ("ALTER TABLE t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY st.x DESC",
     (("identity", "st.x", "desc", "nulls-last"),), "hash"),
    ("ALTER TABLE t WRITE UNORDERED", (), "none"),
    ("ALTER TABLE t WRITE ORDERED BY (id, bucket(2, s) DESC)",
     (("identity", "id", "asc", "nulls-first"), ("bucket[2]", "s", "desc", "nulls-last")),
     "range"),
])
def test_parse_write_order(text: str, order: tuple[Any, ...], mode: str | None) -> None:
    stmt = parse_statement(text)
    assert isinstance(stmt, IcebergWriteOrder)
    assert (stmt.order, stmt.distribution_mode) == (order, mode)


@pytest.mark.parametrize("text", [
    "ALTER TABLE t CREATE OR REPLACE BRANCH IF NOT EXISTS b",  # not in Iceberg's grammar
    "ALTER TABLE t REPLACE BRANCH IF NOT EXISTS b",
    "ALTER TABLE t CREATE TAG v WITH SNAPSHOT RETENTION 2 SNAPSHOTS",  # branches only
    "ALTER TABLE t CREATE BRANCH b RETAIN 2 WEEKS",
    "ALTER TABLE t CREATE BRANCH b RETAIN 2 DAYS AS OF VERSION 3",  # options in order
    "ALTER TABLE t CREATE BRANCH b AS OF VERSION x",
    "ALTER TABLE t DROP BRANCH b c",
    "ALTER TABLE t WRITE",
    "ALTER TABLE t WRITE ORDERED BY a ORDERED BY b",
    "ALTER TABLE t WRITE DISTRIBUTED BY PARTITION DISTRIBUTED BY PARTITION",
    "ALTER TABLE t WRITE ORDERED BY a NULLS MIDDLE",
])
def test_syntax_refused(text: str) -> None:
    with pytest.raises(SchemaLabError) as e:
        parse_statement(text)
    assert e.value.rule == "sql-syntax"


# ---- metadata as Java writes it -------------------------------------------------------------


def test_refs_in_metadata(wh: sl.Warehouse) -> None:
    md = _md(wh)
    main = md["current-snapshot-id"]
    assert md["refs"] == {"main": {"snapshot-id": main, "type": "branch"},
                          "dev": {"snapshot-id": main, "type": "branch"},
                          "v1": {"snapshot-id": main, "type": "tag"}}
    (snap,) = md["snapshots"]
    assert snap["summary"] == {"operation": "append", "changed-partition-count": "0",
                               "total-records": "0", "total-files-size": "0",
                               "total-data-files": "0", "total-delete-files": "0",
                               "total-position-deletes": "0", "total-equality-deletes": "0",
                               "engine-name": "schemalab", "engine-version": sl.__version__}
    assert [e["snapshot-id"] for e in md["snapshot-log"]] == [main]
    wh.sql(f"ALTER TABLE t CREATE BRANCH b2 AS OF VERSION {main} RETAIN 2 DAYS WITH "
           "SNAPSHOT RETENTION 5 SNAPSHOTS 3 HOURS")
    wh.sql("ALTER TABLE t CREATE OR REPLACE TAG v1 RETAIN 10 MINUTES")
    refs = _md(wh)["refs"]
    # SnapshotRefParser's key order
    assert list(refs["b2"].items()) == [("snapshot-id", main), ("type", "branch"),
                                        ("min-snapshots-to-keep", 5),
                                        ("max-snapshot-age-ms", 3 * 3_600_000),
                                        ("max-ref-age-ms", 2 * DAY)]
    assert refs["v1"] == {"snapshot-id": main, "type": "tag", "max-ref-age-ms": 600_000}
    # REPLACE keeps what it is not given (SnapshotRef.builderFrom)
    wh.sql(f"ALTER TABLE t REPLACE BRANCH b2 AS OF VERSION {main}")
    assert _md(wh)["refs"]["b2"]["min-snapshots-to-keep"] == 5
    t = wh.table("t")
    assert [(r.name, r.kind) for r in t.refs] == [("main", "branch"), ("b2", "branch"),
                                                  ("dev", "branch"), ("v1", "tag")]
    assert t.refs[1].properties["max-ref-age-ms"] == 2 * DAY
    wh.sql("ALTER TABLE t DROP BRANCH b2; ALTER TABLE t DROP TAG v1")
    assert set(_md(wh)["refs"]) == {"main", "dev"}


def test_no_change_writes_no_metadata(wh: sl.Warehouse, tmp_path: Path) -> None:
    wh.sql("ALTER TABLE t WRITE LOCALLY ORDERED BY id DESC")
    before = _files(tmp_path)
    for text in ["ALTER TABLE t CREATE BRANCH IF NOT EXISTS dev",
                 "ALTER TABLE t CREATE TAG IF NOT EXISTS dev",  # any ref of that name
                 "ALTER TABLE t DROP TAG IF EXISTS nope",
                 "ALTER TABLE t CREATE OR REPLACE TAG v1",  # the same snapshot
                 "ALTER TABLE t REPLACE BRANCH dev",
                 "ALTER TABLE t WRITE LOCALLY ORDERED BY id DESC"]:  # the same order
        wh.sql(text)
    assert _files(tmp_path) == before


def test_write_order_metadata(wh: sl.Warehouse) -> None:
    wh.sql("ALTER TABLE t WRITE ORDERED BY id DESC, s")
    md = _md(wh)
    assert md["sort-orders"][1] == {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 1, "direction": "desc",
         "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 2, "direction": "asc",
         "null-order": "nulls-first"}]}
    assert md["default-sort-order-id"] == 1
    assert md["properties"]["write.distribution-mode"] == "range"
    wh.sql("ALTER TABLE t WRITE LOCALLY ORDERED BY bucket(4, id), days(ts) DESC")
    md = _md(wh)
    assert md["default-sort-order-id"] == 2
    assert [f["transform"] for f in md["sort-orders"][2]["fields"]] == ["bucket[4]", "day"]
    assert md["properties"]["write.distribution-mode"] == "range"  # LOCALLY: unchanged
    wh.sql("ALTER TABLE t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY ID DESC, S")
    md = _md(wh)
    assert md["default-sort-order-id"] == 1  # an equal order gets its id back
    assert md["properties"]["write.distribution-mode"] == "hash"
    wh.sql("ALTER TABLE t WRITE UNORDERED")
    md = _md(wh)
    assert (md["default-sort-order-id"], len(md["sort-orders"])) == (0, 3)
    assert md["properties"]["write.distribution-mode"] == "none"
    wh.sql("ALTER TABLE t WRITE DISTRIBUTED BY PARTITION")  # no ordering: unsorted
    assert _md(wh)["default-sort-order-id"] == 0
    assert set(_md(wh)["refs"]) == {"main", "dev", "v1"}


# ---- refusals: Iceberg's messages, nothing written ------------------------------------------

REFUSED = [
    ("ALTER TABLE t CREATE BRANCH dev", "branch-must-be-new", "Ref dev already exists"),
    ("ALTER TABLE t CREATE BRANCH v1", "branch-must-be-new", "Ref v1 already exists"),
    ("ALTER TABLE t CREATE TAG v1", "tag-must-be-new", "Ref v1 already exists"),
    ("ALTER TABLE t CREATE TAG main", "tag-must-be-new", "Ref main already exists"),
    ("ALTER TABLE t DROP BRANCH main", "main-branch-is-fixed", "Cannot remove main branch"),
    ("ALTER TABLE t DROP BRANCH IF EXISTS main", "main-branch-is-fixed",
     "Cannot remove main branch"),
    ("ALTER TABLE t DROP BRANCH nope", "ref-must-exist", "Branch does not exist: nope"),
    ("ALTER TABLE t DROP TAG nope", "ref-must-exist", "Tag does not exist: nope"),
    ("ALTER TABLE t DROP BRANCH v1", "iceberg-ref-kind", "Ref v1 is a tag not a branch"),
    ("ALTER TABLE t DROP TAG dev", "iceberg-ref-kind", "Ref dev is a branch not a tag"),
    ("ALTER TABLE t REPLACE BRANCH nope", "ref-must-exist", "Branch does not exist: nope"),
    ("ALTER TABLE t REPLACE TAG dev", "iceberg-ref-kind", "Ref dev is a branch not a tag"),
    ("ALTER TABLE t REPLACE TAG nope", "ref-must-exist", "Tag does not exist: nope"),
    ("ALTER TABLE t CREATE TAG x AS OF VERSION 42", "iceberg-ref-snapshot",
     "Cannot set x to unknown snapshot: 42"),
    ("ALTER TABLE t CREATE BRANCH x AS OF VERSION 42", "iceberg-ref-snapshot",
     "Cannot set x to unknown snapshot: 42"),
    ("ALTER TABLE t CREATE TAG x RETAIN 0 DAYS", "iceberg-ref-retention",
     "Max reference age must be greater than 0"),
    ("ALTER TABLE t CREATE BRANCH x WITH SNAPSHOT RETENTION 0 SNAPSHOTS",
     "iceberg-ref-retention", "Min snapshots to keep must be greater than 0"),
    ("ALTER TABLE t CREATE BRANCH x AS OF VERSION 42 WITH SNAPSHOT RETENTION -1 DAYS",
     "iceberg-ref-retention", "Max snapshot age must be greater than 0 ms"),
    ("ALTER TABLE t CREATE BRANCH `a/b`", "valid-ref-name", "Invalid branch name 'a/b'"),
    ("ALTER TABLE t CREATE TAG `..`", "valid-ref-name", "Invalid tag name '..'"),
    ("ALTER TABLE t WRITE ORDERED BY nope", "iceberg-write-order",
     "Cannot find field 'nope' in struct: struct<1: id: optional long"),
    ("ALTER TABLE t WRITE ORDERED BY st", "iceberg-write-order",
     "Cannot sort by non-primitive source field"),
    ("ALTER TABLE t WRITE ORDERED BY hours(s)", "iceberg-write-order",
     "Cannot bind: hour cannot transform string values from 's'"),
]


@pytest.mark.parametrize(("text", "rule", "message"), REFUSED)
def test_refused_and_nothing_written(text: str, rule: str, message: str, wh: sl.Warehouse,
                                     tmp_path: Path) -> None:
    before = _files(tmp_path)
    with pytest.raises(SchemaLabError) as e:
        wh.sql(text)
    assert e.value.rule == rule
    assert message in e.value.message
    assert "default.t" in e.value.message
    assert _files(tmp_path) == before  # byte for byte


def test_refused_without_snapshots(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (id BIGINT)")
    before = _files(tmp_path)
    for text, message in [
            ("ALTER TABLE t CREATE TAG v", "Cannot complete create or replace tag operation "
             "on default.t, main has no snapshot"),
            ("ALTER TABLE t REPLACE BRANCH main", "Cannot complete replace branch operation "
             "on default.t, main has no snapshot")]:
        with pytest.raises(SchemaLabError, match=message) as e:
            wh.sql(text)
        assert e.value.rule == "iceberg-ref-snapshot"
    assert _files(tmp_path) == before
    with pytest.raises(SchemaLabError) as e:
        wh.sql("ALTER TABLE t.branch_x CREATE TAG v")  # a selector of a branch it lacks
    assert "Cannot use branch (does not exist): x" in e.value.message


def test_paimon_table_refused(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE p (a INT)")
    # (CREATE TAG runs: Paimon's Spark SQL spells it alike, see test_paimon_tag_sql.py)
    for text in ("ALTER TABLE p CREATE BRANCH v", "ALTER TABLE p WRITE ORDERED BY a"):
        with pytest.raises(SchemaLabError, match="is Iceberg's; default.p is a Paimon") as e:
            wh.sql(text)
        assert e.value.rule == "unsupported-sql"


def test_racing_create_tag_one_wins(wh: sl.Warehouse, tmp_path: Path) -> None:
    n = 8
    barrier = threading.Barrier(n)
    done: list[str] = []
    errors: list[SchemaLabError] = []

    def run(i: int) -> None:
        w = sl.Warehouse(tmp_path, format="iceberg")
        barrier.wait()
        try:
            w.sql(f"ALTER TABLE t CREATE TAG race AS OF VERSION "
                  f"{_md(w)['current-snapshot-id']} RETAIN {i + 1} DAYS")
            done.append(str(i))
        except SchemaLabError as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(done) == 1, done
    assert len(errors) == n - 1 and {e.rule for e in errors} == {"tag-must-be-new"}
    assert _md(wh)["refs"]["race"]["max-ref-age-ms"] == (int(done[0]) + 1) * DAY
    # different names racing: every one is kept
    threads = [threading.Thread(target=lambda i=i: sl.Warehouse(
        tmp_path, format="iceberg").sql(f"ALTER TABLE t CREATE BRANCH b{i}"))
        for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert {f"b{i}" for i in range(n)} <= set(_md(wh)["refs"])


def test_alter_keeps_refs(wh: sl.Warehouse) -> None:
    wh.sql("ALTER TABLE t CREATE BRANCH kept RETAIN 1 DAYS")
    refs = _md(wh)["refs"]
    wh.sql("ALTER TABLE t ADD COLUMN c INT; ALTER TABLE t RENAME COLUMN s TO s2; "
           "ALTER TABLE t ADD PARTITION FIELD bucket(2, id); ALTER TABLE t WRITE ORDERED BY id")
    assert _md(wh)["refs"] == refs


def test_history_has_a_lane_per_branch(wh: sl.Warehouse) -> None:
    from schemalab.widgets.lanes_figure import lanes

    h = wh.table("t").history()
    assert set(h.branches) == {"main", "dev"}
    assert h.forks["dev"].snapshot_id == _md(wh)["current-snapshot-id"]
    assert h.forks["dev"].tags == ("v1",)
    assert {lane.name for lane in lanes(h)} >= {"main", "dev"}


def test_metadata_dir_has_only_committed_files(wh: sl.Warehouse, tmp_path: Path) -> None:
    """The empty snapshot's manifest list is written once (not by the dry run)."""
    lists = [n for n in os.listdir(tmp_path / "default" / "t" / "metadata")
             if n.startswith("snap-")]
    assert len(lists) == 1


# ---- writes to a branch, reads of refs (Spark) ----------------------------------------------


def _sql_rows(wh: sl.Warehouse, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    df = wh.sql(query)
    assert df is not None
    return list(df.columns), sorted(tuple(r) for r in df.collect())


def test_branch_writes_and_reads(tmp_path: Path, spark: Any) -> None:
    """pyiceberg and Java read such branches (and t.tag_<branch>, t.snapshot_id_N) in
    tests/test_interop_iceberg_refs_write.py."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id BIGINT, s STRING) PARTITIONED BY (bucket(2, id))")
    wh.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    m1 = _md(wh)["current-snapshot-id"]
    wh.sql("ALTER TABLE t CREATE BRANCH dev RETAIN 3 DAYS; ALTER TABLE t CREATE TAG v1")
    log = _md(wh)["snapshot-log"]
    wh.sql("INSERT INTO t.branch_dev VALUES (3, 'dev')")
    md = _md(wh)
    dev1 = md["refs"]["dev"]["snapshot-id"]
    assert md["current-snapshot-id"] == m1 and md["refs"]["main"]["snapshot-id"] == m1
    assert md["snapshot-log"] == log  # only main's moves are logged
    assert md["refs"]["dev"]["max-ref-age-ms"] == 3 * DAY  # the branch keeps its retention
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == dev1)
    assert snap["parent-snapshot-id"] == m1
    assert snap["summary"]["total-records"] == "3"
    wh.sql("INSERT INTO t VALUES (5, 'main')")
    wh.sql("ALTER TABLE t ADD COLUMN c INT")
    wh.sql("INSERT INTO default.t.branch_dev VALUES (6, 'dev3', 60)")  # db.t.branch_x
    md = _md(wh)
    dev2 = md["refs"]["dev"]["snapshot-id"]
    main2 = md["current-snapshot-id"]
    parents = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md["snapshots"]}
    assert parents[dev2] == dev1 and parents[main2] == m1
    assert md["snapshots"][-1]["sequence-number"] == md["last-sequence-number"] == 4
    assert set(md["refs"]) == {"main", "dev", "v1"}
    # a branch reads in the table's current schema, a tag in its snapshot's
    cols, dev_rows = _sql_rows(wh, "SELECT * FROM t.branch_dev")
    assert cols == ["id", "s", "c"]
    assert dev_rows == [(1, "a", None), (2, "b", None), (3, "dev", None), (6, "dev3", 60)]
    assert _sql_rows(wh, "SELECT * FROM t.tag_v1") == (["id", "s"], [(1, "a"), (2, "b")])
    assert _sql_rows(wh, "SELECT id FROM t")[1] == [(1,), (2,), (5,)]
    # the history has a lane per branch
    h = wh.table("t").history()
    assert set(h.branches) == {"main", "dev"} and h.forks["dev"].snapshot_id == m1
    assert [s.id for s in h.branch("dev").snapshots] == [m1, dev1, dev2]


def test_branch_write_refusals(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id BIGINT)")
    wh.sql("INSERT INTO t VALUES (1)")
    wh.sql("ALTER TABLE t CREATE TAG v1")
    wh.sql("ALTER TABLE t CREATE BRANCH dev")
    before = _files(tmp_path)
    for text, rule, message in [
            # schemalab's DELETE and INSERT OVERWRITE commit to main: refused on a branch
            ("DELETE FROM t.branch_dev WHERE id = 1", "iceberg-write-target",
             "DELETE on branch dev of default.t"),
            ("INSERT OVERWRITE t.branch_dev VALUES (2)", "iceberg-write-target",
             "INSERT OVERWRITE on branch dev of default.t"),
            ("DELETE FROM t.tag_v1", "iceberg-write-target",
             "Cannot write to table with time travel"),
            ("INSERT INTO t.tag_v1 VALUES (2)", "iceberg-write-target",
             "Cannot write to table with time travel"),
            ("INSERT INTO t.branch_v1 VALUES (2)", "iceberg-write-target",
             "v1 is a tag, not a branch. Tags cannot be targets for producing snapshots"),
            ("INSERT INTO t.branch_nope VALUES (2)", "ref-must-exist",
             "Cannot use branch (does not exist): nope"),
            ("SELECT * FROM t.branch_nope", "ref-must-exist",
             "Cannot use branch (does not exist): nope"),
            ("SELECT * FROM t.tag_nope", "ref-must-exist",
             "Cannot find matching snapshot ID or reference name for version nope")]:
        with pytest.raises(SchemaLabError) as e:
            wh.sql(text)
        assert (e.value.rule, message in e.value.message) == (rule, True), e.value.message
    # nothing written: the refused inserts' data files are gone again
    assert _files(tmp_path) == before
    # a tag named as a branch reads (its snapshot, the table's schema), as SparkTable does
    assert _sql_rows(wh, "SELECT * FROM t.branch_v1") == (["id"], [(1,)])


def test_insert_honours_the_sort_order(tmp_path: Path, spark: Any) -> None:
    """Rows within each data file follow the table's order (after the partition values);
    each data file's manifest entry names the order's id (0 for unsorted writes), as
    Iceberg's Spark writer sets ``sort_order_id``."""
    import fastavro
    import pyarrow.parquet as pq

    from schemalab.iceberg.manifests import read_iceberg_manifest_list

    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id BIGINT, s STRING, p INT) PARTITIONED BY (p)")
    wh.sql("INSERT INTO t VALUES (0, 'unsorted', 0)")
    wh.sql("ALTER TABLE t WRITE ORDERED BY s DESC NULLS LAST, id")
    rows = ", ".join(f"({(i * 7919) % 1000}, "
                     f"{'NULL' if i % 17 == 0 else repr(chr(97 + i % 26))}, {i % 3})"
                     for i in range(600))
    wh.sql(f"INSERT INTO t VALUES {rows}")
    t = wh.table("t")
    snap = t.snapshot(t.metadata.current_snapshot_id)
    order_ids: dict[str, int] = {}
    for mf in read_iceberg_manifest_list(t.resolve(snap.manifest_list)):
        with open(t.resolve(mf.path), "rb") as f:
            for rec in fastavro.reader(f):
                order_ids[rec["data_file"]["file_path"]] = rec["data_file"]["sort_order_id"]
    assert sorted(order_ids.values())[:2] == [0, 1] and set(order_ids.values()) == {0, 1}
    sorted_rows = 0
    for path, order_id in order_ids.items():
        data = [(r["s"], r["id"]) for r in pq.ParquetFile(t.resolve(path)).read().to_pylist()]
        if order_id == 1:
            # s DESC NULLS LAST, then id ASC
            want = sorted(data, key=lambda r: r[1])
            want = sorted(want, key=lambda r: r[0] or "", reverse=True)
            want = sorted(want, key=lambda r: r[0] is None)
            assert data == want
            sorted_rows += len(data)
    assert sorted_rows == 600


def test_a_ref_selector_is_no_table(wh: sl.Warehouse, tmp_path: Path) -> None:
    """``t.branch_dev`` reads and writes branch dev; DROP TABLE or RENAME of it are refused
    (they would act on table t), and CREATE TABLE of that name finds it taken."""
    before = _files(tmp_path)
    for text in ("DROP TABLE t.branch_dev", "ALTER TABLE t.branch_dev RENAME TO u",
                 "DROP TABLE default.t.tag_v1"):
        with pytest.raises(SchemaLabError, match="of Iceberg table default.t, not a table"):
            wh.sql(text)
    with pytest.raises(SchemaLabError) as e:
        wh.sql("CREATE TABLE t.branch_dev (a INT)")
    assert e.value.rule == "table-must-be-new"
    # an ALTER of a ref selector: Iceberg's Spark finds no such table (the schema and the
    # properties are the table's, shared by its branches); test_interop_iceberg_spark_sql
    for text in ("ALTER TABLE t.branch_dev ADD COLUMN x INT",
                 "ALTER TABLE t.tag_v1 SET TBLPROPERTIES ('a' = 'b')"):
        with pytest.raises(SchemaLabError, match="TABLE_OR_VIEW_NOT_FOUND.*shared by all") as e:
            wh.sql(text)
        assert e.value.rule == "table-must-exist" and e.value.table == "default.t"
    assert _files(tmp_path) == before
    assert wh.table("t.branch_dev").branch_name == "dev"
    assert wh.table("default.t.tag_v1").selected == ("tag", "v1")
    assert wh.list_tables() == ["default.t"]
