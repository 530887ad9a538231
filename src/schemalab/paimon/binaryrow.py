"""Paimon's BinaryRow, as stored in manifests: partition values, min/max keys, column stats.

A manifest stores each row as ``SerializationUtils.serializeBinaryRow`` writes it: a 4-byte
**big-endian** arity, then the row exactly as ``BinaryRowWriter`` lays it out in memory
(little-endian, as on every machine Paimon runs on)::

    [arity: int32 BE]
    [header + null bits: ((arity + 63 + 8) // 64) * 8 bytes]   byte 0 = RowKind (0 = +I),
                                                               field i null <=> bit i + 8 set
    [one 8-byte slot per field]
    [variable part: 8-byte aligned, zero padded]

Slots: BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/DATE/TIME/FLOAT 4, BIGINT/DOUBLE 8, the rest of
the slot zero. DECIMAL with precision <= 18 is its unscaled value as a long; wider decimals
reserve 16 bytes of the variable part for the big-endian two's-complement unscaled value
(``BigInteger.toByteArray``) and the slot holds ``offset << 32 | length``. TIMESTAMP(p) and
TIMESTAMP(p) WITH LOCAL TIME ZONE with p <= 3 are epoch milliseconds; wider ones put the
milliseconds in 8 bytes of the variable part and ``offset << 32 | nanoOfMillisecond`` in the
slot. Strings and bytes of at most 7 bytes live in the slot itself (data in the low bytes,
top byte ``0x80 | length``); longer ones are in the variable part with ``offset << 32 |
length``. Offsets count from the start of the row (after the arity prefix).

A null wide DECIMAL or TIMESTAMP still reserves its variable-part bytes (zeros) and keeps
the offset in its slot, as Java's ``RowHelper`` does; pypaimon 2.1.0 writes a zero slot and
no reservation instead. Both decode to None.

    >>> from schemalab.types import INT, STRING
    >>> encode_row(["2024-01-01"], [STRING()]).hex()
    '0000000100000000000000000a00000010000000323032342d30312d3031000000000000'
    >>> decode_row(encode_row(["east", 7], [STRING(), INT()]), [STRING(), INT()])
    ['east', 7]
    >>> EMPTY_ROW.hex()  # the _PARTITION of an unpartitioned table
    '000000000000000000000000'

Python values: bool, int, float, str, bytes, ``decimal.Decimal``, ``datetime.date``,
``datetime.time``, ``datetime.datetime``. TIMESTAMP takes and gives naive datetimes (wall
clock, as Paimon stores it). TIMESTAMP WITH LOCAL TIME ZONE stores an instant: it takes
naive datetimes as UTC or aware ones (converted to UTC) and gives back naive UTC. Python
has microseconds, so nanosecond digits written by Java are dropped when decoding; TIME is
stored in milliseconds, so sub-millisecond digits are dropped when encoding (floor, as
Java does).

Errors: every problem with the bytes raises :class:`BinaryRowError`, which is both a
``ValueError`` and a :class:`~schemalab.errors.CorruptFileError`; callers that know the
file pass ``path=`` so the message names it. Values that do not fit their type raise
``TypeError`` / ``ValueError`` when encoding.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Callable, Sequence
from typing import Any

from schemalab.engine.keyed import ROW_KINDS
from schemalab.errors import CorruptFileError
from schemalab.types.model import AtomicType, DataType, TypeRoot

HEADER_SIZE_IN_BITS = 8  # byte 0 of the null bit set holds the RowKind
MAX_FIX_PART_DATA_SIZE = 7  # strings/bytes up to this many bytes are inlined in the slot
MAX_COMPACT_DECIMAL_PRECISION = 18  # Decimal.isCompact: fits an unscaled long
MAX_COMPACT_TIMESTAMP_PRECISION = 3  # Timestamp.isCompact: epoch millis fit the slot
WIDE_DECIMAL_BYTES = 16  # a wide decimal always reserves 16 bytes (38 digits fit)

_INLINE_MARK = 0x80 << 56
_INLINE_LEN_MASK = 0x7F << 56
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MILLIS_PER_DAY = 86_400_000

_INT_RANGES = {
    TypeRoot.TINYINT: (1, -(2**7), 2**7 - 1),
    TypeRoot.SMALLINT: (2, -(2**15), 2**15 - 1),
    TypeRoot.INTEGER: (4, -(2**31), 2**31 - 1),
    TypeRoot.BIGINT: (8, -(2**63), 2**63 - 1),
}


class BinaryRowError(CorruptFileError, ValueError):
    """Bytes that are not a BinaryRow of the given types. ``path`` names the file they came
    from when the caller knows it."""

    def __init__(self, what: str, path: str = "<BinaryRow>") -> None:
        super().__init__(path, what)


# --------------------------------------------------------------------------------------------
# Layout arithmetic (BinaryRow.calculateBitSetWidthInBytes / calculateFixPartSizeInBytes)
# --------------------------------------------------------------------------------------------


def null_bits_size(arity: int) -> int:
    """Bytes of the header + null bit set: whole 8-byte words, at least one."""
    return ((arity + 63 + HEADER_SIZE_IN_BITS) // 64) * 8


def fixed_part_size(arity: int) -> int:
    return null_bits_size(arity) + 8 * arity


def _round_to_word(n: int) -> int:
    return (n + 7) & ~7


def _is_wide_decimal(t: AtomicType) -> bool:
    return t.root is TypeRoot.DECIMAL and (t.precision or 0) > MAX_COMPACT_DECIMAL_PRECISION


def _is_wide_timestamp(t: AtomicType) -> bool:
    return (t.root in (TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE,
                       TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)
            and (t.precision if t.precision is not None else 6) > MAX_COMPACT_TIMESTAMP_PRECISION)


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------


class _Writer:
    """Builds one row the way BinaryRowWriter does: fixed part first, then a cursor that
    appends word-aligned chunks to the variable part in field order."""

    def __init__(self, arity: int, row_kind: int) -> None:
        self.arity = arity
        self.bits = null_bits_size(arity)
        self.buf = bytearray(fixed_part_size(arity))
        self.buf[0] = row_kind

    def slot(self, pos: int) -> int:
        return self.bits + 8 * pos

    def set_null_bit(self, pos: int) -> None:
        index = pos + HEADER_SIZE_IN_BITS
        self.buf[index >> 3] |= 1 << (index & 7)

    def put(self, pos: int, fmt: str, value: Any) -> None:
        struct.pack_into(fmt, self.buf, self.slot(pos), value)

    def append_var(self, pos: int, data: bytes, reserve: int, low_word: int) -> None:
        """Append ``data`` zero-padded to ``reserve`` bytes; the slot gets
        ``offset << 32 | low_word``."""
        offset = len(self.buf)
        self.buf += data + bytes(reserve - len(data))
        self.put(pos, "<Q", (offset << 32) | low_word)

    def put_bytes(self, pos: int, data: bytes) -> None:
        if len(data) <= MAX_FIX_PART_DATA_SIZE:
            # Inline: data in the low bytes of the little-endian long, mark+length on top.
            word = int.from_bytes(data, "little") | ((0x80 | len(data)) << 56)
            self.put(pos, "<Q", word)
        else:
            self.append_var(pos, data, _round_to_word(len(data)), len(data))


def encode_row(values: Sequence[Any], types: Sequence[DataType], *, row_kind: int = 0) -> bytes:
    """Serialize ``values`` (None = null) of ``types`` as a manifest stores a BinaryRow.

    >>> from schemalab.types import BIGINT
    >>> encode_row([1], [BIGINT()]).hex()
    '0000000100000000000000000100000000000000'
    """
    if len(values) != len(types):
        raise ValueError(f"{len(values)} values for {len(types)} types")
    if row_kind not in ROW_KINDS:
        raise ValueError(f"row_kind must be one of {sorted(ROW_KINDS)}, not {row_kind!r}")
    w = _Writer(len(types), row_kind)
    for pos, (value, t) in enumerate(zip(values, types, strict=True)):
        if value is None:
            _write_null(w, pos, t)
        else:
            _write_value(w, pos, value, t)
    return struct.pack(">i", len(types)) + bytes(w.buf)


def _write_null(w: _Writer, pos: int, t: DataType) -> None:
    w.set_null_bit(pos)
    if isinstance(t, AtomicType) and _is_wide_decimal(t):
        # Java keeps the 16 reserved bytes and the offset so the field can be set later.
        w.append_var(pos, b"", WIDE_DECIMAL_BYTES, 0)
    elif isinstance(t, AtomicType) and _is_wide_timestamp(t):
        w.append_var(pos, b"", 8, 0)
    # other types: the slot stays zero (BinaryRowWriter.setNullAt)


def _write_value(w: _Writer, pos: int, value: Any, t: DataType) -> None:
    if not isinstance(t, AtomicType) or t.root is TypeRoot.VARIANT:
        raise TypeError(f"BinaryRow values of type {t.sql()} are not supported "
                        "(only atomic types; nested values may only be null)")
    writer = _WRITERS.get(t.root)
    if writer is None:  # pragma: no cover - every atomic root has a writer
        raise TypeError(f"unsupported type {t.sql()}")
    writer(w, pos, value, t)


def _need(value: Any, kinds: type | tuple[type, ...], t: AtomicType) -> None:
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _as_tuple(kinds)):
        raise TypeError(f"{t.sql()} needs {_names(kinds)}, not {type(value).__name__} "
                        f"({value!r})")


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _names(kinds: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _as_tuple(kinds))


def _w_boolean(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, bool, t)
    w.put(pos, "<B", 1 if value else 0)


def _w_integer(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, int, t)
    size, lo, hi = _INT_RANGES[t.root]
    if not lo <= value <= hi:
        raise ValueError(f"{value} is out of range for {t.sql()}")
    w.put(pos, {1: "<b", 2: "<h", 4: "<i", 8: "<q"}[size], value)


def _w_float(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, (float, int), t)
    try:
        w.put(pos, "<f" if t.root is TypeRoot.FLOAT else "<d", float(value))
    except (OverflowError, struct.error) as e:
        raise ValueError(f"{value!r} does not fit {t.sql()}: {e}") from None


_HALF_UP = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)


def decimal_unscaled(value: decimal.Decimal | int, precision: int, scale: int) -> int:
    """The unscaled integer Paimon stores for ``value`` in DECIMAL(precision, scale):
    rounded HALF_UP to the scale (as ``Decimal.fromBigDecimal``); ValueError if it then
    needs more than ``precision`` digits (where Java would give null)."""
    d = decimal.Decimal(value) if isinstance(value, int) else value
    if not d.is_finite():
        raise ValueError(f"{value!r} is not a finite decimal")
    unscaled = int(d.scaleb(scale, _HALF_UP).to_integral_value(decimal.ROUND_HALF_UP, _HALF_UP))
    if len(str(abs(unscaled))) > precision and unscaled != 0:
        raise ValueError(f"{value} does not fit DECIMAL({precision}, {scale})")
    return unscaled


def java_big_integer_bytes(n: int) -> bytes:
    """``BigInteger.toByteArray()``: minimal big-endian two's complement, sign bit included
    (so -128 is one byte, 128 two)."""
    bit_length = (~n if n < 0 else n).bit_length()
    return n.to_bytes(bit_length // 8 + 1, "big", signed=True)


def _w_decimal(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, (decimal.Decimal, int), t)
    precision, scale = t.precision or 10, t.scale or 0
    unscaled = decimal_unscaled(value, precision, scale)
    if precision <= MAX_COMPACT_DECIMAL_PRECISION:
        w.put(pos, "<q", unscaled)
    else:
        data = java_big_integer_bytes(unscaled)
        w.append_var(pos, data, WIDE_DECIMAL_BYTES, len(data))


def _w_string(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, str, t)
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{value!r} cannot be encoded as UTF-8: {e}") from None
    w.put_bytes(pos, data)


def _w_binary(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, (bytes, bytearray, memoryview), t)
    w.put_bytes(pos, bytes(value))


def _w_date(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    if isinstance(value, dt.datetime):  # a datetime is a date too; refuse the silent cut
        raise TypeError(f"DATE needs a datetime.date, not a datetime ({value!r})")
    _need(value, (dt.date, int), t)
    days = value if isinstance(value, int) else (value - _EPOCH_DATE).days
    if not -(2**31) <= days < 2**31:
        raise ValueError(f"{value!r} is out of range for DATE")
    w.put(pos, "<i", days)


def _w_time(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, (dt.time, int), t)
    if isinstance(value, dt.time):
        if value.tzinfo is not None:
            raise ValueError(f"TIME needs a naive time, not {value!r}")
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
        millis += value.microsecond // 1000
    else:
        millis = value
    if not 0 <= millis < _MILLIS_PER_DAY:
        raise ValueError(f"{value!r} is out of range for TIME (milliseconds of the day)")
    w.put(pos, "<i", millis)


def timestamp_parts(value: dt.datetime, local_time_zone: bool) -> tuple[int, int]:
    """``(epochMillis, nanoOfMillisecond)`` as Paimon's ``Timestamp`` holds them: millis
    rounded down, so the nanos are never negative."""
    if value.tzinfo is not None:
        if not local_time_zone:
            raise ValueError(f"TIMESTAMP takes naive datetimes (wall clock), not {value!r}")
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    millis, micro_of_milli = divmod(micros, 1000)
    return millis, micro_of_milli * 1000


def _w_timestamp(w: _Writer, pos: int, value: Any, t: AtomicType) -> None:
    _need(value, dt.datetime, t)
    millis, nanos = timestamp_parts(value, t.root is TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)
    if _is_wide_timestamp(t):
        w.append_var(pos, struct.pack("<q", millis), 8, nanos)
    else:
        w.put(pos, "<q", millis)


_WRITERS: dict[TypeRoot, Callable[[_Writer, int, Any, AtomicType], None]] = {
    TypeRoot.BOOLEAN: _w_boolean,
    TypeRoot.TINYINT: _w_integer,
    TypeRoot.SMALLINT: _w_integer,
    TypeRoot.INTEGER: _w_integer,
    TypeRoot.BIGINT: _w_integer,
    TypeRoot.FLOAT: _w_float,
    TypeRoot.DOUBLE: _w_float,
    TypeRoot.DECIMAL: _w_decimal,
    TypeRoot.CHAR: _w_string,
    TypeRoot.VARCHAR: _w_string,
    TypeRoot.BINARY: _w_binary,
    TypeRoot.VARBINARY: _w_binary,
    TypeRoot.DATE: _w_date,
    TypeRoot.TIME_WITHOUT_TIME_ZONE: _w_time,
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: _w_timestamp,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: _w_timestamp,
}

#: A row with no fields: the ``_PARTITION`` of unpartitioned tables, ``_MIN_KEY`` of append
#: tables, both halves of empty stats (Java: ``BinaryRow.EMPTY_ROW``).
EMPTY_ROW: bytes = encode_row([], [])


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def row_arity(data: bytes, *, path: str = "<BinaryRow>") -> int:
    """The arity prefix of a serialized row."""
    if len(data) < 4:
        raise BinaryRowError(f"a serialized BinaryRow needs at least 4 bytes, got {len(data)}",
                             path)
    arity = int.from_bytes(data[:4], "big", signed=True)
    if arity < 0:
        raise BinaryRowError(f"negative BinaryRow arity {arity}", path)
    return arity


def row_kind(data: bytes, *, path: str = "<BinaryRow>") -> int:
    """The RowKind byte (0 = +I insert) of a serialized row."""
    row_arity(data, path=path)
    if len(data) < 5:
        raise BinaryRowError("BinaryRow is missing its header byte", path)
    return data[4]


class _Reader:
    def __init__(self, data: bytes, arity: int, path: str) -> None:
        self.row = memoryview(data)[4:]
        self.bits = null_bits_size(arity)
        self.path = path

    def fail(self, pos: int, t: DataType, what: str) -> BinaryRowError:
        return BinaryRowError(f"field {pos} ({t.sql()}): {what}", self.path)

    def is_null(self, pos: int) -> bool:
        index = pos + HEADER_SIZE_IN_BITS
        return bool(self.row[index >> 3] & (1 << (index & 7)))

    def slot(self, pos: int, fmt: str) -> Any:
        return struct.unpack_from(fmt, self.row, self.bits + 8 * pos)[0]

    def var(self, pos: int, t: DataType, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > len(self.row):
            raise self.fail(pos, t, f"points at bytes {offset}..{offset + length} "
                                    f"of a {len(self.row)}-byte row")
        return bytes(self.row[offset:offset + length])

    def bytes_field(self, pos: int, t: DataType) -> bytes:
        word = self.slot(pos, "<Q")
        if word & _INLINE_MARK:
            length = (word & _INLINE_LEN_MASK) >> 56
            if length > MAX_FIX_PART_DATA_SIZE:
                raise self.fail(pos, t, f"inline length {length} is more than 7")
            start = self.bits + 8 * pos
            return bytes(self.row[start:start + length])
        return self.var(pos, t, word >> 32, word & 0xFFFFFFFF)


def decode_row(data: bytes, types: Sequence[DataType], *, path: str = "<BinaryRow>"
               ) -> list[Any]:
    """The values of a serialized BinaryRow whose fields have ``types``.

    >>> from schemalab.types import DECIMAL
    >>> decode_row(bytes.fromhex('00000001000000000000000086feffffffffffff'), [DECIMAL(5, 2)])
    [Decimal('-3.78')]
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"decode_row needs bytes, not {type(data).__name__}")
    data = bytes(data)
    arity = row_arity(data, path=path)
    if arity != len(types):
        raise BinaryRowError(f"row has {arity} fields but {len(types)} types were given", path)
    if len(data) - 4 < fixed_part_size(arity):
        raise BinaryRowError(f"a row of {arity} fields needs at least "
                             f"{fixed_part_size(arity)} bytes, got {len(data) - 4}", path)
    r = _Reader(data, arity, path)
    out: list[Any] = []
    for pos, t in enumerate(types):
        if r.is_null(pos):
            out.append(None)
            continue
        if not isinstance(t, AtomicType) or t.root is TypeRoot.VARIANT:
            raise r.fail(pos, t, "decoding non-null nested or VARIANT values is not supported")
        out.append(_READERS[t.root](r, pos, t))
    return out


