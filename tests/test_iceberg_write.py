"""schemalab writes Iceberg tables (issue 24), judged by pyiceberg: every table written here
is opened with ``StaticTable.from_metadata`` and read at every snapshot, equal to
schemalab's read; pyiceberg's scan planning (partition pruning by our partition values,
file skipping by our column bounds) must find every row. Plus the metadata the spec asks
for (layout, ids, sequence numbers, logs, summaries), Iceberg's ALTER rules and messages,
and commits that lose nothing. Java Iceberg judges the same tables in
``tests/test_interop_iceberg_write.py``."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.iceberg import locate
from schemalab.iceberg.locate import find_current_metadata
from schemalab.iceberg.manifests import decode_bound
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.alter import promotion_allowed
from schemalab.iceberg.write.schema_json import primitive

pyiceberg = pytest.importorskip("pyiceberg")

CREATE = """CREATE TABLE t (id INT NOT NULL, name STRING, s STRUCT<x: INT, y: STRING>,
  tags ARRAY<STRING>, m MAP<STRING, BIGINT>, ts TIMESTAMP, tn TIMESTAMP_NTZ,
  d DECIMAL(10, 2), dt DATE, b BINARY, f DOUBLE, bo BOOLEAN)
  USING iceberg PARTITIONED BY ({parts}) TBLPROPERTIES ('format-version' = '{v}')"""
ROWS = """INSERT INTO t VALUES
  (1, 'abcdefghijklmnopqrstuvwxyz', named_struct('x', 1, 'y', 'q'), array('a', 'b'),
   map('k', 5L), TIMESTAMP'2024-01-02 03:04:05', TIMESTAMP_NTZ'2024-01-02 03:04:05', 1.25,
   DATE'2024-05-06', X'0102', 1.5, true),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (-7, 'zz', named_struct('x', NULL, 'y', NULL), array(), map(), TIMESTAMP'1969-12-31 23:59:59',
   TIMESTAMP_NTZ'1900-01-01 00:00:00', -0.01, DATE'1960-02-29', X'', double('NaN'), false)"""


def _norm(v: Any) -> Any:
    """One value as both readers can agree on it."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return "TS:" + v.isoformat()
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v
    if isinstance(v, Decimal):
        return "D:" + str(v)
    if isinstance(v, bytes | bytearray):
        return "B:" + bytes(v).hex()
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return sorted([_norm(k), _norm(x)] for k, x in v)  # a map
        return [_norm(x) for x in v]
    if isinstance(v, tuple):
        return [_norm(x) for x in v]
    return v


def _rows(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(_norm(r), sort_keys=True, default=str) for r in records)


def ours(table: Any, snapshot_id: int | None) -> list[str]:
    df = table.read(snapshot_id=snapshot_id)
    out = []
    for row in df.collect():
        rec = row.asDict(recursive=True)
        out.append({k: sorted(v.items()) if isinstance(v, dict) and _is_map(df, k) else v
                    for k, v in rec.items()})
    return _rows(out)


def _is_map(df: Any, column: str) -> bool:
    from pyspark.sql.types import MapType

    return isinstance(df.schema[column].dataType, MapType)


def pyiceberg_rows(metadata_file: str, snapshot_id: int | None,
                   row_filter: str | None = None) -> list[str]:
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(metadata_file)
    scan = t.scan(snapshot_id=snapshot_id) if row_filter is None else \
        t.scan(snapshot_id=snapshot_id, row_filter=row_filter)
    return _rows(scan.to_arrow().to_pylist())


def assert_pyiceberg_reads_like_us(table: Any) -> None:
    """At every snapshot (the last one is the current read)."""
    table.refresh()
    assert table.snapshots[-1].snapshot_id == table.metadata.current_snapshot_id
    for snap in [s.snapshot_id for s in table.snapshots]:
        assert pyiceberg_rows(table.metadata_file, snap) == ours(table, snap), snap


