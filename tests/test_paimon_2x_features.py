"""Paimon 1.1+ features on tables that pypaimon 2.1.0 wrote: never a silently wrong read and
never a damaged table. Each case failed on main before (issue 23's four silent failures): a
data-evolution table read 10 rows instead of 4 (now merged by row id and read as pypaimon
and Java Paimon 2.0 read it) and its compaction committed a union pypaimon could no longer
read (now compacted as Java does: tests/test_paimon_2x_compaction.py); an INSERT into a
row-tracking table committed a file without ``_FIRST_ROW_ID`` and a snapshot without
``nextRowId``; the
``fields.<f>.default-value`` option was ignored (NULL where Java Paimon reads the default)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from oracles import pypaimon_write

import schemalab as sl
from schemalab.errors import UnsupportedFeatureError
from schemalab.paimon.features import DATA_EVOLUTION, ROW_TRACKING

SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.string()), ("c", pa.string())])
SYSTEM = ("_ROW_ID", "_SEQUENCE_NUMBER")
ROWS = {"a": [1, 2, 3, 4], "b": ["A1", "A2", "A3", "A4"], "c": ["B1", "B2", "B3", "B4"]}


def _catalog(root: Path) -> Any:
    from pypaimon import CatalogFactory

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("default", True)
    return cat


def _pypaimon_table(root: Path, name: str, options: dict[str, str],
                    rows: dict[str, list[Any]] = ROWS) -> str:
    from pypaimon import Schema

    cat = _catalog(root)
    cat.create_table(f"default.{name}", Schema.from_pyarrow_schema(SCHEMA, options=options),
                     False)
    t = cat.get_table(f"default.{name}")
    pypaimon_write.append(t, pa.table(rows, schema=SCHEMA))
    return str(root / "default.db" / name)


def _pypaimon_rows(root: Path, name: str, projection: list[str] | None = None
                   ) -> list[dict[str, Any]]:
    t = _catalog(root).get_table(f"default.{name}")
    rb = t.new_read_builder()
    if projection:
        rb = rb.with_projection(projection)
    rows: list[dict[str, Any]] = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: r["a"])


def _listing(path: str) -> dict[str, int]:
    return {os.path.relpath(os.path.join(d, f), path): os.path.getsize(os.path.join(d, f))
            for d, _, files in os.walk(path) for f in files}


@pytest.fixture()
def data_evolution(tmp_path: Path) -> tuple[Path, str]:
    """A data-evolution table: 4 rows, then an UPDATE of column c for row ids 0 and 2, which
    writes a file holding only column c."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "de", {ROW_TRACKING: "true", DATA_EVOLUTION: "true"})
    t = _catalog(root).get_table("default.de")
    wb = t.new_batch_write_builder()
    update = wb.new_update().with_update_type(["c"])
    msgs = update.update_by_arrow_with_row_id(pa.table({
        "_ROW_ID": pa.array([0, 2], pa.int64()), "c": ["B1-upd", "B3-upd"]}))
    c = wb.new_commit()
    c.commit(msgs)
    c.close()
    assert [r["c"] for r in _pypaimon_rows(root, "de")] == ["B1-upd", "B2", "B3-upd", "B4"]
    return root, path


def _update(root: Path, name: str, columns: list[str], rows: dict[str, Any]) -> None:
    """pypaimon's data-evolution UPDATE by ``_ROW_ID`` of ``columns``."""
    t = _catalog(root).get_table(f"default.{name}")
    pypaimon_write.update_columns(t, columns, pa.table(rows))


def _all_rows(root: Path, name: str, snapshot: int, columns: list[str]) -> list[tuple[Any, ...]]:
    """pypaimon's read of ``snapshot`` (time travel by option), as sorted tuples."""
    t = _catalog(root).get_table(f"default.{name}").copy({"scan.snapshot-id": str(snapshot)})
    rb = t.new_read_builder().with_projection(columns)
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in out), key=repr)


@pytest.fixture()
def evolved_data_evolution(tmp_path: Path) -> tuple[Path, str]:
    return build_evolved_data_evolution(tmp_path)


