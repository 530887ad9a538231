"""Open Apache Iceberg tables: metadata (format v1–v3), history, manifest trees, evolved reads.

An Iceberg table directory holds ``metadata/`` (``*.metadata.json``, manifest lists, manifests)
and ``data/``. Without a catalog, the current metadata file is the one
``metadata/version-hint.text`` points to, else the highest-numbered one::

    t = IcebergTable("warehouse/db/orders")      # or a path to one *.metadata.json
    t.format_version, t.schema.schema_id
    h = t.history()                              # TableHistory(format="iceberg")
    h.tree(h.snapshots[-1].id)                   # manifest list -> manifests -> files
    t.read(spark)                                # current snapshot, current schema
    t.read(spark, snapshot_id=s)                 # time travel with snapshot s's schema
    t.read(spark, snapshot_id=s, schema="current")

Metadata JSON is parsed here rather than by pyiceberg, which rejects some valid files
(``TableMetadataStatisticsFiles.json``) and cannot read zstd-compressed metadata. The rules
are the spec's: a field the spec requires for the file's ``format-version`` must be present,
and every refusal says which one::

    >>> import json, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "v1.metadata.json")
    >>> _ = open(p, "w").write(json.dumps({"format-version": 4}))
    >>> try:
    ...     IcebergTable(p)
    ... except UnsupportedVersionError as e:
    ...     print(e.what)
    format-version 4 is not supported (1-3)

Types print the way Iceberg prints them::

    >>> type_text(parse_type({"type": "list", "element-id": 3, "element-required": False,
    ...                       "element": "decimal(9,2)"}))
    'list<decimal(9, 2)>'
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import json
import os
import re
import struct
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from schemalab.errors import (
    CorruptFileError,
    SchemaLabError,
    TableNotFoundError,
    UnsupportedVersionError,
)
from schemalab.history import (
    FieldInfo,
    FileNode,
    ManifestListNode,
    ManifestNode,
    SchemaVersion,
    SnapshotNode,
    TableHistory,
    compute_lineage,
    with_events,
)
from schemalab.types import (
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
from schemalab.types import (
    MapType as PaimonMapType,
)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

    from schemalab.explain import ReadExplanation
    from schemalab.schema import TableSchema

SUPPORTED_VERSIONS = (1, 2, 3)
#: prefix of the synthetic column names the field-id scan requests (see read.py)
ID_SCAN_PREFIX = "_sl_f"
SchemaChoice = Literal["snapshot", "current"] | int | None

# ============================================================================================
# Types
# ============================================================================================

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
class PrimitiveType:
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
class NestedField:
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
class StructType:
    fields: tuple[NestedField, ...]

    def __str__(self) -> str:
        return type_text(self)


@dataclass(frozen=True)
class ListType:
    element_id: int
    element: IcebergType
    element_required: bool = False

    def __str__(self) -> str:
        return type_text(self)


@dataclass(frozen=True)
class MapType:
    key_id: int
    key: IcebergType
    value_id: int
    value: IcebergType
    value_required: bool = False

    def __str__(self) -> str:
        return type_text(self)


IcebergType = PrimitiveType | StructType | ListType | MapType


class _TypeError(ValueError):
    """A malformed type or field, reported with its context by the metadata parser."""


def parse_type(node: Any, *, version: int = 3, where: str = "") -> IcebergType:
    """An Iceberg type from its JSON form (a string or a struct/list/map object).

    ``version`` gates the v3-only types (``variant``, ``unknown``, ``timestamp_ns``...)::

        >>> parse_type("fixed[16]").length
        16
        >>> try:
        ...     parse_type("variant", version=2)
        ... except ValueError as e:
        ...     print(e)
        type 'variant' needs format v3 (this is v2)
    """
    at = f" of {where}" if where else ""
    if isinstance(node, str):
        text = node.strip()
        low = text.lower()
        if low in _PRIMITIVES_V1:
            return PrimitiveType(low, low)
        if low in _PRIMITIVES_V3 or _GEO.match(low):
            kind = _GEO.match(low).group(1) if _GEO.match(low) else low  # type: ignore[union-attr]
            if version < 3:
                raise _TypeError(f"type '{text}'{at} needs format v3 (this is v{version})")
            return PrimitiveType(re.sub(r"\s+", "", text) if kind != low else low, kind)
        m = _DECIMAL.match(low)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            if not 1 <= p <= 38 or s > p:
                raise _TypeError(f"invalid decimal precision/scale in '{text}'{at}")
            return PrimitiveType(f"decimal({p}, {s})", "decimal", precision=p, scale=s)
        m = _FIXED.match(low)
        if m:
            n = int(m.group(1))
            return PrimitiveType(f"fixed[{n}]", "fixed", length=n)
        raise _TypeError(f"unknown type '{text}'{at}")
    if not isinstance(node, dict):
        raise _TypeError(f"a type must be a string or an object, not {_json_kind(node)}{at}")
    if "type" not in node:
        raise _TypeError(f"missing 'type'{at} (a nested type needs \"type\": \"struct\", "
                         "\"list\" or \"map\")")
    kind = node["type"]
    if kind == "struct":
        return StructType(_parse_fields(node, version, where))
    if kind == "list":
        _need(node, ("element-id", "element", "element-required"), f"list{at}")
        eid = _int(node["element-id"], f"'element-id'{at}")
        sub = f"{where}.element" if where else "element"
        return ListType(eid, parse_type(node["element"], version=version, where=sub),
                        _bool(node["element-required"], f"'element-required'{at}"))
    if kind == "map":
        _need(node, ("key-id", "key", "value-id", "value", "value-required"), f"map{at}")
        base = where or "map"
        return MapType(_int(node["key-id"], f"'key-id'{at}"),
                       parse_type(node["key"], version=version, where=f"{base}.key"),
                       _int(node["value-id"], f"'value-id'{at}"),
                       parse_type(node["value"], version=version, where=f"{base}.value"),
                       _bool(node["value-required"], f"'value-required'{at}"))
    raise _TypeError(f"unknown nested type {kind!r}{at}")


def _parse_fields(node: dict[str, Any], version: int, where: str) -> tuple[NestedField, ...]:
    fields = node.get("fields")
    if not isinstance(fields, list):
        raise _TypeError(f"struct{' ' + where if where else ''} has no 'fields' list")
    out = []
    for i, f in enumerate(fields):
        if not isinstance(f, dict):
            raise _TypeError(f"field #{i}{' of ' + where if where else ''} is not an object")
        label = f"field #{i}" + (f" of {where}" if where else "")
        _need(f, ("id", "name", "required", "type"), label)
        name = f["name"]
        if not isinstance(name, str):
            raise _TypeError(f"{label}: 'name' must be a string")
        path = f"{where}.{name}" if where else name
        if version < 3 and f.get("initial-default") is not None:
            raise _TypeError(f"field '{path}' has an initial-default, which needs format v3 "
                             f"(this is v{version})")
        out.append(NestedField(_int(f["id"], f"'id' of field '{path}'"), name,
                               parse_type(f["type"], version=version, where=f"field '{path}'"),
                               _bool(f["required"], f"'required' of field '{path}'"),
                               f.get("doc"), f.get("initial-default"), f.get("write-default")))
    return tuple(out)


def _need(node: Mapping[str, Any], keys: Iterable[str], what: str) -> None:
    for k in keys:
        if k not in node:
            raise _TypeError(f"{what}: missing '{k}'")


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _TypeError(f"{what} must be an integer, not {_json_kind(v)}")
    return v


def _bool(v: Any, what: str) -> bool:
    if not isinstance(v, bool):
        raise _TypeError(f"{what} must be true or false, not {_json_kind(v)}")
    return v


def _json_kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def type_text(t: IcebergType) -> str:
    """Iceberg's own rendering: ``long``, ``decimal(9, 2)``, ``list<string>``,
    ``map<string, int>``, ``struct<city: string, zip: int>``."""
    if isinstance(t, PrimitiveType):
        return t.name
    if isinstance(t, ListType):
        return f"list<{type_text(t.element)}>"
    if isinstance(t, MapType):
        return f"map<{type_text(t.key)}, {type_text(t.value)}>"
    return "struct<" + ", ".join(f"{f.name}: {type_text(f.type)}" for f in t.fields) + ">"


def lineage_type_text(t: IcebergType) -> str:
    """A type as the lineage compares it: a struct is just ``struct`` (its fields have
    lineages of their own, so renaming ``address.city`` is not a retype of ``address``)."""
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return f"list<{lineage_type_text(t.element)}>"
    if isinstance(t, MapType):
        return f"map<{lineage_type_text(t.key)}, {lineage_type_text(t.value)}>"
    return t.name


def to_paimon(t: IcebergType, nullable: bool = True) -> DataType | None:
    """The schemalab (Paimon) type that holds values of ``t`` for Spark reads, or None for
    ``unknown`` (always NULL). ``uuid`` and ``fixed[L]`` become BINARY(16)/BINARY(L),
    ``geometry``/``geography`` (WKB) BYTES, ``timestamp_ns`` TIMESTAMP(9)::

        >>> to_paimon(parse_type("decimal(18,3)")).sql()
        'DECIMAL(18, 3)'
        >>> to_paimon(parse_type("timestamptz")).sql()
        'TIMESTAMP(6) WITH LOCAL TIME ZONE'
    """
    if isinstance(t, StructType):
        fields = []
        for f in t.fields:
            inner = to_paimon(f.type, not f.required)
            if inner is None:
                continue
            fields.append(DataField(f.id, f.name, inner, f.doc))
        return RowType(tuple(fields), nullable)
    if isinstance(t, ListType):
        el = to_paimon(t.element, not t.element_required)
        return None if el is None else ArrayType(el, nullable)
    if isinstance(t, MapType):
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


# ============================================================================================
# Schemas, partition specs, sort orders, snapshots
# ============================================================================================


@dataclass(frozen=True)
class IcebergSchema:
    """One schema version: ``fields`` are the top-level columns."""

    schema_id: int
    fields: tuple[NestedField, ...]
    identifier_field_ids: tuple[int, ...] = ()

    @functools.cached_property
    def index(self) -> dict[int, tuple[tuple[str, ...], NestedField]]:
        """Every field id (nested, list elements, map keys/values too) → (path, field).
        Paths follow Iceberg's naming: ``address.city``, ``tags.element``, ``m.key``."""
        out: dict[int, tuple[tuple[str, ...], NestedField]] = {}
        for f in self.fields:
            _index_field(f, (f.name,), out)
        return out

    def find(self, field_id: int) -> NestedField | None:
        hit = self.index.get(field_id)
        return hit[1] if hit else None

    def full_name(self, field_id: int) -> str | None:
        hit = self.index.get(field_id)
        return ".".join(hit[0]) if hit else None

    @property
    def highest_field_id(self) -> int:
        return max(self.index, default=0)

    def to_paimon(self, table_options: Mapping[str, str] | None = None) -> TableSchema:
        """This version as a schemalab TableSchema (for tools written against Paimon's
        model); ``unknown`` columns are left out because they have no Paimon type."""
        from schemalab.schema import TableSchema

        fields = []
        for f in self.fields:
            t = to_paimon(f.type, not f.required)
            if t is not None:
                fields.append(DataField(f.id, f.name, t, f.doc))
        keys = tuple(n for i in self.identifier_field_ids if (n := self.full_name(i)))
        return TableSchema(self.schema_id, tuple(fields), self.highest_field_id,
                           primary_keys=keys, options=dict(table_options or {}))


