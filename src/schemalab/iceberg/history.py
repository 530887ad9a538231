"""An Iceberg table as the format-neutral history model."""


from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from schemalab import fileio, progress
from schemalab.history.lineage import compute_lineage, with_events
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import FileNode, ManifestListNode, ManifestNode, SnapshotNode
from schemalab.history.versions import FieldInfo, SchemaVersion
from schemalab.iceberg.deletes import referenced_file
from schemalab.iceberg.listing import IcebergSource, MetadataInfo
from schemalab.iceberg.manifests import IcebergManifestEntry, decode_bound
from schemalab.iceberg.metadata import IcebergSchema, IcebergSnapshot
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergNestedField,
    IcebergStructType,
    IcebergType,
    lineage_type_text,
)


def _first_seen(timeline: Sequence[MetadataInfo], attr: str) -> dict[int, int]:
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


def _source_name(table: IcebergSource, fid: int) -> str:
    name = table.schema.full_name(fid)
    if name:
        return name
    for s in sorted(table.metadata.schemas, key=lambda s: -s.schema_id):
        if (n := s.full_name(fid)) is not None:
            return n
    return f"field {fid}"


def field_infos(fields: Sequence[IcebergNestedField], path: tuple[str, ...] = (),
                parent: int | None = None) -> list[FieldInfo]:
    """FieldInfos of a schema: nested struct fields, list elements and map keys/values
    included with Iceberg's dotted paths (``address.city``, ``tags.element``)."""
    out: list[FieldInfo] = []
    for pos, f in enumerate(fields):
        p = (*path, f.name)
        default = None if f.write_default is None else json.dumps(f.write_default)
        out.append(FieldInfo(f.id, f.name, lineage_type_text(f.type), not f.required, f.doc,
                             p if path else (), parent, pos, default))
        out.extend(_child_infos(f.type, p, f.id))
    return out


def _child_infos(t: IcebergType, path: tuple[str, ...], parent: int) -> list[FieldInfo]:
    if isinstance(t, IcebergStructType):
        return field_infos(t.fields, path, parent)
    out: list[FieldInfo] = []
    if isinstance(t, IcebergListType):
        kids = [(t.element_id, "element", t.element, not t.element_required)]
    elif isinstance(t, IcebergMapType):
        kids = [(t.key_id, "key", t.key, False), (t.value_id, "value", t.value,
                                                   not t.value_required)]
    else:
        return out
    for pos, (cid, name, ct, nullable) in enumerate(kids):
        p = (*path, name)
        out.append(FieldInfo(cid, name, lineage_type_text(ct), nullable, None, p, parent, pos))
        out.extend(_child_infos(ct, p, cid))
    return out


def snapshot_node(table: IcebergSource, s: IcebergSnapshot) -> SnapshotNode:
    total = str(s.summary.get("total-records", ""))
    summary: dict[str, Any] = dict(s.summary)
    summary["sequence-number"] = s.sequence_number
    refs = [n for n, r in table.metadata.refs.items() if r.get("snapshot-id") == s.snapshot_id]
    if refs:
        summary["refs"] = ", ".join(sorted(refs))
    return SnapshotNode(s.snapshot_id, s.parent_id, table.snapshot_schema_id(s), s.timestamp_ms,
                        s.operation, int(total) if total.isdigit() else None,
                        summary=summary, record_count_text=record_count_text(s.summary))


def record_count_text(summary: Mapping[str, Any]) -> str:
    """What a snapshot's row count (``total-records``) counts: the rows of its data files,
    before any delete.

        >>> record_count_text({"total-records": "8", "total-equality-deletes": "1"})
        'total-records: rows in the data files, before deletes (1 equality delete row ...)'
    """
    deletes = []
    pos = str(summary.get("total-position-deletes", "0"))
    eq = str(summary.get("total-equality-deletes", "0"))
    if pos.isdigit() and int(pos):
        deletes.append(f"{pos} row{'s' if int(pos) != 1 else ''} deleted by position")
    if eq.isdigit() and int(eq):
        deletes.append(f"{eq} equality delete row{'s' if int(eq) != 1 else ''}")
    more = f" ({' and '.join(deletes)} not subtracted)" if deletes else ""
    return f"total-records: rows in the data files, before deletes{more}"


