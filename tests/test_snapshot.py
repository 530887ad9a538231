"""Snapshot files, the snapshot directory, live files; and a table pypaimon reads back."""

from __future__ import annotations

import os
import threading
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from schemalab.errors import CorruptFileError, SchemaLabError, UnsupportedVersionError
from schemalab.paimon.binaryrow import EMPTY_ROW, encode_row
from schemalab.paimon.listing import (
    ManifestListRead,
    ManifestRead,
    live_files,
    manifest_tree,
    replay,
)
from schemalab.paimon.manifest import (
    DataFileMeta,
    FileKind,
    FileNamer,
    FileSource,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)
from schemalab.paimon.manifest_codec import manifest_file_meta, write_manifest, write_manifest_list
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, SnapshotManager
from schemalab.schema.apply import new_table_schema
from schemalab.schema.changes import ColumnSpec
from schemalab.schema.table_schema import TableSchema
from schemalab.types.arrow import arrow_schema
from schemalab.types.model import DECIMAL, INT, STRING

TABLES = {("wh", "demo", "events"): [1, 2], ("wh", "demo", "users"): [1, 2, 3],
          ("wh5", "s", "full"): [1], ("wh6", "n", "t"): [1]}


def _table(root: Path, wh: str, db: str, name: str) -> str:
    return str(root / wh / f"{db}.db" / name)


def _snapshot(sid: int = 1, **kw: Any) -> Snapshot:
    base: dict[str, Any] = dict(
        id=sid, schema_id=0, base_manifest_list=f"manifest-list-a-{2 * sid}",
        delta_manifest_list=f"manifest-list-a-{2 * sid + 1}", commit_user="u",
        commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind="APPEND", time_millis=1,
        total_record_count=0, delta_record_count=0)
    base.update(kw)
    return Snapshot(**base)


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def test_fixture_snapshots_round_trip_byte_exact(pypaimon_warehouses: Path) -> None:
    for (wh, db, name), ids in TABLES.items():
        sm = SnapshotManager(_table(pypaimon_warehouses, wh, db, name))
        assert sm.list_ids() == ids
        for sid in ids:
            raw = Path(sm.path(sid)).read_text()
            snap = sm.get(sid)
            assert snap.layout == "python"
            assert snap.to_json() == raw
            as_java = snap.to_json("java")
            assert Snapshot.from_json(as_java).with_changes(layout="python") == snap


def test_fixture_snapshot_fields(pypaimon_warehouses: Path) -> None:
    snap = SnapshotManager(_table(pypaimon_warehouses, "wh", "demo", "events")).get(2)
    assert (snap.version, snap.id, snap.schema_id) == (3, 2, 5)
    assert snap.base_manifest_list == "manifest-list-fda3a856-8f26-4b19-944c-64df6fed5f60-0"
    assert (snap.base_manifest_list_size, snap.delta_manifest_list_size) == (1357, 1356)
    assert (snap.total_record_count, snap.delta_record_count) == (5, 2)
    assert snap.commit_identifier == BATCH_COMMIT_IDENTIFIER == 2**63 - 1
    assert snap.commit_kind == "APPEND"
    assert snap.writer_version == "python-2.1.0-3a5ffe7870697e2c2605e63413fb5ac5800aae7e"
    assert snap.changelog_manifest_list is None and snap.extra == {}


def test_java_layout_follows_the_json_creator_order() -> None:
    snap = _snapshot(
        uuid="u-1", base_manifest_list_size=1, delta_manifest_list_size=2,
        changelog_manifest_list="manifest-list-c", changelog_manifest_list_size=3,
        index_manifest="index-manifest-x", writer_version="java-9", changelog_record_count=4,
        watermark=-5, statistics="stat-x", properties={"k": "v"}, next_row_id=6,
        operation="WRITE")
    keys = [line.split('"')[1] for line in snap.to_json().splitlines()[1:-1]
            if line.startswith('  "')]
    assert keys == ["version", "uuid", "id", "schemaId", "baseManifestList",
                    "baseManifestListSize", "deltaManifestList", "deltaManifestListSize",
                    "changelogManifestList", "changelogManifestListSize", "indexManifest",
                    "commitUser", "writerVersion", "commitIdentifier", "commitKind",
                    "timeMillis", "totalRecordCount", "deltaRecordCount",
                    "changelogRecordCount", "watermark", "statistics", "properties",
                    "nextRowId", "operation"]
    assert '  "properties" : {\n    "k" : "v"\n  },\n' in snap.to_json()
    assert Snapshot.from_json(snap.to_json()) == snap