def _index_field(f: NestedField, path: tuple[str, ...],
                 out: dict[int, tuple[tuple[str, ...], NestedField]]) -> None:
    out[f.id] = (path, f)
    t = f.type
    if isinstance(t, StructType):
        for c in t.fields:
            _index_field(c, (*path, c.name), out)
    elif isinstance(t, ListType):
        _index_field(NestedField(t.element_id, "element", t.element, t.element_required),
                     (*path, "element"), out)
    elif isinstance(t, MapType):
        _index_field(NestedField(t.key_id, "key", t.key, True), (*path, "key"), out)
        _index_field(NestedField(t.value_id, "value", t.value, t.value_required),
                     (*path, "value"), out)


@dataclass(frozen=True)
class PartitionField:
    field_id: int
    source_ids: tuple[int, ...]
    name: str
    transform: str


@dataclass(frozen=True)
class PartitionSpec:
    spec_id: int
    fields: tuple[PartitionField, ...]


@dataclass(frozen=True)
class SortField:
    source_ids: tuple[int, ...]
    transform: str
    direction: str
    null_order: str


@dataclass(frozen=True)
class SortOrder:
    order_id: int
    fields: tuple[SortField, ...]


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    parent_id: int | None
    timestamp_ms: int
    sequence_number: int
    #: manifest list URI; None for a v1 snapshot that lists its manifests inline
    manifest_list: str | None
    manifests: tuple[str, ...] = ()
    summary: Mapping[str, str] = field(default_factory=dict)
    schema_id: int | None = None

    @property
    def operation(self) -> str:
        return str(self.summary.get("operation", "")) or "unknown"


@dataclass(frozen=True)
class TableMetadata:
    """A parsed, validated ``*.metadata.json``. v1 files are read the way the spec's
    Appendix E says (defaults for the fields v2 added)."""

    path: str
    format_version: int
    table_uuid: str | None
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[IcebergSchema, ...]
    current_schema_id: int
    specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int | None
    sort_orders: tuple[SortOrder, ...]
    default_sort_order_id: int
    properties: Mapping[str, str]
    current_snapshot_id: int | None
    snapshots: tuple[Snapshot, ...]
    snapshot_log: tuple[tuple[int, int], ...]
    metadata_log: tuple[tuple[int, str], ...]
    refs: Mapping[str, Mapping[str, Any]]
    next_row_id: int | None = None

    def schema(self, schema_id: int | None = None) -> IcebergSchema:
        sid = self.current_schema_id if schema_id is None else schema_id
        for s in self.schemas:
            if s.schema_id == sid:
                return s
        raise KeyError(f"no schema {sid}")

    def spec(self, spec_id: int) -> PartitionSpec | None:
        return next((s for s in self.specs if s.spec_id == spec_id), None)

    def snapshot(self, snapshot_id: int) -> Snapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)


# ============================================================================================
# Parsing and validating metadata JSON
# ============================================================================================

#: required keys per format version, in the spec's table order (the first missing one is
#: reported). v1's `schema`/`partition-spec` may be replaced by their v2 successors
#: (`schemas` + `current-schema-id`, `partition-specs` + `default-spec-id`), as the spec's
#: deprecation notes say; Java writes both in v1 files.
_REQUIRED: dict[int, tuple[str, ...]] = {
    1: ("format-version", "location", "last-updated-ms", "last-column-id", "schema",
        "partition-spec"),
    2: ("format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
        "last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id",
        "last-partition-id", "sort-orders", "default-sort-order-id"),
}
_REQUIRED[3] = (*_REQUIRED[2], "next-row-id")
_V1_SUCCESSORS = {"schema": ("schemas", "current-schema-id"),
                  "partition-spec": ("partition-specs", "default-spec-id")}
_VIEW_KEYS = ("view-uuid", "current-version-id", "versions", "version-log")


