"""Compaction of data-evolution tables that pypaimon 2.1.0 wrote (issue 23: ``CALL
sys.compact`` on such a table had committed a union pypaimon could no longer read; it was
refused since). schemalab now compacts them as Java Paimon 2.0 does: the files of
consecutive row-id ranges into one file that keeps the rows' ``_ROW_ID`` (its
``_FIRST_ROW_ID``), the snapshot's ``nextRowId`` unchanged; pypaimon reads the table after
it as before, and writes on. Java Paimon 2.0 judges the same in
tests/test_interop_paimon_2x.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from oracles import pypaimon_write
from test_paimon_2x_features import (
    _all_rows,
    _catalog,
    _listing,
    _pypaimon_table,
    _update,
    build_evolved_data_evolution,
)

import schemalab as sl
from schemalab.paimon.features import DATA_EVOLUTION, ROW_TRACKING

SYSTEM = ["_ROW_ID", "_SEQUENCE_NUMBER"]


def _rows(t: Any, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    df = t.read(snapshot_id=snapshot_id, system_columns=SYSTEM)
    return sorted(map(tuple, df.collect()), key=repr)


def test_compaction_keeps_row_ids_and_pypaimon_reads_it(tmp_path: Path, spark: Any) -> None:
    """Six files of rows 0..5 (two appends, four UPDATEs of some columns, a rename and an
    added column between them) become one file with first row id 0; every row reads as
    before with its row id, in schemalab and in pypaimon, at the new snapshot and at the old
    ones; pypaimon appends after it with row id 6."""
    root, path = build_evolved_data_evolution(tmp_path)
    wh = sl.Warehouse(root, spark=spark)
    t = wh.table("ev")
    before = _rows(t)
    old = t.latest_snapshot
    assert old is not None
    befores = t.data_files(old)
    assert len(befores) == 6 and {f.write_cols is not None for f in befores} == {True, False}
    result = t.compact()
    assert (result.files_before, result.files_after) == (6, 1), result.text()
    snap = t.latest_snapshot
    assert snap is not None and snap.commit_kind == "COMPACT"
    assert snap.next_row_id == old.next_row_id == 6
    [f] = t.data_files(snap)
    assert (f.first_row_id, f.row_count, f.write_cols, f.schema_id) == (0, 6, None, 1)
    assert (f.min_sequence_number, f.max_sequence_number) == (
        min(b.min_sequence_number for b in befores), max(b.max_sequence_number for b in befores))
    # values and row ids as before; every row's sequence number is now the file's
    after = _rows(t)
    assert [r[:-1] for r in after] == [r[:-1] for r in before]
    assert {r[-1] for r in after} == {f.max_sequence_number}
    names = [fl.name for fl in t.schema.fields]
    cols = [*names, *SYSTEM]
    assert _all_rows(root, "ev", snap.id, cols) == after
    # the snapshots before the compaction still read as they did
    assert _all_rows(root, "ev", 2, ["a", "b", "c", "_ROW_ID"]) == sorted(
        ((r[0], r[1], r[2], r[-2]) for r in _rows(t, 2)), key=repr)
    # pypaimon writes on: the next row id is 6
    pt = _catalog(root).get_table("default.ev")
    wb = pt.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    evolved = pa.schema([("a", pa.int32()), ("bb", pa.string()), ("c", pa.string()),
                         ("d", pa.int64())])
    w.write_arrow(pa.table({"a": [7], "bb": ["A7"], "c": ["B7"], "d": [70]}, schema=evolved))
    c.commit(w.prepare_commit())
    assert (7, "A7", "B7", 70, 6) in [r[:-1] for r in _rows(wh.table("ev"))]


def test_below_the_minimum_file_count_nothing_is_compacted(tmp_path: Path, spark: Any
                                                            ) -> None:
    """Java compacts a bin of at least ``compaction.min.file-num`` files (5): a table of two
    files is left as it is, and nothing is written."""
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "de", {ROW_TRACKING: "true", DATA_EVOLUTION: "true"})
    _update(root, "de", ["c"], {"_ROW_ID": pa.array([0, 2], pa.int64()), "c": ["x", "y"]})
    before = _listing(path)
    result = sl.Warehouse(root, spark=spark).table("de").compact()
    assert result.snapshot is None and "nothing to compact" in result.text()
    assert _listing(path) == before


def build_partitioned_data_evolution(root: Path) -> str:
    """A partitioned data-evolution table (``compaction.min.file-num`` 2) pypaimon wrote: rows
    0..1 in p=1, 2..3 in p=2, 4..5 in p=1, then an UPDATE of c for row ids 0 and 5."""
    from pypaimon import Schema

    schema = pa.schema([("a", pa.int32()), ("c", pa.string()), ("p", pa.int32())])
    cat = _catalog(root)
    cat.create_table("default.pd", Schema.from_pyarrow_schema(
        schema, partition_keys=["p"], options={
            ROW_TRACKING: "true", DATA_EVOLUTION: "true", "compaction.min.file-num": "2"}),
        False)
    for rows in ({"a": [1, 2], "c": ["c1", "c2"], "p": [1, 1]},
                 {"a": [3, 4], "c": ["c3", "c4"], "p": [2, 2]},
                 {"a": [5, 6], "c": ["c5", "c6"], "p": [1, 1]}):
        t = cat.get_table("default.pd")
        pypaimon_write.append(t, pa.table(rows, schema=schema))
    _update(root, "pd", ["c"], {"_ROW_ID": pa.array([0, 5], pa.int64()), "c": ["u0", "u5"]})
    return str(root / "default.db" / "pd")


def test_partitions_and_bins_follow_javas_planner(tmp_path: Path, spark: Any) -> None:
    """Per partition, touching row-id ranges form one group; with
    ``compaction.min.file-num`` 2 each group of two or more files becomes one file, a lone
    file stays. Row ids cross partitions (rows 0..1 in p=1, 2..3 in p=2, 4..5 in p=1), so
    p=1's two ranges are apart and compact separately."""
    root = tmp_path / "wh"
    build_partitioned_data_evolution(root)
    wh = sl.Warehouse(root, spark=spark)
    t = wh.table("pd")
    before = _rows(t)
    result = t.compact()
    assert (result.files_before, result.files_after, result.buckets) == (4, 2, 1)
    snap = t.latest_snapshot
    assert snap is not None
    files = sorted(t.data_files(snap), key=lambda f: f.first_row_id or 0)
    assert [(f.partition, f.first_row_id, f.row_count, f.write_cols) for f in files] == [
        ((1,), 0, 2, None), ((2,), 2, 2, None), ((1,), 4, 2, None)]
    assert _rows(t)[0][:3] == (1, "u0", 1)
    assert [r[:-1] for r in _rows(t)] == [r[:-1] for r in before]
    assert _all_rows(root, "pd", snap.id, ["a", "c", "p", "_ROW_ID"]) == sorted(
        (r[:4] for r in before), key=repr)


