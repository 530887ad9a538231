"""INSERT, DELETE and compaction on a primary-key table's branch (`` `t$branch_dev` ``,
issue 22): the branch numbers its rows from its own latest snapshot, commits to its own
snapshot/ (data and manifest files under the table, as Java's FileStorePathFactory puts
them), and main is untouched. pypaimon 2.1 reads the branch equal to schemalab; Java Paimon
2.0 and 1.0 judge it in ``test_interop_paimon_refs.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemalab as sl


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _pypaimon(root: Path, name: str) -> list[tuple[Any, ...]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({"warehouse": str(root)}).get_table(name)
    rb = t.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


def _snapshot_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted((root / "snapshot").iterdir())}


@pytest.mark.parametrize("engine", ["deduplicate", "first-row"])
def test_primary_key_branch_insert_delete_compact(tmp_path: Path, spark: Any,
                                                  engine: str) -> None:
    """``first-row``: each INSERT is followed by a compaction of the branch (a batch read
    takes compacted files only), and its DELETE is ignored (``ignore-delete``)."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    more = ", 'ignore-delete' = 'true'" if engine == "first-row" else ""
    wh.sql(f"""CREATE TABLE t (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED)
               TBLPROPERTIES ('bucket' = '2', 'merge-engine' = '{engine}'{more});
               INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
               CALL sys.create_tag(table => 't', tag => 'v1');
               INSERT INTO t VALUES (1, 'main')""")
    path = Path(wh.table("t").path)
    main_before = _rows(wh.table("t").read())
    main_snapshots = _snapshot_files(path)
    wh.sql("""CALL sys.create_branch(table => 't', branch => 'dev', tag => 'v1');
              ALTER TABLE `t$branch_dev` ADD COLUMN n INT;
              INSERT INTO `t$branch_dev` VALUES (2, 'dev', 7), (4, 'd', 8);
              DELETE FROM `t$branch_dev` WHERE id = 3""")
    first = engine == "first-row"
    want = [(1, "a", None), (2, "b" if first else "dev", None if first else 7),
            (4, "d", 8)]
    if first:  # first-row keeps a key's first row and ignores deletes
        want.insert(2, (3, "c", None))
    dev = wh.table("t").branch("dev")
    assert _rows(dev.read()) == want
    result = wh.sql("CALL sys.compact(table => 't$branch_dev')")
    assert result is not None
    dev = wh.table("t").branch("dev")
    assert dev.latest_snapshot is not None and dev.latest_snapshot.commit_kind == "COMPACT"
    assert _rows(dev.read()) == want == _pypaimon(tmp_path, "default.t$branch_dev")
    # a later write to the branch numbers its rows above the compacted ones
    wh.sql("INSERT INTO `t$branch_dev` VALUES (4, 'd2', 9)")
    want = [r if r[0] != 4 or first else (4, "d2", 9) for r in want]
    assert _rows(wh.table("t").branch("dev").read()) == want
    assert _pypaimon(tmp_path, "default.t$branch_dev") == want
    # main is untouched: same snapshot files, same rows
    assert _snapshot_files(path) == main_snapshots
    assert _rows(wh.table("t").read()) == main_before == _pypaimon(tmp_path, "default.t")