def read_json_bytes(path: str) -> bytes:
    """A metadata file's JSON bytes: plain, gzip (the spec's ``*.gz.metadata.json``) or
    zstd, recognised by their magic bytes rather than the name."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise TableNotFoundError(f"{path}: no such Iceberg metadata file",
                                 rule="table-must-exist") from None
    except OSError as e:
        raise CorruptFileError(path, f"cannot be read: {e.strerror or e}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise CorruptFileError(path, f"is not valid gzip: {e}") from None
    if raw[:4] == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard
        except ImportError:  # pragma: no cover - zstandard is a dependency
            raise CorruptFileError(path, "is zstd-compressed and the zstandard package is "
                                         "not installed") from None
        try:
            return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        except zstandard.ZstdError as e:
            raise CorruptFileError(path, f"is not valid zstd: {e}") from None
    return raw


def load_json(path: str) -> Any:
    raw = read_json_bytes(path)
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptFileError(path, f"is not valid JSON: {e}") from None


def parse_table_metadata(data: Any, path: str) -> TableMetadata:
    """Validate and parse table metadata JSON; a refusal is a CorruptFileError (or
    UnsupportedVersionError) whose ``what`` says exactly what is wrong."""
    try:
        return _parse_table_metadata(data, path)
    except _TypeError as e:
        raise CorruptFileError(path, str(e)) from None
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        # a value of the wrong shape somewhere the checks above do not look closely
        raise CorruptFileError(path, f"malformed table metadata ({type(e).__name__}: "
                                     f"{e})") from None


def _parse_table_metadata(d: Any, path: str) -> TableMetadata:
    def bad(what: str) -> CorruptFileError:
        return CorruptFileError(path, what)

    if not isinstance(d, dict):
        raise bad(f"table metadata must be a JSON object, not {_json_kind(d)}")
    if any(k in d for k in _VIEW_KEYS) and "table-uuid" not in d:
        raise bad("this is Iceberg VIEW metadata, not a table")
    if "format-version" not in d:
        raise bad("missing 'format-version'")
    v = d["format-version"]
    if isinstance(v, bool) or not isinstance(v, int):
        raise bad(f"'format-version' must be an integer, not {_json_kind(v)}")
    if v not in SUPPORTED_VERSIONS:
        raise UnsupportedVersionError(
            path, f"format-version {v} is not supported "
                  f"({SUPPORTED_VERSIONS[0]}-{SUPPORTED_VERSIONS[-1]})")
    required = _REQUIRED[v]

    def require(*keys: str) -> None:
        # Checked section by section in the spec's order, each section's own consistency
        # right after it (as Java's parser does): a file whose current schema is missing
        # and which also lacks last-partition-id is reported for the schema.
        for key in keys:
            if key not in required or key in d:
                continue
            successors = _V1_SUCCESSORS.get(key) if v == 1 else None
            if successors and all(s in d for s in successors):
                continue
            raise bad(f"missing '{key}' (required in v{v})")

    require("format-version", "table-uuid", "location", "last-sequence-number",
            "last-updated-ms", "last-column-id")

    def get(key: str, kind: type, default: Any = None) -> Any:
        if key not in d or d[key] is None:
            return default
        val = d[key]
        if not isinstance(val, kind) or (kind is int and isinstance(val, bool)):
            want = {int: "an integer", str: "a string", list: "a list",
                    dict: "an object"}.get(kind, kind.__name__)
            raise bad(f"'{key}' must be {want}, not {_json_kind(val)}")
        return val

    location = get("location", str)
    # --- schemas ---------------------------------------------------------------------------
    require("schema", "schemas", "current-schema-id")
    schemas: list[IcebergSchema] = []
    if "schemas" in d:
        for i, s in enumerate(get("schemas", list)):
            schemas.append(_parse_schema(s, v, f"schemas[{i}]", require_id=v >= 2))
        current_schema_id = get("current-schema-id", int)
        if current_schema_id is None:  # v1 with `schemas` but only `schema` marking current
            current_schema_id = _parse_schema(d["schema"], v, "schema").schema_id
    else:
        s = _parse_schema(d["schema"], v, "schema")
        schemas.append(s)
        current_schema_id = s.schema_id
    seen: set[int] = set()
    for s in schemas:
        if s.schema_id in seen:
            raise bad(f"schema id {s.schema_id} appears twice in 'schemas'")
        seen.add(s.schema_id)
    if current_schema_id not in seen:
        raise bad(f"current-schema-id {current_schema_id} is not among the schemas")
    # --- partition specs -------------------------------------------------------------------
    require("partition-spec", "partition-specs", "default-spec-id", "last-partition-id")
    specs: list[PartitionSpec] = []
    if "partition-specs" in d:
        for i, sp in enumerate(get("partition-specs", list)):
            if not isinstance(sp, dict):
                raise bad(f"partition-specs[{i}] must be an object")
            for k in ("spec-id", "fields"):
                if k not in sp:
                    raise bad(f"partition-specs[{i}]: missing '{k}'")
            specs.append(PartitionSpec(
                _int(sp["spec-id"], f"partition-specs[{i}] 'spec-id'"),
                _parse_partition_fields(sp["fields"], v, f"partition-specs[{i}]")))
        default_spec_id = get("default-spec-id", int)
        if default_spec_id is None:
            default_spec_id = max((s.spec_id for s in specs), default=0)
    else:
        specs.append(PartitionSpec(0, _parse_partition_fields(d["partition-spec"], v,
                                                               "partition-spec")))
        default_spec_id = 0
    if default_spec_id not in {s.spec_id for s in specs}:
        raise bad(f"default-spec-id {default_spec_id} is not among the partition-specs")
    # --- sort orders -----------------------------------------------------------------------
    require("sort-orders", "default-sort-order-id")
    orders: list[SortOrder] = []
    for i, so in enumerate(get("sort-orders", list, [])):
        if not isinstance(so, dict):
            raise bad(f"sort-orders[{i}] must be an object")
        for k in ("order-id", "fields"):
            if k not in so:
                raise bad(f"sort-orders[{i}]: missing '{k}'")
        orders.append(SortOrder(_int(so["order-id"], f"sort-orders[{i}] 'order-id'"),
                                _parse_sort_fields(so["fields"], v, f"sort-orders[{i}]")))
    default_order = get("default-sort-order-id", int, 0)
    if not any(o.order_id == 0 for o in orders):
        # order 0 is "unsorted" and always exists (a v1 table may omit sort-orders)
        orders.insert(0, SortOrder(0, ()))
    if default_order not in {o.order_id for o in orders}:
        raise bad(f"default-sort-order-id {default_order} is not among the sort-orders")
    require(*required)  # whatever the sections above did not cover (v3's next-row-id)
    # --- snapshots -------------------------------------------------------------------------
    snapshots = [_parse_snapshot(s, v, i, bad) for i, s in enumerate(get("snapshots", list, []))]
    current_snapshot_id = get("current-snapshot-id", int)
    if current_snapshot_id is not None and current_snapshot_id < 0:
        current_snapshot_id = None  # Java writes -1 for "no snapshot yet"
    if current_snapshot_id is not None and not any(
            s.snapshot_id == current_snapshot_id for s in snapshots):
        raise bad(f"current-snapshot-id {current_snapshot_id} is not among the snapshots")
    snapshot_log = tuple((int(e["snapshot-id"]), int(e["timestamp-ms"]))
                         for e in get("snapshot-log", list, [])
                         if isinstance(e, dict) and "snapshot-id" in e and "timestamp-ms" in e)
    metadata_log = tuple((int(e["timestamp-ms"]), str(e["metadata-file"]))
                         for e in get("metadata-log", list, [])
                         if isinstance(e, dict) and "metadata-file" in e and "timestamp-ms" in e)
    properties = {str(k): str(val) for k, val in get("properties", dict, {}).items()}
    refs = {str(k): r for k, r in get("refs", dict, {}).items() if isinstance(r, dict)}
    if current_snapshot_id is not None and "main" not in refs:
        refs["main"] = {"snapshot-id": current_snapshot_id, "type": "branch"}
    return TableMetadata(
        path=path, format_version=v, table_uuid=get("table-uuid", str), location=location,
        last_sequence_number=get("last-sequence-number", int, 0),
        last_updated_ms=get("last-updated-ms", int), last_column_id=get("last-column-id", int),
        schemas=tuple(schemas), current_schema_id=current_schema_id, specs=tuple(specs),
        default_spec_id=default_spec_id, last_partition_id=get("last-partition-id", int),
        sort_orders=tuple(orders), default_sort_order_id=default_order,
        properties=properties, current_snapshot_id=current_snapshot_id,
        snapshots=tuple(snapshots), snapshot_log=snapshot_log, metadata_log=metadata_log,
        refs=refs, next_row_id=get("next-row-id", int))


def _parse_schema(node: Any, version: int, where: str, *,
                  require_id: bool = False) -> IcebergSchema:
    if not isinstance(node, dict):
        raise _TypeError(f"{where} must be an object, not {_json_kind(node)}")
    if "type" not in node:
        raise _TypeError(f'{where}: missing "type": "struct" (a schema is a struct type)')
    if node["type"] != "struct":
        raise _TypeError(f'{where}: "type" must be "struct", not {node["type"]!r}')
    if "schema-id" not in node and require_id:
        raise _TypeError(f"{where}: missing 'schema-id' (required in v{version})")
    sid = _int(node.get("schema-id", 0), f"{where} 'schema-id'")
    fields = _parse_fields(node, version, "")
    ids = node.get("identifier-field-ids") or []
    schema = IcebergSchema(sid, fields, tuple(int(i) for i in ids))
    seen: set[int] = set()
    for f in _all_ids(fields):
        if f in seen:
            raise _TypeError(f"{where}: field id {f} is used twice")
        seen.add(f)
    return schema


def _all_ids(fields: Iterable[NestedField]) -> Iterator[int]:
    for f in fields:
        yield f.id
        yield from _type_ids(f.type)


def _type_ids(t: IcebergType) -> Iterator[int]:
    if isinstance(t, StructType):
        yield from _all_ids(t.fields)
    elif isinstance(t, ListType):
        yield t.element_id
        yield from _type_ids(t.element)
    elif isinstance(t, MapType):
        yield t.key_id
        yield from _type_ids(t.key)
        yield t.value_id
        yield from _type_ids(t.value)


def _source_ids(node: dict[str, Any], version: int, where: str) -> tuple[int, ...]:
    if "source-id" in node:
        return (_int(node["source-id"], f"{where} 'source-id'"),)
    if version >= 3 and "source-ids" in node and isinstance(node["source-ids"], list):
        return tuple(_int(i, f"{where} 'source-ids'") for i in node["source-ids"])
    raise _TypeError(f"{where}: missing 'source-id'" + (" (or 'source-ids')"
                                                         if version >= 3 else ""))


def _parse_partition_fields(node: Any, version: int, where: str) -> tuple[PartitionField, ...]:
    if not isinstance(node, list):
        raise _TypeError(f"{where}: partition fields must be a list, not {_json_kind(node)}")
    out = []
    for i, f in enumerate(node):
        w = f"{where} field #{i}"
        if not isinstance(f, dict):
            raise _TypeError(f"{w} must be an object")
        for k in ("name", "transform"):
            if k not in f:
                raise _TypeError(f"{w}: missing '{k}'")
        if "field-id" not in f and version >= 2:
            raise _TypeError(f"{w}: missing 'field-id' (required in v{version})")
        # v1 specs may omit field ids: Java assigned them from 1000 in order (spec, App. C)
        fid = _int(f.get("field-id", 1000 + i), f"{w} 'field-id'")
        out.append(PartitionField(fid, _source_ids(f, version, w), str(f["name"]),
                                  str(f["transform"])))
    return tuple(out)


def _parse_sort_fields(node: Any, version: int, where: str) -> tuple[SortField, ...]:
    if not isinstance(node, list):
        raise _TypeError(f"{where}: sort fields must be a list, not {_json_kind(node)}")
    out = []
    for i, f in enumerate(node):
        w = f"{where} field #{i}"
        if not isinstance(f, dict):
            raise _TypeError(f"{w} must be an object")
        for k in ("transform", "direction", "null-order"):
            if k not in f:
                raise _TypeError(f"{w}: missing '{k}'")
        out.append(SortField(_source_ids(f, version, w), str(f["transform"]),
                             str(f["direction"]), str(f["null-order"])))
    return tuple(out)


def _parse_snapshot(s: Any, version: int, i: int, bad: Any) -> Snapshot:
    if not isinstance(s, dict):
        raise bad(f"snapshots[{i}] must be an object")
    sid = s.get("snapshot-id")
    where = f"snapshot {sid}" if isinstance(sid, int) else f"snapshots[{i}]"
    required = ["snapshot-id", "timestamp-ms"]
    if version >= 2:
        required += ["sequence-number", "manifest-list", "summary"]
    if version >= 3:
        required += ["first-row-id", "added-rows"]
    for k in required:
        if k not in s:
            raise bad(f"{where}: missing '{k}' (required in v{version})")
    if version == 1 and "manifest-list" not in s and "manifests" not in s:
        raise bad(f"{where}: has neither 'manifest-list' nor 'manifests'")
    summary = s.get("summary") or {}
    if not isinstance(summary, dict):
        raise bad(f"{where}: 'summary' must be an object")
    if s.get("summary") is not None and "operation" not in summary:
        raise bad(f"{where}: summary has no 'operation'")
    return Snapshot(
        snapshot_id=_int(sid, f"{where} 'snapshot-id'"),
        parent_id=s.get("parent-snapshot-id"),
        timestamp_ms=_int(s["timestamp-ms"], f"{where} 'timestamp-ms'"),
        sequence_number=int(s.get("sequence-number", 0)),
        manifest_list=s.get("manifest-list"),
        manifests=tuple(str(m) for m in s.get("manifests") or ()),
        summary={str(k): str(val) for k, val in summary.items()},
        schema_id=s.get("schema-id"))


# ============================================================================================
# Finding the current metadata file
# ============================================================================================

_NUMBERED = re.compile(r"^(\d+)-.+\.metadata\.json(?:\.gz)?$")
_VERSIONED = re.compile(r"^v(\d+)(?:\.[A-Za-z0-9]+)?\.metadata\.json(?:\.gz)?$")


def metadata_version(name: str) -> int | None:
    """The version number in a metadata file name (``00003-<uuid>.metadata.json``,
    ``v3.metadata.json``, ``v3.gz.metadata.json``, ``v3.metadata.json.gz``)::

        >>> metadata_version("00012-0a26.metadata.json"), metadata_version("v7.gz.metadata.json")
        (12, 7)
    """
    m = _NUMBERED.match(name) or _VERSIONED.match(name)
    return int(m.group(1)) if m else None


def find_current_metadata(table_dir: str) -> str:
    """The current metadata file of the table at ``table_dir``.

    ``metadata/version-hint.text`` (Hadoop tables) names version N; as Java's
    HadoopTableOperations does, newer versions N+1, N+2... that exist are taken too (a writer
    that died between writing vN+1 and updating the hint). Without a hint, the highest
    number wins; two files with the same number (a lost commit race leaves one behind) are
    told apart by their ``last-updated-ms``. Without a catalog this is the best guess: open a
    metadata file directly to pin an exact version."""
    mdir = os.path.join(table_dir, "metadata")
    try:
        names = os.listdir(mdir)
    except OSError:
        raise TableNotFoundError(f"{table_dir} is not an Iceberg table directory (no "
                                 "metadata/ inside)", rule="table-must-exist") from None
    by_version: dict[int, list[str]] = {}
    for n in names:
        ver = metadata_version(n)
        if ver is not None:
            by_version.setdefault(ver, []).append(n)
    hint = os.path.join(mdir, "version-hint.text")
    if os.path.isfile(hint):
        with open(hint, encoding="utf-8", errors="replace") as fh:
            text = fh.read().strip()
        if not text.isdigit():
            raise CorruptFileError(hint, f"must hold a version number, not {text[:40]!r}")
        ver = int(text)
        if ver not in by_version:
            raise CorruptFileError(hint, f"points to version {ver}, but metadata/ has no "
                                         f"v{ver}.metadata.json (or {ver:05d}-*.metadata.json)")
        while ver + 1 in by_version:
            ver += 1
        return os.path.join(mdir, _pick(mdir, by_version[ver]))
    if not by_version:
        raise TableNotFoundError(f"{table_dir} is not an Iceberg table directory (no "
                                 "*.metadata.json in metadata/)", rule="table-must-exist")
    return os.path.join(mdir, _pick(mdir, by_version[max(by_version)]))


def _pick(mdir: str, names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    # vN beats NNNNN-<uuid> (a Hadoop table's own file); otherwise the newest by content
    plain = [n for n in names if n.startswith("v")]
    if len(plain) == 1:
        return plain[0]

    def updated(n: str) -> tuple[int, str]:
        try:
            data = load_json(os.path.join(mdir, n))
            return int(data.get("last-updated-ms", 0)), n
        except (SchemaLabError, AttributeError, TypeError, ValueError):
            return -1, n

    return max(names, key=updated)


def is_iceberg_table(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an Iceberg table directory (``metadata/`` holding
    ``*.metadata.json``) or an Iceberg metadata file. Cheap: lists one directory."""
    p = os.fspath(path)
    if os.path.isfile(p):
        return p.endswith((".metadata.json", ".metadata.json.gz"))
    mdir = os.path.join(p, "metadata")
    try:
        return any(metadata_version(n) is not None for n in os.listdir(mdir))
    except OSError:
        return False


