"""Iceberg types and values the way Iceberg's Spark integration shows them.

Iceberg's ``TypeToSparkType`` maps each Iceberg type to a Spark type: ``timestamptz`` is
``timestamp``, ``timestamp`` is ``timestamp_ntz``, ``uuid`` a string, ``fixed`` binary,
``unknown`` void; a required field, list element or map value is not nullable. Partition
transforms have result types (``bucket`` → int, ``day`` → date, ``month`` → int, ...), and
their *human strings* (``ManifestsTable``'s partition summary bounds) follow Java's
``Transform.toHumanString``::

    >>> from schemalab.iceberg.types import parse_iceberg_type
    >>> human_string("month", parse_iceberg_type("int"), 652)
    '2024-05'
    >>> human_string("identity", parse_iceberg_type("timestamptz"), 1704103200000000)
    '2024-01-01T10:00:00+00:00'
    >>> human_string("identity", parse_iceberg_type("double"), 1e10)
    '1.0E10'
"""

from __future__ import annotations

import base64
import datetime as dt
import struct
import uuid
from decimal import Decimal
from typing import Any

from pyspark.sql import types as st

from schemalab.errors import UnsupportedFeatureError
from schemalab.iceberg.manifests import unscaled_decimal
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergPrimitiveType,
    IcebergStructType,
    IcebergType,
)

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_INT = IcebergPrimitiveType("int", "int")
_DATE = IcebergPrimitiveType("date", "date")

_SIMPLE: dict[str, st.DataType] = {
    "boolean": st.BooleanType(), "int": st.IntegerType(), "long": st.LongType(),
    "float": st.FloatType(), "double": st.DoubleType(), "date": st.DateType(),
    "timestamp": st.TimestampNTZType(), "timestamptz": st.TimestampType(),
    "string": st.StringType(), "uuid": st.StringType(), "fixed": st.BinaryType(),
    "binary": st.BinaryType(), "unknown": st.NullType(),
}


def spark_type(t: IcebergType, *, table: str | None = None, column: str | None = None
               ) -> st.DataType:
    """The Spark type Iceberg's Spark integration gives ``t``. Types Spark cannot hold
    (``time``, ``timestamp_ns``, geospatial) are refused as Iceberg's ``TypeToSparkType``
    refuses them."""
    if isinstance(t, IcebergStructType):
        return st.StructType([st.StructField(f.name, spark_type(f.type, table=table,
                                                                column=column or f.name),
                                             not f.required) for f in t.fields])
    if isinstance(t, IcebergListType):
        return st.ArrayType(spark_type(t.element, table=table, column=column),
                            not t.element_required)
    if isinstance(t, IcebergMapType):
        return st.MapType(spark_type(t.key, table=table, column=column),
                          spark_type(t.value, table=table, column=column), not t.value_required)
    if t.kind in _SIMPLE:
        return _SIMPLE[t.kind]
    if t.kind == "decimal":
        return st.DecimalType(t.precision or 38, t.scale or 0)
    if t.kind == "variant":
        return st.VariantType()
    raise UnsupportedFeatureError(
        f"Table {table}: column {column!r} is of Iceberg type {t.name}, which Iceberg's Spark "
        f"integration cannot show (\"Spark does not support {t.name} fields\")",
        table=table, column=column, feature=f"{t.name} column in a metadata table")


def transform_result(transform: str, source: IcebergType) -> IcebergType:
    """A partition field's type (Iceberg's ``Transform.getResultType``)."""
    if transform in ("identity", "void") or transform.startswith("truncate"):
        return source
    if transform.startswith("bucket") or transform in ("year", "month", "hour"):
        return _INT
    if transform == "day":
        return _DATE
    raise UnsupportedFeatureError(
        f"partition transform {transform!r} is unknown (Iceberg cannot build the table's "
        f"partition type either)", feature=f"partition transform {transform}")


