"""Iceberg table metadata (format v1-v3): schemas, partition specs, sort orders, snapshots.

Metadata JSON is parsed here rather than by pyiceberg, which rejects some valid files
(``TableMetadataStatisticsFiles.json``) and cannot read zstd-compressed metadata. The rules
are the spec's: a field the spec requires for the file's ``format-version`` must be present,
and every refusal says which one::

    >>> try:
    ...     parse_table_metadata({"format-version": 4}, "v1.metadata.json")
    ... except UnsupportedVersionError as e:
    ...     print(e.what)
    format-version 4 is not supported (1-3)
"""
from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import (
    CorruptFileError,
    TableNotFoundError,
    UnsupportedVersionError,
)
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergNestedField,
    IcebergStructType,
    IcebergType,
    IcebergTypeError,
    json_int,
    json_kind,
    parse_fields,
    to_paimon,
)
from schemalab.types.model import (
    DataField,
)

if TYPE_CHECKING:  # pragma: no cover

    from schemalab.schema.table_schema import TableSchema


SUPPORTED_VERSIONS = (1, 2, 3)


@dataclass(frozen=True)
class IcebergSchema:
    """One schema version: ``fields`` are the top-level columns."""

    schema_id: int
    fields: tuple[IcebergNestedField, ...]
    identifier_field_ids: tuple[int, ...] = ()

    @property
    def id(self) -> int:
        """``schema_id``, under the name a Paimon schema gives its id (format-neutral views)."""
        return self.schema_id

    @functools.cached_property
    def index(self) -> dict[int, tuple[tuple[str, ...], IcebergNestedField]]:
        """Every field id (nested, list elements, map keys/values too) → (path, field).
        Paths follow Iceberg's naming: ``address.city``, ``tags.element``, ``m.key``."""
        out: dict[int, tuple[tuple[str, ...], IcebergNestedField]] = {}
        for f in self.fields:
            _index_field(f, (f.name,), out)
        return out

    def find(self, field_id: int) -> IcebergNestedField | None:
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
        from schemalab.schema.table_schema import TableSchema

        fields = []
        for f in self.fields:
            t = to_paimon(f.type, not f.required)
            if t is not None:
                fields.append(DataField(f.id, f.name, t, f.doc))
        keys = tuple(n for i in self.identifier_field_ids if (n := self.full_name(i)))
        return TableSchema(self.schema_id, tuple(fields), self.highest_field_id,
                           primary_keys=keys, options=dict(table_options or {}))