# Java-written snapshot-1 from apache/paimon docs/docs/learn-paimon/understand-files.mdx
# (Paimon 0.5): explicit nulls and the since-removed logOffsets.
OLD_JAVA_SNAPSHOT = """{
  "version" : 3,
  "id" : 1,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-4ccc-c07f-4090-958c-cfe3ce3889e5-0",
  "deltaManifestList" : "manifest-list-4ccc-c07f-4090-958c-cfe3ce3889e5-1",
  "changelogManifestList" : null,
  "commitUser" : "7d758485-981d-4b1a-a0c6-d34c3eb254bf",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "APPEND",
  "timeMillis" : 1684155393354,
  "logOffsets" : { },
  "totalRecordCount" : 1,
  "deltaRecordCount" : 1,
  "changelogRecordCount" : 0,
  "watermark" : -9223372036854775808
}"""


def test_old_java_snapshot_round_trips_byte_exact() -> None:
    snap = Snapshot.from_json(OLD_JAVA_SNAPSHOT)
    assert snap.layout == "java"
    assert snap.explicit_nulls == ("changelogManifestList",)
    assert snap.log_offsets == {} and snap.watermark == -(2**63)
    assert snap.to_json() == OLD_JAVA_SNAPSHOT


def test_unknown_keys_are_kept_and_written_back() -> None:
    text = OLD_JAVA_SNAPSHOT[:-2] + ',\n  "futureThing" : [ 1, 2 ]\n}'
    snap = Snapshot.from_json(text)
    assert snap.extra == {"futureThing": [1, 2]}
    assert snap.to_json() == text


def test_snapshot_without_version_is_version_1() -> None:
    text = OLD_JAVA_SNAPSHOT.replace('  "version" : 3,\n', "")
    snap = Snapshot.from_json(text)
    assert snap.version is None and snap.effective_version == 1
    assert snap.to_json() == text


@pytest.mark.parametrize("version", [4, 0, "3"])
def test_unknown_versions_are_refused(version: Any) -> None:
    text = OLD_JAVA_SNAPSHOT.replace('"version" : 3', f'"version" : {version!r}'
                                     .replace("'", '"'))
    with pytest.raises(UnsupportedVersionError, match="version") as info:
        Snapshot.from_json(text, path="/t/snapshot/snapshot-1")
    assert info.value.path == "/t/snapshot/snapshot-1"


