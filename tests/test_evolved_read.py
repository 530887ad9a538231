"""Evolve-on-read through the Python API, on Spark: every kind of schema change, retypes under
each cast mode, nested types, partitions and buckets, time travel, filters, hostile names,
insert inputs, the Parquet files themselves, and concurrent writers.

Each test builds a small table with ``Warehouse.create_table`` / ``Table.insert`` /
``Table.alter`` and checks the exact rows of ``Table.read`` (sorted) and, where it teaches
something, the read plan: how many scans, which go by Parquet field id, and how each column
is produced (``ColumnRead.kind``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import glob
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaChangeError, SchemaLabError
from schemalab.explain.read import column_text
from schemalab.paimon.bucket import bucket_of
from schemalab.paimon.write import files as write
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RenameColumn,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
)
from schemalab.table import Table
from schemalab.types.parse import parse_type

D = decimal.Decimal


# ---- helpers ---------------------------------------------------------------------------------

def cols(*specs: str) -> list[ColumnSpec]:
    """``cols("id INT", "name STRING")``: name up to the first space, then the type (use
    :func:`col` for names with spaces)."""
    out = []
    for s in specs:
        name, type_text = s.split(" ", 1)
        out.append(ColumnSpec(name, parse_type(type_text)))
    return out


def col(name: str, type_text: str) -> ColumnSpec:
    return ColumnSpec(name, parse_type(type_text))


def T(text: str) -> Any:  # noqa: N802 - reads like the SQL it stands for
    return parse_type(text)


def _plain(v: Any) -> Any:
    """Spark Rows → tuples (recursively), so expected values can be written as tuples."""
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((_plain(tuple(r)) for r in df.collect()), key=repr)


def assert_rows(df: Any, expected: list[tuple[Any, ...]]) -> None:
    assert rows(df) == sorted(expected, key=repr)


def kinds(t: Table, **kw: Any) -> list[tuple[bool, dict[int, list[str]]]]:
    """Per scan of the read plan: by field id?, and for the files of each schema version
    in it, how each output column is produced."""
    return sorted(((g.by_id, {sid: [c.kind for c in cs]
                              for sid, cs in g.columns_by_schema.items()})
                   for g in t.read_plan(**kw).groups), key=repr)


def data_files(t: Table) -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(t.path), "**", "*.parquet"),
                            recursive=True))


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield sl.Warehouse(tmp_path_factory.mktemp("evolved-read"), spark=spark)


# ---- FLIP-226 and every change kind ----------------------------------------------------------

def test_flip_226_drop_and_re_add(wh: Any) -> None:
    t = wh.create_table("flip226", cols("a STRING", "b STRING", "c STRING"))
    t.insert([("a1", "b1", "c1")])
    t.alter(DropColumn(("c",)))
    t.alter(AddColumn(("c",), T("STRING")))
    t.insert([("a2", "b2", "c2")])
    assert_rows(t.read(), [("a1", "b1", None), ("a2", "b2", "c2")])
    # The new c is field 3: the old files have no field 3, so one by-id scan reads NULL.
    assert [f.id for f in t.schema.fields] == [0, 1, 3]
    assert kinds(t) == [(True, {0: ["same", "same", "null"], 2: ["same", "same", "same"]})]
    plan = t.read_plan()
    old = plan.groups[0].columns_by_schema[0]
    assert old[2].source is None and "did not exist" in column_text(old[2], 0)
    assert [(sid, f.name) for sid, f in plan.groups[0].ignored] == [(0, "c")]


def test_add_columns_first_after_and_last(wh: Any) -> None:
    t = wh.create_table("adds", cols("a INT", "b STRING"))
    t.insert([(1, "x")])
    t.alter(AddColumn(("f",), T("STRING"), move=Move("f", "FIRST")),
            AddColumn(("m",), T("DOUBLE"), move=Move("m", "AFTER", "a")),
            AddColumn(("z",), T("INT")))
    assert t.schema.field_names == ["f", "a", "m", "b", "z"]
    t.insert([("F", 2, 2.5, "y", 9)])
    df = t.read()
    assert df.columns == ["f", "a", "m", "b", "z"]
    assert_rows(df, [(None, 1, None, "x", None), ("F", 2, 2.5, "y", 9)])
    assert kinds(t) == [(True, {0: ["null", "same", "null", "same", "null"],
                                1: ["same"] * 5})]


def test_drop_rename_and_rename_back_and_file_names(wh: Any) -> None:
    import pyarrow.parquet as pq

    t = wh.create_table("renames", cols("id INT", "a STRING", "b INT"))
    t.insert([(1, "one", 10)])                                      # schema 0
    t.alter(RenameColumn(("a",), "a2"))
    t.insert([(2, "two", 20)])                                      # schema 1
    t.alter(RenameColumn(("a2",), "a"), DropColumn(("b",)))
    t.insert([(3, "three")])                                        # schema 2
    assert_rows(t.read(), [(1, "one"), (2, "two"), (3, "three")])
    assert kinds(t) == [(True, {0: ["same", "same"], 1: ["same", "renamed"],
                                2: ["same", "same"]})]
    by_schema = t.read_plan().groups[0].columns_by_schema
    assert by_schema[1][1].source.name == "a2"  # type: ignore[union-attr]
    assert "renamed to `a`" in column_text(by_schema[1][1], 1)

    # Files carry Parquet field ids and the names current when they were written.
    seen = {}
    for e in t.live_entries(t.latest_snapshot):
        path = next(p for p in data_files(t) if p.endswith(e.file.file_name))
        schema = pq.ParquetFile(path).schema
        seen[e.file.schema_id] = [(schema.column(i).name, schema.column(i).path)
                                  for i in range(len(schema))]
        arrow = pq.read_schema(path)
        assert [f.metadata[b"PARQUET:field_id"] for f in arrow] == \
            [str(f.id).encode() for f in t.schema_at(e.file.schema_id).fields]
        assert "field_id" in str(schema)
    assert [n for n, _ in seen[0]] == ["id", "a", "b"]
    assert [n for n, _ in seen[1]] == ["id", "a2", "b"]
    assert [n for n, _ in seen[2]] == ["id", "a"]


def test_swap_names_same_and_different_types(wh: Any) -> None:
    # p/q swap keeps types; name/age swap crosses STRING and INT: the vectorized-reader
    # trap (a file column named like a different requested field of another type).
    t = wh.create_table("swaps", cols("p STRING", "q STRING", "name STRING", "age INT"))
    t.insert([("P1", "Q1", "bob", 30)])
    t.alter(RenameColumn(("p",), "tmp"), RenameColumn(("q",), "p"), RenameColumn(("tmp",), "q"),
            RenameColumn(("name",), "tmp"), RenameColumn(("age",), "name"),
            RenameColumn(("tmp",), "age"))
    assert [(f.name, f.type.sql()) for f in t.schema.fields] == [
        ("q", "STRING"), ("p", "STRING"), ("age", "STRING"), ("name", "INT")]
    t.insert([("Q2", "P2", "amy", 41)])
    df = t.read()
    assert df.columns == ["q", "p", "age", "name"]
    assert_rows(df, [("P1", "Q1", "bob", 30), ("Q2", "P2", "amy", 41)])
    assert kinds(t) == [(True, {0: ["renamed"] * 4, 1: ["same"] * 4})]
    # Spark's vectorized reader still in use (the id scan is what keeps it correct).
    assert t.spark.conf.get("spark.sql.parquet.enableVectorizedReader") == "true"
    assert_rows(df.where("name > 35").select("age"), [("amy",)])


def test_drop_then_re_add_with_new_type(wh: Any) -> None:
    t = wh.create_table("readd", cols("id INT", "v STRING"))
    t.insert([(1, "text")])
    t.alter(DropColumn(("v",)))
    t.alter(AddColumn(("v",), T("INT")))
    t.insert([(2, 7)])
    df = t.read()
    assert df.schema.simpleString() == "struct<id:int,v:int>"
    assert_rows(df, [(1, None), (2, 7)])
    assert kinds(t) == [(True, {0: ["same", "null"], 2: ["same", "same"]})]
    # Time travel to snapshot 1 still sees the old STRING column.
    assert_rows(t.read(snapshot_id=1), [(1, "text")])


def test_move_nullability_comment_and_option_changes(wh: Any) -> None:
    t = wh.create_table("metachanges", [col("id", "INT NOT NULL"), col("a", "STRING"),
                                        col("b", "DOUBLE")])
    t.insert([(1, "x", 1.5)])
    t.alter(UpdateColumnPosition(Move("b", "FIRST")))
    t.alter(UpdateColumnNullability(("id",), True))
    t.alter(UpdateColumnComment(("a",), "free text"))
    t.alter(SetOption("some.option", "v"))
    assert t.schema.id == 4 and t.schema.options["some.option"] == "v"
    assert t.schema.field("a").description == "free text"  # type: ignore[union-attr]
    t.insert([(2.5, None, "y")])
    df = t.read()
    assert df.columns == ["b", "id", "a"]
    assert_rows(df, [(1.5, 1, "x"), (2.5, None, "y")])
    # None of these changes touches data: one scan, every column "same".
    assert kinds(t) == [(True, {0: ["same"] * 3, 4: ["same"] * 3})]


# ---- retypes and cast modes -------------------------------------------------------------------

def test_implicit_widenings_are_read_in_the_id_scan(wh: Any) -> None:
    t = wh.create_table("widen", cols("i INT", "f FLOAT", "d DECIMAL(10,2)", "j INT",
                                      "s SMALLINT", "arr ARRAY<INT>", "m MAP<STRING,INT>"))
    t.insert([(1, 1.5, D("12.34"), 7, 3, [1, None], {"k": 1})])
    t.alter(UpdateColumnType(("i",), T("BIGINT")), UpdateColumnType(("f",), T("DOUBLE")),
            UpdateColumnType(("d",), T("DECIMAL(12,2)")), UpdateColumnType(("j",), T("DOUBLE")),
            UpdateColumnType(("s",), T("INT")),
            UpdateColumnType(("arr", "element"), T("BIGINT")),
            UpdateColumnType(("m", "value"), T("BIGINT")))
    t.insert([(2**40, 2.25, D("1234567890.12"), 1.5, 100000, [2**40], {"k": 2**40})])
    df = t.read()
    assert df.schema.simpleString() == ("struct<i:bigint,f:double,d:decimal(12,2),j:double,"
                                        "s:int,arr:array<bigint>,m:map<string,bigint>>")
    assert_rows(df, [(1, 1.5, D("12.34"), 7.0, 3, [1, None], {"k": 1}),
                     (2**40, 2.25, D("1234567890.12"), 1.5, 100000, [2**40], {"k": 2**40})])
    # Spark's Parquet readers widen these themselves: both schema versions in one scan.
    assert kinds(t) == [(True, {0: ["widened"] * 7, 1: ["same"] * 7})]


def test_explicit_casts_fail_or_read_null_by_cast_mode(wh: Any) -> None:
    t = wh.create_table("casts", cols("id INT", "s STRING", "b BIGINT", "i INT"))
    t.insert([(1, "12", 5, 3), (2, "abc", 2**40, 4)])
    t.alter(UpdateColumnType(("s",), T("INT")), UpdateColumnType(("b",), T("INT")),
            UpdateColumnType(("i",), T("STRING")))
    t.insert([(3, 7, 8, "x")])
    # Old files need casts Spark's reader cannot do: a name-based scan in the file's types.
    assert kinds(t) == [(False, {0: ["same", "cast", "cast", "cast"]}),
                        (True, {1: ["same"] * 4})]
    by_name = next(g for g in t.read_plan().groups if not g.by_id)
    assert [c.cast for c in by_name.columns] == [None, "explicit", "explicit", "explicit"]
    # No cast.mode: Java Paimon's casts. 2**40 as INT wraps (keeps the low 32 bits: 0) as
    # Java's (int) does; 'abc' fails Java's read (NumberFormatException), and so ours.
    assert_rows(t.read().select("id", "i", "b"), [(1, "3", 5), (2, "4", 0), (3, "x", 8)])
    with pytest.raises(Exception) as e:
        t.read().select("s").collect()
    assert "default.casts" in str(e.value) and "column `s`" in str(e.value)
    assert "'abc'" in str(e.value) and "Java Paimon" in str(e.value)

    # FLIP-226's 'explicit': a value the cast does not keep fails the read, naming it.
    t.alter(SetOption("cast.mode", "explicit"))
    with pytest.raises(Exception) as e:
        t.read().select("b").collect()
    assert "default.casts" in str(e.value) and "column `b`" in str(e.value)  # overflow
    assert "'explicit'" in str(e.value)

    t.alter(SetOption("cast.mode", "explicit-null"))
    assert_rows(t.read(), [(1, 12, 5, "3"), (2, None, None, "4"), (3, 7, 8, "x")])


def test_explain_read_names_java_cast_and_warns_from_manifest_stats(wh: Any) -> None:
    """explain_read names Java Paimon's rule per retyped column and counts, from each file's
    min/max in the manifest, the files holding values the narrowing cast will change."""
    t = wh.create_table("stats", cols("id INT", "b BIGINT", "d DOUBLE", "ts TIMESTAMP(6)"))
    t.insert([(1, 5_000_000_000, 1.5, dt.datetime(2024, 1, 5, 10, 11, 12, 123999))])
    t.insert([(2, 7, -1e12, dt.datetime(2024, 1, 5))])
    t.insert([(3, 2**40, 2.0, dt.datetime(2024, 1, 5))])
    t.alter(UpdateColumnType(("b",), T("INT")), UpdateColumnType(("d",), T("INT")),
            UpdateColumnType(("ts",), T("TIMESTAMP(3)")))
    e = t.explain_read()
    assert "(no cast.mode: Java Paimon's casts)" in e.text()
    assert e.column(0, "b").text == (
        "by id from column `b` (BIGINT → INT, Java Paimon's explicit cast: values outside INT "
        "wrap (2 of 3 files have a max above 2147483647 per their stats))")
    assert e.column(0, "d").text.endswith(
        "saturate at its bounds, NaN reads 0 (1 of 3 files has a min below -2147483648 per "
        "their stats))")
    assert e.column(0, "ts").text.endswith(
        "Java Paimon's explicit cast: fraction digits beyond 3 are cut)")
    assert_rows(t.read().orderBy("id"), [
        (1, 705032704, 1, dt.datetime(2024, 1, 5, 10, 11, 12, 123000)),
        (2, 7, -(2**31), dt.datetime(2024, 1, 5)), (3, 0, 2, dt.datetime(2024, 1, 5))])
    t.alter(SetOption("cast.mode", "explicit-null"))
    assert "reads as NULL (Java: values outside INT wrap) (2 of 3 files" in \
        t.explain_read().column(0, "b").text
    assert_rows(t.read().orderBy("id").select("b"), [(None,), (7,), (None,)])


def test_timestamp_casts_follow_paimon(wh: Any) -> None:
    """TIMESTAMP(3) keeps milliseconds on write; reading it as STRING prints every fraction
    digit, as INT/BIGINT gives epoch seconds truncated toward zero (Paimon's cast rules)."""
    t = wh.create_table("tscast", cols("id INT", "ts TIMESTAMP(3)", "s TIMESTAMP(3)",
                                       "i TIMESTAMP(0)"))
    before = dt.datetime(1969, 12, 31, 23, 59, 58, 999999)  # -1.000001 s
    t.insert([(1, dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(2024, 1, 1, 1, 2, 3, 456789),
               dt.datetime(2038, 1, 19, 3, 14, 8)),
              (2, before, before, before)])
    assert_rows(t.read(), [
        (1, dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(2024, 1, 1, 1, 2, 3, 456000),
         dt.datetime(2038, 1, 19, 3, 14, 8)),
        (2, dt.datetime(1969, 12, 31, 23, 59, 58, 999000),
         dt.datetime(1969, 12, 31, 23, 59, 58, 999000), dt.datetime(1969, 12, 31, 23, 59, 58))])
    t.alter(UpdateColumnType(("ts",), T("BIGINT")), UpdateColumnType(("s",), T("STRING")),
            UpdateColumnType(("i",), T("INT")))
    # -1001 ms / 1000 toward zero is -1; 2**31 seconds wraps as Java's (int) does
    assert_rows(t.read(), [(1, 1_700_000_000, "2024-01-01 01:02:03.456", -(2**31)),
                           (2, -1, "1969-12-31 23:59:58.999", -2)])


def test_bad_cast_mode_fails_the_read_naming_table(wh: Any) -> None:
    t = wh.create_table("badmode", cols("id INT"))
    with pytest.raises(SchemaChangeError):
        t.alter(SetOption("cast.mode", "sometimes"))
    # ALTER refuses a bad mode, but a schema file written by another tool may hold one.
    bad = dataclasses.replace(t.schema, id=1, options={"cast.mode": "sometimes"})
    assert t.schema_manager.commit(bad)
    with pytest.raises(SchemaLabError, match="default.badmode") as e:
        t.read_plan()
    assert e.value.rule == "cast-mode" and "sometimes" in str(e.value)


def test_implicit_cast_mode_refuses_explicit_alters(wh: Any) -> None:
    t = wh.create_table("implicitonly", cols("s STRING", "b BIGINT", "i INT"),
                        options={"cast.mode": "implicit"})
    for change in (UpdateColumnType(("s",), T("INT")), UpdateColumnType(("b",), T("INT")),
                   UpdateColumnType(("i",), T("STRING"))):
        with pytest.raises(SchemaChangeError, match="cast.mode = implicit"):
            t.alter(change)
    t.alter(UpdateColumnType(("i",), T("BIGINT")))  # implicit: fine
    assert t.schema.id == 1


# ---- nested types -----------------------------------------------------------------------------

def test_nested_row_array_map_evolution(wh: Any) -> None:
    t = wh.create_table("nested", cols(
        "id INT", "r ROW<a INT, b STRING, c INT>", "arr ARRAY<INT>",
        "ar ARRAY<ROW<p INT, q STRING>>", "m MAP<STRING, INT>"))
    t.insert([(1, {"a": 1, "b": "x", "c": 5}, [1, 2], [{"p": 1, "q": "u"}], {"k": 1}),
              (2, None, None, None, None)])
    t.alter(AddColumn(("r", "d"), T("STRING")), RenameColumn(("r", "b"), "bb"),
            DropColumn(("r", "c")), UpdateColumnType(("r", "a"), T("BIGINT")),
            UpdateColumnType(("arr", "element"), T("BIGINT")),
            RenameColumn(("ar", "element", "q"), "qq"),
            UpdateColumnType(("m", "value"), T("BIGINT")))
    t.insert([(3, {"a": 2**40, "bb": "y", "d": "dd"}, [2**40], [{"p": 2, "qq": "v"}],
               {"k": 2**40})])
    df = t.read()
    assert df.schema.simpleString() == (
        "struct<id:int,r:struct<a:bigint,bb:string,d:string>,arr:array<bigint>,"
        "ar:array<struct<p:int,qq:string>>,m:map<string,bigint>>")
    assert_rows(df, [
        (1, (1, "x", None), [1, 2], [(1, "u")], {"k": 1}),
        (2, None, None, None, None),  # a NULL struct stays NULL (not a struct of NULLs)
        (3, (2**40, "y", "dd"), [2**40], [(2, "v")], {"k": 2**40}),
    ])
    assert kinds(t) == [(True, {0: ["same", "evolved", "widened", "evolved", "widened"],
                                1: ["same"] * 5})]
    assert_rows(df.where("r.bb = 'x'").select("id", "r.a"), [(1, 1)])


def test_nested_cast_with_re_added_field_keeps_files_apart(wh: Any) -> None:
    # Files of schema 0 and 2 have the same nested names and types, but r.y is a different
    # field (re-added, new id): they need different projections, so different scans.
    t = wh.create_table("nestedreadd", cols("id INT", "r ROW<x STRING, y INT>"))
    t.insert([(1, {"x": "1", "y": 10}), (4, None)])
    t.alter(DropColumn(("r", "y")))
    t.alter(AddColumn(("r", "y"), T("INT")))
    t.insert([(2, {"x": "2", "y": 20})])
    t.alter(UpdateColumnType(("r", "x"), T("INT")))  # explicit: read by name, then cast
    t.insert([(3, {"x": 3, "y": 30})])
    assert_rows(t.read(), [(1, (1, None)), (2, (2, 20)), (3, (3, 30)), (4, None)])
    assert kinds(t) == [(False, {0: ["same", "evolved"]}), (False, {2: ["same", "evolved"]}),
                        (True, {3: ["same", "same"]})]


def test_not_null_nested_elements_in_the_id_scan(wh: Any) -> None:
    t = wh.create_table("nnnested", [col("a", "ARRAY<INT NOT NULL>"),
                                     col("r", "ARRAY<ROW<x INT NOT NULL, y STRING> NOT NULL>")])
    t.insert([([1, 2], [{"x": 1, "y": "a"}])])
    t.alter(UpdateColumnType(("a", "element"), T("BIGINT NOT NULL")),
            RenameColumn(("r", "element", "y"), "yy"))
    t.insert([([3], [{"x": 2, "yy": "b"}])])
    assert_rows(t.read(), [([1, 2], [(1, "a")]), ([3], [(2, "b")])])
    assert kinds(t) == [(True, {0: ["widened", "evolved"], 1: ["same", "same"]})]


# ---- layout: partitions, buckets, empty tables ----------------------------------------------

def test_partitioned_table_layout_and_values(wh: Any) -> None:
    t = wh.create_table("parts", cols("id INT", "dt STRING", "h INT", "v STRING"),
                        partition_keys=["dt", "h"])
    t.insert([(1, "2024-01-01", 0, "a"), (2, "a/b=c d", 1, "b"), (3, None, 2, "c"),
              (4, "x%y", None, "d")])
    t.alter(RenameColumn(("v",), "w"), AddColumn(("n",), T("INT")))
    t.insert([(5, "2024-01-01", 0, "e", 50)])
    assert_rows(t.read(), [(1, "2024-01-01", 0, "a", None), (2, "a/b=c d", 1, "b", None),
                           (3, None, 2, "c", None), (4, "x%y", None, "d", None),
                           (5, "2024-01-01", 0, "e", 50)])
    dirs = sorted({os.path.dirname(os.path.relpath(p, t.path)) for p in data_files(t)})
    assert dirs == ["dt=2024-01-01/h=0/bucket-0", "dt=__DEFAULT_PARTITION__/h=2/bucket-0",
                    "dt=a%2Fb%3Dc d/h=1/bucket-0", "dt=x%25y/h=__DEFAULT_PARTITION__/bucket-0"]
    assert sorted((f.partition for f in t.data_files(t.latest_snapshot)), key=repr) == sorted(
        [("2024-01-01", 0), ("2024-01-01", 0), ("a/b=c d", 1), (None, 2), ("x%y", None)],
        key=repr)
    assert_rows(t.read().where("dt = 'a/b=c d'").select("id", "w"), [(2, "b")])


def test_fixed_bucket_table_rows_land_in_their_bucket(wh: Any) -> None:
    import pyarrow.parquet as pq

    t = wh.create_table("buckets", cols("id INT", "v STRING"),
                        options={"bucket": "3", "bucket-key": "id"})
    data = [(i, f"v{i}") for i in range(12)] + [(None, "null key")]
    t.insert(data)
    assert_rows(t.read(), data)
    n = 0
    for path in data_files(t):
        bucket = int(os.path.basename(os.path.dirname(path)).removeprefix("bucket-"))
        for key in pq.read_table(path).column("id").to_pylist():
            assert bucket_of([key], [T("INT")], 3) == bucket
            n += 1
    assert n == len(data)
    assert {e.bucket for e in t.live_entries(t.latest_snapshot)} == {
        bucket_of([i], [T("INT")], 3) for i, _ in data}
    assert {e.total_buckets for e in t.live_entries(t.latest_snapshot)} == {3}


def test_empty_table_read(wh: Any) -> None:
    t = wh.create_table("empty", cols("a INT", "r ROW<x STRING>"))
    t.alter(AddColumn(("b",), T("STRING")))
    df = t.read()
    assert df.schema.simpleString() == "struct<a:int,r:struct<x:string>,b:string>"
    assert rows(df) == []
    plan = t.read_plan()
    assert plan.groups == () and plan.snapshot_id is None


def test_files_with_no_output_columns(wh: Any) -> None:
    t = wh.create_table("nocols", cols("a INT", "b STRING"))
    t.insert([(1, "x"), (2, "y")])
    t.alter(AddColumn(("c",), T("INT")))
    t.alter(DropColumn(("a",)), DropColumn(("b",)))
    t.insert([(3,)])
    # Schema-0 files contribute rows (all NULL), not nothing.
    assert_rows(t.read(), [(3,), (None,), (None,)])
    assert kinds(t) == [(True, {0: ["null"], 2: ["same"]})]
    assert t.read().count() == 3


# ---- time travel -----------------------------------------------------------------------------

def test_time_travel_uses_the_snapshot_schema(wh: Any) -> None:
    t = wh.create_table("travel", cols("id INT", "name STRING"))
    t.insert([(1, "a")])                                    # snapshot 1, schema 0
    t.alter(RenameColumn(("name",), "full_name"))
    t.alter(AddColumn(("age",), T("INT")))
    t.insert([(2, "b", 20)])                                # snapshot 2, schema 2
    t.alter(DropColumn(("full_name",)))                     # schema 3, no snapshot

    one = t.read(snapshot_id=1)
    assert one.columns == ["id", "name"]
    assert_rows(one, [(1, "a")])
    one_now = t.read(snapshot_id=1, schema="current")
    assert one_now.columns == ["id", "age"]
    assert_rows(one_now, [(1, None)])
    two = t.read(snapshot_id=2)
    assert two.columns == ["id", "full_name", "age"]
    assert_rows(two, [(1, "a", None), (2, "b", 20)])
    assert_rows(t.read(snapshot_id=2, schema=0), [(1, "a"), (2, "b")])
    assert t.read().columns == ["id", "age"]
    assert_rows(t.read(), [(1, None), (2, 20)])
    assert [(s.id, s.schema_id) for s in t.snapshots] == [(1, 0), (2, 2)]
    with pytest.raises(SchemaLabError, match=r"default.travel has no snapshot 7"):
        t.read(snapshot_id=7)


def test_commit_records_the_latest_schema_when_an_alter_races(
        wh: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    t = wh.create_table("race", cols("id INT"))
    real = write.write_files

    def alter_while_writing(*args: Any, **kwargs: Any) -> Any:
        files = real(*args, **kwargs)
        t.alter(AddColumn(("late",), T("STRING")))  # lands before the commit
        return files

    monkeypatch.setattr(write, "write_files", alter_while_writing)
    snap = t.insert([(1,)])
    assert snap is not None
    # As Java Paimon: the snapshot takes the latest schema, the file keeps its own.
    assert snap.schema_id == 1
    assert [e.file.schema_id for e in t.live_entries(snap)] == [0]
    assert t.read(snapshot_id=snap.id).columns == ["id", "late"]
    assert_rows(t.read(snapshot_id=snap.id), [(1, None)])


def test_insert_overwrite_replaces_files_committed_while_it_wrote(
        wh: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    t = wh.create_table("overwrite", cols("id INT", "dt STRING"), partition_keys=["dt"])
    t.insert([(1, "a"), (2, "b")])
    real = write.write_files
    raced: list[bool] = []

    def insert_while_writing(*args: Any, **kwargs: Any) -> Any:
        files = real(*args, **kwargs)
        if not raced:
            raced.append(True)
            t.insert([(3, "a")])  # another writer commits into partition a meanwhile
        return files

    monkeypatch.setattr(write, "write_files", insert_while_writing)
    snap = t.insert([(10, "a")], overwrite=True)
    assert snap is not None and snap.id == 3 and snap.commit_kind == "OVERWRITE"
    # The overwrite replaces partition a as of its commit, racing insert included.
    assert_rows(t.read(), [(2, "b"), (10, "a")])
    assert snap.total_record_count == 2
    assert_rows(t.read(snapshot_id=2), [(1, "a"), (2, "b"), (3, "a")])


# ---- filters and projections -----------------------------------------------------------------

def test_filters_and_projections_pass_through(wh: Any) -> None:
    t = wh.create_table("filters", cols("x INT", "y STRING", "k INT"))
    t.insert([(i, f"y{i}", i % 2) for i in range(8)])
    t.alter(RenameColumn(("x",), "xx"))
    t.insert([(i, f"z{i}", i % 2) for i in range(4, 10)])
    df = t.read().where("xx > 5").select("y")
    assert_rows(df, [("y6",), ("y7",), ("z6",), ("z7",), ("z8",), ("z9",)])
    assert_rows(t.read().where("k = 1 AND xx >= 7").select("xx", "y"),
                [(7, "y7"), (7, "z7"), (9, "z9")])
    # The filter on the (renamed) column reaches the Parquet scan: the id scan reads it by id.
    plan = t.read().where("k = 1")._jdf.queryExecution().executedPlan().toString()
    assert "PushedFilters: [IsNotNull(_sl_f2), EqualTo(_sl_f2,1)]" in plan
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "GreaterThan(_sl_f0,5)" in plan


# ---- hostile names ----------------------------------------------------------------------------

HOSTILE = ["sp ace", "do.t", "back`tick", "quo'te\"d", "ünï 名前", "<script>alert(1)</script>",
           "eq=sign", "semi;col{}()", "a.b"]


def test_hostile_column_and_table_names(wh: Any) -> None:
    name = sl.sql.TableName(None, "we ird.name [1] {x}*?")
    t = wh.create_table(name, [col(n, "INT") for n in HOSTILE] + [col("a", "ROW<b STRING>")])
    assert t.name == "default.we ird.name [1] {x}*?"
    t.insert([(*range(len(HOSTILE)), {"b": "nested"})])
    t.alter(RenameColumn(("sp ace",), "sp  ace 2"), RenameColumn(("a", "b"), "b.c"))
    t.insert([dict(zip(["sp  ace 2", *HOSTILE[1:]], range(10, 20), strict=False))])
    df = wh.table(name).read()
    assert df.columns == ["sp  ace 2", *HOSTILE[1:], "a"]
    assert_rows(df, [(*range(len(HOSTILE)), ("nested",)),
                     (*range(10, 10 + len(HOSTILE)), None)])
    assert_rows(df.where("`back``tick` > 5").select("`a.b`", "`<script>alert(1)</script>`"),
                [(18, 15)])
    # Statistics of the top-level column "a.b" are not confused with field b of ROW a
    # (their Parquet paths are both "a.b").
    for e in t.live_entries(t.latest_snapshot):
        assert e.file.value_stats_cols == tuple(
            f.name for f in t.schema_at(e.file.schema_id).fields if f.name != "a")
        mins, maxs = e.file.value_stats.decode([T("INT")] * len(HOSTILE))
        assert mins[-1] == maxs[-1] == (8 if e.file.schema_id == 0 else 18)


def test_columns_named_like_the_id_scan_columns(wh: Any) -> None:
    # A file column called _sl_f1 that is field 0 (STRING) next to field 1 (INT): the
    # synthetic scan names must not collide with it.
    t = wh.create_table("synthetic", cols("_sl_f1 STRING", "b INT"))
    t.insert([("s", 1)])
    t.alter(RenameColumn(("b",), "_sl_f0"))
    t.insert([("t", 2)])
    assert_rows(t.read(), [("s", 1), ("t", 2)])
    assert kinds(t) == [(True, {0: ["same", "renamed"], 1: ["same", "same"]})]


def test_names_differing_only_in_case_fail_clearly(wh: Any) -> None:
    t = wh.create_table("cases", cols("a INT", "A INT"))
    with pytest.raises(SchemaLabError, match="differ only in case"):
        t.insert([(1, 2)])
    assert t.latest_snapshot is None


# ---- insert inputs ----------------------------------------------------------------------------

def test_insert_inputs(wh: Any, spark: Any) -> None:
    import pandas as pd

    t = wh.create_table("inputs", [col("id", "INT NOT NULL"), col("v", "STRING"),
                                   col("d", "DOUBLE"), col("day", "DATE")])
    t.insert(spark.createDataFrame([(1, "a", 1.0)], "id int, v string, d double"))
    t.insert(pd.DataFrame({"d": [2.0, None], "id": [2, 3], "v": ["b", None]}))
    t.insert([(4, "c"), (5, None)])  # leading columns by position, the rest NULL
    t.insert([{"id": 6, "v": "d"}, {"id": 7, "day": dt.date(2024, 1, 7)}])
    assert_rows(t.read(), [(1, "a", 1.0, None), (2, "b", 2.0, None), (3, None, None, None),
                           (4, "c", None, None), (5, None, None, None),
                           (6, "d", None, None), (7, None, None, dt.date(2024, 1, 7))])
    assert t.insert([]) is None
    assert len(t.snapshots) == 4


def test_insert_errors(wh: Any, spark: Any) -> None:
    import pandas as pd

    t = wh.create_table("badinputs", [col("id", "INT NOT NULL"), col("v", "STRING")])
    for bad in ([{"id": 1, "zz": 2}], spark.createDataFrame([(1, 2)], "id int, zz int"),
                pd.DataFrame({"id": [1], "zz": [2]})):
        with pytest.raises(SchemaLabError, match=r"default.badinputs has no column 'zz'") as e:
            t.insert(bad)
        assert e.value.column == "zz"
    for bad in ([{"v": "x"}], pd.DataFrame({"v": ["x"]})):
        with pytest.raises(SchemaLabError, match="column id is NOT NULL and was not given"):
            t.insert(bad)
    with pytest.raises(SchemaLabError, match="3 values given for 2 columns"):
        t.insert([(1, "x", "extra")])
    with pytest.raises(SchemaLabError, match="rows of 2 and of 1 values"):
        t.insert([(1, "x"), (2,)])
    # A NULL value for a NOT NULL column fails the insert too (Spark would write it).
    with pytest.raises(SchemaLabError, match="column id is NOT NULL but a row gives it NULL"):
        t.insert([(1, "ok"), (None, "x")])
    assert t.latest_snapshot is None
    leftovers = [n for n in os.listdir(t.path) if n.startswith(".")]
    assert leftovers == []


# ---- tables written by pypaimon (no Parquet field ids) ---------------------------------------

def test_reads_pypaimon_nested_table_by_name(spark: Any, pypaimon_warehouses: Path) -> None:
    t = sl.open_table(pypaimon_warehouses / "wh6" / "n.db" / "t", spark=spark)
    # Paimon's files carry no field ids: read by name (nested names too), evolved by id.
    assert kinds(t) == [(False, {0: ["same", "evolved", "same", "same"]})]
    assert_rows(t.read(), [(1, ("Oslo", 150, None), ["a", "b"], {"k": 1})])
    assert_rows(t.read(snapshot_id=1), [(1, ("Oslo", 150), ["a", "b"], {"k": 1})])


# ---- concurrent writers -----------------------------------------------------------------------

N_CHILD_WRITERS, N_INSERTS, ROWS_PER_INSERT, N_ALTERS = 2, 3, 4, 5
N_WRITERS = N_CHILD_WRITERS + 1  # the test process writes too, with the shared session


def _insert_rows(worker: int, i: int) -> list[dict[str, int]]:
    return [{"id": worker * 1000 + i * 100 + j, "writer": worker}
            for j in range(ROWS_PER_INSERT)]


def _insert_worker(warehouse: str, worker: int, ready: Any) -> None:
    from importlib import resources

    import schemalab as sl

    # A test JVM: quicker to start, slower at steady state (spark-notes.md).
    log_conf = resources.files("schemalab").joinpath("log4j2.properties")
    java = f"-Dlog4j2.configurationFile=file:{log_conf} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    spark = sl.local_spark(f"writer-{worker}", cores=1, driver_memory="1g",
                           extra_conf={"spark.driver.extraJavaOptions": java})
    # Warm the JVM up on a scratch write, so the real inserts of all writers overlap.
    scratch = tempfile.mkdtemp(prefix="schemalab-warm-")
    spark.range(1).write.mode("overwrite").parquet(os.path.join(scratch, "t"))
    shutil.rmtree(scratch, ignore_errors=True)
    t = sl.Warehouse(warehouse, spark=spark).table("concurrent")
    ready.wait(timeout=300)
    for i in range(N_INSERTS):
        t.insert(_insert_rows(worker, i))
    spark.stop()  # this child's own JVM


def _alter_worker(warehouse: str, ready: Any) -> None:
    import schemalab as sl
    from schemalab.schema.changes import AddColumn
    from schemalab.types.parse import parse_type

    t = sl.Warehouse(warehouse).table("concurrent")  # ALTER needs no Spark
    ready.wait(timeout=300)
    for i in range(N_ALTERS):
        time.sleep(0.4)
        t.alter(AddColumn((f"c{i}",), parse_type("INT")))


@pytest.mark.slow  # two more JVMs to start and warm up: 60-140 s on a busy 2-core machine
def test_concurrent_inserts_and_alters(wh: Any) -> None:
    t = wh.create_table("concurrent", cols("id INT", "writer INT"))
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Barrier(N_CHILD_WRITERS + 2)
    procs = [ctx.Process(target=_insert_worker, args=(wh.path, w, ready))
             for w in range(1, N_CHILD_WRITERS + 1)]
    procs.append(ctx.Process(target=_alter_worker, args=(wh.path, ready)))
    for p in procs:
        p.start()
    try:
        ready.wait(timeout=300)
        for i in range(N_INSERTS):  # writer 0: this process
            t.insert(_insert_rows(0, i))
        for p in procs:
            p.join(timeout=300)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
    assert [p.exitcode for p in procs] == [0] * len(procs)

    n = N_WRITERS * N_INSERTS
    snaps = t.snapshots
    assert [s.id for s in snaps] == list(range(1, n + 1))
    assert [s.id for s in t.schemas] == list(range(N_ALTERS + 1))
    assert t.snapshot_manager.latest_id() == n
    # A snapshot records the latest schema at its commit: never older than its predecessor.
    assert [s.schema_id for s in snaps] == sorted(s.schema_id for s in snaps)
    for s in snaps:
        assert s.total_record_count == s.id * ROWS_PER_INSERT
        assert t.read(snapshot_id=s.id).count() == s.total_record_count
    df = t.read()
    assert df.columns == ["id", "writer"] + [f"c{i}" for i in range(N_ALTERS)]
    got = rows(df.select("id", "writer"))
    assert got == sorted(((w * 1000 + i * 100 + j, w) for w in range(N_WRITERS)
                          for i in range(N_INSERTS) for j in range(ROWS_PER_INSERT)), key=repr)
    assert df.where("c0 IS NOT NULL").count() == 0
    # Nothing hidden left behind (staging directories, temporary files), and losers of a
    # commit race removed their manifest lists: one manifest and two lists per snapshot.
    hidden = [os.path.join(d, x) for d, ds, fs in os.walk(t.path) for x in ds + fs
              if x.startswith(".")]
    assert hidden == []
    manifests = os.listdir(os.path.join(t.path, "manifest"))
    assert len([m for m in manifests if m.startswith("manifest-list-")]) == 2 * n
    assert len([m for m in manifests if not m.startswith("manifest-list-")]) == n
