"""Run by `make test-install` in a fresh venv holding only `pip install .` (the runtime
dependencies, no extras): the FLIP-226 example and a primary-key table with an upsert, a
rename and a DELETE must work, the JVM's row filter must build from the package's Java source,
and the widgets must import; a catalog, whose clients are the
`catalogs` extra, is refused by name. Not collected by pytest."""

import importlib
import tempfile

import schemalab as sl


def main() -> None:
    wh = sl.Warehouse(tempfile.mkdtemp())
    wh.sql("""CREATE TABLE T (a STRING, b STRING, c STRING);
              INSERT INTO T VALUES ('a1', 'b1', 'c1');
              ALTER TABLE T DROP COLUMN c;
              ALTER TABLE T ADD COLUMN c STRING;
              INSERT INTO T VALUES ('a2', 'b2', 'c2')""")
    rows = sorted(tuple(r) for r in wh.sql("SELECT * FROM T").collect())
    assert rows == [("a1", "b1", None), ("a2", "b2", "c2")], rows
    wh.sql("""CREATE TABLE accounts (id BIGINT, owner STRING, balance INT,
                                     PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '2');
              INSERT INTO accounts VALUES (1, 'ana', 100), (2, 'bo', 200);
              ALTER TABLE accounts RENAME COLUMN owner TO holder;
              INSERT INTO accounts VALUES (2, 'bo', 250);
              DELETE FROM accounts WHERE id = 1""")
    rows = sorted(tuple(r) for r in wh.sql("SELECT * FROM accounts").collect())
    assert rows == [(2, "bo", 250)], rows
    # the JVM's classes are compiled from the package's own Java sources (package data)
    from schemalab.engine import jvm_udfs

    assert jvm_udfs.missing(wh.spark) == [], jvm_udfs.missing(wh.spark)
    print("ok", wh.table("accounts").history().to_json()["snapshots"][-1]["id"])
    importlib.import_module("schemalab.widgets")  # the runtime deps hold the widget stack
    print("widgets ok")
    for catalog in ({"type": "rest", "uri": "http://127.0.0.1:9"},
                    {"type": "paimon-rest", "uri": "http://127.0.0.1:9", "warehouse": "w"}):
        try:
            sl.open_table("db.t", catalog=catalog)
        except sl.SchemaLabError as e:
            assert e.rule == "catalog-config" and "schemalab[catalogs]" in str(e), e
        else:
            raise AssertionError(f"{catalog} opened without its client library")
    print("catalogs refused by name without their extra")


if __name__ == "__main__":
    main()
