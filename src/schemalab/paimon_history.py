"""A Paimon table (ours, Java Paimon's, pypaimon's) as the format-neutral history model.

Schema versions and snapshots come from their JSON files only, so opening a table with
thousands of each is quick; a snapshot's manifest tree is read when it is asked for.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from schemalab.history import (
    FileNode,
    ManifestListNode,
    ManifestNode,
    SchemaVersion,
    SnapshotNode,
    TableHistory,
    compute_lineage,
    flatten_fields,
    with_events,
)
from schemalab.manifest import FileKind, ManifestEntry
from schemalab.schema import TableSchema
from schemalab.snapshot import manifest_tree
from schemalab.types import ArrayType, DataType, MapType, MultisetType, RowType

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.table import Table


def type_text(t: DataType, *, top: bool = True) -> str:
    """A type as the lineage compares it: nullability apart (it is its own event), and a ROW
    as just ``ROW`` — its fields have lineages of their own, so renaming ``addr.city`` is not
    a retype of ``addr``."""
    suffix = "" if top or t.nullable else " NOT NULL"
    if isinstance(t, RowType):
        return "ROW" + suffix
    if isinstance(t, ArrayType | MultisetType):
        return f"{t.root.value}<{type_text(t.element, top=False)}>{suffix}"
    if isinstance(t, MapType):
        return (f"MAP<{type_text(t.key, top=False)}, {type_text(t.value, top=False)}>"
                f"{suffix}")
    return t.with_nullable(True).sql() + suffix


def schema_version(s: TableSchema) -> SchemaVersion:
    return SchemaVersion(s.id, s.time_millis or None,
                         tuple(flatten_fields(s.fields, type_text=type_text)),
                         options=s.effective_options(), partition_keys=s.partition_keys,
                         primary_keys=s.primary_keys)


def paimon_history(table: Table) -> TableHistory:
    versions = with_events([schema_version(s) for s in table.schemas])
    snaps = []
    prev: int | None = None
    for snap in table.snapshots:
        snaps.append(SnapshotNode(
            snap.id, prev, snap.schema_id, snap.time_millis, snap.commit_kind,
            snap.total_record_count,
            summary={"commit_user": snap.commit_user, "delta_record_count":
                     snap.delta_record_count, "writer": snap.writer_version}))
        prev = snap.id
    return TableHistory(
        format="paimon", location=table.path, name=table.name, schemas=tuple(versions),
        lineage=tuple(compute_lineage(versions)), snapshots=tuple(snaps),
        current_schema_id=versions[-1].id if versions else None,
        tree_loader=lambda sid: snapshot_tree(table, sid, prev_node=_node(snaps, sid)))


def _node(snaps: list[SnapshotNode], sid: int) -> SnapshotNode:
    for s in snaps:
        if s.id == sid:
            return s
    raise KeyError(sid)


def snapshot_tree(table: Table, snapshot_id: int,
                  prev_node: SnapshotNode | None = None) -> SnapshotNode:
    """Snapshot → base/delta manifest lists → manifests → data files, with partitions decoded,
    and each file's value stats decoded with its own schema and shown under today's names."""
    snap = table.snapshot(snapshot_id)
    tree = manifest_tree(table.path, snap)
    current = table.schema
    schemas: dict[int, TableSchema] = {}

    def file_node(e: ManifestEntry) -> FileNode:
        sid = e.file.schema_id
        if sid not in schemas:
            schemas[sid] = table.schema_at(sid)
        return describe_entry(table, e, schemas[sid], current)

    lists = tuple(
        ManifestListNode(lst.kind, lst.file_name, tuple(
            ManifestNode(m.meta.file_name, m.meta.num_added_files, m.meta.num_deleted_files,
                         m.meta.schema_id, tuple(file_node(e) for e in m.entries))
            for m in lst.manifests))
        for lst in tree.lists)
    live = tuple(file_node(e) for e in tree.live if e.kind == FileKind.ADD)
    base = prev_node or SnapshotNode(snap.id, None, snap.schema_id, snap.time_millis,
                                     snap.commit_kind, snap.total_record_count)
    return SnapshotNode(base.id, base.parent_id, base.schema_id, base.time_millis, base.kind,
                        base.record_count, lists, live, base.summary)


def describe_entry(table: Table, e: ManifestEntry, file_schema: TableSchema,
                   current: TableSchema) -> FileNode:
    part_types = [file_schema.type_of(k) for k in file_schema.partition_keys]
    values = e.partition_values(part_types) if part_types else []
    partition = dict(zip(file_schema.partition_keys, values, strict=True))
    path = table._file_path(e, file_schema, tuple(values))
    stats = _stats_by_current_name(e, file_schema, current)
    min_key = max_key = None
    if file_schema.primary_keys and e.file.min_key and len(e.file.min_key) > 12:
        from schemalab.binaryrow import decode_row

        key_types = [file_schema.type_of(k) for k in file_schema.primary_keys]
        try:
            min_key = tuple(decode_row(e.file.min_key, key_types))
            max_key = tuple(decode_row(e.file.max_key, key_types))
        except ValueError:
            min_key = max_key = None
    return FileNode(
        path=os.path.relpath(path, table.path), kind="ADD" if e.kind == FileKind.ADD
        else "DELETE", schema_id=e.file.schema_id, row_count=e.file.row_count,
        partition=partition, bucket=e.bucket, level=e.file.level, file_size=e.file.file_size,
        stats=stats, min_key=min_key, max_key=max_key,
        min_sequence_number=e.file.min_sequence_number,
        max_sequence_number=e.file.max_sequence_number)


def _stats_by_current_name(e: ManifestEntry, file_schema: TableSchema,
                           current: TableSchema) -> dict[str, tuple[Any, Any, int | None]]:
    cols = e.file.value_stats_cols
    if cols is None:
        fields = list(file_schema.fields)
    else:
        fields = [f for n in cols if (f := file_schema.field(n)) is not None]
    if not fields:
        return {}
    try:
        mins, maxs = e.file.value_stats.decode([f.type for f in fields])
    except ValueError:
        return {}
    nulls = e.file.value_stats.null_counts or ()
    by_id = {f.id: f.name for f in current.fields}
    out: dict[str, tuple[Any, Any, int | None]] = {}
    for i, f in enumerate(fields):
        name = by_id.get(f.id)
        if name is None:
            name = f"{f.name} (dropped)"
        out[name] = (mins[i] if i < len(mins) else None, maxs[i] if i < len(maxs) else None,
                     nulls[i] if i < len(nulls) else None)
    return out
