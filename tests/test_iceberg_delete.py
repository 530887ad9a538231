"""DELETE FROM and INSERT OVERWRITE on the Iceberg tables schemalab writes (issue 24): the
files Iceberg's Spark merge-on-read writes (v2 position delete files, v3 deletion vectors in
Puffin files), the snapshots and summaries Java's producers make, judged by pyiceberg at
every snapshot and by schemalab's own reader; bad input, a killed writer and a DELETE racing
an INSERT. Java Iceberg judges the same tables in ``tests/test_interop_iceberg_write.py``."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_iceberg_write import assert_pyiceberg_reads_like_us

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.iceberg.deletes import FILE_PATH_ID, POS_ID, parse_deletion_vector
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.puffin import bitmap64, dv_blob

pytest.importorskip("pyiceberg")

CREATE = ("CREATE TABLE t (id INT, name STRING, p STRING) PARTITIONED BY (p) "
          "TBLPROPERTIES ('format-version' = '{v}')")
#: one task writes them: one data file per partition
ROWS = ("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a', 'x'), "
        "(2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")


def ids(wh: sl.Warehouse) -> list[int]:
    return sorted(r[0] for r in wh.sql("SELECT id FROM t").collect())


def live(t: Any) -> tuple[list[Any], list[Any]]:
    t.refresh()
    return t.live_files()


def manifest_list(t: Any) -> list[Any]:
    return t.manifest_files(t.current_snapshot)


@pytest.mark.parametrize("version", [2, 3])
def test_pyiceberg_reads_every_snapshot(version: int, tmp_path: Path, spark: Any) -> None:
    """Deletes of rows, of a second row of the same file, of whole files, after ALTERs and
    partition evolution, then INSERT OVERWRITE both ways: pyiceberg reads every snapshot as
    schemalab does."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=version))
    wh.sql(ROWS)
    wh.sql("ALTER TABLE t ADD COLUMN q BIGINT; ALTER TABLE t RENAME COLUMN name TO nm; "
           "ALTER TABLE t ADD PARTITION FIELD bucket(2, id)")
    wh.sql("INSERT INTO t VALUES (5, 'e', 'x', 50), (6, 'f', 'z', 60)")
    wh.sql("DELETE FROM t WHERE nm = 'a'")
    wh.sql("DELETE FROM t WHERE q = 60 OR id = 3")
    wh.sql("DELETE FROM t WHERE id = 2")  # x's first file: emptied, its deletes merged
    wh.sql("DELETE FROM t WHERE p = 'z'")  # a partition filter: the files dropped
    assert ids(wh) == [4, 5]
    t = wh.table("t")
    assert [s.summary["operation"] for s in t.snapshots[2:]] == ["delete"] * 4
    assert "deleted-data-files" in t.snapshots[-1].summary
    assert "deleted-data-files" not in t.snapshots[-2].summary
    assert_pyiceberg_reads_like_us(t)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
    try:
        wh.sql("INSERT OVERWRITE t VALUES (7, 'g', 'x', 70)")
        assert ids(wh) == [7]
    finally:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    wh.sql("INSERT INTO t VALUES (8, 'h', 'y', 80), (9, 'i', 'x', 90)")
    # dynamic: the partitions (p, bucket) of the new rows only
    wh.sql("INSERT OVERWRITE t VALUES (10, 'j', 'y', 100), (8, 'new', 'y', 0)")
    assert sorted(map(tuple, wh.sql("SELECT id, nm FROM t").collect())) == [
        (7, "g"), (8, "new"), (9, "i"), (10, "j")]
    t.refresh()
    over = t.snapshots[-1].summary
    assert over["operation"] == "overwrite" and over["replace-partitions"] == "true"
    assert_pyiceberg_reads_like_us(t)


