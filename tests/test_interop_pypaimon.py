"""Row-level interop with pypaimon 2.1.0, the real Python Paimon client, in both directions.

1. pypaimon reads every table schemalab writes (``Warehouse.create_table`` + ``Table.insert``
   + ``Table.alter``) and returns exactly the rows of our own ``Table.read()``, at the latest
   snapshot and, with ``scan.snapshot-id``, at every older one (with that snapshot's schema).
2. We read what pypaimon writes: every table of the fixture warehouses and tables a test
   writes with pypaimon between ``alter_table`` calls, again at every snapshot.

Rows are compared exactly: both sides become sorted lists of tuples of plain Python values
(ROW → tuple, ARRAY → tuple, MAP → sorted pairs, NaN → a marker, bytearray → bytes, aware
datetimes → naive UTC). Booleans and floats are tagged so that ``1 == True == 1.0`` cannot
hide a type difference.

Where the two clients deliberately differ (narrowing overflow: Paimon wraps, we raise or give
NULL by ``cast.mode``), the difference is asserted explicitly. Known schemalab bugs are
``xfail(strict=True)`` tests that expect the correct behaviour.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pypaimon
import pytest
from pypaimon.schema.data_types import AtomicType, DataTypeParser, PyarrowFieldParser
from pypaimon.schema.schema_change import SchemaChange as PyChange
from pyspark.errors import PySparkException

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.open import open_table
from schemalab.paimon.bucket import bucket_of
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    RenameColumn,
    UpdateColumnType,
)
from schemalab.table import Table
from schemalab.types.arrow import to_arrow
from schemalab.types.parse import parse_type, type_to_json

UTC = dt.UTC
Rows = list[tuple[Any, ...]]
Read = tuple[list[str], Rows]


def T(text: str) -> Any:  # noqa: N802 - reads like a type literal
    return parse_type(text)


def cols(*specs: tuple[str, str]) -> list[ColumnSpec]:
    return [ColumnSpec(name, T(text)) for name, text in specs]


# --------------------------------------------------------------------------------------------
# Normalizing both sides to plain Python values
# --------------------------------------------------------------------------------------------


def _scalar(v: Any) -> Any:
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, float):
        return ("float", "NaN" if math.isnan(v) else v)
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    if hasattr(v, "to_pydatetime"):  # pandas Timestamp: pypaimon's TIMESTAMP(9) values
        v = v.to_pydatetime()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC).replace(tzinfo=None)
    return v


def _map(items: Iterable[tuple[Any, Any]]) -> tuple[Any, ...]:
    return ("map", tuple(sorted(items, key=repr)))


def _from_arrow(v: Any, t: pa.DataType) -> Any:
    if v is None:
        return None
    if pa.types.is_struct(t):
        return tuple(_from_arrow(v[t.field(i).name], t.field(i).type)
                     for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _map((_from_arrow(k, t.key_type), _from_arrow(x, t.item_type)) for k, x in v)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return tuple(_from_arrow(x, t.value_type) for x in v)
    return _scalar(v)


def _from_spark(v: Any, t: Any) -> Any:
    from pyspark.sql import types as st

    if v is None:
        return None
    if isinstance(t, st.StructType):
        return tuple(_from_spark(x, f.dataType) for x, f in zip(v, t.fields, strict=True))
    if isinstance(t, st.MapType):
        return _map((_from_spark(k, t.keyType), _from_spark(x, t.valueType))
                    for k, x in v.items())
    if isinstance(t, st.ArrayType):
        return tuple(_from_spark(x, t.elementType) for x in v)
    if isinstance(t, st.TimestampType) and v.tzinfo is None:
        # TIMESTAMP WITH LOCAL TIME ZONE: PySpark returns the instant as naive local time
        return _scalar(v.astimezone(UTC))
    return _scalar(v)


def spark_rows(rows: Iterable[Any], schema: Any) -> Rows:
    """Collected Spark rows of ``schema`` as sorted normalized tuples."""
    fields = schema.fields
    return sorted((tuple(_from_spark(v, f.dataType) for v, f in zip(r, fields, strict=True))
                   for r in rows), key=repr)


def ours(df: Any) -> Read:
    """A schemalab read (Spark DataFrame) as column names and sorted normalized rows."""
    return list(df.columns), spark_rows(df.collect(), df.schema)


def py_catalog(warehouse: Path | str) -> Any:
    return pypaimon.CatalogFactory.create({"warehouse": str(warehouse)})


def py_table(warehouse: Path | str, ident: str, snapshot_id: int | None = None) -> Any:
    table = py_catalog(warehouse).get_table(ident)
    if snapshot_id is not None:
        table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    return table


def py_arrow(table: Any, predicate: Callable[[Any], Any] | None = None) -> pa.Table:
    rb = table.new_read_builder()
    if predicate is not None:
        rb = rb.with_filter(predicate(rb.new_predicate_builder()))
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def theirs(table: Any, predicate: Callable[[Any], Any] | None = None) -> Read:
    """pypaimon's read of ``table`` as column names and sorted normalized rows."""
    arrow = py_arrow(table, predicate)
    fields = list(arrow.schema)
    rows = [tuple(_from_arrow(r[f.name], f.type) for f in fields) for r in arrow.to_pylist()]
    return [f.name for f in fields], sorted(rows, key=repr)


