"""Primary-key tables: Paimon's key-value layout and deduplicate merge engine, checked against
pypaimon 2.1.0 in both directions.

1. Key rules at CREATE and ALTER, with Paimon's messages (no Spark).
2. pypaimon reads our primary-key tables with the same merged rows as ours, at every snapshot,
   across ALTERs (a renamed key, a renamed and a retyped value column) and DELETEs; our files
   carry Paimon's layout and manifest fields (keys, sequence numbers, levels, buckets).
3. We read pypaimon's primary-key tables (upserts across schema versions, deletes) as pypaimon
   does, and our upserts on top of pypaimon's land in the bucket pypaimon looks in.
4. ``explain_read(key=...)`` says which file's row won and why; the snapshot tree shows key
   ranges, sequence numbers and levels.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.schema.data_types import AtomicType
from pypaimon.schema.schema_change import SchemaChange as PyChange
from test_interop_pypaimon import (
    PyWriter,
    assert_reads_agree,
    ours,
    py_table,
    row,
    theirs,
)

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.open import open_table
from schemalab.paimon.binaryrow import decode_row
from schemalab.paimon.bucket import bucket_of
from schemalab.paimon.primary_key import KEY_FIELD_ID_START, SEQUENCE_NUMBER_ID, VALUE_KIND_ID
from schemalab.schema.changes import ColumnSpec
from schemalab.types.parse import parse_type

# --------------------------------------------------------------------------------------------
# 1. Key rules (no Spark)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("ddl", "message"), [
    ("CREATE TABLE t (id INT, p STRING, v STRING) PARTITIONED BY (p) "
     "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')",
     r"Primary key constraint \[id\] should include all partition fields \[p\]"),
    ("CREATE TABLE t (id INT, p STRING, PRIMARY KEY (p) NOT ENFORCED) PARTITIONED BY (p) "
     "TBLPROPERTIES ('bucket' = '2')",
     r"Primary key constraint \[p\] should not be same with partition fields \[p\], this "
     r"will result in only one record in a partition"),
])
def test_create_refuses_keys_paimon_refuses(tmp_path: Path, ddl: str, message: str) -> None:
    wh = sl.Warehouse(tmp_path)
    with pytest.raises(SchemaLabError, match=message):
        wh.sql(ddl)
    assert not wh.has_table("t")


def test_key_columns_are_not_null_and_follow_paimon_alter_rules(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE t (id INT, p STRING, v STRING, PRIMARY KEY (id, p) NOT ENFORCED) "
           "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')")
    s = wh.table("t").schema
    assert (s.primary_keys, s.partition_keys) == (("id", "p"), ("p",))
    assert not s.type_of("id").nullable and not s.type_of("p").nullable
    assert s.type_of("v").nullable
    for stmt, message in [
        ("ALTER TABLE t DROP COLUMN id", r"Cannot drop partition key or primary key: \[id\]"),
        ("ALTER TABLE t ALTER COLUMN id TYPE BIGINT", "Cannot update primary key"),
        ("ALTER TABLE t ALTER COLUMN id DROP NOT NULL",
         "Cannot change nullability of primary key"),
        ("ALTER TABLE t SET TBLPROPERTIES ('primary-key' = 'v')",
         "Change 'primary-key' is not supported yet."),
    ]:
        with pytest.raises(SchemaLabError, match=message):
            wh.sql(stmt)
    wh.sql("ALTER TABLE t RENAME COLUMN id TO key")  # allowed: the key list is rewritten
    assert wh.table("t").schema.primary_keys == ("key", "p")


def test_writes_need_a_fixed_bucket(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path)
    wh.sql("CREATE TABLE d (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id')")
    with pytest.raises(SchemaLabError, match=r"fixed number of buckets.*'bucket' = 'N'"):
        wh.table("d").insert([(1, "a")])  # refused before Spark starts
    assert not wh.spark_started


@pytest.mark.parametrize(("options", "message"), [
    ({"merge-engine": "replace"}, "unknown merge-engine 'replace'"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "count"},
     r"'count', which Paimon removed in 0.9"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
     r"Data type for sum column must be one of"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "collect"},
     "schemalab does not merge"),
    ({"merge-engine": "partial-update", "fields.v.aggregate-function": "max"},
     "Must use sequence group for aggregation functions."),
    ({"merge-engine": "first-row", "sequence.field": "n"},
     "Do not support use sequence field on FIRST_ROW merge engine."),
    ({"sequence.field": "nope"}, "Sequence field: 'nope' can not be found in table schema."),
    ({"merge-engine": "partial-update", "fields.n.sequence-group": "v,x"},
     "Field x can not be found in table schema."),
    ({"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true",
      "ignore-delete": "true"}, "conflicting behavior"),
])
def test_merge_options_paimon_refuses_are_refused(tmp_path: Path, options: dict[str, str],
                                                  message: str) -> None:
    """Options Paimon's merge functions refuse: refused by reads and writes alike, with
    Paimon's message, naming the table (and the column) and the rule."""
    from schemalab.paimon.merge_options import merge_options

    wh = sl.Warehouse(tmp_path)
    wh.create_table("t", [ColumnSpec("id", parse_type("INT NOT NULL")),
                          ColumnSpec("v", parse_type("STRING")),
                          ColumnSpec("n", parse_type("BIGINT"))], primary_keys=("id",),
                    options={"bucket": "1", **options})
    t = wh.table("t")
    with pytest.raises(SchemaLabError, match=message) as e:
        merge_options(t.schema, t.name)
    assert e.value.table == "default.t" and e.value.rule
    with pytest.raises(SchemaLabError, match=message):
        t.insert([(1, "a", 1)])
    with pytest.raises(SchemaLabError, match=message):
        t.read_plan()
    assert not wh.spark_started


