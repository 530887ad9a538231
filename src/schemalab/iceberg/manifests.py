"""Iceberg manifest lists and manifests (Avro, read by Iceberg field id)."""


from __future__ import annotations

import datetime as dt
import json
import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Context, Decimal
from typing import TYPE_CHECKING, Any

from schemalab.errors import (
    CorruptFileError,
)
from schemalab.fileio import read_avro
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergType

if TYPE_CHECKING:  # pragma: no cover

    pass


STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
CONTENT = {0: "data", 1: "position deletes", 2: "equality deletes"}


@dataclass(frozen=True)
class IcebergManifestFile:
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
    #: per partition field of the manifest's spec, in spec order (507); None if not written
    partitions: tuple[PartitionFieldSummary, ...] | None = None
    #: v3: the first row id of the manifest's data files (520), for inheritance
    first_row_id: int | None = None


@dataclass(frozen=True)
class PartitionFieldSummary:
    """A manifest list's summary of one partition field over the manifest's files."""

    contains_null: bool
    contains_nan: bool | None
    lower_bound: bytes | None
    upper_bound: bytes | None


#: data_file fields kept raw (None where the writer left them out), by field id, for the
#: engines' ``files`` metadata table: column_sizes, value_counts, null_value_counts,
#: nan_value_counts, lower_bounds, upper_bounds (as maps), key_metadata, split_offsets,
#: equality_ids, sort_order_id, first_row_id
RAW_FILE_FIELDS = (108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 142)
_MAP_FIELDS = frozenset({108, 109, 110, 137, 125, 128})


@dataclass(frozen=True)
class IcebergManifestEntry:
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
    #: delete files: the one data file they apply to (143), when the writer recorded it
    referenced_data_file: str | None = None
    #: equality delete files: the field ids compared (135)
    equality_ids: tuple[int, ...] = ()
    #: deletion vectors: where the blob lies in its Puffin file (144, 145)
    content_offset: int | None = None
    content_size: int | None = None
    #: :data:`RAW_FILE_FIELDS` as written: maps as dicts, None where absent or null
    raw: Mapping[int, Any] = field(default_factory=dict)

    @property
    def status_name(self) -> str:
        return STATUS.get(self.status, str(self.status))

    @property
    def content_name(self) -> str:
        """``data``, ``position deletes``, ``equality deletes`` or ``deletion vector`` (a
        v3 position delete held in a Puffin file)."""
        if self.content == 1 and self.file_format == "puffin":
            return "deletion vector"
        return CONTENT.get(self.content, str(self.content))

    @property
    def live(self) -> bool:
        return self.status != 2


@dataclass(frozen=True)
class IcebergManifest:
    file: IcebergManifestFile
    #: schema id from the manifest's key-value metadata (pyiceberg writes only `schema`)
    schema_id: int | None
    entries: tuple[IcebergManifestEntry, ...]


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


#: what a manifest list or manifest the metadata names but the disk lacks is
_MISSING = "does not exist (listed in the table's metadata)"


def read_iceberg_manifest_list(path: str) -> list[IcebergManifestFile]:
    avro = read_avro(path, missing=_MISSING)
    schema, _, records = avro.schema, avro.metadata, avro.records
    ids = _ids(schema)
    if 500 not in ids:
        raise CorruptFileError(path, "is not an Iceberg manifest list (no field 500 "
                                     "manifest_path)")
    out = []
    for r in records:
        def g(fid: int, default: Any = None, r: Mapping[str, Any] = r) -> Any:
            return _by_id(r, ids, fid, default)
        out.append(IcebergManifestFile(
            path=g(500), length=int(g(501, 0)), spec_id=int(g(502, 0)), content=int(g(517, 0)),
            sequence_number=int(g(515, 0)), min_sequence_number=int(g(516, 0)),
            added_snapshot_id=g(503), added_files=g(504), existing_files=g(505),
            deleted_files=g(506), added_rows=g(512), existing_rows=g(513), deleted_rows=g(514),
            partitions=_summaries(g(507), ids.get(507)), first_row_id=g(520)))
    return out