# ============================================================================================
# Manifests (Avro, read by Iceberg field id)
# ============================================================================================

STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
CONTENT = {0: "data", 1: "position deletes", 2: "equality deletes"}


@dataclass(frozen=True)
class ManifestFile:
    """One entry of a manifest list."""

    path: str
    length: int
    spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int | None
    added_files: int | None
    existing_files: int | None
    deleted_files: int | None
    added_rows: int | None
    existing_rows: int | None
    deleted_rows: int | None


@dataclass(frozen=True)
class ManifestEntry:
    """One data or delete file entry of a manifest, with inherited values filled in."""

    status: int
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    content: int
    file_path: str
    file_format: str
    spec_id: int
    #: partition field id → value, as Avro decoded it
    partition: Mapping[int, Any]
    partition_names: Mapping[int, str]
    record_count: int
    file_size: int
    value_counts: Mapping[int, int]
    null_counts: Mapping[int, int]
    lower_bounds: Mapping[int, bytes]
    upper_bounds: Mapping[int, bytes]

    @property
    def status_name(self) -> str:
        return STATUS.get(self.status, str(self.status))

    @property
    def live(self) -> bool:
        return self.status != 2


@dataclass(frozen=True)
class Manifest:
    file: ManifestFile
    #: schema id from the manifest's key-value metadata (pyiceberg writes only `schema`)
    schema_id: int | None
    entries: tuple[ManifestEntry, ...]


def _unwrap_union(t: Any) -> Any:
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        return non_null[0] if non_null else "null"
    return t


def _ids(record_schema: Any) -> dict[int, tuple[str, Any]]:
    """Iceberg field id → (Avro field name, Avro type) of a record schema. Names can differ
    between writers (v1's ``added_data_files_count`` is v2's ``added_files_count``) and Avro
    sanitizes odd partition names, so fields are looked up by id."""
    rec = _unwrap_union(record_schema)
    out: dict[int, tuple[str, Any]] = {}
    if isinstance(rec, dict):
        for f in rec.get("fields", ()):
            fid = f.get("field-id")
            if fid is not None:
                out[int(fid)] = (f["name"], _unwrap_union(f.get("type")))
    return out


def _by_id(rec: Mapping[str, Any], ids: Mapping[int, tuple[str, Any]], fid: int,
           default: Any = None) -> Any:
    hit = ids.get(fid)
    if hit is None:
        return default
    value = rec.get(hit[0], default)
    return default if value is None else value


def _pairs(value: Any) -> dict[int, Any]:
    """An Iceberg map stored as an Avro array of {key, value} records (or an Avro map)."""
    if not value:
        return {}
    if isinstance(value, dict):
        return {int(k): v for k, v in value.items()}
    return {int(kv["key"]): kv["value"] for kv in value}


def _read_avro(path: str) -> tuple[Any, dict[str, str], list[dict[str, Any]]]:
    import fastavro

    try:
        with open(path, "rb") as fh:
            reader = fastavro.reader(fh)
            meta = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
                    for k, v in reader.metadata.items()}
            records: list[dict[str, Any]] = [r for r in reader if isinstance(r, dict)]
            return reader.writer_schema, meta, records
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (listed in the table's metadata)") from None
    except (OSError, ValueError, EOFError, StopIteration) as e:
        raise CorruptFileError(path, f"is not a readable Avro file: {e}") from None


def read_manifest_list(path: str) -> list[ManifestFile]:
    schema, _, records = _read_avro(path)
    ids = _ids(schema)
    if 500 not in ids:
        raise CorruptFileError(path, "is not an Iceberg manifest list (no field 500 "
                                     "manifest_path)")
    out = []
    for r in records:
        def g(fid: int, default: Any = None, r: Mapping[str, Any] = r) -> Any:
            return _by_id(r, ids, fid, default)
        out.append(ManifestFile(
            path=g(500), length=int(g(501, 0)), spec_id=int(g(502, 0)), content=int(g(517, 0)),
            sequence_number=int(g(515, 0)), min_sequence_number=int(g(516, 0)),
            added_snapshot_id=g(503), added_files=g(504), existing_files=g(505),
            deleted_files=g(506), added_rows=g(512), existing_rows=g(513), deleted_rows=g(514)))
    return out


def read_manifest(path: str, mf: ManifestFile) -> Manifest:
    """A manifest's entries, with snapshot id and sequence numbers inherited from the
    manifest list where they are null (spec: "Inherited when null")."""
    schema, meta, records = _read_avro(path)
    top = _ids(schema)
    if 2 not in top:
        raise CorruptFileError(path, "is not an Iceberg manifest (no field 2 data_file)")
    df_ids = _ids(top[2][1])
    part_ids = _ids(df_ids[102][1]) if 102 in df_ids else {}
    part_names = {fid: name for fid, (name, _) in part_ids.items()}
    if not part_names and 102 in df_ids:
        part_names = _partition_names_by_position(df_ids[102][1], meta)
    schema_id = None
    if "schema-id" in meta and meta["schema-id"].lstrip("-").isdigit():
        schema_id = int(meta["schema-id"])
    elif "schema" in meta:
        try:
            schema_id = int(json.loads(meta["schema"]).get("schema-id"))
        except (ValueError, TypeError, AttributeError):
            schema_id = None
    spec_id = int(meta["partition-spec-id"]) if meta.get("partition-spec-id", "").isdigit() \
        else mf.spec_id
    entries = []
    for r in records:
        status = int(_by_id(r, top, 0, 1))
        d = r[top[2][0]]
        snap = _by_id(r, top, 1)
        seq = _by_id(r, top, 3)
        fseq = _by_id(r, top, 4)
        if status == 1:  # ADDED entries inherit what their manifest list says
            snap = mf.added_snapshot_id if snap is None else snap
            seq = mf.sequence_number if seq is None else seq
            fseq = mf.sequence_number if fseq is None else fseq
        prec = _by_id(d, df_ids, 102, {}) or {}
        entries.append(ManifestEntry(
            status=status, snapshot_id=snap, sequence_number=seq, file_sequence_number=fseq,
            content=int(_by_id(d, df_ids, 134, 0)), file_path=str(_by_id(d, df_ids, 100)),
            file_format=str(_by_id(d, df_ids, 101, "parquet")).lower(), spec_id=spec_id,
            partition={fid: prec.get(name) for fid, name in part_names.items()},
            partition_names=part_names, record_count=int(_by_id(d, df_ids, 103, 0)),
            file_size=int(_by_id(d, df_ids, 104, 0)),
            value_counts=_pairs(_by_id(d, df_ids, 109)),
            null_counts=_pairs(_by_id(d, df_ids, 110)),
            lower_bounds=_pairs(_by_id(d, df_ids, 125)),
            upper_bounds=_pairs(_by_id(d, df_ids, 128))))
    return Manifest(mf, schema_id, tuple(entries))


def _partition_names_by_position(record_schema: Any, meta: Mapping[str, str]) -> dict[int, str]:
    """Partition field id → Avro name for a writer that left the ids out of the partition
    record: by position, with the ids of the spec stored in the manifest's metadata."""
    rec = _unwrap_union(record_schema)
    names = [f["name"] for f in rec.get("fields", ())] if isinstance(rec, dict) else []
    try:
        spec = json.loads(meta.get("partition-spec", "[]"))
        ids = [int(f.get("field-id", 1000 + i)) for i, f in enumerate(spec)]
    except (ValueError, TypeError, AttributeError):
        ids = []
    if len(ids) != len(names):
        ids = [1000 + i for i in range(len(names))]
    return dict(zip(ids, names, strict=True))


def decode_bound(raw: bytes, t: IcebergType) -> Any:
    """A lower/upper bound from Iceberg's binary single-value serialization (spec,
    Appendix D). Bounds written before a type promotion keep their old width, so int/long,
    float/double and date/timestamp are told apart by length::

        >>> decode_bound(bytes.fromhex("01c2"), parse_type("decimal(9, 2)"))
        Decimal('4.50')
        >>> decode_bound(bytes.fromhex("03000000"), parse_type("long"))
        3
    """
    if not isinstance(t, PrimitiveType):
        return raw
    k, n = t.kind, len(raw)
    if k == "boolean":
        return raw[:1] != b"\x00"
    if k in ("int", "long"):
        return int.from_bytes(raw, "little", signed=True)
    if k in ("float", "double"):
        return struct.unpack("<f" if n == 4 else "<d", raw)[0]
    if k == "decimal":
        return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-(t.scale or 0))
    if k == "date" or (k.startswith("timestamp") and n == 4):  # v3 date → timestamp
        return dt.date(1970, 1, 1) + dt.timedelta(days=int.from_bytes(raw, "little",
                                                                       signed=True))
    if k == "time":
        micros = int.from_bytes(raw, "little", signed=True)
        return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
    if k.startswith("timestamp"):
        ticks = int.from_bytes(raw, "little", signed=True)
        micros = ticks // 1000 if k.endswith("_ns") else ticks  # shown at µs precision
        value = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
        return value.replace(tzinfo=dt.UTC) if k.startswith("timestamptz") else value
    if k == "string":
        return raw.decode("utf-8", "replace")
    if k == "uuid" and n == 16:
        return uuid.UUID(bytes=raw)
    return raw


