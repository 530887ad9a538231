"""BinaryRow bytes: Java's layout, the pypaimon fixtures, pypaimon's own serializer."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemalab.errors import CorruptFileError
from schemalab.paimon.binaryrow import (
    EMPTY_ROW,
    BinaryRowError,
    decode_row,
    encode_row,
    java_big_integer_bytes,
    row_arity,
    row_kind,
)
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.types.model import (
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    STRING,
    TIMESTAMP,
    ArrayType,
    AtomicType,
    DataType,
    TypeRoot,
)
from schemalab.types.parse import parse_type

# --------------------------------------------------------------------------------------------
# Known bytes
# --------------------------------------------------------------------------------------------


def test_empty_row_is_arity_zero_and_one_header_word() -> None:
    assert EMPTY_ROW == bytes(12)
    assert row_arity(EMPTY_ROW) == 0
    assert decode_row(EMPTY_ROW, []) == []


def test_partition_bytes_from_the_dumps() -> None:
    # paimon-dumps/avro_events.txt: dt='2024-01-02' (10 bytes -> variable part, padded to 16)
    hexed = "0000000100000000000000000a00000010000000323032342d30312d3032000000000000"
    assert encode_row(["2024-01-02"], [STRING()]).hex() == hexed
    # avro_users.txt: dt='d1' (2 bytes -> inline, top byte 0x82)
    assert encode_row(["d1"], [STRING(False)]) == (
        b"\x00\x00\x00\x01" + bytes(8) + b"d1\x00\x00\x00\x00\x00\x82")
    # stats_full_decode.txt: p1='east', p2=7
    assert encode_row(["east", 7], [STRING(), INT()]).hex() == (
        "00000002000000000000000065617374000000840700000000000000")


WH5_TYPES = ["INT", "BIGINT", "DOUBLE", "STRING", "STRING", "DECIMAL(10, 2)", "DATE",
             "TIMESTAMP(6)", "BOOLEAN", "STRING", "INT"]
WH5_MIN = ("0000000b000000000000000001000000000000000a00000000000000000000000000f8bf6162000000"
           "0000821400000060000000cafeffffffffffff0b4d00000000000040f50600780000000000000000"
           "0000006561737400000084070000000000000061206d756368206c6f6e67657220737472696e670"
           "00000007b22e5c48c010000")


def test_full_stats_row_from_the_dumps() -> None:
    types = [parse_type(t) for t in WH5_TYPES]
    values = decode_row(bytes.fromhex(WH5_MIN), types)
    assert values == [1, 10, -1.5, "ab", "a much longer string", Decimal("-3.10"),
                      dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 12, 0, 0, 123456), False,
                      "east", 7]
    assert encode_row(values, types).hex() == WH5_MIN


def test_small_values_sit_in_the_low_bytes_of_their_slot() -> None:
    row = encode_row([True, -1, 1.0], [BOOLEAN(), INT(), DOUBLE()])
    slots = row[12:]
    assert slots[0:8] == b"\x01" + bytes(7)
    assert slots[8:16] == b"\xff\xff\xff\xff" + bytes(4)  # not sign-extended
    assert slots[16:24] == struct.pack("<d", 1.0)


def test_null_bits_start_after_the_header_byte() -> None:
    row = encode_row([None, 5], [INT(), INT()], row_kind=3)
    assert row_kind(row) == 3
    assert row[4] == 3 and row[5] == 0b0000_0001  # field 0 -> bit 8
    assert decode_row(row, [INT(), INT()]) == [None, 5]


def test_null_bitset_grows_by_words() -> None:
    types: list[DataType] = [INT()] * 57
    assert len(encode_row([None] * 56, types[:56])) == 4 + 8 + 56 * 8
    assert len(encode_row([None] * 57, types)) == 4 + 16 + 57 * 8
    values = [None if i % 3 else i for i in range(57)]
    assert decode_row(encode_row(values, types), types) == values


def test_wide_decimal_uses_java_big_integer_bytes_in_16_reserved_bytes() -> None:
    assert java_big_integer_bytes(0) == b"\x00"
    assert java_big_integer_bytes(-128) == b"\x80"
    assert java_big_integer_bytes(128) == b"\x00\x80"
    assert java_big_integer_bytes(-129) == b"\xff\x7f"
    row = encode_row([Decimal("-1.28")], [DECIMAL(20, 2)])
    assert len(row) == 4 + 8 + 8 + 16
    assert row[12:20] == struct.pack("<Q", (16 << 32) | 1)
    assert row[20:] == b"\x80" + bytes(15)


def test_null_wide_fields_keep_their_reserved_bytes_like_java() -> None:
    row = encode_row([None, None], [DECIMAL(30, 0), TIMESTAMP(9)])
    fixed = 8 + 16
    assert len(row) == 4 + fixed + 16 + 8
    assert struct.unpack("<Q", row[12:20])[0] == fixed << 32
    assert struct.unpack("<Q", row[20:28])[0] == (fixed + 16) << 32
    assert decode_row(row, [DECIMAL(30, 0), TIMESTAMP(9)]) == [None, None]


def test_wide_timestamp_keeps_nanos_of_millisecond_in_the_slot() -> None:
    value = dt.datetime(1969, 12, 31, 23, 59, 59, 999_999)
    row = encode_row([value], [TIMESTAMP(6)])
    word = struct.unpack("<Q", row[12:20])[0]
    assert word == (16 << 32) | 999_000
    assert struct.unpack("<q", row[20:28])[0] == -1  # millis rounded down
    assert decode_row(row, [TIMESTAMP(6)]) == [value]


def test_compact_timestamp_drops_sub_millisecond_digits() -> None:
    value = dt.datetime(2024, 1, 1, 12, 0, 0, 123_456)
    assert decode_row(encode_row([value], [TIMESTAMP(3)]), [TIMESTAMP(3)]) == [
        value.replace(microsecond=123_000)]


def test_local_zoned_timestamps_are_utc() -> None:
    ltz = parse_type("TIMESTAMP(3) WITH LOCAL TIME ZONE")
    aware = dt.datetime(2024, 1, 1, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    naive_utc = dt.datetime(2024, 1, 1, 12, 0)
    assert encode_row([aware], [ltz]) == encode_row([naive_utc], [ltz])
    assert decode_row(encode_row([aware], [ltz]), [ltz]) == [naive_utc]
    with pytest.raises(ValueError, match="naive"):
        encode_row([aware], [TIMESTAMP(3)])


def test_nested_types_may_only_be_null() -> None:
    arr = ArrayType(INT())
    assert decode_row(encode_row([None, 1], [arr, INT()]), [arr, INT()]) == [None, 1]
    with pytest.raises(TypeError, match="ARRAY"):
        encode_row([[1]], [arr])


@pytest.mark.parametrize(("value", "t", "error"), [
    (128, parse_type("TINYINT"), ValueError),
    (2**31, INT(), ValueError),
    (True, INT(), TypeError),
    ("1", BIGINT(), TypeError),
    (1, BOOLEAN(), TypeError),
    (Decimal("123.45"), DECIMAL(4, 2), ValueError),
    (Decimal("NaN"), DECIMAL(10, 2), ValueError),
    (1e300, parse_type("FLOAT"), ValueError),
    (dt.datetime(2024, 1, 1), DATE(), TypeError),
    ("\ud800", STRING(), ValueError),
    ("x", parse_type("BYTES"), TypeError),
])
def test_values_that_do_not_fit_are_refused(value: Any, t: DataType, error: type) -> None:
    with pytest.raises(error):
        encode_row([value], [t])


def test_decimals_round_half_up_to_the_scale() -> None:
    t = DECIMAL(10, 2)
    assert decode_row(encode_row([Decimal("1.005")], [t]), [t]) == [Decimal("1.01")]
    assert decode_row(encode_row([Decimal("-1.005")], [t]), [t]) == [Decimal("-1.01")]
    assert decode_row(encode_row([7], [t]), [t]) == [Decimal("7.00")]


# --------------------------------------------------------------------------------------------
# Corrupt bytes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "types", "message"), [
    (b"", [], "at least 4 bytes"),
    (b"\x00\x00\x00", [], "at least 4 bytes"),
    (b"\xff\xff\xff\xff", [], "negative"),
    (bytes.fromhex("00000002") + bytes(8), [INT(), INT()], "needs at least"),
    (EMPTY_ROW, [INT()], "0 fields but 1 types"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<Q", (16 << 32) | 100), [STRING()],
     "points at bytes"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<Q", 0xFF << 56), [STRING()],
     "inline length"),
    (bytes.fromhex("00000001") + bytes(8) + b"\xff" + bytes(6) + b"\x81", [STRING()],
     "not UTF-8"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<i", 2**31 - 1) + bytes(4),
     [DATE()], "date range"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<q", 2**62), [TIMESTAMP(3)],
     "datetime range"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<i", -5) + bytes(4),
     [parse_type("TIME")], "millisecond of the day"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<Q", (16 << 32) | 17) + bytes(16),
     [DECIMAL(20, 0)], "decimal of 17 bytes"),
    (bytes.fromhex("00000001") + bytes(8) + struct.pack("<Q", 1 << 40), [ArrayType(INT())],
     "nested"),
])
def test_corrupt_bytes_raise_binary_row_error(data: bytes, types: list[DataType],
                                              message: str) -> None:
    with pytest.raises(BinaryRowError, match=message) as info:
        decode_row(data, types, path="/t/manifest/m-0")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, CorruptFileError)
    assert info.value.path == "/t/manifest/m-0"


ALL_ATOMIC = [parse_type(t) for t in (
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)",
    "DECIMAL(38, 10)", "CHAR(3)", "STRING", "BINARY(4)", "BYTES", "DATE", "TIME",
    "TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP(6) WITH LOCAL TIME ZONE")]


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80), picks=st.lists(st.sampled_from(ALL_ATOMIC), max_size=4),
       arity_prefix=st.booleans())
def test_garbage_never_escapes_as_another_error(data: bytes, picks: list[DataType],
                                                arity_prefix: bool) -> None:
    if arity_prefix:
        data = struct.pack(">i", len(picks)) + data
    try:
        decode_row(data, picks)
    except BinaryRowError:
        pass


# --------------------------------------------------------------------------------------------
# Round trips of random rows
# --------------------------------------------------------------------------------------------


@st.composite
def atomic_types(draw: st.DrawFn) -> AtomicType:
    simple = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING",
              "BYTES", "DATE"]
    kind = draw(st.sampled_from([*simple, "DECIMAL", "CHAR", "VARCHAR", "BINARY",
                                 "VARBINARY", "TIME", "TIMESTAMP", "LTZ"]))
    if kind in simple:
        t = parse_type(kind)
    elif kind == "DECIMAL":
        p = draw(st.integers(1, 38))
        t = DECIMAL(p, draw(st.integers(0, p)))
    elif kind in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        t = parse_type(f"{kind}({draw(st.integers(1, 40))})")
    elif kind == "TIME":
        t = parse_type(f"TIME({draw(st.integers(0, 3))})")
    elif kind == "TIMESTAMP":
        t = TIMESTAMP(draw(st.integers(0, 9)))
    else:
        t = parse_type(f"TIMESTAMP({draw(st.integers(0, 9))}) WITH LOCAL TIME ZONE")
    assert isinstance(t, AtomicType)
    return t


def _millis(d: dt.datetime) -> dt.datetime:
    return d.replace(microsecond=d.microsecond // 1000 * 1000)


def values_of(t: AtomicType) -> st.SearchStrategy[Any]:
    r = t.root
    ints = {TypeRoot.TINYINT: 7, TypeRoot.SMALLINT: 15, TypeRoot.INTEGER: 31,
            TypeRoot.BIGINT: 63}
    if r is TypeRoot.BOOLEAN:
        return st.booleans()
    if r in ints:
        bits = ints[r]
        return st.integers(-(2**bits), 2**bits - 1)
    if r is TypeRoot.FLOAT:
        return st.floats(width=32, allow_nan=False)
    if r is TypeRoot.DOUBLE:
        return st.floats(allow_nan=False)
    if r is TypeRoot.DECIMAL:
        p, s = t.precision or 10, t.scale or 0
        edge = st.sampled_from([-(2**63), -(2**7), -(2**15), 2**7, 10**p - 1, -(10**p) + 1])
        unscaled = st.integers(-(10**p) + 1, 10**p - 1) | edge.filter(lambda u: abs(u) < 10**p)
        return unscaled.map(lambda u: Decimal(f"{u}E-{s}") if s else Decimal(u))
    if r in (TypeRoot.CHAR, TypeRoot.VARCHAR):
        return st.text(max_size=20)
    if r in (TypeRoot.BINARY, TypeRoot.VARBINARY):
        return st.binary(max_size=20)
    if r is TypeRoot.DATE:
        return st.dates()
    if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
        return st.times().map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
    if (t.precision or 0) <= 3:
        return st.datetimes().map(_millis)
    return st.datetimes()


@st.composite
def typed_rows(draw: st.DrawFn) -> tuple[list[Any], list[DataType]]:
    types = draw(st.lists(atomic_types(), max_size=12))
    values = [draw(st.none() | values_of(t)) for t in types]
    return values, list(types)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=typed_rows())
def test_encode_decode_round_trip(row: tuple[list[Any], list[DataType]]) -> None:
    values, types = row
    data = encode_row(values, types)
    assert len(data) % 8 == 4  # the row itself is whole words
    assert decode_row(data, types) == values
    assert encode_row(decode_row(data, types), types) == data


# --------------------------------------------------------------------------------------------
# pypaimon's own serializer (pypaimon/table/row/generic_row.py)
# --------------------------------------------------------------------------------------------


def _pypaimon_fields(types: list[DataType]) -> list[Any]:
    from pypaimon.schema.data_types import AtomicType as PyAtomic
    from pypaimon.schema.data_types import DataField as PyField

    return [PyField(i, f"f{i}", PyAtomic(t.sql())) for i, t in enumerate(types)]


def _pypaimon_diverges(values: list[Any], types: list[DataType]) -> bool:
    """Where pypaimon 2.1.0 writes other bytes than Java: a null wide DECIMAL/TIMESTAMP (no
    reserved bytes, zero slot) and wide decimals equal to -2**(8k-1) (one byte too many)."""
    for v, t in zip(values, types, strict=True):
        assert isinstance(t, AtomicType)
        wide_dec = t.root is TypeRoot.DECIMAL and (t.precision or 0) > 18
        wide_ts = t.root.value.startswith("TIMESTAMP") and (t.precision or 0) > 3
        if v is None and (wide_dec or wide_ts):
            return True
        if v is not None and wide_dec:
            magnitude = -int(v.scaleb(t.scale or 0))
            if magnitude > 0 and magnitude & (magnitude - 1) == 0 \
                    and magnitude.bit_length() % 8 == 0:
                return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=typed_rows())
def test_same_bytes_as_pypaimon_serializer(row: tuple[list[Any], list[DataType]]) -> None:
    from pypaimon.table.row.generic_row import (
        GenericRow,
        GenericRowDeserializer,
        GenericRowSerializer,
    )

    values, types = row
    fields = _pypaimon_fields(types)
    theirs = GenericRowSerializer.to_bytes(GenericRow(list(values), fields))
    ours = encode_row(values, types)
    if _pypaimon_diverges(values, types):
        assert decode_row(theirs, types) == values  # we read their layout all the same
    else:
        assert ours == theirs
    if types:  # pypaimon decodes b"" and arity-0 rows specially
        back = GenericRowDeserializer.from_bytes(ours, fields).values
        assert [v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v
                for v in back] == values


def test_pypaimon_divergences_are_real() -> None:
    from pypaimon.table.row.generic_row import GenericRow, GenericRowSerializer

    types: list[DataType] = [DECIMAL(20, 2)]
    theirs = GenericRowSerializer.to_bytes(GenericRow([Decimal("-1.28")],
                                                      _pypaimon_fields(types)))
    assert theirs[20:22] == b"\xff\x80"  # two bytes where BigInteger.toByteArray gives one
    assert encode_row([Decimal("-1.28")], types)[20:21] == b"\x80"


# --------------------------------------------------------------------------------------------
# Every BinaryRow in the pypaimon fixture warehouses
# --------------------------------------------------------------------------------------------


def _tables(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("schema") if p.is_dir())


def _avro_records(path: Path) -> list[dict[str, Any]]:
    with open(path, "rb") as fh:
        return [dict(r) for r in fastavro.reader(fh)]  # type: ignore[arg-type]


def test_every_fixture_row_decodes_and_reencodes_byte_exact(pypaimon_warehouses: Path) -> None:
    checked = 0
    for table in _tables(pypaimon_warehouses):
        schemas = SchemaManager(str(table))
        for mf in sorted((table / "manifest").iterdir()):
            records = _avro_records(mf)
            for rec in records:
                if mf.name.startswith("manifest-list-"):
                    schema = schemas.get(rec["_SCHEMA_ID"])
                    stats = rec["_PARTITION_STATS"]
                    rows = [(stats["_MIN_VALUES"], _partition_types(schema)),
                            (stats["_MAX_VALUES"], _partition_types(schema))]
                else:
                    file = rec["_FILE"]
                    schema = schemas.get(file["_SCHEMA_ID"])
                    key_types = _key_types(schema)
                    value_types = _value_stats_types(schema, file["_VALUE_STATS_COLS"])
                    rows = [(rec["_PARTITION"], _partition_types(schema)),
                            (file["_MIN_KEY"], key_types), (file["_MAX_KEY"], key_types),
                            (file["_KEY_STATS"]["_MIN_VALUES"], key_types),
                            (file["_KEY_STATS"]["_MAX_VALUES"], key_types),
                            (file["_VALUE_STATS"]["_MIN_VALUES"], value_types),
                            (file["_VALUE_STATS"]["_MAX_VALUES"], value_types)]
                for data, types in rows:
                    assert encode_row(decode_row(data, types), types) == data
                    checked += 1
    assert checked > 60


def test_fixture_partitions_decode_to_their_directories(pypaimon_warehouses: Path) -> None:
    table = pypaimon_warehouses / "wh5" / "s.db" / "full"
    rec = _avro_records(next((table / "manifest").glob("manifest-[0-9a-f]*")))[0]
    assert decode_row(rec["_PARTITION"], [STRING(), INT()]) == ["east", 7]
    assert (table / "p1=east" / "p2=7" / "bucket-0" / rec["_FILE"]["_FILE_NAME"]).exists()
    unpartitioned = pypaimon_warehouses / "wh6" / "n.db" / "t" / "manifest"
    rec = _avro_records(next(unpartitioned.glob("manifest-[0-9a-f]*")))[0]
    assert rec["_PARTITION"] == rec["_FILE"]["_MIN_KEY"] == EMPTY_ROW


def _partition_types(schema: Any) -> list[DataType]:
    return [schema.type_of(k) for k in schema.partition_keys]


def _key_types(schema: Any) -> list[DataType]:
    # Paimon's key is the primary key without the partition columns ("trimmed").
    return [schema.type_of(k) for k in schema.primary_keys if k not in schema.partition_keys]


def _value_stats_types(schema: Any, cols: list[str] | None) -> list[DataType]:
    if cols is None:
        return [f.type for f in schema.fields]
    return [schema.type_of(c) for c in cols]