def _summaries(value: Any, avro_field: tuple[str, Any] | None
               ) -> tuple[PartitionFieldSummary, ...] | None:
    """The partition field summaries (507) of one manifest list entry, read by field id."""
    if value is None or avro_field is None:
        return None
    element = avro_field[1].get("items") if isinstance(avro_field[1], dict) else None
    ids = _ids(element)
    return tuple(PartitionFieldSummary(
        contains_null=bool(_by_id(rec, ids, 509, False)), contains_nan=_by_id(rec, ids, 518),
        lower_bound=_by_id(rec, ids, 510), upper_bound=_by_id(rec, ids, 511)) for rec in value)


def _raw_fields(d: Mapping[str, Any], df_ids: Mapping[int, tuple[str, Any]]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for fid in RAW_FILE_FIELDS:
        value = _by_id(d, df_ids, fid)
        out[fid] = None if value is None else _pairs(value) if fid in _MAP_FIELDS else value
    return out


def read_iceberg_manifest(path: str, mf: IcebergManifestFile) -> IcebergManifest:
    """A manifest's entries, with snapshot id and sequence numbers inherited from the
    manifest list where they are null (spec: "Inherited when null")."""
    avro = read_avro(path, missing=_MISSING)
    schema, meta, records = avro.schema, avro.metadata, avro.records
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
        entries.append(IcebergManifestEntry(
            status=status, snapshot_id=snap, sequence_number=seq, file_sequence_number=fseq,
            content=int(_by_id(d, df_ids, 134, 0)), file_path=str(_by_id(d, df_ids, 100)),
            file_format=str(_by_id(d, df_ids, 101, "parquet")).lower(), spec_id=spec_id,
            partition={fid: prec.get(name) for fid, name in part_names.items()},
            partition_names=part_names, record_count=int(_by_id(d, df_ids, 103, 0)),
            file_size=int(_by_id(d, df_ids, 104, 0)),
            value_counts=_pairs(_by_id(d, df_ids, 109)),
            null_counts=_pairs(_by_id(d, df_ids, 110)),
            lower_bounds=_pairs(_by_id(d, df_ids, 125)),
            upper_bounds=_pairs(_by_id(d, df_ids, 128)),
            referenced_data_file=_by_id(d, df_ids, 143),
            equality_ids=tuple(int(i) for i in _by_id(d, df_ids, 135, ()) or ()),
            content_offset=_by_id(d, df_ids, 144), content_size=_by_id(d, df_ids, 145),
            raw=_raw_fields(d, df_ids)))
    return IcebergManifest(mf, schema_id, tuple(entries))


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


#: wide enough for any decimal(38, s): Python's default context keeps only 28 digits
_EXACT = Context(prec=100)


def unscaled_decimal(unscaled: int, scale: int) -> Decimal:
    """The decimal ``unscaled × 10^-scale``, every digit kept."""
    return Decimal(unscaled).scaleb(-scale, _EXACT)


def decode_bound(raw: bytes, t: IcebergType) -> Any:
    """A lower/upper bound from Iceberg's binary single-value serialization (spec,
    Appendix D). Bounds written before a type promotion keep their old width, so int/long,
    float/double and date/timestamp are told apart by length::

        >>> from schemalab.iceberg.types import parse_iceberg_type
        >>> decode_bound(bytes.fromhex("01c2"), parse_iceberg_type("decimal(9, 2)"))
        Decimal('4.50')
        >>> decode_bound(bytes.fromhex("03000000"), parse_iceberg_type("long"))
        3
        >>> decode_bound((12345678901234567890123456780123456789).to_bytes(16, "big"),
        ...              parse_iceberg_type("decimal(38, 10)"))
        Decimal('1234567890123456789012345678.0123456789')
    """
    if not isinstance(t, IcebergPrimitiveType):
        return raw
    k, n = t.kind, len(raw)
    if k == "boolean":
        return raw[:1] != b"\x00"
    if k in ("int", "long"):
        return int.from_bytes(raw, "little", signed=True)
    if k in ("float", "double"):
        return struct.unpack("<f" if n == 4 else "<d", raw)[0]
    if k == "decimal":
        return unscaled_decimal(int.from_bytes(raw, "big", signed=True), t.scale or 0)
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