def test_v2_position_delete_files(tmp_path: Path, spark: Any) -> None:
    import pyarrow.parquet as pq

    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=2))
    wh.sql(ROWS)
    wh.sql("DELETE FROM t WHERE id = 1")
    t = wh.table("t")
    data, deletes = live(t)
    (d,) = deletes
    e = d.entry
    target = next(x for x in data if "p=x" in x.uri)
    assert (e.content, e.file_format, e.record_count) == (1, "parquet", 1)
    assert d.uri.endswith("-deletes.parquet") and "/data/p=x/" in d.uri
    assert e.referenced_data_file is None  # as Java leaves it for Parquet
    assert e.lower_bounds[FILE_PATH_ID] == e.upper_bounds[FILE_PATH_ID] == \
        target.uri.encode()
    assert e.lower_bounds[POS_ID] == (0).to_bytes(8, "little")
    assert FILE_PATH_ID not in e.value_counts and e.raw[108]  # column sizes, no counts
    pf = pq.ParquetFile(d.path)
    fields = pf.schema_arrow
    assert [(f.name, f.nullable, f.metadata[b"PARQUET:field_id"]) for f in fields] == [
        ("file_path", False, str(FILE_PATH_ID).encode()), ("pos", False, str(POS_ID).encode())]
    assert pf.read().to_pylist() == [{"file_path": target.uri, "pos": 0}]
    seq = t.current_snapshot.sequence_number
    assert e.sequence_number == e.file_sequence_number == seq == 2
    (mf,) = [m for m in manifest_list(t) if m.content == 1]
    assert (mf.sequence_number, mf.min_sequence_number, mf.added_files) == (2, 2, 1)
    wh.sql("DELETE FROM t WHERE id = 3")
    wh.sql("DELETE FROM t WHERE id = 4 OR name = 'zz'")  # y emptied: its deletes merged
    s = wh.table("t").snapshots[-1].summary
    assert (s["operation"], s["removed-position-delete-files"]) == ("delete", "1")
    wh.sql("DELETE FROM t WHERE p = 'y'")  # a partition filter: y's files and deletes go
    s = wh.table("t").snapshots[-1].summary
    assert (s["deleted-data-files"], s["removed-delete-files"]) == ("1", "1")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES (5, 'e', 'x'), "
           "(6, 'f', 'x')")
    wh.sql("DELETE FROM t WHERE id = 5")
    s = wh.table("t").snapshots[-1].summary
    assert s["added-position-delete-files"] == "1" and "removed-delete-files" not in s
    assert ids(wh) == [2, 6]
    wh.sql("INSERT INTO t VALUES (7, 'g', 'w')")
    wh.sql("DELETE FROM t WHERE id = 7")  # a whole file no delete touched: dropped
    s = wh.table("t").snapshots[-1].summary
    assert (s["operation"], s["deleted-data-files"]) == ("delete", "1")
    assert "added-delete-files" not in s
    assert ids(wh) == [2, 6]
    assert_pyiceberg_reads_like_us(wh.table("t"))


def test_v2_second_delete_merges(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT) TBLPROPERTIES ('format-version' = '2')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ id FROM range(10)")
    wh.sql("DELETE FROM t WHERE id = 3")
    wh.sql("DELETE FROM t WHERE id IN (5, 7)")
    t = wh.table("t")
    s = t.current_snapshot.summary
    assert {k: s[k] for k in ("added-position-deletes", "removed-position-deletes",
                              "removed-position-delete-files", "total-position-deletes",
                              "total-delete-files")} == {
        "added-position-deletes": "3", "removed-position-deletes": "1",
        "removed-position-delete-files": "1", "total-position-deletes": "3",
        "total-delete-files": "1"}
    _, deletes = live(t)
    assert [d.entry.record_count for d in deletes] == [3]
    assert ids(wh) == [0, 1, 2, 4, 6, 8, 9]


