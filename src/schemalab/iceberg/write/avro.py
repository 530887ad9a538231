"""Manifests and manifest lists as Iceberg writes them: Avro files (fastavro) whose schemas
carry Iceberg's field ids, in the spec's shape for format v1, v2 and v3, with the key-value
metadata Java writes (``schema``, ``partition-spec``, ``format-version``, ``content`` ...).

Maps keyed by field id are Avro arrays of ``k<key id>_v<value id>`` records with
``"logicalType": "map"``, as the spec says for maps whose keys are not strings."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemalab import fileio
from schemalab.iceberg.metadata import IcebergSchema, PartitionSpec
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergType

_AVRO_PRIMITIVE: dict[str, Any] = {
    "boolean": "boolean", "int": "int", "long": "long", "float": "float", "double": "double",
    "date": {"type": "int", "logicalType": "date"},
    "string": "string", "binary": "bytes",
    "timestamp": {"type": "long", "logicalType": "timestamp-micros",
                  "adjust-to-utc": False},
    "timestamptz": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
}


def _opt(name: str, fid: int, t: Any, doc: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": ["null", t], "default": None, "field-id": fid}
    if doc:
        out["doc"] = doc
    return out


def _req(name: str, fid: int, t: Any) -> dict[str, Any]:
    return {"name": name, "type": t, "field-id": fid}


def _map(kid: int, vid: int, value: str) -> dict[str, Any]:
    return {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": f"k{kid}_v{vid}",
        "fields": [{"name": "key", "type": "int", "field-id": kid},
                   {"name": "value", "type": value, "field-id": vid}]}}


def _list(eid: int, t: str) -> dict[str, Any]:
    return {"type": "array", "items": t, "element-id": eid}


def avro_partition_type(t: IcebergType) -> Any:
    """The Avro type of a partition value of Iceberg type ``t``."""
    assert isinstance(t, IcebergPrimitiveType)
    if t.kind == "decimal":
        size = _decimal_size(t.precision or 38)
        return {"type": "fixed", "name": f"decimal_{t.precision}_{t.scale}", "size": size,
                "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    return _AVRO_PRIMITIVE[t.kind]


def _decimal_size(precision: int) -> int:
    size = 1
    while 2 ** (8 * size - 1) < 10 ** precision:
        size += 1
    return size


def partition_record(spec_fields: Sequence[tuple[int, str, IcebergType]]) -> dict[str, Any]:
    return {"type": "record", "name": "r102", "fields": [
        _opt(name, fid, avro_partition_type(t)) for fid, name, t in spec_fields]}


def data_file_schema(version: int, partition: dict[str, Any]) -> dict[str, Any]:
    fields: list[dict[str, Any]] = []
    if version >= 2:
        fields.append(_req("content", 134, "int"))
    fields += [_req("file_path", 100, "string"), _req("file_format", 101, "string"),
               _req("partition", 102, partition), _req("record_count", 103, "long"),
               _req("file_size_in_bytes", 104, "long")]
    if version == 1:
        fields.append(_req("block_size_in_bytes", 105, "long"))
    fields += [_opt("column_sizes", 108, _map(117, 118, "long")),
               _opt("value_counts", 109, _map(119, 120, "long")),
               _opt("null_value_counts", 110, _map(121, 122, "long")),
               _opt("nan_value_counts", 137, _map(138, 139, "long")),
               _opt("lower_bounds", 125, _map(126, 127, "bytes")),
               _opt("upper_bounds", 128, _map(129, 130, "bytes")),
               _opt("key_metadata", 131, "bytes"),
               _opt("split_offsets", 132, _list(133, "long"))]
    if version >= 2:
        fields.append(_opt("equality_ids", 135, _list(136, "int")))
    fields.append(_opt("sort_order_id", 140, "int"))
    if version >= 3:
        fields.append(_opt("first_row_id", 142, "long"))
    if version >= 2:
        fields.append(_opt("referenced_data_file", 143, "string"))
    if version >= 3:
        fields += [_opt("content_offset", 144, "long"),
                   _opt("content_size_in_bytes", 145, "long")]
    return {"type": "record", "name": "r2", "fields": fields}


def manifest_entry_schema(version: int, partition: dict[str, Any]) -> dict[str, Any]:
    fields = [_req("status", 0, "int")]
    if version == 1:
        fields.append(_req("snapshot_id", 1, "long"))
    else:
        fields += [_opt("snapshot_id", 1, "long"), _opt("sequence_number", 3, "long"),
                   _opt("file_sequence_number", 4, "long")]
    fields.append(_req("data_file", 2, data_file_schema(version, partition)))
    return {"type": "record", "name": "manifest_entry", "fields": fields}


def manifest_list_schema(version: int) -> dict[str, Any]:
    summary = {"type": "array", "element-id": 508, "items": {
        "type": "record", "name": "r508", "fields": [
            _req("contains_null", 509, "boolean"), _opt("contains_nan", 518, "boolean"),
            _opt("lower_bound", 510, "bytes"), _opt("upper_bound", 511, "bytes")]}}
    fields = [_req("manifest_path", 500, "string"), _req("manifest_length", 501, "long"),
              _req("partition_spec_id", 502, "int")]
    if version == 1:
        fields += [_opt("added_snapshot_id", 503, "long"),
                   _opt("added_data_files_count", 504, "int"),
                   _opt("existing_data_files_count", 505, "int"),
                   _opt("deleted_data_files_count", 506, "int"),
                   _opt("partitions", 507, summary), _opt("added_rows_count", 512, "long"),
                   _opt("existing_rows_count", 513, "long"),
                   _opt("deleted_rows_count", 514, "long")]
    else:
        fields += [_req("content", 517, "int"), _req("sequence_number", 515, "long"),
                   _req("min_sequence_number", 516, "long"),
                   _req("added_snapshot_id", 503, "long"),
                   _req("added_files_count", 504, "int"),
                   _req("existing_files_count", 505, "int"),
                   _req("deleted_files_count", 506, "int"),
                   _req("added_rows_count", 512, "long"),
                   _req("existing_rows_count", 513, "long"),
                   _req("deleted_rows_count", 514, "long"),
                   _opt("partitions", 507, summary)]
    fields.append(_opt("key_metadata", 519, "bytes"))
    if version >= 3:
        fields.append(_opt("first_row_id", 520, "long"))
    return {"type": "record", "name": "manifest_file", "fields": fields}


@dataclass
class DataFileRecord:
    """One data or delete file as a manifest entry describes it."""

    path: str
    record_count: int
    file_size: int
    #: partition field id → value (Avro-ready: ints, strings, bytes for decimals)
    partition: Mapping[int, Any]
    column_sizes: Mapping[int, int] = field(default_factory=dict)
    value_counts: Mapping[int, int] = field(default_factory=dict)
    null_counts: Mapping[int, int] = field(default_factory=dict)
    nan_counts: Mapping[int, int] = field(default_factory=dict)
    lower_bounds: Mapping[int, bytes] = field(default_factory=dict)
    upper_bounds: Mapping[int, bytes] = field(default_factory=dict)
    split_offsets: Sequence[int] | None = None
    content: int = 0
    file_format: str = "PARQUET"
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size: int | None = None
    #: the sort order the rows were written in (data files only; 0: unsorted)
    sort_order_id: int = 0
    #: v3: the row id of the file's first row, when written (else inherited)
    first_row_id: int | None = None


@dataclass
class EntryRecord:
    status: int
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    file: DataFileRecord


def _pairs(m: Mapping[int, Any]) -> list[dict[str, Any]] | None:
    return [{"key": k, "value": v} for k, v in sorted(m.items())] if m else None


def _entry_record(e: EntryRecord, version: int, names: Mapping[int, str]) -> dict[str, Any]:
    f = e.file
    d: dict[str, Any] = {
        "content": f.content, "file_path": f.path, "file_format": f.file_format,
        "partition": {names[fid]: v for fid, v in f.partition.items()},
        "record_count": f.record_count, "file_size_in_bytes": f.file_size,
        "block_size_in_bytes": 64 * 1024 * 1024,
        "column_sizes": _pairs(f.column_sizes), "value_counts": _pairs(f.value_counts),
        "null_value_counts": _pairs(f.null_counts), "nan_value_counts": _pairs(f.nan_counts),
        "lower_bounds": _pairs(f.lower_bounds), "upper_bounds": _pairs(f.upper_bounds),
        "key_metadata": None, "split_offsets": list(f.split_offsets or []) or None,
        "equality_ids": None, "sort_order_id": f.sort_order_id if f.content == 0 else None,
        "first_row_id": f.first_row_id, "referenced_data_file": f.referenced_data_file,
        "content_offset": f.content_offset, "content_size_in_bytes": f.content_size}
    rec: dict[str, Any] = {"status": e.status, "snapshot_id": e.snapshot_id, "data_file": d}
    if version >= 2:
        rec["sequence_number"] = e.sequence_number
        rec["file_sequence_number"] = e.file_sequence_number
    return rec


def _write(path: str, schema: dict[str, Any], records: list[dict[str, Any]],
           metadata: Mapping[str, str]) -> int:
    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec="deflate",
                    metadata=dict(metadata))
    data = buf.getvalue()
    if not fileio.write_new(path, data):  # names carry a fresh uuid: never taken
        raise FileExistsError(path)
    return len(data)


def write_manifest(path: str, *, version: int, schema: IcebergSchema, schema_json: Any,
                   spec: PartitionSpec, spec_fields: Sequence[tuple[int, str, IcebergType]],
                   entries: Sequence[EntryRecord], content: int = 0) -> int:
    """Write a manifest of ``entries``; returns its length in bytes."""
    part = partition_record(spec_fields)
    names = {fid: name for fid, name, _ in spec_fields}
    spec_json = [{"name": f.name, "transform": f.transform, "source-id": f.source_ids[0],
                  "field-id": f.field_id} for f in spec.fields]
    meta = {"schema": json.dumps(schema_json, separators=(",", ":")),
            "schema-id": str(schema.schema_id),
            "partition-spec": json.dumps(spec_json, separators=(",", ":")),
            "partition-spec-id": str(spec.spec_id), "format-version": str(version)}
    if version >= 2:
        meta["content"] = "deletes" if content else "data"
    return _write(path, manifest_entry_schema(version, part),
                  [_entry_record(e, version, names) for e in entries], meta)


@dataclass
class ManifestRecord:
    path: str
    length: int
    spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    added_files: int
    existing_files: int
    deleted_files: int
    added_rows: int
    existing_rows: int
    deleted_rows: int
    partitions: list[dict[str, Any]] | None
    first_row_id: int | None = None


def write_manifest_list(path: str, *, version: int, snapshot_id: int, parent_id: int | None,
                        sequence_number: int, manifests: Sequence[ManifestRecord],
                        first_row_id: int | None = None) -> None:
    meta = {"snapshot-id": str(snapshot_id),
            "parent-snapshot-id": "null" if parent_id is None else str(parent_id),
            "format-version": str(version)}
    if version >= 2:
        meta["sequence-number"] = str(sequence_number)
    if version >= 3 and first_row_id is not None:
        meta["first-row-id"] = str(first_row_id)
    records = []
    for m in manifests:
        rec: dict[str, Any] = {
            "manifest_path": m.path, "manifest_length": m.length, "partition_spec_id": m.spec_id,
            "content": m.content, "sequence_number": m.sequence_number,
            "min_sequence_number": m.min_sequence_number,
            "added_snapshot_id": m.added_snapshot_id,
            "partitions": m.partitions, "key_metadata": None, "first_row_id": m.first_row_id}
        counts = {"added_files_count": m.added_files, "existing_files_count": m.existing_files,
                  "deleted_files_count": m.deleted_files, "added_rows_count": m.added_rows,
                  "existing_rows_count": m.existing_rows, "deleted_rows_count": m.deleted_rows}
        if version == 1:
            counts = {k.replace("_files_count", "_data_files_count"): v
                      for k, v in counts.items()}
        rec.update(counts)
        records.append(rec)
    _write(path, manifest_list_schema(version), records, meta)
