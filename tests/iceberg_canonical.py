"""Spark rows → the canonical row strings of ``fixtures/iceberg-java-1.10/README.md``.

The fixture records what Java Iceberg read back as one JSON text per row
(``json.dumps(row, sort_keys=True)``), with these values:

- null, booleans, integers and strings: themselves;
- a struct: ``{"struct": [[field name, value], ...]}`` in field order;
- a map: ``{"map": [[key, value], ...]}``, pairs sorted by their JSON text;
- an array: a JSON list;
- a float or double: ``"F:" + repr(x)`` (``"F:nan"``, ``"F:-0.0"``, ``"F:inf"``);
- a decimal: ``"D:" + str(Decimal)`` (keeps the scale, exponent form for tiny values);
- a timestamp, with or without zone: ``"TS:"`` + ISO form of the naive UTC value;
- a date: ``"DATE:" + isoformat``;
- binary: ``"B:"`` + lowercase hex.

Values are converted by walking the Spark data type beside the value, so a struct's field
names come from the schema (not from ``Row``) and a TIMESTAMP (which PySpark hands back as
naive *local* time of the Python process) is turned back into UTC, whatever the process's
time zone::

    >>> import datetime as dt
    >>> from decimal import Decimal
    >>> from pyspark.sql import types as st
    >>> canonical_value(Decimal("-1.00E-10"), st.DecimalType(38, 10))
    'D:-1.00E-10'
    >>> canonical_value(float("-inf"), st.DoubleType())
    'F:-inf'
    >>> canonical_value({"b": 2, "a": 1}, st.MapType(st.StringType(), st.IntegerType()))
    {'map': [['a', 1], ['b', 2]]}
    >>> canonical_value(dt.datetime(2024, 2, 29, 23, 59, 59, 999999), st.TimestampNTZType())
    'TS:2024-02-29T23:59:59.999999'
    >>> canonical_row([1, bytearray(b"\\x00\\xff")],
    ...               [st.IntegerType(), st.BinaryType()])
    '[1, "B:00ff"]'
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyspark.sql import types as st

__all__ = ["canonical_frame", "canonical_row", "canonical_value", "simple_types"]


def _utc_naive(value: dt.datetime) -> dt.datetime:
    """PySpark's TimestampType.fromInternal builds ``datetime.fromtimestamp(s)``: local wall
    time, naive. Back to the naive UTC wall time (fold-aware, so DST overlaps round-trip)."""
    try:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        # far outside the platform's localtime range: only UTC machines get here sanely
        return value


def canonical_value(value: Any, t: st.DataType) -> Any:
    """One value of Spark type ``t`` in the fixture's canonical form."""
    if value is None:
        return None
    if isinstance(t, st.StructType):
        return {"struct": [[f.name, canonical_value(value[i], f.dataType)]
                           for i, f in enumerate(t.fields)]}
    if isinstance(t, st.ArrayType):
        return [canonical_value(v, t.elementType) for v in value]
    if isinstance(t, st.MapType):
        pairs = [[canonical_value(k, t.keyType), canonical_value(v, t.valueType)]
                 for k, v in value.items()]
        return {"map": sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))}
    if isinstance(t, st.FloatType | st.DoubleType):
        return "F:" + repr(float(value))
    if isinstance(t, st.DecimalType):
        assert isinstance(value, Decimal), (value, t)
        return "D:" + str(value)
    if isinstance(t, st.TimestampType):
        return "TS:" + _utc_naive(value).isoformat()
    if isinstance(t, st.TimestampNTZType):
        return "TS:" + value.isoformat()
    if isinstance(t, st.DateType):
        return "DATE:" + value.isoformat()
    if isinstance(t, st.BinaryType):
        return "B:" + bytes(value).hex()
    if isinstance(value, bool | int | str):
        return value
    raise TypeError(f"no canonical form for {value!r} of Spark type {t.simpleString()}")


def canonical_row(row: Sequence[Any], types: Sequence[st.DataType]) -> str:
    return json.dumps([canonical_value(v, t) for v, t in zip(row, types, strict=True)],
                      sort_keys=True)


def canonical_frame(df: Any) -> tuple[list[str], list[str], list[str]]:
    """(column names, ``simpleString()`` types, canonical rows sorted as strings) of a Spark
    DataFrame, collected once."""
    fields = df.schema.fields
    types = [f.dataType for f in fields]
    rows = sorted(canonical_row(tuple(r), types) for r in df.collect())
    return [f.name for f in fields], simple_types(df.schema), rows


def simple_types(schema: st.StructType) -> list[str]:
    return [f.dataType.simpleString() for f in schema.fields]
