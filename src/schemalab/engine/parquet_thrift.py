"""Reading and rewriting the footer of a Parquet file: its Thrift ``FileMetaData``, in
Thrift's compact protocol, kept as a generic tree so every field (known to this module or
not) is written back as it was read.

Spark's writer cannot store some Paimon types the way Java Paimon stores them (a TIMESTAMP(3)
as INT64 milliseconds, a TIME as INT32 milliseconds). schemalab has Spark write the
integers and then names their logical type in the footer: the data pages are what Java
writes, only the schema's annotation was missing. :func:`annotate_columns` does that, in place,
without touching a byte before the footer.

    >>> tree = [(1, CT_I32, 7), (4, CT_BINARY, b"ab")]
    >>> decode_struct(encode_struct(tree)) == tree
    True
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemalab import fileio
from schemalab.errors import CorruptFileError

# compact protocol types
CT_STOP, CT_TRUE, CT_FALSE, CT_BYTE, CT_I16, CT_I32, CT_I64 = 0, 1, 2, 3, 4, 5, 6
CT_DOUBLE, CT_BINARY, CT_LIST, CT_SET, CT_MAP, CT_STRUCT = 7, 8, 9, 10, 11, 12

#: a struct: its fields in order as (field id, compact type, value). A value is an int,
#: float, bool, bytes, a struct (list), a list or set (``ThriftList``) or a map (``ThriftMap``).
Struct = list[tuple[int, int, Any]]


@dataclass
class ThriftList:
    element_type: int
    values: list[Any]


@dataclass
class ThriftMap:
    key_type: int
    value_type: int
    items: list[tuple[Any, Any]]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.buf = io.BytesIO(data)

    def byte(self) -> int:
        b = self.buf.read(1)
        if not b:
            raise ValueError("footer ends early")
        return b[0]

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, ctype: int) -> Any:
        if ctype in (CT_TRUE, CT_FALSE):  # a bool inside a list: one byte
            return self.byte() == CT_TRUE
        if ctype == CT_BYTE:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if ctype in (CT_I16, CT_I32, CT_I64):
            return self.zigzag()
        if ctype == CT_DOUBLE:
            return struct.unpack("<d", self.buf.read(8))[0]
        if ctype == CT_BINARY:
            return self.buf.read(self.varint())
        if ctype in (CT_LIST, CT_SET):
            header = self.byte()
            size = header >> 4
            if size == 15:
                size = self.varint()
            element = header & 0x0F
            return ThriftList(element, [self.value(element) for _ in range(size)])
        if ctype == CT_MAP:
            size = self.varint()
            if size == 0:
                return ThriftMap(0, 0, [])
            kinds = self.byte()
            k, v = kinds >> 4, kinds & 0x0F
            return ThriftMap(k, v, [(self.value(k), self.value(v)) for _ in range(size)])
        if ctype == CT_STRUCT:
            return self.struct()
        raise ValueError(f"unknown compact type {ctype}")

    def struct(self) -> Struct:
        fields: Struct = []
        last = 0
        while True:
            header = self.byte()
            ctype = header & 0x0F
            if ctype == CT_STOP:
                return fields
            delta = header >> 4
            fid = last + delta if delta else self.zigzag()
            if ctype in (CT_TRUE, CT_FALSE):
                fields.append((fid, CT_TRUE, ctype == CT_TRUE))
            else:
                fields.append((fid, ctype, self.value(ctype)))
            last = fid


def decode_struct(data: bytes) -> Struct:
    return _Reader(data).struct()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


def _encode_value(ctype: int, value: Any) -> bytes:
    if ctype in (CT_TRUE, CT_FALSE):
        return bytes([CT_TRUE if value else CT_FALSE])
    if ctype == CT_BYTE:
        return struct.pack("b", value)
    if ctype in (CT_I16, CT_I32, CT_I64):
        return _zigzag(value)
    if ctype == CT_DOUBLE:
        return struct.pack("<d", value)
    if ctype == CT_BINARY:
        return _varint(len(value)) + value
    if ctype in (CT_LIST, CT_SET):
        n, et = len(value.values), value.element_type
        head = bytes([(n << 4) | et]) if n < 15 else bytes([0xF0 | et]) + _varint(n)
        return head + b"".join(_encode_value(et, v) for v in value.values)
    if ctype == CT_MAP:
        if not value.items:
            return b"\x00"
        return (_varint(len(value.items)) + bytes([(value.key_type << 4) | value.value_type])
                + b"".join(_encode_value(value.key_type, k) + _encode_value(value.value_type, v)
                           for k, v in value.items))
    if ctype == CT_STRUCT:
        return encode_struct(value)
    raise ValueError(f"unknown compact type {ctype}")


def encode_struct(fields: Struct) -> bytes:
    out = bytearray()
    last = 0
    for fid, ctype, value in fields:
        wire = (CT_TRUE if value else CT_FALSE) if ctype in (CT_TRUE, CT_FALSE) else ctype
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | wire)
        else:
            out.append(wire)
            out += _zigzag(fid)
        if ctype not in (CT_TRUE, CT_FALSE):
            out += _encode_value(ctype, value)
        last = fid
    out.append(CT_STOP)
    return bytes(out)


def get(fields: Struct, fid: int, default: Any = None) -> Any:
    for f, _, v in fields:
        if f == fid:
            return v
    return default


def put(fields: Struct, fid: int, ctype: int, value: Any) -> None:
    """Set field ``fid``, keeping the fields in id order."""
    for i, (f, _, _) in enumerate(fields):
        if f == fid:
            fields[i] = (fid, ctype, value)
            return
        if f > fid:
            fields.insert(i, (fid, ctype, value))
            return
    fields.append((fid, ctype, value))


def drop(fields: Struct, fid: int) -> None:
    fields[:] = [f for f in fields if f[0] != fid]


# --------------------------------------------------------------------------------------------
# Parquet's FileMetaData (parquet.thrift)
# --------------------------------------------------------------------------------------------

# FileMetaData
_SCHEMA, _KEY_VALUE_METADATA = 2, 5
# SchemaElement
_TYPE, _NAME, _NUM_CHILDREN, _CONVERTED_TYPE, _LOGICAL_TYPE = 1, 4, 5, 6, 10
_FIELD_ID = 9
# Type
INT32, INT64, INT96 = 1, 2, 3
# ConvertedType
_TIME_MILLIS, _TIMESTAMP_MILLIS, _TIMESTAMP_MICROS = 7, 9, 10
# LogicalType union members, TimeUnit union members
_LT_TIME, _LT_TIMESTAMP = 7, 8
_UNIT = {"MILLIS": 1, "MICROS": 2, "NANOS": 3}

#: the key Spark stores its own schema of the file under (Java Paimon stores none)
SPARK_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"


@dataclass(frozen=True)
class Annotation:
    """The logical type a leaf column of a file gets: ``kind`` "timestamp" (INT64) or
    "time" (INT32), in ``unit`` "MILLIS"/"MICROS", ``utc`` as Parquet's
    ``isAdjustedToUTC``."""

    kind: str
    unit: str
    utc: bool

    @property
    def physical(self) -> int:
        return INT32 if self.kind == "time" else INT64


def _logical_type(a: Annotation) -> Struct:
    inner: Struct = [(1, CT_TRUE, a.utc), (2, CT_STRUCT, [(_UNIT[a.unit], CT_STRUCT, [])])]
    return [(_LT_TIME if a.kind == "time" else _LT_TIMESTAMP, CT_STRUCT, inner)]


def _converted_type(a: Annotation) -> int | None:
    # as parquet-mr 1.13 (Java Paimon's) writes it: whatever isAdjustedToUTC says
    if a.kind == "time":
        return _TIME_MILLIS if a.unit == "MILLIS" else None
    return {"MILLIS": _TIMESTAMP_MILLIS, "MICROS": _TIMESTAMP_MICROS}.get(a.unit)


def _leaf_paths(schema: list[Struct]) -> dict[tuple[str, ...], Struct]:
    """Schema elements (depth first, the root first) by their column path."""
    out: dict[tuple[str, ...], Struct] = {}
    pos = 1

    def walk(prefix: tuple[str, ...], count: int) -> None:
        nonlocal pos
        for _ in range(count):
            element = schema[pos]
            pos += 1
            path = (*prefix, get(element, _NAME, b"").decode("utf-8"))
            children = get(element, _NUM_CHILDREN)
            if children:
                walk(path, children)
            else:
                out[path] = element

    walk((), get(schema[0], _NUM_CHILDREN, 0))
    return out


def read_footer(path: str) -> tuple[int, Struct]:
    """(offset of the footer in the file, the decoded FileMetaData)."""
    source = fileio.open_input(path)
    with open(source, "rb") if isinstance(source, str) else source as f:
        f.seek(0, 2)
        size = f.tell()
        if size < 12:
            raise CorruptFileError(path, "is too short for a Parquet file")
        f.seek(size - 8)
        tail = f.read(8)
        if tail[4:] != b"PAR1":
            raise CorruptFileError(path, "has no Parquet footer (PAR1) at its end")
        length = struct.unpack("<i", tail[:4])[0]
        start = size - 8 - length
        f.seek(start)
        return start, decode_struct(f.read(length))


def annotate_columns(path: str, annotations: Mapping[tuple[str, ...], Annotation],
                     int96: Sequence[tuple[str, ...]] = (),
                     field_ids: Mapping[tuple[str, ...], int] | None = None) -> None:
    """Give the leaf columns at ``annotations``' paths their logical types (and those at
    ``field_ids``' paths their field ids), and drop Spark's own schema from the file's
    metadata (it would still say BIGINT). The columns at ``int96`` paths are checked to be
    INT96. The file is rewritten from its footer on; its data stay where they are."""
    start, meta = read_footer(path)
    leaves = _leaf_paths(get(meta, _SCHEMA).values)
    for col, fid in (field_ids or {}).items():
        element = leaves.get(col)
        if element is None:
            raise CorruptFileError(path, f"has no column {'.'.join(col)}")
        put(element, _FIELD_ID, CT_I32, fid)
    for col, a in annotations.items():
        element = leaves.get(col)
        if element is None or get(element, _TYPE) != a.physical:
            raise CorruptFileError(path, f"column {'.'.join(col)} is not the "
                                         f"{'INT32' if a.physical == INT32 else 'INT64'} "
                                         "column schemalab wrote")
        put(element, _LOGICAL_TYPE, CT_STRUCT, _logical_type(a))
        converted = _converted_type(a)
        if converted is None:
            drop(element, _CONVERTED_TYPE)
        else:
            put(element, _CONVERTED_TYPE, CT_I32, converted)
    for col in int96:
        element = leaves.get(col)
        if element is None or get(element, _TYPE) != INT96:
            raise CorruptFileError(
                path, f"column {'.'.join(col)} was not written as INT96: the session's "
                "spark.sql.parquet.outputTimestampType must stay INT96 while schemalab writes")
    kv = get(meta, _KEY_VALUE_METADATA)
    if kv is not None:
        kv.values = [e for e in kv.values if get(e, 1) != SPARK_ROW_METADATA]
    footer = encode_struct(meta)
    _rewrite_tail(path, start, footer + struct.pack("<i", len(footer)) + b"PAR1")


def write_footer(path: str, start: int, meta: Struct) -> None:
    """Replace the footer of the file :func:`read_footer` read with ``meta``."""
    footer = encode_struct(meta)
    _rewrite_tail(path, start, footer + struct.pack("<i", len(footer)) + b"PAR1")


def _rewrite_tail(path: str, start: int, tail: bytes) -> None:
    """Replace everything from ``start`` on with ``tail``: in place on a local disk, by
    rewriting the object on a store (which cannot append)."""
    if fileio.is_local(path):
        with open(path, "r+b") as f:
            f.truncate(start)
            f.seek(start)
            f.write(tail)
    else:
        fileio.write_replace(path, fileio.read_bytes(path)[:start] + tail)


def spark_schema_json(path: str) -> dict[str, Any] | None:
    """Spark's own schema of the file, if it stored one (for tests and diagnostics)."""
    _, meta = read_footer(path)
    kv = get(meta, _KEY_VALUE_METADATA)
    for e in kv.values if kv is not None else []:
        if get(e, 1) == SPARK_ROW_METADATA:
            return dict(json.loads(get(e, 2, b"{}")))
    return None