# --------------------------------------------------------------------------------------------
# 2. pypaimon reads what we write
# --------------------------------------------------------------------------------------------


def _files(t: Any) -> list[Any]:
    return t.live_entries(t.latest_snapshot)


def test_pypaimon_reads_our_primary_key_table_across_alters_and_deletes(
        spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE users (dt STRING, id BIGINT, name STRING, qty INT,
                            PRIMARY KEY (dt, id) NOT ENFORCED)
            PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '3');
        INSERT INTO users VALUES ('d1', 1, 'a', 1), ('d1', 2, 'b', 2), ('d2', 3, 'c', 3),
                                 ('d1', 4, 'd', 4), ('d1', 1, 'a-last', 10);
        ALTER TABLE users RENAME COLUMN name TO label;
        ALTER TABLE users ALTER COLUMN qty TYPE BIGINT;
        ALTER TABLE users RENAME COLUMN id TO uid;
        ALTER TABLE users ADD COLUMN note STRING;
        INSERT INTO users VALUES ('d1', 2, 'b2', 4294967296, 'upserted'), ('d2', 5, 'e', 5, NULL);
        DELETE FROM users WHERE uid IN (SELECT uid FROM users WHERE label = 'c');
        DELETE FROM users WHERE uid = 4 AND dt = 'd1'""")
    t = wh.table("users")
    want = [row("d1", 1, "a-last", 10, None), row("d1", 2, "b2", 4294967296, "upserted"),
            row("d2", 5, "e", 5, None)]
    assert ours(t.read()) == (["dt", "uid", "label", "qty", "note"], want)
    assert theirs(py_table(wh.path, "default.users"))[1] == want
    assert_reads_agree(t, wh.path, "default.users")  # and every snapshot, in its schema

    # Paimon's layout: trimmed key, sequence number, kind, then the row, with Java's ids
    entries = _files(t)
    first = next(e for e in entries if e.file.schema_id == 0)
    path = t.data_files(t.latest_snapshot)[entries.index(first)].path
    arrow_schema = pq.read_schema(path)
    assert arrow_schema.names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "dt", "id",
                                  "name", "qty"]
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in arrow_schema]
    assert ids[:3] == [KEY_FIELD_ID_START + 1, SEQUENCE_NUMBER_ID, VALUE_KIND_ID]

    by_file = {f.path: f for f in t.data_files(t.latest_snapshot)}
    per_bucket: dict[tuple[Any, int], list[Any]] = {}
    for e, f in zip(entries, t.data_files(t.latest_snapshot), strict=True):
        table = pq.ParquetFile(f.path).read()
        keys = table.column(0).to_pylist()
        assert keys == sorted(keys)  # sorted by key, unique per file
        assert len(set(keys)) == len(keys)
        key_type = [parse_type("BIGINT NOT NULL")]
        assert decode_row(e.file.min_key, key_type) == [keys[0]]
        assert decode_row(e.file.max_key, key_type) == [keys[-1]]
        assert e.file.key_stats.decode(key_type) == ([min(keys)], [max(keys)])
        seqs = table.column("_SEQUENCE_NUMBER").to_pylist()
        assert (e.file.min_sequence_number, e.file.max_sequence_number) == (min(seqs),
                                                                            max(seqs))
        kinds = table.column("_VALUE_KIND").to_pylist()
        assert e.file.delete_row_count == kinds.count(3)
        assert e.file.level == 0 and e.total_buckets == 3
        for k in keys:  # every key in the bucket Paimon's bucket function gives it
            assert bucket_of([k], key_type, 3) == e.bucket
        per_bucket.setdefault((by_file[f.path].partition, e.bucket), []).append(e.file)
    # per bucket, each commit's sequence numbers start above the previous ones, from 0
    for files in per_bucket.values():
        files.sort(key=lambda m: m.min_sequence_number)
        assert files[0].min_sequence_number == 0
        for a, b in zip(files, files[1:], strict=False):
            assert b.min_sequence_number == a.max_sequence_number + 1


def test_pypaimon_upserts_find_our_keys_in_their_buckets(spark: Any, tmp_path: Path) -> None:
    """We write keys, pypaimon upserts some of them: had we put a key in another bucket than
    Paimon's, pypaimon (which merges per bucket) would return it twice."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE k (id STRING, n INT, v DOUBLE) "
           "TBLPROPERTIES ('primary-key' = 'id,n', 'bucket' = '4')")
    t = wh.table("k")
    t.insert([(f"key-{i}", i % 3, float(i)) for i in range(40)])
    PyWriter(tmp_path).write("default.k", [{"id": f"key-{i}", "n": i % 3, "v": -1.0}
                                for i in range(0, 40, 2)])
    want = sorted((row(f"key-{i}", i % 3, -1.0 if i % 2 == 0 else float(i))
                   for i in range(40)), key=repr)
    assert theirs(py_table(wh.path, "default.k"))[1] == want
    assert ours(t.read())[1] == want
    # and our next commit numbers on above pypaimon's sequence numbers in each bucket
    t.insert([(f"key-{i}", i % 3, 100.0) for i in range(0, 40, 4)])
    assert_reads_agree(t, wh.path, "default.k")


