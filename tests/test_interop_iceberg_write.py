"""Java Iceberg 1.12 judges the Iceberg tables schemalab writes (issue 24):

1. Java's ``HadoopCatalog`` opens ``db.t`` in a schemalab warehouse and reads every snapshot
   equal to schemalab's read (format v1, v2, v3; partition transforms, ALTERs between inserts);
2. Java, given the same statements (its ``UpdateSchema`` calls for each ALTER), writes the
   same schemas, field ids, ``last-column-id`` and partition specs;
3. Java refuses the ALTERs schemalab refuses, with the same message;
4. schemalab and Java commit to one table at once: every commit that reported success is in
   the history.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.java_iceberg import JavaIceberg
from test_iceberg_write import CREATE, REFUSED, ROWS
from test_interop_java_iceberg import comparable

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.iceberg.write import commit as commits

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_catalog_reads_every_snapshot(version: int, tmp_path: Path, spark: Any,
                                           java_iceberg: JavaIceberg) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(parts="bucket(4, id), days(ts), truncate(3, name), years(dt), "
                               "hours(tn)", v=version))
    wh.sql(ROWS)
    wh.sql("ALTER TABLE t ADD COLUMN s.z BIGINT AFTER x; ALTER TABLE t ALTER COLUMN id TYPE "
           "BIGINT; ALTER TABLE t RENAME COLUMN s.y TO yy; ALTER TABLE t DROP COLUMN b")
    wh.sql("INSERT INTO t (id, name, s, f) VALUES (10, 'after', named_struct('x', 3, 'z', 7L, "
           "'yy', 'r'), 2.5)")
    wh.sql("ALTER TABLE t ADD COLUMN late STRING FIRST; ALTER TABLE t REPLACE PARTITION FIELD "
           "ts_day WITH months(ts); ALTER TABLE t DROP PARTITION FIELD id_bucket; "
           "ALTER TABLE t ADD PARTITION FIELD late")
    wh.sql("INSERT INTO t (late, id, name, ts, tn, dt, m) VALUES ('l', 1, 'abc', TIMESTAMP"
           "'2024-03-04 05:06:07', TIMESTAMP_NTZ'2001-01-01 01:01:01', DATE'1999-12-31', "
           "map('x', 1L)), (NULL, 2, NULL, NULL, NULL, NULL, NULL)")
    t = wh.table("t")
    for snap in [None, *(s.snapshot_id for s in t.snapshots)]:
        theirs = java_iceberg.catalog_read(tmp_path, "default.t", snap)
        columns, _, rows = canonical_frame(t.read(snapshot_id=snap))
        assert columns == theirs["columns"], snap
        assert comparable(rows) == comparable(theirs["rows"]), (
            f"v{version} {snap}\n ours: {rows}\n java: {theirs['rows']}")
    assert theirs["snapshots"] == [s.snapshot_id for s in t.snapshots]
    assert theirs["metadata_file"].endswith(t.metadata_file.split("/")[-1])


#: (schemalab statement, Java's UpdateSchema calls for it)
SAME = [
    ("ALTER TABLE t ADD COLUMN b STRING FIRST",
     [["add", None, "b", "string", None], ["first", "b"]]),
    ("ALTER TABLE t ADD COLUMN s.z BIGINT COMMENT 'zed' AFTER x",
     [["add", "s", "z", "long", "zed"], ["after", "s.z", "s.x"]]),
    ("ALTER TABLE t ADD COLUMN n STRUCT<p: INT, q: ARRAY<STRUCT<r: STRING>>>",
     [["add", None, "n", {"type": "struct", "fields": [
         {"id": 1, "name": "p", "required": False, "type": "int"},
         {"id": 2, "name": "q", "required": False, "type": {
             "type": "list", "element-id": 3, "element-required": False, "element": {
                 "type": "struct", "fields": [
                     {"id": 4, "name": "r", "required": False, "type": "string"}]}}}]},
       None]]),
    ("ALTER TABLE t RENAME COLUMN s.y TO why", [["rename", "s.y", "why"]]),
    ("ALTER TABLE t ALTER COLUMN a DROP NOT NULL", [["optional", "a"]]),
    ("ALTER TABLE t ALTER COLUMN f TYPE DOUBLE", [["update", "f", "double"]]),
    ("ALTER TABLE t ALTER COLUMN d TYPE DECIMAL(20, 2)", [["update", "d", "decimal(20, 2)"]]),
    ("ALTER TABLE t ALTER COLUMN a COMMENT 'the key'", [["doc", "a", "the key"]]),
    ("ALTER TABLE t ALTER COLUMN b AFTER dt", [["after", "b", "dt"]]),
    ("ALTER TABLE t DROP COLUMN f", [["delete", "f"]]),
    ("ALTER TABLE t ADD COLUMN f FLOAT", [["add", None, "f", "float", None]]),
]
START = ("CREATE TABLE t (a INT NOT NULL, s STRUCT<x: INT, y: STRING>, f FLOAT, "
         "d DECIMAL(9, 2), dt DATE, m MAP<STRING, STRUCT<k: INT>>) USING iceberg "
         "PARTITIONED BY (bucket(8, a), days(dt), truncate(4, s.y)) "
         "TBLPROPERTIES ('format-version' = '{v}')")


def _java_start_schema() -> dict[str, Any]:
    """START's columns as Java is given them (it assigns its own fresh ids)."""
    def f(i: int, name: str, t: Any, required: bool = False) -> dict[str, Any]:
        return {"id": i, "name": name, "required": required, "type": t}

    return {"type": "struct", "schema-id": 0, "fields": [
        f(101, "a", "int", True),
        f(102, "s", {"type": "struct", "fields": [f(103, "x", "int"), f(104, "y", "string")]}),
        f(105, "f", "float"), f(106, "d", "decimal(9, 2)"), f(107, "dt", "date"),
        f(108, "m", {"type": "map", "key-id": 109, "key": "string", "value-id": 110,
                     "value-required": False,
                     "value": {"type": "struct", "fields": [f(111, "k", "int")]}})]}


