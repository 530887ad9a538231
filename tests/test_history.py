"""The format-neutral history model, without a JVM.

* lineage of the pypaimon-written fixtures and of synthetic histories (rename back, drop and
  re-add, swaps in one commit and through a temporary name over three, nested fields, moves,
  nullability, comments, diffs between versions that are not neighbours);
* snapshot trees checked against pypaimon's own readers and system tables;
* ``schemalab inspect`` (JSON shape of ARCHITECTURE.md, and text) on every fixture table;
* ``explain_read`` texts (a read plan only opens Parquet footers);
* HTML reprs with hostile names;
* hypothesis: random change sequences keep the lineage invariants.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schemalab as sl
from schemalab import cli
from schemalab.errors import SchemaChangeError
from schemalab.history.graph import with_refs
from schemalab.history.lineage import compute_lineage, with_events
from schemalab.history.model import TableHistory
from schemalab.history.versions import FieldLineage, SchemaVersion
from schemalab.open import open_table
from schemalab.paimon.history import schema_version
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.schema.apply import apply_changes, new_table_schema
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
)
from schemalab.schema.table_schema import TableSchema
from schemalab.table import Table
from schemalab.types.model import (
    BIGINT,
    INT,
    STRING,
    DataField,
    DataType,
    RowType,
)

FIXTURE_TABLES = {
    "events": ("wh", "demo.events"),
    "users": ("wh", "demo.users"),
    "full": ("wh5", "s.full"),
    "nested": ("wh6", "n.t"),
}


def table_path(root: Path, key: str) -> Path:
    wh, ident = FIXTURE_TABLES[key]
    db, name = ident.split(".")
    return root / wh / f"{db}.db" / name


@pytest.fixture(scope="module")
def fixture_tables(pypaimon_warehouses: Path) -> dict[str, Table]:
    return {k: open_table(table_path(pypaimon_warehouses, k)) for k in FIXTURE_TABLES}


@pytest.fixture(scope="module")
def histories(fixture_tables: dict[str, Table]) -> dict[str, TableHistory]:
    return {k: t.history() for k, t in fixture_tables.items()}


def summary(h: TableHistory | Sequence[FieldLineage]
            ) -> dict[int, tuple[list[str], list[tuple[int, str]], list[int]]]:
    """field id -> (names, [(schema id, event kind)], schema ids of its states)."""
    lineage = h.lineage if isinstance(h, TableHistory) else h
    return {lin.field_id: (lin.names, [(e.schema_id, e.kind) for e in lin.events],
                           [sid for sid, _ in lin.states]) for lin in lineage}


def flags(h: TableHistory) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """field id -> (name_reused_from, swapped_with), only fields with a flag."""
    return {lin.field_id: (lin.name_reused_from, lin.swapped_with) for lin in h.lineage
            if lin.name_reused_from or lin.swapped_with}


# --------------------------------------------------------------------------------------------
# Lineage of the pypaimon fixtures
# --------------------------------------------------------------------------------------------


def test_events_lineage(histories: dict[str, TableHistory]) -> None:
    h = histories["events"]
    assert [v.id for v in h.schemas] == [0, 1, 2, 3, 4, 5]
    assert h.current_schema_id == 5 and h.format == "paimon" and h.name == "demo.events"
    all_versions = [0, 1, 2, 3, 4, 5]
    assert summary(h) == {
        0: (["id"], [(0, "added")], all_versions),
        1: (["name", "full_name"], [(0, "added"), (2, "renamed")], all_versions),
        2: (["amount"], [(0, "added"), (4, "retyped")], all_versions),
        3: (["qty"], [(0, "added"), (5, "retyped")], all_versions),
        4: (["score"], [(0, "added"), (3, "dropped")], [0, 1, 2]),
        5: (["dt"], [(0, "added")], all_versions),
        6: (["note"], [(1, "added")], [1, 2, 3, 4, 5]),
    }
    assert flags(h) == {}
    renamed = h.lineage_of(1).events[1]
    assert (renamed.old_name, renamed.name, renamed.type) == ("name", "full_name", "STRING")
    amount, qty = h.lineage_of(2).events[1], h.lineage_of(3).events[1]
    assert (amount.old_type, amount.type) == ("INT", "BIGINT")
    assert (qty.old_type, qty.type) == ("INT", "STRING")
    assert qty.describe() == "`qty`: INT → STRING"
    assert not h.lineage_of(4).alive and h.lineage_of(6).alive
    # each version's events are the lineage events of that schema id
    assert [[(e.field_id, e.kind) for e in v.events] for v in h.schemas[1:]] == [
        [(6, "added")], [(1, "renamed")], [(4, "dropped")], [(2, "retyped")], [(3, "retyped")]]
    assert h.schema(0).partition_keys == ("dt",) and h.schema(0).primary_keys == ()


def test_nested_lineage(histories: dict[str, TableHistory]) -> None:
    h = histories["nested"]
    assert summary(h) == {
        0: (["id"], [(0, "added")], [0, 1]),
        1: (["addr"], [(0, "added")], [0, 1]),
        2: (["addr.city", "addr.town"], [(0, "added"), (1, "renamed")], [0, 1]),
        3: (["addr.zip"], [(0, "added"), (1, "retyped")], [0, 1]),
        4: (["tags"], [(0, "added")], [0, 1]),
        5: (["m"], [(0, "added")], [0, 1]),
        6: (["addr.country"], [(1, "added")], [1]),
    }
    v1 = h.schema(1).by_id()
    assert (v1[2].name, v1[2].path, v1[2].parent_id) == ("town", ("addr", "town"), 1)
    assert (v1[6].full_name, v1[6].parent_id, v1[6].type) == ("addr.country", 1, "STRING")
    assert v1[1].type == "ROW"  # a nested change is not a retype of the ROW itself
    assert (v1[4].type, v1[5].type) == ("ARRAY<STRING>", "MAP<STRING NOT NULL, INT>")
    zip_retype = h.lineage_of(3).events[1]
    assert (zip_retype.old_type, zip_retype.type) == ("INT", "BIGINT")
    assert [f.name for f in h.schema(1).top_level] == ["id", "addr", "tags", "m"]
    assert flags(h) == {}


def test_primary_key_table_lineage(histories: dict[str, TableHistory]) -> None:
    h = histories["users"]
    assert summary(h) == {
        0: (["dt"], [(0, "added")], [0, 1]),
        1: (["id"], [(0, "added")], [0, 1]),
        2: (["v"], [(0, "added"), (1, "retyped")], [0, 1]),
        3: (["s", "label"], [(0, "added"), (1, "renamed")], [0, 1]),
        4: (["extra"], [(1, "added")], [1]),
    }
    v0 = h.schema(0)
    assert v0.primary_keys == ("dt", "id") and v0.partition_keys == ("dt",)
    assert v0.options["bucket"] == "2"
    # primary-key columns are NOT NULL; the type text leaves nullability to its own event
    assert [(f.name, f.type, f.nullable) for f in v0.fields[:2]] == [
        ("dt", "STRING", False), ("id", "BIGINT", False)]
    assert [e.kind for e in h.schema(1).events] == ["retyped", "renamed", "added"]


def test_stats_table_lineage(histories: dict[str, TableHistory]) -> None:
    h = histories["full"]
    s = summary(h)
    assert s[0] == (["i", "i2"], [(0, "added"), (1, "renamed")], [0, 1])
    assert s[11] == (["extra"], [(1, "added")], [1])
    assert all(events == [(0, "added")] for fid, (_, events, _) in s.items() if fid not in (0, 11))
    assert h.schema(0).partition_keys == ("p1", "p2")


# --------------------------------------------------------------------------------------------
# Synthetic histories
# --------------------------------------------------------------------------------------------


def make_table(tmp_path: Path, columns: Sequence[tuple[str, DataType]],
               *commits: Sequence[SchemaChange], name: str = "t",
               options: dict[str, str] | None = None) -> Table:
    path = tmp_path / "db.db" / name
    sm = SchemaManager(str(path), table=f"db.{name}")
    sm.create(new_table_schema([ColumnSpec(n, t) for n, t in columns], options=options,
                               time_millis=1_700_000_000_000))
    for changes in commits:
        sm.commit_changes(changes)
    return open_table(path)


def test_rename_back_to_an_old_name(tmp_path: Path) -> None:
    h = make_table(tmp_path, [("id", INT()), ("a", STRING())],
                   [RenameColumn(("a",), "b")], [RenameColumn(("b",), "a")]).history()
    assert summary(h)[1] == (["a", "b", "a"], [(0, "added"), (1, "renamed"), (2, "renamed")],
                             [0, 1, 2])
    assert [(e.old_name, e.name) for e in h.lineage_of(1).events[1:]] == [("a", "b"),
                                                                         ("b", "a")]
    assert flags(h) == {}  # taking back its own name is not reuse


def test_drop_and_re_add_flags_name_reuse(tmp_path: Path) -> None:
    h = make_table(tmp_path, [("a", INT()), ("b", INT()), ("c", STRING())],
                   [DropColumn(("c",))], [AddColumn(("d",), INT())], [AddColumn(("e",), INT())],
                   [AddColumn(("c",), INT())]).history()
    assert summary(h)[2] == (["c"], [(0, "added"), (1, "dropped")], [0])
    assert summary(h)[5] == (["c"], [(4, "added")], [4])
    assert h.lineage_of(5).name_reused_from == (2,)
    assert flags(h) == {5: ((2,), ())}
    # the diff from the first to the last version: three adds and a drop, matched by id
    d = h.diff(0, 4)
    assert [(e.field_id, e.kind) for e in d.events] == [(3, "added"), (4, "added"),
                                                        (5, "added"), (2, "dropped")]


def test_rename_onto_a_dropped_name_is_reuse(tmp_path: Path) -> None:
    h = make_table(tmp_path, [("a", INT()), ("old", INT())],
                   [DropColumn(("old",))], [RenameColumn(("a",), "old")]).history()
    assert flags(h) == {0: ((1,), ())}


def test_swap_in_one_commit(tmp_path: Path) -> None:
    h = make_table(tmp_path, [("id", INT()), ("x", INT()), ("y", STRING())],
                   [RenameColumn(("x",), "tmp"), RenameColumn(("y",), "x"),
                    RenameColumn(("tmp",), "y")]).history()
    assert summary(h)[1][:2] == (["x", "y"], [(0, "added"), (1, "renamed")])
    assert summary(h)[2][:2] == (["y", "x"], [(0, "added"), (1, "renamed")])
    assert h.lineage_of(1).swapped_with == (2,) and h.lineage_of(2).swapped_with == (1,)
    # each took a name the other had: that is name reuse too
    assert flags(h) == {1: ((2,), (2,)), 2: ((1,), (1,))}


def test_swap_through_a_temporary_name_over_three_commits(tmp_path: Path) -> None:
    """x -> tmp, y -> x, tmp -> y in three versions is still a swap for the user: at schema 0
    field 1 is x and field 2 is y, at schema 3 it is the other way round, and a name-based
    reader of old files hands each the other's data. (Before this was flagged only when
    both renames sat in one commit.)"""
    h = make_table(tmp_path, [("id", INT()), ("x", INT()), ("y", STRING())],
                   [RenameColumn(("x",), "tmp")], [RenameColumn(("y",), "x")],
                   [AddColumn(("unrelated",), INT())], [RenameColumn(("tmp",), "y")]).history()
    assert summary(h)[1][:2] == (["x", "tmp", "y"],
                                 [(0, "added"), (1, "renamed"), (4, "renamed")])
    assert summary(h)[2][:2] == (["y", "x"], [(0, "added"), (2, "renamed")])
    assert flags(h) == {1: ((2,), (2,)), 2: ((1,), (1,))}


def test_not_swaps(tmp_path: Path) -> None:
    # a rotation of three names is no pairwise swap
    rot = make_table(tmp_path, [("a", INT()), ("b", INT()), ("c", INT())],
                     [RenameColumn(("a",), "t"), RenameColumn(("b",), "a"),
                      RenameColumn(("c",), "b"), RenameColumn(("t",), "c")],
                     name="rot").history()
    assert all(not lin.swapped_with for lin in rot.lineage)
    assert {fid: f[0] for fid, f in flags(rot).items()} == {0: (2,), 1: (0,), 2: (1,)}
    # x leaves its name, y holds it a while and moves on, x takes it back: reuse, no swap
    back = make_table(tmp_path, [("x", INT()), ("y", INT())],
                      [RenameColumn(("x",), "tmp")], [RenameColumn(("y",), "x")],
                      [RenameColumn(("x",), "z")], [RenameColumn(("tmp",), "x")],
                      name="back").history()
    assert summary(back)[0][0] == ["x", "tmp", "x"] and summary(back)[1][0] == ["y", "x", "z"]
    # field 0 took "x" back after field 1 had held it (this was missed before)
    assert flags(back) == {0: ((1,), ()), 1: ((0,), ())}


def test_nested_rename_add_drop(tmp_path: Path) -> None:
    row = RowType((DataField(-1, "p", INT()), DataField(-1, "q", STRING())))
    h = make_table(tmp_path, [("id", INT()), ("s", row)],
                   [RenameColumn(("s", "p"), "pp")], [AddColumn(("s", "r"), INT())],
                   [DropColumn(("s", "q"))], [UpdateColumnType(("s", "pp"), BIGINT())],
                   [RenameColumn(("s",), "t")]).history()
    assert summary(h) == {
        0: (["id"], [(0, "added")], [0, 1, 2, 3, 4, 5]),
        1: (["s", "t"], [(0, "added"), (5, "renamed")], [0, 1, 2, 3, 4, 5]),
        2: (["s.p", "s.pp", "t.pp"], [(0, "added"), (1, "renamed"), (4, "retyped"),
                                      (5, "renamed")], [0, 1, 2, 3, 4, 5]),
        3: (["s.q"], [(0, "added"), (3, "dropped")], [0, 1, 2]),
        4: (["s.r", "t.r"], [(2, "added"), (5, "renamed")], [2, 3, 4, 5]),
    }
    assert h.schema(2).by_id()[4].parent_id == 1
    assert flags(h) == {}


def test_moves_nullability_and_comments(tmp_path: Path) -> None:
    row = RowType((DataField(-1, "f1", INT()), DataField(-1, "f2", INT()),
                   DataField(-1, "f3", INT())))
    h = make_table(tmp_path, [("a", INT(False)), ("b", INT()), ("c", STRING()), ("s", row)],
                   [UpdateColumnPosition(Move("c", "FIRST"))],
                   [UpdateColumnNullability(("a",), True)],
                   [UpdateColumnComment(("b",), "the b")],
                   [UpdateColumnPosition(Move("a", "AFTER", "b"))],
                   # a ROW moved FIRST: the ROW moved, not the columns its fields outweigh
                   [UpdateColumnPosition(Move("s", "FIRST"))],
                   [SetOption("alter-column-null-to-not-null.disabled", "false")],
                   [UpdateColumnNullability(("b",), False), UpdateColumnComment(("b",), None)],
                   ).history()
    events = [[(e.field_id, e.kind) for e in v.events] for v in h.schemas[1:]]
    assert events == [[(2, "moved")], [(0, "nullability_changed")], [(1, "commented")],
                      [(0, "moved")], [(3, "moved")], [],
                      [(1, "nullability_changed"), (1, "commented")]]
    null = h.schema(2).events[0]
    assert (null.old_type, null.type) == ("NOT NULL", "NULL")
    assert h.schema(3).by_id()[1].comment == "the b" and h.schema(7).by_id()[1].comment is None
    assert [f.name for f in h.schema(5).top_level] == ["s", "c", "b", "a"]
    assert summary(h)[1][1] == [(0, "added"), (3, "commented"), (7, "nullability_changed"),
                                (7, "commented")]


def test_diff_between_versions_that_are_not_neighbours(histories: dict[str, TableHistory]
                                                       ) -> None:
    h = histories["events"]
    d = h.diff(0, 5)
    assert [(e.field_id, e.kind) for e in d.events] == [
        (1, "renamed"), (2, "retyped"), (3, "retyped"), (6, "added"), (4, "dropped")]
    assert [e.name for e in d.by_kind("renamed")] == ["full_name"]
    assert [(e.old_type, e.type) for e in d.by_kind("retyped")] == [("INT", "BIGINT"),
                                                                    ("INT", "STRING")]
    # a field added after 1 and dropped before 5 would not show; one dropped in between does
    assert [(e.field_id, e.kind) for e in h.diff(1, 4).events] == [
        (1, "renamed"), (2, "retyped"), (4, "dropped")]
    assert h.diff(3, 3).events == ()
    back = h.diff(5, 0)  # backwards: the same changes undone
    assert [(e.field_id, e.kind) for e in back.events] == [
        (1, "renamed"), (2, "retyped"), (3, "retyped"), (4, "added"), (6, "dropped")]
    with pytest.raises(KeyError):
        h.diff(0, 9)


def test_lookups_and_lazy_trees(histories: dict[str, TableHistory]) -> None:
    h = histories["users"]
    with pytest.raises(KeyError):
        h.tree(99)
    with pytest.raises(KeyError):
        h.schema(7)
    with pytest.raises(KeyError):
        h.lineage_of(42)
    assert all(not s.lists and not s.live_files for s in h.snapshots)  # nothing read yet
    t3 = h.tree(3)
    assert h.tree(3) is t3  # kept, not re-read
    assert (t3.id, t3.parent_id, t3.schema_id, t3.kind, t3.record_count) == (3, 2, 1,
                                                                             "APPEND", 7)
    assert [s.parent_id for s in h.snapshots] == [None, 1, 2]


def test_precomputed_events_give_the_same_lineage(histories: dict[str, TableHistory]) -> None:
    for h in histories.values():
        raw = [SchemaVersion(v.id, v.time_millis, v.fields) for v in h.schemas]
        assert compute_lineage(raw) == list(h.lineage)
        assert compute_lineage(h.schemas, precomputed=True) == list(h.lineage)


# --------------------------------------------------------------------------------------------
# Snapshot trees against pypaimon
# --------------------------------------------------------------------------------------------


def _pypaimon_table(root: Path, key: str) -> Any:
    from pypaimon import CatalogFactory

    wh, ident = FIXTURE_TABLES[key]
    catalog = CatalogFactory.create({"warehouse": str(root / wh)})
    return catalog, catalog.get_table(ident)


def _system_table(catalog: Any, ident: str, name: str) -> list[dict[str, Any]]:
    t = catalog.get_table(f"{ident}${name}")
    rb = t.new_read_builder()
    rows: list[dict[str, Any]] = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return rows


def _entry_key(partition: dict[str, Any], bucket: int, name: str, kind: str, rows: int,
               schema_id: int, level: int) -> tuple[Any, ...]:
    return (tuple(sorted(partition.items())), bucket, name, kind, rows, schema_id, level)


def _pp_entry(e: Any) -> tuple[Any, ...]:
    part = dict(zip([f.name for f in e.partition.fields], e.partition.values, strict=True))
    return _entry_key(part, e.bucket, e.file.file_name, "ADD" if e.kind == 0 else "DELETE",
                      e.file.row_count, e.file.schema_id, e.file.level)


def _our_entry(f: Any) -> tuple[Any, ...]:
    return _entry_key(f.partition, f.bucket, os.path.basename(f.path), f.kind, f.row_count,
                      f.schema_id, f.level)


@pytest.mark.parametrize("key", list(FIXTURE_TABLES))
def test_snapshot_trees_agree_with_pypaimon(key: str, pypaimon_warehouses: Path,
                                            histories: dict[str, TableHistory]) -> None:
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    catalog, pt = _pypaimon_table(pypaimon_warehouses, key)
    h = histories[key]
    path = table_path(pypaimon_warehouses, key)
    lists, manifests = ManifestListManager(pt), ManifestFileManager(pt)
    snapshot_ids = [s.id for s in h.snapshots]
    assert snapshot_ids == list(range(1, pt.snapshot_manager().get_latest_snapshot().id + 1))
    for sid in snapshot_ids:
        ps = pt.snapshot_manager().get_snapshot_by_id(sid)
        node = h.tree(sid)
        assert (node.schema_id, node.record_count, node.time_millis, node.kind) == (
            ps.schema_id, ps.total_record_count, ps.time_millis, ps.commit_kind)
        # manifest lists → manifests → entries, in file order
        for ours, theirs in zip(node.lists, (lists.read_base(ps), lists.read_delta(ps)),
                                strict=True):
            assert [(m.name, m.added, m.deleted, m.schema_id) for m in ours.manifests] == [
                (m.file_name, m.num_added_files, m.num_deleted_files, m.schema_id)
                for m in theirs]
            for om, tm in zip(ours.manifests, theirs, strict=True):
                assert [_our_entry(f) for f in om.files] == [
                    _pp_entry(e) for e in manifests.read(tm.file_name, drop_stats=False)]
        assert [lst.kind for lst in node.lists] == ["base", "delta"]
        # live files: pypaimon merges base + delta the same way
        live = manifests.read_entries_parallel(lists.read_all(ps), drop_stats=False)
        assert sorted(_our_entry(f) for f in node.live_files) == sorted(
            _pp_entry(e) for e in live)
        for f in node.live_files:  # relative paths name real files: partition/bucket-N/name
            assert (path / f.path).is_file()
            part = "/".join(f"{k}={v}" for k, v in f.partition.items())
            assert f.path == os.path.join(part, f"bucket-{f.bucket}", os.path.basename(f.path))
    # the latest snapshot against the $files / $manifests / $snapshots / $schemas tables
    ident = FIXTURE_TABLES[key][1]
    latest = h.tree(snapshot_ids[-1])
    files = _system_table(catalog, ident, "files")
    assert sorted((os.path.basename(f.path), f.schema_id, f.row_count, f.bucket,
                   "/".join(f"{k}={v}" for k, v in f.partition.items()) or None)
                  for f in latest.live_files) == sorted(
        (r["file_path"], r["schema_id"], r["record_count"], r["bucket"], r["partition"])
        for r in files)
    system_manifests = _system_table(catalog, ident, "manifests")
    assert [(m.name, m.added, m.deleted, m.schema_id) for lst in latest.lists
            for m in lst.manifests] == [
        (r["file_name"], r["num_added_files"], r["num_deleted_files"], r["schema_id"])
        for r in system_manifests]
    snaps = _system_table(catalog, ident, "snapshots")
    assert [(s.id, s.schema_id, s.kind, s.record_count) for s in h.snapshots] == [
        (r["snapshot_id"], r["schema_id"], r["commit_kind"], r["total_record_count"])
        for r in snaps]
    schemas = _system_table(catalog, ident, "schemas")
    assert [v.id for v in h.schemas] == [r["schema_id"] for r in schemas]
    for v, r in zip(h.schemas, schemas, strict=True):
        assert [(f.id, f.name) for f in v.top_level] == [
            (f["id"], f["name"]) for f in json.loads(r["fields"])]


def test_stats_naming_a_column_the_files_schema_lacks_are_not_shown(tmp_path: Path) -> None:
    """A file's value statistics are by position over the columns ``_VALUE_STATS_COLS``
    names. Where one of those names is not in the file's schema, no value can be placed
    (its type is unknown): the tree shows no statistics for the file, and the merge read's
    check of NULL counts (``non_null_fields``) answers "unknown" for it. Both ask
    ``value_stats_fields`` which fields the statistics cover."""
    from schemalab.paimon.history import describe_entry
    from schemalab.paimon.manifest import DataFileMeta, FileKind, ManifestEntry, SimpleStats
    from schemalab.paimon.plan import non_null_fields
    from schemalab.types import parse_type
    from schemalab.types.model import DataField

    INT = parse_type("INT")
    schema = TableSchema(0, (DataField(0, "a", INT), DataField(1, "b", INT)), 1)

    def entry(cols: tuple[str, ...], stats: SimpleStats) -> ManifestEntry:
        return ManifestEntry(FileKind.ADD, b"", 0, -1, DataFileMeta(
            "data-1.parquet", 10, 4, value_stats=stats, value_stats_cols=cols))

    ok = entry(("a", "b"), SimpleStats.of([1, 7], [2, 8], [0, 1], [INT, INT]))
    assert describe_entry(str(tmp_path), ok, schema, schema).stats == {
        "a": (1, 2, 0), "b": (7, 8, 1)}
    assert non_null_fields(ok, schema) == frozenset({0})
    # "gone" (an INT here) is no column of the file's schema: nothing shown, nothing known
    odd = entry(("a", "gone", "b"),
                SimpleStats.of([1, 5, 7], [2, 9, 8], [0, 3, 1], [INT, INT, INT]))
    assert describe_entry(str(tmp_path), odd, schema, schema).stats == {}
    assert non_null_fields(odd, schema) is None


def test_key_ranges_and_stats_in_trees(histories: dict[str, TableHistory]) -> None:
    users = histories["users"].tree(3)
    keys = sorted((f.partition["dt"], f.min_key, f.max_key) for f in users.live_files)
    assert keys == [("d1", (1,), (1,)), ("d1", (1,), (2,)), ("d1", (2,), (2,)),
                    ("d2", (3,), (3,)), ("d2", (4,), (4,)), ("d2", (5,), (5,))]
    full = histories["full"].tree(1).live_files[0]
    # stats decoded with the file's schema (0), shown under today's names (i -> i2)
    assert full.stats["i2"] == (1, 3, 1) and "i" not in full.stats
    assert full.partition == {"p1": "east", "p2": 7}


# --------------------------------------------------------------------------------------------
# schemalab inspect
# --------------------------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_int(v: Any) -> bool:
    return v is None or _is_int(v)


def check_inspect_shape(doc: Any) -> None:
    """Exactly the keys and types ARCHITECTURE.md fixes for ``schemalab inspect --json``."""
    assert isinstance(doc, dict)
    assert set(doc) == {"format", "location", "schemas", "lineage", "snapshots", "refs",
                        "branches", "warnings"}
    for w in doc["warnings"]:  # a rewritten history's files (issue 22)
        assert set(w) == {"branch", "rule", "message", "snapshot_ids", "path", "schema_id",
                          "file_columns", "schema_columns"}
        assert all(_is_int(i) for i in w["snapshot_ids"]) and _opt_int(w["schema_id"])
    assert doc["format"] in ("paimon", "iceberg") and isinstance(doc["location"], str)
    assert doc["refs"][0]["name"] == "main"
    for r in doc["refs"]:
        assert set(r) == {"name", "kind", "snapshot_id", "schema_id"}
        assert r["kind"] in ("branch", "tag") and isinstance(r["name"], str)
        assert _opt_int(r["snapshot_id"]) and _opt_int(r["schema_id"])
    assert set(doc["branches"]) == {r["name"] for r in doc["refs"]
                                    if r["kind"] == "branch"} - {"main"}
    for b in doc["branches"].values():
        check_inspect_shape({"format": doc["format"], "location": doc["location"],
                             "refs": doc["refs"][:1], "branches": {}, "warnings": [], **b})
    for s in doc["schemas"]:
        assert set(s) == {"id", "time_millis", "fields"}
        assert _is_int(s["id"]) and _opt_int(s["time_millis"])
        for f in s["fields"]:
            assert set(f) == {"id", "name", "type", "nullable"}
            assert _is_int(f["id"]) and isinstance(f["name"], str)
            assert isinstance(f["type"], str) and isinstance(f["nullable"], bool)
    for lin in doc["lineage"]:
        assert set(lin) == {"field_id", "events"} and _is_int(lin["field_id"])
        assert lin["events"] and lin["events"][0]["kind"] == "added"
        for e in lin["events"]:
            assert set(e) == {"schema_id", "kind", "name", "type"}
            assert _is_int(e["schema_id"]) and e["kind"] in (
                "added", "renamed", "retyped", "nullability_changed", "commented",
                "default_changed", "moved", "dropped")
            assert isinstance(e["name"], str) and isinstance(e["type"], str)
    for s in doc["snapshots"]:
        assert set(s) == {"id", "parent_id", "schema_id", "time_millis", "kind",
                          "record_count", "files"}
        assert _is_int(s["id"]) and _opt_int(s["parent_id"]) and _opt_int(s["schema_id"])
        assert _opt_int(s["time_millis"]) and _opt_int(s["record_count"])
        assert isinstance(s["kind"], str)
        for f in s["files"]:
            assert set(f) == {"path", "schema_id", "row_count", "partition", "bucket"}
            assert isinstance(f["path"], str) and _is_int(f["schema_id"])
            assert _is_int(f["row_count"]) and _opt_int(f["bucket"])
            assert isinstance(f["partition"], dict)
            assert all(isinstance(k, str) and (v is None or isinstance(v, str | int | float))
                       for k, v in f["partition"].items())


@pytest.mark.parametrize("key", list(FIXTURE_TABLES))
def test_inspect_json_shape_on_every_fixture(key: str, pypaimon_warehouses: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             histories: dict[str, TableHistory]) -> None:
    path = table_path(pypaimon_warehouses, key)
    assert cli.main(["inspect", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    check_inspect_shape(doc)
    graph = with_refs(histories[key], open_table(path))
    assert doc == json.loads(json.dumps(graph.to_json()))
    assert doc["format"] == "paimon" and doc["location"] == str(path)
    assert [s["id"] for s in doc["schemas"]] == [v.id for v in histories[key].schemas]
    # snapshot ids are JSON numbers, and every snapshot lists its live files
    assert '"id": 1,' in out
    assert all(s["files"] for s in doc["snapshots"])
    assert sum(f["row_count"] for f in doc["snapshots"][-1]["files"]) == (
        doc["snapshots"][-1]["record_count"])


def test_inspect_json_details_of_events(pypaimon_warehouses: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["inspect", str(table_path(pypaimon_warehouses, "events")), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lineage"][1] == {"field_id": 1, "events": [
        {"schema_id": 0, "kind": "added", "name": "name", "type": "STRING"},
        {"schema_id": 2, "kind": "renamed", "name": "full_name", "type": "STRING"}]}
    assert doc["snapshots"][0]["parent_id"] is None and doc["snapshots"][1]["parent_id"] == 1
    assert sorted(f["partition"]["dt"] for f in doc["snapshots"][1]["files"]) == [
        "2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03"]
    assert {f["schema_id"] for f in doc["snapshots"][1]["files"]} == {0, 5}


@pytest.mark.parametrize("key", list(FIXTURE_TABLES))
def test_inspect_text_on_every_fixture(key: str, pypaimon_warehouses: Path,
                                       capsys: pytest.CaptureFixture[str],
                                       histories: dict[str, TableHistory]) -> None:
    assert cli.main(["inspect", str(table_path(pypaimon_warehouses, key))]) == 0
    out = capsys.readouterr().out
    h = histories[key]
    assert out.startswith(f"{h.name} (paimon) at ")
    for part in ("Schema versions:", "Field lineage (by field id):", "Snapshots:"):
        assert part in out
    for v in h.schemas:
        assert f"  schema {v.id}: " in out
    for s in h.snapshots:
        assert f"  snapshot {s.id} ({s.kind}, schema {s.schema_id}, " in out
    if key == "events":
        assert "  field 1: name → full_name  (added@0, renamed@2)" in out
        assert "  schema 5: `qty`: INT → STRING" in out
        assert ("    + dt=2024-01-03/bucket-0/data-e549044f-6f6d-4760-8981-420ea1b6bffb-0"
                ".parquet [dt=2024-01-03] bucket 0 schema 5 1 row") in out
        # each snapshot says what it changed and how many files are live after it
        assert "  snapshot 1 (APPEND, schema 0, 3 rows) " in out
        assert out.count(": +2 −0 files, ") == 2 and ": +2 −0 files, 4 live\n" in out
    if key == "nested":
        assert "  field 2: addr.city → addr.town  (added@0, renamed@1)" in out


def test_inspect_table_without_snapshots_and_flags(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(tmp_path, [("id", INT()), ("x", INT()), ("y", STRING()), ("c", INT())],
                   [RenameColumn(("x",), "tmp"), RenameColumn(("y",), "x"),
                    RenameColumn(("tmp",), "y")], [DropColumn(("c",))],
                   [AddColumn(("c",), STRING())])
    assert cli.main(["inspect", t.path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    check_inspect_shape(doc)
    assert doc["snapshots"] == [] and doc["schemas"][0]["time_millis"] == 1_700_000_000_000
    assert cli.main(["inspect", t.path]) == 0
    out = capsys.readouterr().out
    assert "  field 1: x → y  (added@0, renamed@1)  [name reused from field 2]  " \
           "[swapped with field 2]" in out
    assert "  field 4: c  (added@3)  [name reused from field 3]" in out
    assert out.rstrip().endswith("Snapshots:\n  (none)")


def test_inspect_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    """One line each, telling a missing path from a warehouse root, a data file and a
    directory that is no table at all."""
    assert cli.main(["inspect", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.splitlines()[0].endswith("nope does not exist.")
    assert err.splitlines()[1:] == ["rule: table-must-exist"]

    wh = sl.Warehouse(tmp_path / "wh")
    wh.sql("CREATE TABLE t (a INT)")
    assert cli.main(["inspect", wh.path]) == 1
    err = capsys.readouterr().err
    assert "is a warehouse" in err and f"{wh.path}/default.db/t" in err
    assert err.splitlines()[1:] == ["rule: table-must-exist"]

    data = Path(wh.table("t").path) / "bucket-0" / "data-x.parquet"
    data.parent.mkdir()
    data.write_bytes(b"PAR1")
    assert cli.main(["inspect", str(data)]) == 1
    err = capsys.readouterr().err
    assert "is a data file, not a table. Open its table instead: " in err
    assert err.splitlines()[0].endswith(wh.table("t").path)

    assert cli.main(["inspect", str(tmp_path)]) == 1
    assert "is not a table: no Paimon schema/ directory" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# explain_read (a read plan opens Parquet footers only: no JVM)
# --------------------------------------------------------------------------------------------


def test_explain_read_of_the_events_table(fixture_tables: dict[str, Table]) -> None:
    x = fixture_tables["events"].explain_read()
    assert (x.table, x.snapshot_id, x.schema_id, x.cast_mode) == ("demo.events", 2, 5,
                                                                 "paimon")
    assert [(g.schema_id, g.files, g.rows, g.by_id) for g in x.groups] == [
        (0, 2, 3, False), (5, 2, 2, False)]  # pypaimon's Parquet has no field ids
    old = {c.column: c.text for c in x.groups[0].columns}
    assert old == {
        "id": "by id from column `id`",
        "full_name": "by id from column `name` (renamed to `full_name` since)",
        "amount": "by id from column `amount` (INT → BIGINT cast, widened on read)",
        "qty": "by id from column `qty` (INT → STRING, Java Paimon's explicit cast)",
        "dt": "by id from column `dt`",
        "note": "NULL: field 6 `note` did not exist when these files were written (schema 0)",
    }
    assert x.groups[0].ignored == ("file column `score` ignored: field 4 was dropped in "
                                   "schema 3",)
    assert x.column(0, "qty").kind == "cast" and x.column(0, "note").kind == "null"
    assert x.column(0, "note").field_id == 6
    assert all(c.text == f"by id from column `{c.column}`" for c in x.groups[1].columns)
    assert x.groups[1].ignored == ()
    text = x.text()
    assert text.splitlines()[0] == ("demo.events: read of snapshot 2 in schema 5 "
                                    "(no cast.mode: Java Paimon's casts)")
    assert ("files written under schema 0 (2 files, 3 rows; read by the file's column names, "
            "then evolved)") in text
    assert "  note       NULL: field 6 `note` did not exist when these files were written " \
           "(schema 0)" in text
    assert "  (file column `score` ignored: field 4 was dropped in schema 3)" in text
    assert str(x) == text
    with pytest.raises(KeyError):
        x.column(0, "score")


def test_explain_time_travel(fixture_tables: dict[str, Table]) -> None:
    t = fixture_tables["events"]
    x = t.explain_read(snapshot_id=1)  # snapshot 1 in its own schema (0)
    assert (x.snapshot_id, x.schema_id) == (1, 0)
    assert [g.schema_id for g in x.groups] == [0]
    assert [(c.column, c.text) for c in x.groups[0].columns] == [
        (n, f"by id from column `{n}`") for n in ("id", "name", "amount", "qty", "score", "dt")]
    assert x.groups[0].ignored == ()
    # snapshot 1 seen through today's schema
    now = t.explain_read(snapshot_id=1, schema="current")
    assert now.schema_id == 5 and now.column(0, "note").kind == "null"
    # the latest snapshot read in schema 0: newer files lack a field dropped before they
    # were written, carry one added after the schema read, and name a field by its new name
    back = t.explain_read(snapshot_id=2, schema=0)
    assert back.column(5, "score").text == ("NULL: field 4 `score` was dropped in schema 3, "
                                            "before these files were written (schema 5)")
    assert back.column(5, "name").text == "by id from column `full_name` (called `name` in " \
                                          "schema 0)"
    assert back.column(5, "amount").text.startswith(
        "by id from column `amount` (BIGINT → INT, Java Paimon's explicit cast: values "
        "outside INT wrap (")
    assert back.groups[1].ignored == ("file column `note` ignored: field 6 was added in "
                                      "schema 1, after the schema read (0)",)
    one = fixture_tables["nested"].explain_read()
    assert one.groups[0].title.startswith("files written under schema 0 (1 file, 1 row; ")
    assert one.column(0, "addr").kind == "evolved"


# --------------------------------------------------------------------------------------------
# HTML with hostile names
# --------------------------------------------------------------------------------------------


HOSTILE = "<script>alert(1)</script>"


def append_rows(t: Table, rows: list[dict[str, Any]]) -> None:
    """One Parquet file (with field ids) committed as a snapshot, without Spark."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemalab.paimon import paths
    from schemalab.paimon.commit import commit
    from schemalab.paimon.write.files import ColumnStats, WrittenFile, data_file_entry
    from schemalab.types.arrow import arrow_schema

    schema = t.schema
    d = paths.bucket_dir(t.path, [], 0)
    os.makedirs(d, exist_ok=True)
    name = f"data-{uuid.uuid4()}-0.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(schema.fields)),
                   os.path.join(d, name))
    size = os.path.getsize(os.path.join(d, name))
    stats = tuple(ColumnStats(None, None, len(rows)) for _ in schema.fields)
    written = WrittenFile(os.path.join(d, name), name, len(rows), size, (), 0, stats)
    assert commit(t.path, t.name, schema, [data_file_entry(written, schema)]) is not None