def read_mismatches(table: Table, warehouse: Path | str, ident: str) -> list[str]:
    """Compare the latest read and every snapshot's time-travel read of ``table`` between
    schemalab and pypaimon; return a description of each difference."""
    out = []
    got, want = ours(table.read()), theirs(py_table(warehouse, ident))
    if got != want:
        out.append(f"latest: ours={got} pypaimon={want}")
    for snap in table.snapshots:
        travelled = py_table(warehouse, ident, snap.id)
        # pypaimon really travelled: it reads with that snapshot's schema
        assert travelled.table_schema.id == snap.schema_id
        got, want = ours(table.read(snapshot_id=snap.id)), theirs(travelled)
        if got != want:
            out.append(f"snapshot {snap.id} (schema {snap.schema_id}): ours={got} "
                       f"pypaimon={want}")
    return out


def assert_reads_agree(table: Table, warehouse: Path | str, ident: str) -> None:
    mismatches = read_mismatches(table, warehouse, ident)
    assert not mismatches, "\n".join(mismatches)


def _deep(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return tuple(_deep(x) for x in v)
    return None if v is None else _scalar(v)


def row(*values: Any) -> tuple[Any, ...]:
    """An expected row written as plain Python values (ROW/ARRAY as tuples, MAP as
    ``("map", ((k, v), ...))``), normalized like the reads."""
    return _deep(values)


@pytest.fixture()
def wh(spark: Any, tmp_path: Path) -> sl.Warehouse:
    return sl.Warehouse(tmp_path / "ours", spark=spark)


# --------------------------------------------------------------------------------------------
# Writing with pypaimon
# --------------------------------------------------------------------------------------------


class PyWriter:
    """A pypaimon FileSystem warehouse with database ``py``, written the way its users do."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.catalog = py_catalog(root)
        self.catalog.create_database("py", True)

    def create(self, name: str, schema: pa.Schema, **kwargs: Any) -> str:
        ident = f"py.{name}"
        self.catalog.create_table(ident, pypaimon.Schema.from_pyarrow_schema(schema, **kwargs),
                                  False)
        return ident

    def write(self, ident: str, rows: list[dict[str, Any]]) -> None:
        """One commit of ``rows`` in the table's current schema (absent keys are NULL)."""
        table = self.catalog.get_table(ident)
        schema = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(pa.Table.from_pylist(rows, schema=schema))
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()

    def alter(self, ident: str, *changes: Any) -> None:
        self.catalog.alter_table(ident, list(changes), False)

    def path(self, ident: str) -> Path:
        db, name = ident.split(".")
        return self.root / f"{db}.db" / name


def py_type(text: str) -> Any:
    return DataTypeParser.parse_data_type(type_to_json(T(text)))


# ============================================================================================
# 1. pypaimon reads what we write
# ============================================================================================


MANY_TYPES = (("i", "INT"), ("l", "BIGINT"), ("s", "STRING"), ("d", "DOUBLE"),
              ("dec", "DECIMAL(10, 2)"), ("day", "DATE"), ("ts", "TIMESTAMP(6)"),
              ("b", "BOOLEAN"), ("by", "BYTES"), ("ti", "TINYINT"), ("si", "SMALLINT"),
              ("f", "FLOAT"), ("dec5", "DECIMAL(5, 1)"), ("dec20", "DECIMAL(20, 2)"),
              ("ltz", "TIMESTAMP_LTZ(6)"))
MANY_ROWS = [
    (1, 2**40, "héllo wörld", 1.5, Decimal("12345678.91"), dt.date(2024, 2, 29),
     dt.datetime(2024, 1, 1, 12, 0, 0, 123456), True, b"\x00\x01\xff", 127, -32768, 0.25,
     Decimal("-1.5"), Decimal("123456789012345678.91"),
     dt.datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=UTC)),
    (None,) * len(MANY_TYPES),
    (-5, -1, "", float("nan"), Decimal("-0.01"), dt.date(1969, 12, 31),
     dt.datetime(1900, 1, 1), False, b"", -128, 7, float("-inf"), Decimal("9999.9"),
     Decimal("-0.01"), dt.datetime(1970, 1, 1, tzinfo=UTC)),
]


def test_pypaimon_reads_our_append_table_of_many_types(wh: sl.Warehouse) -> None:
    t = wh.create_table("types", cols(*MANY_TYPES))
    t.insert(MANY_ROWS)
    names, rows = theirs(py_table(wh.path, "default.types"))
    assert names == [n for n, _ in MANY_TYPES]
    assert rows == sorted((row(*r) for r in MANY_ROWS), key=repr)
    assert_reads_agree(t, wh.path, "default.types")


def test_pypaimon_reads_an_empty_table_and_one_altered_after_its_last_snapshot(
        wh: sl.Warehouse) -> None:
    t = wh.create_table("e", cols(("a", "INT"), ("b", "STRING")))
    assert theirs(py_table(wh.path, "default.e")) == (["a", "b"], [])
    assert_reads_agree(t, wh.path, "default.e")
    t.insert([(1, "x")])
    t.alter(AddColumn(("c",), T("DOUBLE")), RenameColumn(("a",), "aa"))
    # latest read: current schema (schema 1), snapshot 1: its own schema 0
    assert theirs(py_table(wh.path, "default.e")) == (["aa", "b", "c"], [row(1, "x", None)])
    assert_reads_agree(t, wh.path, "default.e")