# --------------------------------------------------------------------------------------------
# 3. We read what pypaimon writes
# --------------------------------------------------------------------------------------------


def test_we_read_pypaimon_upserts_across_schema_versions_and_deletes(
        spark: Any, tmp_path: Path) -> None:
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("u", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                      ("name", pa.string()), ("qty", pa.int32()),
                                      ("op", pa.string())]),
                      primary_keys=["id"],
                      options={"bucket": "2", "rowkind.field": "op"})
    pw.write(ident, [{"id": i, "name": f"n{i}", "qty": i, "op": "+I"} for i in range(1, 7)])
    pw.alter(ident, PyChange.rename_column("name", "label"),
             PyChange.update_column_type("qty", AtomicType("BIGINT")))
    pw.write(ident, [{"id": 2, "label": "two", "qty": 2**40, "op": "+U"},
                     {"id": 3, "label": None, "qty": None, "op": "-D"}])
    pw.alter(ident, PyChange.add_column("extra", AtomicType("DOUBLE")))
    pw.write(ident, [{"id": 4, "label": "four", "qty": 4, "op": "+I", "extra": 0.5},
                     {"id": 3, "label": "back", "qty": 3, "op": "+I", "extra": None},
                     {"id": 6, "label": None, "qty": None, "op": "-D", "extra": None}])
    t = open_table(pw.path(ident), spark=spark)
    names, rows = ours(t.read())
    assert names == ["id", "label", "qty", "op", "extra"]
    assert rows == sorted([row(1, "n1", 1, "+I", None), row(2, "two", 2**40, "+U", None),
                           row(3, "back", 3, "+I", None), row(4, "four", 4, "+I", 0.5),
                           row(5, "n5", 5, "+I", None)], key=repr)
    assert_reads_agree(t, pw.root, ident)
    # the deletes pypaimon wrote are delete records our explanation names
    ex = t.explain_read(snapshot_id=2, key={"id": 3})
    assert ex.key is not None and ex.key.deleted
    assert [v.kind_text for v in ex.key.versions] == ["-D", "+I"]


def test_we_read_the_fixture_primary_key_table_as_pypaimon(spark: Any,
                                                          pypaimon_warehouses: Path) -> None:
    t = open_table(pypaimon_warehouses / "wh" / "demo.db" / "users", spark=spark)
    assert t.schema.primary_keys == ("dt", "id")
    assert_reads_agree(t, pypaimon_warehouses / "wh", "demo.users")