def test_v3_deletion_vectors(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=3))
    wh.sql(ROWS.replace("(3, 'c'", "(5, 'e', 'x'), (3, 'c'"))
    wh.sql("DELETE FROM t WHERE id IN (1, 3)")
    t = wh.table("t")
    data, deletes = live(t)
    assert len(deletes) == 2 and len({d.path for d in deletes}) == 1  # one Puffin file
    raw = Path(deletes[0].path).read_bytes()
    assert raw[:4] == b"PFA1" and raw[-4:] == b"PFA1" and raw[-8:-4] == b"\0\0\0\0"
    (footer_len,) = struct.unpack("<I", raw[-12:-8])
    footer = json.loads(raw[-12 - footer_len:-12])
    assert footer["properties"]["created-by"]
    for d, blob in zip(sorted(deletes, key=lambda d: d.entry.content_offset or 0),
                       footer["blobs"], strict=True):
        e = d.entry
        assert (e.content, e.file_format, e.record_count) == (1, "puffin", 1)
        assert blob["type"] == "deletion-vector-v1" and blob["fields"] == [POS_ID]
        assert (blob["offset"], blob["length"]) == (e.content_offset, e.content_size)
        assert blob["properties"] == {"referenced-data-file": e.referenced_data_file,
                                      "cardinality": "1"}
        assert e.referenced_data_file in {x.uri for x in data}
        body = raw[e.content_offset:e.content_offset + e.content_size]
        assert struct.unpack(">I", body[:4])[0] == len(body) - 8
        assert body[4:8] == bytes.fromhex("d1d33964")
        assert struct.unpack(">I", body[-4:])[0] == zlib.crc32(body[4:-4])
        assert parse_deletion_vector(body, "x").tolist() == [0]
    x_dv = next(d for d in deletes if "p=x" in (d.entry.referenced_data_file or ""))
    # a second delete in x's file: a new vector with both rows, the old entry DELETED
    wh.sql("DELETE FROM t WHERE id = 2")
    t = wh.table("t")
    s = t.snapshots[-1].summary
    assert (s["operation"], s["added-dvs"], s["removed-dvs"], s["added-position-deletes"],
            s["removed-position-deletes"], s["total-position-deletes"]) == (
        "delete", "1", "1", "2", "1", "3")
    old = [e for m in manifest_list(t) if m.content == 1 for e in t.manifest(m).entries
           if (e.file_path, e.content_offset) == (x_dv.uri, x_dv.entry.content_offset)]
    assert [e.status for e in old] == [2]
    assert old[0].sequence_number == x_dv.entry.sequence_number  # kept when DELETED
    _, deletes = live(t)
    assert sorted(d.entry.record_count for d in deletes) == [1, 2]
    wh.sql("DELETE FROM t WHERE p = 'y'")  # y: the file dropped, its vector with it
    s = wh.table("t").snapshots[-1].summary
    assert (s["operation"], s["deleted-data-files"], s["removed-dvs"]) == ("delete", "1", "1")
    assert ids(wh) == [5]
    assert_pyiceberg_reads_like_us(wh.table("t"))


def test_deletion_vector_bytes() -> None:
    """Array, bitmap and run containers, an empty key between two used ones."""
    import numpy as np

    for positions in ([0], list(range(5000)), list(range(0, 140000, 3)),
                      [1, 2**32 + 5, 2**33 + 7], list(range(70000, 70100))):
        pos = np.array(positions, np.int64)
        assert parse_deletion_vector(dv_blob(pos), "x").tolist() == positions
    assert bitmap64(np.array([2**32], np.int64))[:8] == (2).to_bytes(8, "little")


def test_a_column_that_does_not_exist(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=2))
    wh.sql(ROWS)
    wh.sql("ALTER TABLE t RENAME COLUMN name TO nm")
    before = wh.table("t").metadata_file
    with pytest.raises(SchemaLabError) as e:
        wh.sql("DELETE FROM t WHERE nope = 1")
    assert e.value.table == "default.t" and e.value.column == "nope"
    assert e.value.rule == "column-must-exist"
    with pytest.raises(SchemaLabError) as e:
        wh.sql("DELETE FROM t WHERE name = 'a'")  # renamed: its history says so
    assert e.value.column == "name" and "nm" in str(e.value)
    assert wh.table("t").metadata_file == before


def test_v1_deletes_whole_files_only(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=1))
    wh.sql(ROWS)
    with pytest.raises(SchemaLabError) as e:
        wh.sql("DELETE FROM t WHERE id = 1")
    assert e.value.rule == "iceberg-delete-needs-delete-files" and e.value.table == "default.t"
    wh.sql("DELETE FROM t WHERE p = 'y'")
    assert ids(wh) == [1, 2]
    assert_pyiceberg_reads_like_us(wh.table("t"))


def test_a_killed_delete_leaves_nothing_visible(tmp_path: Path, spark: Any,
                                               monkeypatch: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=3))
    wh.sql(ROWS)
    tdir = tmp_path / "default" / "t"
    real = commits.fileio.write_new

    def dies(p: str, data: Any) -> Any:
        if p.endswith(".metadata.json"):
            raise KeyboardInterrupt  # stopped before its metadata is linked
        return real(p, data)

    monkeypatch.setattr(commits.fileio, "write_new", dies)
    with pytest.raises(KeyboardInterrupt):
        wh.sql("DELETE FROM t WHERE id = 1")
    monkeypatch.undo()
    t = wh.table("t")
    assert os.path.basename(t.metadata_file) == "v2.metadata.json"
    assert ids(wh) == [1, 2, 3, 4]
    assert not list(tdir.rglob("*.puffin"))  # its deletion vectors were removed
    assert_pyiceberg_reads_like_us(t)