def build_evolved_data_evolution(tmp_path: Path) -> tuple[Path, str]:
    """A data-evolution table pypaimon wrote: two appends (row ids 0..3, 4..5), UPDATEs of
    c, of b and c, then a rename of b to bb and a new column d, UPDATEs of bb and of d under
    the new schema, and an append under it."""
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    root = tmp_path / "wh"
    path = _pypaimon_table(root, "ev", {ROW_TRACKING: "true", DATA_EVOLUTION: "true"})
    cat = _catalog(root)
    t = cat.get_table("default.ev")
    pypaimon_write.append(t, pa.table({"a": [5, 6], "b": ["A5", "A6"], "c": ["B5", "B6"]},
                                      schema=SCHEMA))
    _update(root, "ev", ["c"], {"_ROW_ID": pa.array([0, 2], pa.int64()), "c": ["c0", "c2"]})
    _update(root, "ev", ["b", "c"], {"_ROW_ID": pa.array([1], pa.int64()), "b": ["b1"],
                                     "c": ["c1"]})
    cat.alter_table("default.ev", [SchemaChange.rename_column("b", "bb"),
                                   SchemaChange.add_column("d", AtomicType("BIGINT"))])
    _update(root, "ev", ["bb"], {"_ROW_ID": pa.array([5], pa.int64()), "bb": ["bb5"]})
    _update(root, "ev", ["d"], {"_ROW_ID": pa.array([0, 3], pa.int64()),
                                "d": pa.array([10, 13], pa.int64())})
    return root, path


def test_data_evolution_reads_equal_pypaimon_at_every_snapshot(
        evolved_data_evolution: tuple[Path, str], spark: Any) -> None:
    """Column files merge by row id, newest per column, each file evolved by its own schema
    (a rename, an added column): every snapshot reads as pypaimon reads it, with the row ids
    and sequence numbers Paimon gives (the newest file's)."""
    root, path = evolved_data_evolution
    t = sl.open_table(path, spark=spark)
    # After the rename pypaimon 2.1.0 takes `bb` of row id 1 from the base file ('A2'), not
    # from the update of b written before the rename ('b1'): it matches the update file's
    # columns by name. Java Paimon 2.0.0 matches by field id and reads 'b1', as schemalab
    # does (tests/test_interop_paimon_2x.py judges every snapshot); pypaimon judges the
    # snapshots before the rename here.
    for snap in [s for s in t.snapshots if s.schema_id == 0]:
        names = [f.name for f in t.schema_at(snap.schema_id).fields]
        cols = ["_ROW_ID", "_SEQUENCE_NUMBER", *names]
        ours = t.read(snapshot_id=snap.id, system_columns=["_ROW_ID", "_SEQUENCE_NUMBER"])
        assert ours.columns == names + ["_ROW_ID", "_SEQUENCE_NUMBER"]
        got = sorted((tuple(r[c] for c in cols) for r in ours.collect()), key=repr)
        assert got == _all_rows(root, "ev", snap.id, cols), snap.id
    latest = sorted(map(tuple, t.read().collect()), key=repr)
    assert latest == sorted([(1, "A1", "c0", 10), (2, "b1", "c1", None), (3, "A3", "c2", None),
                             (4, "A4", "B4", 13), (5, "A5", "B5", None),
                             (6, "bb5", "B6", None)], key=repr)


def test_data_evolution_explained_column_by_column(
        evolved_data_evolution: tuple[Path, str], spark: Any) -> None:
    _, path = evolved_data_evolution
    t = sl.open_table(path, spark=spark)
    text = str(t.explain_read())
    assert "rows 0..3 merged by row id from 4 files, newest first:" in text
    assert "rows 4..5 merged by row id from 2 files, newest first:" in text
    # d comes from the update file written after the ADD COLUMN; bb from the update of b
    # (written under its old name) for rows 0..3, from the update of bb for rows 4..5
    assert "`d` from the update file of `d`" in text and "written in snapshot 6" in text
    assert "`bb` from the update file of `b`, `c`" in text and "(written as `b`)" in text
    assert "`bb` from the update file of `bb`" in text
    assert "not from these files: merged by row id" in text
    assert "did not exist when these files were written" not in text
    w = t.why("c", where="a = 2")
    assert w.rows == 1 and w.nulls == 0 and w.groups[0].values == (("c1", 1),)
    assert "`c` from the update file of `b`, `c`" in str(w) and "`a` from" not in str(w)


