"""The 38 Iceberg fixture tables (written by Java Iceberg 1.10.2) read by Java Iceberg 1.12.0.

``tests/test_iceberg_java_fixtures.py`` checks schemalab against what Iceberg 1.10.2 read when
it wrote the tables. Here the newest Iceberg (1.12.0, from Maven Central: ``make oracle-jars``)
reads the same 195 snapshots with its generic reader (``IcebergGenerics``; the worker is
``tests/oracles/java_iceberg_worker.py``) and:

1. schemalab's read equals Iceberg 1.12's (column names and canonical rows), at every
   snapshot (:func:`test_schemalab_reads_like_iceberg_1_12`);
2. Iceberg 1.12's read equals 1.10's recorded one (:func:`test_iceberg_1_12_reads_like_1_10`);
   where the two Iceberg releases differ, the read is in :data:`CHANGED_SINCE_1_10`, a strict
   xfail naming the difference, and docs/compatibility.md says which one schemalab follows.

Decimals are compared by value at the column's scale: the fixture's canonical text comes from
Spark's Python conversion (``D:-1.00E-10`` for DECIMAL(38, 10)), Java hands ``-1E-10``; the
column types are compared by the fixture test, not here.
"""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Callable
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.java_iceberg import JavaIceberg
from test_iceberg_java_fixtures import READS, TARBALL, expected

import schemalab as sl

pytestmark = pytest.mark.spark

#: (table, read label) → how Iceberg 1.12.0 reads it unlike Iceberg 1.10.2
STRUCT_KEPT = ("Iceberg 1.12.0 keeps a struct none of whose current fields is in the data file "
               "(all its fields NULL) and the elements of a list of such structs, where 1.10.2 "
               "read NULL / []: the spec-consistent answer, which schemalab gives")
CHANGED_SINCE_1_10: dict[tuple[str, str], str] = {
    ("m01b_struct_no_surviving_fields_with_null_row", "current"): STRUCT_KEPT,
    ("m02_list_struct_no_surviving_fields", "current"): STRUCT_KEPT,
    ("t06_struct_all_old_fields_dropped", "current"): STRUCT_KEPT,
    ("t06_struct_all_old_fields_dropped", "5717569821466167092"): STRUCT_KEPT,
}


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture tarball unpacked once (``<root>/db/<name>/``); read only."""
    root = tmp_path_factory.mktemp("iceberg-java-1.10-for-1.12")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data")
    return root / "db"


@pytest.fixture(scope="session")
def iceberg_1_12(java_iceberg: JavaIceberg, tables: Path) -> Callable[[str, str], Any]:
    """Iceberg 1.12's read of a table at a read label, once per label."""

    @cache
    def read(name: str, label: str) -> dict[str, Any]:
        written_at = os.path.dirname(expected(name)["written_at"])
        return java_iceberg.read(tables / name, None if label == "current" else int(label),
                                 relocate={written_at: str(tables)})

    return read


@cache
def _open(path: Path) -> Any:
    return sl.open_table(path)


def _decimals_by_value(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("D:"):
        return "D:" + format(Decimal(value[2:]).normalize(), "f")
    if isinstance(value, list):
        return [_decimals_by_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _decimals_by_value(v) for k, v in value.items()}
    return value


def comparable(rows: list[str]) -> list[str]:
    return sorted(json.dumps(_decimals_by_value(json.loads(r)), sort_keys=True) for r in rows)


def _changed(name: str, label: str) -> Any:
    reason = CHANGED_SINCE_1_10.get((name, label))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, label, marks=marks, id=f"{name}-{label}")


@pytest.mark.parametrize(("name", "label"), [pytest.param(n, lab, id=f"{n}-{lab}")
                                             for n, lab in READS])
def test_schemalab_reads_like_iceberg_1_12(name: str, label: str, tables: Path,
                                           iceberg_1_12: Callable[[str, str], Any],
                                           spark: Any) -> None:
    theirs = iceberg_1_12(name, label)
    table = _open(tables / name)
    columns, _, rows = canonical_frame(
        table.read(snapshot_id=None if label == "current" else int(label)))
    assert columns == theirs["columns"]
    assert comparable(rows) == comparable(theirs["rows"]), (
        f"{name} {label}: schemalab != Iceberg 1.12\n ours:    {rows}\n iceberg: {theirs['rows']}")


@pytest.mark.parametrize(("name", "label"), [_changed(n, lab) for n, lab in READS])
def test_iceberg_1_12_reads_like_1_10(name: str, label: str,
                                      iceberg_1_12: Callable[[str, str], Any]) -> None:
    """Iceberg 1.10.2's own answer (its Spark reader; IcebergGenerics where that failed)."""
    then = expected(name)["reads"][label]
    if then.get("error"):
        then = then["oracle"]
    now = iceberg_1_12(name, label)
    assert now["columns"] == then["columns"]
    assert comparable(now["rows"]) == comparable(then["rows"]), (
        f"{name} {label}: Iceberg 1.12 != 1.10\n 1.12: {now['rows']}\n 1.10: {then['rows']}")


def test_every_snapshot_is_read(java_iceberg: JavaIceberg, tables: Path) -> None:
    """Iceberg 1.12 lists the same snapshots as 1.10 recorded, and every one is read here."""
    for name in sorted({n for n, _ in READS}):
        written_at = os.path.dirname(expected(name)["written_at"])
        ids = {s["id"] for s in java_iceberg.snapshots(tables / name,
                                                       relocate={written_at: str(tables)})}
        assert ids == {s["id"] for s in expected(name)["snapshots"]}, name
        assert {str(i) for i in ids} <= set(expected(name)["reads"]), name
    assert len(READS) == 195