def test_timestamps_are_stored_at_their_declared_precision(wh: sl.Warehouse) -> None:
    t = wh.create_table("tsp", cols(("ts3", "TIMESTAMP(3)"), ("ts0", "TIMESTAMP(0)")))
    value = dt.datetime(2024, 1, 1, 1, 2, 3, 456789)
    t.insert([(value, value)])
    assert theirs(py_table(wh.path, "default.tsp"))[1] == [
        row(value.replace(microsecond=456000), value.replace(microsecond=0))]
    assert_reads_agree(t, wh.path, "default.tsp")


def test_pypaimon_reads_our_partitioned_tables(wh: sl.Warehouse) -> None:
    one = wh.create_table("p1", cols(("id", "INT"), ("p", "STRING")), partition_keys=["p"])
    one.insert([(1, "a b"), (2, "x"), (3, None), (4, "a=b/c%d"), (5, "ünï cödé"), (6, "a b")])
    two = wh.create_table("p2", cols(("id", "INT"), ("p", "STRING"), ("q", "INT"),
                                     ("v", "DOUBLE")), partition_keys=["p", "q"])
    two.insert([(1, "new york", 1, 0.5), (2, "new york", 2, 1.5), (3, "x", None, None),
                (4, None, 7, 2.5)])
    two.insert([(5, "new york", 1, 3.5)])
    two.alter(AddColumn(("w",), T("STRING")), RenameColumn(("v",), "value"))
    two.insert([(6, "x", None, 4.5, "w6")])
    assert theirs(py_table(wh.path, "default.p1"))[1] == sorted(
        [row(1, "a b"), row(2, "x"), row(3, None), row(4, "a=b/c%d"), row(5, "ünï cödé"),
         row(6, "a b")], key=repr)
    assert_reads_agree(one, wh.path, "default.p1")
    assert_reads_agree(two, wh.path, "default.p2")


def test_pypaimon_reads_our_fixed_bucket_table(wh: sl.Warehouse) -> None:
    t = wh.create_table("bk", cols(("id", "INT"), ("v", "STRING")),
                        options={"bucket": "2", "bucket-key": "id"})
    t.insert([(i, f"v{i}") for i in range(12)])
    assert_reads_agree(t, wh.path, "default.bk")
    for entry in t.data_files(t.latest_snapshot):
        assert all(bucket_of([r["id"]], [T("INT")], 2) == entry.bucket
                   for r in pq.ParquetFile(entry.path).read().to_pylist())
    # pypaimon prunes buckets for an equality on the bucket key (HASH_FIXED): it plans only
    # bucket_of(key), so a row we put in another bucket would be invisible to this read
    table = py_table(wh.path, "default.bk")
    for i in range(12):
        rb = table.new_read_builder()
        rb = rb.with_filter(rb.new_predicate_builder().equal("id", i))
        assert {s.bucket for s in rb.new_scan().plan().splits()} == {
            bucket_of([i], [T("INT")], 2)}
        assert theirs(table, lambda b, i=i: b.equal("id", i))[1] == [row(i, f"v{i}")]


def test_pypaimon_reads_our_evolution_history_at_every_snapshot(wh: sl.Warehouse) -> None:
    t = wh.create_table("h", cols(("id", "INT"), ("a", "INT"), ("b", "STRING"), ("c", "INT")))
    t.insert([(1, 10, "x", 100), (2, None, None, None)])
    t.alter(AddColumn(("d",), T("STRING")))
    t.insert([(3, 30, "y", 300, "d3")])
    t.alter(RenameColumn(("b",), "bb"))
    t.insert([(4, 40, "z", 400, "d4")])
    t.alter(RenameColumn(("bb",), "b"))  # rename back
    t.insert([(5, 50, "w", 500, "d5")])
    t.alter(DropColumn(("c",)))
    t.insert([(6, 60, "v", "d6")])
    t.alter(AddColumn(("c",), T("INT")))  # drop + re-add the same name: a new field id
    t.insert([(7, 70, "u", "d7", 7000)])
    t.alter(UpdateColumnType(("a",), T("BIGINT")))  # implicit widening
    t.insert([(8, 2**40, "t", "d8", 8000)])
    t.alter(UpdateColumnType(("c",), T("STRING")))  # explicit INT -> STRING
    t.insert([(9, 90, "s", "d9", "c9")])
    # swap two names of different types in one schema change
    t.alter(RenameColumn(("a",), "tmp"), RenameColumn(("d",), "a"), RenameColumn(("tmp",), "d"))
    t.insert([(10, 100, "r", "a10", "c10")])
    t.alter(AddColumn(("z",), T("DOUBLE")))  # newer than the latest snapshot
    names, rows = theirs(py_table(wh.path, "default.h"))
    assert names == ["id", "d", "b", "a", "c", "z"]
    assert rows[:3] == [row(1, 10, "x", None, None, None), row(10, 100, "r", "a10", "c10", None),
                        row(2, None, None, None, None, None)]
    assert row(7, 70, "u", "d7", "7000", None) in rows
    assert row(8, 2**40, "t", "d8", "8000", None) in rows
    assert row(5, 50, "w", "d5", None, None) in rows  # the old c is not the new c
    assert_reads_agree(t, wh.path, "default.h")


