"""Deletes: the Roaring, Puffin and Paimon deletion-vector decoders against real bitmaps and
files, and the engine's delete application on Spark (file names Spark encodes, files that
share a name, positions that do not fit their file).

The decoders are checked against pyroaring (CRoaring) for every container kind and against
the deletion vectors Iceberg 1.10.2 wrote (tests/fixtures/iceberg-java-1.10, t14); Paimon's
index files written by Java are checked in tests/test_java_paimon_tables.py.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tarfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pyroaring
import pytest

import schemalab as sl
from schemalab.codecs.roaring import RoaringError, read_bitmap32, read_bitmap64
from schemalab.engine.execute import execute
from schemalab.engine.plan import DataFile, PositionDeletes, plan_read
from schemalab.errors import CorruptFileError, SchemaLabError, UnsupportedVersionError
from schemalab.iceberg.deletes import parse_deletion_vector as parse_puffin_dv
from schemalab.paimon.index import parse_deletion_vector as parse_paimon_dv
from schemalab.schema import TableSchema
from schemalab.types import parse_type
from schemalab.types.casts import CastMode
from schemalab.types.model import DataField

ICEBERG = Path(__file__).parent / "fixtures" / "iceberg-java-1.10"

# --------------------------------------------------------------------------------------------
# Roaring bitmaps
# --------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(12)
BITMAPS = {
    "empty": np.zeros(0, np.int64),
    "array containers": _RNG.choice(1 << 22, 5000, replace=False),
    "bitmap containers": _RNG.choice(3 * 65536, 60000, replace=False),
    "one run container": np.arange(0, 100),
    # with 4 or more containers a bitmap with runs carries an offset header
    "runs in many containers": np.concatenate([np.arange(k * 65536 + 5, k * 65536 + 900)
                                               for k in range(6)]),
    "all three kinds": np.concatenate([_RNG.choice(65536, 100, replace=False),
                                       np.arange(65536, 2 * 65536),
                                       3 * 65536 + _RNG.choice(65536, 9000, replace=False),
                                       [2**31, 2**32 - 1]]),
}


@pytest.mark.parametrize("name", list(BITMAPS))
def test_bitmap32_equals_pyroaring(name: str) -> None:
    values = sorted({int(v) for v in BITMAPS[name]})
    bm = pyroaring.BitMap(values)
    for optimized in (False, True):
        if optimized:
            bm.run_optimize()
        assert read_bitmap32(bm.serialize()).tolist() == values


def test_bitmap32_container_kinds_were_all_exercised() -> None:
    """The cases above hold every cookie and container kind of the portable format."""
    cookies = set()
    for values in BITMAPS.values():
        bm = pyroaring.BitMap(sorted({int(v) for v in values}))
        bm.run_optimize()
        cookies.add(struct.unpack_from("<H", bm.serialize())[0])
    assert cookies == {12346, 12347}


def test_bitmap64_of_several_keys() -> None:
    """Iceberg's 64-bit envelope: a count, then per key the key and a 32-bit bitmap."""
    parts = {0: [1, 2, 70000], 3: [5], 7: list(range(10, 5000))}
    raw = struct.pack("<Q", len(parts)) + b"".join(
        struct.pack("<I", k) + pyroaring.BitMap(v).serialize() for k, v in parts.items())
    assert read_bitmap64(raw).tolist() == [(k << 32) | v for k, vs in parts.items() for v in vs]


@pytest.mark.parametrize(("raw", "what"), [
    (bytes.fromhex("3a3000"), "truncated"),
    (bytes.fromhex("3930000001000000"), "unknown cookie 12345"),
    # one container declared with 2 values, only 1 present
    (bytes.fromhex("3a300000" "01000000" "00000100" "10000000" "0100"), "truncated"),
    (bytes.fromhex("3a300000" "01000000" "00000100" "10000000" "0300" "0100"),
     "not strictly ascending"),
    (bytes.fromhex("3a300000" "01000000" "00000000" "11000000" "0100"), "offset says 17"),
])
def test_bitmap32_refuses_malformed_input(raw: bytes, what: str) -> None:
    with pytest.raises(RoaringError, match=what):
        read_bitmap32(raw)


