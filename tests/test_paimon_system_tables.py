"""Paimon's system tables (``t$snapshots`` …) against pypaimon 2.1.0's own, on tables
pypaimon wrote (evolved append, evolved primary key, full stats with two partition keys,
data evolution, tags and a branch) and on a table schemalab wrote.

pypaimon mirrors Java Paimon's system tables column for column but prints a few values its
own way; where it departs from Java Paimon 2.0's source, schemalab follows Java and the
comparison leaves the column out, saying which:

- ``$files.partition`` / ``$buckets.partition``: Java casts the partition row to STRING
  (``{east, 7}``), pypaimon prints ``p1=east/p2=7``;
- ``$files`` stats: Java prints its ``TreeMap`` (``{a=1, b=x}``, sorted), pypaimon JSON;
  ``$files.file_path``: Java the bucket directory and the name, pypaimon the name alone;
- ``$files.creation_time`` / ``$buckets.last_update_time``: pypaimon cuts the milliseconds,
  ``$tags.create_time`` the microseconds (Java keeps the LocalDateTime whole);
- ``$files.file_source``: Java prints the enum (``APPEND``), pypaimon its number (``0``);
- ``$schemas.options`` / ``$options``: Java reads options into a HashMap and lists them in
  its order (``{"file.format":…,"metadata.stats-mode":…}``), pypaimon in the file's;
- ``$snapshots``: Java 2.0 has ``operation``, pypaimon ``writer_version`` instead;
- ``$partitions.total_buckets`` of an unaware-bucket table: pypaimon 1, the entries -1.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import schemalab as sl
from schemalab.errors import SqlError
from schemalab.paimon.system_tables import SYSTEM_TABLES

TABLES = {"events": ("wh", "demo.events"), "users": ("wh", "demo.users"),
          "full": ("wh5", "s.full")}

#: columns left out of the comparison with pypaimon, per system table (see the docstring)
PYPAIMON_DEPARTS = {
    "snapshots": {"operation", "writer_version"},
    "files": {"partition", "file_path", "null_value_counts", "min_value_stats",
              "max_value_stats", "creation_time", "file_source"},
    "buckets": {"partition", "last_update_time"},
    "partitions": {"total_buckets"},
    "tags": {"create_time"},
    "schemas": {"options"},
}


def _pypaimon(root: Path, ident: str, name: str) -> tuple[list[dict[str, Any]], list[str]]:
    from pypaimon import CatalogFactory

    cat = CatalogFactory.create({"warehouse": str(root)})
    t = cat.get_table(f"{ident}${name}")
    rb = t.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return arrow.to_pylist(), arrow.column_names


def _compare(t: Any, root: Path, ident: str, name: str) -> int:
    ours_df = t.system_table(name)
    ours = [r.asDict() for r in ours_df.collect()]
    columns, _ = SYSTEM_TABLES[name]
    assert ours_df.columns == [c for c, _, _ in columns]
    theirs, their_columns = _pypaimon(root, ident, name)
    skip = PYPAIMON_DEPARTS.get(name, set())
    common = [c for c in ours_df.columns if c in their_columns and c not in skip]
    # every column pypaimon has is one of ours (or one it adds in Java's place)
    assert set(their_columns) - set(ours_df.columns) <= skip
    if name == "files":
        for r in ours:
            r["file_name"] = os.path.basename(r["file_path"])
        for r in theirs:
            r["file_name"] = r["file_path"]
        common.append("file_name")
    key = "file_name" if name == "files" else common[0]
    assert sorted(([r[c] for c in common] for r in ours), key=lambda v: str(v[common.index(
        key)])) == sorted(([r[c] for c in common] for r in theirs),
                          key=lambda v: str(v[common.index(key)]))
    return len(ours)


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory, pypaimon_warehouses: Path) -> Path:
    """The pypaimon fixture warehouses, plus tags and a branch on demo.users."""
    from pypaimon import CatalogFactory

    root = tmp_path_factory.mktemp("systables")
    for wh in ("wh", "wh5"):
        shutil.copytree(pypaimon_warehouses / wh, root / wh)
    cat = CatalogFactory.create({"warehouse": str(root / "wh")})
    cat.create_tag("demo.users", "v1", snapshot_id=1)
    cat.create_tag("demo.users", "daily", time_retained="1 h")
    cat.create_branch("demo.users", "dev", tag_name="v1")
    return root


@pytest.mark.parametrize("key", list(TABLES))
@pytest.mark.parametrize("name", list(SYSTEM_TABLES))
def test_system_tables_agree_with_pypaimon(key: str, name: str, warehouses: Path,
                                           spark: Any) -> None:
    wh, ident = TABLES[key]
    db, table = ident.split(".")
    t = sl.open_table(warehouses / wh / f"{db}.db" / table, spark=spark)
    n = _compare(t, warehouses / wh, ident, name)
    if name in ("snapshots", "schemas", "files", "manifests", "buckets"):
        assert n > 0
    if key == "users" and name in ("tags", "branches"):
        assert n == (2 if name == "tags" else 1)


def test_tags_read_as_java_writes_them(warehouses: Path, spark: Any) -> None:
    t = sl.open_table(warehouses / "wh" / "demo.db" / "users", spark=spark)
    rows = {r.tag_name: r for r in t.system_table("$tags").collect()}
    assert rows["v1"].snapshot_id == 1 and rows["v1"].time_retained is None
    assert rows["daily"].time_retained == "PT1H"
    assert rows["daily"].create_time is not None


def test_data_evolution_files_show_row_ids_and_columns(tmp_path: Path, spark: Any) -> None:
    """The metadata of a table schemalab refuses to read is still shown: which file holds
    which columns of which rows."""
    from pypaimon import CatalogFactory, Schema

    cat = CatalogFactory.create({"warehouse": str(tmp_path)})
    cat.create_database("default", True)
    schema = pa.schema([("a", pa.int32()), ("c", pa.string())])
    cat.create_table("default.de", Schema.from_pyarrow_schema(schema, options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true"}), False)
    pt = cat.get_table("default.de")
    wb = pt.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.table({"a": [1, 2], "c": ["x", "y"]}, schema=schema))
    c.commit(w.prepare_commit())
    msgs = wb.new_update().with_update_type(["c"]).update_by_arrow_with_row_id(
        pa.table({"_ROW_ID": pa.array([1], pa.int64()), "c": ["y2"]}))
    wb.new_commit().commit(msgs)
    t = sl.open_table(tmp_path / "default.db" / "de", spark=spark)
    n = _compare(t, tmp_path, "default.de", "files")
    files = sorted(((r.first_row_id, r.write_cols or [], r.record_count)
                    for r in t.system_table("files").collect()), key=str)
    assert n == 2 and files == [(0, ["c"], 2), (0, [], 2)]
    snaps = [(r.snapshot_id, r.next_row_id) for r in t.system_table("snapshots").collect()]
    assert snaps == [(1, 2), (2, 2)]


def test_system_tables_through_sql(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
              TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2');
              INSERT INTO t VALUES (1, 'a', 'p1'), (2, 'b', 'p2');
              ALTER TABLE t RENAME COLUMN v TO w;
              INSERT INTO t VALUES (1, 'c', 'p1')""")
    snaps = wh.sql("SELECT snapshot_id, schema_id, commit_kind FROM `t$snapshots`").collect()
    assert [tuple(r) for r in snaps] == [(1, 0, "APPEND"), (2, 1, "APPEND")]
    names = wh.sql("SELECT get_json_object(fields, '$[1].name') FROM default.`t$schemas` "
                   "ORDER BY schema_id").collect()
    assert [r[0] for r in names] == ["v", "w"]
    parts = wh.sql("SELECT partition, record_count, file_count FROM `t$partitions`").collect()
    assert [tuple(r) for r in parts] == [("dt=p1", 2, 2), ("dt=p2", 1, 1)]
    joined = wh.sql("SELECT count(*) FROM `t$files` f JOIN `t$snapshots` s "
                    "ON f.schema_id = s.schema_id").collect()[0][0]
    assert joined == 3
    with pytest.raises(SqlError) as e:
        wh.table("t").system_table("$nope")
    assert e.value.rule == "unknown-system-table" and "$snapshots" in str(e.value)