def test_pypaimon_reads_our_nested_evolution_at_every_snapshot(wh: sl.Warehouse) -> None:
    t = wh.create_table("n", cols(("id", "INT"), ("r", "ROW<x INT, y STRING>"),
                                  ("arr", "ARRAY<INT>"), ("m", "MAP<STRING, INT>"),
                                  ("ra", "ARRAY<ROW<k INT, v STRING>>")))
    t.insert([(1, (1, "a"), [1, 2], {"k": 1}, [(1, "one")]),
              (2, None, None, None, None), (3, (None, None), [], {}, [])])
    t.alter(RenameColumn(("r", "x"), "xx"), UpdateColumnType(("r", "xx"), T("BIGINT")),
            AddColumn(("r", "z"), T("DOUBLE")), RenameColumn(("ra", "element", "v"), "val"))
    t.insert([(4, (2**40, "b", 1.5), [3], {"j": 2}, [(2, "two"), None])])
    t.alter(DropColumn(("r", "y")), UpdateColumnType(("arr", "element"), T("BIGINT")),
            UpdateColumnType(("m", "value"), T("BIGINT")), AddColumn(("r", "y"), T("STRING")))
    t.insert([(5, (5, 2.5, "new y"), [2**40], {"q": 2**40}, None)])
    names, rows = theirs(py_table(wh.path, "default.n"))
    assert names == ["id", "r", "arr", "m", "ra"]
    # the re-added r.y is a new field: old values of the dropped r.y do not come back
    assert rows[0][1] == (1, None, None)
    assert_reads_agree(t, wh.path, "default.n")


FILTERS: list[tuple[str, Callable[[Any], Any], Callable[[dict[str, Any]], bool]]] = [
    ("id = 2", lambda b: b.equal("id", 2), lambda r: r["id"] == 2),
    ("id >= 3", lambda b: b.greater_or_equal("id", 3),
     lambda r: r["id"] is not None and r["id"] >= 3),
    ("id = 2^40", lambda b: b.equal("id", 2**40), lambda r: r["id"] == 2**40),
    ("name = banana", lambda b: b.equal("name", "banana"), lambda r: r["name"] == "banana"),
    ("name > b", lambda b: b.greater_than("name", "b"),
     lambda r: r["name"] is not None and r["name"] > "b"),
    ("name IS NULL", lambda b: b.is_null("name"), lambda r: r["name"] is None),
    ("day < 2024-02-01", lambda b: b.less_than("day", dt.date(2024, 2, 1)),
     lambda r: r["day"] is not None and r["day"] < dt.date(2024, 2, 1)),
    ("ts >= 2024-02-01 01:00", lambda b: b.greater_or_equal("ts", dt.datetime(2024, 2, 1, 1)),
     lambda r: r["ts"] is not None and r["ts"] >= dt.datetime(2024, 2, 1, 1)),
    ("p = 'a b'", lambda b: b.equal("p", "a b"), lambda r: r["p"] == "a b"),
    ("p IS NULL", lambda b: b.is_null("p"), lambda r: r["p"] is None),
    ("extra IS NOT NULL", lambda b: b.is_not_null("extra"), lambda r: r["extra"] is not None),
    ("amount > 1.00", lambda b: b.greater_than("amount", Decimal("1.00")),
     lambda r: r["amount"] is not None and r["amount"] > Decimal("1.00")),
    ("amount < 0", lambda b: b.less_than("amount", Decimal("0")),
     lambda r: r["amount"] is not None and r["amount"] < 0),
]


def test_pypaimon_filters_on_our_table_use_our_stats_and_partitions_correctly(
        wh: sl.Warehouse) -> None:
    """pypaimon prunes partitions and files with our manifests' partition BinaryRows and
    value statistics before it filters rows: wrong metadata would lose rows here."""
    t = wh.create_table("f", cols(("id", "INT"), ("s", "STRING"), ("day", "DATE"),
                                  ("ts", "TIMESTAMP(6)"), ("p", "STRING"),
                                  ("amount", "DECIMAL(10, 2)")),
                        partition_keys=["p"])
    t.insert([(1, "apple", dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 1), "a b",
               Decimal("1.50"))])
    t.insert([(2, "banana", dt.date(2024, 2, 1), dt.datetime(2024, 2, 1, 1), "a b",
               Decimal("-2.25")),
              (3, None, None, None, "c", None),
              (4, "date", dt.date(2024, 4, 1), None, None, Decimal("99999999.99"))])
    t.alter(RenameColumn(("s",), "name"), UpdateColumnType(("id",), T("BIGINT")),
            AddColumn(("extra",), T("INT")))
    t.insert([(2**40, "cherry", dt.date(2024, 3, 1), dt.datetime(2024, 3, 1, 1), "c",
               Decimal("0.01"), 9)])
    df = t.read()
    collected = df.collect()
    for label, predicate, keep in FILTERS:
        want = (list(df.columns), spark_rows([r for r in collected if keep(r.asDict())],
                                             df.schema))
        got = theirs(py_table(wh.path, "default.f"), predicate)
        assert got == want, label
        assert got[1], f"{label}: the filter should keep some rows"


