"""Reading one table through schemalab and through Java Paimon, in the same canonical form.

The only schemalab names used are the public ones (``sl.open_table``, ``Table.read``,
``Table.snapshots``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import schemalab as sl

from .canonical import canonical_rows
from .java_paimon import JavaPaimon


def table_dir(warehouse: str | os.PathLike[str], table: str, database: str = "default") -> Path:
    return Path(warehouse) / f"{database}.db" / table


def ours(warehouse: str | os.PathLike[str], table: str, snapshot_id: int | None = None,
         spark: Any = None) -> dict[str, Any]:
    """schemalab's read of a table (any writer) at a snapshot, in that snapshot's schema."""
    t = sl.open_table(str(table_dir(warehouse, table)), spark)
    df = t.read(snapshot_id=snapshot_id)
    return {"columns": list(df.columns), "rows": canonical_rows(df)}


def our_snapshot_ids(warehouse: str | os.PathLike[str], table: str,
                     spark: Any = None) -> list[int]:
    return [s.id for s in sl.open_table(str(table_dir(warehouse, table)), spark).snapshots]


def java_read(java: JavaPaimon, warehouse: Any, table: str,
              snapshot_id: int | None = None) -> dict[str, Any]:
    r = java.read(warehouse, table, snapshot_id)
    return {"columns": r["columns"], "rows": r["rows"]}


def every_snapshot(java: JavaPaimon, warehouse: Any, table: str,
                   spark: Any = None) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(snapshot id, Java's read, our read) for every snapshot both sides list."""
    java_ids = [s["id"] for s in java.snapshots(warehouse, table)]
    assert java_ids == our_snapshot_ids(warehouse, table, spark), "snapshot lists differ"
    return [(sid, java_read(java, warehouse, table, sid), ours(warehouse, table, sid, spark))
            for sid in java_ids]


def assert_equal_every_snapshot(java: JavaPaimon, warehouse: Any, table: str,
                                spark: Any = None) -> int:
    """Java's and our reads agree (column names and rows) at every snapshot; returns how
    many snapshots were compared."""
    results = every_snapshot(java, warehouse, table, spark)
    assert results, f"{table} has no snapshot"
    for sid, theirs, mine in results:
        assert mine == theirs, f"{table} snapshot {sid}: schemalab != Java Paimon"
    return len(results)