# ============================================================================================
# The table
# ============================================================================================


@dataclass(frozen=True)
class IcebergDataFile:
    """A live data file of a snapshot, as reads and trees need it."""

    uri: str
    #: the local path (resolved against the table directory if the table was moved)
    path: str
    entry: ManifestEntry
    manifest: ManifestFile


class IcebergTable:
    """An Iceberg table directory (or one metadata file of it), read-only.

    ``IcebergTable(path)`` validates the current metadata at once, so a broken table fails
    here with a :class:`CorruptFileError` naming the file and the problem."""

    def __init__(self, path: str | os.PathLike[str], name: str | None = None, *,
                 spark: SparkSession | None = None) -> None:
        p = os.path.abspath(os.fspath(path))
        if os.path.isfile(p):
            metadata_file = p
            parent = os.path.dirname(p)
            root = os.path.dirname(parent) if os.path.basename(parent) == "metadata" else parent
        elif os.path.isdir(p):
            root = p
            if os.path.basename(p) == "metadata" and not os.path.isdir(
                    os.path.join(p, "metadata")):
                root = os.path.dirname(p)
            metadata_file = find_current_metadata(root)
        else:
            raise TableNotFoundError(f"{p} does not exist", rule="table-must-exist")
        self.path = root
        self.name = name or _name_from_path(root)
        self._spark = spark
        self.metadata_file = metadata_file
        self.metadata = parse_table_metadata(load_json(metadata_file), metadata_file)
        self._manifest_cache: dict[str, Manifest] = {}
        self._list_cache: dict[str, list[ManifestFile]] = {}

    def __repr__(self) -> str:
        m = self.metadata
        return (f"IcebergTable({self.name!r}, v{m.format_version}, schema={m.current_schema_id}, "
                f"snapshot={m.current_snapshot_id})")

    # ---- metadata ---------------------------------------------------------------------------

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def location(self) -> str:
        return self.metadata.location

    @property
    def schema(self) -> IcebergSchema:
        return self.metadata.schema()

    @property
    def schemas(self) -> list[IcebergSchema]:
        return sorted(self.metadata.schemas, key=lambda s: s.schema_id)

    def schema_at(self, schema_id: int) -> IcebergSchema:
        try:
            return self.metadata.schema(schema_id)
        except KeyError:
            raise SchemaLabError(f"Table {self.name} has no schema {schema_id} (schemas: "
                                 f"{[s.schema_id for s in self.schemas]})", table=self.name,
                                 rule="schema-must-exist") from None

    @property
    def snapshots(self) -> list[Snapshot]:
        return list(self.metadata.snapshots)

    @property
    def current_snapshot(self) -> Snapshot | None:
        cid = self.metadata.current_snapshot_id
        return None if cid is None else self.metadata.snapshot(cid)

    def snapshot(self, snapshot_id: int) -> Snapshot:
        s = self.metadata.snapshot(snapshot_id)
        if s is None:
            raise SchemaLabError(f"Table {self.name} has no snapshot {snapshot_id} (snapshots: "
                                 f"{[x.snapshot_id for x in self.snapshots]})",
                                 table=self.name, rule="snapshot-must-exist")
        return s

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from schemalab.spark import local_spark

            self._spark = local_spark()
        return self._spark

    def snapshot_schema_id(self, snap: Snapshot) -> int:
        """The schema a snapshot was written with: its ``schema-id``, else (older writers
        did not record it) the current schema of the first metadata file on disk that made
        it current, else today's schema (what Java's SnapshotUtil.schemaFor does)."""
        if snap.schema_id is not None:
            return int(snap.schema_id)
        for info in self._timeline:
            if info.current_snapshot_id == snap.snapshot_id and info.current_schema_id is not None:
                return info.current_schema_id
        return self.metadata.current_schema_id

    # ---- paths ------------------------------------------------------------------------------

    def resolve(self, uri: str) -> str:
        """The local path of a file the metadata names by URI. Paths under the table's
        ``location`` are re-rooted at this directory, so a moved or copied table works."""
        local = _local_path(uri)
        loc = _local_path(self.metadata.location).rstrip("/")
        if loc and (local == loc or local.startswith(loc + "/")):
            return os.path.join(self.path, local[len(loc):].lstrip("/"))
        if os.path.isabs(local) and os.path.exists(local):
            return local
        # A table whose `location` itself is stale (copied, then registered elsewhere):
        # try the part after a `/metadata/` or `/data/` segment.
        for seg in ("/metadata/", "/data/"):
            start = local.rfind(seg)
            while start >= 0:
                cand = os.path.join(self.path, local[start + 1:])
                if os.path.exists(cand):
                    return cand
                start = local.rfind(seg, 0, start)
        return local

    def relpath(self, uri: str) -> str:
        local = self.resolve(uri)
        if local.startswith(self.path + os.sep):
            return os.path.relpath(local, self.path)
        return local

    # ---- manifests --------------------------------------------------------------------------

    def manifest_files(self, snap: Snapshot) -> list[ManifestFile]:
        """The manifest list of ``snap`` (v1 snapshots may list manifests inline)."""
        if snap.manifest_list is None:
            return [ManifestFile(m, 0, 0, 0, 0, 0, snap.snapshot_id, None, None, None, None,
                                 None, None) for m in snap.manifests]
        key = snap.manifest_list
        if key not in self._list_cache:
            self._list_cache[key] = read_manifest_list(self.resolve(key))
        return self._list_cache[key]

    def manifest(self, mf: ManifestFile) -> Manifest:
        # Manifests are immutable and shared by many snapshots: read each once.
        if mf.path not in self._manifest_cache:
            self._manifest_cache[mf.path] = read_manifest(self.resolve(mf.path), mf)
        return self._manifest_cache[mf.path]

    def data_files(self, snapshot_id: int | None = None) -> list[IcebergDataFile]:
        """The live data files of a snapshot (default: the current one). Refuses a snapshot
        with live position/equality delete files: reading them is not implemented."""
        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot
        if snap is None:
            return []
        out: list[IcebergDataFile] = []
        deletes: dict[int, int] = {}
        for mf in self.manifest_files(snap):
            for e in self.manifest(mf).entries:
                if not e.live:
                    continue
                if mf.content != 0 or e.content != 0:
                    deletes[e.content or 1] = deletes.get(e.content or 1, 0) + 1
                    continue
                out.append(IcebergDataFile(e.file_path, self.resolve(e.file_path), e, mf))
        if deletes:
            what = " and ".join(f"{n} {CONTENT.get(c, 'delete')} file(s)"
                                for c, n in sorted(deletes.items()))
            raise SchemaLabError(
                f"Table {self.name} snapshot {snap.snapshot_id} has {what} (merge-on-read "
                "deletes). schemalab reads only tables without delete files; rewrite the "
                "affected data files (e.g. Spark's rewrite_data_files / rewrite_position_"
                "delete_files procedures) and read the new snapshot.", table=self.name,
                rule="iceberg-delete-files")
        return out

    def snapshot_tree(self, snapshot_id: int) -> SnapshotNode:
        """Snapshot → its manifest list → manifests → file entries (ADDED, EXISTING,
        DELETED), with partitions and column bounds decoded and shown under today's names."""
        snap = self.snapshot(snapshot_id)
        current = self.schema
        manifests = []
        live: list[FileNode] = []
        for mf in self.manifest_files(snap):
            m = self.manifest(mf)
            nodes = tuple(self._file_node(e, current, m.schema_id) for e in m.entries)
            live.extend(n for n, e in zip(nodes, m.entries, strict=True)
                        if e.live and mf.content == 0 and e.content == 0)
            manifests.append(ManifestNode(
                self.relpath(mf.path),
                mf.added_files if mf.added_files is not None
                else sum(e.status == 1 for e in m.entries),
                mf.deleted_files if mf.deleted_files is not None
                else sum(e.status == 2 for e in m.entries),
                m.schema_id, nodes))
        if snap.manifest_list is not None:
            lists = (ManifestListNode("manifest-list", self.relpath(snap.manifest_list),
                                      tuple(manifests)),)
        else:
            lists = (ManifestListNode("manifests", "(listed in the metadata file)",
                                      tuple(manifests)),)
        base = _snapshot_node(self, snap)
        return SnapshotNode(base.id, base.parent_id, base.schema_id, base.time_millis,
                            base.kind, base.record_count, lists, tuple(live), base.summary)

    def written_schema_id(self, e: ManifestEntry, manifest_schema_id: int | None = None
                          ) -> int:
        """The schema a data file was written under. Iceberg records none per file: it is
        the schema of the snapshot that added the file, else the manifest's, else today's."""
        added_by = self.metadata.snapshot(e.snapshot_id) if e.snapshot_id is not None else None
        if added_by is not None:
            return self.snapshot_schema_id(added_by)
        if manifest_schema_id is not None:
            return manifest_schema_id
        return self.schema.schema_id

    def _file_node(self, e: ManifestEntry, current: IcebergSchema,
                   manifest_schema_id: int | None) -> FileNode:
        schema_id = self.written_schema_id(e, manifest_schema_id)
        spec = self.metadata.spec(e.spec_id)
        names = {pf.field_id: pf.name for pf in spec.fields} if spec else {}
        partition = {names.get(fid, e.partition_names.get(fid, str(fid))): v
                     for fid, v in e.partition.items()}
        stats: dict[str, tuple[Any, Any, int | None]] = {}
        for fid in sorted(set(e.lower_bounds) | set(e.upper_bounds) | set(e.null_counts)):
            name, t = self._field_name_type(fid, current)
            lo, hi = e.lower_bounds.get(fid), e.upper_bounds.get(fid)
            stats[name] = (None if lo is None or t is None else decode_bound(lo, t),
                           None if hi is None or t is None else decode_bound(hi, t),
                           e.null_counts.get(fid))
        kind = e.status_name if e.content == 0 else f"{e.status_name} {CONTENT[e.content]}"
        return FileNode(path=self.relpath(e.file_path), kind=kind, schema_id=schema_id,
                        row_count=e.record_count, partition=partition, file_size=e.file_size,
                        stats=stats, min_sequence_number=e.sequence_number,
                        max_sequence_number=e.sequence_number)

    def _field_name_type(self, fid: int,
                         current: IcebergSchema) -> tuple[str, IcebergType | None]:
        f = current.find(fid)
        if f is not None:
            return current.full_name(fid) or str(fid), f.type
        for s in sorted(self.metadata.schemas, key=lambda s: -s.schema_id):
            f = s.find(fid)
            if f is not None:
                return f"{s.full_name(fid)} (dropped)", f.type
        return f"field {fid}", None

    # ---- history ----------------------------------------------------------------------------

    @functools.cached_property
    def _timeline(self) -> list[_MetadataInfo]:
        return _metadata_timeline(self)

    def history(self) -> TableHistory:
        """Schema versions with their changes, every field's lineage, partition specs and
        sort orders, and the snapshots (trees load on demand: ``history().tree(id)``)."""
        from schemalab.history import gc_paused

        with gc_paused():
            return iceberg_history(self)

    # ---- reads ------------------------------------------------------------------------------

    def target_schema(self, snap: Snapshot | None, schema: SchemaChoice) -> IcebergSchema:
        if schema == "current" or (schema in (None, "snapshot") and snap is None):
            return self.schema
        if isinstance(schema, int) and not isinstance(schema, bool):
            return self.schema_at(schema)
        if schema in (None, "snapshot") and snap is not None:
            return self.schema_at(self.snapshot_schema_id(snap))
        raise SchemaLabError(f"schema must be 'snapshot', 'current' or a schema id, not "
                             f"{schema!r}", table=self.name, rule="read-schema")

    def read_plan(self, snapshot_id: int | None = None,
                  schema: SchemaChoice = None) -> IcebergReadPlan:
        """How a read of ``snapshot_id`` (default: current) would get each column from each
        group of files."""
        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot
        if snapshot_id is None and schema is None:
            schema = "current"
        target = self.target_schema(snap, schema)
        if snap is None:
            return plan_iceberg_read(self, target, [], None)
        return plan_iceberg_read(self, target, self.data_files(snap.snapshot_id),
                                 snap.snapshot_id)

    def explain_read(self, snapshot_id: int | None = None,
                     schema: SchemaChoice = None) -> ReadExplanation:
        """For each group of files, how each output column of the read is produced, and why
        a value is NULL or cast: the same explanation as a Paimon table's.

        Files are grouped by the schema they were written under (see
        :meth:`written_schema_id`); their Parquet columns are that schema's, matched by field
        id. A column an identity partition fills for files that lack it is explained as
        NULL here, though the read returns the partition value."""
        import dataclasses

        from schemalab.casts import CastMode
        from schemalab.explain import explain
        from schemalab.read import DataFile, plan_read

        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot
        if snapshot_id is None and schema is None:
            schema = "current"
        target = self.target_schema(snap, schema)

        def paimon_view(s: IcebergSchema) -> TableSchema:
            # identifier fields are not a merge key: Iceberg reads never deduplicate
            return dataclasses.replace(s.to_paimon(), primary_keys=())

        files = [] if snap is None else [
            DataFile(df.path, self.written_schema_id(df.entry), df.entry.record_count)
            for df in self.data_files(snap.snapshot_id)]
        plan = plan_read(self.name, paimon_view(target), files,
                         lambda sid: paimon_view(self.schema_at(sid)), CastMode.EXPLICIT,
                         has_field_ids=lambda _path: True,
                         snapshot_id=None if snap is None else snap.snapshot_id)
        return dataclasses.replace(explain(plan, self.history()),
                                   cast_mode="Iceberg type promotion")

    def read(self, spark: SparkSession | None = None, snapshot_id: int | None = None,
             schema: SchemaChoice = None) -> DataFrame:
        """The evolved read as one Spark DataFrame.

        ``snapshot_id=None`` reads the current snapshot in the current schema. With a
        snapshot id the read uses *that snapshot's* schema (as Iceberg's time travel does);
        ``schema="current"`` projects the old snapshot onto today's schema instead, and an
        int picks any schema id."""
        if isinstance(spark, int) and not isinstance(spark, bool):
            raise TypeError("read(spark, snapshot_id=None, schema=None): pass the snapshot "
                            "id by keyword")
        return execute_iceberg_read(self.read_plan(snapshot_id, schema), spark or self.spark)