# One column per type change, with values that pypaimon and our Spark read convert alike.
CASTS: list[tuple[str, str, list[Any]]] = [
    ("INT", "BIGINT", [1, -5]),
    ("INT", "STRING", [1, -5]),
    ("INT", "DOUBLE", [7, 8]),
    ("INT", "DECIMAL(12, 2)", [7, -8]),
    ("SMALLINT", "INT", [3, -4]),
    ("FLOAT", "DOUBLE", [1.5, 2.25]),
    ("FLOAT", "STRING", [0.1, 2.5]),
    ("BIGINT", "FLOAT", [1, 2]),
    ("BIGINT", "DOUBLE", [2**53 + 1, 3]),
    ("STRING", "INT", ["7", "-3"]),
    ("STRING", "DATE", ["2024-02-03", "2024-12-31"]),
    ("STRING", "BOOLEAN", ["true", "false"]),
    ("STRING", "TIMESTAMP(6)", ["2024-01-02 03:04:05.123456", "2024-01-02"]),
    ("STRING", "BYTES", ["ab", "c"]),
    ("INT", "BOOLEAN", [0, 3]),
    ("BOOLEAN", "INT", [True, False]),
    ("BOOLEAN", "STRING", [True, False]),
    ("DATE", "STRING", [dt.date(2022, 1, 8), dt.date(1960, 1, 1)]),
    ("DATE", "TIMESTAMP(6)", [dt.date(2022, 1, 8), dt.date(1960, 1, 1)]),
    ("TIMESTAMP(6)", "DATE", [dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(1970, 1, 1)]),
    ("DOUBLE", "INT", [1.9, -2.7]),
    ("DECIMAL(20, 2)", "INT", [Decimal("1.50"), Decimal("-2.75")]),
    ("DECIMAL(20, 2)", "STRING", [Decimal("1.50"), Decimal("-2.75")]),
    ("DECIMAL(20, 2)", "DECIMAL(22, 3)", [Decimal("1.50"), Decimal("-2.75")]),
    ("DECIMAL(10, 2)", "DECIMAL(12, 3)", [Decimal("1.50"), Decimal("-2.75")]),
    ("DECIMAL(10, 2)", "DOUBLE", [Decimal("1.50"), Decimal("-2.75")]),
    ("DECIMAL(10, 2)", "INT", [Decimal("1.50"), Decimal("-2.75")]),
    ("BYTES", "STRING", [b"ab", b"c"]),
]


def _cast_columns() -> list[tuple[str, str, str, list[Any]]]:
    return [(f"c{i}", src, dst, vals) for i, (src, dst, vals) in enumerate(CASTS)]


def test_pypaimon_reads_our_type_changes_like_we_do(wh: sl.Warehouse) -> None:
    columns = _cast_columns()
    t = wh.create_table("casts", [ColumnSpec("id", T("INT"))]
                        + [ColumnSpec(n, T(src)) for n, src, _, _ in columns])
    t.insert([(k, *[vals[k] for _, _, _, vals in columns]) for k in range(2)]
             + [(2, *[None] * len(columns))])
    t.alter(*[UpdateColumnType((n,), T(dst)) for n, _, dst, _ in columns])
    assert_reads_agree(t, wh.path, "default.casts")


def test_narrowing_and_unparsable_values_differ_from_pypaimon_as_documented(
        wh: sl.Warehouse) -> None:
    for mode in ("explicit", "explicit-null"):
        name = f"narrow_{mode.replace('-', '_')}"
        t = wh.create_table(name, cols(("id", "INT"), ("v", "BIGINT"), ("s", "STRING")),
                            options={"cast.mode": mode})
        t.insert([(1, 2**40 + 5, "7"), (2, 3, "abc")])
        t.alter(UpdateColumnType(("v",), T("INT")))
        # pypaimon (like Java Paimon's CastExecutor) wraps an overflowing BIGINT -> INT:
        # 2^40 + 5 reads as 5.
        assert theirs(py_table(wh.path, f"default.{name}"))[1] == [row(1, 5, "7"),
                                                                    row(2, 3, "abc")]
        if mode == "explicit":
            # we fail the read on a value that does not fit, naming table, column and mode
            with pytest.raises(PySparkException, match=r"cannot be cast from BIGINT to INT"):
                t.read().collect()
        else:
            # explicit-null: the value that does not fit reads as NULL
            assert ours(t.read())[1] == [row(1, None, "7"), row(2, 3, "abc")]
        t.alter(UpdateColumnType(("s",), T("INT")))
        # pypaimon fails the whole read on one unparsable string, whatever cast.mode says
        with pytest.raises(pa.ArrowInvalid, match="abc"):
            py_arrow(py_table(wh.path, f"default.{name}"))
        only_s = t.read().select("id", "s")  # v (which would fail first) pruned away
        if mode == "explicit":
            with pytest.raises(PySparkException,
                               match=r"'abc' cannot be cast from STRING to INT"):
                only_s.collect()
        else:
            assert ours(only_s)[1] == [row(1, 7), row(2, None)]


# ============================================================================================
# 2a. We read the warehouses pypaimon wrote (tests/fixtures)
# ============================================================================================

FIXTURE_APPEND_TABLES = [("wh", "demo.events"), ("wh5", "s.full")]
FIXTURE_NESTED_TABLE = ("wh6", "n.t")
FIXTURE_PK_TABLE = ("wh", "demo.users")


def _fixture_path(root: Path, wh_name: str, ident: str) -> Path:
    db, name = ident.split(".")
    return root / wh_name / f"{db}.db" / name