@pytest.mark.parametrize("version", [1, 2, 3])
def test_pyiceberg_reads_every_snapshot(version: int, tmp_path: Path, spark: Any) -> None:
    """CREATE with transforms, INSERT (SQL, pandas, Spark), ALTERs between: pyiceberg reads
    each snapshot as schemalab does, and its pruning by our partition values and column
    bounds finds every row."""
    import pandas as pd

    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    parts = "bucket(4, id), days(ts), truncate(3, name), months(dt), bo"
    wh.sql(CREATE.format(parts=parts, v=version))
    wh.sql(ROWS)
    wh.sql("ALTER TABLE t ADD COLUMN s.z BIGINT AFTER x; ALTER TABLE t ALTER COLUMN id TYPE "
           "BIGINT; ALTER TABLE t RENAME COLUMN s.y TO yy")
    t = wh.table("t")
    t.insert(pd.DataFrame({"id": [10, 11], "name": ["pandas", None], "f": [0.5, -1.0]}))
    if version == 2:  # a Spark DataFrame too
        t.insert(spark.createDataFrame([(12, "spark")], "id BIGINT, name STRING"))
    assert_pyiceberg_reads_like_us(t)
    for condition, ids in [("id == 1", [1]), ("id == 10", [10]), ("name == 'zz'", [-7]),
                           ("ts < '2000-01-01T00:00:00+00:00'", [-7]),
                           ("dt == '2024-05-06'", [1]), ("name == 'pandas'", [10])]:
        found = pyiceberg_rows(t.metadata_file, None, condition)
        assert sorted(json.loads(r)["id"] for r in found) == ids, condition


def test_metadata_as_the_spec_says(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(parts="dt", v=2))
    tdir = tmp_path / "default" / "t"
    assert (tdir / "metadata" / "v1.metadata.json").exists()
    assert (tdir / "metadata" / "version-hint.text").read_text() == "1"
    first = json.loads((tdir / "metadata" / "v1.metadata.json").read_text())
    ids = [(f["name"], f["id"]) for f in first["schemas"][0]["fields"]]
    assert ids[:4] == [("id", 1), ("name", 2), ("s", 3), ("tags", 4)]
    assert first["last-column-id"] == 17  # 12 columns, s.x, s.y, element, key, value
    assert first["schemas"][0]["fields"][2]["type"]["fields"][0]["id"] == 13
    assert first["partition-specs"] == [{"spec-id": 0, "fields": [
        {"name": "dt", "transform": "identity", "source-id": 9, "field-id": 1000}]}]
    assert first["last-partition-id"] == 1000 and first["current-snapshot-id"] == -1
    wh.sql(ROWS)
    wh.sql("ALTER TABLE t ADD COLUMN extra STRING")
    wh.sql(ROWS)
    d = json.loads((tdir / "metadata" / "v4.metadata.json").read_text())
    assert (tdir / "metadata" / "version-hint.text").read_text() == "4"
    assert [s["sequence-number"] for s in d["snapshots"]] == [1, 2]
    assert d["last-sequence-number"] == 2
    assert [s["schema-id"] for s in d["snapshots"]] == [0, 1]
    assert d["snapshots"][1]["parent-snapshot-id"] == d["snapshots"][0]["snapshot-id"]
    assert [e["snapshot-id"] for e in d["snapshot-log"]] == [s["snapshot-id"]
                                                            for s in d["snapshots"]]
    assert [os.path.basename(e["metadata-file"]) for e in d["metadata-log"]] == [
        "v1.metadata.json", "v2.metadata.json", "v3.metadata.json"]
    summary = d["snapshots"][1]["summary"]
    assert summary["operation"] == "append"
    assert summary["added-records"] == "3" and summary["total-records"] == "6"
    assert summary["added-data-files"] == "3" and summary["total-data-files"] == "6"
    assert summary["changed-partition-count"] == "3"
    assert d["refs"] == {"main": {"snapshot-id": d["current-snapshot-id"], "type": "branch"}}
    # data files under data/<partition>/, Parquet with Iceberg's field ids on every field
    files = sorted(p.relative_to(tdir) for p in tdir.rglob("*.parquet"))
    assert files and all(str(f).startswith("data/dt=") for f in files)
    import pyarrow.parquet as pq

    schema = pq.read_schema(tdir / files[0])
    assert schema.field("m").metadata[b"PARQUET:field_id"] == b"5"
    assert schema.field("m").type.key_field.metadata[b"PARQUET:field_id"] == b"16"
    assert schema.field("tags").type.value_field.metadata[b"PARQUET:field_id"] == b"15"