def _local_path(uri: str) -> str:
    """``file:///a/b`` and Hadoop's ``file:/a/b`` → ``/a/b``; other schemes unchanged."""
    if uri.startswith("file://"):
        rest = uri[len("file://"):]
        return rest if rest.startswith("/") else "/" + rest.split("/", 1)[-1]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    return uri


def _name_from_path(path: str) -> str:
    table = os.path.basename(path)
    db = os.path.basename(os.path.dirname(path))
    return f"{db[:-3]}.{table}" if db.endswith(".db") else table


# ============================================================================================
# History
# ============================================================================================


@dataclass(frozen=True)
class _MetadataInfo:
    """What the history needs from one metadata file of the table's past."""

    updated_ms: int
    schema_ids: tuple[int, ...]
    current_schema_id: int | None
    spec_ids: tuple[int, ...]
    order_ids: tuple[int, ...]
    current_snapshot_id: int | None
    #: the table's first metadata file (an empty metadata-log)
    is_first: bool


def _light_info(d: Mapping[str, Any]) -> _MetadataInfo:
    def ids(key: str, id_key: str) -> tuple[int, ...]:
        return tuple(int(x[id_key]) for x in d.get(key) or () if isinstance(x, dict)
                     and isinstance(x.get(id_key), int))

    schema_ids = ids("schemas", "schema-id") or ((0,) if "schema" in d else ())
    cur = d.get("current-schema-id", 0 if "schema" in d else None)
    snap = d.get("current-snapshot-id")
    return _MetadataInfo(int(d.get("last-updated-ms") or 0), schema_ids,
                         cur if isinstance(cur, int) else None,
                         ids("partition-specs", "spec-id") or (0,),
                         ids("sort-orders", "order-id") or (0,),
                         snap if isinstance(snap, int) and snap >= 0 else None,
                         not d.get("metadata-log"))


def _metadata_timeline(table: IcebergTable) -> list[_MetadataInfo]:
    """The table's metadata files still on disk, oldest first, current last. The
    metadata-log names the previous files (Iceberg keeps the last 100 by default); missing
    or unreadable ones are skipped."""
    out = []
    for _, uri in table.metadata.metadata_log:
        p = table.resolve(uri)
        try:
            d = load_json(p)
        except SchemaLabError:
            continue
        if isinstance(d, dict):
            out.append(_light_info(d))
    try:
        out.append(_light_info(load_json(table.metadata_file)))
    except SchemaLabError:  # pragma: no cover - it was just parsed
        pass
    return out


def _first_seen(timeline: Sequence[_MetadataInfo], attr: str) -> dict[int, int]:
    """When each id first appears in the timeline. An id already in the oldest file on disk
    gets a time only if that file is the table's first: otherwise it is older than that."""
    seen: dict[int, int] = {}
    for i, info in enumerate(timeline):
        for x in getattr(info, attr):
            if x not in seen and (i > 0 or info.is_first):
                seen[x] = info.updated_ms
            elif x not in seen:
                seen[x] = -1
    return {k: v for k, v in seen.items() if v >= 0}


def transform_label(transform: str, sources: Sequence[str]) -> str:
    """``day(ts)``, ``bucket(16, id)``, ``truncate(4, name)``; identity is the column::

        >>> transform_label("bucket[16]", ["id"]), transform_label("identity", ["category"])
        ('bucket(16, id)', 'category')
    """
    src = ", ".join(sources)
    t = transform.strip().lower()
    if t == "identity":
        return src
    m = re.match(r"^(bucket|truncate)\[(\d+)\]$", t)
    if m:
        return f"{m.group(1)}({m.group(2)}, {src})"
    return f"{transform}({src})"