def test_every_fixture_table_is_covered(pypaimon_warehouses: Path) -> None:
    found = {(p.parent.parent.parent.name, f"{p.parent.parent.name[:-3]}.{p.parent.name}")
             for p in pypaimon_warehouses.glob("*/*.db/*/schema")}
    covered = {*FIXTURE_APPEND_TABLES, FIXTURE_NESTED_TABLE, FIXTURE_PK_TABLE}
    assert found == covered


@pytest.mark.parametrize(("wh_name", "ident"), FIXTURE_APPEND_TABLES,
                         ids=[i for _, i in FIXTURE_APPEND_TABLES])
def test_we_read_fixture_tables_as_pypaimon_does(spark: Any, pypaimon_warehouses: Path,
                                                 wh_name: str, ident: str) -> None:
    t = open_table(_fixture_path(pypaimon_warehouses, wh_name, ident), spark=spark)
    assert len(t.snapshots) >= 1
    assert_reads_agree(t, pypaimon_warehouses / wh_name, ident)


def test_fixture_events_history_reads_as_expected(spark: Any, pypaimon_warehouses: Path) -> None:
    """demo.events: 3 rows in schema 0, then rename, drop, INT->BIGINT, INT->STRING, add, and
    2 rows in schema 5. Snapshot 1 reads with schema 0's names and types."""
    t = open_table(_fixture_path(pypaimon_warehouses, "wh", "demo.events"), spark=spark)
    names, rows = ours(t.read())
    assert names == ["id", "full_name", "amount", "qty", "dt", "note"]
    assert row(1, "a", 10, "1", "2024-01-01", None) in rows
    assert row(4, "d", 1099511627776, "x4", "2024-01-02", "new") in rows
    names, rows = ours(t.read(snapshot_id=1))
    assert names == ["id", "name", "amount", "qty", "score", "dt"]
    assert rows[0] == row(1, "a", 10, 1, 0.5, "2024-01-01")


def test_we_read_fixture_nested_table_as_pypaimon_does(spark: Any,
                                                       pypaimon_warehouses: Path) -> None:
    wh_name, ident = FIXTURE_NESTED_TABLE
    t = open_table(_fixture_path(pypaimon_warehouses, wh_name, ident), spark=spark)
    assert_reads_agree(t, pypaimon_warehouses / wh_name, ident)


def test_primary_key_table_is_merged_or_refused(spark: Any, pypaimon_warehouses: Path) -> None:
    wh_name, ident = FIXTURE_PK_TABLE
    t = open_table(_fixture_path(pypaimon_warehouses, wh_name, ident), spark=spark)
    assert t.schema.primary_keys == ("dt", "id")
    problems = []
    for snapshot_id in [None, *(s.id for s in t.snapshots)]:
        try:
            got = ours(t.read(snapshot_id=snapshot_id))
        except SchemaLabError as e:  # refusing is fine, if it says why
            assert "primary" in str(e).lower()
            continue
        want = theirs(py_table(pypaimon_warehouses / wh_name, ident, snapshot_id))
        if got != want:
            problems.append(f"snapshot {snapshot_id}: ours={got[1]} pypaimon={want[1]}")
    assert not problems, "\n".join(problems)


# ============================================================================================
# 2b. We read tables a test writes with pypaimon
# ============================================================================================


def test_we_read_a_pypaimon_evolution_history_at_every_snapshot(spark: Any,
                                                                 tmp_path: Path) -> None:
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("h", pa.schema([("id", pa.int32()), ("a", pa.int32()), ("b", pa.string()),
                                      ("c", pa.int32()), ("p", pa.string())]),
                      partition_keys=["p"])
    pw.write(ident, [{"id": 1, "a": 1, "b": "x", "c": 7, "p": "p 1"},
                     {"id": 2, "a": None, "b": None, "c": None, "p": None}])
    pw.alter(ident, PyChange.add_column("e", AtomicType("STRING")))
    pw.write(ident, [{"id": 3, "a": 3, "b": "y", "c": 8, "p": "p 1", "e": "e3"}])
    pw.alter(ident, PyChange.rename_column("b", "bb"),
             PyChange.update_column_type("a", AtomicType("BIGINT")))
    pw.write(ident, [{"id": 4, "a": 2**40, "bb": "z", "c": 9, "p": "p2", "e": "e4"}])
    pw.alter(ident, PyChange.drop_column("c"))
    pw.write(ident, [{"id": 5, "a": 5, "bb": "w", "p": "p2", "e": "e5"}])
    pw.alter(ident, PyChange.add_column("c", AtomicType("INT")),  # re-add: a new field id
             PyChange.rename_column("bb", "b"))  # rename back
    pw.write(ident, [{"id": 6, "a": 6, "b": "v", "p": "p 1", "e": "e6", "c": 60}])
    pw.alter(ident, PyChange.update_column_type("id", AtomicType("STRING")))  # INT -> STRING
    pw.write(ident, [{"id": "7x", "a": 7, "b": "u", "p": None, "e": "e7", "c": 70}])
    pw.alter(ident, PyChange.rename_column("a", "tmp"), PyChange.rename_column("e", "a"),
             PyChange.rename_column("tmp", "e"))  # swap names of different types
    pw.write(ident, [{"id": "8", "e": 8, "b": "t", "p": "p2", "a": "a8", "c": 80}])
    pw.alter(ident, PyChange.add_column("z", AtomicType("DOUBLE")))  # after the last snapshot

    t = open_table(pw.path(ident), spark=spark)
    names, rows = ours(t.read())
    assert names == ["id", "e", "b", "p", "a", "c", "z"]
    assert row("1", 1, "x", "p 1", None, None, None) in rows
    assert row("4", 2**40, "z", "p2", "e4", None, None) in rows
    assert row("8", 8, "t", "p2", "a8", 80, None) in rows
    assert row("2", None, None, None, None, None, None) in rows
    assert_reads_agree(t, pw.root, ident)


