"""Iceberg partition transforms computed by Spark (no Python on the executors): identity,
``bucket[N]``, ``truncate[W]``, ``year``/``month``/``day``/``hour`` and ``void``, each as a
Spark column giving the partition value, with the value's type, its Avro form and its text
in file paths (as Java's ``PartitionSpec.partitionToPath`` writes it).

``bucket[N]`` is Murmur3_x86_32 with seed 0 over the spec's bytes of the value (an 8-byte
little-endian long for int, long, date and timestamp). Spark's ``hash`` is the same Murmur3
with seed 42, and ``hash(a, b)`` hashes ``b`` with ``hash(a)`` as its seed: ``a`` =
:data:`SEED_ZERO`, whose hash is 0, makes it Iceberg's::

    >>> _murmur_int(SEED_ZERO, 42)
    0
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError
from schemalab.iceberg.metadata import IcebergSchema, PartitionField
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergType
from schemalab.iceberg.write.datafiles import PartitionColumn
from schemalab.iceberg.write.murmur import (
    SEED_ZERO,
    Steps,
    bucket_of_bytes,
    decimal_unscaled_bytes,
    truncate_decimal,
)
from schemalab.iceberg.write.schema_json import primitive

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

_BUCKET = re.compile(r"^bucket\[(\d+)\]$")
_TRUNCATE = re.compile(r"^truncate\[(\d+)\]$")
_EPOCH = dt.date(1970, 1, 1)
_LONGISH = ("long", "timestamp", "timestamptz")
_BYTES = ("string", "binary", "decimal")


def _murmur_int(i: int, seed: int) -> int:
    m = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m

    k1 = rotl((i & m) * 0xCC9E2D51 & m, 15) * 0x1B873593 & m
    h = (rotl(seed ^ k1, 13) * 5 + 0xE6546B64) & m
    h ^= 4
    for shift, mult in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h ^= h >> shift
        h = (h * mult) & m
    return h ^ (h >> 16)


def result_type(transform: str, source: IcebergType) -> IcebergType:
    """The type of a partition field's values (spec, "Partition Transforms")."""
    if transform in ("identity", "void") or _TRUNCATE.match(transform):
        return source
    if transform == "day":
        return primitive("date")
    return primitive("int")


def check_transform(transform: str, source: IcebergType, table: str, column: str) -> None:
    """Refuse a transform Iceberg does not allow on ``source`` (or schemalab cannot compute
    in Spark), with Iceberg's wording."""
    kind = source.kind if isinstance(source, IcebergPrimitiveType) else "nested"
    ok = {"identity": kind != "nested", "void": True,
          "year": kind in ("date", "timestamp", "timestamptz"),
          "month": kind in ("date", "timestamp", "timestamptz"),
          "day": kind in ("date", "timestamp", "timestamptz"),
          "hour": kind in ("timestamp", "timestamptz")}
    if _BUCKET.match(transform):
        allowed = kind in ("int", "date", *_LONGISH, *_BYTES)
    elif _TRUNCATE.match(transform):
        allowed = kind in ("int", "long", *_BYTES)
    else:
        allowed = ok.get(transform, False)
    if not allowed:
        raise SchemaLabError(f"Invalid source type {source} for transform: {transform} "
                             f"(table {table}, column {column}; Iceberg buckets int, long, "
                             "decimal, date, timestamp, string and binary values, truncates "
                             "int, long, decimal, string and binary ones)", table=table,
                             column=column, rule="iceberg-partition-transform")


