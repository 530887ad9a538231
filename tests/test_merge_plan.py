"""The merge read's plan per bucket (``engine/merge/runs.py``): which files a bucket's rows
can pass through unmerged, from the manifests' key ranges and sequence numbers, and the reads
each strategy gives — equal to the rows every version of every key merged the plain way
(``how="shuffle"``) and to the rows written."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.engine import kept_scan, session_cache
from schemalab.engine.lru import SizedLru
from schemalab.engine.merge import lookup
from schemalab.engine.merge.keyed_read import merge_input, merge_read, plans_of
from schemalab.engine.merge.runs import PAIR_FILE_BYTES, bucket_plans, limit_broadcast
from schemalab.engine.plan import DataFile


def _file(name: str, lo: int, hi: int, keys: tuple[int, int] | None, *, level: int = 0,
          rows: int = 10) -> DataFile:
    return DataFile(name, 0, rows, level=level, min_sequence_number=lo, max_sequence_number=hi,
                    key_range=None if keys is None else ((keys[0],), (keys[1],)))


def _names(files: Any) -> list[str]:
    return sorted(f.path for f in files)


def test_files_sharing_no_key_are_one_base_and_newer_files_the_rest() -> None:
    a, b = _file("a", 0, 9, (0, 9)), _file("b", 10, 19, (10, 19))
    c, d = _file("c", 20, 21, (3, 15), rows=2), _file("d", 22, 23, (20, 30), rows=2)
    [p] = bucket_plans([a, b, c, d], "deduplicate", sequence_fields=())
    assert (p.strategy, _names(p.base), _names(p.rest), p.rest_disjoint) == (
        "newest", ["a", "b"], ["c", "d"], True)
    e = _file("e", 24, 24, (5, 5), rows=1)  # shares key 5 with c: the rest is not disjoint
    [p] = bucket_plans([a, b, c, d, e], "deduplicate", sequence_fields=())
    assert (p.strategy, _names(p.base), p.rest_disjoint) == ("newest", ["a", "b"], False)
    # every file shares no key with any other: nothing to merge
    [p] = bucket_plans([a, b, d], "deduplicate", sequence_fields=())
    assert p.strategy == "single"


def test_a_base_must_be_older_than_every_other_file() -> None:
    # b's keys overlap nothing, but c (older than b) shares keys with a: the oldest files
    # sharing no key are a alone, and b is in the rest
    a, c = _file("a", 0, 9, (0, 9)), _file("c", 10, 11, (2, 3), rows=2)
    b = _file("b", 12, 21, (10, 19))
    [p] = bucket_plans([a, b, c], "deduplicate", sequence_fields=())
    assert (p.strategy, _names(p.base), _names(p.rest)) == ("newest", ["a"], ["b", "c"])
    # y is newer than x's oldest rows but older than its newest: no oldest base, so the
    # largest files sharing no key are the base and y's keys are merged
    x, y = _file("x", 0, 9, (0, 9)), _file("y", 5, 6, (3, 4), rows=2)
    z = _file("z", 10, 19, (10, 19))
    for fields in ((), ("ts",)):
        [p] = bucket_plans([x, y, z], "deduplicate", sequence_fields=fields)
        assert (p.strategy, _names(p.base), _names(p.rest)) == ("split", ["x", "z"], ["y"])


def test_without_key_ranges_only_levels_are_runs() -> None:
    top = [_file(f"t{i}", i * 10, i * 10 + 9, None, level=5) for i in range(3)]
    new = _file("n", 100, 100, None, rows=1)
    [p] = bucket_plans([*top, new], "deduplicate", sequence_fields=())
    assert (p.strategy, _names(p.base), p.rest_disjoint) == (
        "newest", ["t0", "t1", "t2"], True)
    [p] = bucket_plans([*top, new], "partial-update", sequence_fields=())
    assert (p.strategy, _names(p.base)) == ("pair", ["t0", "t1", "t2"])
    [p] = bucket_plans([_file("a", 0, 9, None), _file("b", 10, 19, None)], "partial-update",
                       sequence_fields=())
    assert p.strategy == "pair" and len(p.base) == 1
    # with a sequence.field the base's versions need not be older: the keys are merged
    [p] = bucket_plans([_file("a", 0, 9, None), _file("b", 10, 19, None)], "partial-update",
                       sequence_fields=("ts",))
    assert p.strategy == "split" and len(p.base) == 1
    # past the broadcast limits, pairs merge as split and then the buckets in full
    [q] = limit_broadcast(bucket_plans([_file("a", 0, 9, None), _file("b", 10, 19, None)],
                                       "aggregation", sequence_fields=()), pair_rows=5)
    assert (q.strategy, len(q.base)) == ("split", 1)
    wide = dataclasses.replace(_file("b", 10, 19, None), file_size=PAIR_FILE_BYTES + 1)
    [q] = limit_broadcast(bucket_plans([_file("a", 0, 9, None), wide], "aggregation",
                                       sequence_fields=()))
    assert (q.strategy, len(q.base)) == ("split", 1)  # too many bytes of files to broadcast
    assert [q.strategy for q in limit_broadcast([p], broadcast_rows=5)] == ["full"]


def test_a_fold_pairs_a_key_s_two_versions_only_where_newer_files_share_no_key() -> None:
    a, b = _file("a", 0, 9, (0, 9)), _file("b", 10, 19, (10, 19))
    c, d = _file("c", 20, 21, (3, 15), rows=2), _file("d", 22, 23, (20, 30), rows=2)
    for engine in ("partial-update", "aggregation"):
        [p] = bucket_plans([a, b, c, d], engine, sequence_fields=())
        assert (p.strategy, _names(p.base), _names(p.rest)) == ("pair", ["a", "b"], ["c", "d"])
        # e shares key 5 with c: a key may have three versions
        [p] = bucket_plans([a, b, c, d, _file("e", 24, 24, (5, 5), rows=1)], engine,
                           sequence_fields=())
        assert p.strategy == "split"
    # more rows outside the oldest base than in it: not broadcast; the largest file is the
    # base of a split instead
    big = _file("big", 30, 59, (0, 29), rows=30)
    [p] = bucket_plans([a, b, big], "partial-update", sequence_fields=())
    assert (p.strategy, _names(p.base)) == ("split", ["big"])
    [p] = bucket_plans([a, b, c], "first-row", sequence_fields=())
    assert p.strategy == "split"  # first-row is no fold


def _rows(df: Any) -> dict[int, tuple[Any, ...]]:
    return {r[0]: tuple(r[1:]) for r in df.collect()}


@pytest.mark.parametrize("options", ["", ", 'ignore-delete' = 'true'"])
def test_deduplicate_reads_of_each_plan_equal_the_full_merge(spark: Any, tmp_path: Path,
                                                              options: str) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    for name in ("d", "o"):  # d: the newer files share no key; o: they do
        wh.sql(f"CREATE TABLE {name} (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)"
               f" TBLPROPERTIES ('bucket' = '1'{options});"
               f"INSERT INTO {name} VALUES (1, 'a1'), (2, 'a2'), (3, 'a3'), (4, 'a4');"
               f"INSERT INTO {name} VALUES (6, 'b6'), (7, 'b7'), (8, 'b8');"
               f"ALTER TABLE {name} RENAME COLUMN v TO w;"
               f"INSERT INTO {name} VALUES (3, 'c3'), (7, 'c7')")
    wh.sql("DELETE FROM d WHERE id = 8")
    wh.sql("INSERT INTO o VALUES (7, 'd7'), (9, 'd9'); DELETE FROM o WHERE id = 3")
    kept = {} if options else None
    expected = {
        "d": {1: ("a1",), 2: ("a2",), 3: ("c3",), 4: ("a4",), 6: ("b6",), 7: ("c7",),
              **({8: ("b8",)} if kept is not None else {})},
        "o": {1: ("a1",), 2: ("a2",), **({3: ("c3",)} if kept is not None else {}),
              4: ("a4",), 6: ("b6",), 7: ("d7",), 8: ("b8",), 9: ("d9",)},
    }
    for name, disjoint in (("d", True), ("o", False)):
        t = wh.table(name)
        plan = t.read_plan()
        [p] = plans_of(plan, merge_input(plan).opts)
        if not disjoint and options:  # no -D written: every file's superseded rows dropped
            assert p.strategy == "superseded", name
        else:
            assert (p.strategy, len(p.base), p.rest_disjoint) == ("newest", 2, disjoint), name
        assert _rows(t.read()) == expected[name], name
        assert _rows(merge_read(plan, spark, how="shuffle")) == expected[name], name


def test_partial_update_passes_keys_of_one_file_through_and_merges_the_others(
        spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE p (id INT NOT NULL, a STRING, b STRING, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES (1, 'a1', NULL), (2, 'a2', NULL), (3, 'a3', 'b3');
        INSERT INTO p VALUES (5, 'a5', NULL), (6, NULL, 'b6');
        INSERT INTO p VALUES (2, NULL, 'x2'), (6, 'x6', NULL), (7, 'x7', NULL)""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert (p.strategy, len(p.base)) == ("pair", 2)
    expected = {1: ("a1", None), 2: ("a2", "x2"), 3: ("a3", "b3"), 5: ("a5", None),
                6: ("x6", "b6"), 7: ("x7", None)}
    df = t.read()
    plan_text = df._jdf.queryExecution().executedPlan().toString()
    # the newer version looked up by the key's rank, in arrays: no join
    assert "__sl_rank" in plan_text and "Join" not in plan_text
    assert "Exchange hashpartitioning" not in plan_text and "Sort [" not in plan_text
    assert _rows(df) == expected
    assert _rows(merge_read(plan, spark, how="shuffle")) == expected
    # a fourth version of key 6: the newer files share a key, so the base splits
    wh.sql("INSERT INTO p VALUES (6, NULL, 'y6')")
    plan = wh.table("p").read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert (p.strategy, len(p.base)) == ("split", 2)
    expected[6] = ("x6", "y6")
    assert _rows(wh.table("p").read()) == expected
    assert _rows(merge_read(plan, spark, how="shuffle")) == expected


@pytest.mark.parametrize(("engine", "options"), [
    ("partial-update", ""),
    ("partial-update", ", 'ignore-delete' = 'true'"),
    ("partial-update", ", 'partial-update.remove-record-on-delete' = 'true'"),
    ("partial-update", ", 'fields.ts.sequence-group' = 'a,b'"),
    ("aggregation", ", 'fields.a.aggregate-function' = 'listagg', "
                    "'fields.b.aggregate-function' = 'max', "
                    "'fields.ts.aggregate-function' = 'sum'"),
    ("aggregation", ", 'fields.b.aggregate-function' = 'sum', "
                    "'fields.ts.aggregate-function' = 'sum', 'fields.a.ignore-retract' = 'true'"),
])
def test_paired_versions_fold_as_every_version_merged(spark: Any, tmp_path: Path, engine: str,
                                                      options: str) -> None:
    """Base rows alone, paired with a newer version (after a rename and a widening), a newer
    version alone, -D versions of base keys: the pair read equals every version of every
    key folded together (``how="shuffle"``), or fails as that does."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"""
        CREATE TABLE p (id BIGINT NOT NULL, a STRING, b INT, ts INT,
                        PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = '{engine}'{options});
        INSERT INTO p VALUES (1, 'a1', 1, 1), (2, 'a2', NULL, 1), (3, NULL, 3, 1), (4, 'a4', 4, 1);
        ALTER TABLE p RENAME COLUMN a TO aa;
        ALTER TABLE p ALTER COLUMN b TYPE BIGINT;
        INSERT INTO p VALUES (2, NULL, 20, 2), (3, 'x3', NULL, 0), (9, 'x9', 9, 2)""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    assert _rows(t.read()) == _rows(merge_read(plan, spark, how="shuffle"))
    # newer files that retract base keys beside a file of new keys (their key ranges apart,
    # so still a pair): the engine's rule for a -D meeting an older version, or its refusal
    wh.sql(f"""
        CREATE TABLE q (id BIGINT NOT NULL, a STRING, b INT, ts INT,
                        PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = '{engine}'{options});
        INSERT INTO q VALUES (1, 'a1', 1, 1), (2, 'a2', NULL, 1), (3, NULL, 3, 1),
                             (4, 'a4', 4, 1), (5, 'a5', 5, 1), (6, 'a6', 6, 1);
        ALTER TABLE q ALTER COLUMN b TYPE BIGINT;
        INSERT INTO q VALUES (20, 'x20', 20, 2), (21, NULL, 21, 2);
        DELETE FROM q WHERE id IN (2, 5)""")
    plan = wh.table("q").read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    # ignore-delete: the DELETE wrote nothing, so no two files share a key
    assert p.strategy == ("single" if "ignore-delete" in options else "pair")
    try:
        expected = _rows(merge_read(plan, spark, how="shuffle"))
    except Exception as e:  # noqa: BLE001 - the engine refuses; the pair read must too
        with pytest.raises(type(e), match="delete|retract"):
            _rows(wh.table("q").read())
        return
    assert _rows(wh.table("q").read()) == expected
    # a writer that records no -U/-D count (None): the retractions are still dropped
    unrecorded = plan.map_files(lambda f: dataclasses.replace(f, delete_row_count=None))
    assert _rows(merge_read(unrecorded, spark)) == expected