def spark_value(value: Any, t: IcebergType) -> Any:
    """A partition value or decoded bound (as Avro or :func:`decode_bound` gives it) as the
    Python value PySpark takes for ``spark_type(t)``."""
    if value is None or not isinstance(t, IcebergPrimitiveType):
        return value
    k = t.kind
    if k == "unknown":
        return None
    if k == "date":
        return _EPOCH_DAY + dt.timedelta(days=value) if isinstance(value, int) else value
    if k in ("timestamp", "timestamptz"):
        if isinstance(value, int):
            value = _EPOCH + dt.timedelta(microseconds=value)
        elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            value = dt.datetime(value.year, value.month, value.day)  # a v3 date → timestamp
        if k == "timestamptz":
            return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value
        return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value
    if k == "uuid":
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value)))
    if k in ("fixed", "binary"):
        return bytes(value)
    if k == "decimal" and not isinstance(value, Decimal):
        return unscaled_decimal(int.from_bytes(value, "big", signed=True), t.scale or 0)
    if k in ("float", "double"):
        return float(value)
    return value


def human_string(transform: str, result: IcebergType, value: Any) -> str:
    """Java's ``Transform.toHumanString(resultType, value)`` of a partition value (as
    :func:`decode_bound` decodes it for the result type): ``"null"`` for NULL."""
    if value is None:
        return "null"
    if transform in ("year", "month", "hour"):
        n = int(value)
        if transform == "year":
            return f"{1970 + n:04d}"
        if transform == "month":
            return f"{1970 + n // 12:04d}-{n % 12 + 1:02d}"
        h = _EPOCH + dt.timedelta(hours=n)
        return f"{h.year:04d}-{h.month:02d}-{h.day:02d}-{h.hour:02d}"
    k = result.kind if isinstance(result, IcebergPrimitiveType) else ""
    if k == "date":
        d = value if isinstance(value, dt.date) else _EPOCH_DAY + dt.timedelta(days=value)
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if k == "time":
        return _java_local_time(value)
    if k in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        ts = spark_value(value, IcebergPrimitiveType("timestamp", "timestamp"))
        text = f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T" + _iso_time(ts.time())
        return text + "+00:00" if k.startswith("timestamptz") else text
    if k in ("fixed", "binary"):
        return base64.b64encode(bytes(value)).decode("ascii")
    if k == "boolean":
        return "true" if value else "false"
    if k == "double":
        return java_double(float(value))
    if k == "float":
        return java_double(float(value), single=True)
    return str(value)


def _iso_time(t: dt.time) -> str:
    """``DateTimeFormatter.ISO_LOCAL_TIME``: seconds always, the fraction without trailing
    zeros."""
    text = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return text + f".{t.microsecond:06d}".rstrip("0") if t.microsecond else text


def _java_local_time(value: Any) -> str:
    """``LocalTime.toString()``: seconds only when not zero, the fraction in groups of 3."""
    t = value if isinstance(value, dt.time) else (
        dt.datetime.min + dt.timedelta(microseconds=int(value))).time()
    text = f"{t.hour:02d}:{t.minute:02d}"
    if t.second or t.microsecond:
        text += f":{t.second:02d}"
        if t.microsecond:
            text += f".{t.microsecond // 1000:03d}" if t.microsecond % 1000 == 0 \
                else f".{t.microsecond:06d}"
    return text


def java_double(x: float, *, single: bool = False) -> str:
    """Java's ``Double.toString`` (``Float.toString`` with ``single``): the shortest digits
    that round-trip, positional for 1e-3 <= |x| < 1e7 and ``d.dddE±n`` otherwise.

        >>> java_double(0.5), java_double(1e-4), java_double(12345678.0), java_double(-0.0)
        ('0.5', '1.0E-4', '1.2345678E7', '-0.0')
    """
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    digits = repr(x) if not single else _shortest_float32(x)
    d = Decimal(digits)
    if d == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign, ds, exp = d.as_tuple()
    text = "".join(map(str, ds)).rstrip("0") or "0"
    point = len(ds) + int(exp)  # digits before the decimal point
    neg = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{neg}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{neg}{whole}.{frac or '0'}"
    return f"{neg}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _shortest_float32(x: float) -> str:
    packed = struct.pack("<f", x)
    for p in range(1, 10):
        text = f"{x:.{p}g}"
        if struct.pack("<f", float(text)) == packed:
            return text
    return repr(x)

