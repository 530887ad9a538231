"""A Paimon table (ours, Java Paimon's, pypaimon's) as the format-neutral history model.

Schema versions and snapshots come from their JSON files only, so opening a table with
thousands of each is quick; a snapshot's manifest tree is read when it is asked for.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

from schemalab import progress
from schemalab.history.graph import TAG_ONLY
from schemalab.history.lineage import compute_lineage, with_events
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import (
    FileNode,
    ManifestListNode,
    ManifestNode,
    SnapshotChange,
    SnapshotNode,
)
from schemalab.history.versions import FieldInfo, SchemaVersion, gc_paused
from schemalab.paimon.binaryrow import decode_row
from schemalab.paimon.index import (
    DELETION_VECTORS,
    HASH,
    DeletionFile,
    IndexFileEntry,
    deletion_files,
    index_file_path,
    index_files,
)
from schemalab.paimon.listing import BucketDirs, ManifestReader, partition_values, replay
from schemalab.paimon.manifest import FileKind, ManifestEntry, value_stats_fields
from schemalab.paimon.primary_key import file_key_range
from schemalab.paimon.rewritten import history_warnings
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.schema import TableSchema
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)
from schemalab.types.visitor import TypeVisitor, row_inside, visit


class _TypeText(TypeVisitor[str]):
    """A type as the lineage compares it: nullability apart at the top (it is its own event),
    and a ROW as just ``ROW`` — its fields have lineages of their own, so renaming
    ``addr.city`` is not a retype of ``addr``."""

    def atomic(self, t: AtomicType) -> str:
        return t.with_nullable(True).sql() + _not_null(t)

    def row(self, t: RowType, fields: list[str]) -> str:
        return "ROW" + _not_null(t)

    def array(self, t: ArrayType, element: str) -> str:
        return f"ARRAY<{element}>{_not_null(t)}"

    def multiset(self, t: MultisetType, element: str) -> str:
        return f"MULTISET<{element}>{_not_null(t)}"

    def map(self, t: MapType, key: str, value: str) -> str:
        return f"MAP<{key}, {value}>{_not_null(t)}"


def _not_null(t: DataType) -> str:
    return "" if t.nullable else " NOT NULL"


_TYPE_TEXT = _TypeText()


@functools.lru_cache(maxsize=4096)
def _inner_text(t: DataType) -> str:
    # Types are frozen values and a table has few distinct ones; rendering one anew for every
    # field of every version was a tenth of history()'s time.
    return visit(t, _TYPE_TEXT)


def type_text(t: DataType) -> str:
    """The lineage's text of a column's type (see :class:`_TypeText`)."""
    if isinstance(t, RowType):  # before the cache: hashing a ROW hashes all its fields
        return "ROW"
    text = _inner_text(t)
    # nullability at the top is its own event: the one trailing NOT NULL goes (cheaper than
    # a nullable copy of the type for every field of every version)
    return text if t.nullable else text[:-len(" NOT NULL")]


def flatten_fields(fields: Sequence[DataField], path: tuple[str, ...] = (),
                   parent: int | None = None) -> list[FieldInfo]:
    """FieldInfos of a schema's fields, nested ROW fields (also inside ARRAY/MAP) included
    with dotted paths."""
    out: list[FieldInfo] = []
    for pos, f in enumerate(fields):
        p = (*path, f.name)
        out.append(FieldInfo(f.id, f.name, type_text(f.type), f.type.nullable, f.description,
                             p if path else (), parent, pos, f.default_value))
        inner = row_inside(f.type)
        if inner is not None:
            out.extend(flatten_fields(inner.fields, p, f.id))
    return out


def schema_version(s: TableSchema) -> SchemaVersion:
    return SchemaVersion(s.id, s.time_millis or None, tuple(flatten_fields(s.fields)),
                         options=s.effective_options(), partition_keys=s.partition_keys,
                         primary_keys=s.primary_keys)


def paimon_history(path: str, name: str, schemas: SchemaManager, snapshots: SnapshotManager,
                   reader: ManifestReader | None = None,
                   kept: Mapping[int, Snapshot] | None = None) -> TableHistory:
    """The history of the Paimon table at ``path`` (``name`` in messages); its trees read
    manifests through ``reader`` (a table object's, which keeps what it read). ``kept``: the
    snapshots only a tag keeps (expired from ``snapshot/``, copied in ``tag/tag-<name>``),
    listed among the others by id."""
    with gc_paused():  # see gc_paused: the cost stays linear in the history
        all_schemas = schemas.list_all()
        versions = with_events([schema_version(s) for s in all_schemas])
        snaps = []
        prev: int | None = None
        listed = snapshots.get_all(snapshots.list_ids())
        extra = [v for k, v in (kept or {}).items() if k not in {s.id for s in listed}]
        ordered = sorted([*listed, *extra], key=lambda s: s.id)
        for snap in ordered:
            snaps.append(snapshot_node(snap, prev))
            prev = snap.id
        loader = _TreeLoader(path, schemas, snapshots, snaps, reader, {s.id: s for s in extra})
        return TableHistory(
            format="paimon", location=path, name=name, schemas=tuple(versions),
            lineage=tuple(compute_lineage(versions, precomputed=True)),
            snapshots=tuple(snaps), current_schema_id=versions[-1].id if versions else None,
            tree_loader=loader, changes_loader=loader.changes,
            warnings_loader=functools.partial(history_warnings, name, path,
                                              schemas.table_path, schemas, ordered,
                                              loader.reader),
            # expired from snapshot/, on no branch any more: only a tag keeps them
            marks=dict.fromkeys(sorted(s.id for s in extra), TAG_ONLY))


class _TreeLoader:
    """Loads snapshot trees for one history. It reuses what history() already read (the
    snapshots, the schemas, the current schema) instead of listing the snapshot and schema
    directories again for every tree — ``to_json()`` asks for every snapshot's tree, which
    made ``schemalab inspect`` quadratic — and one manifest reader, whose cache successive
    snapshots share."""

    def __init__(self, path: str, schemas: SchemaManager, snapshots: SnapshotManager,
                 snaps: list[SnapshotNode], reader: ManifestReader | None = None,
                 kept: Mapping[int, Snapshot] | None = None) -> None:
        self.path = path
        self.schemas = schemas
        self.snapshots = snapshots
        self.kept = dict(kept or {})
        self.current = schemas.latest()
        self.nodes = {s.id: s for s in snaps}
        self.reader = reader or ManifestReader(path)
        self.dirs = BucketDirs(path)

    def _file_node(self, e: ManifestEntry) -> FileNode:
        return describe_entry(self.path, e, self.schemas.get(e.file.schema_id),
                              self.current or self.schemas.get(e.file.schema_id), self.dirs)

    def changes(self, snapshot_ids: Sequence[int]) -> list[SnapshotChange]:
        """Each snapshot's delta manifest list: the entries its commit wrote. The live-file
        count runs on from the previous snapshot (its base list is exactly the previous
        snapshot's live files); only a snapshot whose predecessor was not just counted has its
        base list replayed."""
        out: list[SnapshotChange] = []
        prev_id: int | None = None
        live = 0
        for sid in progress.track(snapshot_ids, "reading snapshots", unit="snapshots"):
            snap = self._snapshot(sid)
            delta = self.reader.read_list("delta", snap.delta_manifest_list)
            entries = [e for m in delta.manifests for e in m.entries]
            added = [e for e in entries if e.kind == FileKind.ADD]
            removed = [e for e in entries if e.kind != FileKind.ADD]
            if prev_id is not None and sid == prev_id + 1:
                live += len(added) - len(removed)
            else:
                base = self.reader.read_list("base", snap.base_manifest_list)
                live = sum(1 for e in replay([base, delta]) if e.kind == FileKind.ADD)
            out.append(SnapshotChange(sid, tuple(self._file_node(e) for e in added),
                                      tuple(self._file_node(e) for e in removed), live))
            prev_id = sid
        if prev_id is not None and len(snapshot_ids) > 1:
            # the newest base list is what every read of today's table starts from: a damaged
            # one is named here too, not only when the table is read
            self.reader.read_list("base", self._snapshot(prev_id).base_manifest_list)
        return out

    def _snapshot(self, snapshot_id: int) -> Snapshot:
        kept = self.kept.get(snapshot_id)
        return kept if kept is not None else self.snapshots.get(snapshot_id)

    def __call__(self, snapshot_id: int) -> SnapshotNode:
        snap = self._snapshot(snapshot_id)
        lists_read = [self.reader.read_list("base", snap.base_manifest_list),
                      self.reader.read_list("delta", snap.delta_manifest_list)]
        live_entries = replay(lists_read)
        if snap.changelog_manifest_list:
            lists_read.append(self.reader.read_list("changelog", snap.changelog_manifest_list))
        file_node = self._file_node
        lists = tuple(
            ManifestListNode(lst.kind, lst.file_name, tuple(
                ManifestNode(m.meta.file_name, m.meta.num_added_files,
                             m.meta.num_deleted_files, m.meta.schema_id,
                             tuple(file_node(e) for e in m.entries))
                for m in lst.manifests))
            for lst in lists_read)
        index = index_files(self.path, snap)
        if index:
            lists += (index_list_node(self.path, snap.index_manifest or "", index,
                                      self.schemas.get(snap.schema_id)),)
        dvs = deletion_files(self.path, index)
        live = tuple(_with_deletion_vector(file_node(e), e, dvs) for e in live_entries
                     if e.kind == FileKind.ADD)
        base = self.nodes.get(snapshot_id) or snapshot_node(snap, None)
        return dataclasses.replace(base, lists=lists, live_files=live)


def snapshot_node(snap: Snapshot, parent: int | None) -> SnapshotNode:
    """A snapshot without its tree."""
    return SnapshotNode(
        snap.id, parent, snap.schema_id, snap.time_millis, snap.commit_kind,
        snap.total_record_count,
        summary={"commit_user": snap.commit_user, "delta_record_count":
                 snap.delta_record_count, "writer": snap.writer_version,
                 # Paimon 2.x: what the commit did (a data-evolution UPDATE, ...)
                 **({} if snap.operation is None else {"operation": snap.operation})},
        record_count_text="totalRecordCount: records in the live data files, before merges "
                          "and deletion vectors")


def index_list_node(table_path: str, manifest: str, entries: list[IndexFileEntry],
                    schema: TableSchema) -> ManifestListNode:
    """A snapshot's index manifest as a tree level: its deletion-vector and hash index
    files, each with the data files it covers (``row_count``: data files for a
    deletion-vector file, keys for a hash index)."""
    types = [schema.type_of(k) for k in schema.partition_keys]
    files = []
    for e in entries:
        values = decode_row(e.partition, types) if types else []
        kind = {DELETION_VECTORS: "deletion vectors", HASH: "hash index"}.get(
            e.index_type, e.index_type)
        files.append(FileNode(
            path=os.path.relpath(index_file_path(table_path, e), table_path),
            kind=f"{e.kind.name} {kind}", schema_id=schema.id, row_count=e.row_count,
            partition=dict(zip(schema.partition_keys, values, strict=True)), bucket=e.bucket,
            file_size=e.file_size,
            target=", ".join(r.data_file for r in e.ranges) or None))
    return ManifestListNode("index", manifest, (ManifestNode(
        manifest, sum(e.kind is FileKind.ADD for e in entries),
        sum(e.kind is FileKind.DELETE for e in entries), None, tuple(files)),))


def _with_deletion_vector(node: FileNode, e: ManifestEntry,
                          dvs: dict[tuple[bytes, int, str], DeletionFile]) -> FileNode:
    dv = dvs.get((e.partition, e.bucket, e.file.file_name))
    if dv is None:
        return node
    rows = dv.cardinality if dv.cardinality is not None else len(dv.positions())
    return dataclasses.replace(node, deleted_rows=rows, deleted_by=os.path.basename(
        dv.index_file))


def describe_entry(table_path: str, e: ManifestEntry, file_schema: TableSchema,
                   current: TableSchema, dirs: BucketDirs | None = None) -> FileNode:
    """A manifest entry as the explorer shows it: partition decoded, value stats decoded with
    the file's own schema and named as today's schema names the fields."""
    values = partition_values(e, file_schema)
    partition = dict(zip(file_schema.partition_keys, values, strict=True))
    path = (dirs or BucketDirs(table_path)).data_file_path(e, file_schema)
    stats = _stats_by_current_name(e, file_schema, current)
    key_range = file_key_range(e.file.min_key, e.file.max_key, file_schema)
    min_key, max_key = key_range or (None, None)
    return FileNode(
        path=os.path.relpath(path, table_path), kind="ADD" if e.kind == FileKind.ADD
        else "DELETE", schema_id=e.file.schema_id, row_count=e.file.row_count,
        partition=partition, bucket=e.bucket, level=e.file.level, file_size=e.file.file_size,
        stats=stats, min_key=min_key, max_key=max_key,
        min_sequence_number=e.file.min_sequence_number,
        max_sequence_number=e.file.max_sequence_number)


def _stats_by_current_name(e: ManifestEntry, file_schema: TableSchema,
                           current: TableSchema) -> dict[str, tuple[Any, Any, int | None]]:
    fields = value_stats_fields(e.file, file_schema)
    if not fields:  # none, or one the file's schema lacks: no value could be placed
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
