"""Compaction (issue 15): ``CALL sys.compact``, ``Table.compact()`` and ``schemalab compact``.

Primary-key tables are merged into one sorted run per bucket at the top level (deletes and
the merge engine applied), append tables' small files into fewer files, both in today's
schema, as a COMPACT snapshot of DELETE and ADD entries. The compacted tables read the same
before and after, in schemalab, Java Paimon and pypaimon, at every snapshot; ``explain_read``
shows the old schemas' files gone. Compactions racing inserts and each other lose and
duplicate nothing.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from oracles.compare import assert_equal_every_snapshot, java_read
from oracles.java_paimon import JavaPaimon
from test_interop_pypaimon import assert_reads_agree

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.paimon.listing import manifest_tree
from schemalab.paimon.manifest import FileKind, FileSource

pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark


def rows(t: Any, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in t.read(snapshot_id=snapshot_id).collect()), key=repr)


def _schema_groups(t: Any) -> list[int]:
    return [g.schema_id for g in t.explain_read().groups]


PK_HISTORY = """
    CREATE TABLE {name} (id INT NOT NULL, v STRING, n INT, PRIMARY KEY (id) NOT ENFORCED)
        TBLPROPERTIES ('bucket' = '2'{extra});
    INSERT INTO {name} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4);
    ALTER TABLE {name} RENAME COLUMN v TO label;
    ALTER TABLE {name} ALTER COLUMN n TYPE BIGINT;
    INSERT INTO {name} VALUES (2, NULL, 5000000000), (5, 'e', NULL);
    ALTER TABLE {name} ADD COLUMN note STRING;
    INSERT INTO {name} VALUES (4, 'd2', NULL, 'x')"""


@pytest.mark.parametrize(("engine", "extra"), [
    ("deduplicate", ""),
    ("partial-update", ", 'merge-engine' = 'partial-update'"),
    ("aggregation", ", 'merge-engine' = 'aggregation', 'fields.n.aggregate-function' = 'sum'"),
])
def test_primary_key_compaction_reads_the_same_everywhere(
        java_paimon: JavaPaimon, spark: Any, tmp_path: Path, engine: str, extra: str) -> None:
    w = tmp_path / "wh"
    wh = sl.Warehouse(w, spark=spark)
    wh.sql(PK_HISTORY.format(name="t", extra=extra))
    if engine == "deduplicate":
        wh.sql("DELETE FROM t WHERE id = 3")
    t = wh.table("t")
    before = rows(t)
    assert _schema_groups(t) == [0, 2, 3]
    result = wh.execute_sql("CALL sys.compact(table => 'default.t')")[0]
    assert result.rows == [(True,)] and "compacted" in result.message
    snap = t.latest_snapshot
    assert snap is not None and snap.commit_kind == "COMPACT"
    assert rows(t) == before
    assert _schema_groups(t) == [3]  # the old schemas' files are gone
    live = t.live_entries(snap)
    assert {e.file.level for e in live} == {5}
    assert {e.file.file_source for e in live} == {int(FileSource.COMPACT)}
    assert len({e.bucket for e in live}) == len(live)  # one sorted run per bucket
    assert all(e.file.delete_row_count == 0 for e in live)
    delta = manifest_tree(t.path, snap).lists[1]
    kinds = [e.kind for m in delta.manifests for e in m.entries]
    assert kinds.count(FileKind.ADD) == len(live) and FileKind.DELETE in kinds
    # Java Paimon and pypaimon read every snapshot, the compacted one included, as we do
    assert assert_equal_every_snapshot(java_paimon, w, "t", spark) == len(t.snapshots)
    if engine != "aggregation":  # pypaimon 2.1.0 refuses the retractions DELETE wrote
        assert_reads_agree(t, w, "default.t")
    # Later writes still merge after the compacted rows; compacting again is a no-op
    wh.sql("INSERT INTO t VALUES (1, 'a2', 7, NULL)")
    assert rows(t)[0][:2] == (1, "a2")
    assert t.compact().snapshot is not None
    assert t.compact().snapshot is None
    assert java_read(java_paimon, w, "t")["rows"][0][:2] == [1, "a2"]


def test_first_row_writes_compact_as_java_does(java_paimon: JavaPaimon, spark: Any,
                                               tmp_path: Path) -> None:
    """Java's first-row writer commits an APPEND and then a COMPACT (a batch read takes
    compacted files only); ours does the same, and Java reads it the same."""
    w = tmp_path / "wh"
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("""CREATE TABLE f (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'first-row');
              INSERT INTO f VALUES (1, 'first'), (1, 'second-in-commit'), (2, 'b');
              ALTER TABLE f RENAME COLUMN v TO label;
              INSERT INTO f VALUES (1, 'later'), (3, 'c')""")
    t = wh.table("f")
    assert [s.commit_kind for s in t.snapshots] == ["APPEND", "COMPACT"] * 2
    assert rows(t) == [(1, "first"), (2, "b"), (3, "c")]
    assert rows(t, 1) == []  # the APPEND snapshot: level 0 only, which a batch read skips
    assert assert_equal_every_snapshot(java_paimon, w, "f", spark) == 4


def test_append_compaction(java_paimon: JavaPaimon, spark: Any, tmp_path: Path) -> None:
    w = tmp_path / "wh"
    wh = sl.Warehouse(w, spark=spark)
    wh.sql("""CREATE TABLE a (id INT, v STRING, p STRING) PARTITIONED BY (p);
              INSERT INTO a VALUES (1, 'a', 'x'), (2, 'b', 'y');
              ALTER TABLE a RENAME COLUMN v TO label;
              INSERT INTO a VALUES (3, 'c', 'x');
              ALTER TABLE a ALTER COLUMN id TYPE BIGINT;
              INSERT INTO a VALUES (4, 'd', 'x'), (5, 'e', 'y')""")
    t = wh.table("a")
    before = rows(t)
    files_before = len(t.live_entries(t.latest_snapshot))
    result = wh.execute_sql("CALL sys.compact(table => 'a', partitions => 'p=x')")[0]
    assert "compacted 3 files into 1" in result.message
    live = t.live_entries(t.latest_snapshot)
    assert len(live) == files_before - 2
    by_partition = {f.partition: f.schema_id for f in t.data_files(t.latest_snapshot)}
    assert by_partition[("x",)] == t.schema.id
    assert rows(t) == before
    wh.sql("CALL sys.compact(table => 'a')")
    assert {f.schema_id for f in t.data_files(t.latest_snapshot)} == {t.schema.id}
    assert _schema_groups(t) == [t.schema.id]
    assert rows(t) == before
    assert assert_equal_every_snapshot(java_paimon, w, "a", spark) == len(t.snapshots)
    assert_reads_agree(t, w, "default.a")


def test_append_compaction_ordered(spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""CREATE TABLE a (id INT, v STRING);
              INSERT INTO a VALUES (3, 'c'), (1, 'a');
              INSERT INTO a VALUES (2, 'b')""")
    wh.sql("CALL sys.compact(table => 'a', order_strategy => 'order', order_by => 'id')")
    t = wh.table("a")
    (f,) = t.data_files(t.latest_snapshot)
    import pyarrow.parquet as pq

    assert pq.read_table(f.path).column("id").to_pylist() == [1, 2, 3]
    for call, message in [
        ("CALL sys.compact(table => 'a', order_strategy => 'zorder', order_by => 'id')",
         "not implemented by schemalab; use 'order'"),
        ("CALL sys.compact(table => 'a', order_by => 'id')",
         "order_strategy \"none\" cannot work with order_by columns."),
        ("CALL sys.compact(table => 'a', where => 'id > 1')", "argument where is not supported"),
        ("CALL sys.compact(table => 'a', frob => 1)", "unknown argument frob"),
        ("CALL sys.remove_orphan_files(table => 'a')", "Unsupported procedure"),
    ]:
        with pytest.raises(SchemaLabError, match=message):
            wh.sql(call)


