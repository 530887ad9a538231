"""Real tables Java Paimon writes (issue 12), each with ALTERs between commits, read by
schemalab at every snapshot and compared with Java's own read; every test runs against Java
Paimon 1.0 and 2.0.0 (ids ``paimon-1.0``, ``paimon-2.0.0``).

Merge engines (partial-update with and without sequence groups, first-row, aggregation),
``sequence.field``, ``rowkind.field``, deletion vectors (primary-key table; append table with
deletes made as paimon-spark makes them), dynamic bucket, ORC and Avro data files. Where
schemalab refuses a table today, or reads it wrong, the test is
``xfail(strict=True, reason="issue 12: ...")``. On-disk layouts: docs/java-paimon-facts.md.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import fastavro
import pytest
from oracles.compare import assert_equal_every_snapshot, java_read, table_dir
from oracles.java_paimon import (
    JavaPaimon,
    add_column,
    rename_column,
    update_column_type,
)

import schemalab as sl
from schemalab.paimon.index import read_deletion_vector

# The session fixture `java_paimon` (one Java Paimon worker for the whole run).
pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark


@pytest.fixture()
def java_paimon(java_paimon_each: JavaPaimon) -> JavaPaimon:
    """Every test here runs against Java Paimon 1.0 and against 2.0.0."""
    return java_paimon_each


def issue12(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"issue 12: {why}")


PK = [("id", "INT NOT NULL"), ("a", "STRING"), ("b", "INT"), ("c", "DOUBLE")]


@pytest.fixture()
def w(tmp_path: Path) -> Path:
    return tmp_path / "wh"


def kinds(java: JavaPaimon, w: Path, table: str) -> list[str]:
    return [s["commit_kind"] for s in java.snapshots(w, table)]


def test_partial_update(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", PK, primary_keys=["id"],
                   options={"bucket": "1", "merge-engine": "partial-update"})
    j.write(w, "t", [[1, "a1", None, None], [2, "a2", 2, None]])
    j.write(w, "t", [[1, None, 10, None], [2, None, None, "F:2.5"]])
    assert java_read(j, w, "t")["rows"] == [[1, "a1", 10, None], [2, "a2", 2, "F:2.5"]]
    j.alter(w, "t", add_column("d", "STRING"), update_column_type("b", "BIGINT"))
    j.write(w, "t", [[1, None, None, "F:1.5", "d1"]])
    assert_equal_every_snapshot(j, w, "t", spark)


def test_partial_update_with_sequence_groups(java_paimon: JavaPaimon, w: Path,
                                             spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("a", "STRING"), ("g1", "INT"),
                            ("b", "STRING"), ("g2", "INT")], primary_keys=["id"],
                   options={"bucket": "1", "merge-engine": "partial-update",
                            "fields.g1.sequence-group": "a", "fields.g2.sequence-group": "b"})
    j.write(w, "t", [[1, "a1", 1, "b1", 1]])
    j.write(w, "t", [[1, "a0", 0, "b2", 2]])  # g1 is older: a stays a1; g2 is newer: b2
    assert java_read(j, w, "t")["rows"] == [[1, "a1", 1, "b2", 2]]
    # (Renaming a grouped field is refused by Java 1.0: the option names it.)
    j.alter(w, "t", add_column("note", "STRING"))
    j.write(w, "t", [[1, "a3", 3, None, None, "n"]])
    assert_equal_every_snapshot(j, w, "t", spark)


def test_first_row(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", PK, primary_keys=["id"],
                   options={"bucket": "1", "merge-engine": "first-row"})
    j.write(w, "t", [[1, "first", 1, None]])
    j.write(w, "t", [[1, "second", 2, None], [2, "x", None, None]])
    j.alter(w, "t", update_column_type("b", "BIGINT"), rename_column("a", "label"))
    j.write(w, "t", [[2, "y", 3, None], [3, "z", 5000000000, None]])
    # Each batch commit is an APPEND plus a COMPACT (first-row compacts level 0 away at once).
    assert kinds(j, w, "t") == ["APPEND", "COMPACT"] * 3
    assert java_read(j, w, "t")["rows"] == [[1, "first", 1, None], [2, "x", None, None],
                                            [3, "z", 5000000000, None]]
    assert_equal_every_snapshot(j, w, "t", spark)


AGGREGATES = {"s": "sum", "mx": "max", "mn": "min", "lv": "last_value",
              "lnn": "last_non_null_value", "fv": "first_value", "la": "listagg",
              "band": "bool_and", "bor": "bool_or"}


def test_aggregation(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """Every aggregate of the issue except ``count``, which this Paimon build lacks ("Use
    unsupported aggregation: count")."""
    j = java_paimon
    cols = [("id", "INT NOT NULL"), ("s", "BIGINT"), ("mx", "INT"), ("mn", "INT"),
            ("lv", "STRING"), ("lnn", "STRING"), ("fv", "STRING"), ("la", "STRING"),
            ("band", "BOOLEAN"), ("bor", "BOOLEAN")]
    j.create_table(w, "t", cols, primary_keys=["id"], options={
        "bucket": "1", "merge-engine": "aggregation",
        **{f"fields.{f}.aggregate-function": fn for f, fn in AGGREGATES.items()}})
    j.write(w, "t", [[1, 1, 1, 1, "v1", "n1", "f1", "x", True, False]])
    j.write(w, "t", [[1, 2, 5, 0, None, None, "f2", "y", False, False],
                     [2, 7, 7, 7, "w", "w", "w", "w", True, True]])
    assert java_read(j, w, "t")["rows"] == [
        [1, 3, 5, 0, None, "n1", "f1", "x,y", False, False],
        [2, 7, 7, 7, "w", "w", "w", "w", True, True]]
    j.alter(w, "t", update_column_type("mx", "BIGINT"))
    j.write(w, "t", [[1, 3, 3, -1, "v3", "n3", "f3", "z", True, True]])
    assert_equal_every_snapshot(j, w, "t", spark)


def test_sequence_field(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("v", "STRING"), ("ts", "BIGINT")],
                   primary_keys=["id"], options={"bucket": "1", "sequence.field": "ts"})
    j.write(w, "t", [[1, "new", 10], [2, "b", 1]])
    j.write(w, "t", [[1, "old", 5], [2, "c", 2]])  # 'old' loses on ts despite being later
    j.alter(w, "t", rename_column("v", "value"))
    j.write(w, "t", [[1, "newest", 11]])
    assert java_read(j, w, "t", 2)["rows"] == [[1, "new", 10], [2, "c", 2]]
    assert_equal_every_snapshot(j, w, "t", spark)


