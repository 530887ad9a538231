"""Iceberg metadata tables from an oracle engine, and their comparison with schemalab's.

An :class:`OracleTable` is one engine's answer for one metadata table: column names, Spark
types (``simpleString()``, and, where the engine gives a full Spark schema, nullability) and
rows in the canonical form of ``fixtures/iceberg-java-1.10/README.md``. Any engine can supply
one: :func:`pyiceberg_oracle` builds it from pyiceberg's ``table.inspect``;
:meth:`OracleTable.from_spark` from a Spark DataFrame (Java Iceberg's own ``t.snapshots``
read by Spark), :meth:`OracleTable.from_canonical` from the fixture JSON's columns, types and
rows, :meth:`OracleTable.from_iceberg` from Java Iceberg's metadata table read without
Spark (its schema JSON and canonical rows). :func:`compare_system_table` then lists every
difference from schemalab's DataFrame, column by column, leaving out the differences the
caller *knows* (:class:`Known`), each with its reason.

Paths are compared relative to the table directory (``db/<name>/``): the tables were written
elsewhere and every engine reports the paths the metadata names, except the current metadata
file, which each reports where it opened it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from iceberg_canonical import canonical_value
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyspark.sql import types as st

__all__ = ["Known", "OracleTable", "RemapFileIO", "arrow_to_spark", "compare_system_table",
           "pyiceberg_oracle"]

#: columns whose values are file locations
PATH_COLUMNS = frozenset({"manifest_list", "path", "file_path", "file", "referenced_data_file"})


@dataclass(frozen=True)
class OracleTable:
    engine: str
    columns: list[str]
    types: list[str]
    #: each column's Spark type with nullability (``StructField.jsonValue()``), if known
    fields: list[dict[str, Any]] | None
    #: one list of canonical values per row
    rows: list[list[Any]]

    @classmethod
    def from_spark(cls, engine: str, schema: st.StructType, rows: Sequence[Sequence[Any]]
                   ) -> OracleTable:
        """From a schema and rows as PySpark hands them (``df.schema``, ``df.collect()``)."""
        types = [f.dataType for f in schema.fields]
        return cls(engine, [f.name for f in schema.fields], [t.simpleString() for t in types],
                   [_field_json(f) for f in schema.fields],
                   [[canonical_value(v, t) for v, t in zip(r, types, strict=True)]
                    for r in rows])

    @classmethod
    def from_iceberg(cls, engine: str, schema_json: Mapping[str, Any],
                     rows: Sequence[Sequence[Any] | str]) -> OracleTable:
        """From Java Iceberg's own metadata table: its schema as ``SchemaParser.toJson``
        writes it (turned into Spark types as Iceberg's TypeToSparkType does) and canonical
        rows (lists of values or their JSON texts)."""
        from schemalab.iceberg.spark_values import spark_type
        from schemalab.iceberg.types import IcebergStructType, parse_fields

        spark = spark_type(IcebergStructType(parse_fields(dict(schema_json), 3, "")))
        assert isinstance(spark, st.StructType)
        return cls(engine, [f.name for f in spark.fields],
                   [f.dataType.simpleString() for f in spark.fields],
                   [_field_json(f) for f in spark.fields],
                   [json.loads(r) if isinstance(r, str) else list(r) for r in rows])

    @classmethod
    def from_canonical(cls, engine: str, columns: list[str], types: list[str],
                       rows: Sequence[str]) -> OracleTable:
        """From the fixture JSON's form: ``simpleString()`` types and canonical row texts."""
        return cls(engine, columns, types, None, [json.loads(r) for r in rows])


def _field_json(f: st.StructField) -> dict[str, Any]:
    """A field's type and nullability, nested too, without metadata (comments)."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "metadata"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return strip(f.jsonValue())


@dataclass(frozen=True)
class Known:
    """A difference the oracle is known to have in one column, and why. ``kind``:
    ``"type"`` (type or nullability; must differ, so a fixed oracle is noticed),
    ``"missing"`` (the oracle has no such column; must be missing), ``"extra"`` (only the
    oracle has it), ``"values"`` (values may differ: the difference shows only on some
    tables)."""

    kind: str
    reason: str
    #: for a ``"type"`` difference: the values differ too (else they are compared)
    values_differ: bool = False


def _relative(value: Any, table_dir: str) -> Any:
    if isinstance(value, str):
        marker = f"/{table_dir}/"
        at = value.find(marker)
        return value[at + len(marker):] if at >= 0 else value
    return value


def compare_system_table(ours: Any, oracle: OracleTable, *, table_dir: str,
                         known: Mapping[str, Known] | None = None,
                         oracle_values: Mapping[str, Callable[[Any], Any]] | None = None
                         ) -> list[str]:
    """Every difference between schemalab's DataFrame ``ours`` and ``oracle``, as sentences
    (empty: equal). Columns in ``known`` are left out of the type (and, unless only the
    type differs, the value) comparison; a ``"type"``, ``"missing"`` or ``"extra"`` entry
    whose difference is gone is reported too. ``oracle_values`` maps a column to a function
    that rewrites the oracle's canonical values first (a known spelling difference)."""
    known = dict(known or {})
    for col, fix in (oracle_values or {}).items():
        if col in oracle.columns:
            j = oracle.columns.index(col)
            oracle = OracleTable(oracle.engine, oracle.columns, oracle.types, oracle.fields,
                                 [[*r[:j], fix(r[j]), *r[j + 1:]] for r in oracle.rows])
    if hasattr(ours, "collect"):  # a DataFrame; else schemalab's SystemTableData
        mine = OracleTable.from_spark("schemalab", ours.schema, [tuple(r) for r in ours.collect()])
    else:
        mine = OracleTable.from_spark("schemalab", ours.schema, ours.rows)
    problems: list[str] = []
    for col, k in known.items():
        here, there = col in mine.columns, col in oracle.columns
        if k.kind == "missing" and (there or not here):
            problems.append(f"{col}: known to be only in schemalab ({k.reason}), but "
                            f"{'schemalab has' if here else 'it is in'} {oracle.engine}")
        if k.kind == "extra" and (here or not there):
            problems.append(f"{col}: known to be only in {oracle.engine} ({k.reason}), but "
                            f"schemalab has it" if here else f"{oracle.engine} has not")
    expected_cols = [c for c in mine.columns if not (c in known and known[c].kind == "missing")]
    oracle_cols = [c for c in oracle.columns if not (c in known and known[c].kind == "extra")]
    if expected_cols != oracle_cols:
        problems.append(f"columns differ: schemalab {mine.columns}, {oracle.engine} "
                        f"{oracle.columns}")
        return problems
    compared = []
    for col in oracle_cols:
        i, j = mine.columns.index(col), oracle.columns.index(col)
        type_diff = _type_difference(mine, i, oracle, j)
        k = known.get(col)
        if k is not None and k.kind == "type" and type_diff is None:
            problems.append(f"{col}: known type difference ({k.reason}) is gone")
        if type_diff is not None and k is None:
            problems.append(f"{col}: {type_diff}")
        if k is None or (k.kind == "type" and not k.values_differ):
            compared.append((i, j))
    problems.extend(_value_differences(mine, oracle, compared, table_dir))
    return problems


def _type_difference(mine: OracleTable, i: int, oracle: OracleTable, j: int) -> str | None:
    if mine.types[i] != oracle.types[j]:
        return f"type {mine.types[i]} here, {oracle.types[j]} in {oracle.engine}"
    if oracle.fields is not None and mine.fields is not None:
        a, b = dict(mine.fields[i]), dict(oracle.fields[j])
        if a != b:
            return f"nullability differs: {json.dumps(a)} here, {json.dumps(b)} in {oracle.engine}"
    return None


def _value_differences(mine: OracleTable, oracle: OracleTable,
                       compared: list[tuple[int, int]], table_dir: str) -> list[str]:
    def project(rows: list[list[Any]], idx: Callable[[tuple[int, int]], int],
                names: list[str]) -> Counter[str]:
        return Counter(json.dumps([
            _relative(r[idx(p)], table_dir) if names[idx(p)] in PATH_COLUMNS else r[idx(p)]
            for p in compared], sort_keys=True) for r in rows)

    a = project(mine.rows, lambda p: p[0], mine.columns)
    b = project(oracle.rows, lambda p: p[1], oracle.columns)
    if a == b:
        return []
    out = [f"rows differ ({sum(a.values())} here, {sum(b.values())} in {oracle.engine})"]
    for i, j in compared:  # name the columns whose values differ
        col = oracle.columns[j]
        va = Counter(json.dumps(_relative(r[i], table_dir), sort_keys=True) for r in mine.rows)
        vb = Counter(json.dumps(_relative(r[j], table_dir), sort_keys=True) for r in oracle.rows)
        if va != vb:
            out.append(f"{col}: only here {sorted((va - vb).elements())[:3]}, only in "
                       f"{oracle.engine} {sorted((vb - va).elements())[:3]}")
    return out


# ---- pyiceberg ------------------------------------------------------------------------------


class RemapFileIO(PyArrowFileIO):
    """pyiceberg's local FileIO, reading files the metadata names under
    ``schemalab.remap-from`` from ``schemalab.remap-to`` (the fixture tables were written
    under another directory than the one they are unpacked in)."""

    def _map(self, location: str) -> str:
        src, dst = self.properties["schemalab.remap-from"], self.properties["schemalab.remap-to"]
        return dst + location[len(src):] if location.startswith(src) else location

    def new_input(self, location: str) -> Any:
        return super().new_input(self._map(location))


def arrow_to_spark(t: pa.DataType) -> st.DataType:
    """The Spark type a pyarrow type corresponds to (dictionary strings are strings)."""
    if pa.types.is_dictionary(t):
        return arrow_to_spark(t.value_type)
    if pa.types.is_struct(t):
        return st.StructType([st.StructField(f.name, arrow_to_spark(f.type), f.nullable)
                              for f in t])
    if pa.types.is_map(t):
        return st.MapType(arrow_to_spark(t.key_type), arrow_to_spark(t.item_type),
                          t.item_field.nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return st.ArrayType(arrow_to_spark(t.value_type), t.value_field.nullable)
    if pa.types.is_timestamp(t):
        return st.TimestampType() if t.tz else st.TimestampNTZType()
    if pa.types.is_decimal(t):
        return st.DecimalType(t.precision, t.scale)
    simple = {pa.int8(): st.ByteType(), pa.int16(): st.ShortType(), pa.int32(): st.IntegerType(),
              pa.int64(): st.LongType(), pa.bool_(): st.BooleanType(), pa.string(): st.StringType(),
              pa.large_string(): st.StringType(), pa.binary(): st.BinaryType(),
              pa.large_binary(): st.BinaryType(), pa.float32(): st.FloatType(),
              pa.float64(): st.DoubleType(), pa.date32(): st.DateType(), pa.null(): st.NullType()}
    if t in simple:
        return simple[t]
    if pa.types.is_fixed_size_binary(t):
        return st.BinaryType()
    raise TypeError(f"no Spark type for {t}")


def _spark_like(value: Any, t: st.DataType) -> Any:
    """A pyarrow ``to_pylist`` value as PySpark would hand it for ``t`` (maps as dicts,
    structs as tuples, timestamps as naive UTC; canonical_value treats a TimestampType value
    as local time, so those become aware)."""
    import datetime as dt

    if value is None:
        return None
    if isinstance(t, st.StructType):
        return tuple(_spark_like(value.get(f.name), f.dataType) for f in t.fields)
    if isinstance(t, st.ArrayType):
        return [_spark_like(v, t.elementType) for v in value]
    if isinstance(t, st.MapType):
        return {_spark_like(k, t.keyType): _spark_like(v, t.valueType) for k, v in value}
    if isinstance(t, st.TimestampType) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value


def pyiceberg_oracle(metadata_file: str, name: str, *, remap_from: str, remap_to: str,
                     snapshot_id: int | None = None) -> OracleTable:
    """pyiceberg's ``inspect.<name>()`` of the table whose current metadata is
    ``metadata_file``."""
    from pyiceberg.table import StaticTable

    tbl = StaticTable.from_metadata(metadata_file, properties={
        "py-io-impl": f"{__name__}.RemapFileIO", "schemalab.remap-from": remap_from,
        "schemalab.remap-to": remap_to})
    method = getattr(tbl.inspect, name)
    arrow = method(snapshot_id) if snapshot_id is not None else method()
    schema = arrow_to_spark(pa.struct(list(arrow.schema)))
    assert isinstance(schema, st.StructType)
    rows = [tuple(_spark_like(r[f.name], f.dataType) for f in schema.fields)
            for r in arrow.to_pylist()]
    return OracleTable.from_spark("pyiceberg", schema, rows)
