"""The notebook widgets, built in a kernel-less Python process on real tables.

Every view is built on a table of each origin — ours, pypaimon's, pyiceberg's — and its
controls are driven as a user would (dropdowns, buttons). The ALTER stepper runs a scenario
live on the shared Spark session; ``back()`` must leave the warehouse byte for byte as it
was. Names reach the browser escaped. The real-browser test is tests/browser/.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_history import table_path

import schemalab as sl

pytest.importorskip("ipywidgets")

from schemalab.widgets import (  # noqa: E402 - after the importorskip
    AlterStepper,
    Explorer,
    LineageView,
    SchemaHistoryView,
    SnapshotTreeView,
    TimeTravelView,
    lineage_figure,
)

HOSTILE = "<script>alert('x')</script>"
HOSTILE_TABLE = "<img src=x onerror=alert(1)>"  # a table name cannot hold a path separator


# ---- tables of every origin ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ours(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    wh = sl.Warehouse(tmp_path_factory.mktemp("widgets-ours"), spark=spark)
    wh.sql("""CREATE TABLE T (a STRING, b STRING, c STRING);
              INSERT INTO T VALUES ('a1', 'b1', 'c1');
              ALTER TABLE T DROP COLUMN c;
              ALTER TABLE T ADD COLUMN c STRING;
              INSERT INTO T VALUES ('a2', 'b2', 'c2')""")
    return wh.table("T")


@pytest.fixture(scope="module")
def pypaimon_table(pypaimon_warehouses: Path, spark: Any) -> Any:
    return sl.open_table(table_path(pypaimon_warehouses, "events"), spark=spark)


@pytest.fixture(scope="module")
def pyiceberg_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A table pyiceberg wrote: an append, a rename and an added column, another append."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    root = tmp_path_factory.mktemp("widgets-iceberg")
    cat = SqlCatalog("w", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh")
    cat.create_namespace("demo")
    t = cat.create_table("demo.orders", schema=Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
        NestedField(3, "qty", IntegerType())))
    t.append(pa.Table.from_pylist([{"id": 1, "name": "apple", "qty": 3}],
                                  schema=t.schema().as_arrow()))
    with t.update_schema() as u:
        u.rename_column("name", "product")
        u.update_column("qty", LongType())
        u.add_column("note", StringType())
    t.append(pa.Table.from_pylist([{"id": 2, "product": "pear", "qty": 2**40, "note": "n"}],
                                  schema=t.schema().as_arrow()))
    return sl.open_table(root / "wh" / "demo" / "orders", spark=spark)


@pytest.fixture(params=["ours", "pypaimon", "pyiceberg"])
def table(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue({"ours": "ours", "pypaimon": "pypaimon_table",
                                    "pyiceberg": "pyiceberg_table"}[request.param])


def _errors(*texts: str) -> list[str]:
    return [t for t in texts if "sl-error" in t]


# ---- the views -------------------------------------------------------------------------------


def test_schema_history_view_diffs_any_two_versions(table: Any) -> None:
    view = SchemaHistoryView(table)
    ids = list(view.old.options)
    assert ids == [v.id for v in table.history().schemas] and len(ids) >= 2
    assert view.diff.value and not _errors(view.error.value)
    view.old.value, view.new.value = ids[0], ids[-1]
    # the first version against the last: what the whole history changed, by field id
    want = table.history().diff(ids[0], ids[-1])
    assert all(ev.kind in view.diff.value for ev in want.events)
    assert f"schema {ids[0]} → {ids[-1]}" in view.diff.value


def test_lineage_view_has_a_line_per_field(table: Any) -> None:
    view = LineageView(table)
    h = table.history()
    rows = {tuple(tr.y)[0] for tr in view.figure.data if tr.y}
    assert rows == {f"field {lin.field_id}" for lin in h.lineage}
    # one x position per schema version, labelled with the version id
    assert list(view.figure.layout.xaxis.ticktext) == [f"schema {v.id}" for v in h.schemas]


def test_snapshot_tree_view_click_shows_how_a_file_reads_today(table: Any) -> None:
    view = SnapshotTreeView(table)
    snaps = list(view.snapshot.options)
    assert snaps and view.snapshot.value == snaps[-1]
    assert view.files.options, "the latest snapshot lists its data files"
    view.files.value = view.files.options[0][1]
    detail = view.detail.value
    assert not _errors(view.error.value), view.error.value
    assert "written under schema" in detail
    # an older snapshot has its own tree
    view.snapshot.value = snaps[0]
    assert not _errors(view.error.value)
    assert view.node.id == snaps[0]


def test_time_travel_view_reads_both_ways(table: Any) -> None:
    view = TimeTravelView(table)
    first = view.snapshot.options[0]
    view.snapshot.value = first
    view.schema.value = "snapshot"
    view.show()
    own = view.result.value
    assert not _errors(view.error.value), view.error.value
    view.schema.value = "current"
    view.show()
    today = view.result.value
    assert not _errors(view.error.value), view.error.value
    cols = [f.name for f in _current_fields(table)]
    assert all(f"<th>{c}</th>" in today for c in cols)
    assert own != today or len(table.history().schemas) == 1


def _current_fields(table: Any) -> list[Any]:
    h = table.history()
    return list(h.schemas[-1].top_level)


def test_explorer_has_every_tab(table: Any) -> None:
    ex = Explorer(table)
    assert [ex.get_title(i) for i in range(len(ex.children))] == [
        "Schema history", "Lineage", "Snapshots", "Time travel"]
    assert not any(type(c).__name__ == "HTML" and "sl-error" in c.value for c in ex.children)


# ---- the stepper -----------------------------------------------------------------------------


def _tree_digest(root: str) -> dict[str, str]:
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture()
def stepper_wh(spark: Any, tmp_path: Path) -> Iterator[Any]:
    yield sl.Warehouse(tmp_path / "wh", spark=spark)


def test_stepper_steps_backs_and_resets_exactly(stepper_wh: Any) -> None:
    script = (Path(__file__).parents[1] / "data" / "scenarios" / "flip226.sql").read_text()
    s = AlterStepper(stepper_wh, script)
    n = len(s.statements)
    assert n == 6 and s.position == 0 and s.back_button.disabled
    seen: dict[int, dict[str, str]] = {0: _tree_digest(stepper_wh.path)}
    for pos in range(1, 5):
        assert s.step()
        assert s.position == pos and s.last_error is None
        seen[pos] = _tree_digest(stepper_wh.path)
    # after DROP c and ADD c: schema 2, the old row's c is NULL and the explanation says why
    assert s.schema_id == 2
    assert "NULL" in s.preview.value and "did not exist when these files were written" \
        in s.explanation.value
    assert "dropped" in s.diff.value or "added" in s.diff.value
    assert len(s.lineage.children) == 1
    assert s.back() and s.position == 3
    assert _tree_digest(stepper_wh.path) == seen[3], "back() restores the warehouse exactly"
    assert s.schema_id == 1
    s.play()
    assert s.position == n and s.step_button.disabled and not s.step()
    s.reset()
    assert s.position == 0 and _tree_digest(stepper_wh.path) == seen[0]
    assert s.table is None and s.lineage.children == ()


def test_stepper_shows_a_refused_alter_as_a_message(stepper_wh: Any) -> None:
    s = AlterStepper(stepper_wh, [
        "CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)",
        "ALTER TABLE t DROP COLUMN p",
        "ALTER TABLE t ADD COLUMN x INT NOT NULL"])
    s.play()
    assert s.position == 3
    assert "sl-error" in s.status.value
    assert "Traceback" not in s.status.value
    assert "NOT NULL" in s.status.value
    s.back()
    assert "sl-error" not in s.status.value
    s.step()
    # refused ALTERs wrote nothing: the table is still at its first schema
    assert s.schema_id == 0
    assert [f.name for f in s.table.schema.fields] == ["id", "p"]


def test_widget_html_escapes_hostile_names(stepper_wh: Any) -> None:
    col = HOSTILE.replace("'", "")
    s = AlterStepper(stepper_wh, [
        f"CREATE TABLE `{HOSTILE_TABLE}` (id INT)",
        f"ALTER TABLE `{HOSTILE_TABLE}` ADD COLUMN `{col}` STRING",
        f"INSERT INTO `{HOSTILE_TABLE}` VALUES (1, '<b>v</b>')"])
    s.play()
    assert s.last_error is None, s.status.value
    for text in (s.header.value, s.statement.value, s.diff.value, s.preview.value,
                 s.explanation.value):
        assert "<script>" not in text and "<b>v</b>" not in text and "<img" not in text
    assert "&lt;img src=x" in s.header.value
    assert "&lt;script&gt;" in s.diff.value and "&lt;b&gt;v&lt;/b&gt;" in s.preview.value
    fig = lineage_figure(s.table.history())
    assert all("<script>" not in str(t) for tr in fig.data for t in (tr.text or ()))
    view = SchemaHistoryView(s.table)
    assert "<script>" not in view.diff.value and "<img" not in view.diff.value