def _source_name(table: IcebergTable, fid: int) -> str:
    name = table.schema.full_name(fid)
    if name:
        return name
    for s in sorted(table.metadata.schemas, key=lambda s: -s.schema_id):
        if (n := s.full_name(fid)) is not None:
            return n
    return f"field {fid}"


def field_infos(fields: Sequence[NestedField], path: tuple[str, ...] = (),
                parent: int | None = None) -> list[FieldInfo]:
    """FieldInfos of a schema: nested struct fields, list elements and map keys/values
    included with Iceberg's dotted paths (``address.city``, ``tags.element``)."""
    out: list[FieldInfo] = []
    for pos, f in enumerate(fields):
        p = (*path, f.name)
        out.append(FieldInfo(f.id, f.name, lineage_type_text(f.type), not f.required, f.doc,
                             p if path else (), parent, pos))
        out.extend(_child_infos(f.type, p, f.id))
    return out


def _child_infos(t: IcebergType, path: tuple[str, ...], parent: int) -> list[FieldInfo]:
    if isinstance(t, StructType):
        return field_infos(t.fields, path, parent)
    out: list[FieldInfo] = []
    if isinstance(t, ListType):
        kids = [(t.element_id, "element", t.element, not t.element_required)]
    elif isinstance(t, MapType):
        kids = [(t.key_id, "key", t.key, False), (t.value_id, "value", t.value,
                                                   not t.value_required)]
    else:
        return out
    for pos, (cid, name, ct, nullable) in enumerate(kids):
        p = (*path, name)
        out.append(FieldInfo(cid, name, lineage_type_text(ct), nullable, None, p, parent, pos))
        out.extend(_child_infos(ct, p, cid))
    return out


def _snapshot_node(table: IcebergTable, s: Snapshot) -> SnapshotNode:
    total = str(s.summary.get("total-records", ""))
    summary: dict[str, Any] = dict(s.summary)
    summary["sequence-number"] = s.sequence_number
    refs = [n for n, r in table.metadata.refs.items() if r.get("snapshot-id") == s.snapshot_id]
    if refs:
        summary["refs"] = ", ".join(sorted(refs))
    return SnapshotNode(s.snapshot_id, s.parent_id, table.snapshot_schema_id(s), s.timestamp_ms,
                        s.operation, int(total) if total.isdigit() else None,
                        summary=summary)


def iceberg_history(table: IcebergTable) -> TableHistory:
    """The table's past in schemalab's format-neutral model.

    - ``schemas``: every schema in ``schemas``, ordered by id, each with the time it first
      appeared (from the metadata files still on disk, else the first snapshot written with
      it, else None) and its changes against the previous id.
    - Schema ids can be **reused**: pyiceberg and Java give a change whose result equals an
      existing schema that schema's id (add ``x`` then drop ``x`` returns to the old id).
      Each id is listed once. When the current schema is not the newest id, the lineage
      treats the return to it as one more step at the end, so a field dropped by it is shown
      as dropped (under the reused id) rather than alive.
    - ``other_versions``: partition specs (kind ``"partition-spec"``, label
      ``"category, day(ts)"``) and sort orders (``"sort-order"``, ``"id ASC NULLS FIRST"``);
      ``options["default"] == "true"`` marks the default ones.
    - ``snapshots``: without trees; ``tree_loader`` reads a snapshot's manifests on demand.
    """
    md = table.metadata
    timeline = table._timeline
    seen_schema = _first_seen(timeline, "schema_ids")
    by_snapshot: dict[int, int] = {}
    for snap in sorted(md.snapshots, key=lambda x: x.timestamp_ms):
        by_snapshot.setdefault(table.snapshot_schema_id(snap), snap.timestamp_ms)
    default_spec = md.spec(md.default_spec_id)
    versions = []
    for schema in table.schemas:
        sid = schema.schema_id
        keys = tuple(n for i in schema.identifier_field_ids if (n := schema.full_name(i)))
        part: tuple[str, ...] = ()
        if sid == md.current_schema_id and default_spec is not None:
            part = tuple(dict.fromkeys(_source_name(table, i) for pf in default_spec.fields
                                       for i in pf.source_ids))
        versions.append(SchemaVersion(
            sid, seen_schema.get(sid, by_snapshot.get(sid)), tuple(field_infos(schema.fields)),
            label="current" if sid == md.current_schema_id else "",
            options=dict(md.properties) if sid == md.current_schema_id else {},
            partition_keys=part, primary_keys=keys))
    versions = with_events(versions)
    lineage_seq = list(versions)
    if versions and versions[-1].id != md.current_schema_id:
        # The table went back to an older schema id (see the docstring): the return is the
        # last step of the lineage.
        cur = next(v for v in versions if v.id == md.current_schema_id)
        lineage_seq.append(SchemaVersion(cur.id, cur.time_millis, cur.fields,
                                         label="current (schema id reused)"))
    other: list[SchemaVersion] = []
    seen_spec = _first_seen(timeline, "spec_ids")
    for spec in sorted(md.specs, key=lambda s: s.spec_id):
        infos = tuple(FieldInfo(pf.field_id, pf.name, transform_label(
            pf.transform, [_source_name(table, i) for i in pf.source_ids]), True, None, (),
            None, pos) for pos, pf in enumerate(spec.fields))
        other.append(SchemaVersion(
            spec.spec_id, seen_spec.get(spec.spec_id), infos, kind="partition-spec",
            label=", ".join(f.type for f in infos) or "unpartitioned",
            options={"default": str(spec.spec_id == md.default_spec_id).lower()}))
    seen_order = _first_seen(timeline, "order_ids")
    for order in sorted(md.sort_orders, key=lambda o: o.order_id):
        infos = tuple(FieldInfo(
            sf.source_ids[0] if sf.source_ids else -1,
            ", ".join(_source_name(table, i) for i in sf.source_ids),
            f"{transform_label(sf.transform, [_source_name(table, i) for i in sf.source_ids])}"
            f" {sf.direction.upper()} {sf.null_order.upper().replace('-', ' ')}", True, None,
            (), None, pos) for pos, sf in enumerate(order.fields))
        other.append(SchemaVersion(
            order.order_id, seen_order.get(order.order_id), infos, kind="sort-order",
            label=", ".join(f.type for f in infos) or "unsorted",
            options={"default": str(order.order_id == md.default_sort_order_id).lower()}))
    snaps = tuple(_snapshot_node(table, s) for s in md.snapshots)
    return TableHistory(
        format="iceberg", location=table.path, name=table.name, schemas=tuple(versions),
        lineage=tuple(compute_lineage(lineage_seq)), snapshots=snaps,
        other_versions=tuple(other), current_schema_id=md.current_schema_id,
        tree_loader=lambda sid: _history_tree(table, sid))


def _history_tree(table: IcebergTable, snapshot_id: int) -> SnapshotNode:
    """A snapshot's tree for the explorer. A manifest list that is not on this machine (an
    s3:// table seen through its metadata file alone, or an expired file) gives the snapshot
    without a tree and ``summary["tree_error"]`` saying why, so the rest of the history still
    renders; a file that exists but is broken still raises CorruptFileError."""
    snap = table.snapshot(snapshot_id)
    if snap.manifest_list is not None and not os.path.exists(table.resolve(snap.manifest_list)):
        base = _snapshot_node(table, snap)
        summary = {**base.summary,
                   "tree_error": f"manifest list {snap.manifest_list} is not on this machine"}
        return SnapshotNode(base.id, base.parent_id, base.schema_id, base.time_millis,
                            base.kind, base.record_count, summary=summary)
    return table.snapshot_tree(snapshot_id)


# ============================================================================================
# Evolved reads on Spark
# ============================================================================================


@dataclass(frozen=True)
class ReadGroup:
    """Files read by one Spark scan: same requested schema, same constant columns."""

    files: tuple[IcebergDataFile, ...]
    #: the Parquet read schema: synthetic names ``_sl_f<id>`` carrying field ids
    requested: Any  # pyspark StructType
    #: top-level field id → how a column absent from these files is filled
    constants: tuple[tuple[int, str, Any], ...]
    #: top-level field ids read in the file's own type and cast afterwards
    cast_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class IcebergReadPlan:
    table: str
    target: IcebergSchema
    snapshot_id: int | None
    groups: tuple[ReadGroup, ...]
    #: the synthetic column prefix: ``_sl_f``, longer if a file has a column named like it
    prefix: str = ID_SCAN_PREFIX

    @property
    def files(self) -> list[IcebergDataFile]:
        return [f for g in self.groups for f in g.files]


def parquet_field_types(path: str) -> dict[int, pa.DataType]:
    """Field id → Arrow type of every field of a Parquet file (nested ones included), from
    its footer."""
    return parquet_footer(path)[0]


