"""Iceberg's types (format v1-v3) as the spec writes them in JSON, and their Paimon
equivalents. Types print the way Iceberg prints them::

    >>> iceberg_type_text(parse_iceberg_type({"type": "list", "element-id": 3,
    ...                                       "element-required": False,
    ...                                       "element": "decimal(9,2)"}))
    'list<decimal(9, 2)>'
"""


from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.types.model import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    STRING,
    TIMESTAMP,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    RowType,
    TypeRoot,
)
from schemalab.types.model import MapType as PaimonMapType

if TYPE_CHECKING:  # pragma: no cover

    pass


#: primitive type names valid in every format version
_PRIMITIVES_V1 = frozenset({"boolean", "int", "long", "float", "double", "date", "time",
                            "timestamp", "timestamptz", "string", "uuid", "binary"})
#: primitive types added in format v3 (spec, Appendix E)
_PRIMITIVES_V3 = frozenset({"unknown", "variant", "timestamp_ns", "timestamptz_ns",
                            "geometry", "geography"})
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\[\s*(\d+)\s*\]$")
_GEO = re.compile(r"^(geometry|geography)\s*\((.*)\)$")


@dataclass(frozen=True)
class IcebergPrimitiveType:
    """An Iceberg primitive: ``name`` is the canonical text (``"decimal(9, 2)"``)."""

    name: str
    #: "decimal", "fixed", "geometry", ... or the name itself
    kind: str
    precision: int | None = None
    scale: int | None = None
    length: int | None = None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class IcebergNestedField:
    """A struct field (or list element / map key / map value): the id survives renames."""

    id: int
    name: str
    type: IcebergType
    required: bool = False
    doc: str | None = None
    #: v3 defaults, JSON single-value serialization (spec, Appendix D)
    initial_default: Any = None
    write_default: Any = None


@dataclass(frozen=True)
class IcebergStructType:
    fields: tuple[IcebergNestedField, ...]

    def __str__(self) -> str:
        return iceberg_type_text(self)


@dataclass(frozen=True)
class IcebergListType:
    element_id: int
    element: IcebergType
    element_required: bool = False

    def __str__(self) -> str:
        return iceberg_type_text(self)


@dataclass(frozen=True)
class IcebergMapType:
    key_id: int
    key: IcebergType
    value_id: int
    value: IcebergType
    value_required: bool = False

    def __str__(self) -> str:
        return iceberg_type_text(self)


IcebergType = IcebergPrimitiveType | IcebergStructType | IcebergListType | IcebergMapType


class IcebergTypeError(ValueError):
    """A malformed type or field, reported with its context by the metadata parser."""


def parse_iceberg_type(node: Any, *, version: int = 3, where: str = "") -> IcebergType:
    """An Iceberg type from its JSON form (a string or a struct/list/map object).

    ``version`` gates the v3-only types (``variant``, ``unknown``, ``timestamp_ns``...)::

        >>> parse_iceberg_type("fixed[16]").length
        16
        >>> try:
        ...     parse_iceberg_type("variant", version=2)
        ... except ValueError as e:
        ...     print(e)
        type 'variant' needs format v3 (this is v2)
    """
    at = f" of {where}" if where else ""
    if isinstance(node, str):
        text = node.strip()
        low = text.lower()
        if low in _PRIMITIVES_V1:
            return IcebergPrimitiveType(low, low)
        if low in _PRIMITIVES_V3 or _GEO.match(low):
            kind = _GEO.match(low).group(1) if _GEO.match(low) else low  # type: ignore[union-attr]
            if version < 3:
                raise IcebergTypeError(f"type '{text}'{at} needs format v3 (this is v{version})")
            return IcebergPrimitiveType(re.sub(r"\s+", "", text) if kind != low else low, kind)
        m = _DECIMAL.match(low)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            if not 1 <= p <= 38 or s > p:
                raise IcebergTypeError(f"invalid decimal precision/scale in '{text}'{at}")
            return IcebergPrimitiveType(f"decimal({p}, {s})", "decimal", precision=p, scale=s)
        m = _FIXED.match(low)
        if m:
            n = int(m.group(1))
            return IcebergPrimitiveType(f"fixed[{n}]", "fixed", length=n)
        raise IcebergTypeError(f"unknown type '{text}'{at}")
    if not isinstance(node, dict):
        raise IcebergTypeError(f"a type must be a string or an object, not {json_kind(node)}{at}")
    if "type" not in node:
        raise IcebergTypeError(f"missing 'type'{at} (a nested type needs \"type\": \"struct\", "
                         "\"list\" or \"map\")")
    kind = node["type"]
    if kind == "struct":
        return IcebergStructType(parse_fields(node, version, where))
    if kind == "list":
        _need(node, ("element-id", "element", "element-required"), f"list{at}")
        eid = json_int(node["element-id"], f"'element-id'{at}")
        sub = f"{where}.element" if where else "element"
        return IcebergListType(eid, parse_iceberg_type(node["element"], version=version, where=sub),
                        json_bool(node["element-required"], f"'element-required'{at}"))
    if kind == "map":
        _need(node, ("key-id", "key", "value-id", "value", "value-required"), f"map{at}")
        base = where or "map"
        return IcebergMapType(json_int(node["key-id"], f"'key-id'{at}"),
                       parse_iceberg_type(node["key"], version=version, where=f"{base}.key"),
                       json_int(node["value-id"], f"'value-id'{at}"),
                       parse_iceberg_type(node["value"], version=version, where=f"{base}.value"),
                       json_bool(node["value-required"], f"'value-required'{at}"))
    raise IcebergTypeError(f"unknown nested type {kind!r}{at}")


