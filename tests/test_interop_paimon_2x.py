"""Paimon 1.1+ features judged by Java Paimon 2.0.0 (the Maven Central oracle): its own
system tables against schemalab's, and schemalab's writes to row-tracking tables and of
column defaults read by it.

Run by ``make test-interop`` (it needs ``make oracle-jars``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from oracles.canonical import canonical_rows
from oracles.java_paimon import JavaPaimon

import schemalab as sl
from schemalab.paimon.system_tables import SYSTEM_TABLES
from schemalab.types.spark import from_spark

pytest_plugins = ["oracles.fixtures"]


def _java_system(java: JavaPaimon, wh: Path, db: str, table: str, name: str
                 ) -> dict[str, Any]:
    r: dict[str, Any] = java.read(wh, f"{table}${name}", database=db)
    return r


def _ours(t: Any, name: str) -> tuple[list[str], list[str], list[list[Any]]]:
    df = t.system_table(name)
    columns, _ = SYSTEM_TABLES[name]
    types = [ty + ("" if nullable else " NOT NULL") for _, ty, nullable in columns]
    return list(df.columns), types, canonical_rows(df)


def _normalized(rows: list[list[Any]], columns: list[str]) -> list[list[Any]]:
    """Java prints the warehouse it was given (``file:/...`` or ``/...``) in file paths.
    And Java 2.0.0 reads a schema file's ``"comment": null`` (pypaimon writes it) as the
    text ``'null'`` (its SchemaSerializer takes the node's text); schemalab returns NULL, as
    Java does for a file without the key (docs/compatibility.md §7)."""
    out = []
    for r in rows:
        r = list(r)
        if "file_path" in columns:
            i = columns.index("file_path")
            r[i] = r[i].removeprefix("file:")
        if columns[:2] == ["schema_id", "fields"] and r[columns.index("comment")] == "null":
            r[columns.index("comment")] = None
        out.append(r)
    return sorted(out, key=json.dumps)


def _assert_same(java: JavaPaimon, wh: Path, db: str, table: str, spark: Any) -> None:
    t = sl.open_table(wh / f"{db}.db" / table, spark=spark)
    for name in SYSTEM_TABLES:
        theirs = _java_system(java, wh, db, table, name)
        columns, types, rows = _ours(t, name)
        assert columns == theirs["columns"], name
        assert types == theirs["types"], name
        assert _normalized(rows, columns) == _normalized(theirs["rows"], columns), name


@pytest.fixture()
def evolved_pk(tmp_path: Path, spark: Any) -> Path:
    """A partitioned primary-key table schemalab wrote: upserts, a rename, a widening, a
    column added, a delete and a compaction."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE t (id INT, v INT, s STRING, dt STRING) PARTITIONED BY (dt)
              TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2');
              INSERT INTO t VALUES (1, 10, 'a', 'p1'), (2, 20, 'b', 'p1'), (3, 30, 'c', 'p2');
              ALTER TABLE t RENAME COLUMN s TO label;
              ALTER TABLE t ALTER COLUMN v TYPE BIGINT;
              ALTER TABLE t ADD COLUMN x DOUBLE;
              INSERT INTO t VALUES (1, 11, 'a2', 'p1', 1.5), (4, 40, 'd', 'p2', -2.0);
              DELETE FROM t WHERE id = 2;
              CALL sys.compact(table => 't')""")
    return tmp_path


def test_system_tables_of_a_schemalab_table_equal_java_2(
        java_paimon_2: JavaPaimon, evolved_pk: Path, spark: Any) -> None:
    _assert_same(java_paimon_2, evolved_pk, "default", "t", spark)


def test_system_tables_of_pypaimon_tables_equal_java_2(
        java_paimon_2: JavaPaimon, pypaimon_warehouses: Path, tmp_path: Path,
        spark: Any) -> None:
    from pypaimon import CatalogFactory

    for wh, ident in (("wh", "demo.events"), ("wh", "demo.users"), ("wh5", "s.full")):
        root = tmp_path / wh
        if not root.exists():
            shutil.copytree(pypaimon_warehouses / wh, root)
        db, table = ident.split(".")
        if table == "users":
            cat = CatalogFactory.create({"warehouse": str(root)})
            cat.create_tag(ident, "v1", snapshot_id=1)
            cat.create_branch(ident, "dev", tag_name="v1")
        _assert_same(java_paimon_2, root, db, table, spark)


def test_row_tracking_insert_read_by_java_2(java_paimon_2: JavaPaimon, tmp_path: Path,
                                            spark: Any) -> None:
    """Java Paimon 2.0 writes a row-tracking table, schemalab inserts, Java reads every row
    and its row ids (``$row_tracking``) and writes on after us."""
    java = java_paimon_2
    java.create_table(tmp_path, "rt", [("id", "INT"), ("v", "STRING")],
                      options={"row-tracking.enabled": "true"})
    java.write(tmp_path, "rt", [[1, "a"], [2, "b"]])
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("INSERT INTO rt VALUES (3, 'c'), (4, 'd')")
    java.write(tmp_path, "rt", [[5, "e"]])
    assert java.read(tmp_path, "rt")["rows"] == [[1, "a"], [2, "b"], [3, "c"], [4, "d"],
                                                 [5, "e"]]
    tracked = java.read(tmp_path, "rt$row_tracking")
    i, r = tracked["columns"].index("id"), tracked["columns"].index("_ROW_ID")
    assert sorted((row[i], row[r]) for row in tracked["rows"]) == [
        (1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]
    assert [s.next_row_id for s in wh.table("rt").snapshots] == [2, 4, 5]
    _assert_same(java, tmp_path, "default", "rt", spark)
    _assert_data_tables_same(java, tmp_path, "default", "rt", spark)


def _assert_data_tables_same(java: JavaPaimon, wh: Path, db: str, table: str, spark: Any
                             ) -> None:
    """``$audit_log`` and (on a row-tracking table) ``$row_tracking`` as Java returns them:
    the same columns in the same order, the same rows."""
    t = sl.open_table(wh / f"{db}.db" / table, spark=spark)
    names = ["audit_log"]
    if t.schema.options.get("row-tracking.enabled") == "true":
        names.append("row_tracking")
    for name in names:
        theirs = _java_system(java, wh, db, table, name)
        df = t.system_table(name)
        assert df.columns == theirs["columns"], name
        # the same types (a Spark column's nullability is the plan's, so NOT NULL aside)
        assert [from_spark(f.dataType).sql() for f in df.schema.fields] == [
            ty.removesuffix(" NOT NULL") for ty in theirs["types"]], name
        assert sorted(canonical_rows(df), key=json.dumps) == sorted(
            theirs["rows"], key=json.dumps), name
        sql = sl.Warehouse(wh, spark=spark).sql(f"SELECT * FROM `{db}`.`{table}${name}`")
        assert sorted(canonical_rows(sql), key=json.dumps) == sorted(
            theirs["rows"], key=json.dumps), name


def test_audit_log_of_an_evolved_append_table_equals_java_2(
        java_paimon_2: JavaPaimon, tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE ap (id INT, v STRING, p INT) PARTITIONED BY (p);
              INSERT INTO ap VALUES (1, 'a', 1), (2, 'b', 2);
              ALTER TABLE ap RENAME COLUMN v TO label;
              ALTER TABLE ap ADD COLUMN x DOUBLE;
              INSERT INTO ap VALUES (3, 'c', 1, 0.5)""")
    _assert_data_tables_same(java_paimon_2, tmp_path, "default", "ap", spark)


