"""Rows dropped by Spark's Parquet reader itself (``engine/kept_scan.py``,
``jvm/KeptParquet.java``): every column type moved with its rows, NULLs and dictionaries
too, in batches and in rows, with the key read or pruned by the query — equal to Spark's own
read of the same files filtered by the same keys."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemalab.engine import kept_scan
from schemalab.engine.merge.keyset import KeyBitmap, key_bitmap

ROWS = 10_000  # more than one batch (4,096 rows) and one row group (3,000 rows)


def _table(first: int) -> pa.Table:
    """``ROWS`` rows, keys from ``first``, a column of every type, each NULL in some rows."""
    n = ROWS
    i = [int(j) for j in range(n)]

    def nulls(values: list[Any], every: int) -> list[Any]:
        return [None if j % every == 3 else v for j, v in enumerate(values)]

    utc = dt.UTC
    return pa.table({
        "k": pa.array([first + j for j in i], pa.int32()),
        "b": pa.array(nulls([bool(j % 2) for j in i], 7)),
        "t": pa.array(nulls([int(j % 100) for j in i], 11), pa.int8()),
        "s": pa.array(nulls([int(j % 30000) for j in i], 13), pa.int16()),
        "n": pa.array(nulls([int(j) for j in i], 5), pa.int32()),
        "l": pa.array(nulls([int(j) * 10**9 for j in i], 6), pa.int64()),
        "f": pa.array(nulls([j / 4 for j in i], 8), pa.float32()),
        "d": pa.array(nulls([j / 3 for j in i], 9), pa.float64()),
        "d9": pa.array(nulls([decimal.Decimal(j) / 100 for j in i], 7), pa.decimal128(5, 2)),
        "d18": pa.array(nulls([decimal.Decimal(j * 10**9) / 100 for j in i], 7),
                        pa.decimal128(15, 2)),
        "d38": pa.array(nulls([decimal.Decimal(j * 10**20) / 100 for j in i], 7),
                        pa.decimal128(30, 2)),
        # few distinct values: written with a dictionary, which Spark's reader keeps
        "low": pa.array(nulls([f"v{j % 5}" for j in i], 4)),
        "high": pa.array(nulls([f"row-{j}-" + "x" * int(j % 17) for j in i], 10)),
        "bin": pa.array(nulls([bytes([j % 256]) * int(j % 5) for j in i], 12), pa.binary()),
        "day": pa.array(nulls([dt.date(2020, 1, 1) + dt.timedelta(days=int(j)) for j in i],
                              6)),
        "ts": pa.array(nulls([dt.datetime(2021, 1, 1, tzinfo=utc)
                              + dt.timedelta(seconds=int(j)) for j in i], 6),
                       pa.timestamp("us", tz="UTC")),
        "ntz": pa.array(nulls([dt.datetime(2021, 1, 1) + dt.timedelta(minutes=int(j))
                               for j in i], 9), pa.timestamp("us")),
        "arr": pa.array(nulls([list(range(int(j % 4))) for j in i], 5), pa.list_(pa.int32())),
        "map": pa.array(nulls([[(f"a{j}", int(j))] * int(j % 3) for j in i], 7),
                        pa.map_(pa.string(), pa.int32())),
        "st": pa.array(nulls([{"x": int(j), "y": None if j % 3 == 0 else f"y{j}"}
                              for j in i], 8),
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
    })


def _files(tmp_path: Path) -> str:
    folder = tmp_path / "files"
    folder.mkdir()
    for f, first in enumerate((-500, ROWS)):  # keys either side of zero, then past them
        pq.write_table(_table(first), folder / f"f{f}.parquet", row_group_size=3000)
    return str(folder)


def _held() -> tuple[KeyBitmap, list[int]]:
    """Keys across both files, at 64-bit word edges, and runs of them (a whole batch's
    worth in one place)."""
    held = sorted({*range(-500, 2 * ROWS, 7), *range(-64, 64), *range(5000, 9200),
                   2 * ROWS - 500 - 1})
    bitmap = key_bitmap("k", np.array(held, np.int64))
    assert bitmap is not None
    return bitmap, held


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


@pytest.fixture(params=["batches", "rows", "rows-of-batches"])
def vectorized(request: pytest.FixtureRequest, spark: Any) -> Any:
    """Each test with Spark's vectorized reader giving batches, without it (rows), and
    giving rows of its batches (no whole-stage code: the scan then takes rows)."""
    key = ("spark.sql.codegen.wholeStage" if request.param == "rows-of-batches"
           else "spark.sql.parquet.enableVectorizedReader")
    spark.conf.set(key, str(request.param == "batches").lower())
    try:
        yield request.param
    finally:
        spark.conf.unset(key)


def test_the_reader_drops_the_held_keys_rows_from_every_column(spark: Any, tmp_path: Path,
                                                               vectorized: str) -> None:
    path = _files(tmp_path)
    bitmap, held = _held()
    df = spark.read.parquet(path)
    kept = kept_scan.without_held(df, "k", bitmap, spark, "t")
    assert kept is not None
    assert kept.columns == df.columns
    plan = kept._jdf.queryExecution().executedPlan().toString()
    assert kept_scan.FORMAT_NAME in plan and "Filter " not in plan, plan
    assert ("ColumnarToRow" in plan) == (vectorized == "batches"), plan
    expected = df.where(~df.k.isin(held))
    want = _rows(expected)
    keys = [*range(-500, ROWS - 500), *range(ROWS, 2 * ROWS)]
    assert len(want) == len(set(keys) - set(held)) > 0
    assert _rows(kept) == want
    # the key pruned by the query: read all the same, and dropped after the test
    assert kept.count() == len(want)
    assert _rows(kept.select("low", "st")) == _rows(expected.select("low", "st"))
    assert _rows(kept.where(kept.n > 4000).select("d38")) == \
        _rows(expected.where(expected.n > 4000).select("d38"))


@pytest.mark.parametrize("key", [pa.int8(), pa.int16(), pa.int64()])
def test_keys_of_any_integer_width(spark: Any, tmp_path: Path, key: pa.DataType) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    values = list(range(-100, 100))
    pq.write_table(pa.table({"k": pa.array(values, key), "v": [str(v) for v in values]}),
                   folder / "f.parquet")
    held = [-100, -65, -64, -1, 0, 1, 63, 64, 99]
    bitmap = key_bitmap("k", np.array(held, np.int64))
    assert bitmap is not None
    kept = kept_scan.without_held(spark.read.parquet(str(folder)), "k", bitmap, spark, "t")
    assert kept is not None
    assert sorted(r.k for r in kept.collect()) == [v for v in values if v not in held]


def test_a_row_without_a_key_fails_the_read_naming_the_table(spark: Any, tmp_path: Path,
                                                             vectorized: str) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    pq.write_table(pa.table({"k": pa.array([1, None, 3], pa.int32()), "v": ["a", "b", "c"]}),
                   folder / "f.parquet")
    bitmap = key_bitmap("k", np.array([3], np.int64))
    assert bitmap is not None
    kept = kept_scan.without_held(spark.read.parquet(str(folder)), "k", bitmap, spark,
                                  "db.orders")
    assert kept is not None
    with pytest.raises(Exception, match=r"Reading db\.orders: a row of .*f\.parquet has no "
                                        r"key \(NULL\)"):
        kept.select("v").collect()


def test_where_the_reader_does_not_apply_the_caller_filters(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    table = pa.table({"k": pa.array([1, 2], pa.int32()), "s": ["a", "b"]})
    pq.write_table(table, folder / "f.parquet")
    bitmap = key_bitmap("k", np.array([1], np.int64))
    assert bitmap is not None
    df = spark.read.parquet(str(folder))
    assert kept_scan.without_held(df, "s", bitmap, spark, "t") is None  # not an integer
    assert kept_scan.without_held(df, "nope", bitmap, spark, "t") is None
    # a frame that is more than a scan (here a projection of one)
    assert kept_scan.without_held(df.select("k"), "k", bitmap, spark, "t") is None
    # another format's scan
    import pyarrow.orc as orc

    orc.write_table(table, str(tmp_path / "f.orc"))
    assert kept_scan.without_held(spark.read.orc(str(tmp_path / "f.orc")), "k", bitmap,
                                  spark, "t") is None


def test_without_schemalab_s_jvm_classes_the_caller_filters(spark: Any, tmp_path: Path,
                                                            by_expressions: str) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int32())}), folder / "f.parquet")
    bitmap = key_bitmap("k", np.array([1], np.int64))
    assert bitmap is not None
    assert kept_scan.without_held(spark.read.parquet(str(folder)), "k", bitmap, spark,
                                  "t") is None


@pytest.mark.parametrize("scan", ["spark", "not-applicable"])
def test_a_merge_drops_base_rows_in_the_reader_where_it_applies(
        spark: Any, tmp_path: Path, scan: str, tested_by: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A deduplicate table whose newer files share no key (``newest`` buckets): the base's
    rows whose key a newer file holds are dropped by the reader (a scan by Spark's Parquet
    reader, the JVM classes there), else by the bitmap's filter — where the reader does not
    apply to the scan; the same rows either way, in every query."""
    import schemalab as sl
    from schemalab.engine import session_cache
    from schemalab.engine.merge.keyed_read import merge_input, merge_read, plans_of

    if scan == "not-applicable":
        monkeypatch.setattr(kept_scan, "without_held", lambda *a, **k: None)
    session_cache.clear(spark)
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE t (id INT NOT NULL, v STRING, n INT, PRIMARY KEY (id) NOT ENFORCED) "
           "TBLPROPERTIES ('bucket' = '2')")
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'old{i}', {i})" for i in range(300)))
    wh.sql("ALTER TABLE t RENAME COLUMN v TO w; ALTER TABLE t ALTER COLUMN n TYPE BIGINT")
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'new{i}', {-i})"
                                               for i in range(0, 300, 7)))
    t = wh.table("t")
    plan = t.read_plan()
    assert {p.strategy for p in plans_of(plan, merge_input(plan).opts)} == {"newest"}
    df = t.read()
    text = df._jdf.queryExecution().executedPlan().toString()
    by_reader = scan == "spark" and tested_by == "jvm"
    assert (kept_scan.FORMAT_NAME in text) == by_reader, text
    assert ("__sl_words" in text) == (not by_reader), text
    want = sorted((i, f"new{i}", -i) if i % 7 == 0 else (i, f"old{i}", i) for i in range(300))
    assert sorted(tuple(r) for r in df.collect()) == want
    assert sorted(tuple(r) for r in merge_read(plan, spark, how="shuffle").collect()) == want
    assert df.select("w").count() == 300 and df.where(df.n < 0).count() == len(range(7, 300, 7))


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_orc_and_avro_files_are_filtered(spark: Any, tmp_path: Path, fmt: str) -> None:
    """pypaimon 2.1's primary-key tables in ORC (Spark's ORC reader) and Avro (read on the
    driver): the base's rows whose key a newer file holds are dropped by the bitmap's
    filter, as pypaimon reads them."""
    from pypaimon import CatalogFactory, Schema
    from pypaimon.schema.data_types import AtomicType, DataField

    import schemalab as sl

    cat = CatalogFactory.create({"warehouse": str(tmp_path)})
    cat.create_database("default", True)
    cat.create_table("default.t", Schema(
        fields=[DataField(0, "id", AtomicType("INT", nullable=False)),
                DataField(1, "v", AtomicType("STRING"))],
        primary_keys=["id"], options={"bucket": "2", "file.format": fmt}), False)

    def write(ids: list[int], prefix: str) -> None:
        wb = cat.get_table("default.t").new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.table({"id": pa.array(ids, pa.int32()),
                                "v": [f"{prefix}{i}" for i in ids]},
                               schema=pa.schema([pa.field("id", pa.int32(), False),
                                                 ("v", pa.string())])))
        c.commit(w.prepare_commit())
        w.close()

    write(list(range(100)), "old")
    write(list(range(0, 100, 7)), "new")
    rb = cat.get_table("default.t").new_read_builder()
    theirs = sorted(tuple(r.values()) for r in rb.new_read().to_arrow(
        rb.new_scan().plan().splits()).to_pylist())
    assert theirs == sorted((i, f"new{i}" if i % 7 == 0 else f"old{i}") for i in range(100))
    t = sl.open_table(tmp_path / "default.db" / "t", spark=spark)
    df = t.read()
    text = df._jdf.queryExecution().executedPlan().toString()
    assert kept_scan.FORMAT_NAME not in text and "__sl_words" in text, text
    assert sorted(tuple(r) for r in df.collect()) == theirs
