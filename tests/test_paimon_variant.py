"""Paimon's VARIANT type (Paimon 1.1+), read as Spark 4's VariantType (issue 23). pypaimon
2.1 writes a VARIANT column as ``struct<value, metadata>`` in Parquet (two binaries; Java
Paimon 2.0 writes the same group, ``value`` then ``metadata``). schemalab reads such tables
with evolution around the column, shows the type in ``inspect``, and writes VARIANT values
that pypaimon reads back; a shredded VARIANT (``variant.shreddingSchema``) is refused by
name. Java Paimon 2.0 judges the same in tests/test_interop_paimon_2x.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from oracles import pypaimon_write
from test_paimon_2x_features import _catalog

import schemalab as sl

VALUES = [{"a": 1, "b": "x"}, [1, 2.5, None], "str", None, {"n": {"m": [True, False]}}]
_VARIANT = pa.struct([pa.field("value", pa.binary(), nullable=False),
                      pa.field("metadata", pa.binary(), nullable=False)])


def _variants(values: list[Any]) -> pa.Array:
    from pypaimon.data.generic_variant import GenericVariant

    return GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(v) for v in values])


def build_variant_table(root: Path, options: dict[str, str] | None = None) -> str:
    """pypaimon: ``(id INT, v VARIANT)`` with five rows (an object, an array, a string, a
    NULL, a nested object), then ``v`` renamed to ``payload``, a column ``k`` added, and
    one more row."""
    from pypaimon import Schema
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    schema = pa.schema([("id", pa.int32()), ("v", _VARIANT)])
    cat = _catalog(root)
    cat.create_table("default.vt", Schema.from_pyarrow_schema(schema, options=options or {}),
                     False)
    _write(cat, pa.table({"id": pa.array(range(1, 6), pa.int32()), "v": _variants(VALUES)},
                         schema=schema))
    cat.alter_table("default.vt", [SchemaChange.rename_column("v", "payload"),
                                   SchemaChange.add_column("k", AtomicType("STRING"))])
    evolved = pa.schema([("id", pa.int32()), ("payload", _VARIANT), ("k", pa.string())])
    _write(cat, pa.table({"id": pa.array([6], pa.int32()), "payload": _variants([{"z": 0}]),
                          "k": ["k6"]}, schema=evolved))
    return str(root / "default.db" / "vt")


def _write(cat: Any, data: pa.Table) -> None:
    t = cat.get_table("default.vt")
    pypaimon_write.append(t, data)


def _json(v: Any) -> Any:
    """A value as JSON text gives it back (Spark's VariantVal, pypaimon's GenericVariant)."""
    return None if v is None else json.loads(v if isinstance(v, str) else v.toJson())


def _pypaimon_values(root: Path, column: str) -> dict[int, Any]:
    from pypaimon.data.generic_variant import GenericVariant

    t = _catalog(root).get_table("default.vt")
    rb = t.new_read_builder()
    out = {}
    for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist():
        v = r[column]
        out[r["id"]] = None if v is None else GenericVariant.from_arrow_struct(v).to_python()
    return out


def test_variant_reads_as_spark_variant_with_evolution(tmp_path: Path, spark: Any) -> None:
    from pyspark.sql import types as st

    root = tmp_path / "wh"
    path = build_variant_table(root)
    t = sl.open_table(path, spark=spark)
    assert [(f.name, f.type.sql()) for f in t.schema.fields] == [
        ("id", "INT"), ("payload", "VARIANT"), ("k", "STRING")]
    df = t.read()
    assert isinstance(df.schema["payload"].dataType, st.VariantType)
    got = {r["id"]: (_json(r["payload"]), r["k"]) for r in df.collect()}
    expected = {i + 1: (v, None) for i, v in enumerate(VALUES)} | {6: ({"z": 0}, "k6")}
    assert got == expected
    assert {i: v for i, (v, _) in got.items()} == _pypaimon_values(root, "payload")
    # the first snapshot, in its own schema: the column was still v
    first = {r["id"]: _json(r["v"]) for r in t.read(snapshot_id=1).collect()}
    assert first == dict(enumerate(VALUES, start=1))
    # Spark's variant functions work on it
    wh = sl.Warehouse(root, spark=spark)
    picked = wh.sql("SELECT id, variant_get(payload, '$.a', 'int') AS a FROM vt WHERE id = 1")
    assert [tuple(r) for r in picked.collect()] == [(1, 1)]
    doc = t.history().to_json()
    assert {"id": 1, "name": "v", "type": "VARIANT", "nullable": True} in \
        doc["schemas"][0]["fields"]


def test_variant_written_by_schemalab_reads_in_pypaimon(tmp_path: Path, spark: Any) -> None:
    """An INSERT of VARIANT values (``parse_json``) and a VARIANT column added by ALTER:
    pypaimon reads the values back, Spark's and schemalab's reads agree."""
    root = tmp_path / "wh"
    build_variant_table(root)
    wh = sl.Warehouse(root, spark=spark)
    wh.sql("""ALTER TABLE vt ADD COLUMN extra VARIANT;
              INSERT INTO vt VALUES (7, parse_json('{"q": [1, "two"]}'), 'k7',
                                     parse_json('3.5'))""")
    assert _pypaimon_values(root, "payload")[7] == {"q": [1, "two"]}
    assert _pypaimon_values(root, "extra")[7] == 3.5
    assert _pypaimon_values(root, "extra")[1] is None
    got = {r["id"]: _json(r["payload"]) for r in wh.sql("SELECT * FROM vt").collect()}
    assert got[7] == {"q": [1, "two"]} and got[1] == {"a": 1, "b": "x"}


def test_variant_cannot_be_retyped(tmp_path: Path, spark: Any) -> None:
    root = tmp_path / "wh"
    build_variant_table(root)
    wh = sl.Warehouse(root, spark=spark)
    with pytest.raises(sl.SchemaLabError) as e:
        wh.sql("ALTER TABLE vt ALTER COLUMN payload TYPE STRING")
    assert e.value.column == "payload"
    with pytest.raises(sl.SchemaLabError) as e:
        wh.sql("ALTER TABLE vt ALTER COLUMN k TYPE VARIANT")
    assert e.value.column == "k"


def test_shredded_variant_reads_as_pypaimon_wrote_it(tmp_path: Path, spark: Any) -> None:
    """pypaimon's static shredding (``variant.shreddingSchema``): the column is a group of
    ``metadata``, ``value`` and a ``typed_value`` group per shredded key; Spark 4 reassembles
    it, so the values read as they were written."""
    from pypaimon import Schema

    shredding = {"type": "ROW", "fields": [{"id": 0, "name": "v", "type": {
        "type": "ROW", "fields": [{"id": 0, "name": "a", "type": "BIGINT"}]}}]}
    root = tmp_path / "wh"
    cat = _catalog(root)
    schema = pa.schema([("id", pa.int32()), ("v", _VARIANT)])
    cat.create_table("default.vt", Schema.from_pyarrow_schema(
        schema, options={"variant.shreddingSchema": json.dumps(shredding)}), False)
    values = [{"a": 1, "b": "x"}, {"a": 2}, {"c": [3]}, None]
    _write(cat, pa.table({"id": pa.array(range(1, 5), pa.int32()), "v": _variants(values)},
                         schema=schema))
    path = root / "default.db" / "vt"
    [data] = [p for p in path.rglob("*.parquet")]
    import pyarrow.parquet as pq

    assert "typed_value" in str(pq.ParquetFile(data).schema)
    got = {r["id"]: _json(r["v"]) for r in sl.open_table(path, spark=spark).read().collect()}
    assert got == dict(enumerate(values, start=1)) == _pypaimon_values(root, "v")
