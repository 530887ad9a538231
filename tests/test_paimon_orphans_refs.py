"""``clean_orphans`` on a table with branches and tags (issue 22): files any branch, a
branch's tag or a tag of main references are kept — branches share the table's manifest and
data files but have their own snapshots — and only real orphans (a killed writer's data
file, manifest and staging directory, a hidden temp file in a branch's snapshot/) go. Every
ref reads the same afterwards, by schemalab and by pypaimon 2.1."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.paimon import procedures
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.orphans import clean_orphans, referenced_files


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _pypaimon(root: Path, name: str, options: dict[str, str] | None = None
              ) -> list[tuple[Any, ...]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({"warehouse": str(root)}).get_table(name)
    if options:
        t = t.copy(options)
    rb = t.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.fixture()
def table(tmp_path: Path, spark: Any) -> Any:
    """Main: snapshots 1 (tag v1), 2, 3, expired down to 3 (1 kept by v1). Branch dev from
    v1: its own ALTER and INSERT (snapshot 2, tagged d1 on dev), then an INSERT OVERWRITE
    (snapshot 3), and dev's snapshot 2 expired as Java expires a branch (file removed,
    EARLIEST moved): its manifest lists are kept by dev's tag d1 only, its data files by
    dev only."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE t (id INT, a STRING);
              INSERT INTO t VALUES (1, 'x');
              CALL sys.create_tag(table => 't', tag => 'v1', snapshot => 1);
              INSERT INTO t VALUES (2, 'y');
              CALL sys.create_branch(table => 't', branch => 'dev', tag => 'v1');
              ALTER TABLE `t$branch_dev` ADD COLUMN c DOUBLE;
              INSERT INTO `t$branch_dev` VALUES (3, 'z', 1.5)""")
    procedures.create_tag(wh.table("t").branch("dev"), "d1")
    wh.sql("""INSERT OVERWRITE `t$branch_dev` VALUES (4, 'q', 2.5);
              INSERT INTO t VALUES (5, 'w');
              CALL sys.expire_snapshots(table => 't', retain_max => 1, retain_min => 1,
                                        older_than => '2999-01-01 00:00:00')""")
    t = wh.table("t")
    dev_snapshots = Path(t.path) / "branch" / "branch-dev" / "snapshot"
    (dev_snapshots / "snapshot-2").unlink()
    (dev_snapshots / "EARLIEST").write_text("3")
    return t


def _plant_orphans(t: Any) -> set[Path]:
    """What a killed writer leaves: a data file, a manifest, a staging directory; and a
    hidden temp file in the branch's snapshot/."""
    root = Path(t.path)
    some_data = next(root.glob("bucket-0/*.parquet"))
    data = root / "bucket-0" / f"data-{uuid.uuid4()}-0.parquet"
    shutil.copy(some_data, data)
    manifest = root / "manifest" / f"manifest-{uuid.uuid4()}-0"
    shutil.copy(next(root.glob("manifest/manifest-*")), manifest)
    staging = root / f".staging-{uuid.uuid4()}"
    staging.mkdir()
    (staging / "part-0.parquet").write_bytes(b"x")
    temp = root / "branch" / "branch-dev" / "snapshot" / ".snapshot-9.tmp"
    temp.write_text("{}")
    return {data, manifest, staging, temp}


def test_clean_orphans_keeps_what_branches_and_tags_reference(table: Any) -> None:
    t = table
    root = Path(t.path)
    reads = {"main": _rows(t.read()), "v1": _rows(t.read(ref="v1")),
             "dev": _rows(t.read(ref="dev")),
             "d1": _rows(t.branch("dev").read(ref="d1"))}
    assert reads["d1"] == [(1, "x", None), (3, "z", 1.5)]
    # what only dev's tag d1 keeps, and what only dev's snapshots keep
    d1 = paimon_refs.read_tag(t.branch("dev").meta_path, "d1").snapshot
    only_d1 = {root / "manifest" / d1.base_manifest_list,
               root / "manifest" / d1.delta_manifest_list}
    dev_files = {Path(f.path) for f in t.branch("dev").data_files(
        t.branch("dev").latest_snapshot)}
    assert only_d1 <= {Path(p) for p in referenced_files(t.path)}
    orphans = _plant_orphans(t)
    before = _files(root)
    report = clean_orphans(t.path, delete=True, older_than_seconds=0)
    assert {Path(p) for p in report.orphans} == orphans and report.deleted
    assert _files(root) == before - orphans - {p for p in before if
                                               any(o in p.parents for o in orphans)}
    assert all(p.exists() for p in only_d1 | dev_files)
    t = sl.open_table(t.path, spark=t.spark)
    assert {"main": _rows(t.read()), "v1": _rows(t.read(ref="v1")),
            "dev": _rows(t.read(ref="dev")),
            "d1": _rows(t.branch("dev").read(ref="d1"))} == reads
    # pypaimon reads every ref from the files that were kept
    wh = root.parent.parent
    assert _pypaimon(wh, "default.t") == reads["main"]
    assert _pypaimon(wh, "default.t", {"scan.tag-name": "v1"}) == reads["v1"]
    assert _pypaimon(wh, "default.t$branch_dev") == reads["dev"]
    assert _pypaimon(wh, "default.t$branch_dev", {"scan.tag-name": "d1"}) == reads["d1"]
    assert clean_orphans(t.path, delete=True, older_than_seconds=0).orphans == ()


def test_clean_orphans_refuses_a_branch_it_cannot_follow(table: Any) -> None:
    (Path(table.path) / "branch" / "branch-q$r").mkdir()
    stray = _plant_orphans(table)
    with pytest.raises(SchemaLabError) as e:
        clean_orphans(table.path, delete=True, older_than_seconds=0)
    assert e.value.rule == "orphans-branches" and "'q$r'" in str(e.value)
    assert all(p.exists() for p in stray)