def test_bitmap64_refuses_descending_keys() -> None:
    one = pyroaring.BitMap([1]).serialize()
    raw = struct.pack("<Q", 2) + struct.pack("<I", 3) + one + struct.pack("<I", 1) + one
    with pytest.raises(RoaringError, match="not ascending"):
        read_bitmap64(raw)


# --------------------------------------------------------------------------------------------
# Deletion-vector blobs: Iceberg's Puffin blob, Paimon's index file
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def t14(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("t14")
    with tarfile.open(ICEBERG / "iceberg-java-1.10.2-tables.tar.gz") as tar:
        tar.extractall(root, members=[m for m in tar.getmembers()
                                      if m.name.startswith("db/t14_")], filter="data")
    return root / "db" / "t14_v3_deletion_vectors"


def test_puffin_deletion_vectors_written_by_iceberg(t14: Path) -> None:
    """Every DV of t14 through the table's own metadata: the blob the manifest addresses
    decodes to as many positions as the entry's record_count, with the footer's
    referenced-data-file the entry's."""
    t = sl.open_table(t14)
    seen = []
    for s in t.snapshots:
        for d in t.delete_files(s.snapshot_id):
            e = d.entry
            blob = Path(d.path).read_bytes()[e.content_offset:e.content_offset + e.content_size]
            positions = parse_puffin_dv(blob, d.path).tolist()
            assert len(positions) == e.record_count
            footer = _puffin_footer(Path(d.path).read_bytes())
            (meta,) = footer["blobs"]
            assert meta["type"] == "deletion-vector-v1"
            assert (meta["offset"], meta["length"]) == (e.content_offset, e.content_size)
            assert meta["properties"]["referenced-data-file"] == e.referenced_data_file
            seen.append(tuple(positions))
    assert set(seen) == {(0,), (1,), (1, 2)}


def _puffin_footer(data: bytes) -> Any:
    assert data[:4] == data[-4:] == b"PFA1"
    (size,) = struct.unpack("<i", data[-12:-8])
    assert data[-8:-4] == b"\0\0\0\0"  # not compressed
    return json.loads(data[-12 - size:-12])


def test_puffin_deletion_vector_checks() -> None:
    body = bytes.fromhex("d1d33964") + struct.pack("<Q", 1) + struct.pack("<I", 0) + \
        pyroaring.BitMap([4, 9]).serialize()
    good = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    assert parse_puffin_dv(good, "x.puffin").tolist() == [4, 9]
    with pytest.raises(CorruptFileError, match="CRC-32 mismatch"):
        parse_puffin_dv(good[:-1] + bytes([good[-1] ^ 1]), "x.puffin")
    with pytest.raises(CorruptFileError, match="magic"):
        bad = b"\0\0\0\0" + body[4:]
        parse_puffin_dv(struct.pack(">I", len(bad)) + bad + struct.pack(">I", zlib.crc32(bad)),
                        "x.puffin")
    with pytest.raises(CorruptFileError, match="says"):
        parse_puffin_dv(struct.pack(">I", len(body) + 1) + body + b"\0\0\0\0", "x.puffin")


def test_paimon_deletion_vector_checks() -> None:
    dv = struct.pack(">i", 1581511376) + pyroaring.BitMap([0, 7]).serialize()
    good = b"\x01" + struct.pack(">i", len(dv)) + dv + struct.pack(">I", zlib.crc32(dv))
    assert parse_paimon_dv(good, 1, len(dv), "index-0").tolist() == [0, 7]
    with pytest.raises(CorruptFileError, match="CRC32 mismatch"):
        parse_paimon_dv(good[:-1] + b"\0", 1, len(dv), "index-0")
    with pytest.raises(CorruptFileError, match="index manifest says"):
        parse_paimon_dv(good, 1, len(dv) - 1, "index-0")
    with pytest.raises(UnsupportedVersionError, match="version 2"):
        parse_paimon_dv(b"\x02" + good[1:], 1, len(dv), "index-0")


# --------------------------------------------------------------------------------------------
# Delete application on Spark
# --------------------------------------------------------------------------------------------

SCHEMA = TableSchema(0, (DataField(0, "id", parse_type("INT")),
                         DataField(1, "v", parse_type("STRING"))), 1)


def _file(path: Path, ids: range, deleted: list[int] | None = None) -> DataFile:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int32()),
                             "v": [f"v{i}" for i in ids]}), path)
    deletes = () if deleted is None else (PositionDeletes(
        "deletion vector", str(path) + ".dv", len(deleted),
        load=lambda: np.array(deleted, np.int64)),)
    return DataFile(str(path), 0, len(ids), deletes=deletes)


