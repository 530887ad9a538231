"""Run by `make test-install` in a fresh venv holding only `pip install .` (the runtime
dependencies, no extras): the FLIP-226 example and a primary-key table with an upsert, a
rename and a DELETE must work, and the widgets must import. Not collected by pytest."""

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
    print("ok", wh.table("accounts").history().to_json()["snapshots"][-1]["id"])
    importlib.import_module("schemalab.widgets")  # the runtime deps hold the widget stack
    print("widgets ok")


if __name__ == "__main__":
    main()
