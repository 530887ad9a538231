"""A snapshot that adds and removes files, as Java's ``MergingSnapshotProducer`` builds one
for ``RowDelta`` (DELETE, merge-on-read), ``DeleteFiles`` (whole-file DELETE),
``OverwriteFiles`` and ``ReplacePartitions`` (INSERT OVERWRITE):

- the added data files in a new data manifest, the added delete files (position delete
  files, deletion vectors) in a new delete manifest (``content = 1``), their entries ADDED
  with snapshot id and sequence numbers inherited;
- each manifest of the parent that holds a removed file written anew: the removed entries
  DELETED (this snapshot's id, their sequence numbers kept), the others EXISTING; a manifest
  that loses nothing is kept as it is;
- a deletion vector of a removed data file removed with it (Java's dangling DVs), and every
  delete file older than the oldest live data (``dropDeleteFilesOlderThan``);
- a summary with the keys and counts of Java's ``SnapshotSummary`` (``added-dvs``,
  ``removed-position-deletes``, ``total-*`` ...).

The manifests are built from the parent each commit attempt sees; ``validate`` runs against
it first and may refuse the attempt (a concurrent commit removed a file this one needs).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemalab.iceberg.manifests import (
    IcebergManifestEntry,
    IcebergManifestFile,
    read_iceberg_manifest,
    read_iceberg_manifest_list,
)
from schemalab.iceberg.metadata import IcebergSchema, PartitionSpec
from schemalab.iceberg.types import IcebergType
from schemalab.iceberg.write import avro
from schemalab.iceberg.write.append import kept_record, partition_bound
from schemalab.iceberg.write.commit import CommitTarget, commit, target_of
from schemalab.iceberg.write.datafiles import WrittenDataFile, local_path
from schemalab.iceberg.write.schema_json import schema_json
from schemalab.iceberg.write.tablemeta import add_snapshot, new_snapshot_id, now_ms

#: spec id → its fields as manifests need them: (field id, name, value type)
SpecFields = dict[int, list[tuple[int, str, IcebergType]]]


@dataclass(frozen=True)
class NewDeleteFile:
    """A position delete file or deletion vector this commit adds."""

    record: avro.DataFileRecord
    spec_id: int
    #: the bytes Java's summary counts (a DV: its blob, else the whole file)
    size: int


def file_key(e: IcebergManifestEntry) -> tuple[str, int | None]:
    """What tells two files apart: DVs share a Puffin file, not an offset."""
    return e.file_path, e.content_offset


@dataclass
class Change:
    """What a snapshot adds and removes."""

    operation: str
    added_data: Sequence[WrittenDataFile] = ()
    data_spec_id: int = 0
    added_deletes: Sequence[NewDeleteFile] = ()
    #: keys (:func:`file_key`) of live files to remove, data or delete
    removed: set[tuple[str, int | None]] = field(default_factory=set)
    #: data files to remove picked from the parent each attempt sees (INSERT OVERWRITE)
    remove_where: Callable[[IcebergManifestEntry], bool] | None = None
    #: delete files to remove with them (Java's ``dropPartition`` / ``deleteByRowFilter``
    #: drop the deletes of what they drop), given the data files removed
    drop_deletes: Callable[[IcebergManifestEntry, list[IcebergManifestEntry]], bool] | None \
        = None
    extra_summary: dict[str, str] = field(default_factory=dict)
    #: called with the parent's live entries before the attempt; raises to refuse it
    validate: Callable[[list[tuple[IcebergManifestFile, IcebergManifestEntry]]], None] | None \
        = None


@dataclass
class _Metrics:
    """Java's ``SnapshotSummary.UpdateMetrics``."""

    counts: dict[str, int] = field(default_factory=dict)
    partitions: set[str] = field(default_factory=set)

    def add(self, key: str, n: int) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def file(self, e: IcebergManifestEntry | avro.DataFileRecord, size: int, added: bool,
             spec_id: int) -> None:
        content = e.content
        dv = (e.file_format or "").lower() == "puffin"
        self.partitions.add(repr((spec_id, sorted((k, norm_value(v))
                                                  for k, v in e.partition.items()))))
        self.add("added-files-size" if added else "removed-files-size", size)
        if content == 0:
            self.add("added-data-files" if added else "deleted-data-files", 1)
            self.add("added-records" if added else "deleted-records", e.record_count)
            return
        kind = "dvs" if dv else "position-delete-files" if content == 1 else \
            "equality-delete-files"
        self.add(f"added-{kind}" if added else f"removed-{kind}", 1)
        self.add("added-delete-files" if added else "removed-delete-files", 1)
        what = "position-deletes" if content == 1 else "equality-deletes"
        self.add(f"added-{what}" if added else f"removed-{what}", e.record_count)


