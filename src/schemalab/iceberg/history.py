"""An Iceberg table as the format-neutral history model."""


from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import (
    SchemaLabError,
)
from schemalab.history.lineage import compute_lineage, with_events
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import (
    SnapshotNode,
)
from schemalab.history.versions import FieldInfo, SchemaVersion
from schemalab.iceberg.metadata import IcebergSnapshot, load_json
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergNestedField,
    IcebergStructType,
    IcebergType,
    lineage_type_text,
)

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.iceberg.table import IcebergTable




@dataclass(frozen=True)
class MetadataInfo:
    """What the history needs from one metadata file of the table's past."""

    updated_ms: int
    schema_ids: tuple[int, ...]
    current_schema_id: int | None
    spec_ids: tuple[int, ...]
    order_ids: tuple[int, ...]
    current_snapshot_id: int | None
    #: the table's first metadata file (an empty metadata-log)
    is_first: bool


def _light_info(d: Mapping[str, Any]) -> MetadataInfo:
    def ids(key: str, id_key: str) -> tuple[int, ...]:
        return tuple(int(x[id_key]) for x in d.get(key) or () if isinstance(x, dict)
                     and isinstance(x.get(id_key), int))

    schema_ids = ids("schemas", "schema-id") or ((0,) if "schema" in d else ())
    cur = d.get("current-schema-id", 0 if "schema" in d else None)
    snap = d.get("current-snapshot-id")
    return MetadataInfo(int(d.get("last-updated-ms") or 0), schema_ids,
                         cur if isinstance(cur, int) else None,
                         ids("partition-specs", "spec-id") or (0,),
                         ids("sort-orders", "order-id") or (0,),
                         snap if isinstance(snap, int) and snap >= 0 else None,
                         not d.get("metadata-log"))


def metadata_timeline(table: IcebergTable) -> list[MetadataInfo]:
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


def _source_name(table: IcebergTable, fid: int) -> str:
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
        out.append(FieldInfo(f.id, f.name, lineage_type_text(f.type), not f.required, f.doc,
                             p if path else (), parent, pos))
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


def snapshot_node(table: IcebergTable, s: IcebergSnapshot) -> SnapshotNode:
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
    snaps = tuple(snapshot_node(table, s) for s in md.snapshots)
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
    listed = None if snap.manifest_list is None else table.resolve(snap.manifest_list)
    if listed is not None and (fileio.scheme(listed) != fileio.scheme(table.path)
                               or not fileio.exists(listed)):
        base = snapshot_node(table, snap)
        summary = {**base.summary,
                   "tree_error": f"manifest list {snap.manifest_list} is not on this machine"}
        return dataclasses.replace(base, summary=summary)
    return table.snapshot_tree(snapshot_id)

