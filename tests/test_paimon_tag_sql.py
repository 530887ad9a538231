"""Paimon's Spark SQL for tags and its positional procedure arguments, as Paimon 2.0's Spark
extensions run them: ``ALTER TABLE t CREATE [OR REPLACE] TAG | REPLACE TAG | DELETE TAG |
RENAME TAG``, ``SHOW TAGS t``, ``CALL sys.replace_tag / sys.rename_tag`` and
``CALL sys.create_tag('db.t', 'v1')``. Iceberg's spelling of what Paimon lacks (``DROP TAG``,
branches) is refused on a Paimon table and Paimon's on an Iceberg table, by name.
Java Paimon judges the files in ``test_interop_paimon_refs.py``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError, SqlError
from schemalab.sql import PaimonTagStatement, parse_statement


@pytest.fixture()
def wh(tmp_path: Path) -> sl.Warehouse:
    wh = sl.Warehouse(tmp_path / "wh")
    wh.sql("CREATE TABLE t (id INT, a STRING)")
    t = wh.table("t")
    from reliability_support import py_insert

    py_insert(t, [{"id": 1, "a": "x"}])
    py_insert(t, [{"id": 2, "a": "y"}])
    py_insert(t, [{"id": 3, "a": "z"}])
    return wh


def _tags(wh: sl.Warehouse) -> dict[str, int | None]:
    return {r.name: r.snapshot_id for r in wh.table("t").refs if r.kind == "tag"}


def _tag_file(wh: sl.Warehouse, name: str) -> dict[str, Any]:
    return json.loads(Path(wh.table("t").path, "tag", f"tag-{name}").read_text())


def _show(wh: sl.Warehouse) -> list[str]:
    return [r[0] for r in wh.execute_sql("SHOW TAGS t")[0].rows or []]


def test_create_replace_rename_delete_show(wh: sl.Warehouse) -> None:
    wh.sql("ALTER TABLE t CREATE TAG v1 AS OF VERSION 1")
    wh.sql("ALTER TABLE t CREATE TAG latest")
    wh.sql("ALTER TABLE t CREATE TAG kept AS OF VERSION 2 RETAIN 2 DAYS")
    assert _tags(wh) == {"v1": 1, "latest": 3, "kept": 2}
    assert _tag_file(wh, "kept")["tagTimeRetained"] == 172800.0  # seconds, as Java writes it
    assert "tagTimeRetained" not in _tag_file(wh, "v1")  # as Java: only with retention
    # an existing tag: Java's CreateOrReplaceTagExec message; IF NOT EXISTS skips it
    with pytest.raises(SchemaLabError, match="Tag v1 is exists") as e:
        wh.sql("ALTER TABLE t CREATE TAG v1 AS OF VERSION 2")
    assert e.value.rule == "tag-must-be-new" and e.value.table == "default.t"
    wh.sql("ALTER TABLE t CREATE TAG IF NOT EXISTS v1 AS OF VERSION 2")
    assert _tags(wh)["v1"] == 1
    # REPLACE re-points; a missing tag is created, by REPLACE too (CreateOrReplaceTagExec);
    # the procedure sys.replace_tag refuses a missing one (TagManager.replaceTag)
    wh.sql("ALTER TABLE t REPLACE TAG v1 AS OF VERSION 2")
    wh.sql("ALTER TABLE t CREATE OR REPLACE TAG fresh AS OF VERSION 1")
    wh.sql("ALTER TABLE t REPLACE TAG also")
    assert _tags(wh)["v1"] == 2 and _tags(wh)["fresh"] == 1 and _tags(wh)["also"] == 3
    with pytest.raises(SchemaLabError, match="Tag 'nope' doesn't exist") as e:
        wh.sql("CALL sys.replace_tag(table => 't', tag => 'nope')")
    assert e.value.rule == "ref-must-exist"
    wh.sql("ALTER TABLE t DELETE TAG also")
    assert sorted(r[0] for r in wh.sql("SELECT id FROM t VERSION AS OF 'v1'").collect()) == \
        [1, 2]
    wh.sql("ALTER TABLE t RENAME TAG v1 TO `v-one`")
    assert "v1" not in _tags(wh) and _tags(wh)["v-one"] == 2
    with pytest.raises(SchemaLabError, match="Tag 'latest' already exists"):
        wh.sql("ALTER TABLE t RENAME TAG fresh TO latest")
    with pytest.raises(SchemaLabError, match="Tag 'v1' doesn't exist"):
        wh.sql("ALTER TABLE t RENAME TAG v1 TO v9")
    assert _show(wh) == ["fresh", "kept", "latest", "v-one"]  # sorted, as ShowTagsExec
    wh.sql("ALTER TABLE t DELETE TAG fresh")
    wh.sql("ALTER TABLE t DELETE TAG IF EXISTS fresh")
    wh.sql("ALTER TABLE t DELETE TAG fresh")  # Java only logs a missing tag
    assert _show(wh) == ["kept", "latest", "v-one"]
    result = wh.execute_sql("SHOW TAGS t")[0]
    assert result.columns == ["tag"] and result.row_schema == "tag STRING"


def test_tag_statements_refuse_before_writing(wh: sl.Warehouse) -> None:
    before = sorted(os.listdir(wh.table("t").path))
    cases = [
        ("ALTER TABLE t CREATE TAG v1 AS OF VERSION 9", "snapshot-must-exist"),
        ("ALTER TABLE t DROP TAG v1", "unsupported-sql"),  # Iceberg's spelling
        ("ALTER TABLE t CREATE BRANCH dev", "unsupported-sql"),
        ("ALTER TABLE t CREATE TAG `a/b`", "valid-ref-name"),
        ("ALTER TABLE t DELETE TAG", "sql-syntax"),
        ("ALTER TABLE t RENAME TAG a b", "sql-syntax"),
    ]
    for statement, rule in cases:
        with pytest.raises(SchemaLabError) as e:
            wh.sql(statement)
        assert e.value.rule == rule, (statement, e.value)
    assert sorted(os.listdir(wh.table("t").path)) == before
    with pytest.raises(SqlError, match="DELETE TAG v1 deletes its tag"):
        wh.sql("ALTER TABLE t DROP TAG v1")


def test_positional_procedure_arguments(wh: sl.Warehouse) -> None:
    wh.sql("CALL sys.create_tag('default.t', 'v1', 1)")
    wh.sql("CALL sys.create_tag('t', 'v3')")
    wh.sql("CALL sys.replace_tag('t', 'v1', 2, '1 h')")
    assert _tags(wh) == {"v1": 2, "v3": 3}
    assert _tag_file(wh, "v1")["tagTimeRetained"] == 3600.0
    wh.sql("CALL sys.rename_tag(table => 't', tag => 'v3', target_tag => 'v4')")
    wh.sql("CALL sys.rename_tag('t', 'v1', 'v2')")
    assert _tags(wh) == {"v2": 2, "v4": 3}
    wh.sql("CALL sys.create_branch('t', 'dev', 'v2')")
    assert [r.name for r in wh.table("t").refs if r.kind == "branch"] == ["main", "dev"]
    wh.sql("CALL sys.delete_tag('t', 'v2,v4')")
    assert _tags(wh) == {}
    with pytest.raises(SqlError, match="Cannot mix named and positional arguments") as e:
        wh.sql("CALL sys.create_tag('t', tag => 'v5')")
    assert e.value.rule == "procedure-arguments"
    with pytest.raises(SqlError, match="Too many arguments for procedure"):
        wh.sql("CALL sys.delete_tag('t', 'v5', 'extra')")
    with pytest.raises(SqlError, match="no tag argument"):
        wh.sql("CALL sys.create_tag('t')")
    # sys.compact's positional order is Java's: table, partitions, compact_strategy, ...
    with pytest.raises(SqlError, match="only supports 'full' or 'minor'"):
        wh.sql("CALL sys.compact('t', '', 'fastest')")
    assert _tags(wh) == {}


def test_iceberg_tables_refuse_paimon_spellings(tmp_path: Path) -> None:
    iw = sl.Warehouse(tmp_path / "iwh", format="iceberg")
    iw.sql("CREATE TABLE t (id INT)")
    for statement, instead in [("ALTER TABLE t DELETE TAG v1", "DROP TAG v1"),
                               ("ALTER TABLE t RENAME TAG v1 TO v2", "no RENAME TAG"),
                               ("SHOW TAGS t", "default.t.refs")]:
        with pytest.raises(SqlError, match=instead) as e:
            iw.sql(statement)
        assert e.value.rule == "unsupported-sql" and e.value.table == "default.t"


def test_parsing() -> None:
    s = parse_statement("alter table `db`.`t` delete tag if exists `x``y`")
    assert s == PaimonTagStatement(sl.sql.TableName("db", "t"), "delete", "x`y", if_exists=True,
                                   text="alter table `db`.`t` delete tag if exists `x``y`")
    assert parse_statement("SHOW TAGS db.t").name == sl.sql.TableName("db", "t")
    with pytest.raises(SqlError, match="SHOW TAGS <table>"):
        parse_statement("SHOW TAGS")
