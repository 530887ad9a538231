"""Warehouse.sql: DDL without a JVM, and INSERT / SELECT / SHOW / DESCRIBE on Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import (
    SchemaChangeError,
    SchemaLabError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
)
from schemalab.sql import parse_statement

FLIP_226 = """CREATE TABLE T (a STRING, b STRING, c STRING);
              INSERT INTO T VALUES ('a1', 'b1', 'c1');
              ALTER TABLE T DROP COLUMN c;
              ALTER TABLE T ADD COLUMN c STRING;
              INSERT INTO T VALUES ('a2', 'b2', 'c2')"""


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


# ---- DDL: pure Python, no JVM ----------------------------------------------------------------

def test_ddl_runs_without_starting_spark(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    assert wh.sql("""CREATE TABLE db1.orders (order_id BIGINT NOT NULL, name STRING,
                       dt STRING, PRIMARY KEY (order_id, dt) NOT ENFORCED)
                     PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '5', 'cast.mode' = 'implicit');
                     ALTER TABLE db1.orders ADD COLUMN note STRING COMMENT 'free text' AFTER name;
                     ALTER TABLE db1.orders RENAME COLUMN name TO order_name;
                     ALTER TABLE db1.orders SET TBLPROPERTIES ('k' = 'v')""") is None
    assert not wh.spark_started
    t = wh.table("db1.orders")
    s = t.schema
    assert s.id == 3
    assert s.field_names == ["order_id", "order_name", "note", "dt"]
    assert s.primary_keys == ("order_id", "dt") and s.partition_keys == ("dt",)
    assert s.options == {"bucket": "5", "cast.mode": "implicit", "k": "v"}
    assert s.field("note").description == "free text"  # type: ignore[union-attr]
    assert s.field("dt").type.sql() == "STRING NOT NULL"  # type: ignore[union-attr]
    assert [v.id for v in t.schemas] == [0, 1, 2, 3]
    assert wh.list_tables() == ["db1.orders"]


def test_ddl_errors_name_table_and_rule(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE t (id INT, dt STRING) PARTITIONED BY (dt)")
    with pytest.raises(SchemaChangeError) as e:
        wh.sql("ALTER TABLE t DROP COLUMN dt")
    assert "default.t" in str(e.value) and e.value.column == "dt"
    assert (e.value.table, e.value.rule) == ("default.t", "keys-cannot-be-dropped")
    with pytest.raises(SchemaChangeError, match="cannot specify NOT NULL in the default.t "
                       "table") as e:
        wh.sql("ALTER TABLE t ADD COLUMN x INT NOT NULL")
    assert (e.value.column, e.value.rule) == ("x", "added-column-must-be-nullable")
    with pytest.raises(TableExistsError) as ex:
        wh.sql("CREATE TABLE t (id INT)")
    assert (ex.value.table, ex.value.rule) == ("default.t", "table-must-be-new")
    wh.sql("CREATE TABLE IF NOT EXISTS t (id INT)")
    with pytest.raises(TableNotFoundError) as nf:
        wh.sql("ALTER TABLE nope ADD COLUMN x INT")
    assert (nf.value.table, nf.value.rule) == ("default.nope", "table-must-exist")
    with pytest.raises(SqlError) as sq:
        wh.sql("CREATE VIEW v AS SELECT 1")
    assert sq.value.rule == "unsupported-statement"
    assert [s.id for s in wh.table("t").schemas] == [0]


def test_a_failing_statement_says_which_earlier_ones_were_applied(tmp_path: Path) -> None:
    """Each statement commits on its own: when statement N fails, the ones before it stay,
    and the error says so (and keeps its class, table, column and rule)."""
    wh = sl.Warehouse(tmp_path)
    with pytest.raises(SchemaChangeError) as info:
        wh.sql("CREATE TABLE U (a INT); ALTER TABLE U ADD COLUMN b INT;\n"
               "ALTER TABLE U DROP COLUMN nope")
    e = info.value
    assert e.message == (
        "Statement 3 of 3 (ALTER TABLE U DROP COLUMN nope) failed; statements 1, 2 were "
        "applied and stay: Column nope does not exist in the default.U table.")
    assert (e.table, e.column, e.rule) == ("default.U", "nope", "column-must-exist")
    assert [f.name for f in wh.table("U").schema.fields] == ["a", "b"]
    with pytest.raises(SchemaChangeError, match=r"^Statement 2 of 2 \(ALTER TABLE U RENAME "
                       r"COLUMN zz TO y\) failed; statement 1 was applied and stays: ") as info:
        wh.sql("ALTER TABLE U RENAME COLUMN b TO c; ALTER TABLE U RENAME COLUMN zz TO y")
    assert (info.value.column, info.value.rule) == ("zz", "column-must-exist")
    with pytest.raises(SchemaLabError, match=r"^Statement 1 of 2 \(ALTER TABLE nope .*\) "
                       "failed, nothing was applied: Table default.nope does not exist") as any_:
        wh.sql("ALTER TABLE nope ADD COLUMN b INT; CREATE TABLE V (a INT)")
    assert (any_.value.table, any_.value.rule) == ("default.nope", "table-must-exist")
    assert not wh.has_table("V")
    with pytest.raises(SchemaChangeError, match="^Column zz does not exist") as info:
        wh.sql("ALTER TABLE U RENAME COLUMN zz TO y")  # one statement: its own message
    assert info.value.rule == "column-must-exist"


def test_rename_and_drop_table(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE a (id INT); ALTER TABLE a RENAME TO b")
    assert wh.list_tables() == ["default.b"]
    wh.sql("DROP TABLE b; DROP TABLE IF EXISTS b")
    assert wh.list_tables() == []
    with pytest.raises(TableNotFoundError) as info:
        wh.sql("DROP TABLE b")
    assert (info.value.table, info.value.rule) == ("default.b", "table-must-exist")


def test_other_procedures_are_read_but_refused_clearly(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE db.t (id INT)")
    with pytest.raises(SqlError, match="Unsupported procedure: CALL sys.remove_orphan_files") as e:
        wh.sql("CALL sys.remove_orphan_files(table => 'db.t', older_than => '2024-01-01')")
    assert e.value.rule == "unsupported-statement" and e.value.table == "db.t"
    with pytest.raises(SqlError, match="unknown argument bogus") as e:
        wh.sql("CALL sys.compact(table => 'db.t', bogus => 1)")
    assert e.value.rule == "compact-arguments"
    assert not wh.spark_started
    assert [s.id for s in wh.table("db.t").schemas] == [0]


@pytest.mark.parametrize("name", ["`..`", "`a/b`", "`.hidden`", "`x\u0000y`"])
def test_table_names_cannot_escape_the_warehouse(tmp_path: Path, name: str) -> None:
    wh = sl.Warehouse(tmp_path / "wh")
    with pytest.raises((sl.InvalidIdentifierError, SqlError)) as info:
        wh.sql(f"CREATE TABLE {name} (id INT)")
    assert info.value.rule in ("valid-identifier", "sql-syntax"), info.value.message
    assert not list((tmp_path).glob("*.db")) and not (tmp_path / "wh" / "default.db").exists()


# ---- on Spark ---------------------------------------------------------------------------------

def test_flip_226_example_as_written(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(FLIP_226)
    assert rows(wh.sql("SELECT * FROM T")) == [("a1", "b1", None), ("a2", "b2", "c2")]
    assert rows(wh.sql("SELECT a, c FROM default.T WHERE c IS NULL")) == [("a1", None)]


def test_insert_forms_show_describe(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE src (id INT, name STRING, dt DATE) PARTITIONED BY (dt);
              INSERT INTO src VALUES (1, 'a', DATE '2024-01-01'), (2, 'b', DATE '2024-01-02');
              INSERT INTO src (dt, id) VALUES (DATE '2024-01-02', 3);
              CREATE TABLE dst (id BIGINT, label STRING);
              INSERT INTO dst SELECT id, upper(name) FROM src WHERE id < 3""")
    assert rows(wh.sql("SELECT * FROM dst")) == [(1, "A"), (2, "B")]
    assert rows(wh.sql("SELECT id, name FROM src")) == [(1, "a"), (2, "b"), (3, None)]
    wh.sql("INSERT OVERWRITE dst VALUES (9, 'z')")
    assert rows(wh.sql("SELECT * FROM dst")) == [(9, "z")]
    assert rows(wh.sql("SHOW TABLES")) == [("default", "dst"), ("default", "src")]
    desc = rows(wh.sql("DESCRIBE src"))
    assert ("id", "INT", None, 0) in desc and ("dt", "DATE", None, 2) in desc
    # a join of two evolved reads
    wh.sql("ALTER TABLE src RENAME COLUMN name TO full_name")
    joined = wh.sql("SELECT d.id, s.full_name FROM dst d RIGHT JOIN src s ON d.id = s.id")
    assert rows(joined) == sorted([(None, None), (None, "a"), (None, "b")], key=repr)