def _read(files: list[DataFile], spark: Any) -> list[int]:
    plan = plan_read("t", SCHEMA, files, lambda f: SCHEMA, CastMode.EXPLICIT)
    return sorted(r.id for r in execute(plan, spark).collect())


def test_positions_of_files_whose_names_spark_encodes(tmp_path: Path, spark: Any,
                                                      tested_by: str) -> None:
    """Spark shows ``_metadata.file_name`` URI-encoded; names with a space, ``%``, ``+``,
    ``#`` or non-ASCII must still meet their deletes, and only theirs."""
    files = [_file(tmp_path / "p=a b" / "x y%z+1#é.parquet", range(0, 10), [0, 9]),
             _file(tmp_path / "p=a b" / "x y%z+2.parquet", range(10, 20), [5]),
             _file(tmp_path / "plain.parquet", range(20, 25))]
    assert _read(files, spark) == [i for i in range(25) if i not in (0, 9, 15)]


def test_positions_of_files_sharing_a_name(tmp_path: Path, spark: Any,
                                           tested_by: str) -> None:
    """Two partitions' files named alike (Spark's part files are): each file's deletes
    apply to it alone (the read splits the scan so names are unique in each)."""
    files = [_file(tmp_path / "p=1" / "part-0.parquet", range(0, 5), [1]),
             _file(tmp_path / "p=2" / "part-0.parquet", range(5, 10), [3]),
             _file(tmp_path / "p=3" / "part-0.parquet", range(10, 15))]
    assert _read(files, spark) == [0, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14]


def test_many_positions_in_many_words(tmp_path: Path, spark: Any,
                                      tested_by: str) -> None:
    """Every bit of a 64-position word (bit 63 is the sign bit of the mask)."""
    n = 1000
    deleted = sorted(set(range(0, n, 3)) | {63, 64, 127, 128, 191, n - 1})
    files = [_file(tmp_path / "a.parquet", range(n), deleted)]
    assert _read(files, spark) == [i for i in range(n) if i not in set(deleted)]


def test_positions_of_files_whose_rows_end_inside_a_word(tmp_path: Path, spark: Any,
                                                         tested_by: str) -> None:
    """Each file's bits start at a 64-bit word of their own: files whose row counts are not
    multiples of 64 (1, 63, 65, 130 rows) lose exactly their own first and last rows, and a
    file without deletes between them loses none."""
    sizes, start, files, kept = [65, 1, 63, 7, 130], 0, [], []
    for k, n in enumerate(sizes):
        ids = range(start, start + n)
        deleted = None if k == 3 else sorted({0, n - 1})
        files.append(_file(tmp_path / f"f{k}.parquet", ids, deleted))
        kept += [i for j, i in enumerate(ids) if deleted is None or j not in deleted]
        start += n
    assert _read(files, spark) == kept


@pytest.mark.parametrize("name", ["data-0f2d1c6e-9a3b-4c5d-8e7f-0123456789ab-{k}.parquet",
                                  "dätä x%y+{k}.parquet"])
def test_positions_of_many_files_sharing_a_prefix(tmp_path: Path, spark: Any,
                                                  name: str, tested_by: str) -> None:
    """Issue 25: a row finds its file's bits by a tree of name comparisons; 37 files whose
    names differ only at the end (and sort 1, 10, 11, ..., 2: not in number order), each
    losing a different row, each lose exactly their own, with names Spark shows as they are
    and names it encodes."""
    files, kept = [], []
    for k in range(37):
        ids = range(k * 10, k * 10 + 10)
        files.append(_file(tmp_path / name.format(k=k), ids, [k % 10]))
        kept += [i for j, i in enumerate(ids) if j != k % 10]
    assert _read(files, spark) == kept