def test_data_evolution_reads_equal_java_2_at_every_snapshot(
        java_paimon_2: JavaPaimon, tmp_path: Path, spark: Any) -> None:
    """pypaimon 2.1 writes a data-evolution table (UPDATEs of some columns, a rename and an
    added column between them); Java Paimon 2.0.0 reads every snapshot, with each row's
    ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (``$row_tracking``), as schemalab does."""
    from test_paimon_2x_features import build_evolved_data_evolution

    root, path = build_evolved_data_evolution(tmp_path)
    t = sl.open_table(path, spark=spark)
    system = ["_ROW_ID", "_SEQUENCE_NUMBER"]
    for snap in t.snapshots:
        theirs = java_paimon_2.read(root, "ev$row_tracking", snap.id)
        cols = theirs["columns"]
        df = t.read(snapshot_id=snap.id, system_columns=system)
        assert sorted(cols) == sorted(df.columns), snap.id
        ours = canonical_rows(df.select(*cols))
        assert sorted(ours, key=json.dumps) == sorted(theirs["rows"], key=json.dumps), snap.id
        plain = java_paimon_2.read(root, "ev", snap.id)
        assert sorted(canonical_rows(t.read(snapshot_id=snap.id)), key=json.dumps) == sorted(
            plain["rows"], key=json.dumps), snap.id
    _assert_data_tables_same(java_paimon_2, root, "default", "ev", spark)