def test_cli_prints_query_results(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  spark: Any) -> None:
    from schemalab.cli import main

    wh_dir = str(tmp_path / "wh")
    sl.Warehouse(wh_dir, spark=spark)  # the CLI reuses the running session
    assert main(["sql", wh_dir, "-e", FLIP_226 + "; SELECT * FROM T ORDER BY a"]) == 0
    out = capsys.readouterr().out
    assert "| a1 | b1 | NULL |" in out and "| a2 | b2 | c2   |" in out and "(2 rows)" in out


@pytest.mark.parametrize("values", [
    "(1, 'a', NULL), (-2, 'b''c', TRUE), (3.5e3, \"x\", false), (-0.5, '', null)",
    "(1L, 'a'), (1 + 2, 'b')",          # a suffixed number, an expression: sqlglot's path
    "(1, 'a' 'b')",                     # adjacent strings concatenate
    "(- 1, x'00'), (-'a', 1)",          # a byte string; a negated string
    "(1, /* c */ 2)",                   # a comment stays on its value
    "(1), (2), ((3))",
])
def test_insert_values_trees_as_sqlglot_builds_them(values: str) -> None:
    """Rows of plain literals take a fast path in the dialect (a 1,000-row INSERT parsed 2x
    faster); the tree must be the one Spark's sqlglot parser builds for the same rows."""
    import sqlglot

    from schemalab.sql.dialect import SchemalabSpark

    text = f"INSERT INTO t VALUES {values}"
    ours = SchemalabSpark().parse(text)[0]
    theirs = sqlglot.parse_one(text, read="spark")
    assert ours.expression == theirs.expression
    assert [c.comments for c in ours.expression.find_all(sqlglot.exp.Literal)] == \
        [c.comments for c in theirs.expression.find_all(sqlglot.exp.Literal)]


@pytest.mark.parametrize("values", ["(1, 2", "(1 2)", "(1, 2), (3"])
def test_insert_values_malformed_rows_still_fail(values: str) -> None:
    with pytest.raises(SqlError) as info:
        parse_statement(f"INSERT INTO t VALUES {values}")
    assert info.value.rule == "sql-syntax"