def _r_boolean(r: _Reader, pos: int, t: AtomicType) -> bool:
    return r.slot(pos, "<B") != 0


def _r_integer(r: _Reader, pos: int, t: AtomicType) -> int:
    size = _INT_RANGES[t.root][0]
    return int(r.slot(pos, {1: "<b", 2: "<h", 4: "<i", 8: "<q"}[size]))


def _r_float(r: _Reader, pos: int, t: AtomicType) -> float:
    return float(r.slot(pos, "<f" if t.root is TypeRoot.FLOAT else "<d"))


def _r_decimal(r: _Reader, pos: int, t: AtomicType) -> decimal.Decimal:
    precision, scale = t.precision or 10, t.scale or 0
    if precision <= MAX_COMPACT_DECIMAL_PRECISION:
        unscaled = r.slot(pos, "<q")
    else:
        word = r.slot(pos, "<Q")
        length = word & 0xFFFFFFFF
        if not 1 <= length <= WIDE_DECIMAL_BYTES:
            raise r.fail(pos, t, f"decimal of {length} bytes (expected 1 to 16)")
        unscaled = int.from_bytes(r.var(pos, t, word >> 32, length), "big", signed=True)
    # Built from text so that no context precision can round a 38-digit value.
    return decimal.Decimal(f"{unscaled}E-{scale}") if scale else decimal.Decimal(unscaled)