#: what a data file is, in Java's $files, apart from its name, size, time and stats
_LAYOUT = ("partition", "bucket", "file_format", "schema_id", "level", "record_count",
           "min_sequence_number", "max_sequence_number", "file_source", "first_row_id",
           "write_cols")


def _layout(java: JavaPaimon, wh: Path, table: str) -> list[list[Any]]:
    r = _java_system(java, wh, "default", table, "files")
    cols = r["columns"]
    return sorted(([row[cols.index(k)] for k in _LAYOUT] for row in r["rows"]), key=json.dumps)


@pytest.mark.parametrize("kind", ["evolved", "partitioned"])
def test_data_evolution_compaction_equals_java_2(java_paimon_2: JavaPaimon, tmp_path: Path,
                                                 spark: Any, kind: str) -> None:
    """The same data-evolution table compacted by schemalab and by Java Paimon 2.0 (what
    ``CALL sys.compact`` runs: DataEvolutionCompactCoordinator's tasks): the same files
    (partition, first row id, row count, sequence numbers, source, every column), and Java
    reads both equal, with the row ids the rows had before."""
    from test_paimon_2x_compaction import build_partitioned_data_evolution
    from test_paimon_2x_features import build_evolved_data_evolution

    java = java_paimon_2
    if kind == "evolved":
        ours, _ = build_evolved_data_evolution(tmp_path / "ours")
        table = "ev"
    else:
        ours, table = tmp_path / "ours", "pd"
        build_partitioned_data_evolution(ours)
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs)
    before = java.read(ours, f"{table}$row_tracking")
    result = sl.Warehouse(ours, spark=spark).table(table).compact()
    assert result.snapshot is not None
    assert java.compact(theirs, table)["snapshot_id"] == result.snapshot.id
    assert _layout(java, ours, table) == _layout(java, theirs, table)
    after = java.read(ours, f"{table}$row_tracking")
    assert after == java.read(theirs, f"{table}$row_tracking")
    seq = after["columns"].index("_SEQUENCE_NUMBER")
    assert sorted(r[:seq] for r in after["rows"]) == sorted(r[:seq] for r in before["rows"])
    assert [s["commit_kind"] for s in java.snapshots(ours, table)][-1] == "COMPACT"
    _assert_same(java, ours, "default", table, spark)
    _assert_data_tables_same(java, ours, "default", table, spark)