def test_column_stats_in_single_value_form(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(CREATE.format(parts="bo", v=2))
    wh.sql(ROWS)
    t = wh.table("t")
    falses = next(f.entry for f in t.data_files() if f.entry.partition[1000] is False)
    schema = t.schema
    assert falses.record_count == 1 and falses.value_counts[1] == 1
    assert falses.null_counts[2] == 0
    lower = {schema.full_name(i): decode_bound(b, schema.find(i).type)
             for i, b in falses.lower_bounds.items()}
    assert lower["id"] == -7 and lower["name"] == "zz" and lower["d"] == Decimal("-0.01")
    assert lower["dt"] == dt.date(1960, 2, 29)
    trues = next(f.entry for f in t.data_files() if f.entry.partition[1000] is True)
    # strings truncated to 16 characters, the upper bound's last one incremented
    assert trues.lower_bounds[2] == b"abcdefghijklmnop"
    assert trues.upper_bounds[2] == b"abcdefghijklmnoq"
    assert 11 not in trues.lower_bounds  # no bounds for doubles (NaN), as Java's footer
    assert trues.lower_bounds[13] == (1).to_bytes(4, "little")  # s.x: structs are looked into
    assert 15 not in trues.lower_bounds  # list elements are not, as Java's footer metrics

def test_version_1_and_3_metadata(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE a (x INT) PARTITIONED BY (x) TBLPROPERTIES ('format-version'='1')")
    wh.sql("CREATE TABLE c (x INT) TBLPROPERTIES ('format-version'='3')")
    wh.sql("INSERT INTO a VALUES (1), (2); INSERT INTO c VALUES (1), (2); "
           "INSERT INTO c VALUES (3)")
    a = json.loads(Path(find_current_metadata(str(tmp_path / "default" / "a"))).read_text())
    assert a["format-version"] == 1 and "last-sequence-number" not in a
    assert a["schema"]["fields"] == a["schemas"][0]["fields"]
    assert a["partition-spec"] == a["partition-specs"][0]["fields"]
    assert "sequence-number" not in a["snapshots"][0]
    c = json.loads(Path(find_current_metadata(str(tmp_path / "default" / "c"))).read_text())
    assert c["next-row-id"] == 3
    assert [(s["first-row-id"], s["added-rows"]) for s in c["snapshots"]] == [(0, 2), (2, 1)]
    assert_pyiceberg_reads_like_us(wh.table("a"))
    assert_pyiceberg_reads_like_us(wh.table("c"))
    with pytest.raises(SchemaLabError, match="Unsupported format version: v4") as e:
        wh.sql("CREATE TABLE z (x INT) TBLPROPERTIES ('format-version'='4')")
    assert e.value.rule == "iceberg-format-version"


def test_warehouse_catalog(tmp_path: Path, spark: Any) -> None:
    """Iceberg tables live in HadoopCatalog's <wh>/<db>/<table>, Paimon's in <db>.db;
    USING picks per table in either kind of warehouse."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE p (x INT); CREATE TABLE db.i (x INT) USING iceberg")
    assert (tmp_path / "default.db" / "p" / "schema").is_dir()
    assert (tmp_path / "db" / "i" / "metadata" / "v1.metadata.json").is_file()
    assert wh.list_tables() == ["db.i", "default.p"]
    assert wh.list_databases() == ["db", "default"]
    iwh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    iwh.sql("CREATE TABLE q (x INT); CREATE TABLE r (x INT) USING paimon")
    assert (tmp_path / "default" / "q" / "metadata").is_dir()
    assert (tmp_path / "default.db" / "r" / "schema").is_dir()
    with pytest.raises(SchemaLabError, match="already exists"):
        iwh.sql("CREATE TABLE p (x INT)")
    iwh.sql("INSERT INTO db.i VALUES (1); INSERT INTO p SELECT x + 1 FROM db.i")
    assert [r[0] for r in iwh.sql("SELECT * FROM p").collect()] == [2]
    rows = iwh.sql("DESCRIBE db.i").collect()
    assert [(r.col_name, r.data_type, r.field_id) for r in rows] == [("x", "int", 1)]
    iwh.sql("DROP TABLE db.i")
    assert not (tmp_path / "db" / "i").exists() and "db.i" not in iwh.list_tables()
    with pytest.raises(SchemaLabError, match="partition transform") as e:
        wh.sql("CREATE TABLE w (x INT) PARTITIONED BY (bucket(2, x))")
    assert e.value.rule == "unsupported-sql"
    with pytest.raises(SchemaLabError, match="Cannot add redundant partition: 1000: ts_day: "
                                             r"day\(1\) conflicts with 1001: ts_month") as e:
        wh.sql("CREATE TABLE w (ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts), "
               "months(ts))")
    with pytest.raises(SchemaLabError, match="ALTER TABLE .. ADD PARTITION FIELD is Iceberg's"):
        wh.sql("ALTER TABLE p ADD PARTITION FIELD x")


def test_partition_evolution_then_inserts(tmp_path: Path, spark: Any) -> None:
    """Files of three specs (v1: a dropped field stays as void) read by pyiceberg as by
    schemalab, each snapshot; pruning by the new spec's values finds the rows."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, ts TIMESTAMP, s STRING) PARTITIONED BY (days(ts)) "
           "TBLPROPERTIES ('format-version' = '1')")
    wh.sql("INSERT INTO t VALUES (1, TIMESTAMP'2024-01-01 10:00:00', 'a')")
    wh.sql("ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH hours(ts); "
           "ALTER TABLE t ADD PARTITION FIELD bucket(3, id)")
    wh.sql("INSERT INTO t VALUES (2, TIMESTAMP'2024-01-02 11:00:00', 'b'), (3, NULL, NULL)")
    wh.sql("ALTER TABLE t DROP PARTITION FIELD id_bucket_3; ALTER TABLE t ADD PARTITION "
           "FIELD truncate(2, s) AS s2")
    wh.sql("INSERT INTO t VALUES (4, TIMESTAMP'2024-01-03 12:00:00', 'cde')")
    t = wh.table("t")
    assert [f.transform for f in t.metadata.spec(t.metadata.default_spec_id).fields] == [
        "void", "hour", "void", "truncate[2]"]
    assert_pyiceberg_reads_like_us(t)
    found = pyiceberg_rows(t.metadata_file, None, "id == 2 and s == 'b'")
    assert [json.loads(r)["id"] for r in found] == [2]


# ---- ALTER: Iceberg's rules ---------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "version", "ok"), [
    ("int", "long", 1, True), ("float", "double", 2, True), ("long", "int", 2, False),
    ("decimal(9,2)", "decimal(12,2)", 2, True), ("decimal(9,2)", "decimal(12,3)", 2, False),
    ("decimal(9,2)", "decimal(7,2)", 2, False), ("date", "timestamp", 2, False),
    ("date", "timestamp", 3, False), ("int", "string", 3, False), ("int", "double", 2, False),
])
def test_promotions(old: str, new: str, version: int, ok: bool) -> None:
    assert promotion_allowed(primitive(old), primitive(new), version) is ok