def test_html_escapes_hostile_names(tmp_path: Path) -> None:
    quote = "it's \"quoted\" & <b>bold</b>"
    t = make_table(tmp_path, [("id", INT()), (HOSTILE, STRING()), ("q", INT())],
                   name="<img src=x onerror=alert(2)>")
    append_rows(t, [{"id": 1, HOSTILE: "v", "q": 1}])
    t.alter(RenameColumn(("q",), quote))
    t.alter(AddColumn(("a&b",), STRING(), comment="</td><script>x</script>"))
    t.alter(UpdateColumnType((quote,), STRING()))
    append_rows(t, [{"id": 2, HOSTILE: "w", quote: "x", "a&b": "y"}])
    h = t.history()
    page = h._repr_html_()
    explained = t.explain_read()
    assert explained.column(0, "a&b").kind == "null"
    for html in (page, explained._repr_html_()):
        assert "<script>" not in html and "<img" not in html and "<b>bold" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "&amp;" in html and ("&quot;quoted&quot;" in html or "&#x27;" in html)
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "it&#x27;s &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "a&amp;b" in page
    # the texts themselves keep the names as they are
    assert explained.column(0, quote).text == ("by id from column `q` (INT → STRING, "
                                               "Java Paimon's explicit cast)")
    assert explained.column(0, HOSTILE).text == f"by id from column `{HOSTILE}`"