def test_audit_log_of_primary_key_tables_equals_java_2(
        java_paimon_2: JavaPaimon, evolved_pk: Path, tmp_path: Path, spark: Any) -> None:
    """``$audit_log`` of primary-key tables as Java Paimon 2.0 reads it: each key's merged
    row with the kind of the version that won, retractions kept (a key deleted and not yet
    compacted reads ``-D``, one retracted by ``-U`` reads ``-U``); with
    ``table-read.sequence-number.enabled`` each row's ``_SEQUENCE_NUMBER`` too; a
    schemalab-written table after its compaction (every row ``+I``)."""
    from oracles.java_paimon import set_option

    java = java_paimon_2
    root = tmp_path / "java"
    java.create_table(root, "pk", [("id", "INT NOT NULL"), ("v", "STRING"), ("p", "INT")],
                      primary_keys=["p", "id"], partition_keys=["p"], options={"bucket": "2"})
    java.write(root, "pk", [[1, "a", 0], [2, "b", 0], [3, "c", 1], [4, "d", 1]])
    java.write(root, "pk", [[1, "a", 0], [1, "a2", 0], [2, "b", 0], [3, "c", 1]],
               row_kinds=["-U", "+U", "-D", "-U"])
    java.write(root, "pk", [[5, "e", 1], [4, "d4", 1]], row_kinds=["+I", "+U"])
    kinds = {r[0] for r in java.read(root, "pk$audit_log")["rows"]}
    assert kinds == {"+I", "+U", "-U", "-D"}
    _assert_data_tables_same(java, root, "default", "pk", spark)
    java.alter(root, "pk", set_option("table-read.sequence-number.enabled", "true"))
    assert java.read(root, "pk$audit_log")["columns"][:2] == ["rowkind", "_SEQUENCE_NUMBER"]
    _assert_data_tables_same(java, root, "default", "pk", spark)
    _assert_data_tables_same(java, evolved_pk, "default", "t", spark)


