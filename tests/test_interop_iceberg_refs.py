"""Iceberg branches, tags, write-audit-publish and rollback: tables Java Iceberg 1.12.0 writes
with its own API (``tests/oracles/java_iceberg_worker.py``, ``Builder``), read by Java and by
schemalab.

- ``t.refs`` equals Java's ``Table.refs()`` (kinds, snapshots, retention settings);
- every ref's read equals Java's ``TableScan.useRef`` read (a tag in its snapshot's schema, a
  branch in the table's current schema: ``SnapshotUtil.schemaFor``), columns and rows;
- ``t.branch(name)`` holds the branch's ancestry; the history marks staged (WAP) and
  rolled-back snapshots and finds where each branch forked.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.java_iceberg import JavaIceberg
from test_iceberg_java_fixtures import TARBALL, expected

import schemalab as sl
from schemalab.errors import NotFoundError

pytestmark = pytest.mark.spark

STEPS: list[dict[str, Any]] = [
    {"op": "create", "columns": [["id", "int"], ["a", "string"]], "format_version": 2},
    {"op": "append", "rows": [[1, "a1"]]},                                   # 1: s1
    {"op": "tag", "name": "v1", "max_ref_age_ms": 86_400_000},              # 2
    {"op": "add_column", "name": "b", "type": "string"},                      # 3
    {"op": "append", "rows": [[2, "a2", "b2"]]},                             # 4: s2
    {"op": "branch", "name": "dev", "min_snapshots_to_keep": 3,
     "max_snapshot_age_ms": 3_600_000},                                      # 5
    {"op": "append", "rows": [[3, "d3", "db3"]], "branch": "dev"},            # 6: s3 (dev)
    {"op": "rename", "name": "a", "to": "a_new"},                             # 7
    {"op": "append", "rows": [[4, "a4", "b4"]]},                             # 8: s4
    {"op": "append", "rows": [[5, "w5", "w5"]], "stage": True, "wap_id": "w1"},  # 9: staged
    {"op": "add_column", "name": "c", "type": "int"},                         # 10
    {"op": "append", "rows": [[6, "a6", "b6", 66]]},                         # 11: s6
    {"op": "tag", "name": "v6"},                                              # 12
    {"op": "append", "rows": [[7, "a7", "b7", 77]]},                         # 13: s7
    {"op": "rollback", "snapshot": "S4"},                                     # 14
    {"op": "append", "rows": [[8, "a8", "b8", 88]]},                         # 15: s8
    {"op": "append", "rows": [[9, "d9", "db9", 99]], "branch": "dev"},        # 16: s9 (dev)
    {"op": "append", "rows": [[10, "w10", "w10", 10]], "stage": True,
     "wap_id": "w2"},                                                          # 17: staged
    {"op": "append", "rows": [[11, "a11", "b11", 11]]},                      # 18: s11
    {"op": "cherrypick", "snapshot": "W2"},                                   # 19: published
]


@pytest.fixture(scope="module")
def built(java_iceberg: JavaIceberg, tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[Path, list[int | None]]:
    """The table of :data:`STEPS`, written by Java, and the newest snapshot id after each
    step (the rollback's target is filled in once snapshot 4's random id is known)."""
    where = tmp_path_factory.mktemp("iceberg-refs") / "db" / "t"
    first = java_iceberg.build(where, STEPS[:13])
    rest = [dict(s, snapshot=first[8]) if s.get("snapshot") == "S4" else s
            for s in STEPS[13:18]]
    second = java_iceberg.build(where, [{"op": "load"}, *rest])[1:]
    third = java_iceberg.build(where, [{"op": "load"}, *[
        dict(s, snapshot=second[-1]) if s.get("snapshot") == "W2" else s
        for s in STEPS[18:]]])[1:]
    return where, [*first, *second, *third]


def _java_reads(java: JavaIceberg, where: Path, ref: str) -> tuple[list[str], list[str]]:
    out = java.read(where, ref=ref)
    return out["columns"], sorted(out["rows"])


def test_refs_equal_javas(java_iceberg: JavaIceberg, built: Any) -> None:
    where, ids = built
    t = sl.open_table(where)
    theirs = java_iceberg.refs(where)
    ours = {r.name: r for r in t.refs}
    assert set(ours) == set(theirs) == {"main", "dev", "v1", "v6"}
    assert t.refs[0].name == "main"
    for name, j in theirs.items():
        r = ours[name]
        assert (r.kind, r.snapshot_id) == (j["kind"], j["snapshot_id"]), name
        for key in ("max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"):
            assert r.properties.get(key) == j[key], (name, key)
    assert ours["main"].snapshot_id == ids[19] and ours["dev"].snapshot_id == ids[16]
    assert ours["v1"].properties["max-ref-age-ms"] == 86_400_000


@pytest.mark.parametrize("ref", ["main", "dev", "v1", "v6"])
def test_every_ref_reads_like_java(java_iceberg: JavaIceberg, built: Any, ref: str,
                                   spark: Any) -> None:
    where, _ = built
    t = sl.open_table(where)
    columns, rows = _java_reads(java_iceberg, where, ref)
    ours_cols, _, ours_rows = canonical_frame(t.read(ref=ref))
    assert ours_cols == columns, ref
    assert sorted(ours_rows) == rows, ref


def test_schema_binding_follows_iceberg(built: Any) -> None:
    where, ids = built
    t = sl.open_table(where)
    refs = {r.name: r for r in t.refs}
    current = t.metadata.current_schema_id
    assert refs["dev"].schema_id == refs["main"].schema_id == current
    assert refs["v1"].schema_id == t.snapshot_schema_id(t.snapshot(ids[1])) < current
    first = t.explain_read(ref="v1").text().splitlines()[0]
    assert "tag v1: the schema of its snapshot" in first
    assert "the table's current schema" in t.explain_read(ref="dev").text().splitlines()[0]


def test_branch_is_its_ancestry_and_history_is_a_graph(built: Any) -> None:
    where, ids = built
    t = sl.open_table(where)
    s1, s2, s3, s4, staged, s6, s7, s8, s9 = (ids[i] for i in (1, 4, 6, 8, 9, 11, 13, 15, 16))
    dev = t.branch("dev")
    assert [s.snapshot_id for s in dev.snapshots] == [s1, s2, s3, s9]
    s11, picked = ids[18], ids[19]
    assert [s.snapshot_id for s in t.branch("main").snapshots] == [s1, s2, s4, s8, s11,
                                                                   picked]
    with pytest.raises(NotFoundError):
        t.branch("v1")  # a tag is not a branch
    h = t.history()
    assert set(h.branches) == {"main", "dev"}
    assert [s.id for s in h.branch("dev").snapshots] == [s1, s2, s3, s9]
    assert h.forks["dev"].snapshot_id == s2
    assert h.marks[staged] == "staged"
    assert h.marks[ids[17]] == "staged, then published"  # cherry-picked onto main
    assert h.marks[s7] == "rolled back"
    assert h.marks[s6] == "kept by a tag"  # v6 is on a rolled-back snapshot
    assert s4 not in h.marks and s3 not in h.marks
    # the snapshot-log records the rollback; the parent lineage does not
    log = [sid for sid, _ in h.snapshot_log]
    assert log[-5:-2] == [s7, s4, s8]
    assert h.tags_at(s1) == ["v1"]


@pytest.mark.parametrize("ref", ["main", "br1", "tag1"])
def test_fixture_refs_read_like_java(java_iceberg: JavaIceberg, ref: str, spark: Any,
                                     fixture_tables: Path) -> None:
    """t20 (Spark + Iceberg 1.10.2: a tag, a branch with its own write, then main's schema
    evolved and rolled back): every ref read by Iceberg 1.12 and by schemalab."""
    root = fixture_tables
    written_at = os.path.dirname(expected(T20)["written_at"])
    theirs = java_iceberg.read(root / T20, ref=ref, relocate={written_at: str(root)})
    columns, _, rows = canonical_frame(sl.open_table(root / T20).read(ref=ref))
    assert columns == theirs["columns"]
    assert sorted(rows) == sorted(theirs["rows"])
    refs = java_iceberg.refs(root / T20, relocate={written_at: str(root)})
    ours = {r.name: (r.kind, r.snapshot_id) for r in sl.open_table(root / T20).refs}
    assert ours == {n: (j["kind"], j["snapshot_id"]) for n, j in refs.items()}


T20 = "t20_branch_tag_rollback"


@pytest.fixture(scope="module")
def fixture_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iceberg-java-1.10-refs")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data",
                       members=[m for m in tar.getmembers() if f"/{T20}/" in f"/{m.name}"])
    return root / "db"
