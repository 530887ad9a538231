"""A data file's Parquet footer made Iceberg's: every schema element gets its Iceberg field
id (list elements and map keys/values too, which Spark's writer cannot tag), and the file's
metrics are read back from the footer in Iceberg's form: column sizes, value and null
counts, and lower/upper bounds in the spec's single-value binary serialization (strings
and binaries truncated to 16, as Java's default ``truncate(16)`` metrics mode does)::

    >>> from schemalab.iceberg.write.schema_json import primitive
    >>> truncate_upper("abcdefghijklmnopqrstu".encode(), primitive("string")).decode()
    'abcdefghijklmnoq'
    >>> decimal_bytes(-1), decimal_bytes(255)
    (b'\\xff', b'\\x00\\xff')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemalab.engine.parquet_thrift import (
    CT_I32,
    SPARK_ROW_METADATA,
    Struct,
    get,
    put,
    read_footer,
    write_footer,
)
from schemalab.errors import CorruptFileError
from schemalab.iceberg.metadata import IcebergSchema
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergPrimitiveType,
    IcebergStructType,
    IcebergType,
)

# FileMetaData, SchemaElement, RowGroup, ColumnChunk, ColumnMetaData, Statistics fields
_F_SCHEMA, _F_NUM_ROWS, _F_ROW_GROUPS, _F_KV = 2, 3, 4, 5
_S_TYPE, _S_NAME, _S_CHILDREN, _S_FIELD_ID = 1, 4, 5, 9
_RG_COLUMNS, _RG_FILE_OFFSET = 1, 5
_CC_META = 3
_CM_NUM_VALUES, _CM_COMPRESSED, _CM_DATA_PAGE, _CM_DICT_PAGE, _CM_STATS = 5, 7, 9, 11, 12
_ST_NULLS, _ST_MAX, _ST_MIN = 3, 5, 6
_INT32, _INT64 = 1, 2
TRUNCATE = 16


@dataclass
class Leaf:
    field_id: int | None
    type: IcebergType | None
    repeated: bool
    physical: int | None


@dataclass
class FileMetrics:
    record_count: int
    column_sizes: dict[int, int] = field(default_factory=dict)
    value_counts: dict[int, int] = field(default_factory=dict)
    null_counts: dict[int, int] = field(default_factory=dict)
    lower_bounds: dict[int, bytes] = field(default_factory=dict)
    upper_bounds: dict[int, bytes] = field(default_factory=dict)
    split_offsets: list[int] = field(default_factory=list)


class _IdWalker:
    """Walks the footer's schema elements (depth first) alongside the Iceberg schema."""

    def __init__(self, elements: list[Struct]) -> None:
        self.elements = elements
        self.pos = 1
        self.leaves: list[Leaf] = []

    def element(self, t: IcebergType | None, fid: int | None, repeated: bool) -> None:
        el = self.elements[self.pos]
        self.pos += 1
        if fid is not None:
            put(el, _S_FIELD_ID, CT_I32, fid)
        n = get(el, _S_CHILDREN, 0) or 0
        if not n:
            self.leaves.append(Leaf(fid, t, repeated, get(el, _S_TYPE)))
            return
        if isinstance(t, IcebergStructType):
            by_name = {f.name: f for f in t.fields}
            for _ in range(n):
                child = by_name.get(self._name())
                self.element(child.type if child else None, child.id if child else None,
                             repeated)
        elif isinstance(t, IcebergListType | IcebergMapType):
            for _ in range(n):  # the repeated group (``list`` / ``key_value``)
                inner = self.elements[self.pos]
                self.pos += 1
                slots = ([(t.element, t.element_id)] if isinstance(t, IcebergListType)
                         else [(t.key, t.key_id), (t.value, t.value_id)])
                for i in range(get(inner, _S_CHILDREN, 0) or 0):
                    st, sid = slots[i] if i < len(slots) else (None, None)
                    self.element(st, sid, True)
        else:
            for _ in range(n):
                self.element(None, None, repeated)

    def _name(self) -> str:
        return bytes(get(self.elements[self.pos], _S_NAME, b"")).decode("utf-8")


def icebergize(path: str, schema: IcebergSchema) -> FileMetrics:
    """Give the file's schema elements their Iceberg field ids (in place, only the footer
    is rewritten; Spark's own schema in the key-value metadata goes, it has no ids) and
    return the file's metrics."""
    start, meta = read_footer(path)
    elements = get(meta, _F_SCHEMA).values
    walker = _IdWalker(elements)
    by_name = {f.name: f for f in schema.fields}
    for _ in range(get(elements[0], _S_CHILDREN, 0) or 0):
        f = by_name.get(walker._name())
        walker.element(f.type if f else None, f.id if f else None, False)
    if walker.pos != len(elements):
        raise CorruptFileError(path, "has schema elements schemalab did not expect")
    kv = get(meta, _F_KV)
    if kv is not None:
        kv.values = [e for e in kv.values if get(e, 1) != SPARK_ROW_METADATA]
    write_footer(path, start, meta)
    return _metrics(meta, walker.leaves)