@pytest.mark.parametrize(("engine", "options"), [
    ("partial-update", ""),
    ("aggregation", ", 'fields.b.aggregate-function' = 'sum'"),
])
def test_a_narrow_query_of_pairs_reads_only_its_columns(spark: Any, tmp_path: Path,
                                                        engine: str, options: str,
                                                        tested_by: str) -> None:
    """Issue 25: a query of two columns of a ``pair`` merge (no -U/-D anywhere) reads the
    key and those columns from the files, and looks up the newer version of those columns
    only (each result column is folded on its own; in the JVM or in arrays), and reads what
    every version merged does."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"""
        CREATE TABLE p (id BIGINT NOT NULL, a STRING, b INT, ts INT,
                        PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = '{engine}'{options});
        INSERT INTO p VALUES (1, 'a1', 1, 1), (2, 'a2', NULL, 1), (3, NULL, 3, 1), (4, 'a4', 4, 1);
        ALTER TABLE p ALTER COLUMN b TYPE BIGINT;
        INSERT INTO p VALUES (2, NULL, 20, 2), (3, 'x3', NULL, 0), (9, 'x9', 9, 2)""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    query = t.read().select("id", "b")
    plan_text = query._jdf.queryExecution().executedPlan().toString()
    scans = re.findall(r"ReadSchema: (struct<[^\n]*)", plan_text)
    # the base, and the newer file's key the base lacks (9); the newer versions are arrays
    assert len(scans) == 2, scans
    for scan in scans:  # fields by id: id 0, a 1, b 2, ts 3
        assert "_sl_f0:" in scan and "_sl_f2:" in scan, scan
        assert "_sl_f1:" not in scan and "_sl_f3:" not in scan, scan
    # one column looked up: b's (the fold of b reads no other field of the newer version)
    arrays = set(re.findall(r"LocalTableScan \[(__sl_v\d+)", plan_text))
    lookups = plan_text.count(lookup.UDF_NAME + "(")
    assert (len(arrays), lookups) == ((0, 1) if tested_by == "jvm" else (1, 0)), plan_text
    expected = merge_read(plan, spark, how="shuffle").select("id", "b")
    assert sorted(query.collect()) == sorted(expected.collect())
    assert _rows(t.read()) == _rows(merge_read(plan, spark, how="shuffle"))
    # a filter on the key reaches the base's Parquet filters (row groups skipped by their
    # statistics): the key is the same in both versions, so the fold passes it through
    point = t.read().where("id = 2")
    assert "EqualTo(_sl_f0,2)" in point._jdf.queryExecution().executedPlan().toString()
    assert _rows(point) == {2: _rows(merge_read(plan, spark, how="shuffle"))[2]}