def test_rowkind_field(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """Java applies 'rowkind.field' when writing (the row kind goes into _VALUE_KIND), so
    files are plain deduplicate files and we read them right."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT NOT NULL"), ("v", "STRING"), ("op", "STRING")],
                   primary_keys=["id"], options={"bucket": "1", "rowkind.field": "op"})
    j.write(w, "t", [[1, "a", "+I"], [2, "b", "+I"], [3, "c", "+I"]])
    j.write(w, "t", [[2, "b", "-D"], [3, "c2", "+U"]])
    j.alter(w, "t", add_column("x", "INT"))
    j.write(w, "t", [[1, "a", "-D", None], [4, "d", "+I", 4]])
    assert java_read(j, w, "t")["rows"] == [[3, "c2", "+U", None], [4, "d", "+I", 4]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3


def test_primary_key_deletion_vectors(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    j = java_paimon
    j.create_table(w, "t", PK, primary_keys=["id"],
                   options={"bucket": "1", "deletion-vectors.enabled": "true"})
    j.write(w, "t", [[i, f"a{i}", i, None] for i in range(5)])
    j.write(w, "t", [[1, "upd", 10, None], [2, None, None, None]], row_kinds=["+I", "-D"])
    j.alter(w, "t", rename_column("a", "label"))
    j.write(w, "t", [[3, None, None, None]], row_kinds=["-D"])
    # A DV table's batch read skips level-0 files: the APPEND snapshot before the first
    # COMPACT reads empty.
    assert kinds(j, w, "t") == ["APPEND", "COMPACT"] * 3
    assert java_read(j, w, "t", 1)["rows"] == []
    assert java_read(j, w, "t")["rows"] == [[0, "a0", 0, None], [1, "upd", 10, None],
                                            [4, "a4", 4, None]]
    assert_equal_every_snapshot(j, w, "t", spark)
    # why: the first file's replaced and deleted rows are in its deletion vector; at an
    # APPEND snapshot the new level-0 file is not read yet
    t = sl.open_table(str(table_dir(w, "t")))
    ex = t.explain_read()
    assert ex.merge is not None and "deletion-vector mode" in ex.merge
    (dv,) = ex.deletes
    assert (dv.kind, dv.rows) == ("deletion vector", 3)
    assert dv.text.startswith("3 rows of data-") and " removed by deletion vector in index-" \
        in dv.text
    skipped = [d for d in t.explain_read(5).deletes if d.kind == "not read"]
    assert len(skipped) == 1 and "a level-0 file of a deletion-vector table" in skipped[0].text


def test_append_table_deletion_vectors(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """Deletes made as paimon-spark's DELETE makes them on an append table
    (AppendDeletionFileMaintainer: one DV index file per commit, a COMPACT snapshot that
    adds only index files)."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT"), ("v", "STRING")],
                   options={"deletion-vectors.enabled": "true"})
    j.write(w, "t", [[i, f"v{i}"] for i in range(6)])
    assert j.delete_where(w, "t", "id", [1, 3])["deleted"] == 2
    j.alter(w, "t", rename_column("v", "value"))
    j.write(w, "t", [[10, "x"], [11, "y"]])
    assert j.delete_where(w, "t", "id", [4, 11])["deleted"] == 2
    assert kinds(j, w, "t") == ["APPEND", "COMPACT", "APPEND", "COMPACT"]
    assert java_read(j, w, "t")["rows"] == [[0, "v0"], [10, "x"], [2, "v2"], [5, "v5"]]
    assert_equal_every_snapshot(j, w, "t", spark)
    # the tree shows the index manifest with its deletion-vector file, and each data file
    # with the rows its vector deletes
    h = sl.open_table(str(table_dir(w, "t"))).history()
    tree = h.tree(4)
    (index,) = [ml for ml in tree.lists if ml.kind == "index"]
    (dv_file,) = index.manifests[0].files
    assert dv_file.kind == "ADD deletion vectors" and dv_file.path.startswith("index/index-")
    assert dv_file.row_count == 2  # data files covered
    assert sorted((f.row_count, f.deleted_rows) for f in tree.live_files) == [(2, 1), (6, 3)]
    assert {f.deleted_by for f in tree.live_files} == {dv_file.path.removeprefix("index/")}
    assert "before merges and deletion vectors" in (tree.record_count_text or "")