def test_positions_of_files_of_the_same_size(tmp_path: Path, spark: Any,
                                             by_expressions: str) -> None:
    """Issue 25: a row finds its file's bits by the file's size first, then its name: six
    files of the same bytes (so the same size), five losing a different row and one losing
    none, and three files of other sizes: each loses exactly its own rows."""
    files, kept = [], []
    for k in range(6):
        deleted = None if k == 3 else [k]
        files.append(_file(tmp_path / f"same-{k}.parquet", range(10), deleted))
        kept += [i for i in range(10) if deleted is None or i not in deleted]
    for k, n in enumerate((20, 30, 40)):
        files.append(_file(tmp_path / f"other-{k}.parquet", range(100 * n, 100 * n + n),
                           [n - 1 - k]))
        kept += [i for j, i in enumerate(range(100 * n, 100 * n + n)) if j != n - 1 - k]
    sizes = [os.path.getsize(f.path) for f in files]
    assert len(set(sizes[:6])) == 1 and len(set(sizes)) == 4
    assert _read(files, spark) == sorted(kept)
    # the names are read only because some sizes are shared: apart, none is
    positions = [s for s in _scans(files, spark) if "row_index" in s]
    assert positions and all("file_name" in s for s in positions), positions
    apart = [files[0], *files[6:]]
    [positions] = [s for s in _scans(apart, spark) if "row_index" in s]
    assert "file_size" in positions and "file_name" not in positions
    assert _read(apart, spark) == sorted(
        [i for i in range(10) if i != 0]
        + [i for k, n in enumerate((20, 30, 40))
           for j, i in enumerate(range(100 * n, 100 * n + n)) if j != n - 1 - k])


def _scans(files: list[Any], spark: Any) -> list[str]:
    """The file scans of the executed plan of a read of ``files``."""
    plan = plan_read("t", SCHEMA, files, lambda f: SCHEMA, CastMode.EXPLICIT)
    return [line for line in execute(plan, spark)._jdf.queryExecution().executedPlan()
            .toString().splitlines() if "FileScan" in line]


def test_files_without_deletes_are_a_plain_scan(tmp_path: Path, spark: Any,
                                                tested_by: str) -> None:
    """Files without deletes by position are read by a scan of their own, with no row
    positions and no filter: exactly a plain read of them."""
    files = [_file(tmp_path / "a.parquet", range(0, 10), [2]),
             _file(tmp_path / "b.parquet", range(10, 20)),
             _file(tmp_path / "c.parquet", range(20, 30))]
    scans = _scans(files, spark)
    assert len(scans) == 2
    positions = [s for s in scans if "row_index" in s]
    whole = [s for s in scans if "row_index" not in s]
    assert len(positions) == 1 and "(1 paths)" in positions[0]
    assert "(2 paths)" in whole[0] and "file_name" not in whole[0]
    assert _read(files, spark) == [i for i in range(30) if i != 2]


def test_the_jvm_filter_reads_no_metadata_struct(tmp_path: Path, spark: Any,
                                                 tested_by: str) -> None:
    """Issue 25: the JVM's filter finds a row's file itself, so the scan reads the row
    positions alone: no ``_metadata`` field (Spark builds that struct for every row), where
    the expression filter reads the file's size."""
    files = [_file(tmp_path / "a.parquet", range(0, 100), [3, 64]),
             _file(tmp_path / "b.parquet", range(100, 110), [0])]
    scans = _scans(files, spark)  # AQE's plan shows the scan as run and as planned
    assert len(set(scans)) == 1, scans
    scan = scans[0]
    assert "_tmp_metadata_row_index" in scan
    assert ("file_size" not in scan) == (tested_by == "jvm"), scan
    assert "file_name" not in scan
    assert _read(files, spark) == [i for i in range(110) if i not in (3, 64, 100)]


def test_the_jvm_filter_refuses_a_file_it_was_not_given(tmp_path: Path, spark: Any) -> None:
    """A scan that reads a file the JVM's filter holds no bitmap for fails naming the table
    and the file, rather than keeping the file's rows."""
    from pyspark.sql import functions as F

    from schemalab.engine import deletes

    a = _file(tmp_path / "a.parquet", range(0, 10), [1])
    b = _file(tmp_path / "b.parquet", range(10, 20), [2])
    keep = deletes.jvm_position_filter([a], spark, "db.hostile")
    assert keep is not None
    df = spark.read.schema("id INT, _tmp_metadata_row_index BIGINT").parquet(a.path, b.path)
    df = df.select("id", F.col("_tmp_metadata_row_index").alias(deletes.POS_COL))
    with pytest.raises(Exception, match=r"Reading db.hostile: the scan read \S*b.parquet, "
                                        "which is none of the files"):
        df.where(keep).collect()
    assert sorted(r.id for r in df.where(deletes.jvm_position_filter(
        [a, b], spark, "db.hostile")).collect()) == [i for i in range(20) if i not in (1, 12)]