@pytest.mark.parametrize("wide", [False, True])
def test_pair_lookups_return_every_atomic_type_as_it_is(spark: Any, tmp_path: Path,
                                                        tested_by: str, wide: bool) -> None:
    """Issue 25: the newer versions of a ``pair`` merge go to Spark through Arrow on the
    driver, then into the JVM's ``NewerValues`` (``jvm``) or into arrays (``expressions``;
    in the JVM too where a decimal is ``wide``, past 18 digits): every atomic type comes
    back exactly as every version merged reads it, NaN, -0.0, NULL, the decimal's scale and
    the timestamp's microseconds included."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    m = "DECIMAL(20, 3)" if wide else "DECIMAL(18, 3)"
    cols = (f"b BOOLEAN, t TINYINT, s SMALLINT, i INT, f FLOAT, d DOUBLE, m {m}, "
            "dt DATE, ts TIMESTAMP, tz TIMESTAMP_LTZ, bin BINARY, u STRING")
    wh.sql(f"""
        CREATE TABLE p (id INT NOT NULL, {cols}, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update')""")
    wh.sql("INSERT INTO p VALUES " + ", ".join(
        f"({i}, true, 1, 2, 3, 1.5, 2.5, 1.125, DATE '2020-01-01', "
        f"TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP '2020-01-01 00:00:00', X'00', 'old{i}')"
        for i in range(8)))
    big = "12345678901234567.891" if wide else "-999999999999999.999"
    wh.sql(f"""INSERT INTO p VALUES
        (1, false, -128, -32768, -2147483648, CAST('NaN' AS FLOAT), -0.0, {big},
         DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.999999',
         TIMESTAMP '2262-04-11 23:47:16.854775', X'FF00', 'ünï'),
        (4, NULL, NULL, NULL, NULL, NULL, CAST('-Infinity' AS DOUBLE), -0.001, NULL, NULL,
         NULL, NULL, ''),
        (6, true, 127, 32767, 2147483647, -0.0, 1e308, 999999999999999.999,
         DATE '0001-01-01', TIMESTAMP '1000-01-01 00:00:00.000001',
         TIMESTAMP '1900-01-01 00:00:00.5',
         X'', 'x')""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    df = t.read()
    plan_text = df._jdf.queryExecution().executedPlan().toString()
    assert "__sl_rank" in plan_text and "Join" not in plan_text
    in_jvm = tested_by == "jvm" and not wide
    assert (lookup.UDF_NAME in plan_text) == in_jvm, plan_text
    assert ("__sl_v" in plan_text) != in_jvm, plan_text  # the arrays, in subqueries
    expected = merge_read(plan, spark, how="shuffle")
    assert sorted(map(repr, df.collect())) == sorted(map(repr, expected.collect()))
    assert repr(_rows(df)[1]).count("nan") == 1  # the NaN came back a NaN


def test_newer_values_go_to_the_jvm_only_as_it_holds_them_exactly() -> None:
    """``NewerValues`` holds a decimal as its unscaled LONG (18 digits at most) and a
    timestamp as microseconds; anything else is looked up in arrays."""
    import pyarrow as pa
    from pyspark.sql import types as st

    assert lookup._jvm_kind(st.TimestampType(), pa.timestamp("us", "UTC")) is not None
    assert lookup._jvm_kind(st.TimestampType(), pa.timestamp("ns", "UTC")) is None
    assert lookup._jvm_kind(st.DecimalType(18, 2), pa.decimal128(18, 2)) is not None
    assert lookup._jvm_kind(st.DecimalType(19, 2), pa.decimal128(19, 2)) is None
    assert lookup._jvm_kind(st.ArrayType(st.IntegerType()), pa.list_(pa.int32())) is None
    assert lookup._jvm_kind(st.StringType(), pa.large_string()) is not None


def test_pair_lookups_of_a_nested_column_join_instead(spark: Any, tmp_path: Path) -> None:
    """A column of a nested type is not sent through Arrow in an array: the newer versions
    are joined, with the rows every version merged gives."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE p (id INT NOT NULL, xs ARRAY<INT>, r STRUCT<a: INT, b: STRING>,
                        PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES (1, array(1), named_struct('a', 1, 'b', 'x')),
                             (2, NULL, NULL), (3, array(3), NULL);
        INSERT INTO p VALUES (2, array(2, NULL), named_struct('a', 2, 'b', NULL)),
                             (3, NULL, named_struct('a', NULL, 'b', 'y'))""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    df = t.read()
    assert "BroadcastHashJoin" in df._jdf.queryExecution().executedPlan().toString()
    assert sorted(map(repr, df.collect())) == sorted(map(repr, merge_read(
        plan, spark, how="shuffle").collect()))


@pytest.mark.parametrize("engine", ["partial-update", "aggregation"])
def test_pair_lookups_past_the_subquery_bound_broadcast_their_frame(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str,
        by_expressions: str) -> None:
    """Issue 25: by Spark expressions (no JVM class), past ``lookup.MAX_BYTES`` the arrays
    go to Spark in their one-row frame,
    broadcast and joined to every base row (no scalar subquery, whose value every task
    deserializes), and a query of one column reads only its array; past
    ``BROADCAST_BYTES`` the newer rows are joined by key. Each read is every version
    merged."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"""
        CREATE TABLE p (id INT NOT NULL, n INT, s STRING, d DOUBLE,
                        PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = '{engine}')""")
    wh.sql("INSERT INTO p VALUES " + ", ".join(f"({i}, {i}, 's{i}', {i}.5)" for i in range(10)))
    wh.sql("INSERT INTO p VALUES (2, 20, NULL, NULL), (5, NULL, 'x5', -0.0), (9, 90, '', 9.0), "
           "(12, 12, 'x12', NULL)")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    expected = merge_read(plan, spark, how="shuffle")
    monkeypatch.setattr(lookup, "MAX_BYTES", 1)
    df = merge_read(plan, spark)
    text = df._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastNestedLoopJoin" in text and "__sl_rank" in text
    assert "element_at(Subquery" not in text  # no array in a subquery
    assert "InMemoryTableScan" in text  # the frame's rows cached by Spark
    assert sorted(map(repr, df.collect())) == sorted(map(repr, expected.collect()))
    narrow = df.select("id", "n")
    text = narrow._jdf.queryExecution().executedPlan().toString()
    scans = re.findall(r"InMemoryTableScan \[([^\]]*)\]", text)
    assert len(scans) == 1 and "," not in scans[0], text  # n's array alone
    assert sorted(narrow.collect()) == sorted(expected.select("id", "n").collect())
    # dropped from the session's cache, the frame's rows are let go by Spark's cache too
    cached = spark._jsparkSession.sharedState().cacheManager()
    assert not cached.isEmpty()
    session_cache.clear(spark)
    assert cached.isEmpty()
    monkeypatch.setattr(lookup, "BROADCAST_BYTES", 1)
    # the same files and schema: a frame kept for the session would be reused
    monkeypatch.setattr(lookup, "session_frames", lambda spark: SizedLru(1, lambda e: e[0]))
    joined = merge_read(plan, spark)
    text = joined._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastHashJoin" in text and "__sl_rank" not in text
    assert sorted(map(repr, joined.collect())) == sorted(map(repr, expected.collect()))


def test_pair_lookups_kept_for_the_session_follow_the_table_s_schema(
        spark: Any, tmp_path: Path) -> None:
    """The arrays and fold a read built are kept for the session, by the newer files and
    the table's schema: after a RENAME and a widening the same files read in the new
    schema (nothing of the former read is reused)."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE p (id INT NOT NULL, a STRING, n INT, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES (1, 'a1', 1), (2, 'a2', 2), (3, 'a3', 3);
        INSERT INTO p VALUES (2, NULL, 20), (3, 'x3', NULL)""")
    t = wh.table("p")
    assert _rows(t.read()) == {1: ("a1", 1), 2: ("a2", 20), 3: ("x3", 3)}
    assert _rows(t.read()) == {1: ("a1", 1), 2: ("a2", 20), 3: ("x3", 3)}  # kept, the same
    wh.sql("ALTER TABLE p RENAME COLUMN a TO aa; ALTER TABLE p ALTER COLUMN n TYPE BIGINT")
    df = t.read()
    assert df.columns == ["id", "aa", "n"] and dict(df.dtypes)["n"] == "bigint"
    assert _rows(df) == {1: ("a1", 1), 2: ("a2", 20), 3: ("x3", 3)}


@pytest.mark.parametrize(("key_type", "keys", "lookup"), [
    ("BIGINT", [-5, -1, 0, 63, 64, 65, 1000], "__sl_words"),  # a bitmap, word edges included
    # an INT key whose bitmap starts at 0 (tested without 64-bit arithmetic), base keys
    # below and past it
    ("INT", [0, -7, 63, 64, 65, 127, 128, 2**31 - 1], "__sl_words"),
    ("BIGINT", [-2**62, 0, 2**62], "BroadcastHashJoin"),     # too wide for a bitmap: a join
    ("STRING", ["'a'", "'b'", "'c'", "'x'", "'y'"], "BroadcastHashJoin"),  # not an integer
])
def test_the_base_rows_a_newer_file_replaces_are_found_by_any_key(
        spark: Any, tmp_path: Path, key_type: str, keys: list[Any], lookup: str,
        tested_by: str) -> None:
    """With a bitmap, the base's rows are dropped by schemalab's Parquet reader (by a filter
    of the bitmap where the JVM classes are not there: Spark Connect); else by a join."""
    if lookup == "__sl_words" and tested_by == "jvm":
        lookup = kept_scan.FORMAT_NAME
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"CREATE TABLE t (k {key_type} NOT NULL, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
           "TBLPROPERTIES ('bucket' = '1')")
    half = len(keys) // 2
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({k}, 'old')" for k in keys[:half]))
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({k}, 'old')" for k in keys[half:]))
    newer = keys[::2]
    wh.sql("INSERT INTO t VALUES " + ", ".join(f"({k}, 'new')" for k in newer))
    t = wh.table("t")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "newest" and p.rest_disjoint
    df = t.read()
    text = df._jdf.queryExecution().executedPlan().toString()
    assert lookup in text and ("__sl_words" in text) == (lookup == "__sl_words"), text
    got = {r[0]: r[1] for r in df.collect()}
    text = [str(k).strip("'") for k in keys]
    assert {str(k): v for k, v in got.items()} == {
        k: "new" if i % 2 == 0 else "old" for i, k in enumerate(text)}


def test_pairs_without_a_bitmap_of_the_base_keys_merge_as_split(spark: Any,
                                                                 tmp_path: Path) -> None:
    """A STRING key has no bitmap: the paired buckets' rows merge as split ones, the same."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE s (k STRING NOT NULL, a STRING, b INT, PRIMARY KEY (k) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO s VALUES ('a', 'a1', NULL), ('b', 'b1', 1), ('c', NULL, 1);
        INSERT INTO s VALUES ('b', NULL, 2), ('x', 'x2', NULL)""")
    plan = wh.table("s").read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    df = wh.table("s").read()
    plan_text = df._jdf.queryExecution().executedPlan().toString()
    assert "LeftOuter" not in plan_text and "LeftAnti" in plan_text  # split's key lookup
    assert _rows(df) == {"a": ("a1", None), "b": ("b1", 2), "c": (None, 1), "x": ("x2", None)}
