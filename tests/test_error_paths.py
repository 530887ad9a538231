"""Bad input through each public call ends in a SchemaLabError with a rule id (and the table
and column where they are known), never a bare ValueError / KeyError / TypeError /
AttributeError from inside. Each case drives the public call a user makes; the pure-Python
ones need no JVM, the last ones write data on the shared Spark session."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import NotFoundError, SchemaChangeError, SchemaLabError
from schemalab.rules import RULES
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    Move,
    RenameColumn,
    SetOption,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from schemalab.table import Table
from schemalab.types import INT, STRING

ICEBERG = Path(__file__).parent / "fixtures" / "iceberg-metadata" / "TableMetadataV2Valid.json"


def refused(call: Any, rule: str, *, table: str | None = None,
            column: str | None = None) -> SchemaLabError:
    """Run ``call``; it must raise a SchemaLabError with ``rule`` (and ``table`` / ``column``
    when given)."""
    assert rule in RULES
    with pytest.raises(SchemaLabError) as info:
        call()
    e = info.value
    assert e.rule == rule, (e.rule, e.message)
    if table is not None:
        assert e.table == table, e.message
    if column is not None:
        assert e.column == column, e.message
    return e


@pytest.fixture()
def wh(tmp_path: Path) -> sl.Warehouse:
    w = sl.Warehouse(tmp_path / "wh")
    w.sql("CREATE TABLE t (id INT, c STRING); ALTER TABLE t RENAME COLUMN c TO c2")
    return w


# ---- history and explanation lookups (were KeyErrors) -----------------------------------------


def test_history_lookups_of_unknown_ids(wh: sl.Warehouse) -> None:
    h = wh.table("t").history()
    e = refused(lambda: h.schema(99), "schema-must-exist", table="default.t")
    assert isinstance(e, KeyError) and str(e) == "Table default.t has no schema 99"
    refused(lambda: h.tree(99), "snapshot-must-exist", table="default.t")
    refused(lambda: h.tree_position(99), "snapshot-must-exist", table="default.t")
    refused(lambda: h.lineage_of(99), "field-must-exist", table="default.t")
    refused(lambda: h.diff(0, 99), "schema-must-exist", table="default.t")
    assert [e.kind for e in h.diff(0, 1).events] == ["renamed"]  # a known pair still works


def test_explanation_of_an_unknown_column(wh: sl.Warehouse) -> None:
    x = wh.table("t").explain_read()
    refused(lambda: x.column(0, "zz"), "column-must-exist", table="default.t", column="zz")


def test_schema_type_of_an_unknown_column(wh: sl.Warehouse) -> None:
    e = refused(lambda: wh.table("t").schema.type_of("zz"), "column-must-exist", column="zz")
    assert isinstance(e, NotFoundError) and isinstance(e, KeyError)


def test_iceberg_table_lookups() -> None:
    t = sl.open_table(str(ICEBERG))
    refused(lambda: t.schema_at(99), "schema-must-exist")
    refused(lambda: t.snapshot(99), "snapshot-must-exist")
    refused(lambda: t.read_plan(schema="newest"), "read-schema")
    refused(lambda: t.history().schema(99), "schema-must-exist")


def test_open_table_and_warehouse_names(wh: sl.Warehouse, tmp_path: Path) -> None:
    refused(lambda: sl.open_table(str(tmp_path / "nope")), "table-must-exist")
    refused(lambda: wh.table("nope"), "table-must-exist", table="default.nope")
    refused(lambda: wh.table(5), "valid-identifier")  # type: ignore[arg-type]
    refused(lambda: wh.drop_table(None), "valid-identifier")  # type: ignore[arg-type]
    refused(lambda: wh.table("a/b"), "valid-identifier")
    refused(lambda: wh.sql(5), "sql-syntax")  # type: ignore[arg-type]
    refused(lambda: wh.rename_table("t", "t"), "table-must-be-new")


# ---- changes and columns built in Python with the wrong types (were AttributeErrors) ---------


@pytest.mark.parametrize(("change", "column"), [
    (AddColumn(("x",), "INT"), "x"),  # type: ignore[arg-type]
    (AddColumn((), INT()), None),
    (AddColumn("x", INT()), None),  # type: ignore[arg-type]
    (RenameColumn(("c2",), 5), "c2"),  # type: ignore[arg-type]
    (RenameColumn(("c2",), ""), "c2"),
    (UpdateColumnType(("c2",), "INT"), "c2"),  # type: ignore[arg-type]
    (UpdateColumnNullability(("c2",), "yes"), "c2"),  # type: ignore[arg-type]
    (UpdateColumnPosition(Move("c2", "SIDEWAYS")), None),  # type: ignore[arg-type]
    (UpdateColumnPosition(None), None),  # type: ignore[arg-type]
    (SetOption("bucket", 4), None),  # type: ignore[arg-type]
    (SetOption(4, "x"), None),  # type: ignore[arg-type]
    (UpdateComment(5), None),  # type: ignore[arg-type]
], ids=lambda v: repr(v) if not isinstance(v, str | None) else str(v))
def test_alter_with_changes_of_the_wrong_types(wh: sl.Warehouse, change: Any,
                                               column: str | None) -> None:
    t = wh.table("t")
    before = sorted(os.listdir(Path(t.path) / "schema"))
    e = refused(lambda: t.alter(change), "change-value", table="default.t")
    assert e.column == column and isinstance(e, SchemaChangeError)
    assert type(change).__name__ in e.message or "Move" in e.message
    assert sorted(os.listdir(Path(t.path) / "schema")) == before  # nothing written
    refused(lambda: t.alter([1, 2]), "unsupported-change", table="default.t")  # type: ignore


@pytest.mark.parametrize("kwargs", [
    {"columns": [("a", "INT")]},
    {"columns": "a INT"},
    {"columns": [ColumnSpec("a", "INT")]},  # type: ignore[arg-type]
    {"options": {"bucket": 4}},
    {"options": [("a", "b")]},
    {"partition_keys": "p"},
    {"partition_keys": [1]},
    {"comment": 5},
], ids=str)
def test_create_table_with_values_of_the_wrong_types(wh: sl.Warehouse,
                                                     kwargs: dict[str, Any]) -> None:
    args = {"columns": [ColumnSpec("a", INT()), ColumnSpec("p", STRING())], **kwargs}
    refused(lambda: wh.create_table("u", **args), "change-value", table="default.u")
    assert not wh.has_table("u")


# ---- options another writer set (were ValueErrors) -------------------------------------------


def foreign_options(wh: sl.Warehouse, name: str, **options: str) -> Table:
    """A primary-key table whose schema file another writer gave ``options``."""
    wh.sql(f"CREATE TABLE {name} (id INT NOT NULL, v INT) "
           "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    path = Path(wh.table(name).path) / "schema" / "schema-0"
    doc = json.loads(path.read_text())
    doc["options"].update(options)
    path.write_text(json.dumps(doc))
    return Table(str(path.parent.parent), name=f"default.{name}")


def test_compact_with_foreign_options(wh: sl.Warehouse) -> None:
    t = foreign_options(wh, "b1", bucket="abc")
    e = refused(t.compact, "option-value", table="default.b1")
    assert "'bucket' must be an integer, not 'abc'" in e.message
    t = foreign_options(wh, "b5", **{"num-levels": "many"})
    e = refused(t.compact, "option-value", table="default.b5")
    assert "'num-levels' must be an integer, not 'many'" in e.message
    t = foreign_options(wh, "b2", **{"cast.mode": "sometimes"})
    refused(t.compact, "cast-mode", table="default.b2")
    refused(lambda: t.read_plan(), "cast-mode", table="default.b2")


# ---- the stepper widget ------------------------------------------------------------------------


def test_stepper_statements_of_the_wrong_types(wh: sl.Warehouse) -> None:
    pytest.importorskip("ipywidgets")
    from schemalab.widgets import AlterStepper

    refused(lambda: AlterStepper(wh, 5), "sql-syntax")  # type: ignore[arg-type]
    refused(lambda: AlterStepper(wh, [5]), "sql-syntax")  # type: ignore[list-item]


# ---- writes (Spark) ------------------------------------------------------------------------------


def test_insert_into_a_table_with_foreign_options(wh: sl.Warehouse, spark: Any) -> None:
    w = sl.Warehouse(wh.path, spark=spark)
    t = foreign_options(w, "b3", bucket="abc")
    refused(lambda: w.sql("INSERT INTO b3 VALUES (1, 1)"), "option-value", table="default.b3")
    assert t.snapshot_manager.list_ids() == []
    t = foreign_options(w, "b4", **{"cast.mode": "sometimes"})
    doc_path = Path(t.path) / "schema" / "schema-0"
    doc = json.loads(doc_path.read_text())
    doc["options"].pop("cast.mode")
    doc_path.write_text(json.dumps(doc))
    w.sql("INSERT INTO b4 VALUES (1, 1), (2, 2)")
    doc["options"]["cast.mode"] = "sometimes"  # set after the data is there
    doc_path.write_text(json.dumps(doc))
    refused(Table(t.path, name="default.b4").compact, "cast-mode", table="default.b4")