REFUSED = [
    ("ALTER TABLE t ALTER COLUMN a TYPE STRING", "Cannot change column type: a: int -> string"),
    ("ALTER TABLE t ALTER COLUMN d TYPE DECIMAL(9, 3)",
     "Cannot change column type: d: decimal(9, 2) -> decimal(9, 3)"),
    ("ALTER TABLE t ALTER COLUMN a SET NOT NULL",
     "Cannot change column nullability: a: optional -> required"),
    ("ALTER TABLE t ADD COLUMN a INT", "Cannot add column, name already exists: a"),
    ("ALTER TABLE t ADD COLUMN s.x INT", "Cannot add column, name already exists: s.x"),
    ("ALTER TABLE t ADD COLUMN a.q INT", "Cannot add to non-struct column: a: int"),
    ("ALTER TABLE t ADD COLUMN nope.q INT", "Cannot find parent struct: nope"),
    ("ALTER TABLE t ADD COLUMN n INT NOT NULL",
     "Incompatible change: cannot add required column without a default value: n"),
    ("ALTER TABLE t DROP COLUMN nope", "Cannot delete missing column: nope"),
    ("ALTER TABLE t RENAME COLUMN nope TO x", "Cannot rename missing column: nope"),
    ("ALTER TABLE t RENAME COLUMN a TO d", "Invalid schema: multiple fields for name d"),
    ("ALTER TABLE t DROP COLUMN p", "Cannot find source column for partition field: 1000: "
                                    "p: identity(5) (table default.t: column p"),
    ("ALTER TABLE t ALTER COLUMN dt TYPE TIMESTAMP_NTZ",
     "Cannot change column type: dt: date -> timestamp"),
]


@pytest.mark.parametrize(("statement", "message"), REFUSED)
def test_refused_alters(statement: str, message: str, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT, s STRUCT<x: INT>, d DECIMAL(9, 2), dt DATE, p STRING) "
           "PARTITIONED BY (p)")
    before = sorted(os.listdir(tmp_path / "default" / "t" / "metadata"))
    with pytest.raises(SchemaLabError) as e:
        wh.sql(statement)
    assert message in str(e.value) and "default.t" in str(e.value)
    assert e.value.rule == ("iceberg-source-column-in-use" if "source column" in message
                            else "iceberg-schema-update")
    assert sorted(os.listdir(tmp_path / "default" / "t" / "metadata")) == before


