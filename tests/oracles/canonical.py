"""One canonical JSON form for table values, shared by the Java Paimon worker and our tests.

Java's rows (read through py4j in ``.venv-paimon-java``) and ours (Spark rows) become the
same JSON-able values, so a test compares ``java.read(...)`` with ``canonical_rows(df)``
exactly:

=====================  ==========================================================
NULL, BOOLEAN, ints    ``None``, ``True``/``False``, ``int``
FLOAT / DOUBLE         ``"F:" + repr(float)`` (``"F:nan"``, ``"F:inf"``); a FLOAT is
                       the exact double of its float32, so ``1.1`` is
                       ``"F:1.100000023841858"`` on both sides
DECIMAL                ``"D:" + str(Decimal)`` (the scale is kept: ``"D:1.50"``)
TIMESTAMP(_LTZ)        ``"TS:" + naive ISO`` (LTZ in UTC), 6 fraction digits when
                       there is a fraction, 9 when it has nanoseconds
DATE / TIME            ``"DATE:YYYY-MM-DD"`` / ``"TIME:HH:MM:SS.ffffff"``
BINARY / VARBINARY     ``"B:" + hex``
CHAR / VARCHAR         ``str``
ROW                    ``{"struct": [[name, v], ...]}``
MAP / MULTISET         ``{"map": [[k, v], ...]}`` sorted by JSON text
ARRAY                  ``list``
=====================  ==========================================================

Only the standard library is imported at module level: the worker runs in another venv.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


def dumps(value: Any) -> str:
    """The JSON text a canonical value sorts and compares by."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canon_float(x: float, single: bool = False) -> str:
    if single and math.isfinite(x):
        # Java hands a float32 over as its shortest text ("1.1"), Spark as the exact double.
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    if math.isnan(x):
        return "F:nan"
    return "F:" + repr(float(x))


def canon_decimal(d: Decimal | str) -> str:
    return "D:" + str(Decimal(d) if not isinstance(d, Decimal) else d)


def canon_timestamp_nanos(epoch_nanos: int) -> str:
    """A timestamp given as nanoseconds since the epoch (UTC wall time for LTZ)."""
    seconds, frac = divmod(epoch_nanos, 1_000_000_000)
    try:
        text = (EPOCH + dt.timedelta(seconds=seconds)).isoformat(timespec="seconds")
    except OverflowError:
        return f"TS:epoch-nanos={epoch_nanos}"
    if frac == 0:
        return "TS:" + text
    if frac % 1000 == 0:
        return f"TS:{text}.{frac // 1000:06d}"
    return f"TS:{text}.{frac:09d}"


def canon_datetime(value: dt.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return "TS:" + value.isoformat()


def canon_date_days(days: int) -> str:
    try:
        return "DATE:" + (EPOCH_DATE + dt.timedelta(days=days)).isoformat()
    except OverflowError:
        return f"DATE:epoch-days={days}"


def canon_date(value: dt.date) -> str:
    return "DATE:" + value.isoformat()


def canon_time_micros(micros_of_day: int) -> str:
    seconds, micros = divmod(micros_of_day, 1_000_000)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"TIME:{h:02d}:{m:02d}:{s:02d}.{micros:06d}"


def canon_time(value: dt.time) -> str:
    return canon_time_micros(
        ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond)


def canon_binary(value: bytes | bytearray | memoryview) -> str:
    return "B:" + bytes(value).hex()


def canon_variant(json_text: str) -> str:
    """A VARIANT by its JSON text (Paimon's ``Variant.toJson``, Spark's ``VariantVal.toJson``:
    both Spark's algorithm), keys sorted and numbers as Python prints them."""
    return "V:" + json.dumps(json.loads(json_text), sort_keys=True, separators=(",", ":"))


def canon_struct(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    return {"struct": [[name, v] for name, v in pairs]}


def canon_map(pairs: Iterable[tuple[Any, Any]]) -> dict[str, Any]:
    return {"map": sorted(([k, v] for k, v in pairs), key=dumps)}


def sort_rows(rows: Iterable[Sequence[Any]]) -> list[list[Any]]:
    return sorted((list(r) for r in rows), key=dumps)


# ---------------------------------------------------------------------------------------------
# Spark rows (main test venv only: pyspark is imported lazily)
# ---------------------------------------------------------------------------------------------


def canonical_value(value: Any, dtype: Any) -> Any:
    """One value of a collected Spark row, by its Spark type."""
    from pyspark.sql import types as st

    if value is None:
        return None
    if isinstance(dtype, st.BooleanType):
        return bool(value)
    if isinstance(dtype, st.ByteType | st.ShortType | st.IntegerType | st.LongType):
        return int(value)
    if isinstance(dtype, st.FloatType):
        return canon_float(value, single=True)
    if isinstance(dtype, st.DoubleType):
        return canon_float(value)
    if isinstance(dtype, st.DecimalType):
        return canon_decimal(value)
    if isinstance(dtype, st.TimestampType):
        # PySpark hands LTZ values over as naive local datetimes of this process.
        if value.tzinfo is None:
            value = value.astimezone()
        return canon_datetime(value)
    if isinstance(dtype, st.TimestampNTZType):
        return canon_datetime(value)
    if isinstance(dtype, st.DateType):
        return canon_date(value)
    if type(dtype).__name__ == "TimeType":
        return canon_time(value)
    if isinstance(dtype, st.BinaryType):
        return canon_binary(value)
    if isinstance(dtype, st.StringType | st.CharType | st.VarcharType):
        return str(value)
    if isinstance(dtype, st.VariantType):
        return canon_variant(value.toJson())
    if isinstance(dtype, st.ArrayType):
        return [canonical_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, st.MapType):
        return canon_map((canonical_value(k, dtype.keyType), canonical_value(v, dtype.valueType))
                         for k, v in value.items())
    if isinstance(dtype, st.StructType):
        return canon_struct((f.name, canonical_value(value[i], f.dataType))
                            for i, f in enumerate(dtype.fields))
    raise TypeError(f"no canonical form for Spark type {dtype!r}")


def canonical_rows(df: Any) -> list[list[Any]]:
    """A Spark DataFrame's rows in canonical form, sorted by their JSON text."""
    fields = df.schema.fields
    return sort_rows([canonical_value(row[i], f.dataType) for i, f in enumerate(fields)]
                     for row in df.collect())


def canonical_columns(df: Any) -> list[str]:
    return list(df.columns)