def _facts(path: str) -> dict[str, Any]:
    d = json.loads(Path(path.removeprefix("file:")).read_text())
    return {k: d[k] for k in ("last-column-id", "current-schema-id", "schemas",
                              "partition-specs", "default-spec-id", "last-partition-id",
                              "format-version")}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_writes_the_same_metadata(version: int, tmp_path: Path,
                                       java_iceberg: JavaIceberg) -> None:
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql(START.format(v=version))
    for statement, _ in SAME:
        wh.sql(statement)
    theirs = java_iceberg.java_ddl(
        tmp_path / "java", "default.t", _java_start_schema(),
        partitioning=[["bucket", "a", 8], ["day", "dt", None], ["truncate", "s.y", 4]],
        properties={"format-version": str(version)}, statements=[ops for _, ops in SAME])
    assert theirs["errors"] == [None] * len(SAME)
    assert _facts(wh.table("t").metadata_file) == _facts(theirs["metadata_file"])


def _java_refusal(statement: str) -> list[Any]:
    table = {
        "ALTER TABLE t ALTER COLUMN a TYPE STRING": [["update", "a", "string"]],
        "ALTER TABLE t ALTER COLUMN d TYPE DECIMAL(9, 3)": [["update", "d", "decimal(9, 3)"]],
        "ALTER TABLE t ALTER COLUMN a SET NOT NULL": [["require", "a"]],
        "ALTER TABLE t ADD COLUMN a INT": [["add", None, "a", "int", None]],
        "ALTER TABLE t ADD COLUMN s.x INT": [["add", "s", "x", "int", None]],
        "ALTER TABLE t ADD COLUMN a.q INT": [["add", "a", "q", "int", None]],
        "ALTER TABLE t ADD COLUMN nope.q INT": [["add", "nope", "q", "int", None]],
        "ALTER TABLE t ADD COLUMN n INT NOT NULL": [["add_required", "n", "int"]],
        "ALTER TABLE t DROP COLUMN nope": [["delete", "nope"]],
        "ALTER TABLE t DROP COLUMN p": [["delete", "p"]],
        "ALTER TABLE t RENAME COLUMN nope TO x": [["rename", "nope", "x"]],
        "ALTER TABLE t RENAME COLUMN a TO d": [["rename", "a", "d"]],
        "ALTER TABLE t ALTER COLUMN dt TYPE TIMESTAMP_NTZ": [["update", "dt", "timestamp"]],
    }
    return table.get(statement, [])


@pytest.mark.parametrize(("statement", "message"),
                         [r for r in REFUSED if _java_refusal(r[0])])
