"""A Paimon table's history as a graph (issue 22): main's history carries the refs, one
history per branch (each with its own schemas and snapshot ids), the fork point and tag, and
the same field id renamed apart on two branches; the text and JSON forms of ``inspect``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import schemalab as sl
from schemalab.cli import main as cli_main
from schemalab.history.graph import lineage_across


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    wh = sl.Warehouse(str(tmp_path_factory.mktemp("graph") / "wh"), spark=spark)
    wh.sql("CREATE TABLE t (id INT, a STRING); INSERT INTO t VALUES (1, 'x')")
    wh.sql("CALL sys.create_tag(table => 't', tag => 'v1', snapshot => 1)")
    wh.sql("CALL sys.create_branch(table => 't', branch => 'dev', tag => 'v1')")
    wh.sql("ALTER TABLE `t$branch_dev` RENAME COLUMN a TO b")
    wh.sql("INSERT INTO `t$branch_dev` VALUES (2, 'y')")
    wh.sql("ALTER TABLE t RENAME COLUMN a TO c; INSERT INTO t VALUES (3, 'z')")
    return wh.table("t")


def test_main_history_holds_every_branch_and_the_fork(table: Any) -> None:
    h = table.history()
    assert [(r.name, r.kind, r.snapshot_id) for r in h.refs] == [
        ("main", "branch", 2), ("dev", "branch", 2), ("v1", "tag", 1)]
    assert list(h.branches) == ["main", "dev"]
    fork = h.forks["dev"]
    assert (fork.snapshot_id, fork.tags) == (1, ("v1",))
    # each branch numbers its own snapshots: dev's snapshot 2 is not main's
    dev, main = h.branches["dev"], h.branches["main"]
    assert [s.id for s in dev.snapshots] == [1, 2] == [s.id for s in main.snapshots]
    assert dev.snapshots[1].time_millis != main.snapshots[1].time_millis


def test_a_field_renamed_apart_on_two_branches(table: Any) -> None:
    field1 = next(c for c in lineage_across(table.history()) if c.field_id == 1)
    assert dict(field1.names) == {"main": "c", "dev": "b"} and field1.diverged


def test_inspect_labels_only_the_snapshots_a_branch_holds(table: Any,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert cli_main(["inspect", table.path]) == 0
    text = capsys.readouterr().out
    assert "branch dev forked from main at snapshot 1 (tag v1)" in text
    snap2 = next(ln for ln in text.splitlines() if ln.startswith("  snapshot 2 "))
    assert "[branch dev]" not in snap2, "dev's snapshot 2 is another snapshot than main's"
    assert cli_main(["inspect", table.path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in out["refs"]} == {"main", "dev", "v1"}
    assert [s["id"] for s in out["branches"]["dev"]["snapshots"]] == [1, 2]
    assert [f["name"] for f in out["branches"]["dev"]["schemas"][-1]["fields"]] == ["id", "b"]


def test_reads_of_each_ref(table: Any) -> None:
    def rows(**kw: Any) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in table.read(**kw).collect())

    assert rows(ref="v1") == [(1, "x")]
    assert rows(ref="dev") == [(1, "x"), (2, "y")]
    assert rows(ref="main") == [(1, "x"), (3, "z")]
    assert table.explain_read(ref="v1").text().splitlines()[0].count("tag v1") == 1