def test_we_read_pypaimon_type_changes_like_pypaimon(spark: Any, tmp_path: Path) -> None:
    pw = PyWriter(tmp_path / "py")
    columns = _cast_columns()
    ident = pw.create("casts", pa.schema([("id", pa.int32())]
                                         + [(n, to_arrow(T(src))) for n, src, _, _ in columns]))
    pw.write(ident, [{"id": k, **{n: vals[k] for n, _, _, vals in columns}} for k in range(2)]
             + [{"id": 2}])
    pw.alter(ident, *[PyChange.update_column_type(n, py_type(dst)) for n, _, dst, _ in columns])
    pw.write(ident, [{"id": 3}])
    assert_reads_agree(open_table(pw.path(ident), spark=spark), pw.root, ident)


def _one_cast(spark: Any, tmp_path: Path, src: pa.DataType, dst: str,
              values: list[Any]) -> tuple[list[Any], Any]:
    """pypaimon writes ``values`` as ``src`` and retypes the column to ``dst``: its values,
    and our table."""
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("one", pa.schema([("id", pa.int32()), ("v", src)]))
    pw.write(ident, [{"id": i, "v": v} for i, v in enumerate(values)])
    pw.alter(ident, PyChange.update_column_type("v", py_type(dst)))
    arrow = py_arrow(py_table(pw.root, ident))
    theirs_values = [r["v"] for r in sorted(arrow.to_pylist(), key=lambda r: r["id"])]
    return theirs_values, open_table(pw.path(ident), spark=spark)


def _our_values(table: Table) -> list[Any]:
    return [r["v"] for r in sorted(table.read().collect(), key=lambda r: r["id"])]


def test_double_to_string_formats_like_java_not_like_pypaimon(spark: Any,
                                                              tmp_path: Path) -> None:
    theirs_values, t = _one_cast(spark, tmp_path, pa.float64(), "STRING", [1.5, 1e20, None])
    # Java Paimon formats with String.valueOf(double) ("1.0E20"), as Spark does; pypaimon
    # uses Arrow's cast ("1e+20"). A pypaimon deviation, not ours.
    assert theirs_values == ["1.5", "1e+20", None]
    assert _our_values(t) == ["1.5", "1.0E20", None]


def test_timestamp_to_string_keeps_the_source_precision(spark: Any, tmp_path: Path) -> None:
    values = [dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(1970, 1, 1, 0, 0, 0, 5), None]
    theirs_values, t = _one_cast(spark, tmp_path, pa.timestamp("us"), "STRING", values)
    assert theirs_values == ["2023-11-14 22:13:20.000000", "1970-01-01 00:00:00.000005", None]
    assert _our_values(t) == theirs_values


def test_timestamp_to_bigint_reads_epoch_seconds(spark: Any, tmp_path: Path) -> None:
    values = [dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(1970, 1, 1), None]
    theirs_values, t = _one_cast(spark, tmp_path, pa.timestamp("us"), "BIGINT", values)
    assert theirs_values == [1_700_000_000_000_000, 0, None]  # pypaimon: microseconds
    assert _our_values(t) == [1_700_000_000, 0, None]


PY_TYPES: list[tuple[str, pa.DataType, Any]] = [
    ("ti", pa.int8(), -128), ("si", pa.int16(), 32767), ("f", pa.float32(), 1.5),
    ("d", pa.float64(), float("nan")), ("dec", pa.decimal128(10, 2), Decimal("-12345678.91")),
    ("dec30", pa.decimal128(30, 4), Decimal("12345678901234567890.1234")),
    ("ts3", pa.timestamp("ms"), dt.datetime(2024, 1, 1, 1, 2, 3, 456000)),
    ("ts6", pa.timestamp("us"), dt.datetime(1900, 1, 1, 0, 0, 0, 1)),
    ("ltz", pa.timestamp("us", tz="UTC"), dt.datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=UTC)),
    ("bin", pa.binary(), b"\xff\x00"), ("fbin", pa.binary(3), b"abc"),
    ("day", pa.date32(), dt.date(1, 1, 1)), ("s", pa.large_string(), "ünï"),
    ("b", pa.bool_(), False),
]


def test_we_read_pypaimon_types(spark: Any, tmp_path: Path) -> None:
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("types", pa.schema([(n, ty) for n, ty, _ in PY_TYPES]))
    pw.write(ident, [{n: v for n, _, v in PY_TYPES}, {}])
    t = open_table(pw.path(ident), spark=spark)
    assert ours(t.read())[1] == sorted([row(*[v for _, _, v in PY_TYPES]),
                                        row(*[None] * len(PY_TYPES))], key=repr)
    assert_reads_agree(t, pw.root, ident)