def test_compactions_racing_inserts_and_each_other_lose_nothing(spark: Any,
                                                                tmp_path: Path) -> None:
    """Two compactions and two writers at once, three times over: every committed insert is
    read back exactly once, every snapshot reads, and a compaction that found its files
    replaced started again (or found nothing left to do)."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE t (id INT NOT NULL, w INT, PRIMARY KEY (id) NOT ENFORCED) "
           "TBLPROPERTIES ('bucket' = '2')")
    t = wh.table("t")
    t.insert([(i, 0) for i in range(20)])
    expected = {i: 0 for i in range(20)}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def writer(k: int, base: int) -> None:
        try:
            for step in range(2):
                ids = [base + step * 10 + i for i in range(5)] + [k]  # also upsert key k
                wh.table("t").insert([(i, k) for i in ids])
                with lock:
                    for i in ids:
                        expected[i] = k
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def compactor() -> None:
        try:
            wh.table("t").compact()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    for round_ in range(3):
        threads = [threading.Thread(target=writer, args=(k, 1000 * (round_ * 2 + k)))
                   for k in (1, 2)] + [threading.Thread(target=compactor) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors
        got = {r[0]: r[1] for r in t.read().collect()}
        assert t.read().count() == len(got)  # no key twice
        # a key both writers upserted holds one of their values; every other matches
        assert set(got) == set(expected)
        assert all(got[i] == v for i, v in expected.items() if i not in (1, 2))
    for s in t.snapshots:
        t.read(snapshot_id=s.id).count()
    assert "COMPACT" in [s.commit_kind for s in t.snapshots]


def test_cli_compact(spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(PK_HISTORY.format(name="t", extra=""))
    r = subprocess.run([sys.executable, "-m", "schemalab.cli", "compact", wh.table_path("t")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("default.t: compacted ") and "in snapshot 4" in r.stdout
    r = subprocess.run([sys.executable, "-m", "schemalab.cli", "compact",
                        str(tmp_path / "nope")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.startswith("error: ")


DV_PK = [("id", "INT NOT NULL"), ("a", "STRING"), ("b", "INT"), ("c", "DOUBLE")]


def test_deletion_vector_tables_compact_applying_and_dropping_their_vectors(
        java_paimon: JavaPaimon, spark: Any, tmp_path: Path) -> None:
    """A Java-written primary-key table in deletion-vector mode and an append table with
    deletion vectors: the compaction applies every vector, drops the index manifest, and
    Java Paimon reads every snapshot as we do."""
    from oracles.compare import table_dir
    from oracles.java_paimon import rename_column

    w = tmp_path / "wh"
    j = java_paimon
    j.create_table(w, "k", DV_PK, primary_keys=["id"],
                   options={"bucket": "1", "deletion-vectors.enabled": "true"})
    j.write(w, "k", [[i, f"a{i}", i, None] for i in range(5)])
    j.write(w, "k", [[1, "upd", 10, None], [2, None, None, None]], row_kinds=["+I", "-D"])
    j.alter(w, "k", rename_column("a", "label"))
    j.write(w, "k", [[3, None, None, None]], row_kinds=["-D"])
    j.create_table(w, "a", [("id", "INT"), ("v", "STRING")],
                   options={"deletion-vectors.enabled": "true"})
    j.write(w, "a", [[i, f"v{i}"] for i in range(6)])
    assert j.delete_where(w, "a", "id", [1, 3])["deleted"] == 2
    j.alter(w, "a", rename_column("v", "value"))
    j.write(w, "a", [[10, "x"]])
    for name in ("k", "a"):
        t = sl.open_table(str(table_dir(w, name)), spark=spark)
        before = rows(t)
        assert t.latest_snapshot.index_manifest is not None
        assert any(f.deletes for f in t.data_files(t.latest_snapshot))
        result = t.compact()
        assert result.snapshot is not None and result.snapshot.commit_kind == "COMPACT"
        assert t.latest_snapshot.index_manifest is None  # the vectors are gone ...
        assert not any(f.deletes for f in t.data_files(t.latest_snapshot))
        assert rows(t) == before  # ... and so are the rows they deleted
        assert {f.schema_id for f in t.data_files(t.latest_snapshot)} == {t.schema.id}
        assert t.explain_read().deletes == () or all(
            d.kind != "deletion vector" for d in t.explain_read().deletes)
        assert assert_equal_every_snapshot(java_paimon, w, name, spark) == len(t.snapshots)
        # (no pypaimon check here: pypaimon 2.1.0 fails on Java 1.0's own manifests, which
        # lack _VALUE_STATS_COLS - KeyError in manifest_file_manager, before our files)