def iceberg_history(table: IcebergSource) -> TableHistory:
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
    timeline = table.timeline
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
    snaps = tuple(snapshot_node(table, s) for s in md.snapshots)
    return TableHistory(
        format="iceberg", location=table.path, name=table.name, schemas=tuple(versions),
        lineage=tuple(compute_lineage(lineage_seq)), snapshots=snaps,
        other_versions=tuple(other), current_schema_id=md.current_schema_id,
        snapshot_log=md.snapshot_log, tree_loader=lambda sid: _history_tree(table, sid))


def _history_tree(table: IcebergSource, snapshot_id: int) -> SnapshotNode:
    """A snapshot's tree for the explorer. A manifest list that is not on this machine (an
    s3:// table seen through its metadata file alone, or an expired file) gives the snapshot
    without a tree and ``summary["tree_error"]`` saying why, so the rest of the history still
    renders; a file that exists but is broken still raises CorruptFileError."""
    snap = table.snapshot(snapshot_id)
    listed = None if snap.manifest_list is None else table.resolve(snap.manifest_list)
    if listed is not None and (fileio.scheme(listed) != fileio.scheme(table.path)
                               or not fileio.exists(listed)):
        base = snapshot_node(table, snap)
        summary = {**base.summary,
                   "tree_error": f"manifest list {snap.manifest_list} is not on this machine"}
        return dataclasses.replace(base, summary=summary)
    return snapshot_tree(table, snapshot_id)


def snapshot_tree(table: IcebergSource, snapshot_id: int) -> SnapshotNode:
    """Snapshot → its manifest list → manifests → file entries (ADDED, EXISTING,
    DELETED), with partitions and column bounds decoded and shown under today's names."""
    snap = table.snapshot(snapshot_id)
    current = table.schema
    manifests = []
    live: list[FileNode] = []
    for mf in progress.track(table.manifest_files(snap), "reading manifests", unit="manifests"):
        m = table.manifest(mf)
        nodes = tuple(_file_node(table, e, current, m.schema_id) for e in m.entries)
        live.extend(n for n, e in zip(nodes, m.entries, strict=True)
                    if e.live and mf.content == 0 and e.content == 0)
        manifests.append(ManifestNode(
            table.relpath(mf.path),
            mf.added_files if mf.added_files is not None
            else sum(e.status == 1 for e in m.entries),
            mf.deleted_files if mf.deleted_files is not None
            else sum(e.status == 2 for e in m.entries),
            m.schema_id, nodes))
    if snap.manifest_list is not None:
        lists = (ManifestListNode("manifest-list", table.relpath(snap.manifest_list),
                                  tuple(manifests)),)
    else:
        lists = (ManifestListNode("manifests", "(listed in the metadata file)",
                                  tuple(manifests)),)
    return dataclasses.replace(snapshot_node(table, snap), lists=lists, live_files=tuple(live))


def _file_node(table: IcebergSource, e: IcebergManifestEntry, current: IcebergSchema,
               manifest_schema_id: int | None) -> FileNode:
    schema_id = table.written_schema_id(e, manifest_schema_id)
    spec = table.metadata.spec(e.spec_id)
    names = {pf.field_id: pf.name for pf in spec.fields} if spec else {}
    partition = {names.get(fid, e.partition_names.get(fid, str(fid))): v
                 for fid, v in e.partition.items()}
    stats: dict[str, tuple[Any, Any, int | None]] = {}
    for fid in sorted(set(e.lower_bounds) | set(e.upper_bounds) | set(e.null_counts)):
        name, t = _field_name_type(table, fid, current)
        lo, hi = e.lower_bounds.get(fid), e.upper_bounds.get(fid)
        stats[name] = (None if lo is None or t is None else decode_bound(lo, t),
                       None if hi is None or t is None else decode_bound(hi, t),
                       e.null_counts.get(fid))
    kind = e.status_name if e.content == 0 else f"{e.status_name} {e.content_name}"
    target = None if e.content != 1 else referenced_file(e)
    return FileNode(path=table.relpath(e.file_path), kind=kind, schema_id=schema_id,
                    row_count=e.record_count, partition=partition, file_size=e.file_size,
                    stats=stats, min_sequence_number=e.sequence_number,
                    max_sequence_number=e.sequence_number,
                    target=None if target is None else table.relpath(target))


def _field_name_type(table: IcebergSource, fid: int,
                     current: IcebergSchema) -> tuple[str, IcebergType | None]:
    f = current.find(fid)
    if f is not None:
        return current.full_name(fid) or str(fid), f.type
    for s in sorted(table.metadata.schemas, key=lambda s: -s.schema_id):
        f = s.find(fid)
        if f is not None:
            return f"{s.full_name(fid)} (dropped)", f.type
    return f"field {fid}", None