def test_system_columns_need_row_tracking(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "plain", {})
    t = sl.open_table(path, spark=spark)
    with pytest.raises(sl.SchemaLabError) as e:
        t.read(system_columns=["_ROW_ID"])
    assert e.value.rule == "row-tracking-columns" and e.value.column == "_ROW_ID"
    with pytest.raises(sl.SchemaLabError, match="not a system column"):
        t.read(system_columns=["_ROW_KIND"])


@pytest.mark.parametrize("options", [{ROW_TRACKING: "true"},
                                     {ROW_TRACKING: "true", DATA_EVOLUTION: "true"}])
def test_row_tracking_inserts_get_row_ids_and_compaction_keeps_them(
        tmp_path: Path, spark: Any, options: dict[str, str]) -> None:
    """An INSERT's files take the next row ids and the snapshot the next free one, as Java's
    commit assigns them (pypaimon reads ``_ROW_ID`` 4..5 for the new rows); what would
    a compaction keeps every row's id."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "rt", options)
    wh = sl.Warehouse(root, spark=spark)
    if DATA_EVOLUTION not in options:
        assert sorted(map(tuple, wh.sql("SELECT * FROM default.rt").collect())) == [
            (1, "A1", "B1"), (2, "A2", "B2"), (3, "A3", "B3"), (4, "A4", "B4")]
    wh.sql("INSERT INTO default.rt VALUES (5, 'A5', 'B5'), (6, 'A6', 'B6')")
    snap = wh.table("default.rt").latest_snapshot
    assert snap is not None and snap.next_row_id == 6
    rows = _pypaimon_rows(root, "rt", ["a", "_ROW_ID", "_SEQUENCE_NUMBER"])
    assert [(r["a"], r["_ROW_ID"]) for r in rows] == [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4),
                                                      (6, 5)]
    assert {r["_SEQUENCE_NUMBER"] for r in rows if r["a"] >= 5} == {snap.id}
    # pypaimon then writes on top of our commit, continuing the row ids
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({"warehouse": str(root)}).get_table("default.rt")
    pypaimon_write.append(t, pa.table({"a": [7], "b": ["A7"], "c": ["B7"]}, schema=SCHEMA))
    rows = _pypaimon_rows(root, "rt", ["a", "_ROW_ID"])
    assert rows[-1] == {"a": 7, "_ROW_ID": 6}
    before = _listing(path)
    tracked = _pypaimon_rows(root, "rt", ["a", "_ROW_ID", "_SEQUENCE_NUMBER"])
    result = wh.table("default.rt").compact()
    if DATA_EVOLUTION in options:
        # compacted as Java does (tests/test_paimon_2x_compaction.py): three files are
        # fewer than its compaction.min.file-num, so nothing is written
        assert result.snapshot is None and _listing(path) == before
    else:
        # as Java's CALL sys.compact: the rows keep their ids and sequence numbers in
        # columns of their own (tests/test_interop_paimon_2x.py compares the layout)
        assert result.files_after == 1 and result.files_before >= 3
        [f] = wh.table("default.rt").data_files(result.snapshot)
        # (Java leaves the first row id out, and pypaimon then reads _ROW_ID as NULL)
        assert f.first_row_id == 0 and f.write_cols == ("a", "b", "c", *SYSTEM)
        assert _pypaimon_rows(root, "rt", ["a", "_ROW_ID", "_SEQUENCE_NUMBER"]) == tracked


def test_default_value_option_read_is_refused(tmp_path: Path, spark: Any) -> None:
    """Java Paimon 1.0 reads ``fields.b.default-value`` in place of every NULL of b
    (``[2, 'dflt']`` where the file holds ``[2, NULL]``); schemalab refuses rather than read
    NULL."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "dv", {"fields.b.default-value": "dflt"},
                           rows={"a": [2], "b": [None], "c": ["x"]})
    t = sl.open_table(path, spark=spark)
    with pytest.raises(UnsupportedFeatureError, match="fields.b.default-value") as e:
        t.read()
    assert (e.value.column, e.value.feature, e.value.option) == (
        "b", "default value", "fields.b.default-value")
    with pytest.raises(UnsupportedFeatureError):
        t.explain_read()