def test_java_refuses_the_same(statement: str, message: str, tmp_path: Path,
                               java_iceberg: JavaIceberg) -> None:
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "a", "required": False, "type": "int"},
        {"id": 2, "name": "s", "required": False, "type": {"type": "struct", "fields": [
            {"id": 3, "name": "x", "required": False, "type": "int"}]}},
        {"id": 4, "name": "d", "required": False, "type": "decimal(9, 2)"},
        {"id": 5, "name": "dt", "required": False, "type": "date"},
        {"id": 6, "name": "p", "required": False, "type": "string"}]}
    theirs = java_iceberg.java_ddl(tmp_path / "java", "default.t", schema,
                           partitioning=[["identity", "p", None]],
                           statements=[_java_refusal(statement)])
    error = theirs["errors"][0]
    assert error is not None, f"Java accepted {statement}"
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql("CREATE TABLE t (a INT, s STRUCT<x: INT>, d DECIMAL(9, 2), dt DATE, p STRING) "
           "PARTITIONED BY (p)")
    with pytest.raises(SchemaLabError) as e:
        wh.sql(statement)
    assert error in str(e.value)


def test_racing_java_loses_nothing(tmp_path: Path, java_iceberg: JavaIceberg) -> None:
    """schemalab and Java's HadoopTableOperations commit to one table at once."""
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT)")
    path = str(tmp_path / "default" / "t")
    java_done: list[str] = []
    errors: list[BaseException] = []

    def run_java() -> None:
        try:
            java_done.extend(java_iceberg.commit_properties(tmp_path, "default.t", "java.", 25))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=run_java)
    thread.start()
    ours = []
    for i in range(25):
        def change(d: dict[str, Any], key: str = f"ours.{i}") -> dict[str, Any]:
            d["properties"][key] = "1"
            return d

        commits.commit(path, "default.t", change)
        ours.append(f"ours.{i}")
    thread.join()
    assert not errors
    final = wh.table("t").metadata
    assert set(ours) <= set(final.properties)
    assert set(java_done) <= set(final.properties)
    assert java_done, "Java committed nothing"
    assert java_iceberg.catalog_read(tmp_path, "default.t")["rows"] == []


#: partition evolution and identifier fields: (schemalab statement, Java's calls)
EVOLVE = [
    ("ALTER TABLE t ADD PARTITION FIELD bucket(16, a)",
     {"spec": [["add", "bucket[16]", "a", None]]}),
    ("ALTER TABLE t REPLACE PARTITION FIELD dt_day WITH months(dt)",
     {"spec": [["remove", "day", "dt"], ["add", "month", "dt", None]]}),
    ("ALTER TABLE t ADD PARTITION FIELD truncate(4, s.y) AS sy",
     {"spec": [["add", "truncate[4]", "s.y", "sy"]]}),
    ("ALTER TABLE t DROP PARTITION FIELD bucket(16, a)",
     {"spec": [["remove", "bucket[16]", "a"]]}),
    ("ALTER TABLE t ADD PARTITION FIELD bucket(16, a)",
     {"spec": [["add", "bucket[16]", "a", None]]}),
    ("ALTER TABLE t DROP PARTITION FIELD sy", {"spec": [["remove_name", "sy"]]}),
    ("ALTER TABLE t SET IDENTIFIER FIELDS a", [["identifier", ["a"]]]),
]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_evolves_specs_the_same(version: int, tmp_path: Path,
                                     java_iceberg: JavaIceberg) -> None:
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql("CREATE TABLE t (a INT NOT NULL, s STRUCT<x: INT, y: STRING>, f FLOAT, "
           "d DECIMAL(9, 2), dt DATE, m MAP<STRING, STRUCT<k: INT>>) USING iceberg "
           f"PARTITIONED BY (days(dt)) TBLPROPERTIES ('format-version' = '{version}')")
    for statement, _ in EVOLVE:
        wh.sql(statement)
    theirs = java_iceberg.java_ddl(tmp_path / "java", "default.t", _java_start_schema(),
                           partitioning=[["day", "dt", None]],
                           properties={"format-version": str(version)},
                           statements=[ops for _, ops in EVOLVE])
    assert theirs["errors"] == [None] * len(EVOLVE)
    assert _facts(wh.table("t").metadata_file) == _facts(theirs["metadata_file"])