def test_dynamic_bucket_primary_key(java_paimon: JavaPaimon, w: Path, spark: Any) -> None:
    """bucket = -1: Java assigns buckets through its hash index (HashBucketAssigner); the
    files are ordinary primary-key files, which we read right."""
    j = java_paimon
    j.create_table(w, "t", [("p", "STRING NOT NULL"), ("id", "INT NOT NULL"), ("v", "STRING")],
                   partition_keys=["p"], primary_keys=["p", "id"],
                   options={"bucket": "-1", "dynamic-bucket.target-row-num": "3"})
    j.write(w, "t", [["x", i, f"v{i}"] for i in range(7)] + [["y", 1, "y1"]])
    j.write(w, "t", [["x", 1, "upd"], ["x", 9, "new"]])
    j.alter(w, "t", add_column("n", "INT"))
    j.write(w, "t", [["x", 2, None, 2], ["x", 3, None, None]], row_kinds=["+I", "-D"])
    assert len(list((table_dir(w, "t") / "p=x").glob("bucket-*"))) == 3
    assert assert_equal_every_snapshot(j, w, "t", spark) == 3
    # the tree shows the hash index: one file per partition and bucket, a hash per key
    h = sl.open_table(str(table_dir(w, "t"))).history()
    (index,) = [ml for ml in h.tree(1).lists if ml.kind == "index"]
    hashes = sorted((tuple(f.partition.values()), f.bucket, f.row_count)
                    for f in index.manifests[0].files if f.kind == "ADD hash index")
    assert hashes == [(("x",), 0, 3), (("x",), 1, 3), (("x",), 2, 1), (("y",), 0, 1)]


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_orc_and_avro_data_files(java_paimon: JavaPaimon, w: Path, spark: Any,
                                 fmt: str) -> None:
    j = java_paimon
    j.create_table(w, "t", [("id", "INT"), ("name", "STRING"), ("ts", "TIMESTAMP(3)"),
                            ("d", "DECIMAL(10, 2)"), ("r", "ROW<x INT, y STRING>")],
                   options={"file.format": fmt})
    j.write(w, "t", [[1, "a", "TS:2024-01-05T10:11:12.345", "D:1.50",
                      {"struct": [["x", 1], ["y", "q"]]}]])
    j.alter(w, "t", rename_column("name", "label"), update_column_type("id", "BIGINT"))
    j.write(w, "t", [[5000000000, "b", None, None, None]])
    assert {p.suffix for p in (table_dir(w, "t") / "bucket-0").iterdir()} == {f".{fmt}"}
    assert_equal_every_snapshot(j, w, "t", spark)


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_orc_and_avro_primary_key(java_paimon: JavaPaimon, w: Path, spark: Any,
                                  fmt: str) -> None:
    j = java_paimon
    j.create_table(w, "t", PK, primary_keys=["id"], options={"bucket": "1", "file.format": fmt})
    j.write(w, "t", [[1, "a", 1, None], [2, "b", 2, None]])
    j.alter(w, "t", rename_column("a", "label"))
    j.write(w, "t", [[1, "c", 3, "F:0.5"], [2, None, None, None]], row_kinds=["+U", "-D"])
    assert {p.suffix for p in (table_dir(w, "t") / "bucket-0").iterdir()} == {f".{fmt}"}
    assert_equal_every_snapshot(j, w, "t", spark)


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_deletion_vectors_on_orc_and_avro_files(java_paimon: JavaPaimon, w: Path, spark: Any,
                                                fmt: str) -> None:
    """Spark's ORC reader gives no row positions and PySpark has no Avro reader: these files
    are read on the driver, their deleted positions dropped there."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT"), ("v", "STRING"), ("ts", "TIMESTAMP(3)")],
                   options={"deletion-vectors.enabled": "true", "file.format": fmt})
    j.write(w, "t", [[i, f"v{i}", f"TS:2024-01-0{i + 1}T10:11:12.345"] for i in range(5)])
    j.delete_where(w, "t", "id", [0, 3])
    j.alter(w, "t", rename_column("v", "value"), update_column_type("id", "BIGINT"))
    j.write(w, "t", [[10, "x", None], [11, "y", None]])
    j.delete_where(w, "t", "id", [11, 4])
    assert java_read(j, w, "t")["rows"] == [
        [1, "v1", "TS:2024-01-02T10:11:12.345000"], [10, "x", None],
        [2, "v2", "TS:2024-01-03T10:11:12.345000"]]
    assert assert_equal_every_snapshot(j, w, "t", spark) == 4


def test_primary_key_deletion_vectors_partitioned(java_paimon: JavaPaimon, w: Path,
                                                  spark: Any) -> None:
    """Deletion vectors are per partition and bucket: several buckets, several compactions,
    updates and deletes across a retype."""
    j = java_paimon
    j.create_table(w, "t", [("p", "STRING NOT NULL"), ("id", "INT NOT NULL"), ("v", "INT")],
                   partition_keys=["p"], primary_keys=["p", "id"],
                   options={"bucket": "2", "deletion-vectors.enabled": "true"})
    j.write(w, "t", [[p, i, i] for p in ("a", "b") for i in range(8)])
    j.write(w, "t", [["a", 1, 100], ["b", 2, None], ["a", 3, None]],
                row_kinds=["+U", "+U", "-D"])
    j.alter(w, "t", update_column_type("v", "BIGINT"))
    j.write(w, "t", [["a", 1, 5000000000], ["b", 7, None], ["a", 9, 9]],
            row_kinds=["+U", "-D", "+I"])
    rows = java_read(j, w, "t")["rows"]
    assert ["a", 1, 5000000000] in rows and ["a", 9, 9] in rows and len(rows) == 15
    assert assert_equal_every_snapshot(j, w, "t", spark) == 6


def test_deletion_vector_index_file_layout(java_paimon: JavaPaimon, w: Path) -> None:
    """The bytes docs/java-paimon-facts.md describes: version byte 1, then per data file a
    big-endian int32 size, the DV (int32 magic 1581511376 + RoaringBitmap32 portable
    serialisation) and a CRC32 of the DV bytes; the index manifest's
    _DELETIONS_VECTORS_RANGES gives (data file, offset of the size int, size)."""
    j = java_paimon
    j.create_table(w, "t", [("id", "INT")], options={"deletion-vectors.enabled": "true"})
    j.write(w, "t", [[i] for i in range(6)])
    j.delete_where(w, "t", "id", [1, 3])
    snap = j.snapshots(w, "t")[-1]
    with open(table_dir(w, "t") / "manifest" / snap["index_manifest"], "rb") as f:
        (entry,) = list(fastavro.reader(f))
    assert entry["_INDEX_TYPE"] == "DELETION_VECTORS" and entry["_BUCKET"] == 0
    (rng,) = entry["_DELETIONS_VECTORS_RANGES"]
    data = (table_dir(w, "t") / "index" / entry["_FILE_NAME"]).read_bytes()
    assert data[0] == 1 and rng["f1"] == 1
    (size,) = struct.unpack(">i", data[1:5])
    dv = data[5:5 + size]
    assert size == rng["f2"] == len(data) - 9
    assert struct.unpack(">i", dv[:4])[0] == 1581511376
    assert struct.unpack(">I", data[5 + size:9 + size])[0] == zlib.crc32(dv)
    # RoaringBitmap portable format: cookie 12346 (no run containers), 1 container, key 0
    # holding 2 values, offset 16, then the sorted uint16 values 1 and 3.
    cookie, n, key, card_minus_1, offset = struct.unpack("<iiHHi", dv[4:20])
    assert (cookie, n, key, card_minus_1, offset) == (12346, 1, 0, 1, 16)
    assert struct.unpack("<HH", dv[20:24]) == (1, 3)
    # schemalab's decoder, through the table's own index manifest
    path = str(table_dir(w, "t") / "index" / entry["_FILE_NAME"])
    assert read_deletion_vector(path, rng["f1"], rng["f2"]).tolist() == [1, 3]
    t = sl.open_table(str(table_dir(w, "t")))
    (f,) = t.data_files(t.latest_snapshot)
    (dv_ref,) = f.deletes
    assert (dv_ref.kind, dv_ref.source, dv_ref.load().tolist()) == ("deletion vector", path, [1, 3])