def _r_string(r: _Reader, pos: int, t: AtomicType) -> str:
    try:
        return r.bytes_field(pos, t).decode("utf-8")
    except UnicodeDecodeError as e:
        raise r.fail(pos, t, f"not UTF-8 ({e})") from None


def _r_binary(r: _Reader, pos: int, t: AtomicType) -> bytes:
    return r.bytes_field(pos, t)


def _r_date(r: _Reader, pos: int, t: AtomicType) -> dt.date:
    days = r.slot(pos, "<i")
    try:
        return _EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        raise r.fail(pos, t, f"day {days} is outside Python's date range") from None


def _r_time(r: _Reader, pos: int, t: AtomicType) -> dt.time:
    millis = r.slot(pos, "<i")
    if not 0 <= millis < _MILLIS_PER_DAY:
        raise r.fail(pos, t, f"{millis} is not a millisecond of the day")
    seconds, ms = divmod(millis, 1000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)


def _r_timestamp(r: _Reader, pos: int, t: AtomicType) -> dt.datetime:
    if _is_wide_timestamp(t):
        word = r.slot(pos, "<Q")
        nanos = word & 0xFFFFFFFF
        if nanos >= 1_000_000:
            raise r.fail(pos, t, f"nano-of-millisecond {nanos} is out of range")
        millis = struct.unpack("<q", r.var(pos, t, word >> 32, 8))[0]
    else:
        millis, nanos = r.slot(pos, "<q"), 0
    try:
        return _EPOCH + dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
    except OverflowError:
        raise r.fail(pos, t, f"{millis} ms is outside Python's datetime range") from None


_READERS: dict[TypeRoot, Callable[[_Reader, int, AtomicType], Any]] = {
    TypeRoot.BOOLEAN: _r_boolean,
    TypeRoot.TINYINT: _r_integer,
    TypeRoot.SMALLINT: _r_integer,
    TypeRoot.INTEGER: _r_integer,
    TypeRoot.BIGINT: _r_integer,
    TypeRoot.FLOAT: _r_float,
    TypeRoot.DOUBLE: _r_float,
    TypeRoot.DECIMAL: _r_decimal,
    TypeRoot.CHAR: _r_string,
    TypeRoot.VARCHAR: _r_string,
    TypeRoot.BINARY: _r_binary,
    TypeRoot.VARBINARY: _r_binary,
    TypeRoot.DATE: _r_date,
    TypeRoot.TIME_WITHOUT_TIME_ZONE: _r_time,
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: _r_timestamp,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: _r_timestamp,
}