def _index_field(f: IcebergNestedField, path: tuple[str, ...],
                 out: dict[int, tuple[tuple[str, ...], IcebergNestedField]]) -> None:
    out[f.id] = (path, f)
    t = f.type
    if isinstance(t, IcebergStructType):
        for c in t.fields:
            _index_field(c, (*path, c.name), out)
    elif isinstance(t, IcebergListType):
        _index_field(IcebergNestedField(t.element_id, "element", t.element, t.element_required),
                     (*path, "element"), out)
    elif isinstance(t, IcebergMapType):
        _index_field(IcebergNestedField(t.key_id, "key", t.key, True), (*path, "key"), out)
        _index_field(IcebergNestedField(t.value_id, "value", t.value, t.value_required),
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
class IcebergSnapshot:
    snapshot_id: int
    parent_id: int | None
    timestamp_ms: int
    sequence_number: int
    #: manifest list URI; None for a v1 snapshot that lists its manifests inline
    manifest_list: str | None
    manifests: tuple[str, ...] = ()
    summary: Mapping[str, str] = field(default_factory=dict)
    schema_id: int | None = None
    #: v3 row lineage; None for snapshots made before a v2 → v3 upgrade
    first_row_id: int | None = None
    added_rows: int | None = None

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
    snapshots: tuple[IcebergSnapshot, ...]
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

    def snapshot(self, snapshot_id: int) -> IcebergSnapshot | None:
        return next((s for s in self.snapshots if s.snapshot_id == snapshot_id), None)

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
        raw = fileio.read_bytes(path)
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
    except IcebergTypeError as e:
        raise CorruptFileError(path, str(e)) from None
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        # a value of the wrong shape somewhere the checks above do not look closely
        raise CorruptFileError(path, f"malformed table metadata ({type(e).__name__}: "
                                     f"{e})") from None


class _Doc:
    """One metadata file's JSON object, with the checks every section uses."""

    def __init__(self, d: dict[str, Any], path: str, version: int) -> None:
        self.d, self.path, self.v = d, path, version
        self.required = _REQUIRED[version]

    def bad(self, what: str) -> CorruptFileError:
        return CorruptFileError(self.path, what)

    def require(self, *keys: str) -> None:
        # Checked section by section in the spec's order, each section's own consistency
        # right after it (as Java's parser does): a file whose current schema is missing
        # and which also lacks last-partition-id is reported for the schema.
        for key in keys:
            if key not in self.required or key in self.d:
                continue
            successors = _V1_SUCCESSORS.get(key) if self.v == 1 else None
            if successors and all(s in self.d for s in successors):
                continue
            raise self.bad(f"missing '{key}' (required in v{self.v})")

    def get(self, key: str, kind: type, default: Any = None) -> Any:
        if key not in self.d or self.d[key] is None:
            return default
        val = self.d[key]
        if not isinstance(val, kind) or (kind is int and isinstance(val, bool)):
            want = {int: "an integer", str: "a string", list: "a list",
                    dict: "an object"}.get(kind, kind.__name__)
            raise self.bad(f"'{key}' must be {want}, not {json_kind(val)}")
        return val


def _parse_table_metadata(d: Any, path: str) -> TableMetadata:
    if not isinstance(d, dict):
        raise CorruptFileError(path, f"table metadata must be a JSON object, not {json_kind(d)}")
    if any(k in d for k in _VIEW_KEYS) and "table-uuid" not in d:
        raise CorruptFileError(path, "this is Iceberg VIEW metadata, not a table")
    if "format-version" not in d:
        raise CorruptFileError(path, "missing 'format-version'")
    v = d["format-version"]
    if isinstance(v, bool) or not isinstance(v, int):
        raise CorruptFileError(path, f"'format-version' must be an integer, not {json_kind(v)}")
    if v not in SUPPORTED_VERSIONS:
        raise UnsupportedVersionError(
            path, f"format-version {v} is not supported "
                  f"({SUPPORTED_VERSIONS[0]}-{SUPPORTED_VERSIONS[-1]})")
    doc = _Doc(d, path, v)
    doc.require("format-version", "table-uuid", "location", "last-sequence-number",
                "last-updated-ms", "last-column-id")
    location = doc.get("location", str)
    schemas, current_schema_id = _schemas_of(doc)
    specs, default_spec_id = _specs_of(doc)
    orders, default_order = _orders_of(doc)
    doc.require(*doc.required)  # whatever the sections above did not cover (v3's next-row-id)
    snapshots, current_snapshot_id = _snapshots_of(doc)
    get = doc.get
    snapshot_log = tuple((int(e["snapshot-id"]), int(e["timestamp-ms"]))
                         for e in get("snapshot-log", list, [])
                         if isinstance(e, dict) and "snapshot-id" in e and "timestamp-ms" in e)
    metadata_log = tuple((int(e["timestamp-ms"]), str(e["metadata-file"]))
                         for e in get("metadata-log", list, [])
                         if isinstance(e, dict) and "metadata-file" in e and "timestamp-ms" in e)
    properties = {str(k): str(val) for k, val in get("properties", dict, {}).items()}
    refs = {str(k): r for k, r in get("refs", dict, {}).items() if isinstance(r, dict)}
    known = {s.snapshot_id for s in snapshots}
    for name, r in refs.items():
        # Java refuses such metadata too ("Snapshot for reference ... does not exist")
        if r.get("snapshot-id") not in known:
            raise CorruptFileError(path, f"ref {name!r} names snapshot {r.get('snapshot-id')!r}, "
                                         "which is not in the metadata's snapshots")
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


def _schemas_of(doc: _Doc) -> tuple[list[IcebergSchema], int]:
    d, v = doc.d, doc.v
    doc.require("schema", "schemas", "current-schema-id")
    schemas: list[IcebergSchema] = []
    if "schemas" in d:
        for i, s in enumerate(doc.get("schemas", list)):
            schemas.append(_parse_schema(s, v, f"schemas[{i}]", require_id=v >= 2))
        current_schema_id = doc.get("current-schema-id", int)
        if current_schema_id is None:  # v1 with `schemas` but only `schema` marking current
            current_schema_id = _parse_schema(d["schema"], v, "schema").schema_id
    else:
        s = _parse_schema(d["schema"], v, "schema")
        schemas.append(s)
        current_schema_id = s.schema_id
    seen: set[int] = set()
    for s in schemas:
        if s.schema_id in seen:
            raise doc.bad(f"schema id {s.schema_id} appears twice in 'schemas'")
        seen.add(s.schema_id)
    if current_schema_id not in seen:
        raise doc.bad(f"current-schema-id {current_schema_id} is not among the schemas")
    return schemas, current_schema_id


def _specs_of(doc: _Doc) -> tuple[list[PartitionSpec], int]:
    d, v = doc.d, doc.v
    doc.require("partition-spec", "partition-specs", "default-spec-id", "last-partition-id")
    specs: list[PartitionSpec] = []
    if "partition-specs" in d:
        for i, sp in enumerate(doc.get("partition-specs", list)):
            if not isinstance(sp, dict):
                raise doc.bad(f"partition-specs[{i}] must be an object")
            for k in ("spec-id", "fields"):
                if k not in sp:
                    raise doc.bad(f"partition-specs[{i}]: missing '{k}'")
            specs.append(PartitionSpec(
                json_int(sp["spec-id"], f"partition-specs[{i}] 'spec-id'"),
                _parse_partition_fields(sp["fields"], v, f"partition-specs[{i}]")))
        default_spec_id = doc.get("default-spec-id", int)
        if default_spec_id is None:
            default_spec_id = max((s.spec_id for s in specs), default=0)
    else:
        specs.append(PartitionSpec(0, _parse_partition_fields(d["partition-spec"], v,
                                                               "partition-spec")))
        default_spec_id = 0
    if default_spec_id not in {s.spec_id for s in specs}:
        raise doc.bad(f"default-spec-id {default_spec_id} is not among the partition-specs")
    return specs, default_spec_id


def _orders_of(doc: _Doc) -> tuple[list[SortOrder], int]:
    doc.require("sort-orders", "default-sort-order-id")
    orders: list[SortOrder] = []
    for i, so in enumerate(doc.get("sort-orders", list, [])):
        if not isinstance(so, dict):
            raise doc.bad(f"sort-orders[{i}] must be an object")
        for k in ("order-id", "fields"):
            if k not in so:
                raise doc.bad(f"sort-orders[{i}]: missing '{k}'")
        orders.append(SortOrder(json_int(so["order-id"], f"sort-orders[{i}] 'order-id'"),
                                _parse_sort_fields(so["fields"], doc.v, f"sort-orders[{i}]")))
    default_order = doc.get("default-sort-order-id", int, 0)
    if not any(o.order_id == 0 for o in orders):
        # order 0 is "unsorted" and always exists (a v1 table may omit sort-orders)
        orders.insert(0, SortOrder(0, ()))
    if default_order not in {o.order_id for o in orders}:
        raise doc.bad(f"default-sort-order-id {default_order} is not among the sort-orders")
    return orders, default_order


def _snapshots_of(doc: _Doc) -> tuple[list[IcebergSnapshot], int | None]:
    snapshots = [_parse_snapshot(s, doc.v, i, doc.bad)
                 for i, s in enumerate(doc.get("snapshots", list, []))]
    current_snapshot_id = doc.get("current-snapshot-id", int)
    if current_snapshot_id is not None and current_snapshot_id < 0:
        current_snapshot_id = None  # Java writes -1 for "no snapshot yet"
    if current_snapshot_id is not None and not any(
            s.snapshot_id == current_snapshot_id for s in snapshots):
        raise doc.bad(f"current-snapshot-id {current_snapshot_id} is not among the snapshots")
    return snapshots, current_snapshot_id


def _parse_schema(node: Any, version: int, where: str, *,
                  require_id: bool = False) -> IcebergSchema:
    if not isinstance(node, dict):
        raise IcebergTypeError(f"{where} must be an object, not {json_kind(node)}")
    if "type" not in node:
        raise IcebergTypeError(f'{where}: missing "type": "struct" (a schema is a struct type)')
    if node["type"] != "struct":
        raise IcebergTypeError(f'{where}: "type" must be "struct", not {node["type"]!r}')
    if "schema-id" not in node and require_id:
        raise IcebergTypeError(f"{where}: missing 'schema-id' (required in v{version})")
    sid = json_int(node.get("schema-id", 0), f"{where} 'schema-id'")
    fields = parse_fields(node, version, "")
    ids = node.get("identifier-field-ids") or []
    schema = IcebergSchema(sid, fields, tuple(int(i) for i in ids))
    seen: set[int] = set()
    for f in _all_ids(fields):
        if f in seen:
            raise IcebergTypeError(f"{where}: field id {f} is used twice")
        seen.add(f)
    return schema


def _all_ids(fields: Iterable[IcebergNestedField]) -> Iterator[int]:
    for f in fields:
        yield f.id
        yield from _type_ids(f.type)


def _type_ids(t: IcebergType) -> Iterator[int]:
    if isinstance(t, IcebergStructType):
        yield from _all_ids(t.fields)
    elif isinstance(t, IcebergListType):
        yield t.element_id
        yield from _type_ids(t.element)
    elif isinstance(t, IcebergMapType):
        yield t.key_id
        yield from _type_ids(t.key)
        yield t.value_id
        yield from _type_ids(t.value)


def _source_ids(node: dict[str, Any], version: int, where: str) -> tuple[int, ...]:
    if "source-id" in node:
        return (json_int(node["source-id"], f"{where} 'source-id'"),)
    if version >= 3 and "source-ids" in node and isinstance(node["source-ids"], list):
        return tuple(json_int(i, f"{where} 'source-ids'") for i in node["source-ids"])
    raise IcebergTypeError(f"{where}: missing 'source-id'" + (" (or 'source-ids')"
                                                         if version >= 3 else ""))


def _parse_partition_fields(node: Any, version: int, where: str) -> tuple[PartitionField, ...]:
    if not isinstance(node, list):
        raise IcebergTypeError(f"{where}: partition fields must be a list, not {json_kind(node)}")
    out = []
    for i, f in enumerate(node):
        w = f"{where} field #{i}"
        if not isinstance(f, dict):
            raise IcebergTypeError(f"{w} must be an object")
        for k in ("name", "transform"):
            if k not in f:
                raise IcebergTypeError(f"{w}: missing '{k}'")
        if "field-id" not in f and version >= 2:
            raise IcebergTypeError(f"{w}: missing 'field-id' (required in v{version})")
        # v1 specs may omit field ids: Java assigned them from 1000 in order (spec, App. C)
        fid = json_int(f.get("field-id", 1000 + i), f"{w} 'field-id'")
        out.append(PartitionField(fid, _source_ids(f, version, w), str(f["name"]),
                                  str(f["transform"])))
    return tuple(out)


def _parse_sort_fields(node: Any, version: int, where: str) -> tuple[SortField, ...]:
    if not isinstance(node, list):
        raise IcebergTypeError(f"{where}: sort fields must be a list, not {json_kind(node)}")
    out = []
    for i, f in enumerate(node):
        w = f"{where} field #{i}"
        if not isinstance(f, dict):
            raise IcebergTypeError(f"{w} must be an object")
        for k in ("transform", "direction", "null-order"):
            if k not in f:
                raise IcebergTypeError(f"{w}: missing '{k}'")
        out.append(SortField(_source_ids(f, version, w), str(f["transform"]),
                             str(f["direction"]), str(f["null-order"])))
    return tuple(out)


def _parse_snapshot(s: Any, version: int, i: int, bad: Any) -> IcebergSnapshot:
    if not isinstance(s, dict):
        raise bad(f"snapshots[{i}] must be an object")
    sid = s.get("snapshot-id")
    where = f"snapshot {sid}" if isinstance(sid, int) else f"snapshots[{i}]"
    # `sequence-number` (v2) and `first-row-id` / `added-rows` (v3) are not required here:
    # a table upgraded in place keeps its older snapshots as they were written, and the spec
    # says to read them with defaults (Appendix E: "sequence-number must default to 0";
    # "Row Lineage for Upgraded Tables": first-row-id "remains unset or null"). Java writes
    # sequence-number only when it is > 0 and reads it with default 0 (SnapshotParser).
    required = ["snapshot-id", "timestamp-ms"]
    if version >= 2:
        required += ["manifest-list", "summary"]
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
    return IcebergSnapshot(
        snapshot_id=json_int(sid, f"{where} 'snapshot-id'"),
        parent_id=s.get("parent-snapshot-id"),
        timestamp_ms=json_int(s["timestamp-ms"], f"{where} 'timestamp-ms'"),
        sequence_number=int(s.get("sequence-number", 0)),
        manifest_list=s.get("manifest-list"),
        manifests=tuple(str(m) for m in s.get("manifests") or ()),
        summary={str(k): str(val) for k, val in summary.items()},
        schema_id=s.get("schema-id"),
        first_row_id=_optional_int(s.get("first-row-id"), f"{where} 'first-row-id'"),
        added_rows=_optional_int(s.get("added-rows"), f"{where} 'added-rows'"))


def _optional_int(value: Any, what: str) -> int | None:
    return None if value is None else json_int(value, what)