def test_sorting_a_data_evolution_table_is_refused(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "wh"
    path = _pypaimon_table(root, "de", {ROW_TRACKING: "true", DATA_EVOLUTION: "true"})
    before = _listing(path)
    with pytest.raises(sl.SchemaLabError, match="row ids are their positions") as e:
        sl.Warehouse(root, spark=spark).sql(
            "CALL sys.compact(table => 'default.de', order_strategy => 'order', "
            "order_by => 'a')")
    assert e.value.rule == "compact-order"
    assert _listing(path) == before
    assert os.path.isdir(path)


def test_row_tracking_compaction_reads_as_before(tmp_path: Path, spark: Any) -> None:
    """A row-tracking table (no data evolution) compacted by schemalab keeps every row and
    ``_ROW_ID``; its compacted file lists ``_ROW_ID``/``_SEQUENCE_NUMBER`` in ``_WRITE_COLS``
    as Java's does, which the rewritten-history check must not take for another schema."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"CREATE TABLE rt (id INT, v STRING) TBLPROPERTIES ('{ROW_TRACKING}' = 'true')")
    for i in range(3):
        wh.sql(f"INSERT INTO rt VALUES ({2 * i}, 'a{i}'), ({2 * i + 1}, 'b{i}')")
    t = wh.table("rt")
    before = [r[:3] for r in _rows(t)]
    assert [r[2] for r in before] == list(range(6))  # _ROW_ID 0..5, as inserted
    t.compact()
    t = wh.table("rt")
    assert len(t.live_entries(t.latest_snapshot)) == 1
    assert [r[:3] for r in _rows(t)] == before
    assert t.history().warnings() == ()


def test_compacting_a_branch_of_a_data_evolution_table_leaves_main(tmp_path: Path,
                                                                   spark: Any) -> None:
    """``CALL sys.compact`` of ``t$branch_b``: the branch's own snapshots are compacted and
    committed there; main's snapshot/ stays as it was, byte for byte (the data-evolution
    compaction had read and committed to main's)."""
    root, path = build_evolved_data_evolution(tmp_path)
    wh = sl.Warehouse(root, spark=spark)
    wh.sql("CALL sys.create_tag(table => 'ev', tag => 't1')")
    wh.sql("CALL sys.create_branch(table => 'ev', branch => 'b', tag => 't1')")
    snapshots = Path(path) / "snapshot"
    main_before = {p.name: p.read_bytes() for p in snapshots.iterdir()}
    before = _rows(wh.table("ev"))
    wh.sql("CALL sys.compact(table => 'ev$branch_b')")
    assert {p.name: p.read_bytes() for p in snapshots.iterdir()} == main_before
    branch = wh.table("ev").branch("b")
    snap = branch.latest_snapshot
    assert snap is not None and snap.commit_kind == "COMPACT"
    assert len(branch.data_files(snap)) == 1
    assert [r[:-1] for r in _rows(branch)] == [r[:-1] for r in before]