def partition_column(pf: PartitionField, schema: IcebergSchema, source_col: Column,
                     table: str) -> PartitionColumn:
    """The Spark column that computes partition field ``pf`` from its source column."""
    from pyspark.sql import functions as F

    if pf.transform == "void":  # NULL whatever the source (which v1 lets one drop)
        return PartitionColumn(pf.field_id, pf.name, F.lit(None).cast("int"), "int")
    source = schema.find(pf.source_ids[0])
    name = schema.full_name(pf.source_ids[0]) or str(pf.source_ids[0])
    if source is None:
        raise SchemaLabError(f"Table {table}: partition field {pf.name} has no source column "
                             f"{pf.source_ids[0]}", table=table, rule="iceberg-partition-transform")
    t = source.type
    check_transform(pf.transform, t, table, name)
    assert isinstance(t, IcebergPrimitiveType)
    k, tr = t.kind, pf.transform
    c = source_col
    epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
    micros = F.unix_micros(c) if k == "timestamptz" else \
        F.timestamp_diff("MICROSECOND", epoch, c) if k == "timestamp" else None
    if tr == "identity":
        if k == "date":
            return PartitionColumn(pf.field_id, pf.name, F.unix_date(c), "int")
        if micros is not None:
            return PartitionColumn(pf.field_id, pf.name, micros, "long")
        if k == "decimal":
            return PartitionColumn(pf.field_id, pf.name, c.cast("string"), "decimal")
        if k == "binary":  # Spark partitions by no BINARY column: its hex stands in
            return PartitionColumn(pf.field_id, pf.name, F.hex(c), "binary")
        return PartitionColumn(pf.field_id, pf.name, c, k if k in ("int", "long", "boolean")
                               else "string")
    m = _BUCKET.match(tr)
    if m and k in _BYTES:  # self-contained, and as compiled steps for the write
        n, steps = int(m.group(1)), Steps(f"__sl_m{pf.field_id}_")
        data = c.cast("binary") if k == "string" else c if k == "binary" else \
            decimal_unscaled_bytes(c, t.scale or 0)
        staged = bucket_of_bytes(data if k != "decimal" else decimal_unscaled_bytes(
            c, t.scale or 0, steps.let, t.precision or 38), n, steps.let)
        return PartitionColumn(pf.field_id, pf.name, bucket_of_bytes(data, n), "int",
                               steps=tuple(steps.columns), staged=staged)
    if m:
        n = int(m.group(1))
        value = F.unix_date(c) if k == "date" else micros if micros is not None else c
        h = F.hash(F.lit(SEED_ZERO).cast("int"), value.cast("bigint"))
        bucket = F.when(c.isNull(), F.lit(None)).otherwise(
            (h.bitwiseAND(F.lit(0x7FFFFFFF)) % F.lit(n)).cast("int"))
        return PartitionColumn(pf.field_id, pf.name, bucket, "int")
    m = _TRUNCATE.match(tr)
    if m:
        w = int(m.group(1))
        if k == "string":  # code points, as Spark counts a string's characters
            return PartitionColumn(pf.field_id, pf.name, F.substring(c, 1, w), "string")
        if k == "binary":
            return PartitionColumn(pf.field_id, pf.name, F.hex(F.substring(c, 1, w)), "binary")
        if k == "decimal":  # the unscaled result travels; its scale is the column's
            return PartitionColumn(pf.field_id, pf.name,
                                   truncate_decimal(c, w, t.scale or 0).cast("string"),
                                   "unscaled", scale=t.scale or 0)
        lit = F.lit(w).cast("bigint" if k == "long" else "int")
        return PartitionColumn(pf.field_id, pf.name, c - F.pmod(c, lit), k)
    if k != "date":
        assert micros is not None
    days = F.unix_date(c) if micros is None else F.floor(micros / F.lit(86_400_000_000))
    if tr == "hour":
        assert micros is not None
        return PartitionColumn(pf.field_id, pf.name,
                               F.floor(micros / F.lit(3_600_000_000)).cast("int"), "int")
    if tr == "day":
        return PartitionColumn(pf.field_id, pf.name, days.cast("int"), "int")
    date = F.date_from_unix_date(days.cast("int"))
    years = F.year(date) - F.lit(1970)
    value = years if tr == "year" else years * F.lit(12) + F.month(date) - F.lit(1)
    return PartitionColumn(pf.field_id, pf.name, value.cast("int"), "int")


def path_text(pc: PartitionColumn, value: Any, transform: str, source: IcebergType) -> str:
    """A partition value as Java writes it in a data file's directory name."""
    if value is None:
        return "null"
    kind = source.kind if isinstance(source, IcebergPrimitiveType) else ""
    if transform == "day" or (transform == "identity" and kind == "date"):
        return (_EPOCH + dt.timedelta(days=int(value))).isoformat()
    if transform == "identity" and kind in ("timestamp", "timestamptz"):
        ts = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(value))
        return ts.isoformat() + ("Z" if kind == "timestamptz" else "")
    if transform == "year":
        return str(1970 + int(value))
    if transform == "month":
        y, mo = divmod(int(value), 12)
        return f"{1970 + y:04d}-{mo + 1:02d}"
    if transform == "hour":
        ts = dt.datetime(1970, 1, 1) + dt.timedelta(hours=int(value))
        return ts.strftime("%Y-%m-%d-%H")
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, bytes):  # Java's Transform.toHumanString: base64
        return base64.b64encode(value).decode("ascii")
    return str(value)