def test_java_reads_v3_defaults(tmp_path: Path, spark: Any, java_iceberg: JavaIceberg) -> None:
    """initial-default for rows written before the column, write-default for an INSERT that
    left it out: Java reads every snapshot as schemalab does."""
    from test_iceberg_write import DEFAULTS

    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(DEFAULTS)
    t = wh.table("t")
    for snap in [s.snapshot_id for s in t.snapshots]:
        theirs = java_iceberg.catalog_read(tmp_path, "default.t", snap)
        columns, _, rows = canonical_frame(t.read(snapshot_id=snap))
        assert columns == theirs["columns"]
        assert comparable(rows) == comparable(theirs["rows"]), snap


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_deletes_and_overwrites(version: int, tmp_path: Path, spark: Any,
                                           java_iceberg: JavaIceberg) -> None:
    """DELETE (rows: v2 position delete files, v3 deletion vectors; a second delete merged
    into one file's deletes; whole files dropped) and INSERT OVERWRITE (static, dynamic)
    after ALTERs and partition evolution: Java's HadoopCatalog reads every snapshot as
    schemalab does, and each delete snapshot's files are the kinds Java writes."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, name STRING, p STRING) PARTITIONED BY (p) "
           f"TBLPROPERTIES ('format-version' = '{version}')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a', 'x'), "
           "(2, 'b', 'x'), (5, 'e', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")
    wh.sql("DELETE FROM t WHERE id IN (1, 3)")
    wh.sql("ALTER TABLE t ADD COLUMN q BIGINT; ALTER TABLE t RENAME COLUMN name TO nm; "
           "ALTER TABLE t ADD PARTITION FIELD bucket(2, id)")
    wh.sql("INSERT INTO t VALUES (6, 'f', 'x', 60), (7, 'g', 'z', 70)")
    wh.sql("DELETE FROM t WHERE id = 2 OR q = 70")
    wh.sql("DELETE FROM t WHERE nm = 'd'")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
    try:
        wh.sql("INSERT INTO t VALUES (8, 'h', 'y', 80)")
        wh.sql("INSERT OVERWRITE t VALUES (9, 'i', 'x', 90), (10, 'j', 'y', 100)")
    finally:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    wh.sql("INSERT INTO t VALUES (11, 'k', 'x', 110)")
    wh.sql("DELETE FROM t WHERE id = 11")
    wh.sql("INSERT OVERWRITE t VALUES (10, 'new', 'y', 0)")
    t = wh.table("t")
    kinds = set()
    for snap in [None, *(s.snapshot_id for s in t.snapshots)]:
        theirs = java_iceberg.catalog_read(tmp_path, "default.t", snap)
        columns, _, rows = canonical_frame(t.read(snapshot_id=snap))
        assert columns == theirs["columns"], snap
        assert comparable(rows) == comparable(theirs["rows"]), (
            f"v{version} {snap}\n ours: {rows}\n java: {theirs['rows']}")
        if snap is not None:
            kinds |= {d.entry.file_format for d in t.delete_files(snap)}
    assert kinds == ({"puffin"} if version == 3 else {"parquet"})
    assert [s.summary["operation"] for s in t.snapshots] == [
        "append", "delete", "append", "delete", "delete", "append", "overwrite", "append",
        "delete", "overwrite"]


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_unpartitioned_deletes(version: int, tmp_path: Path, spark: Any,
                                          java_iceberg: JavaIceberg) -> None:
    """An unpartitioned table: deletes before and after ALTERs, a second delete merged, a
    whole file dropped, both overwrites: Java reads every snapshot as schemalab does."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(f"CREATE TABLE t (id INT, s STRING) TBLPROPERTIES ('format-version' = '{version}')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ id, CAST(id AS STRING) FROM range(8)")
    wh.sql("DELETE FROM t WHERE id % 3 = 0")
    wh.sql("ALTER TABLE t ADD COLUMN d DOUBLE; ALTER TABLE t ALTER COLUMN id TYPE BIGINT; "
           "ALTER TABLE t RENAME COLUMN s TO txt")
    wh.sql("INSERT INTO t VALUES (100, 'x', 1.5)")
    wh.sql("DELETE FROM t WHERE txt IN ('1', '7') OR d > 1")
    wh.sql("INSERT OVERWRITE t VALUES (200, 'y', 2.5)")  # dynamic, unpartitioned: all
    wh.sql("INSERT INTO t VALUES (300, 'z', NULL)")
    wh.sql("DELETE FROM t WHERE id = 300")
    t = wh.table("t")
    for snap in [None, *(s.snapshot_id for s in t.snapshots)]:
        theirs = java_iceberg.catalog_read(tmp_path, "default.t", snap)
        columns, _, rows = canonical_frame(t.read(snapshot_id=snap))
        assert columns == theirs["columns"], snap
        assert comparable(rows) == comparable(theirs["rows"]), snap
    assert [r[0] for r in wh.sql("SELECT id FROM t").collect()] == [200]


def _values(rows: list[list[Any]]) -> str:
    return ", ".join("(" + ", ".join(repr(v) for v in r) + ")" for r in rows)