def _lines(path: str, capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert cli.main(["inspect", path, *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_inspect_output_grows_linearly_with_snapshots(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Each snapshot prints what its commit changed — a line for itself and one per file it
    added — not every earlier file again: 10 more snapshots, 20 more lines."""
    t = make_table(tmp_path, [("id", INT())])
    for i in range(10):
        append_rows(t, [{"id": i}])
    ten = _lines(t.path, capsys)
    for i in range(10, 20):
        append_rows(t, [{"id": i}])
    twenty = _lines(t.path, capsys)
    assert len(twenty) - len(ten) == 20
    last = [ln for ln in twenty if ln.startswith("  snapshot 20 ")]
    assert len(last) == 1 and last[0].endswith(": +1 −0 files, 20 live")
    assert sum(ln.startswith("    + bucket-0/data-") for ln in twenty) == 20
    # the live-file counts the HTML shows are the trees' own
    h = t.history()
    assert [c.live_files for c in h.changes()] == list(range(1, 21))
    assert [c.live_files for c in h.changes([7, 8, 15])] == [7, 8, 15]
    assert [(c.snapshot_id, [f.path for f in c.added]) for c in h.changes()] == [
        (c.snapshot_id, [f.path for f in c.added]) for c in h._changes_from_trees(
            [s.id for s in h.snapshots])]
    assert "<td style='text-align:left;padding:2px 10px;border-bottom:1px solid #eaeef2;" \
           "vertical-align:top'>20</td></tr></tbody>" in h._repr_html_()


def test_inspect_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = make_table(tmp_path, [("id", INT()), ("amount", INT()), ("note", STRING())],
                   [RenameColumn(("amount",), "amount_cents")], [DropColumn(("note",))],
                   [AddColumn(("note",), STRING())])
    append_rows(t, [{"id": 1, "amount_cents": 5, "note": "n"}])
    append_rows(t, [{"id": 2, "amount_cents": 6, "note": "m"}])
    by_name = "\n".join(_lines(t.path, capsys, "--field", "note"))
    assert "  field 2: note  (added@0, dropped@2)" in by_name
    assert "  field 3: note  (added@3)  [name reused from field 2]" in by_name
    assert "field 1:" not in by_name and "schema 1:" not in by_name
    assert "  schema 2: dropped `note`" in by_name and "  schema 3: added `note` STRING" in by_name
    by_old_name = "\n".join(_lines(t.path, capsys, "--field", "amount"))
    assert "  field 1: amount → amount_cents  (added@0, renamed@1)" in by_old_name
    assert "\n".join(_lines(t.path, capsys, "--field", "1")) == by_old_name
    one = _lines(t.path, capsys, "--snapshot", "2")
    assert [ln for ln in one if ln.startswith("  snapshot ")] == [
        ln for ln in one if ln.startswith("  snapshot 2 (")]
    assert "    live files (2):" in one
    future = _lines(t.path, capsys, "--since", "2999-01-01")
    assert future[future.index("Schema versions:") + 1] == "  (none)"
    assert future[-1] == "  (none)"
    assert cli.main(["inspect", t.path, "--json", "--field", "note", "--snapshot", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    check_inspect_shape(doc)
    assert [x["field_id"] for x in doc["lineage"]] == [2, 3]
    assert [s["id"] for s in doc["snapshots"]] == [1] and [x["id"] for x in doc["schemas"]] == [
        0, 2, 3]
    for args, said, rule in (
            (["--field", "nott"], "never had a field 'nott'; did you mean `note`?",
             "field-must-exist"),
            (["--snapshot", "9"], "has no snapshot 9", "snapshot-must-exist"),
            (["--since", "soon"], "--since 'soon' is not a time", "since-time")):
        assert cli.main(["inspect", t.path, *args]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and said in err, err
        assert err.splitlines()[1:] == [f"rule: {rule}"], err


def test_alter_errors_say_what_the_history_knows(tmp_path: Path) -> None:
    t = make_table(tmp_path, [("id", INT()), ("amount", INT()), ("note", STRING()),
                              ("addr", RowType((DataField(3, "city", STRING()),)))],
                   [RenameColumn(("amount",), "amount_cents")], [DropColumn(("note",))],
                   [RenameColumn(("addr", "city"), "town")])
    cases = [
        (RenameColumn(("amount",), "amt"), "Column amount does not exist in the db.t table. "
         "`amount` was renamed to `amount_cents` in schema 1 (field 1; today `amount_cents`)."),
        (DropColumn(("note",)), "`note` was dropped in schema 2 (field 2)."),
        (DropColumn(("amout_cents",)), "Did you mean `amount_cents`?"),
        (DropColumn(("addr", "city")), "`addr.city` was renamed to `addr.town` in schema 3"),
    ]
    for change, said in cases:
        with pytest.raises(SchemaChangeError) as info:
            t.alter(change)
        assert said in info.value.message and info.value.rule == "column-must-exist"
        assert info.value.table == "db.t"
    with pytest.raises(SchemaChangeError) as info:
        t.alter(DropColumn(("zzz",)))
    assert info.value.message == "Column zzz does not exist in the db.t table."


def test_values_print_readably(tmp_path: Path) -> None:
    t = make_table(tmp_path, [("id", INT()), ("a", STRING())], [RenameColumn(("a",), "b")])
    append_rows(t, [{"id": 1, "b": "x"}])
    s = t.schema
    assert repr(s) == "TableSchema(id=1, fields=[0 id INT, 1 b STRING])"
    assert str(s).splitlines() == ["schema 1: 2 columns, highest field id 1",
                                   "     0  id                       INT",
                                   "     1  b                        STRING"]
    assert repr(s.fields[0]) == "DataField(0, 'id', INT)" and repr(INT()) == "AtomicType('INT')"
    h = t.history()
    assert repr(h) == "TableHistory('db.t', paimon, 2 schema versions, 2 fields, 1 snapshot)"
    assert str(h).startswith("db.t (paimon) at ") and "Snapshots:" in str(h)
    assert repr(h.lineage[1]) == "FieldLineage(field 1: a → b; added@0, renamed@1)"
    assert str(h.lineage[1]).splitlines()[0] == "field 1: a → b"
    assert repr(h.schemas[1]) == "SchemaVersion(1, 2 fields, 1 change)"
    assert repr(h.snapshots[0]) == "SnapshotNode(1, APPEND, schema 1, 1 rows)"
    assert repr(h.tree(1)).endswith(", 1 live files)")
    for value in (s, h, h.lineage[1], h.schemas[1], h.tree(1)):
        page = value._repr_html_()
        assert page.startswith("<div class='sl-") and "dataclass" not in page


# --------------------------------------------------------------------------------------------
# Hypothesis: random change sequences keep the lineage invariants
# --------------------------------------------------------------------------------------------

NAMES = ("a", "b", "c", "d", "e")
Op = tuple[str, int, int]


def _apply_op(s: TableSchema, op: Op, pending: list[SchemaChange],
              seen: Sequence[str] = ()) -> list[SchemaChange]:
    """``pending`` plus the change(s) ``op`` describes against the schema ``pending`` leads
    to, or ``pending`` unchanged when Paimon refuses. ``seen``: top-level names held before
    (renaming back to one of them makes swaps through temporary names likely)."""
    kind, i, j = op
    try:
        cur = apply_changes(s, pending) if pending else s
    except SchemaChangeError:  # pragma: no cover - pending always applies
        return pending
    top = list(cur.fields)
    f = top[i % len(top)]
    name = NAMES[j % len(NAMES)]
    row = next((x for x in top if isinstance(x.type, RowType)), None)
    change: SchemaChange
    extra: list[SchemaChange] = []
    if kind == "rename_old":
        free = [n for n in seen if n not in {x.name for x in top}]
        if not free:
            return pending
        change = RenameColumn((f.name,), free[j % len(free)])
    elif kind == "swap":  # in one commit, through a temporary name
        g = top[j % len(top)]
        change = RenameColumn((f.name,), "tmp")
        extra = [RenameColumn((g.name,), f.name), RenameColumn(("tmp",), g.name)]
    elif kind == "add":
        change = AddColumn((name,), INT() if j % 2 else STRING())
    elif kind == "add_nested" and row is not None:
        change = AddColumn((row.name, f"n{name}"), INT())
    elif kind == "rename":
        change = RenameColumn((f.name,), name if j % 3 else f"{name}{i % 3}")
    elif kind == "rename_nested" and row is not None and isinstance(row.type, RowType):
        nested = row.type.fields[i % len(row.type.fields)]
        change = RenameColumn((row.name, nested.name), f"n{name}")
    elif kind == "drop":
        change = DropColumn((f.name,))
    elif kind == "retype":
        change = UpdateColumnType((f.name,), BIGINT() if j % 2 else STRING())
    elif kind == "move":
        other = top[j % len(top)]
        change = UpdateColumnPosition(Move(f.name, "FIRST") if j % 3 == 0 else
                                      Move(f.name, "AFTER", other.name))
    elif kind == "nullability":
        change = UpdateColumnNullability((f.name,), bool(j % 2))
    else:
        change = UpdateColumnComment((f.name,), f"c{j}")
    try:
        apply_changes(s, [*pending, change, *extra])
    except SchemaChangeError:
        return pending
    return [*pending, change, *extra]


ops = st.tuples(st.sampled_from(["add", "add_nested", "rename", "rename", "rename_nested",
                                 "rename_old", "rename_old", "swap", "drop", "retype", "move",
                                 "nullability", "comment"]),
                st.integers(0, 9), st.integers(0, 9))
commits = st.lists(st.lists(ops, min_size=1, max_size=3), min_size=1, max_size=12)


def _versions(commit_ops: list[list[Op]]) -> list[SchemaVersion]:
    row = RowType((DataField(-1, "x", INT()), DataField(-1, "y", STRING())))
    s = new_table_schema([ColumnSpec("a", INT()), ColumnSpec("b", STRING()),
                          ColumnSpec("r", row)], time_millis=1,
                         options={"alter-column-null-to-not-null.disabled": "false"})
    schemas = [s]
    seen = list(s.field_names)
    for batch in commit_ops:
        pending: list[SchemaChange] = []
        for op in batch:
            pending = _apply_op(schemas[-1], op, pending, seen)
        if pending:
            schemas.append(apply_changes(schemas[-1], pending, time_millis=len(schemas) + 1))
            seen += [n for n in schemas[-1].field_names if n not in seen]
    return [schema_version(x) for x in schemas]


def _names(versions: list[SchemaVersion]) -> list[dict[int, str]]:
    return [{f.id: f.full_name for f in v.fields} for v in versions]


def check_invariants(versions: list[SchemaVersion], lineage: list[FieldLineage]) -> None:
    index = {v.id: i for i, v in enumerate(versions)}
    names = _names(versions)
    by_id = {lin.field_id: lin for lin in lineage}
    assert set(by_id) == {f.id for v in versions for f in v.fields}
    evented = with_events(versions)
    for lin in lineage:
        sids = [sid for sid, _ in lin.states]
        assert sids == sorted(set(sids))  # increasing schema ids
        pos = [index[sid] for sid in sids]
        assert pos == list(range(pos[0], pos[0] + len(pos)))  # one unbroken run
        assert lin.events[0].kind == "added" and lin.events[0].schema_id == sids[0]
        assert all(e.kind != "added" for e in lin.events[1:])
        kinds = [e.kind for e in lin.events]
        if "dropped" in kinds:
            drop = lin.events[-1]
            assert kinds.count("dropped") == 1 and drop.kind == "dropped"
            assert index[drop.schema_id] == pos[-1] + 1  # no state from the drop on
        else:
            assert pos[-1] == len(versions) - 1
        for sid, f in lin.states:  # the lineage's name at v is v's name for that id
            assert names[index[sid]][lin.field_id] == f.full_name
        # lineage names are the run-collapsed state names
        collapsed = [n for k, n in enumerate(f.full_name for _, f in lin.states)
                     if k == 0 or n != lin.states[k - 1][1].full_name]
        assert lin.names == collapsed
        # name_reused_from: exactly the other ids that held one of its names earlier
        expected_reuse = {x for i, held in enumerate(names) for x, n in held.items()
                          if x != lin.field_id and any(
                              names[j].get(lin.field_id) == n for j in range(i + 1, len(names)))}
        assert set(lin.name_reused_from) == expected_reuse
        assert list(lin.name_reused_from) == sorted(lin.name_reused_from)
        # swapped_with: p/q at one version, q/p at a later one
        expected_swaps = set()
        for x in by_id:
            if x == lin.field_id:
                continue
            for i in range(len(names)):
                for j in range(i + 1, len(names)):
                    a_i, x_i = names[i].get(lin.field_id), names[i].get(x)
                    a_j, x_j = names[j].get(lin.field_id), names[j].get(x)
                    if None not in (a_i, x_i, a_j, x_j) and a_i == x_j and x_i == a_j \
                            and a_i != x_i:
                        expected_swaps.add(x)
        assert set(lin.swapped_with) == expected_swaps
        for x in lin.swapped_with:
            assert lin.field_id in by_id[x].swapped_with
    # every version's events are the lineage events of that version, and vice versa
    for v in evented:
        assert sorted((e.field_id, e.kind) for e in v.events) == sorted(
            (e.field_id, e.kind) for lin in lineage for e in lin.events if e.schema_id == v.id)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits)
def test_lineage_invariants_under_random_changes(commit_ops: list[list[Op]]) -> None:
    versions = _versions(commit_ops)
    lineage = compute_lineage(versions)
    check_invariants(versions, lineage)
    assert compute_lineage(with_events(versions), precomputed=True) == lineage
    # a diff between any two versions adds and drops exactly the id differences
    first, last = versions[0], versions[-1]
    d = compute_diff(versions, first.id, last.id)
    assert {e.field_id for e in d if e.kind == "added"} == (
        {f.id for f in last.fields} - {f.id for f in first.fields})
    assert {e.field_id for e in d if e.kind == "dropped"} == (
        {f.id for f in first.fields} - {f.id for f in last.fields})


def compute_diff(versions: list[SchemaVersion], a: int, b: int) -> tuple[Any, ...]:
    from schemalab.history.lineage import diff

    return diff(versions, a, b).events


def test_hypothesis_examples_cover_the_interesting_cases() -> None:
    """The generator can produce every flag (checked once on fixed inputs)."""
    swap = _versions([[("rename", 0, 7)], [("rename", 1, 5)], [("rename", 0, 1)]])
    names = _names(swap)
    assert names[0][0] == "a" and names[-1][0] == "b" and names[-1][1] == "a"
    lineage = compute_lineage(swap)
    check_invariants(swap, lineage)
    assert {lin.field_id: lin.swapped_with for lin in lineage if lin.swapped_with} == {
        0: (1,), 1: (0,)}
    reuse = _versions([[("drop", 1, 0)], [("add", 0, 1)]])
    lineage = compute_lineage(reuse)
    check_invariants(reuse, lineage)
    assert [lin.name_reused_from for lin in lineage if lin.name_reused_from] == [(1,)]



def test_history_pauses_the_garbage_collector_only_while_it_builds(
        fixture_tables: dict[str, Table]) -> None:
    """history() pauses Python's cyclic collector (linear cost at 1,000 versions, see
    bench/HISTORY_SCALE.md) and leaves it as it found it, also when building fails."""
    import gc

    from schemalab.history.versions import gc_paused

    t = next(iter(fixture_tables.values()))
    assert gc.isenabled()
    t.history()
    assert gc.isenabled()
    gc.disable()
    try:
        t.history()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError), gc_paused():
        assert not gc.isenabled()
        1 / 0  # noqa: B018
    assert gc.isenabled()


# --------------------------------------------------------------------------------------------
# Deletes in the explorer: the tree, inspect and t.why on a Java Iceberg table whose row
# id = 2 is removed by an equality delete and written again after it (t25)
# --------------------------------------------------------------------------------------------

ICEBERG_TARBALL = (Path(__file__).parent / "fixtures" / "iceberg-java-1.10"
                   / "iceberg-java-1.10.2-tables.tar.gz")


def _t25(tmp_path: Path) -> Path:
    import tarfile

    with tarfile.open(ICEBERG_TARBALL) as tar:
        tar.extractall(tmp_path, filter="data", members=[
            m for m in tar.getmembers() if m.name.startswith("db/t25_equality_deletes/")])
    return tmp_path / "db" / "t25_equality_deletes"


def test_tree_and_inspect_show_delete_files_and_what_row_counts_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from schemalab.widgets.tree_figure import reads_text, snapshot_tree_figure

    path = _t25(tmp_path)
    t = sl.open_table(str(path))
    h = t.history()
    assert [s.label for s in h.snapshots] == ["#1", "#2", "#3"]
    node = h.tree(h.snapshots[-1].id)
    fig = snapshot_tree_figure(node, reads=reads_text(t, node.schema_id))
    deletes = [tr for tr in fig.data if tr.name == "delete file / deletion vector"]
    assert len(deletes) == 1 and "eq-delete-id2.parquet · 1 delete row" in deletes[0].text[0]
    assert deletes[0].marker.pattern.shape == "x"
    # the subtitle's lines are part of the title (widgets.frame), long ones wrapped
    sub = " ".join(re.sub(r"<[^>]+>", " ", fig.layout.title.text).split())
    assert "4 rows, " in sub and "<br>" in fig.layout.title.text
    assert "total-records: rows in the data files, before deletes" in sub
    assert "no merge engine" in sub and "snapshot #3" in fig.layout.title.text
    assert str(node.id) in fig.layout.title.text  # the id, small, beside the label
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    delete_snap = next(ln for ln in out.splitlines() if f"snapshot {h.snapshots[1].id} " in ln)
    assert "+1 −0 files" in delete_snap
    assert "+ equality deletes: data/eq-delete-id2.parquet schema 0 1 delete row" in out


def test_why_explains_a_row_that_deletes_removed_and_one_that_came_back(
        tmp_path: Path, spark: Any) -> None:
    t = sl.open_table(str(_t25(tmp_path)), spark=spark)
    gone = t.history().snapshots[1].id
    at_delete = t.why("v", where="id = 2", snapshot_id=gone)
    assert at_delete.rows == 0 and at_delete.deleted == 1
    text = str(at_delete)
    assert "No rows: the data files hold 1 such row, and deletes removed it." in text
    assert "equality delete file eq-delete-id2.parquet" in text
    now = t.why("v", where="id = 2")
    assert now.rows == 1 and now.deleted == 1 and now.groups[0].values == (("b-again", 1),)
    text = str(now)
    assert "1 of 1 row removed" in text and "1 row kept" in text
    assert "written after equality delete file eq-delete-id2.parquet" in text
    html = now._repr_html_()
    assert "sl-deletes" in html and "eq-delete-id2.parquet" in html