def partition_key(e: IcebergManifestEntry) -> tuple[int, tuple[tuple[int, Any], ...]]:
    """A file's (spec id, partition values), as one form for every writer."""
    return e.spec_id, tuple(sorted((k, norm_value(v)) for k, v in e.partition.items()))


def norm_value(v: Any) -> Any:
    """A partition value as one form, whether Avro decoded it (dates, datetimes, decimals)
    or a writer computed it (ints, strings)."""
    import datetime as dt

    if isinstance(v, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)
        return (v - epoch) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return (v - dt.date(1970, 1, 1)).days
    return str(v) if v is not None and not isinstance(v, (int, str, bytes)) else v


#: Java's order of the summary's keys (``UpdateMetrics.addTo``)
_ORDER = ("added-data-files", "deleted-data-files", "added-equality-delete-files",
          "removed-equality-delete-files", "added-position-delete-files",
          "removed-position-delete-files", "added-delete-files", "removed-delete-files",
          "added-dvs", "removed-dvs", "added-records", "deleted-records", "added-files-size",
          "removed-files-size", "added-position-deletes", "removed-position-deletes",
          "added-equality-deletes", "removed-equality-deletes")
_TOTALS = (("total-records", "added-records", "deleted-records"),
           ("total-files-size", "added-files-size", "removed-files-size"),
           ("total-data-files", "added-data-files", "deleted-data-files"),
           ("total-delete-files", "added-delete-files", "removed-delete-files"),
           ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
           ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"))


def _summary(change: Change, m: _Metrics, parent: dict[str, Any] | None,
             manifests: tuple[int, int, int]) -> dict[str, str]:
    # Java 1.12's order: its set properties (replace-partitions, manifest counts) first
    created, kept, replaced = manifests
    out = {"operation": change.operation, **change.extra_summary,
           "manifests-created": str(created), "manifests-kept": str(kept),
           "manifests-replaced": str(replaced)}
    out.update({k: str(m.counts[k]) for k in _ORDER if m.counts.get(k)})
    out["changed-partition-count"] = str(len(m.partitions))
    prev = (parent or {}).get("summary", {})
    for total, plus, minus in _TOTALS:
        out[total] = str(int(prev.get(total, 0)) + m.counts.get(plus, 0)
                         - m.counts.get(minus, 0))
    return out


def entry_file_size(e: IcebergManifestEntry) -> int:
    """What Java's ``ScanTaskUtil.contentSizeInBytes`` counts: a DV's blob, else the file."""
    if e.file_format == "puffin" and e.content_size is not None:
        return int(e.content_size)
    return e.file_size


def _inherited_row_ids(mf: IcebergManifestFile, entries: Sequence[IcebergManifestEntry]
                       ) -> list[int | None]:
    """Each data entry's first row id: written, else inherited from its manifest's (the
    spec's rule: the manifest's first row id plus the rows of the entries before it that
    inherit)."""
    out: list[int | None] = []
    next_id = mf.first_row_id
    for e in entries:
        written = e.raw.get(142)
        if written is not None or e.content != 0:
            out.append(written)
        elif next_id is None:
            out.append(None)
        else:
            out.append(next_id)
            next_id += e.record_count
    return out


def record_of(e: IcebergManifestEntry, first_row_id: int | None = None) -> avro.DataFileRecord:
    """A manifest entry's file as it is written again (EXISTING or DELETED)."""
    raw = e.raw
    return avro.DataFileRecord(
        e.file_path, e.record_count, e.file_size, dict(e.partition),
        column_sizes=raw.get(108) or {}, value_counts=raw.get(109) or {},
        null_counts=raw.get(110) or {}, nan_counts=raw.get(137) or {},
        lower_bounds=raw.get(125) or {}, upper_bounds=raw.get(128) or {},
        split_offsets=raw.get(132), content=e.content, file_format=e.file_format.upper(),
        referenced_data_file=e.referenced_data_file, content_offset=e.content_offset,
        content_size=e.content_size, first_row_id=first_row_id)


@dataclass
class _Context:
    table_path: str
    location: str
    version: int
    schema: IcebergSchema
    specs: dict[int, PartitionSpec]
    spec_fields: SpecFields
    snapshot_id: int
    seq: int
    written: list[str] = field(default_factory=list)

    def write(self, entries: Sequence[avro.EntryRecord], spec_id: int, content: int,
              suffix: str) -> tuple[str, int]:
        name = f"{uuid.uuid4()}-{suffix}.avro"
        path = os.path.join(self.table_path, "metadata", name)
        length = avro.write_manifest(
            path, version=self.version, schema=self.schema,
            schema_json=schema_json(self.schema), spec=self.specs[spec_id],
            spec_fields=self.spec_fields[spec_id], entries=entries, content=content)
        self.written.append(path)
        return f"{self.location}/metadata/{name}", length


def _rewrite(ctx: _Context, mf: IcebergManifestFile, entries: Sequence[IcebergManifestEntry],
             gone: set[int], m: _Metrics) -> avro.ManifestRecord:
    """A manifest of the parent written again without the entries at indexes ``gone``."""
    out = []
    row_ids = _inherited_row_ids(mf, entries) if ctx.version >= 3 else [None] * len(entries)
    counts = [0, 0, 0, 0]  # existing files, deleted files, existing rows, deleted rows
    live_seqs = []
    for i, e in enumerate(entries):
        if not e.live:  # deleted by an earlier snapshot: not carried on
            continue
        rec = record_of(e, row_ids[i])
        if i in gone:
            out.append(avro.EntryRecord(2, ctx.snapshot_id, e.sequence_number,
                                        e.file_sequence_number, rec))
            m.file(e, entry_file_size(e), False, mf.spec_id)
            counts[1] += 1
            counts[3] += e.record_count
        else:
            out.append(avro.EntryRecord(0, e.snapshot_id, e.sequence_number,
                                        e.file_sequence_number, rec))
            counts[0] += 1
            counts[2] += e.record_count
            live_seqs.append(e.sequence_number or 0)
    path, length = ctx.write(out, mf.spec_id, mf.content, "m1")
    fields = ctx.spec_fields[mf.spec_id]
    parts = _entry_summaries([x.file for x in out], fields)
    return avro.ManifestRecord(path, length, mf.spec_id, mf.content, ctx.seq,
                               min(live_seqs, default=ctx.seq), ctx.snapshot_id, 0,
                               counts[0], counts[1], 0, counts[2], counts[3], parts)


def _bound_value(v: Any) -> Any:
    """A partition value as :func:`partition_bound` takes it: Avro decodes dates and
    timestamps into objects, a writer computes days and microseconds."""
    import datetime as dt

    return norm_value(v) if isinstance(v, (dt.date, dt.datetime)) else v


def _entry_summaries(files: Sequence[avro.DataFileRecord],
                     fields: Sequence[tuple[int, str, IcebergType]]) -> list[dict[str, Any]]:
    out = []
    for fid, _, t in fields:
        values = [_bound_value(f.partition.get(fid)) for f in files]
        present = [v for v in values if v is not None]
        out.append({"contains_null": len(present) < len(values),
                    "contains_nan": False if getattr(t, "kind", "") in ("float", "double")
                    else None,
                    "lower_bound": partition_bound(min(present), t) if present else None,
                    "upper_bound": partition_bound(max(present), t) if present else None})
    return out


def live_entries(table_path: str, location: str, manifests: Sequence[IcebergManifestFile]
                 ) -> list[tuple[IcebergManifestFile, list[IcebergManifestEntry]]]:
    return [(mf, list(read_iceberg_manifest(local_path(table_path, location, mf.path),
                                            mf).entries)) for mf in manifests]


def _removals(change: Change, parent_manifests: list[tuple[IcebergManifestFile,
                                                          list[IcebergManifestEntry]]],
              last_seq: int) -> set[tuple[str, int | None]]:
    """Every file this commit removes: asked for, picked by ``remove_where``, the DVs of
    removed data files (Java's dangling DVs), and delete files older than all live data
    (Java's ``dropDeleteFilesOlderThan``: the floor is the oldest remaining data, at most
    the parent's last sequence number)."""
    removed = set(change.removed)
    data = [e for _, es in parent_manifests for e in es if e.live and e.content == 0]
    if change.remove_where is not None:
        removed |= {file_key(e) for e in data if change.remove_where(e)}
    gone = [e for e in data if file_key(e) in removed]
    gone_data = {e.file_path for e in gone}
    floor = min([e.sequence_number or 0 for e in data if file_key(e) not in removed],
                default=last_seq)
    floor = min(floor, last_seq)
    for _, es in parent_manifests:
        for e in es:
            if not e.live or e.content == 0:
                continue
            if (e.file_format == "puffin" and e.referenced_data_file in gone_data) or \
                    0 < (e.sequence_number or 0) < floor or \
                    (change.drop_deletes is not None and change.drop_deletes(e, gone)):
                removed.add(file_key(e))
    return removed


def _added_manifests(ctx: _Context, change: Change, m: _Metrics
                     ) -> list[avro.ManifestRecord]:
    out = []
    if change.added_data:
        files = change.added_data
        entries = [avro.EntryRecord(1, ctx.snapshot_id, None, None, avro.DataFileRecord(
            f.path, f.metrics.record_count, f.file_size, f.partition,
            column_sizes=f.metrics.column_sizes, value_counts=f.metrics.value_counts,
            null_counts=f.metrics.null_counts, lower_bounds=f.metrics.lower_bounds,
            upper_bounds=f.metrics.upper_bounds, split_offsets=f.metrics.split_offsets))
            for f in files]
        for e in entries:
            m.file(e.file, e.file.file_size, True, change.data_spec_id)
        path, length = ctx.write(entries, change.data_spec_id, 0, "m0")
        rows = sum(f.metrics.record_count for f in files)
        fields = ctx.spec_fields[change.data_spec_id]
        out.append(avro.ManifestRecord(path, length, change.data_spec_id, 0, ctx.seq, ctx.seq,
                                       ctx.snapshot_id, len(files), 0, 0, rows, 0, 0,
                                       _entry_summaries([e.file for e in entries], fields)))
    by_spec: dict[int, list[NewDeleteFile]] = {}
    for d in change.added_deletes:
        by_spec.setdefault(d.spec_id, []).append(d)
    for spec_id, group in sorted(by_spec.items()):
        entries = [avro.EntryRecord(1, ctx.snapshot_id, None, None, d.record) for d in group]
        for d in group:
            m.file(d.record, d.size, True, spec_id)
        path, length = ctx.write(entries, spec_id, 1, "m0")
        rows = sum(d.record.record_count for d in group)
        out.append(avro.ManifestRecord(
            path, length, spec_id, 1, ctx.seq, ctx.seq, ctx.snapshot_id, len(group), 0, 0,
            rows, 0, 0, _entry_summaries([d.record for d in group],
                                         ctx.spec_fields[spec_id])))
    return out


def commit_change(where: str | CommitTarget, table: str, schema: IcebergSchema,
                  specs: dict[int, PartitionSpec], spec_fields: SpecFields,
                  change: Change) -> tuple[int, list[str]]:
    """Commit ``change`` as one snapshot of the main branch to ``where`` (a table path, or a
    commit target); (its id, the manifest and manifest list files written by the attempt
    that won — the caller's own data and delete files are its to remove if this raises)."""
    target = target_of(where, table)
    table_path = target.table_path
    snapshot_id = new_snapshot_id()
    written: list[str] = []

    def apply(d: dict[str, Any]) -> dict[str, Any]:
        version = int(d.get("format-version", 1))
        location = str(d["location"]).rstrip("/")
        cur = d.get("current-snapshot-id")
        parent = next((s for s in d.get("snapshots", []) if s["snapshot-id"] == cur), None)
        seq = int(d.get("last-sequence-number", 0)) + 1 if version >= 2 else 0
        ctx = _Context(table_path, location, version, schema, specs, spec_fields,
                       snapshot_id, seq)
        mfs = [] if parent is None else read_iceberg_manifest_list(
            local_path(table_path, location, parent["manifest-list"]))
        entries = live_entries(table_path, location, mfs)
        if change.validate is not None:
            change.validate([(mf, e) for mf, es in entries for e in es if e.live])
        removed = _removals(change, entries, int(d.get("last-sequence-number", 0)))
        m = _Metrics()
        new = _added_manifests(ctx, change, m)
        data_new = [x for x in new if x.content == 0]
        delete_new = [x for x in new if x.content != 0]
        kept: list[avro.ManifestRecord] = []
        rewritten: list[avro.ManifestRecord] = []
        replaced = 0
        for mf, es in entries:
            gone = {i for i, e in enumerate(es) if e.live and file_key(e) in removed}
            if gone:
                replaced += 1
                rewritten.append(_rewrite(ctx, mf, es, gone, m))
            elif any(e.live for e in es):
                kept.append(kept_record(mf))
        listed = [*data_new, *[x for x in (*rewritten, *kept) if x.content == 0],
                  *delete_new, *[x for x in (*rewritten, *kept) if x.content != 0]]
        written[:] = ctx.written
        return _snapshot(d, ctx, parent, listed, _summary(
            change, m, parent, (len(new) + len(rewritten), len(kept), replaced)))

    commit(target, table, apply)
    return snapshot_id, written


def _assign_row_ids(listed: list[avro.ManifestRecord], next_row: int) -> int:
    """v3: each data manifest without a first row id gets the next ones, in list order (as
    Java's manifest list writer assigns them: its existing and added rows); how many."""
    start = next_row
    for x in listed:
        if x.content == 0 and x.first_row_id is None:
            x.first_row_id = next_row
            next_row += x.existing_rows + x.added_rows
    return next_row - start


def _snapshot(d: dict[str, Any], ctx: _Context, parent: dict[str, Any] | None,
              listed: list[avro.ManifestRecord], summary: dict[str, str]) -> dict[str, Any]:
    first_row_id = int(d.get("next-row-id", 0)) if ctx.version >= 3 else None
    assigned = 0 if first_row_id is None else _assign_row_ids(listed, first_row_id)
    list_name = f"snap-{ctx.snapshot_id}-1-{uuid.uuid4()}.avro"
    path = os.path.join(ctx.table_path, "metadata", list_name)
    avro.write_manifest_list(path, version=ctx.version, snapshot_id=ctx.snapshot_id,
                             parent_id=None if parent is None else parent["snapshot-id"],
                             sequence_number=ctx.seq, manifests=listed,
                             first_row_id=first_row_id)
    ctx.written.append(path)
    snap: dict[str, Any] = {}
    if ctx.version >= 2:
        snap["sequence-number"] = ctx.seq
    snap["snapshot-id"] = ctx.snapshot_id
    if parent is not None:
        snap["parent-snapshot-id"] = parent["snapshot-id"]
    snap["timestamp-ms"] = now_ms()
    snap["summary"] = summary
    snap["manifest-list"] = f"{ctx.location}/metadata/{list_name}"
    snap["schema-id"] = ctx.schema.schema_id
    if ctx.version >= 3:
        assert first_row_id is not None
        snap["first-row-id"] = first_row_id
        snap["added-rows"] = assigned
        d["next-row-id"] = first_row_id + assigned
    add_snapshot(d, snap)
    return d


def spec_fields_of(specs: dict[int, PartitionSpec], schemas: Sequence[IcebergSchema],
                   result_type: Callable[[str, IcebergType], IcebergType]) -> SpecFields:
    """Every spec's fields with their value types, the source column found in the newest
    schema that has it (a spec of a dropped column still describes old manifests)."""
    out: SpecFields = {}
    ordered = sorted(schemas, key=lambda s: -s.schema_id)
    for sid, spec in specs.items():
        fields = []
        for pf in spec.fields:
            src = next((f for s in ordered if (f := s.find(pf.source_ids[0])) is not None),
                       None)
            if src is None:
                raise ValueError(f"partition field {pf.name} has no source column")
            fields.append((pf.field_id, pf.name, result_type(pf.transform, src.type)))
        out[sid] = fields
    return out


def commit_to(t: Any, change: Change) -> int:
    """Commit ``change`` to table ``t`` (a :class:`~schemalab.iceberg.write.WritableIcebergTable`
    as last refreshed: its current schema and specs); the new snapshot's id."""
    from schemalab.iceberg.write.partitioning import result_type

    m = t.metadata
    specs = {s.spec_id: s for s in m.specs}
    fields = spec_fields_of(specs, m.schemas, result_type)
    snapshot_id, _ = commit_change(t.commit_target, t.name, t.schema, specs, fields, change)
    return snapshot_id