def test_variant_tables_of_java_2_read_and_written(java_paimon_2: JavaPaimon, tmp_path: Path,
                                                  spark: Any) -> None:
    """Java Paimon 2.0 writes VARIANT values (a group of ``value`` and ``metadata``
    binaries), renames the column and adds one: schemalab reads every snapshot as Java does,
    as Spark's VariantType; its own INSERT (and a VARIANT column it adds) Java reads back,
    and writes on after."""
    from oracles.java_paimon import add_column, rename_column

    java = java_paimon_2
    java.create_table(tmp_path, "vt", [("id", "INT"), ("v", "VARIANT")])
    java.write(tmp_path, "vt", [[1, '{"a": 1, "b": "x"}'], [2, "[1, 2.5, null]"],
                                [3, '"s"'], [4, None], [5, '{"n": {"m": [true]}}']])
    java.alter(tmp_path, "vt", rename_column("v", "payload"), add_column("k", "STRING"))
    java.write(tmp_path, "vt", [[6, '{"z": 0}', "k6"]])
    t = sl.open_table(tmp_path / "default.db" / "vt", spark=spark)
    assert [f.type.sql() for f in t.schema.fields] == ["INT", "VARIANT", "STRING"]
    for snap in t.snapshots:
        theirs = java.read(tmp_path, "vt", snap.id)
        df = t.read(snapshot_id=snap.id)
        assert df.columns == theirs["columns"], snap.id
        assert canonical_rows(df) == theirs["rows"], snap.id
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""ALTER TABLE vt ADD COLUMN extra VARIANT;
              INSERT INTO vt VALUES (7, parse_json('{"q": [1, "two"]}'), 'k7',
                                     parse_json('3.5'))""")
    java.write(tmp_path, "vt", [[8, "[]", "k8", '{"e": null}']])
    theirs = java.read(tmp_path, "vt")
    assert canonical_rows(wh.table("vt").read()) == theirs["rows"]
    assert [r for r in theirs["rows"] if r[0] == 7] == [
        [7, 'V:{"q":[1,"two"]}', "k7", "V:3.5"]]


def test_row_tracking_compaction_equals_java_2(java_paimon_2: JavaPaimon, tmp_path: Path,
                                               spark: Any) -> None:
    """A row-tracking table (no data evolution) Java wrote in three commits and schemalab
    appended to, compacted by schemalab and by Java (Spark's ``CALL sys.compact``: the
    rows keep ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` in columns of their own): the same file
    layout, Java reads both alike with the row ids from before, and writes on after ours."""
    java = java_paimon_2
    ours = tmp_path / "ours"
    java.create_table(ours, "rt", [("id", "INT"), ("v", "STRING")],
                      options={"row-tracking.enabled": "true"})
    for i in range(3):
        java.write(ours, "rt", [[2 * i, f"a{i}"], [2 * i + 1, f"b{i}"]])
    sl.Warehouse(ours, spark=spark).sql("INSERT INTO rt VALUES (6, 'c')")
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs)
    before = java.read(ours, "rt$row_tracking")
    result = sl.Warehouse(ours, spark=spark).table("rt").compact()
    assert (result.files_before, result.files_after) == (4, 1)
    java.compact(theirs, "rt")
    # the same files, but for the first row id ours names (Java's is NULL, and pypaimon
    # 2.1 then reads every _ROW_ID of the file as NULL)
    first = _LAYOUT.index("first_row_id")
    mine, javas = _layout(java, ours, "rt"), _layout(java, theirs, "rt")
    assert [r[first] for r in mine] == [0] and [r[first] for r in javas] == [None]
    assert [r[:first] + r[first + 1:] for r in mine] == [
        r[:first] + r[first + 1:] for r in javas]
    assert java.read(ours, "rt$row_tracking") == before == java.read(theirs, "rt$row_tracking")
    _assert_same(java, ours, "default", "rt", spark)
    _assert_data_tables_same(java, ours, "default", "rt", spark)
    java.write(ours, "rt", [[9, "z"]])
    tracked = java.read(ours, "rt$row_tracking")["rows"]
    assert [9, "z", 7, result.snapshot.id + 1] in tracked


@pytest.mark.parametrize("engine", ["partial-update", "aggregation"])
def test_newest_version_reads_of_overlapping_commits_equal_java_2(
        java_paimon_2: JavaPaimon, tmp_path: Path, spark: Any, engine: str) -> None:
    """Java Paimon 2.0 writes overlapping commits of a partial-update or aggregation table
    with every value set (+U versions among them): schemalab reads each key's newest version
    without merging (engine/merge/superseded.py ``newest_wins``), and its rows and
    ``$audit_log`` (each merged row's kind) equal Java's at every snapshot; our compaction
    writes every merged row as +I, as Java's merge function returns it."""
    from oracles.compare import assert_equal_every_snapshot

    from schemalab.engine.merge.keyed_read import merge_input, plans_of

    java = java_paimon_2
    java.create_table(tmp_path, "o", [("id", "INT NOT NULL"), ("a", "STRING"), ("b", "INT")],
                      primary_keys=["id"], options={"bucket": "2", "merge-engine": engine})
    for c in range(4):
        rows = [[k, f"c{c}k{k}", c * 100 + k] for k in range(c, 30, 1 + c % 3)]
        java.write(tmp_path, "o", rows, row_kinds=["+U" if k % 2 else "+I" for k, *_ in rows])
    plan = sl.open_table(tmp_path / "default.db" / "o", spark=spark).read_plan()
    assert {p.strategy for p in plans_of(plan, merge_input(plan).opts)} == {"superseded"}
    assert assert_equal_every_snapshot(java, tmp_path, "o", spark) == 4
    _assert_data_tables_same(java, tmp_path, "default", "o", spark)
    # our compaction writes each merged row as Java's would: kind +I (Java's getResult)
    before = java.read(tmp_path, "o")["rows"]
    sl.open_table(tmp_path / "default.db" / "o", spark=spark).compact()
    assert java.read(tmp_path, "o")["rows"] == before
    assert {r[0] for r in java.read(tmp_path, "o$audit_log")["rows"]} == {"+I"}