def test_alters_evolve_schemas(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT NOT NULL, s STRUCT<x: INT, y: STRING>, f FLOAT, "
           "d DECIMAL(9, 2), dt DATE) TBLPROPERTIES ('format-version' = '3')")
    steps = [
        ("ALTER TABLE t ADD COLUMN b STRING FIRST", ["b", "a", "s", "f", "d", "dt"]),
        ("ALTER TABLE t ADD COLUMN s.z BIGINT AFTER x", None),
        ("ALTER TABLE t RENAME COLUMN s.y TO why", None),
        ("ALTER TABLE t ALTER COLUMN a DROP NOT NULL", None),
        ("ALTER TABLE t ALTER COLUMN f TYPE DOUBLE", None),
        ("ALTER TABLE t ALTER COLUMN d TYPE DECIMAL(20, 2)", None),
        ("ALTER TABLE t ALTER COLUMN a COMMENT 'the key'", None),
        ("ALTER TABLE t ALTER COLUMN b AFTER dt", ["a", "s", "f", "d", "dt", "b"]),
        ("ALTER TABLE t DROP COLUMN f", ["a", "s", "d", "dt", "b"]),
    ]
    for i, (statement, names) in enumerate(steps, start=1):
        wh.sql(statement)
        t = wh.table("t")
        assert t.schema.schema_id == i and len(t.schemas) == i + 1
        if names:
            assert [f.name for f in t.schema.fields] == names
    m = wh.table("t").metadata
    s = m.schema()
    assert m.last_column_id == 9  # a s f d dt, s.x s.y; then b (8) and s.z (9)
    assert [(f.name, f.id) for f in s.find(2).type.fields] == [("x", 6), ("z", 9),
                                                                ("why", 7)]  # type: ignore
    assert s.find(1).required is False and s.find(1).doc == "the key"  # type: ignore
    assert str(s.find(4).type) == "decimal(20, 2)" and str(s.find(5).type) == "date"
    # v3's date -> timestamp: refused as Java Iceberg 1.12 refuses it (it cannot read it)
    with pytest.raises(SchemaLabError, match="Cannot change column type: dt: date -> "
                       "timestamp") as e:
        wh.sql("ALTER TABLE t ALTER COLUMN dt TYPE TIMESTAMP_NTZ")
    assert e.value.column == "dt" and e.value.table == "default.t"


# ---- commits -------------------------------------------------------------------------------


def test_racing_commits_lose_nothing(tmp_path: Path) -> None:
    """Four writers commit 10 changes each to one table at once: every commit that returned
    is in the history, versions are contiguous, the hint names the last."""
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT)")
    path = str(tmp_path / "default" / "t")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(10):
                def change(d: dict[str, Any], key: str = f"race.{n}.{i}") -> dict[str, Any]:
                    d["properties"][key] = "1"
                    return d

                commits.commit(path, "default.t", change)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    meta = sorted(n for n in os.listdir(Path(path) / "metadata") if n.endswith(".json"))
    assert len(meta) == 41
    d = json.loads((Path(path) / "metadata" / "v41.metadata.json").read_text())
    assert {k for k in d["properties"] if k.startswith("race.")} == {
        f"race.{n}.{i}" for n in range(4) for i in range(10)}
    assert (Path(path) / "metadata" / "version-hint.text").read_text() == "41"
    assert len(d["metadata-log"]) == 40


def test_commit_between_listing_and_hint(tmp_path: Path, monkeypatch: Any) -> None:
    """A commit that lands just after a reader listed metadata/: the reader gets the version
    it listed, never a hint naming a file it has not listed (CI saw 'corrupt-file' from
    such a race when the hint was read after the listing)."""
    wh = sl.Warehouse(tmp_path, format="iceberg")
    wh.sql("CREATE TABLE t (a INT)")
    path = str(tmp_path / "default" / "t")
    real = locate.fileio.list_names
    raced: list[str] = []

    def list_names(p: str) -> list[str]:
        names = real(p)
        if not raced:
            raced.append(p)
            sl.Warehouse(tmp_path, format="iceberg").sql("ALTER TABLE t ADD COLUMN b INT")
        return names

    monkeypatch.setattr(locate.fileio, "list_names", list_names)
    assert os.path.basename(find_current_metadata(path)) == "v1.metadata.json"
    assert raced
    assert os.path.basename(find_current_metadata(path)) == "v2.metadata.json"