def _metrics(meta: Struct, leaves: list[Leaf]) -> FileMetrics:
    groups = get(meta, _F_ROW_GROUPS)
    out = FileMetrics(int(get(meta, _F_NUM_ROWS, 0)))
    lows: dict[int, list[bytes | None]] = {}
    highs: dict[int, list[bytes | None]] = {}
    unknown: set[int] = set()
    for rg in groups.values if groups is not None else []:
        columns = get(rg, _RG_COLUMNS).values
        first = get(get(columns[0], _CC_META), _CM_DICT_PAGE) if columns else None
        offset: int | None = get(rg, _RG_FILE_OFFSET)
        if offset is None and columns:
            offset = first or get(get(columns[0], _CC_META), _CM_DATA_PAGE)
        if offset is not None:
            out.split_offsets.append(int(offset))
        for leaf, chunk in zip(leaves, columns, strict=True):
            if leaf.field_id is None or leaf.repeated:
                continue
            fid, cm = leaf.field_id, get(chunk, _CC_META)
            out.column_sizes[fid] = out.column_sizes.get(fid, 0) + int(get(cm, _CM_COMPRESSED))
            out.value_counts[fid] = out.value_counts.get(fid, 0) + int(get(cm, _CM_NUM_VALUES))
            st = get(cm, _CM_STATS)
            nulls = get(st, _ST_NULLS) if st is not None else None
            if nulls is None:
                unknown.add(fid)
                lows.setdefault(fid, []).append(None)
                continue
            out.null_counts[fid] = out.null_counts.get(fid, 0) + int(nulls)
            if int(nulls) == int(get(cm, _CM_NUM_VALUES)):
                continue  # all NULL: no bounds, none needed
            lows.setdefault(fid, []).append(get(st, _ST_MIN))
            highs.setdefault(fid, []).append(get(st, _ST_MAX))
    for fid in unknown:
        out.null_counts.pop(fid, None)
    for leaf in leaves:
        lid = leaf.field_id
        if lid is None or leaf.repeated or not isinstance(leaf.type, IcebergPrimitiveType):
            continue
        lo = _combine(lows.get(lid, []), leaf, min)
        hi = _combine(highs.get(lid, []), leaf, max)
        if lo is not None and hi is not None:
            out.lower_bounds[lid] = lo
            upper = truncate_upper(hi, leaf.type)
            if upper is not None:
                out.upper_bounds[lid] = upper
            out.lower_bounds[lid] = truncate_lower(lo, leaf.type)
    return out


def _combine(raws: list[bytes | None], leaf: Leaf, pick: Any) -> bytes | None:
    """Row groups' bounds → the file's, in Iceberg's single-value form (None when any row
    group with values has none, or for types whose footer bounds are not trusted)."""
    t = leaf.type
    assert isinstance(t, IcebergPrimitiveType)
    if not raws or any(r is None for r in raws) or t.kind in ("float", "double"):
        return None
    values = [_value(bytes(r), t, leaf.physical) for r in raws if r is not None]
    if any(v is None for v in values):
        return None
    return _encode(pick(values), t)


def _value(raw: bytes, t: IcebergPrimitiveType, physical: int | None) -> Any:
    k = t.kind
    if k in ("int", "date", "long", "timestamp", "timestamptz", "timestamp_ns",
             "timestamptz_ns", "time"):
        return int.from_bytes(raw, "little", signed=True)
    if k == "boolean":
        return raw[:1] != b"\x00"
    if k == "decimal":
        if physical in (_INT32, _INT64):
            return int.from_bytes(raw, "little", signed=True)
        return int.from_bytes(raw, "big", signed=True)
    if k in ("string", "binary", "fixed", "uuid"):
        return raw
    return None


def decimal_bytes(unscaled: int) -> bytes:
    """The minimal two's-complement big-endian bytes of an unscaled decimal."""
    n = 1
    while not -(1 << (8 * n - 1)) <= unscaled < (1 << (8 * n - 1)):
        n += 1
    return unscaled.to_bytes(n, "big", signed=True)


def _encode(v: Any, t: IcebergPrimitiveType) -> bytes:
    k = t.kind
    if k in ("int", "date"):
        return int(v).to_bytes(4, "little", signed=True)
    if k in ("long", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "time"):
        return int(v).to_bytes(8, "little", signed=True)
    if k == "boolean":
        return b"\x01" if v else b"\x00"
    if k == "decimal":
        return decimal_bytes(int(v))
    return bytes(v)


def truncate_lower(raw: bytes, t: IcebergPrimitiveType) -> bytes:
    if t.kind == "string":
        return raw.decode("utf-8", "replace")[:TRUNCATE].encode("utf-8")
    if t.kind == "binary":
        return raw[:TRUNCATE]
    return raw


def truncate_upper(raw: bytes, t: IcebergPrimitiveType) -> bytes | None:
    """The upper bound truncated as Java does: the prefix with its last character (byte)
    incremented, or None when no such bound exists."""
    if t.kind == "string":
        text = raw.decode("utf-8", "replace")
        if len(text) <= TRUNCATE:
            return raw
        chars = list(text[:TRUNCATE])
        for i in range(len(chars) - 1, -1, -1):
            c = ord(chars[i]) + 1
            if 0xD800 <= c <= 0xDFFF:
                c = 0xE000
            if c <= 0x10FFFF:
                return ("".join(chars[:i]) + chr(c)).encode("utf-8")
        return None
    if t.kind == "binary" and len(raw) > TRUNCATE:
        head = bytearray(raw[:TRUNCATE])
        for i in range(len(head) - 1, -1, -1):
            if head[i] < 0xFF:
                head[i] += 1
                return bytes(head[: i + 1])
        return None
    return raw
