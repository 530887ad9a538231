"""An append commit: the written data files in one new manifest, a manifest list of it and
every manifest of the parent snapshot, and a snapshot whose summary has the keys and counts
Java's ``SnapshotSummary`` writes for an ``append``."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from decimal import Context
from typing import Any

from schemalab.iceberg.manifests import IcebergManifestFile, read_iceberg_manifest_list
from schemalab.iceberg.metadata import IcebergSchema, PartitionSpec
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergType
from schemalab.iceberg.write import avro
from schemalab.iceberg.write.commit import CommitTarget, commit, target_of
from schemalab.iceberg.write.datafiles import WrittenDataFile, local_path
from schemalab.iceberg.write.footer import decimal_bytes
from schemalab.iceberg.write.schema_json import schema_json
from schemalab.iceberg.write.tablemeta import (
    add_snapshot,
    branch_head,
    new_snapshot_id,
    now_ms,
)
from schemalab.refs import MAIN


def partition_bound(value: Any, t: IcebergType) -> bytes:
    """A partition value in Iceberg's single-value binary form (spec, Appendix D)."""
    assert isinstance(t, IcebergPrimitiveType)
    k = t.kind
    if k in ("int", "date"):
        return int(value).to_bytes(4, "little", signed=True)
    if k in ("long", "timestamp", "timestamptz"):
        return int(value).to_bytes(8, "little", signed=True)
    if k == "boolean":
        return b"\x01" if value else b"\x00"
    if k == "decimal":
        return decimal_bytes(int(value.scaleb(t.scale or 0, context=Context(prec=80))))
    if k == "string":
        return str(value).encode("utf-8")
    return bytes(value)


def _summaries(files: Sequence[WrittenDataFile],
               spec_fields: Sequence[tuple[int, str, IcebergType]]) -> list[dict[str, Any]]:
    out = []
    for fid, _, t in spec_fields:
        values = [f.partition.get(fid) for f in files]
        present = [v for v in values if v is not None]
        out.append({"contains_null": len(present) < len(values),
                    "contains_nan": False if getattr(t, "kind", "") in ("float", "double")
                    else None,
                    "lower_bound": partition_bound(min(present), t) if present else None,
                    "upper_bound": partition_bound(max(present), t) if present else None})
    return out


def kept_record(mf: IcebergManifestFile) -> avro.ManifestRecord:
    """A manifest of the parent listed again as it is."""
    parts = None if mf.partitions is None else [
        {"contains_null": p.contains_null, "contains_nan": p.contains_nan,
         "lower_bound": p.lower_bound, "upper_bound": p.upper_bound} for p in mf.partitions]
    return avro.ManifestRecord(
        mf.path, mf.length, mf.spec_id, mf.content, mf.sequence_number, mf.min_sequence_number,
        mf.added_snapshot_id or 0, mf.added_files or 0, mf.existing_files or 0,
        mf.deleted_files or 0, mf.added_rows or 0, mf.existing_rows or 0, mf.deleted_rows or 0,
        parts, mf.first_row_id)


def _totals(parent: dict[str, Any] | None, files: Sequence[WrittenDataFile],
            kept: int) -> dict[str, str]:
    prev = (parent or {}).get("summary", {})
    records = sum(f.metrics.record_count for f in files)
    size = sum(f.file_size for f in files)
    parts = {f.partition_texts for f in files}

    def total(key: str, add: int = 0) -> str:
        return str(int(prev.get(key, 0)) + add)

    # Java 1.12's MergeAppend (what Iceberg's Spark appends with) counts its manifests
    # first: one new, the parent's kept (schemalab merges none)
    return {"operation": "append", "manifests-created": "1", "manifests-kept": str(kept),
            "manifests-replaced": "0", "added-data-files": str(len(files)),
            "added-records": str(records), "added-files-size": str(size),
            "changed-partition-count": str(len(parts)),
            "total-records": total("total-records", records),
            "total-files-size": total("total-files-size", size),
            "total-data-files": total("total-data-files", len(files)),
            "total-delete-files": total("total-delete-files"),
            "total-position-deletes": total("total-position-deletes"),
            "total-equality-deletes": total("total-equality-deletes")}