def parse_fields(node: dict[str, Any], version: int, where: str) -> tuple[IcebergNestedField, ...]:
    fields = node.get("fields")
    if not isinstance(fields, list):
        raise IcebergTypeError(f"struct{' ' + where if where else ''} has no 'fields' list")
    out = []
    for i, f in enumerate(fields):
        if not isinstance(f, dict):
            raise IcebergTypeError(f"field #{i}{' of ' + where if where else ''} is not an object")
        label = f"field #{i}" + (f" of {where}" if where else "")
        _need(f, ("id", "name", "required", "type"), label)
        name = f["name"]
        if not isinstance(name, str):
            raise IcebergTypeError(f"{label}: 'name' must be a string")
        path = f"{where}.{name}" if where else name
        if version < 3 and f.get("initial-default") is not None:
            raise IcebergTypeError(f"field '{path}' has an initial-default, which needs format v3 "
                             f"(this is v{version})")
        out.append(IcebergNestedField(json_int(f["id"], f"'id' of field '{path}'"), name,
                                      parse_iceberg_type(f["type"], version=version,
                                                         where=f"field '{path}'"),
                                      json_bool(f["required"], f"'required' of field '{path}'"),
                                      f.get("doc"), f.get("initial-default"),
                                      f.get("write-default")))
    return tuple(out)


def _need(node: Mapping[str, Any], keys: Iterable[str], what: str) -> None:
    for k in keys:
        if k not in node:
            raise IcebergTypeError(f"{what}: missing '{k}'")


def json_int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise IcebergTypeError(f"{what} must be an integer, not {json_kind(v)}")
    return v


def json_bool(v: Any, what: str) -> bool:
    if not isinstance(v, bool):
        raise IcebergTypeError(f"{what} must be true or false, not {json_kind(v)}")
    return v


def json_kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def iceberg_type_text(t: IcebergType) -> str:
    """Iceberg's own rendering: ``long``, ``decimal(9, 2)``, ``list<string>``,
    ``map<string, int>``, ``struct<city: string, zip: int>``."""
    if isinstance(t, IcebergPrimitiveType):
        return t.name
    if isinstance(t, IcebergListType):
        return f"list<{iceberg_type_text(t.element)}>"
    if isinstance(t, IcebergMapType):
        return f"map<{iceberg_type_text(t.key)}, {iceberg_type_text(t.value)}>"
    return "struct<" + ", ".join(f"{f.name}: {iceberg_type_text(f.type)}" for f in t.fields) + ">"


def lineage_type_text(t: IcebergType) -> str:
    """A type as the lineage compares it: a struct is just ``struct`` (its fields have
    lineages of their own, so renaming ``address.city`` is not a retype of ``address``)."""
    if isinstance(t, IcebergStructType):
        return "struct"
    if isinstance(t, IcebergListType):
        return f"list<{lineage_type_text(t.element)}>"
    if isinstance(t, IcebergMapType):
        return f"map<{lineage_type_text(t.key)}, {lineage_type_text(t.value)}>"
    return t.name


def to_paimon(t: IcebergType, nullable: bool = True) -> DataType | None:
    """The schemalab (Paimon) type that holds values of ``t`` for Spark reads, or None for
    ``unknown`` (always NULL). ``uuid`` and ``fixed[L]`` become BINARY(16)/BINARY(L),
    ``geometry``/``geography`` (WKB) BYTES, ``timestamp_ns`` TIMESTAMP(9)::

        >>> to_paimon(parse_iceberg_type("decimal(18,3)")).sql()
        'DECIMAL(18, 3)'
        >>> to_paimon(parse_iceberg_type("timestamptz")).sql()
        'TIMESTAMP(6) WITH LOCAL TIME ZONE'
    """
    if isinstance(t, IcebergStructType):
        fields = []
        for f in t.fields:
            inner = to_paimon(f.type, not f.required)
            if inner is None:
                continue
            fields.append(DataField(f.id, f.name, inner, f.doc))
        return RowType(tuple(fields), nullable)
    if isinstance(t, IcebergListType):
        el = to_paimon(t.element, not t.element_required)
        return None if el is None else ArrayType(el, nullable)
    if isinstance(t, IcebergMapType):
        key, value = to_paimon(t.key, False), to_paimon(t.value, not t.value_required)
        return None if key is None or value is None else PaimonMapType(key, value, nullable)
    k = t.kind
    simple: dict[str, DataType] = {
        "boolean": BOOLEAN(), "int": INT(), "long": BIGINT(), "float": FLOAT(),
        "double": DOUBLE(), "date": DATE(), "string": STRING(), "binary": BYTES(),
        "timestamp": TIMESTAMP(6), "geometry": BYTES(), "geography": BYTES(),
    }
    if k in simple:
        return simple[k].with_nullable(nullable)
    if k == "decimal":
        return DECIMAL(t.precision or 38, t.scale or 0, nullable)
    if k == "timestamptz":
        return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, nullable, precision=6)
    if k == "timestamp_ns":
        return AtomicType(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, nullable, precision=9)
    if k == "timestamptz_ns":
        return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, nullable, precision=9)
    if k == "time":
        return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, nullable, precision=6)
    if k == "uuid":
        return AtomicType(TypeRoot.BINARY, nullable, length=16)
    if k == "fixed":
        return AtomicType(TypeRoot.BINARY, nullable, length=t.length)
    if k == "variant":
        return AtomicType(TypeRoot.VARIANT, nullable)
    return None  # unknown