def test_schema_default_value_is_written_for_omitted_and_null_values(
        tmp_path: Path, spark: Any) -> None:
    """A ``defaultValue`` in the schema JSON (Paimon 1.2+): Java Paimon's writer puts it in
    place of an omitted *or NULL* value (``DefaultValueRow`` in ``TableWriteImpl``), the
    text cast from STRING; rows written before stay as they are. A default of a nested
    type is refused by name."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "sd", {})
    schema_file = Path(path) / "schema" / "schema-0"
    doc = json.loads(schema_file.read_text())
    doc["fields"][1]["defaultValue"] = "'dflt'"
    doc["fields"][0]["defaultValue"] = "7"
    schema_file.write_text(json.dumps(doc, indent=2))
    wh = sl.Warehouse(root, spark=spark)
    wh.sql("INSERT INTO default.sd (c) VALUES ('B5'); "
           "INSERT INTO default.sd VALUES (NULL, NULL, 'B6'), (8, 'x', NULL)")
    rows = sorted(map(tuple, wh.sql("SELECT * FROM default.sd").collect()), key=str)
    assert rows == sorted([(1, "A1", "B1"), (2, "A2", "B2"), (3, "A3", "B3"), (4, "A4", "B4"),
                           (7, "dflt", "B5"), (7, "dflt", "B6"), (8, "x", None)], key=str)
    # pypaimon reads what was written: the defaults are in the files
    assert [(r["a"], r["b"]) for r in _pypaimon_rows(root, "sd")][-3:] == [
        (7, "dflt"), (7, "dflt"), (8, "x")]
    doc["fields"].append({"id": 3, "name": "tags", "type": {"type": "ARRAY", "element": "STRING"},
                          "defaultValue": "ARRAY('t')"})
    doc["highestFieldId"] = 3
    schema_file.write_text(json.dumps(doc, indent=2))
    before = _listing(path)
    with pytest.raises(UnsupportedFeatureError, match="column tags has the default value") as e:
        wh.sql("INSERT INTO default.sd (c) VALUES ('B7')")
    assert e.value.column == "tags" and e.value.option == "defaultValue"
    assert _listing(path) == before


def test_defaults_set_and_dropped_by_sql(tmp_path: Path, spark: Any) -> None:
    """CREATE ... DEFAULT, ALTER COLUMN SET / DROP DEFAULT as Paimon's Spark integration
    stores them (the literal's text in ``defaultValue``); each applies to writes after it,
    never to rows written before; the lineage says so."""
    root = tmp_path / "wh"
    wh = sl.Warehouse(root, spark=spark)
    wh.sql("""CREATE TABLE t (id INT, b STRING DEFAULT 'x');
              INSERT INTO t (id) VALUES (1);
              ALTER TABLE t ALTER COLUMN b SET DEFAULT 'y';
              INSERT INTO t (id) VALUES (2);
              ALTER TABLE t ALTER COLUMN b DROP DEFAULT;
              INSERT INTO t (id) VALUES (3)""")
    rows = sorted(map(tuple, wh.sql("SELECT * FROM t").collect()))
    assert rows == [(1, "x"), (2, "y"), (3, None)]
    schema_dir = root / "default.db" / "t" / "schema"
    defaults = [json.loads((schema_dir / f"schema-{i}").read_text())["fields"][1].get(
        "defaultValue") for i in range(3)]
    assert defaults == ["'x'", "'y'", None]
    events = [(e.schema_id, e.kind, e.type) for lin in wh.table("t").history().lineage
              for e in lin.events if lin.field_id == 1]
    assert events == [(0, "added", "STRING"), (1, "default_changed", "'y'"),
                      (2, "default_changed", "")]
    changed = next(e for lin in wh.table("t").history().lineage for e in lin.events
                   if e.kind == "default_changed")
    assert "writes after this version" in changed.describe()
    assert "default 'y' for writes after schema 1, not for older rows" in str(
        wh.table("t").why("b", where="id = 1"))
    assert [(r["id"], r["b"]) for r in _pypaimon_rows_by(root, "t", "id")] == rows
    # Paimon's rules: a default the type cannot hold; ADD COLUMN with a default
    from schemalab.errors import SchemaChangeError

    with pytest.raises(SchemaChangeError, match="Unsupported default value `abc` for type INT") \
            as e:
        wh.sql("ALTER TABLE t ALTER COLUMN id SET DEFAULT 'abc'")
    assert e.value.rule == "default-value" and e.value.column == "id"
    with pytest.raises(SchemaChangeError, match="ALTER COLUMN c SET DEFAULT 1") as e:
        wh.sql("ALTER TABLE t ADD COLUMN c INT DEFAULT 1")
    assert e.value.rule == "unsupported-sql" and e.value.column == "c"
    assert sorted(os.listdir(schema_dir)) == ["schema-0", "schema-1", "schema-2"]


def _pypaimon_rows_by(root: Path, name: str, key: str) -> list[dict[str, Any]]:
    t = _catalog(root).get_table(f"default.{name}")
    rb = t.new_read_builder()
    rows: list[dict[str, Any]] = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: r[key])


def test_sql_reads_row_ids_as_paimon_metadata_columns(
        evolved_data_evolution: tuple[Path, str], spark: Any) -> None:
    """``SELECT _ROW_ID, _SEQUENCE_NUMBER, * FROM t``: named, the system columns are read;
    ``*`` leaves them out (Paimon's Spark metadata columns); ``$row_tracking`` has them."""
    root, _ = evolved_data_evolution
    wh = sl.Warehouse(root, spark=spark)
    df = wh.sql("SELECT _ROW_ID, _sequence_number, * FROM ev WHERE _ROW_ID >= 4")
    assert df.columns == ["_ROW_ID", "_sequence_number", "a", "bb", "c", "d"]
    # the newest file of rows 4..5 (the update of bb, snapshot 5) gives both their sequence
    assert sorted(map(tuple, df.collect())) == [(4, 5, 5, "A5", "B5", None),
                                                (5, 5, 6, "bb5", "B6", None)]
    assert wh.sql("SELECT * FROM ev").columns == ["a", "bb", "c", "d"]
    tracked = wh.sql("SELECT _ROW_ID, a FROM `ev$row_tracking` WHERE _ROW_ID < 2")
    assert sorted(map(tuple, tracked.collect())) == [(0, 1), (1, 2)]
    audit = wh.sql("SELECT * FROM `ev$audit_log`")
    assert audit.columns == ["rowkind", "a", "bb", "c", "d"]
    assert {r[0] for r in audit.collect()} == {"+I"}


def test_snapshot_operation_shown_in_history(tmp_path: Path) -> None:
    """Paimon 2.x snapshots may say what the commit did (``operation``): the history text
    and its JSON show it; a snapshot without it reads as before."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "op", {ROW_TRACKING: "true"})
    snap_file = Path(path) / "snapshot" / "snapshot-1"
    snap = json.loads(snap_file.read_text())
    assert "operation" not in snap
    h = sl.open_table(path).history()
    assert ", operation" not in str(h) and "operation" not in h.to_json()["snapshots"][0]
    snap["operation"] = "UPDATE"
    snap_file.write_text(json.dumps(snap))
    h = sl.open_table(path).history()
    assert "snapshot 1 (APPEND, operation UPDATE, schema 0" in str(h)
    assert h.to_json()["snapshots"][0]["operation"] == "UPDATE"


def test_row_ids_in_a_join(evolved_data_evolution: tuple[Path, str], spark: Any) -> None:
    """``a._ROW_ID`` in a join reads that table's row ids; an unqualified ``_ROW_ID`` the
    row-tracking table's among several; ``*`` leaves them out; a table without row tracking
    has none."""
    root, _ = evolved_data_evolution
    wh = sl.Warehouse(root, spark=spark)
    wh.sql("CREATE TABLE u (k INT, x STRING); INSERT INTO u VALUES (1, 'x1'), (5, 'x5')")
    df = wh.sql("SELECT a._ROW_ID, b.x FROM ev a JOIN u b ON a.a = b.k ORDER BY b.x")
    assert [tuple(r) for r in df.collect()] == [(0, "x1"), (4, "x5")]
    df = wh.sql("SELECT _ROW_ID, * FROM ev JOIN u ON ev.a = u.k")
    assert df.columns == ["_ROW_ID", "a", "bb", "c", "d", "k", "x"]
    assert sorted(r[0] for r in df.collect()) == [0, 4]
    with pytest.raises(sl.SchemaLabError) as e:
        wh.sql("SELECT b._ROW_ID FROM ev a JOIN u b ON a.a = b.k")
    assert e.value.rule == "row-tracking-columns" and e.value.column == "_ROW_ID"