def test_a_jvm_filter_that_cannot_be_built_leaves_the_expressions(
        tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Where Janino cannot compile the class (here: a source with an error), the session
    has no JVM filter, says so in the log, and reads its deletes by expressions."""
    import logging

    from schemalab.engine import jvm_udfs, kept_rows, session_cache

    broken = "package schemalab.spark; public final class KeptRows { int x = ; }"
    monkeypatch.setattr(jvm_udfs, "_sources", lambda: {"KeptRows": broken})
    monkeypatch.setattr(jvm_udfs, "_ATTR", "_schemalab_jvm_udfs_test")
    session_cache.clear(spark)
    with caplog.at_level(logging.INFO, logger=jvm_udfs.__name__):
        assert not kept_rows.available(spark)
    assert "the JVM class KeptRows is not available" in caplog.text
    files = [_file(tmp_path / "a.parquet", range(0, 10), [4])]
    assert any("file_size" in s for s in _scans(files, spark))
    assert _read(files, spark) == [i for i in range(10) if i != 4]
    delattr(spark.sparkContext, "_schemalab_jvm_udfs_test")
    session_cache.clear(spark)


def test_a_spark_without_the_predicate_s_expression_leaves_the_expressions(
        tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Where this Spark has no Catalyst ``Invoke`` as schemalab calls it (here: a class
    name it does not know), the JVM filter is not available: the log says so, and the
    deletes are read by expressions, with the same rows."""
    import logging

    from schemalab.engine import jvm_udfs, kept_rows, session_cache

    monkeypatch.setattr(jvm_udfs, "_INVOKE", "org.apache.spark.sql.catalyst.NoSuchInvoke")
    monkeypatch.setattr(jvm_udfs, "_INVOKES_ATTR", "_schemalab_jvm_invokes_test")
    session_cache.clear(spark)
    files = [_file(tmp_path / "a.parquet", range(0, 10), [4])]
    with caplog.at_level(logging.INFO, logger=jvm_udfs.__name__):
        assert not kept_rows.available(spark)
        assert any("file_size" in s for s in _scans(files, spark))
    assert caplog.text.count("this Spark builds no Invoke of a predicate") == 1  # probed once
    assert _read(files, spark) == [i for i in range(10) if i != 4]
    delattr(spark.sparkContext, "_schemalab_jvm_invokes_test")
    session_cache.clear(spark)


def test_positions_by_bitmap_and_by_join_agree(tmp_path: Path, spark: Any,
                                               monkeypatch: pytest.MonkeyPatch,
                                               by_expressions: str) -> None:
    """Issue 25: deletes by position are a bitmap test in the scan's own filter (no join);
    past the bitmap's limits they are a broadcast anti-join, which drops the same rows."""
    from schemalab.engine import deletes, session_cache

    files = [_file(tmp_path / "a.parquet", range(0, 130), [0, 63, 64, 129]),
             _file(tmp_path / "b.parquet", range(130, 140)),
             _file(tmp_path / "c.parquet", range(140, 150), [9])]
    kept = [i for i in range(150) if i not in (0, 63, 64, 129, 149)]
    plan = plan_read("t", SCHEMA, files, lambda f: SCHEMA, CastMode.EXPLICIT)
    assert "Join" not in execute(plan, spark)._jdf.queryExecution().executedPlan().toString()
    assert _read(files, spark) == kept
    monkeypatch.setattr(deletes, "BITMAP_FILES", 1)
    session_cache.clear(spark)  # the session keeps the read built above
    assert "Join" in execute(plan, spark)._jdf.queryExecution().executedPlan().toString()
    assert _read(files, spark) == kept


def test_a_position_past_the_end_is_refused(tmp_path: Path, spark: Any,
                                            tested_by: str) -> None:
    """A deletion vector naming row 10 of a 10-row file was made for another file: the read
    is refused, never guessed."""
    files = [_file(tmp_path / "a.parquet", range(10), [2, 10])]
    with pytest.raises(SchemaLabError, match="row 10 of data file a.parquet, which has 10 rows"):
        _read(files, spark)


def _largest_generated_method(df: Any) -> int:
    """The largest method, in bytes of bytecode, of the whole-stage code of ``df``'s plan
    (Spark compiles it as Janino does for the run; HotSpot does not JIT a method past
    8,000 bytes)."""
    jvm = df.sparkSession._jvm
    compile_ = jvm.org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator.compile
    out, todo = 0, [df._jdf.queryExecution().executedPlan()]
    while todo:
        node = todo.pop()
        kind = node.getClass().getSimpleName()
        if kind == "WholeStageCodegenExec":
            out = max(out, compile_(node.doCodeGen()._2())._2().maxMethodCodeSize())
        elif kind == "AdaptiveSparkPlanExec":
            todo.append(node.executedPlan())
        elif kind.endswith("QueryStageExec"):
            todo.append(node.plan())
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return out


def test_positions_of_sixtyfour_files_in_one_small_method(tmp_path: Path, spark: Any,
                                                          by_expressions: str) -> None:
    """Issue 25: 64 files of different sizes (the most one scan's bitmap takes), each losing
    a different row, each lose exactly their own; their files are told apart by a perfect
    hash of the size, whose code does not grow with the files. By a tree of comparisons,
    the scan's generated method grew from 1,500 bytes of bytecode (8 files) to 6,800 (64
    files); past 8,000 HotSpot never compiles it, and a read of 10M rows in one scan of 80
    files ran 7-12x slower."""
    from schemalab.engine import deletes

    files, kept = [], []
    for k in range(deletes.BITMAP_FILES):
        ids = range(k * 100, k * 100 + 10 + k)  # 10 + k rows: every size its own
        files.append(_file(tmp_path / f"f{k}.parquet", ids, [k % 10]))
        kept += [i for j, i in enumerate(ids) if j != k % 10]
    assert len({os.path.getsize(f.path) for f in files}) == len(files)
    method = {}
    for n in (8, len(files)):
        plan = plan_read("t", SCHEMA, files[:n], lambda f: SCHEMA, CastMode.EXPLICIT)
        df = execute(plan, spark)
        assert sorted(r.id for r in df.collect()) == sorted(
            i for i in kept if i < 100 * n), n
        method[n] = _largest_generated_method(df)
    assert 0 < method[len(files)] <= method[8] + 100, method
    scans = _scans(files, spark)  # one scan (AQE's plan shows it as run and as planned)
    assert scans and all("InMemoryFileIndex(64 paths)" in s and "_tmp_metadata_row_index" in s
                         and "file_name" not in s for s in scans), scans


def test_positions_of_a_file_spark_splits_into_several_tasks(tmp_path: Path, spark: Any,
                                                              tested_by: str) -> None:
    """A file of many row groups that Spark reads in several splits (tasks): each row's
    position is its position in the whole file, so every split drops exactly its own
    deleted rows."""
    path = tmp_path / "big.parquet"
    n = 20_000
    pq.write_table(pa.table({"id": pa.array(range(n), pa.int32()),
                             "v": [f"value-{i:08d}" for i in range(n)]}), path,
                   row_group_size=1000, compression="none")
    deleted = [0, 999, 1000, 7777, 15_000, n - 1]
    f = DataFile(str(path), 0, n, deletes=(PositionDeletes(
        "deletion vector", str(path) + ".dv", len(deleted),
        load=lambda: np.array(deleted, np.int64)),))
    old = {k: spark.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes",
                                           "spark.sql.files.openCostInBytes")}
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(os.path.getsize(path) // 5))
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        plan = plan_read("t", SCHEMA, [f], lambda f: SCHEMA, CastMode.EXPLICIT)
        df = execute(plan, spark)
        assert df.rdd.getNumPartitions() >= 4
        assert sorted(r.id for r in df.collect()) == [i for i in range(n) if i not in deleted]
    finally:
        for k, v in old.items():
            spark.conf.set(k, v)


def test_a_spark_that_gives_no_row_position_fails_the_read(
        tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch, tested_by: str) -> None:
    """Rows' positions come from a read-schema column Spark's Parquet reader fills by its
    name; where it stays NULL (a reader that does not know the name: here, another name),
    the read fails naming the table, instead of keeping the deleted rows."""
    from schemalab.engine import deletes, scan, session_cache

    monkeypatch.setattr(deletes, "ROW_INDEX_FIELD", "_not_a_row_index")
    monkeypatch.setattr(scan, "ROW_INDEX_FIELD", "_not_a_row_index")
    session_cache.clear(spark)
    files = [_file(tmp_path / "a.parquet", range(10), [2])]
    # the scan's own check comes first, whichever filter tests the positions
    with pytest.raises(Exception, match="Reading t: Spark's Parquet reader gave no row "
                                        "position"):
        _read(files, spark)


# --------------------------------------------------------------------------------------------
# Iceberg equality deletes on a column the read does not return
# --------------------------------------------------------------------------------------------


@pytest.fixture()
def t25(tmp_path: Path) -> Path:
    with tarfile.open(ICEBERG / "iceberg-java-1.10.2-tables.tar.gz") as tar:
        tar.extractall(tmp_path, members=[m for m in tar.getmembers()
                                          if m.name.startswith("db/t25_")], filter="data")
    return tmp_path / "db" / "t25_equality_deletes"


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_a_table_given_an_unconfigured_session_reads_by_field_id(
        t25: Path, tmp_path: Path, spark: Any, fmt: str) -> None:
    """A table opened with a session of the user's (``open_table(path, spark=...)``, no
    Warehouse) sets the session's SQL settings as a Warehouse does: with Spark's reads by
    field id off (its default), every column read by id was NULL (found on the standalone
    cluster, where only this call had the session)."""
    from schemalab.engine import session_cache

    key = "spark.sql.parquet.fieldId.read.enabled"
    if fmt == "paimon":
        wh = sl.Warehouse(tmp_path / "wh", spark=spark)
        wh.sql("CREATE TABLE p (id INT, v STRING); INSERT INTO p VALUES (1, 'a');"
               "ALTER TABLE p RENAME COLUMN v TO w")
        path, want = tmp_path / "wh" / "default.db" / "p", [(1, "a")]
    else:
        path, want = t25, None
    spark.conf.set(key, "false")
    session_cache.clear(spark)
    try:
        rows = [tuple(r) for r in sl.open_table(path, spark=spark).read().collect()]
        assert spark.conf.get(key) == "true"
    finally:
        spark.conf.set(key, "true")
        session_cache.clear(spark)
    assert rows and all(any(v is not None for v in r) for r in rows), rows
    if want is not None:
        assert rows == want


def _new_current_schema(table: Path, fields: list[dict[str, Any]]) -> None:
    """Edit the table's last metadata file: a new schema of ``fields``, made current."""
    meta = max((table / "metadata").glob("v*.metadata.json"),
               key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(meta.read_text())
    sid = max(s["schema-id"] for s in md["schemas"]) + 1
    md["schemas"].append({"type": "struct", "schema-id": sid, "fields": fields})
    md["current-schema-id"] = sid
    meta.write_text(json.dumps(md))


def test_equality_delete_on_a_dropped_column(t25: Path, spark: Any) -> None:
    """t25's equality delete compares ``id`` (field 1); with ``id`` dropped the delete still
    applies (spec: delete columns are read by id even when the schema lacks them)."""
    _new_current_schema(t25, [{"id": 2, "name": "v", "required": False, "type": "string"}])
    t = sl.open_table(t25)
    assert sorted(r.v for r in t.read().collect()) == ["a", "b-again", "c"]
    after_delete = 2235073523957983227
    rows = t.read(snapshot_id=after_delete, schema="current").collect()
    assert sorted(r.v for r in rows) == ["a", "c"]
    assert t.read(snapshot_id=after_delete, schema="current").columns == ["v"]


def test_equality_delete_on_a_renamed_and_widened_column(t25: Path, spark: Any) -> None:
    _new_current_schema(t25, [{"id": 1, "name": "key", "required": False, "type": "long"},
                              {"id": 2, "name": "v", "required": False, "type": "string"}])
    t = sl.open_table(t25)
    df = t.read()
    assert df.schema.simpleString() == "struct<key:bigint,v:string>"
    assert sorted((r.key, r.v) for r in df.collect()) == [(1, "a"), (2, "b-again"), (3, "c")]


def test_a_copied_table_reads_its_deletes(t25: Path, tmp_path: Path, spark: Any) -> None:
    """Delete files name data files by the paths the writer saw; a moved table matches them
    by those paths, not by where the files are now."""
    moved = tmp_path / "elsewhere" / "t25"
    shutil.copytree(t25, moved)
    shutil.rmtree(t25)
    rows = sl.open_table(moved).read(snapshot_id=2235073523957983227).collect()
    assert sorted(r.id for r in rows) == [1, 3]


# --------------------------------------------------------------------------------------------
# Explanations and trees
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iceberg_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iceberg")
    wanted = ("db/t12_", "db/t14_", "db/t25_")
    with tarfile.open(ICEBERG / "iceberg-java-1.10.2-tables.tar.gz") as tar:
        tar.extractall(root, members=[m for m in tar.getmembers()
                                      if m.name.startswith(wanted)], filter="data")
    return root / "db"


def test_explain_position_deletes(iceberg_tables: Path) -> None:
    t = sl.open_table(iceberg_tables / "t12_mor_delete_update_merge")
    texts = [d.text for d in t.explain_read(943673026140660553).deletes]
    assert texts == [
        "3 rows of 00000-267-dae4fb09-ca41-487a-9c4b-3496f55426ac-0-00001.parquet removed by "
        "position delete file 00000-279-783b1f4a-d3a2-4ddd-b057-e3739a68844d-00001-deletes."
        "parquet (sequence 4 ≥ data sequence 1)",
        "1 row of 00001-268-dae4fb09-ca41-487a-9c4b-3496f55426ac-0-00001.parquet removed by "
        "position delete file 00000-282-01b972db-05b7-48b9-a71c-36c23c42c4ef-00001-deletes."
        "parquet (sequence 5 ≥ data sequence 1)"]
    # after rewrite_data_files the delete file names a data file that is gone: no row of
    # the new file is deleted, and the explanation says why
    (d,) = t.explain_read(3067932803638446208).deletes
    assert (d.rows, d.kind) == (0, "position delete file")
    assert "which is not live in this snapshot" in d.text


def test_explain_deletion_vectors_and_equality_deletes(iceberg_tables: Path) -> None:
    t = sl.open_table(iceberg_tables / "t14_v3_deletion_vectors")
    (d,) = t.explain_read(2763286514262031199).deletes
    assert (d.kind, d.rows) == ("deletion vector", 2)
    assert d.text.startswith("2 rows of 00000-342-") and "removed by deletion vector in " \
        "00000-348-aa5dddb6-fbc9-49a9-96df-2beccde942cd-00001-deletes.puffin" in d.text
    t = sl.open_table(iceberg_tables / "t25_equality_deletes")
    ex = t.explain_read()
    removed = [d for d in ex.deletes if d.rows is None]
    kept = [d for d in ex.deletes if d.rows == 0]
    assert len(removed) == 2 and all(
        "whose (id) equal one of the 1 rows of equality delete file eq-delete-id2.parquet "
        "removed (sequence 2 > data sequence 1)" in d.text for d in removed)
    (k,) = kept  # the re-insert of id 2 is newer than the delete
    assert "kept whatever their (id): written after equality delete file eq-delete-id2." \
        "parquet (sequence 2 ≤ data sequence 3)" in k.text
    assert "deletes\n  rows of " in ex.text() and "<li>rows of " in ex._repr_html_()


def test_trees_show_delete_files_and_what_row_counts_count(iceberg_tables: Path) -> None:
    t = sl.open_table(iceberg_tables / "t14_v3_deletion_vectors")
    h = t.history()
    tree = h.tree(4844337106309000500)
    dvs = [f for ml in tree.lists for m in ml.manifests for f in m.files
           if f.kind.endswith("deletion vector")]
    assert {(f.kind, f.row_count) for f in dvs} == {("ADDED deletion vector", 1),
                                                    ("ADDED deletion vector", 2)}
    assert all(f.target is not None and f.target.endswith(".parquet") for f in dvs)
    assert tree.record_count == 7
    assert tree.record_count_text == ("total-records: rows in the data files, before deletes "
                                      "(3 rows deleted by position not subtracted)")
