"""A session keeps the reads it built (``schemalab.engine.session_cache``): the same plan
under the same settings gets the same DataFrame, and nothing a user can change goes
unseen — a commit, a setting, a file gone missing, a read too large to keep."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.engine import session_cache
from schemalab.errors import CorruptFileError


@pytest.fixture()
def fresh(spark: Any) -> Iterator[Any]:
    """The shared session with nothing kept, before and after."""
    session_cache.clear(spark)
    yield spark
    session_cache.clear(spark)


def _keyed(wh: sl.Warehouse) -> sl.Table:
    """A primary-key table whose read merges (a bitmap of the newer keys on the driver)."""
    wh.sql("""CREATE TABLE k (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)
              TBLPROPERTIES ('bucket' = '1');
              INSERT INTO k VALUES (1, 'a'), (2, 'b'), (3, 'c');
              INSERT INTO k VALUES (2, 'B')""")
    return wh.table("k")


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def test_the_same_read_is_built_once(fresh: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=fresh)
    t = _keyed(wh)
    first = t.read()
    assert _rows(first) == [(1, "a"), (2, "B"), (3, "c")]
    assert t.read() is first
    assert wh.table("k").read() is first, "another table object, the same plan"
    assert t.read(snapshot_id=1) is not first
    # what it keeps alive is charged: the newer keys' bitmap, beyond the entry's own count
    assert session_cache.session_cache(fresh).reads.size > 2 * session_cache.READ_OVERHEAD


def test_a_commit_is_read(fresh: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=fresh)
    t = _keyed(wh)
    before = t.read()
    wh.sql("INSERT INTO k VALUES (3, 'C'), (4, 'd')")
    assert _rows(t.read()) == [(1, "a"), (2, "B"), (3, "C"), (4, "d")]
    assert t.read(snapshot_id=2) is before
    assert _rows(t.read(snapshot_id=2)) == [(1, "a"), (2, "B"), (3, "c")]


def test_a_setting_changed_builds_again(fresh: Any, tmp_path: Path) -> None:
    """A cast's result depends on the session's time zone and ANSI mode, which Spark fixes
    when the read is built: a read built under other settings is not reused."""
    t, tokyo = built_again_under_another_zone(sl.Warehouse(tmp_path, spark=fresh))
    zone = fresh.conf.get("spark.sql.session.timeZone")
    try:
        fresh.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
        session_cache.clear(fresh)
        again = t.read()
        assert _rows(again) == _rows(tokyo), "a fresh build under the same setting"
        assert t.read() is again
        fresh.conf.set("spark.sql.session.timeZone", "UTC")
        assert t.read() is not again
    finally:
        fresh.conf.set("spark.sql.session.timeZone", zone)


def built_again_under_another_zone(wh: sl.Warehouse) -> tuple[sl.Table, Any]:
    """A read kept under UTC, then built again under Asia/Tokyo with other values (a
    TIMESTAMP_LTZ column retyped to STRING): the table and the Tokyo read. The session's
    zone is restored. Also run on a cluster and over Spark Connect
    (``test_where_tables_live.py``)."""
    spark = wh.spark
    wh.sql("""CREATE TABLE z (id INT, ts TIMESTAMP_LTZ);
              INSERT INTO z VALUES (1, TIMESTAMP '2026-01-01 12:00:00');
              ALTER TABLE z ALTER COLUMN ts TYPE STRING""")
    t = wh.table("z")
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        utc = t.read()
        assert t.read() is utc
        # collected under its own setting: over Spark Connect a plan is analysed (its
        # casts' time zone fixed) when it runs, over classic Spark when it is built
        at_utc = _rows(utc)
        spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
        tokyo = t.read()
        assert tokyo is not utc
        assert _rows(tokyo) != at_utc
        return t, tokyo
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


@pytest.mark.parametrize("fmt", ["paimon", "iceberg"])
def test_a_missing_file_is_refused_after_a_kept_read(fresh: Any, tmp_path: Path,
                                                     fmt: str) -> None:
    """Planning runs before the kept read is used, and checks every data file on both
    formats: a file deleted behind the table's back is named with the table, as on a first
    read, not met as a Spark error when the query runs."""
    wh = sl.Warehouse(tmp_path / "wh", spark=fresh, format=fmt)
    wh.sql("CREATE TABLE t (id INT, s STRING); INSERT INTO t VALUES (1, 'a'); "
           "INSERT INTO t VALUES (2, 'b')")
    t = wh.table("t")
    assert _rows(t.read()) == [(1, "a"), (2, "b")]
    gone = t.read_plan().files[0].path
    os.remove(gone)
    with pytest.raises(CorruptFileError, match=r"data file does not exist.*table") as e:
        t.read()
    assert gone in str(e.value)


def test_a_read_holding_much_driver_data_is_not_kept(fresh: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    wh = sl.Warehouse(tmp_path, spark=fresh)
    t = _keyed(wh)
    monkeypatch.setattr(session_cache, "MAX_READ_BYTES", 0)
    assert t.read() is not t.read()
    assert _rows(t.read()) == [(1, "a"), (2, "B"), (3, "c")]
    # an append table's read holds none of the driver's data: kept under any bound
    wh.sql("CREATE TABLE a (id INT); INSERT INTO a VALUES (1)")
    a = wh.table("a")
    assert a.read() is a.read()


def test_kept_reads_are_bounded_by_their_count_and_bytes(fresh: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=fresh)
    wh.sql("CREATE TABLE a (id INT); INSERT INTO a VALUES (1); INSERT INTO a VALUES (2)")
    a = wh.table("a")
    reads = session_cache.session_cache(fresh).reads
    limit = reads.limit
    try:
        reads.limit = session_cache.READ_OVERHEAD  # room for one read without data
        one = a.read(snapshot_id=1)
        assert a.read(snapshot_id=1) is one
        two = a.read(snapshot_id=2)
        assert a.read(snapshot_id=2) is two
        assert a.read(snapshot_id=1) is not one, "the least recently used was dropped"
    finally:
        reads.limit = limit


def test_values_the_cache_drops_are_released() -> None:
    """A value pushed out (or replaced, too large to keep, or cleared) is handed to
    ``on_drop``, so what it holds elsewhere (a frame Spark caches) is let go."""
    from schemalab.engine.lru import SizedLru

    dropped: list[str] = []
    c = SizedLru(5, len, dropped.append)
    c.put("a", "xxx")
    c.put("b", "yy")
    c.put("c", "zz")  # past 5: the least recently used goes
    assert dropped == ["xxx"] and c.get("a") is None
    c.put("b", "YY")  # replaced
    c.put("d", "dddddd")  # larger than the whole cache: not kept
    assert dropped == ["xxx", "yy", "dddddd"]
    c.clear()
    assert sorted(dropped[3:]) == ["YY", "zz"] and c.size == 0