def test_lost_race_is_reapplied(tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    """An INSERT whose v<N+1> another writer took first re-reads, re-applies (its manifest
    list now includes the other snapshot) and commits as v<N+2>."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (a INT); INSERT INTO t VALUES (1)")
    other = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    real = commits.fileio.write_new
    raced = []

    def write_new(p: str, data: Any) -> bool:
        if p.endswith("v3.metadata.json") and not raced:
            raced.append(p)
            other.sql("INSERT INTO t VALUES (2)")  # takes v3 first
        return real(p, data)

    monkeypatch.setattr(commits.fileio, "write_new", write_new)
    wh.sql("INSERT INTO t VALUES (3)")
    monkeypatch.undo()
    t = wh.table("t")
    assert os.path.basename(t.metadata_file) == "v4.metadata.json"
    assert sorted(r[0] for r in t.read().collect()) == [1, 2, 3]
    assert [s.sequence_number for s in t.snapshots] == [1, 2, 3]
    assert_pyiceberg_reads_like_us(t)


def test_a_failed_commit_leaves_nothing_visible(tmp_path: Path, spark: Any,
                                                monkeypatch: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (a INT); INSERT INTO t VALUES (1)")
    tdir = tmp_path / "default" / "t"

    def dies(*_: Any, **__: Any) -> Any:
        raise KeyboardInterrupt  # the writer is stopped before its metadata is linked

    monkeypatch.setattr(commits.fileio, "write_new", dies)
    with pytest.raises(KeyboardInterrupt):
        wh.sql("INSERT INTO t VALUES (2)")
    monkeypatch.undo()
    # a half-written temporary metadata file (hidden) changes nothing either
    (tdir / "metadata" / ".v3.metadata.json.dead.tmp").write_text("{")
    t = wh.table("t")
    assert os.path.basename(t.metadata_file) == "v2.metadata.json"
    assert [r[0] for r in t.read().collect()] == [1]
    assert len(list(tdir.rglob("*.parquet"))) == 1  # the dead write's files were removed
    assert_pyiceberg_reads_like_us(t)


DEFAULTS = ("CREATE TABLE t (id INT) TBLPROPERTIES ('format-version' = '3'); "
            "INSERT INTO t VALUES (1); "
            "ALTER TABLE t ADD COLUMN c STRING DEFAULT 'x'; "
            "ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 7; "
            "ALTER TABLE t ADD COLUMN dd DECIMAL(5, 2) DEFAULT 1.5; "
            "INSERT INTO t (id) VALUES (2); INSERT INTO t VALUES (3, 'y', 8, 2.25)")


def test_v3_defaults(tmp_path: Path, spark: Any) -> None:
    """v3 ADD COLUMN .. DEFAULT writes initial-default (old rows read it) and write-default
    (an INSERT that leaves the column out gets it); before v3 Iceberg refuses it, and
    Paimon adds no column with a default."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(DEFAULTS)
    t = wh.table("t")
    fields = {f.name: f for f in t.schema.fields}
    assert (fields["c"].initial_default, fields["c"].write_default) == ("x", "x")
    assert fields["n"].required and fields["n"].initial_default == 7
    assert fields["dd"].write_default == "1.50"
    assert sorted(map(tuple, t.read().collect())) == [
        (1, "x", 7, Decimal("1.50")), (2, "x", 7, Decimal("1.50")), (3, "y", 8, Decimal("2.25"))]
    assert_pyiceberg_reads_like_us(t)
    wh.sql("CREATE TABLE v2 (id INT)")
    with pytest.raises(SchemaLabError, match=r"Invalid initial default for c: non-null default "
                                             r"\(x\) is not supported until v3") as e:
        wh.sql("ALTER TABLE v2 ADD COLUMN c STRING DEFAULT 'x'")
    assert e.value.rule == "iceberg-column-default"
    wh.sql("CREATE TABLE p (id INT) USING paimon")
    with pytest.raises(SchemaLabError, match="Paimon adds no column with a default") as e:
        wh.sql("ALTER TABLE p ADD COLUMN c INT DEFAULT 1")
    assert e.value.rule == "unsupported-sql"