def _racing(monkeypatch: Any, other: sl.Warehouse, race: list[str]) -> list[str]:
    """Before each of this process's next metadata commits, ``other`` runs the next statement
    of ``race`` (which the caller may extend): the commit finds itself overtaken."""
    real = commits.fileio.write_new
    busy: list[bool] = []

    def write_new(p: str, data: Any) -> bool:
        if p.endswith(".metadata.json") and race and not busy:
            busy.append(True)  # the other writer's own commit does not race again
            other.sql(race.pop(0))
            busy.clear()
        return real(p, data)

    monkeypatch.setattr(commits.fileio, "write_new", write_new)
    return race


@pytest.mark.parametrize("version", [2, 3])
def test_delete_racing_insert(version: int, tmp_path: Path, spark: Any,
                              monkeypatch: Any) -> None:
    """An INSERT commits while a DELETE is committing: the DELETE re-applies on it (both
    commits present). Then a DELETE of the same file commits first: the other starts over
    on the new snapshot (cleanly retried; no second vector for one file)."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=version))
    wh.sql(ROWS)
    other = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    race = _racing(monkeypatch, other, ["INSERT INTO t VALUES (9, 'z', 'x')"])
    wh.sql("DELETE FROM t WHERE id = 1")
    assert ids(wh) == [2, 3, 4, 9]
    race.append("DELETE FROM t WHERE id = 2")
    wh.sql("DELETE FROM t WHERE id = 4")  # raced by DELETE id = 2 (another file)
    monkeypatch.undo()
    assert ids(wh) == [3, 9]
    race[:] = []
    t = wh.table("t")
    ops = [s.summary["operation"] for s in t.snapshots]
    assert ops == ["append", "append", "delete", "delete", "delete"]
    _, deletes = live(t)
    per_file = [d.entry.referenced_data_file or d.entry.lower_bounds.get(FILE_PATH_ID)
                for d in deletes]
    assert len(per_file) == len(set(per_file))
    assert_pyiceberg_reads_like_us(t)


def test_same_file_race_starts_over(tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT) TBLPROPERTIES ('format-version' = '3')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ id FROM range(6)")
    other = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    _racing(monkeypatch, other, ["DELETE FROM t WHERE id = 1"])
    wh.sql("DELETE FROM t WHERE id = 4")
    monkeypatch.undo()
    assert ids(wh) == [0, 2, 3, 5]
    t = wh.table("t")
    _, deletes = live(t)
    assert [d.entry.record_count for d in deletes] == [2]  # one vector, merged
    assert len(list((tmp_path / "default" / "t").rglob("*.puffin"))) == 2
    assert_pyiceberg_reads_like_us(t)


def test_time_partitions(tmp_path: Path, spark: Any) -> None:
    """Manifests written again hold the partition values Avro decodes (dates, timestamps):
    days, hours, identity of a date and of a timestamp, then a decimal."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, ts TIMESTAMP, dt DATE, tn TIMESTAMP_NTZ, m DECIMAL(9, 2)) "
           "PARTITIONED BY (days(ts), hours(tn), dt, m) "
           "TBLPROPERTIES ('format-version' = '3')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES "
           "(1, TIMESTAMP'2024-01-02 03:04:05', DATE'2024-05-06', "
           "TIMESTAMP_NTZ'2024-01-02 03:04:05', 1.25BD), "
           "(2, TIMESTAMP'2024-01-02 03:04:05', DATE'2024-05-06', "
           "TIMESTAMP_NTZ'2024-01-02 03:04:05', 1.25BD), "
           "(3, NULL, NULL, NULL, NULL)")
    wh.sql("DELETE FROM t WHERE id = 1")
    wh.sql("DELETE FROM t WHERE dt = DATE'2024-05-06'")  # a partition filter: dropped
    wh.sql("INSERT OVERWRITE t VALUES (4, TIMESTAMP'2025-01-01 00:00:00', DATE'2025-01-01', "
           "TIMESTAMP_NTZ'2025-01-01 00:00:00', 2.5)")
    assert ids(wh) == [3, 4]  # dynamic: the NULL partition stays
    t = wh.table("t")
    assert t.snapshots[2].summary["deleted-data-files"] == "1"
    assert_pyiceberg_reads_like_us(t)
