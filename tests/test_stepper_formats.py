"""The ALTER stepper on Paimon and Iceberg side by side (issue 24): every statement runs on
both formats, each in its own warehouse; a step shows both formats' metadata change and
reads, and says where their rules differ; Back and Reset restore both exactly."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from schemalab.widgets import AlterStepper

import schemalab as sl
from schemalab.errors import SqlError
from schemalab.iceberg import IcebergTable

SCRIPT = """
CREATE TABLE T (id INT, a INT, c STRING);
INSERT INTO T VALUES (1, 10, '5'), (2, 20, '6');
ALTER TABLE T RENAME COLUMN a TO b;
ALTER TABLE T ALTER COLUMN b TYPE BIGINT;
ALTER TABLE T ALTER COLUMN c TYPE INT;
ALTER TABLE T ADD COLUMN d DOUBLE;
INSERT INTO T VALUES (3, 30, '7', 1.5)
"""


def _digest(root: str) -> dict[str, str]:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def _rows(t: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in t.read().collect())


@pytest.fixture()
def stepper(spark: Any, tmp_path: Path) -> AlterStepper:
    wh = sl.Warehouse(str(tmp_path / "wh"), spark=spark)
    return AlterStepper(wh, SCRIPT, formats=("paimon", "iceberg"))


def test_each_step_runs_on_both_formats(stepper: AlterStepper) -> None:
    paimon, iceberg = stepper.lanes
    assert stepper.formats == ("Paimon", "Iceberg")
    stepper.step()
    stepper.step()
    assert type(paimon.table).__name__ == "Table"
    assert isinstance(iceberg.table, IcebergTable)  # schemalab's writable one
    assert "schema/schema-0" in paimon.meta.value or "snapshot/snapshot-1" in paimon.meta.value
    assert "metadata.json" in iceberg.meta.value
    stepper.step()  # RENAME: both by field id
    assert [f.name for f in paimon.table.schema.fields] == ["id", "b", "c"]
    assert [f.name for f in iceberg.table.schema.fields] == ["id", "b", "c"]
    assert _rows(paimon.table) == _rows(iceberg.table) == [(1, 10, "5"), (2, 20, "6")]
    assert "schema/schema-1" in paimon.meta.value
    stepper.step()  # INT -> BIGINT: both formats promote
    assert paimon.last_error is None and iceberg.last_error is None
    assert "current-schema-id" in iceberg.meta.value
    stepper.step()  # STRING -> INT: Paimon casts on read, Iceberg refuses
    assert paimon.last_error is None
    assert iceberg.last_error is not None
    assert "Iceberg</b> refuses what <b>Paimon</b> runs" in stepper.difference.value
    stepper.step()
    stepper.step()
    assert stepper.position == 7 and stepper.step() is False
    assert "last-column-id" in iceberg.meta.value or "snapshots" in iceberg.meta.value
    p_rows, i_rows = _rows(paimon.table), _rows(iceberg.table)
    assert [r[:2] for r in p_rows] == [r[:2] for r in i_rows] == [(1, 10), (2, 20), (3, 30)]
    assert [r[2] for r in p_rows] == [5, 6, 7]  # Paimon's STRING -> INT cast on read
    assert [r[2] for r in i_rows] == ["5", "6", "7"]  # Iceberg kept the STRING column


def test_back_and_reset_restore_both_formats_exactly(stepper: AlterStepper) -> None:
    seen = {0: _digest(stepper.warehouse.path)}
    for pos in range(1, 5):
        stepper.step()
        seen[pos] = _digest(stepper.warehouse.path)
    stepper.back()
    assert _digest(stepper.warehouse.path) == seen[3]
    stepper.back()
    assert _digest(stepper.warehouse.path) == seen[2]
    stepper.reset()
    assert _digest(stepper.warehouse.path) == seen[0]


def test_back_shows_the_step_before_again(stepper: AlterStepper) -> None:
    """Back shows what the step it returns to showed: its files, its error, the difference
    — not the change it undid."""
    paimon, iceberg = stepper.lanes
    for _ in range(6):
        stepper.step()
    assert "<code>last-column-id</code> 3 → 4" in iceberg.meta.value  # step 6: ADD COLUMN price
    stepper.back()  # to step 5, the STRING -> INT change Iceberg refused
    assert iceberg.last_error is not None and paimon.last_error is None
    assert "no metadata file written" in iceberg.meta.value
    assert "refuses what" in stepper.difference.value
    assert "schema/schema-3" in paimon.meta.value
    refused = (paimon.meta.value, iceberg.meta.value, stepper.difference.value)
    stepper.back()  # to step 4: INT -> BIGINT, which both ran
    assert iceberg.last_error is None and "sl-error" not in iceberg.status.value
    assert "<code>current-schema-id</code> 1 → 2" in iceberg.meta.value
    assert "schema/schema-2" in paimon.meta.value and not stepper.difference.value
    stepper.step()  # step 5 again shows what it showed the first time
    assert (paimon.meta.value, iceberg.meta.value, stepper.difference.value) == refused


def test_static_views_name_both_formats(stepper: AlterStepper) -> None:
    assert repr(stepper).startswith("AlterStepper on Paimon and Iceberg: step 0 of 7")


@pytest.mark.parametrize("formats", [(), ("paimon", "paimon"), ("delta",), "x"])
def test_bad_formats_are_refused(spark: Any, tmp_path: Path, formats: Any) -> None:
    wh = sl.Warehouse(str(tmp_path / "wh"), spark=spark)
    with pytest.raises(SqlError) as e:
        AlterStepper(wh, "CREATE TABLE T (a INT)", formats=formats)
    assert e.value.rule == "stepper-formats"
