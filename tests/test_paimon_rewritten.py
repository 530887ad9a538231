"""Rewritten histories shown, not only refused (issue 22, item 3): a data file whose own
columns are not those of the schema file that now carries its schema id is named by
``t.history().warnings()``, ``inspect`` (text and ``--json``), the history's HTML and the
history view's lanes, and its read is refused; with or without a ``branch/`` directory.

The rewrites are real: pypaimon 2.1's ``fast_forward`` (which copies a branch's snapshots
over main's but not its schemas), the same with the branch deleted afterwards, and a schema
rollback (schema 1 deleted, then another ALTER writes a new schema 1). Java Paimon's
fast-forward is judged in ``test_interop_paimon_refs.py``. Tables whose history was not
rewritten — renames, drops, type changes, keys, partitions, compaction, pypaimon's fixture
warehouses — carry no warning."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from oracles import pypaimon_write
from schemalab.widgets.lanes_figure import branch_lanes_figure
from test_history import check_inspect_shape

import schemalab as sl
from schemalab.cli import main as cli_main
from schemalab.errors import SchemaLabError


def _catalog(root: Path) -> Any:
    from pypaimon import CatalogFactory, Schema

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("d", True)
    cat.create_table("d.t", Schema.from_pyarrow_schema(
        pa.schema([("id", pa.int32()), ("a", pa.string())])), False)
    return cat


def _write(cat: Any, name: str, cols: dict[str, Any]) -> None:
    t = cat.get_table(name)
    pypaimon_write.append(t, pa.table(cols))


def _add(cat: Any, name: str, column: str, type_: str) -> None:
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    cat.alter_table(name, [SchemaChange.add_column(column, AtomicType(type_))], False)


def _fast_forwarded(root: Path, *, drop_branch: bool = False) -> Path:
    """Main: snapshot 1 (tag v1), ALTER ADD b INT (main's schema 1), snapshot 2 holding b.
    Branch dev from v1: ALTER ADD c DOUBLE (dev's schema 1), snapshots 2 and 3 holding c.
    pypaimon's fast_forward copies dev's snapshots 1-3 over main's, not its schemas: main's
    snapshots 2 and 3 hold dev's files (id, a, c) under main's schema 1 (id, a, b)."""
    cat = _catalog(root)
    _write(cat, "d.t", {"id": pa.array([1], pa.int32()), "a": ["x"]})
    cat.create_tag("d.t", "v1", snapshot_id=1)
    cat.create_branch("d.t", "dev", tag_name="v1")
    _add(cat, "d.t", "b", "INT")
    _write(cat, "d.t", {"id": pa.array([2], pa.int32()), "a": ["y"],
                        "b": pa.array([5], pa.int32())})
    _add(cat, "d.t$branch_dev", "c", "DOUBLE")
    _write(cat, "d.t$branch_dev", {"id": pa.array([3], pa.int32()), "a": ["z"], "c": [1.5]})
    _write(cat, "d.t$branch_dev", {"id": pa.array([4], pa.int32()), "a": ["q"], "c": [2.5]})
    cat.fast_forward("d.t", "dev")
    if drop_branch:
        cat.drop_branch("d.t", "dev")
    return root / "d.db" / "t"


def _dev_files(path: Path) -> set[str]:
    """The data files dev wrote: the ones holding column c."""
    import pyarrow.parquet as pq

    return {str(p.relative_to(path)) for p in path.glob("bucket-0/*.parquet")
            if "c" in pq.read_schema(p).names}


def test_pypaimon_fast_forward_is_shown(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _fast_forwarded(tmp_path)
    t = sl.open_table(path)
    h = t.history()
    found = h.warnings()
    assert {w.path for w in found} == _dev_files(path) and len(found) == 2
    assert {w.snapshot_ids for w in found} == {(2, 3), (3,)}
    for w in found:
        assert w.rule == "file-schema-rewritten" and w.schema_id == 1
        assert (w.file_columns, w.schema_columns) == (("id", "a", "c"), ("id", "a", "b"))
        assert "was written under a different schema 1 than the one on disk" in w.message
        assert "copied from branch dev without dev's schemas" in w.message
    assert h.warning_marks().keys() == {2, 3}
    assert h.branches["dev"].warnings() == ()  # on dev the files are dev's schema's
    # the read is refused, naming the file and why
    with pytest.raises(SchemaLabError) as e:
        t.read_plan()
    assert e.value.rule == "file-schema-rewritten" and "branch dev" in str(e.value)
    assert t.read_plan(snapshot_id=1).snapshot_id == 1  # snapshot 1 is main's own
    # inspect, text and --json
    assert cli_main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    warnings = out[out.index("Warnings:"):out.index("Snapshots:")]
    assert all(os.path.basename(p) in warnings for p in _dev_files(path))
    assert "snapshots 2, 3" in warnings
    assert "[rewritten: a file under schema 1 holds other columns]" in out
    assert cli_main(["inspect", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    check_inspect_shape(doc)
    assert {(w["branch"], w["path"]) for w in doc["warnings"]} == \
        {("main", p) for p in _dev_files(path)}
    assert "Rewritten history" in h._repr_html_()
    # the history view: a red ring on each of main's snapshots the warnings name
    fig = branch_lanes_figure(h)
    rings = [tr for tr in fig.data if tr.name == "rewritten"]
    assert len(rings) == 1 and len(rings[0].x) == 2
    assert "different schema 1" in rings[0].hovertext[0]
    # the subtitle is a line of the title (widgets.frame)
    assert "files written under another schema" in fig.layout.title.text


def test_detected_without_a_branch_directory(tmp_path: Path) -> None:
    path = _fast_forwarded(tmp_path, drop_branch=True)
    assert not (path / "branch").exists() or not os.listdir(path / "branch")
    t = sl.open_table(path)
    found = t.history().warnings()
    assert {w.path for w in found} == _dev_files(path)
    assert all("schema 1 was replaced after the file was written" in w.message for w in found)
    with pytest.raises(SchemaLabError) as e:
        t.read_plan(snapshot_id=2)
    assert e.value.rule == "file-schema-rewritten"
    fig = branch_lanes_figure(t.history())  # one lane, and the rings
    assert [len(tr.x) for tr in fig.data if tr.name == "rewritten"] == [2]


def test_schema_rollback_then_alter_is_detected(tmp_path: Path) -> None:
    """Schema 1 (b INT) written and used by snapshot 2, then deleted (a schema rollback)
    and a new ALTER writes another schema 1 (c DOUBLE): snapshot 2's file holds b."""
    cat = _catalog(tmp_path)
    _write(cat, "d.t", {"id": pa.array([1], pa.int32()), "a": ["x"]})
    _add(cat, "d.t", "b", "INT")
    _write(cat, "d.t", {"id": pa.array([2], pa.int32()), "a": ["y"],
                        "b": pa.array([5], pa.int32())})
    path = tmp_path / "d.db" / "t"
    (path / "schema" / "schema-1").unlink()
    _add(cat, "d.t", "c", "DOUBLE")
    found = sl.open_table(path).history().warnings()
    assert [(w.snapshot_ids, w.file_columns, w.schema_columns) for w in found] == [
        ((2,), ("id", "a", "b"), ("id", "a", "c"))]


def test_pypaimon_fixture_tables_carry_no_warning(pypaimon_warehouses: Path) -> None:
    tables = [p.parent for p in pypaimon_warehouses.rglob("schema") if p.is_dir()]
    assert len(tables) == 4
    for p in tables:
        h = sl.open_table(p).history()
        assert h.warnings() == () and h.warning_marks() == {}, p
        assert "Warnings:" not in str(h) and h.to_json()["warnings"] == []


def _no_warning(t: Any) -> None:
    h = t.history()
    assert all(b.warnings() == () for b in [h, *h.branches.values()]), t.name
    assert h.to_json()["warnings"] == [] and "Warnings:" not in str(h)
    t.read_plan()  # and the read is not refused


def test_evolved_table_carries_no_warning(spark: Any, tmp_path: Path) -> None:
    """Renames, a drop, a type change, a re-added name, a branch with its own ALTER and a
    fast-forward schemalab allows: no file is under a schema that does not describe it."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE e (id INT, a STRING, n INT);
              INSERT INTO e VALUES (1, 'x', 1);
              ALTER TABLE e RENAME COLUMN a TO b;
              INSERT INTO e VALUES (2, 'y', 2);
              ALTER TABLE e DROP COLUMN b;
              ALTER TABLE e ALTER COLUMN n TYPE BIGINT;
              ALTER TABLE e ADD COLUMN a STRING;
              INSERT INTO e VALUES (3, 7, 'z');
              CALL sys.create_tag(table => 'e', tag => 'v3', snapshot => 3);
              CALL sys.create_branch(table => 'e', branch => 'dev', tag => 'v3');
              ALTER TABLE `e$branch_dev` ADD COLUMN c DOUBLE;
              INSERT INTO `e$branch_dev` VALUES (4, 8, 'w', 1.5);
              CALL sys.fast_forward(table => 'e', branch => 'dev')""")
    _no_warning(wh.table("e"))


def test_keyed_compacted_table_carries_no_warning(spark: Any, tmp_path: Path) -> None:
    """A primary key, partitions, a rename and a compaction (files rewritten in today's
    schema): no warning."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE k (id INT, p STRING, v STRING, PRIMARY KEY (id, p) NOT ENFORCED)
                PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2');
              INSERT INTO k VALUES (1, 'a', 'x'), (2, 'b', 'y');
              ALTER TABLE k RENAME COLUMN v TO w;
              CALL sys.compact(table => 'k')""")
    assert wh.table("k").latest_snapshot.commit_kind == "COMPACT"
    _no_warning(wh.table("k"))