@pytest.mark.parametrize("arrow_type", [
    pytest.param(pa.timestamp("ns"), id="TIMESTAMP(9)"),
    pytest.param(pa.time32("ms"), id="TIME(0)"),
])
def test_we_read_pypaimon_types_spark_stores_otherwise(spark: Any, tmp_path: Path,
                                                      arrow_type: pa.DataType) -> None:
    """pyarrow stores TIMESTAMP(9) as INT64 nanoseconds and TIME as INT32 milliseconds, which
    Spark's reader refuses for those types: the footer says so and we read them as numbers."""
    # whole seconds for TIME(0): pyarrow would store milliseconds the declared precision
    # has no room for, which pypaimon returns and Spark's TIME(0) drops
    value = (dt.datetime(2024, 1, 1, 1, 2, 3, 456789) if pa.types.is_timestamp(arrow_type)
             else dt.time(23, 59, 59))
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("t", pa.schema([("id", pa.int32()), ("v", arrow_type)]))
    pw.write(ident, [{"id": 1, "v": value}, {"id": 2, "v": None}])
    t = open_table(pw.path(ident), spark=spark)
    got = ours(t.read())
    assert got == theirs(py_table(pw.root, ident))
    assert got[1] == sorted([row(1, value), row(2, None)], key=repr)


def test_pypaimon_reads_our_time_columns(wh: sl.Warehouse) -> None:
    t = wh.create_table("tm", cols(("id", "INT"), ("v", "TIME(0)"), ("w", "TIME(3)")))
    t.insert([(1, dt.time(1, 2, 3), dt.time(4, 5, 6, 789000)), (2, None, None)])
    assert theirs(py_table(wh.path, "default.tm"))[1] == sorted(
        [row(1, dt.time(1, 2, 3), dt.time(4, 5, 6, 789000)), row(2, None, None)], key=repr)
    assert_reads_agree(t, wh.path, "default.tm")


def test_we_read_a_pypaimon_fixed_bucket_table_and_agree_on_buckets(spark: Any,
                                                                     tmp_path: Path) -> None:
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("bk", pa.schema([("id", pa.int32()), ("k", pa.string()),
                                       ("p", pa.string())]),
                      partition_keys=["p"], options={"bucket": "3", "bucket-key": "id,k"})
    pw.write(ident, [{"id": i, "k": f"key-{i}" * (i % 3), "p": "x y" if i % 2 else None}
                     for i in range(20)])
    pw.alter(ident, PyChange.add_column("v", AtomicType("DOUBLE")))
    pw.write(ident, [{"id": 20, "k": "a much longer key", "p": "x y", "v": 0.5}])
    t = open_table(pw.path(ident), spark=spark)
    files = t.data_files(t.latest_snapshot)
    assert {f.bucket for f in files} == {0, 1, 2}
    for f in files:  # schemalab's bucket function agrees with pypaimon's placement
        for r in pq.ParquetFile(f.path).read().to_pylist():
            assert bucket_of([r["id"], r["k"]], [T("INT"), T("STRING")], 3) == f.bucket
    assert_reads_agree(t, pw.root, ident)


def test_we_read_a_pypaimon_nested_history(spark: Any, tmp_path: Path) -> None:
    """pypaimon's files carry no field ids, nested fields included: we match them by the
    names of the schema each file was written with, then by id."""
    pw = PyWriter(tmp_path / "py")
    ident = pw.create("n", pa.schema([
        ("id", pa.int32()),
        ("r", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("arr", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("ra", pa.list_(pa.struct([("k", pa.int32()), ("v", pa.string())])))]))
    pw.write(ident, [{"id": 1, "r": {"x": 1, "y": "a"}, "arr": [1, 2], "m": [("k", 1)],
                      "ra": [{"k": 1, "v": "one"}]},
                     {"id": 2}, {"id": 3, "r": {}, "arr": [], "m": [], "ra": [None]}])
    pw.alter(ident, PyChange.rename_column(["r", "x"], "xx"),
             PyChange.update_column_type(["r", "xx"], AtomicType("BIGINT")),
             PyChange.add_column(["r", "z"], AtomicType("DOUBLE")),
             PyChange.rename_column(["ra", "element", "v"], "val"))
    pw.write(ident, [{"id": 4, "r": {"xx": 2**40, "y": "b", "z": 1.5}, "arr": [3],
                      "m": [("j", 2)], "ra": [{"k": 2, "val": "two"}]}])
    pw.alter(ident, PyChange.drop_column(["r", "y"]),
             PyChange.add_column(["r", "y"], AtomicType("STRING")),  # same name, new id
             PyChange.update_column_type(["arr", "element"], AtomicType("BIGINT")),
             PyChange.update_column_type(["m", "value"], AtomicType("BIGINT")))
    pw.write(ident, [{"id": 5, "r": {"xx": 5, "z": 2.5, "y": "new y"}, "arr": [2**40],
                      "m": [("q", 2**40)]}])
    t = open_table(pw.path(ident), spark=spark)
    names, rows = ours(t.read())
    assert names == ["id", "r", "arr", "m", "ra"]
    # the re-added r.y is a new field: the dropped r.y's "a" does not come back
    assert rows[0] == row(1, (1, None, None), (1, 2), ("map", (("k", 1),)), ((1, "one"),))
    assert row(5, (5, 2.5, "new y"), (2**40,), ("map", (("q", 2**40),)), None) in rows
    assert_reads_agree(t, pw.root, ident)