#: (schemalab statement, Java's) on t (id INT, name STRING, p STRING) PARTITIONED BY (p)
DML: list[tuple[str, dict[str, Any]]] = [
    ("INSERT", {"insert": [[1, "a", "x"], [2, "b", "x"], [5, "e", "x"], [3, "c", "y"],
                           [4, "d", "y"]]}),
    ("DELETE FROM t WHERE id IN (1, 3)", {"delete": ["id", [1, 3]]}),
    ("DELETE FROM t WHERE id = 2", {"delete": ["id", [2]]}),  # merged with x's first delete
    ("DELETE FROM t WHERE id = 4", {"delete": ["id", [4]]}),  # y's last row: merged too
    ("INSERT", {"insert": [[6, "f", "x"], [7, "g", "z"], [8, "h", "z"]]}),
    ("DELETE FROM t WHERE id = 7", {"delete": ["id", [7]]}),
    ("DELETE FROM t WHERE id = 99", {"delete": ["id", [99]]}),  # no row: an empty commit
    ("OVERWRITE dynamic", {"overwrite": [[9, "i", "z"]], "dynamic": True}),
    ("DELETE FROM t WHERE p = 'y'", {"delete": ["p", ["y"]]}),  # metadata delete
    ("DELETE FROM t WHERE id IN (5, 6)", {"delete": ["id", [5, 6]]}),
    ("OVERWRITE static", {"overwrite": [[10, "j", "x"], [11, "k", "y"]], "dynamic": False}),
    ("DELETE FROM t WHERE id = 11", {"delete": ["id", [11]]}),  # a whole file, no deletes
    ("DELETE FROM t", {"delete": [None, None]}),
]
#: summary values that differ by the writers' bytes, not by what was committed
_SIZES = ("added-files-size", "removed-files-size", "total-files-size", "iceberg-version",
          "engine-name", "engine-version")


@pytest.mark.parametrize("version", [2, 3])
def test_java_writes_the_same_deletes(version: int, tmp_path: Path, spark: Any,
                                      java_iceberg: JavaIceberg) -> None:
    """Java given the same statements (its writers and producers as Iceberg's Spark uses
    them) commits the same operations, with the same summary keys and counts, and adds
    delete files of the same kind (v2 Parquet position deletes, v3 Puffin DVs)."""
    theirs = java_iceberg.java_dml(
        tmp_path / "java", "default.t", {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": False, "type": "int"},
            {"id": 2, "name": "name", "required": False, "type": "string"},
            {"id": 3, "name": "p", "required": False, "type": "string"}]},
        identity=["p"], properties={"format-version": str(version)},
        statements=[java_stmt for _, java_stmt in DML])
    wh = sl.Warehouse(tmp_path / "ours", spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, name STRING, p STRING) PARTITIONED BY (p) "
           f"TBLPROPERTIES ('format-version' = '{version}')")
    try:
        for (statement, java_stmt), java_snap in zip(DML, theirs, strict=True):
            before = wh.table("t").metadata.current_snapshot_id
            rows = java_stmt.get("insert") or java_stmt.get("overwrite")
            if rows is not None:
                mode = "dynamic" if java_stmt.get("dynamic", True) else "static"
                spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
                verb = "INTO" if "insert" in java_stmt else "OVERWRITE"
                statement = (f"INSERT {verb} t SELECT /*+ REPARTITION(1) */ * FROM VALUES "
                             + _values(rows))
            wh.sql(statement)
            t = wh.table("t")
            snap = t.current_snapshot
            assert snap is not None and snap.snapshot_id != before, statement
            assert java_snap is not None, statement
            ours = dict(snap.summary)
            theirs_summary = {"operation": java_snap["operation"], **java_snap["summary"]}
            assert {k: v for k, v in ours.items() if k not in _SIZES} == \
                {k: v for k, v in theirs_summary.items() if k not in _SIZES}, statement
            # Java's library names its build, schemalab itself (engine_summary)
            assert set(ours) - {"engine-name", "engine-version"} == \
                set(theirs_summary) - {"iceberg-version"}, statement
            formats = sorted({d.entry.file_format.upper() for d in t.delete_files()
                              if d.entry.snapshot_id == snap.snapshot_id})
            assert formats == java_snap["delete_formats"], statement
    finally:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    assert ids_of(wh) == []


def ids_of(wh: sl.Warehouse) -> list[int]:
    return sorted(r[0] for r in wh.sql("SELECT id FROM t").collect())