def commit_append(where: str | CommitTarget, table: str, version: int,
                  schema: IcebergSchema, spec: PartitionSpec,
                  spec_fields: Sequence[tuple[int, str, IcebergType]],
                  files: Sequence[WrittenDataFile], *, branch: str = MAIN,
                  sort_order_id: int = 0) -> tuple[str, int]:
    """Commit ``files`` as one append snapshot on ``branch`` (its head is the parent, only
    its ref moves) to ``where`` (a table path, or a
    :class:`~schemalab.iceberg.write.commit.CommitTarget`); (new metadata file, snapshot id).
    The manifest is written once; the manifest list is made anew on each commit attempt,
    from the parent that attempt sees. ``sort_order_id``: the order the files' rows were
    written in."""
    target = target_of(where, table)
    table_path = target.table_path
    snapshot_id = new_snapshot_id()
    mdir = os.path.join(table_path, "metadata")
    name = f"{uuid.uuid4()}-m0.avro"
    entries = [avro.EntryRecord(1, snapshot_id, None, None, avro.DataFileRecord(
        f.path, f.metrics.record_count, f.file_size, f.partition,
        column_sizes=f.metrics.column_sizes, value_counts=f.metrics.value_counts,
        null_counts=f.metrics.null_counts, lower_bounds=f.metrics.lower_bounds,
        upper_bounds=f.metrics.upper_bounds, split_offsets=f.metrics.split_offsets,
        sort_order_id=sort_order_id))
        for f in files]
    length = avro.write_manifest(os.path.join(mdir, name), version=version, schema=schema,
                                 schema_json=schema_json(schema), spec=spec,
                                 spec_fields=spec_fields, entries=entries)
    rows = sum(f.metrics.record_count for f in files)

    def change(d: dict[str, Any]) -> dict[str, Any]:
        location = str(d["location"]).rstrip("/")
        cur = branch_head(d, branch, table)
        parent = next((s for s in d.get("snapshots", []) if s["snapshot-id"] == cur), None)
        seq = int(d.get("last-sequence-number", 0)) + 1 if version >= 2 else 0
        first_row_id = int(d.get("next-row-id", 0)) if version >= 3 else None
        new = avro.ManifestRecord(f"{location}/metadata/{name}", length, spec.spec_id, 0, seq,
                                  seq, snapshot_id, len(files), 0, 0, rows, 0, 0,
                                  _summaries(files, spec_fields), first_row_id)
        # the parent's manifests that still list a live file (Java's filter drops the
        # others: a manifest whose files a DELETE or OVERWRITE all removed)
        old = [] if parent is None else [
            kept_record(mf) for mf in read_iceberg_manifest_list(
                local_path(table_path, location, parent["manifest-list"]))
            if mf.added_files is None or mf.existing_files is None
            or mf.added_files + mf.existing_files > 0]
        list_name = f"snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
        avro.write_manifest_list(os.path.join(mdir, list_name), version=version,
                                 snapshot_id=snapshot_id,
                                 parent_id=None if parent is None else cur,
                                 sequence_number=seq, manifests=[new, *old],
                                 first_row_id=first_row_id)
        snap: dict[str, Any] = {}
        if version >= 2:
            snap["sequence-number"] = seq
        snap["snapshot-id"] = snapshot_id
        if parent is not None:
            snap["parent-snapshot-id"] = cur
        snap["timestamp-ms"] = now_ms()
        snap["summary"] = _totals(parent, files, len(old))
        snap["manifest-list"] = f"{location}/metadata/{list_name}"
        snap["schema-id"] = schema.schema_id
        if version >= 3:
            snap["first-row-id"] = first_row_id
            snap["added-rows"] = rows
            d["next-row-id"] = int(d.get("next-row-id", 0)) + rows
        add_snapshot(d, snap, branch)
        return d

    path, _ = commit(target, table, change)
    return path, snapshot_id
