"""The merge read's plan per bucket (``engine/merge/runs.py``): which files a bucket's rows
can pass through unmerged, from the manifests' key ranges and sequence numbers, and the reads
each strategy gives — equal to the rows every version of every key merged the plain way
(``how="shuffle"``) and to the rows written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.engine.merge.read import merge_input, merge_read, plans_of
from schemalab.engine.merge.runs import bucket_plans, limit_broadcast
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
    assert (p.strategy, _names(p.base)) == ("split", ["t0", "t1", "t2"])
    [p] = bucket_plans([_file("a", 0, 9, None), _file("b", 10, 19, None)], "partial-update",
                       sequence_fields=())
    assert p.strategy == "split" and len(p.base) == 1
    # past the broadcast limit the buckets merge in full
    assert [q.strategy for q in limit_broadcast([p], broadcast_rows=5)] == ["full"]


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
        INSERT INTO p VALUES (2, NULL, 'x2'), (6, 'x6', NULL)""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert (p.strategy, len(p.base)) == ("split", 2)
    expected = {1: ("a1", None), 2: ("a2", "x2"), 3: ("a3", "b3"), 5: ("a5", None),
                6: ("x6", "b6")}
    assert _rows(t.read()) == expected
    assert _rows(merge_read(plan, spark, how="shuffle")) == expected


@pytest.mark.parametrize(("key_type", "keys", "lookup"), [
    ("BIGINT", [-5, -1, 0, 63, 64, 65, 1000], "__sl_words"),  # a bitmap, word edges included
    ("BIGINT", [-2**62, 0, 2**62], "BroadcastHashJoin"),     # too wide for a bitmap: a join
    ("STRING", ["'a'", "'b'", "'c'", "'x'", "'y'"], "BroadcastHashJoin"),  # not an integer
])
def test_the_base_rows_a_newer_file_replaces_are_found_by_any_key(
        spark: Any, tmp_path: Path, key_type: str, keys: list[Any], lookup: str) -> None:
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
    assert lookup in df._jdf.queryExecution().executedPlan().toString()
    got = {r[0]: r[1] for r in df.collect()}
    text = [str(k).strip("'") for k in keys]
    assert {str(k): v for k, v in got.items()} == {
        k: "new" if i % 2 == 0 else "old" for i, k in enumerate(text)}