# --------------------------------------------------------------------------------------------
# 4. Explaining the merge
# --------------------------------------------------------------------------------------------


def test_explain_read_says_which_row_won_and_the_tree_shows_keys_and_levels(
        spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
        INSERT INTO t VALUES (1, 'old'), (2, 'x');
        ALTER TABLE t RENAME COLUMN v TO w;
        INSERT INTO t VALUES (1, 'new');
        DELETE FROM t WHERE id = 2""")
    t = wh.table("t")
    ex = t.explain_read(key={"id": 1})
    assert ex.key is not None and not ex.key.deleted
    won, lost = ex.key.versions
    assert (won.sequence_number, won.schema_id, won.values) == (2, 1, {"id": 1, "w": "new"})
    assert (lost.sequence_number, lost.schema_id, lost.values) == (0, 0, {"id": 1, "w": "old"})
    assert "highest _SEQUENCE_NUMBER 2 of 2 versions of key (id=1)" in ex.key.reason
    assert ex.merge is not None and "deduplicate" in ex.merge
    text = str(t.explain_read(key=[2]))
    assert "it is a -D record, so the key is deleted" in text
    assert "by id from column `v` (renamed to `w` since)" in text

    tree = t.history().tree(t.latest_snapshot.id)
    ranges = sorted((f.min_key, f.max_key, f.min_sequence_number, f.max_sequence_number,
                     f.level) for f in tree.live_files)
    assert ranges == [((1,), (1,), 2, 2, 0), ((1,), (2,), 0, 1, 0), ((2,), (2,), 3, 3, 0)]
    from schemalab.widgets.figures import snapshot_tree_figure

    fig = snapshot_tree_figure(tree)
    hovers = [h for d in fig.data if d.hovertext is not None
              for h in ([d.hovertext] if isinstance(d.hovertext, str) else d.hovertext)]
    assert any("level 0, keys [1 … 2], sequence numbers 0–1" in h for h in hovers)
    from schemalab.render.history_text import history_text

    lines = history_text(t.history()).splitlines()
    assert any(" level 0 keys (1)..(2) seq 0..1" in x and "schema 0 2 rows" in x for x in lines)
    assert any(" level 0 keys (2)..(2) seq 3..3" in x and "schema 1 1 row " in x for x in lines)


def test_overwrite_empty_reads_and_deletes_of_nothing_or_everything(spark: Any,
                                                                   tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE o (id INT, p STRING, v STRING, PRIMARY KEY (id, p) NOT ENFORCED) "
           "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')")
    t = wh.table("o")
    assert ours(t.read()) == (["id", "p", "v"], [])  # no snapshot yet
    wh.sql("INSERT INTO o VALUES (1, 'x', 'a'), (2, 'x', 'b'), (1, 'y', 'c')")
    wh.sql("INSERT OVERWRITE o VALUES (3, 'x', 'new')")  # replaces partition x only
    want = [row(1, "y", "c"), row(3, "x", "new")]
    assert ours(t.read())[1] == want
    assert theirs(py_table(wh.path, "default.o"))[1] == want
    before = t.latest_snapshot.id
    results = wh.execute_sql("DELETE FROM o WHERE v = 'nothing'")
    assert results[0].message == "Deleted from default.o." and t.latest_snapshot.id == before
    wh.sql("DELETE FROM o")
    assert ours(t.read())[1] == [] and theirs(py_table(wh.path, "default.o"))[1] == []
    assert_reads_agree(t, wh.path, "default.o")


def test_a_commit_numbered_before_a_racing_commit_to_its_bucket_is_refused(
        spark: Any, tmp_path: Path) -> None:
    """Two writers number their rows from the same snapshot: the second to commit would share
    sequence numbers with the first, so it is refused (and nothing of it is visible)."""
    from schemalab.engine import frames
    from schemalab.errors import CommitConflictError
    from schemalab.paimon import commit as commits
    from schemalab.paimon.write import keyed as primary_key
    from schemalab.paimon.write.files import WriteTarget

    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE r (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
           "'bucket' = '1'); INSERT INTO r VALUES (1, 'a')")
    t = wh.table("r")
    slow_df = frames.to_frame(spark, [(1, "slow")], t.schema, t.name)
    target = WriteTarget(t.path, t.name, t.schema, lambda: spark)
    _, slow = primary_key.write_entries(target, slow_df)  # numbered from snapshot 1
    t.insert([(1, "fast")])  # commits snapshot 2 with the same sequence number
    with pytest.raises(CommitConflictError, match="run it again"):
        commits.commit(t.path, t.name, t.schema, slow,
                       replaces=primary_key.sequence_guard(t.path, t.name, slow))
    assert t.latest_snapshot.id == 2 and ours(t.read())[1] == [row(1, "fast")]


def test_a_write_that_lost_the_sequence_race_is_numbered_again_and_committed(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """INSERT and DELETE that lose the race to their bucket are written again, numbered from
    the new latest snapshot, as an append commit retries; the first attempt leaves no file."""
    from schemalab.paimon import commit as commits
    from schemalab.paimon.orphans import find_orphans

    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE r (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
           "'bucket' = '1'); INSERT INTO r VALUES (1, 'a')")
    t = wh.table("r")
    real = commits.commit
    races: list[str] = []

    def with_a_racer(racer: Any) -> Any:
        def commit(*args: Any, **kwargs: Any) -> Any:
            if len(races) % 2 == 1:  # once per statement: a racing writer commits first
                races.append("raced")
                racer()
            return real(*args, **kwargs)
        return commit

    monkeypatch.setattr(commits, "commit", with_a_racer(lambda: t.insert([(1, "fast")])))
    races.append("insert")
    snap = t.insert([(1, "slow"), (2, "b")])
    assert races == ["insert", "raced"] and snap is not None and snap.id == 3
    assert ours(t.read())[1] == [row(1, "slow"), row(2, "b")]
    monkeypatch.setattr(commits, "commit", with_a_racer(lambda: t.insert([(3, "c")])))
    races.append("delete")
    wh.sql("DELETE FROM r WHERE id = 1")
    assert races[-2:] == ["delete", "raced"] and t.latest_snapshot.id == 5
    assert ours(t.read())[1] == [row(2, "b"), row(3, "c")]
    seqs = [(e.file.min_sequence_number, e.file.max_sequence_number)
            for e in t.live_entries(t.latest_snapshot)]
    assert sorted(seqs) == [(0, 0), (1, 1), (2, 3), (4, 4), (5, 5)]
    assert find_orphans(t.path, older_than_seconds=0)[0] == []
    assert_reads_agree(t, wh.path, "default.r")


def test_explain_key_says_what_each_merge_engine_made_of_the_versions(
        spark: Any, tmp_path: Path) -> None:
    """partial-update: which version gave each field; first-row: the oldest version wins and
    later ones are ignored; aggregation: how each field aggregates; a merged row is the row
    the read returns. The merge read itself runs per bucket (no shuffle)."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE p (id INT NOT NULL, name STRING, mail STRING, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES (1, 'ana', NULL);
        ALTER TABLE p RENAME COLUMN mail TO email;
        INSERT INTO p VALUES (1, NULL, 'ana@x');
        CREATE TABLE f (id INT NOT NULL, s STRING, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'first-row');
        INSERT INTO f VALUES (1, 'web');
        INSERT INTO f VALUES (1, 'app');
        CREATE TABLE a (id INT NOT NULL, n BIGINT, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'aggregation',
                         'fields.n.aggregate-function' = 'sum');
        INSERT INTO a VALUES (1, 2);
        INSERT INTO a VALUES (1, 3)""")
    k = wh.table("p").explain_read(key={"id": 1}).key
    assert k.result == {"id": 1, "name": "ana", "email": "ana@x"}
    assert k.sources() == {"name": 0, "email": 1}
    assert "merged from 2 versions (partial-update" in k.reason
    assert "name from seq 0, email from seq 1" in k.reason
    k = wh.table("f").explain_read(key={"id": 1}).key
    assert k.winner is not None and k.winner.values["s"] == "web"
    assert k.result == {"id": 1, "s": "web"}
    assert "only version" in k.reason or "first-row merge engine" in k.reason
    k = wh.table("a").explain_read(key=[1]).key
    assert k.result == {"id": 1, "n": 5} and "n by sum" in k.reason
    # no shuffle: the keys of the newer file are broadcast, each task group of buckets is
    # one partition, merged where it is read
    plan = wh.table("p").read()._jdf.queryExecution().executedPlan().toString()
    assert not re.search(r"(?<!Broadcast)Exchange", plan), plan