@pytest.mark.parametrize(("text", "message"), [
    ("", "not valid JSON"),
    ("{", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    ("[1]", "JSON object"),
    ('{"version": 3}', "missing required key 'id'"),
    (OLD_JAVA_SNAPSHOT.replace('"id" : 1', '"id" : "1"'), "'id' must be an integer"),
    (OLD_JAVA_SNAPSHOT.replace('"id" : 1', '"id" : 0'), "at least 1"),
    (OLD_JAVA_SNAPSHOT.replace('"commitUser" : "7d', '"commitUser" : 7, "x" : "7d'),
     "'commitUser' must be a string"),
    (OLD_JAVA_SNAPSHOT.replace('"logOffsets" : { }', '"logOffsets" : { "0" : "x" }'),
     "logOffsets"),
    (OLD_JAVA_SNAPSHOT.replace('"logOffsets" : { }', '"properties" : [ ]'), "properties"),
    (OLD_JAVA_SNAPSHOT.replace('"timeMillis" : 1684155393354', '"timeMillis" : true'),
     "'timeMillis' must be an integer"),
])
def test_malformed_snapshots_are_corrupt(text: str | bytes, message: str) -> None:
    with pytest.raises(CorruptFileError, match=message):
        Snapshot.from_json(text, path="p")


# --------------------------------------------------------------------------------------------
# The snapshot directory and its hints
# --------------------------------------------------------------------------------------------


def test_hints_of_the_fixtures(pypaimon_warehouses: Path) -> None:
    sm = SnapshotManager(_table(pypaimon_warehouses, "wh", "demo", "users"))
    assert (sm.latest_id(), sm.earliest_id(), sm.has_snapshots()) == (3, 1, True)
    latest, earliest = sm.latest(), sm.earliest()
    assert latest is not None and latest.id == 3
    assert earliest is not None and earliest.id == 1


def test_empty_table_has_no_snapshots(tmp_path: Path) -> None:
    sm = SnapshotManager(str(tmp_path))
    assert (sm.list_ids(), sm.latest(), sm.earliest(), sm.has_snapshots()) == (
        [], None, None, False)
    with pytest.raises(SchemaLabError, match="Snapshot 1 of table .* does not exist"):
        sm.get(1)


def test_commit_writes_the_file_and_the_hints(tmp_path: Path) -> None:
    sm = SnapshotManager(str(tmp_path))
    assert sm.commit(_snapshot(1))
    assert (tmp_path / "snapshot" / "LATEST").read_bytes() == b"1"
    assert (tmp_path / "snapshot" / "EARLIEST").read_bytes() == b"1"
    assert sm.commit(_snapshot(2))
    assert (tmp_path / "snapshot" / "LATEST").read_bytes() == b"2"
    assert (tmp_path / "snapshot" / "EARLIEST").read_bytes() == b"1"
    assert not sm.commit(_snapshot(2, commit_user="other"))  # create-if-absent
    fresh = SnapshotManager(str(tmp_path))
    assert fresh.get(2).commit_user == "u"
    assert (tmp_path / "snapshot" / "snapshot-2").read_text() == _snapshot(2).to_json()
    assert sorted(os.listdir(tmp_path / "snapshot")) == [
        "EARLIEST", "LATEST", "snapshot-1", "snapshot-2"]


def test_stale_or_bad_hints_fall_back_to_listing(tmp_path: Path) -> None:
    sm = SnapshotManager(str(tmp_path))
    for sid in (1, 2, 3):
        sm.commit(_snapshot(sid))
    latest = tmp_path / "snapshot" / "LATEST"
    for hint in (b"2", b"9", b"-1", b"x", b"", b"3\n"):
        latest.write_bytes(hint)
        assert sm.latest_id() == 3, hint
    latest.unlink()
    assert sm.latest_id() == 3
    earliest = tmp_path / "snapshot" / "EARLIEST"
    (tmp_path / "snapshot" / "snapshot-1").unlink()  # as if expired
    assert sm.earliest_id() == 2  # EARLIEST=1 no longer exists
    earliest.write_bytes(b"3")
    assert sm.earliest_id() == 3  # an existing hinted snapshot is trusted, as in Java


def test_snapshot_file_with_another_id_is_corrupt(tmp_path: Path) -> None:
    sm = SnapshotManager(str(tmp_path))
    sm.commit(_snapshot(1))
    os.rename(sm.path(1), sm.path(5))
    with pytest.raises(CorruptFileError, match="holds snapshot id 1, expected 5"):
        SnapshotManager(str(tmp_path)).get(5)


def test_racing_committers_one_wins(tmp_path: Path) -> None:
    sm = SnapshotManager(str(tmp_path))
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def commit(i: int) -> None:
        barrier.wait()
        results.append(sm.commit(_snapshot(1, commit_user=f"user-{i}")))

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    assert SnapshotManager(str(tmp_path)).get(1).commit_user.startswith("user-")


# --------------------------------------------------------------------------------------------
# Live files
# --------------------------------------------------------------------------------------------


def _pypaimon_files(warehouse: str, identifier: str, snapshot_id: int
                    ) -> set[tuple[tuple[Any, ...], int, str]]:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    splits = table.new_read_builder().new_scan().plan().splits()
    return {(tuple(s.partition.values), s.bucket, f.file_name) for s in splits for f in s.files}


def test_live_files_match_pypaimon_planning(pypaimon_warehouses: Path) -> None:
    for (wh, db, name), ids in TABLES.items():
        table = _table(pypaimon_warehouses, wh, db, name)
        sm = SnapshotManager(table)
        for sid in ids:
            snap = sm.get(sid)
            live = live_files(table, snap)
            schema = SchemaManager(table).get(snap.schema_id)
            ptypes = [schema.type_of(k) for k in schema.partition_keys]
            ours = {(tuple(e.partition_values(ptypes)), e.bucket, e.file.file_name)
                    for e in live}
            assert ours == _pypaimon_files(str(pypaimon_warehouses / wh), f"{db}.{name}", sid)
            assert sum(e.file.row_count for e in live) == snap.total_record_count
            for e in live:  # and every live file is on disk
                parts = [f"{k}={v}" for k, v in zip(schema.partition_keys,
                                                    e.partition_values(ptypes), strict=True)]
                assert os.path.exists(os.path.join(table, *parts, f"bucket-{e.bucket}",
                                                   e.file.file_name))


def test_manifest_tree_shows_where_each_entry_came_from(pypaimon_warehouses: Path) -> None:
    table = _table(pypaimon_warehouses, "wh", "demo", "events")
    tree = manifest_tree(table, SnapshotManager(table).get(2))
    assert [(lst.kind, [m.meta.file_name[:17] for m in lst.manifests]) for lst in tree.lists] \
        == [("base", ["manifest-83d9f8b4"]), ("delta", ["manifest-104df80c"])]
    rows = tree.rows()
    assert len(rows) == 4 and all(r["live"] and r["kind"] == "ADD" for r in rows)
    assert [r["schema_id"] for r in rows] == [0, 0, 5, 5]
    assert [e.file.file_name for e in tree.live] == [r["file_name"] for r in rows]


def _node(*entries: ManifestEntry) -> ManifestListRead:
    meta = ManifestFileMeta("manifest-t-0", 1, 0, 0)
    return ManifestListRead("delta", "manifest-list-t-0",
                            (ManifestRead(meta, entries, "/t/manifest/manifest-t-0"),))


def _e(name: str, kind: FileKind = FileKind.ADD, level: int = 0) -> ManifestEntry:
    return ManifestEntry(kind, EMPTY_ROW, 0, -1, DataFileMeta(name, 1, 1, level=level))


def test_replay_applies_deletes_in_order() -> None:
    lists = (_node(_e("a"), _e("b"), _e("c")),
             _node(_e("b", FileKind.DELETE), _e("b", level=1), _e("zz", FileKind.DELETE)))
    assert [(e.file.file_name, e.file.level) for e in replay(lists)] == [
        ("a", 0), ("c", 0), ("b", 1)]


def test_adding_a_live_file_again_is_corrupt() -> None:
    with pytest.raises(CorruptFileError, match="adds a .* already live") as info:
        replay((_node(_e("a")), _node(_e("a"))))
    assert info.value.path == "/t/manifest/manifest-t-0"


# --------------------------------------------------------------------------------------------
# A table written by schemalab, read by pypaimon
# --------------------------------------------------------------------------------------------

COLUMNS = [ColumnSpec("id", INT()), ColumnSpec("name", STRING()),
           ColumnSpec("amount", DECIMAL(10, 2)), ColumnSpec("dt", STRING())]


def _write_data_file(table: str, schema: TableSchema, dt: str, rows: list[tuple[Any, ...]],
                     *, with_stats: bool = True) -> ManifestEntry:
    """A Parquet file as Paimon writes it (column names = schema names, no field ids) and
    its ADD entry, with value stats over every column (_VALUE_STATS_COLS = null)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = os.path.join(table, f"dt={dt}", "bucket-0")
    os.makedirs(directory, exist_ok=True)
    name = f"data-{uuid.uuid4()}-0.parquet"
    records = [dict(zip(schema.field_names, (*row, dt), strict=True)) for row in rows]
    pq.write_table(pa.Table.from_pylist(records, schema=arrow_schema(schema.fields,
                                                                     with_ids=False)),
                   os.path.join(directory, name))
    types = [f.type for f in schema.fields]
    columns = list(zip(*[(*row, dt) for row in rows], strict=True))
    present = [[v for v in c if v is not None] for c in columns]
    stats = SimpleStats.of([min(c, default=None) for c in present],
                           [max(c, default=None) for c in present],
                           [sum(v is None for v in c) for c in columns], types)
    file = DataFileMeta(name, os.path.getsize(os.path.join(directory, name)), len(rows),
                        value_stats=stats if with_stats else SimpleStats(),
                        value_stats_cols=None if with_stats else (), schema_id=schema.id,
                        creation_time=0, delete_row_count=0, file_source=FileSource.APPEND)
    return ManifestEntry(FileKind.ADD, encode_row([dt], [STRING()]), 0, -1, file)


def _commit(table: str, sid: int, base: list[ManifestFileMeta], entries: list[ManifestEntry],
            flavor: Any, total: int) -> list[ManifestFileMeta]:
    """One commit as Paimon makes it: a manifest for the changes, a delta list naming it, a
    base list naming everything before, then the snapshot."""
    namer = FileNamer()
    manifest_dir = os.path.join(table, "manifest")
    name = namer.new_manifest()
    size = write_manifest(os.path.join(manifest_dir, name), entries, flavor=flavor)
    meta = manifest_file_meta(name, size, entries, [STRING()])
    base_name, delta_name = namer.new_manifest_list(), namer.new_manifest_list()
    base_size = write_manifest_list(os.path.join(manifest_dir, base_name), base, flavor=flavor)
    delta_size = write_manifest_list(os.path.join(manifest_dir, delta_name), [meta],
                                     flavor=flavor)
    delta = sum(e.file.row_count * (1 if e.kind is FileKind.ADD else -1) for e in entries)
    snapshot = Snapshot(
        id=sid, schema_id=0, base_manifest_list=base_name, delta_manifest_list=delta_name,
        commit_user="schemalab-test", commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_kind="APPEND" if sid == 1 else "OVERWRITE", time_millis=1_700_000_000_000 + sid,
        total_record_count=total, delta_record_count=delta, uuid=str(uuid.uuid4()),
        base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
        writer_version="schemalab-test")
    assert SnapshotManager(table).commit(snapshot)
    return [*base, meta]


def _pypaimon_rows(warehouse: str, snapshot_id: int | None = None,
                   predicate: Any = None) -> tuple[list[dict[str, Any]], int]:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("demo.t")
    if snapshot_id is not None:
        table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    builder = table.new_read_builder()
    if predicate is not None:
        builder = builder.with_filter(predicate(builder.new_predicate_builder()))
    splits = builder.new_scan().plan().splits()
    rows = builder.new_read().to_arrow(splits).to_pylist()
    return sorted(rows, key=lambda r: r["id"]), sum(len(s.files) for s in splits)


@pytest.mark.parametrize("flavor", ["pypaimon", "java"])
def test_pypaimon_reads_a_table_written_by_schemalab(tmp_path: Path, flavor: str) -> None:
    warehouse = str(tmp_path / "wh")
    table = os.path.join(warehouse, "demo.db", "t")
    schema = SchemaManager(table).create(new_table_schema(COLUMNS, partition_keys=["dt"]))

    first = [_write_data_file(table, schema, "2024-01-01",
                              [(1, "a", Decimal("1.50")), (2, "b", None)]),
             _write_data_file(table, schema, "2024-01-02", [(3, "c", Decimal("-2.25"))])]
    base = _commit(table, 1, [], first, flavor, total=3)
    rows, _ = _pypaimon_rows(warehouse)
    assert rows == [
        {"id": 1, "name": "a", "amount": Decimal("1.50"), "dt": "2024-01-01"},
        {"id": 2, "name": "b", "amount": None, "dt": "2024-01-01"},
        {"id": 3, "name": "c", "amount": Decimal("-2.25"), "dt": "2024-01-02"}]

    # pypaimon prunes files with our value stats: only the second file can hold id > 2.
    rows, files = _pypaimon_rows(warehouse, predicate=lambda pb: pb.greater_than("id", 2))
    assert [r["id"] for r in rows] == [3] and files == 1

    # Snapshot 2 replaces the 2024-01-01 file: DELETE it, ADD a new one.
    replacement = _write_data_file(table, schema, "2024-01-01", [(10, "z", Decimal("9.99"))],
                                   with_stats=False)
    deleted = ManifestEntry(FileKind.DELETE, first[0].partition, 0, -1, first[0].file)
    _commit(table, 2, base, [deleted, replacement], flavor, total=2)

    sm = SnapshotManager(table)
    assert sm.latest_id() == 2
    live = live_files(table, sm.get(2))
    assert [e.file.file_name for e in live] == [first[1].file.file_name,
                                                replacement.file.file_name]
    rows, _ = _pypaimon_rows(warehouse)
    assert [(r["id"], r["dt"]) for r in rows] == [(3, "2024-01-02"), (10, "2024-01-01")]
    # Without stats the new file cannot be pruned; time travel still sees snapshot 1.
    assert _pypaimon_rows(warehouse, predicate=lambda pb: pb.greater_than("id", 20))[1] == 1
    assert [r["id"] for r in _pypaimon_rows(warehouse, snapshot_id=1)[0]] == [1, 2, 3]