@functools.lru_cache(maxsize=65536)
def parquet_footer(path: str) -> tuple[dict[int, pa.DataType], frozenset[str]]:
    """Field id → Arrow type of every field of a Parquet file (nested ones included), and
    the names of all its columns at any depth, from its footer. Data files never change, so
    the answer is cached."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (listed as a live data file in the "
                                     "table's manifests)") from None
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptFileError(path, f"is not a readable Parquet file: {e}") from None
    out: dict[int, pa.DataType] = {}
    names: set[str] = set()

    def visit(f: pa.Field) -> None:
        names.add(f.name)
        meta = f.metadata or {}
        if b"PARQUET:field_id" in meta:
            out[int(meta[b"PARQUET:field_id"])] = f.type
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i))
        elif pa.types.is_map(t):
            visit(t.key_field)
            visit(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            visit(t.value_field)

    for f in schema:
        visit(f)
    return out, frozenset(names)


def _spark_type(t: IcebergType) -> st.DataType:
    """The Spark type of a read's output column: every level nullable, because Spark cannot
    cast a nullable element/value read from Parquet to a non-nullable one, and a read does
    not enforce ``required`` (the writer did)."""
    from pyspark.sql import types as st

    from schemalab.types import to_spark

    if isinstance(t, StructType):
        return st.StructType([st.StructField(f.name, _spark_type(f.type), True)
                              for f in t.fields if to_paimon(f.type) is not None])
    if isinstance(t, ListType):
        return st.ArrayType(_spark_type(t.element), True)
    if isinstance(t, MapType):
        return st.MapType(_spark_type(t.key), _spark_type(t.value), True)
    p = to_paimon(t)
    return st.NullType() if p is None else to_spark(p)


def _requested_type(t: IcebergType, fid: int, file_types: Mapping[int, pa.DataType],
                    casts: list[int], prefix: str = ID_SCAN_PREFIX) -> st.DataType:
    """The Spark type to request for field ``fid``: the target type with struct fields
    renamed ``_sl_f<id>`` (and carrying their ids), except that a primitive whose file type
    Spark's Parquet reader cannot widen to the target is requested in the file's type (the
    later cast to the target converts it)."""
    from pyspark.sql import types as st

    if isinstance(t, StructType):
        # unknown fields are left out, as to_paimon leaves them out of the output struct
        return st.StructType([
            st.StructField(f"{prefix}{c.id}",
                           _requested_type(c.type, c.id, file_types, casts, prefix), True,
                           {"parquet.field.id": c.id}) for c in t.fields
            if to_paimon(c.type) is not None])
    if isinstance(t, ListType):
        return st.ArrayType(_requested_type(t.element, t.element_id, file_types, casts,
                                            prefix), True)
    if isinstance(t, MapType):
        return st.MapType(_requested_type(t.key, t.key_id, file_types, casts, prefix),
                          _requested_type(t.value, t.value_id, file_types, casts, prefix),
                          True)
    target = _spark_type(t)
    if t.kind == "unknown":
        return st.StringType()  # never in files ("omit from data files"): reads as NULL
    ft = file_types.get(fid)
    if ft is None:
        return target
    source = _file_spark_type(ft)
    if source is None or source.simpleString() == target.simpleString():
        return target
    from schemalab.read import _spark_reader_widens
    from schemalab.types import from_arrow

    src_p, tgt_p = from_arrow(ft), to_paimon(t)
    if tgt_p is not None and _spark_reader_widens(src_p, tgt_p):
        return target  # int→long, float→double, decimal widening, date→timestamp
    casts.append(fid)
    return source


def _file_spark_type(ft: pa.DataType) -> st.DataType | None:
    from schemalab.errors import UnknownTypeError
    from schemalab.types import from_arrow, to_spark

    try:
        return to_spark(from_arrow(ft))
    except (UnknownTypeError, KeyError, ValueError):
        return None


def _constant(f: NestedField, df: IcebergDataFile,
              table: IcebergTable) -> tuple[str, Any] | None:
    """How a top-level field absent from a data file is filled (Iceberg's projection rule):
    the identity partition value of the file's spec first, then the v3 ``initial-default``;
    None means NULL."""
    spec = table.metadata.spec(df.entry.spec_id)
    for pf in spec.fields if spec else ():
        if pf.transform.strip().lower() == "identity" and pf.source_ids == (f.id,):
            if pf.field_id in df.entry.partition:
                return "partition", df.entry.partition[pf.field_id]
    if f.initial_default is not None:
        return "default", f.initial_default
    return None


def plan_iceberg_read(table: IcebergTable, target: IcebergSchema,
                      files: Sequence[IcebergDataFile],
                      snapshot_id: int | None = None) -> IcebergReadPlan:
    """Group ``files`` by the Parquet read schema and constant columns they need."""
    for t in _primitive_types(target.fields):
        if t.kind in ("timestamp_ns", "timestamptz_ns"):
            raise SchemaLabError(f"Table {table.name}: Spark cannot read Iceberg {t.kind} "
                                 "(nanosecond) columns from Parquet; select another schema",
                                 table=table.name, rule="iceberg-unsupported-type")
    groups: dict[tuple[Any, ...], list[IcebergDataFile]] = {}
    info: dict[tuple[Any, ...], tuple[Any, tuple[tuple[int, str, Any], ...], tuple[int, ...]]]
    info = {}
    from pyspark.sql import types as st

    for df in files:
        if df.entry.file_format != "parquet":
            raise SchemaLabError(f"Table {table.name}: data file {df.uri} is "
                                 f"{df.entry.file_format.upper()}; schemalab reads Parquet "
                                 "data files only", table=table.name,
                                 rule="iceberg-file-format")
    # A file column named like a synthetic one (`_sl_f3` that is not field 3) would meet the
    # vectorized reader's name-collision bug the synthetic names exist to avoid.
    names: set[str] = set()
    for df in files:
        names |= parquet_footer(df.path)[1]
    prefix = ID_SCAN_PREFIX
    while any(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
        prefix += "_"
    for df in files:
        file_types = parquet_field_types(df.path)
        if not file_types:
            raise SchemaLabError(
                f"Table {table.name}: data file {df.uri} has no Parquet field ids (added from "
                "outside, e.g. with add_files); reading it needs the table's name mapping, "
                "which schemalab does not apply", table=table.name, rule="iceberg-name-mapping")
        casts: list[int] = []
        fields, constants = [], []
        for f in target.fields:
            if f.id not in file_types and not isinstance(f.type, StructType | ListType |
                                                           MapType):
                const = _constant(f, df, table)
                if const is not None:
                    constants.append((f.id, const[0], const[1]))
                    continue
            if isinstance(f.type, PrimitiveType) and f.type.kind == "unknown":
                continue
            fields.append(st.StructField(f"{prefix}{f.id}",
                                         _requested_type(f.type, f.id, file_types, casts,
                                                         prefix),
                                         True, {"parquet.field.id": f.id}))
        if not fields:
            # Every column is constant: still one row per record, so request a column no
            # file has (Spark reads a missing id as NULL and keeps the row count).
            fields.append(st.StructField("_sl_rows", st.IntegerType(), True,
                                         {"parquet.field.id": 2**31 - 1}))
        requested = st.StructType(fields)
        key = (requested.json(), tuple((i, k, repr(v)) for i, k, v in constants))
        groups.setdefault(key, []).append(df)
        info.setdefault(key, (requested, tuple(constants), tuple(dict.fromkeys(casts))))
    return IcebergReadPlan(table.name, target, snapshot_id, tuple(
        ReadGroup(tuple(fs), *info[k]) for k, fs in groups.items()), prefix)


def _primitive_types(fields: Iterable[NestedField]) -> Iterator[PrimitiveType]:
    for f in fields:
        yield from _prims(f.type)


def _prims(t: IcebergType) -> Iterator[PrimitiveType]:
    if isinstance(t, PrimitiveType):
        yield t
    elif isinstance(t, StructType):
        yield from _primitive_types(t.fields)
    elif isinstance(t, ListType):
        yield from _prims(t.element)
    else:
        yield from _prims(t.key)
        yield from _prims(t.value)


def _literal(value: Any, t: IcebergType, origin: str) -> Column:
    """A constant column of Iceberg type ``t``: a partition value as Avro decoded it, or an
    ``initial-default`` in JSON single-value form (spec, Appendix D)."""
    from pyspark.sql import functions as F

    spark_type = _spark_type(t)
    if value is None:
        return F.lit(None).cast(spark_type)
    kind = t.kind if isinstance(t, PrimitiveType) else ""
    if isinstance(value, dt.datetime):
        # Avro's timestamp-micros decodes as an aware UTC datetime; Spark's literal would
        # apply the session zone, so pass the UTC wall time as text.
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return F.lit(value.isoformat()).cast(spark_type)
    if origin == "default" and isinstance(value, str):
        if kind in ("binary", "fixed"):
            return F.lit(bytes.fromhex(value)).cast(spark_type)
        if kind == "uuid":
            return F.lit(uuid.UUID(value).bytes).cast(spark_type)
        if kind == "decimal":
            return F.lit(Decimal(value)).cast(spark_type)
    if isinstance(value, Decimal):
        return F.lit(str(value)).cast(spark_type)
    return F.lit(value).cast(spark_type)


def _literal_path(path: str) -> str:
    r"""``path`` with Hadoop glob characters escaped: Spark globs every path it reads, so a
    directory named ``x[1]`` would match ``x1`` instead::

        >>> _literal_path("/w/t[1]/data/a.parquet")
        '/w/t\\[1\\]/data/a.parquet'
    """
    return re.sub(r"([{}\[\]*?\\])", r"\\\1", path)


def execute_iceberg_read(plan: IcebergReadPlan, spark: SparkSession) -> DataFrame:
    """Run a plan: one field-id scan per group, columns aliased to the target names and cast
    to the target types, groups unioned."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    if spark.conf.get("spark.sql.parquet.fieldId.read.enabled", "false") != "true":
        # The scan matches Parquet columns by id; schemalab's sessions enable this already,
        # a user's own session may not.
        spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    by_id = {f.id: f for f in plan.target.fields}
    out_schema = st.StructType([st.StructField(f.name, _spark_type(f.type), True)
                                for f in plan.target.fields])
    frames = []
    for g in plan.groups:
        df = spark.read.schema(g.requested).parquet(*[_literal_path(f.path) for f in g.files])
        consts = {i: (origin, v) for i, origin, v in g.constants}
        cols = []
        for f in plan.target.fields:
            if f.id in consts:
                origin, v = consts[f.id]
                cols.append(_literal(v, by_id[f.id].type, origin).alias(f.name))
            elif isinstance(f.type, PrimitiveType) and f.type.kind == "unknown":
                cols.append(F.lit(None).alias(f.name))
            else:
                cols.append(F.col(f"`{plan.prefix}{f.id}`").cast(_spark_type(f.type))
                            .alias(f.name))
        frames.append(df.select(*cols))
    if not frames:
        # An empty frame built in the JVM: createDataFrame([]) would start a Python worker.
        return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name)
                                       for f in out_schema.fields])
    result = frames[0]
    for other in frames[1:]:
        result = result.union(other)
    return result
