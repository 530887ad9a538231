"""A Paimon table (ours, Java Paimon's, pypaimon's) as the format-neutral history model.

Schema versions and snapshots come from their JSON files only, so opening a table with
thousands of each is quick; a snapshot's manifest tree is read when it is asked for.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from schemalab.history.lineage import compute_lineage, with_events
from schemalab.history.model import TableHistory, flatten_fields
from schemalab.history.snapshots import (
    FileNode,
    ManifestListNode,
    ManifestNode,
    SnapshotNode,
)
from schemalab.history.versions import SchemaVersion, gc_paused
from schemalab.paimon.manifest import (
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    read_manifest,
    read_manifest_list,
)
from schemalab.paimon.scan import ManifestListNode as _ListRead
from schemalab.paimon.scan import ManifestNode as _ManifestRead
from schemalab.paimon.scan import replay
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import (
    ArrayType,
    DataType,
    MapType,
    MultisetType,
    RowType,
)

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.table import Table


def type_text(t: DataType, *, top: bool = True) -> str:
    """A type as the lineage compares it: nullability apart (it is its own event), and a ROW
    as just ``ROW`` — its fields have lineages of their own, so renaming ``addr.city`` is not
    a retype of ``addr``."""
    if isinstance(t, RowType):  # before the cache: hashing a ROW hashes all its fields
        return "ROW" + ("" if top or t.nullable else " NOT NULL")
    return _type_text(t, top)


@functools.lru_cache(maxsize=4096)
def _type_text(t: DataType, top: bool) -> str:
    # Types are frozen values and a table has few distinct ones; rendering one anew for every
    # field of every version (with_nullable copies it) was a tenth of history()'s time.
    suffix = "" if top or t.nullable else " NOT NULL"
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
    with gc_paused():  # see gc_paused: the cost stays linear in the history
        return _paimon_history(table)


def _paimon_history(table: Table) -> TableHistory:
    schemas = table.schemas
    versions = with_events([schema_version(s) for s in schemas])
    snaps = []
    prev: int | None = None
    for snap in table.snapshots:
        snaps.append(SnapshotNode(
            snap.id, prev, snap.schema_id, snap.time_millis, snap.commit_kind,
            snap.total_record_count,
            summary={"commit_user": snap.commit_user, "delta_record_count":
                     snap.delta_record_count, "writer": snap.writer_version}))
        prev = snap.id
    loader = _TreeLoader(table, schemas, snaps)
    return TableHistory(
        format="paimon", location=table.path, name=table.name, schemas=tuple(versions),
        lineage=tuple(compute_lineage(versions, precomputed=True)), snapshots=tuple(snaps),
        current_schema_id=versions[-1].id if versions else None, tree_loader=loader)


class _TreeLoader:
    """Loads snapshot trees for one history. It reuses what history() already read (the
    snapshots, the schemas, the current schema) instead of listing the snapshot and schema
    directories again for every tree — ``to_json()`` asks for every snapshot's tree, which
    made ``schemalab inspect`` quadratic — and keeps recently parsed manifests and manifest
    lists, which successive snapshots share (manifest files never change)."""

    MANIFEST_CACHE = 512

    def __init__(self, table: Table, schemas: list[TableSchema],
                 snaps: list[SnapshotNode]) -> None:
        self.table = table
        self.schemas = {s.id: s for s in schemas}
        self.current = schemas[-1] if schemas else None
        self.nodes = {s.id: s for s in snaps}
        self._lists: OrderedDict[str, list[ManifestFileMeta]] = OrderedDict()
        self._manifests: OrderedDict[str, tuple[ManifestEntry, ...]] = OrderedDict()

    def __call__(self, snapshot_id: int) -> SnapshotNode:
        return snapshot_tree(self.table, snapshot_id, prev_node=self.nodes.get(snapshot_id),
                             loader=self)

    def schema(self, schema_id: int) -> TableSchema:
        s = self.schemas.get(schema_id)
        if s is None:
            s = self.schemas[schema_id] = self.table.schema_at(schema_id)
        return s

    def _cached(self, cache: OrderedDict[str, Any], name: str, read: Any) -> Any:
        value = cache.get(name)
        if value is None:
            value = read(os.path.join(self.table.path, "manifest", name))
            cache[name] = value
            if len(cache) > self.MANIFEST_CACHE:
                cache.popitem(last=False)
        else:
            cache.move_to_end(name)
        return value

    def read_list(self, kind: str, file_name: str) -> _ListRead:
        metas = self._cached(self._lists, file_name, read_manifest_list)
        manifest_dir = os.path.join(self.table.path, "manifest")
        return _ListRead(kind, file_name, tuple(
            _ManifestRead(m, self._cached(self._manifests, m.file_name,
                                          lambda p: tuple(read_manifest(p))),
                          os.path.join(manifest_dir, m.file_name))
            for m in metas))


def snapshot_tree(table: Table, snapshot_id: int, prev_node: SnapshotNode | None = None, *,
                  loader: _TreeLoader | None = None) -> SnapshotNode:
    """Snapshot → base/delta manifest lists → manifests → data files, with partitions decoded,
    and each file's value stats decoded with its own schema and shown under today's names."""
    if loader is None:
        loader = _TreeLoader(table, table.schemas, [])
    snap: Snapshot = (table.snapshot_manager.get(snapshot_id) if prev_node is not None
                      else table.snapshot(snapshot_id))
    lists_read = [loader.read_list("base", snap.base_manifest_list),
                  loader.read_list("delta", snap.delta_manifest_list)]
    live_entries = replay(tuple(lists_read))
    if snap.changelog_manifest_list:
        lists_read.append(loader.read_list("changelog", snap.changelog_manifest_list))
    current = loader.current or table.schema

    def file_node(e: ManifestEntry) -> FileNode:
        return describe_entry(table, e, loader.schema(e.file.schema_id), current)

    lists = tuple(
        ManifestListNode(lst.kind, lst.file_name, tuple(
            ManifestNode(m.meta.file_name, m.meta.num_added_files, m.meta.num_deleted_files,
                         m.meta.schema_id, tuple(file_node(e) for e in m.entries))
            for m in lst.manifests))
        for lst in lists_read)
    live = tuple(file_node(e) for e in live_entries if e.kind == FileKind.ADD)
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
        from schemalab.paimon.binaryrow import decode_row

        # A file's key is the *trimmed* primary key, without the partition keys (Java's
        # TableSchema.trimmedPrimaryKeys); decoding it with all primary keys failed, so every
        # key range of a partitioned primary-key table showed as unknown.
        trimmed = [k for k in file_schema.primary_keys if k not in file_schema.partition_keys]
        key_types = [file_schema.type_of(k) for k in trimmed or file_schema.primary_keys]
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
