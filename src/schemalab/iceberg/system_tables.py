"""Iceberg's metadata tables, as Iceberg's Spark integration names, types and fills them.

``t.snapshots``, ``t.history``, ``t.refs``, ``t.metadata_log_entries``, ``t.manifests``,
``t.files`` (and ``t.data_files``, ``t.delete_files``) and ``t.partitions`` of an Iceberg
table, computed here from the metadata schemalab parses and handed to Spark as a DataFrame
(``createDataFrame(rows, schema)``, so Spark Connect works too). Column names, order, types
and nullability are those of Iceberg's Java classes (``SnapshotsTable``, ``HistoryTable``,
``RefsTable``, ``MetadataLogEntriesTable``, ``ManifestsTable``, ``BaseFilesTable`` with
``MetricsUtil.readableMetricsSchema``, ``PartitionsTable``) as Iceberg's ``TypeToSparkType``
turns them into Spark types::

    t = sl.open_table("warehouse/db/orders")         # an Iceberg table
    t.system_table("snapshots").show()
    t.system_table("$files").select("file_path", "partition", "readable_metrics")
    t.system_table("partitions", snapshot_id=s)      # as Spark's ``VERSION AS OF s``

Rows come in the order of the metadata (Spark's own order is not specified).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as st

from schemalab.errors import SqlError
from schemalab.iceberg.listing import IcebergSource
from schemalab.iceberg.manifests import IcebergManifestEntry, IcebergManifestFile, decode_bound
from schemalab.iceberg.metadata import IcebergSnapshot, PartitionSpec
from schemalab.iceberg.spark_values import (
    human_string,
    spark_type,
    spark_value,
    transform_result,
)
from schemalab.iceberg.types import IcebergPrimitiveType, IcebergType

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


_LONG, _INT, _STR = st.LongType(), st.IntegerType(), st.StringType()
_TS, _BOOL, _BIN = st.TimestampType(), st.BooleanType(), st.BinaryType()


def _f(name: str, t: st.DataType, nullable: bool = True) -> st.StructField:
    return st.StructField(name, t, nullable)


@dataclass(frozen=True)
class SystemTableData:
    """One metadata table: its Spark schema and its rows (tuples, in schema order)."""

    name: str
    schema: st.StructType
    rows: list[tuple[Any, ...]]

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.schema.fields]


def system_table(table: IcebergSource, spark: SparkSession, name: str,
                 snapshot_id: int | None = None) -> DataFrame:
    """The metadata table ``name`` of ``table`` as a Spark DataFrame."""
    data = system_table_data(table, name, snapshot_id)
    return spark.createDataFrame(data.rows, data.schema)


def system_table_data(table: IcebergSource, name: str,
                      snapshot_id: int | None = None) -> SystemTableData:
    """The metadata table ``name`` (``"snapshots"``, also ``"$snapshots"``) of ``table``;
    ``snapshot_id`` picks the snapshot of the tables that have one (``manifests``, the
    ``files`` tables, ``partitions``), default the current one."""
    key = name.strip().lstrip("$").lower()
    if key not in _BUILDERS:
        raise SqlError(f"Table {table.name} has no system table {name!r}; Iceberg's are "
                       f"{', '.join(SYSTEM_TABLES)}", table=table.name,
                       rule="unknown-system-table")
    builder, per_snapshot = _BUILDERS[key]
    if snapshot_id is not None and not per_snapshot:
        raise SqlError(f"Table {table.name}: system table {key!r} lists the whole table's "
                       f"history and cannot be read as of a snapshot (only "
                       f"{', '.join(k for k, (_, p) in _BUILDERS.items() if p)} can)",
                       table=table.name, rule="system-table-time-travel")
    if per_snapshot:
        snap = table.snapshot(snapshot_id) if snapshot_id is not None else table.current_snapshot
        schema, rows = builder(table, snap)
    else:
        schema, rows = builder(table, None)
    return SystemTableData(key, schema, rows)


def _millis(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


Rows = tuple[st.StructType, list[tuple[Any, ...]]]

# ---- the whole table's history ------------------------------------------------------------

_SNAPSHOTS = st.StructType([
    _f("committed_at", _TS, False), _f("snapshot_id", _LONG, False), _f("parent_id", _LONG),
    _f("operation", _STR), _f("manifest_list", _STR),
    _f("summary", st.MapType(_STR, _STR, False))])


def _snapshots(table: IcebergSource, _: IcebergSnapshot | None) -> Rows:
    rows = []
    for s in table.metadata.snapshots:
        # Java keeps `operation` out of the summary map; a snapshot written without a
        # summary (v1) has neither
        op = s.summary.get("operation")
        summary = None if op is None else {k: v for k, v in s.summary.items()
                                           if k != "operation"}
        rows.append((_millis(s.timestamp_ms), s.snapshot_id, s.parent_id, op,
                     s.manifest_list, summary))
    return _SNAPSHOTS, rows


_HISTORY = st.StructType([
    _f("made_current_at", _TS, False), _f("snapshot_id", _LONG, False), _f("parent_id", _LONG),
    _f("is_current_ancestor", _BOOL, False)])


def _ancestors(table: IcebergSource) -> set[int]:
    out: set[int] = set()
    snap = table.current_snapshot
    while snap is not None and snap.snapshot_id not in out:
        out.add(snap.snapshot_id)
        snap = table.metadata.snapshot(snap.parent_id) if snap.parent_id is not None else None
    return out


def _history(table: IcebergSource, _: IcebergSnapshot | None) -> Rows:
    ancestors = _ancestors(table)
    rows = []
    for sid, ts in table.metadata.snapshot_log:
        snap = table.metadata.snapshot(sid)
        rows.append((_millis(ts), sid, snap.parent_id if snap else None, sid in ancestors))
    return _HISTORY, rows


_REFS = st.StructType([
    _f("name", _STR, False), _f("type", _STR, False), _f("snapshot_id", _LONG, False),
    _f("max_reference_age_in_ms", _LONG), _f("min_snapshots_to_keep", _INT),
    _f("max_snapshot_age_in_ms", _LONG)])


def _refs(table: IcebergSource, _: IcebergSnapshot | None) -> Rows:
    rows = [(name, str(r.get("type", "branch")).upper(), int(r["snapshot-id"]),
             r.get("max-ref-age-ms"), r.get("min-snapshots-to-keep"),
             r.get("max-snapshot-age-ms"))
            for name, r in table.metadata.refs.items()]
    return _REFS, rows


_METADATA_LOG = st.StructType([
    _f("timestamp", _TS, False), _f("file", _STR, False), _f("latest_snapshot_id", _LONG),
    _f("latest_schema_id", _INT), _f("latest_sequence_number", _LONG)])


def _metadata_log_entries(table: IcebergSource, _: IcebergSnapshot | None) -> Rows:
    """Every earlier metadata file of the log, then the current one (under the path it was
    opened from, as Java names the file it loaded), each with the snapshot that was current
    then: the last snapshot-log entry at or before its time (Java's
    ``SnapshotUtil.nullableSnapshotIdAsOfTime``; the first of equal times wins)."""
    m = table.metadata
    entries = [*m.metadata_log, (m.last_updated_ms, table.metadata_file)]
    rows = []
    for ts, file in entries:
        best: tuple[int, int] | None = None
        for sid, when in m.snapshot_log:
            if when <= ts and (best is None or when > best[1]):
                best = (sid, when)
        snap = m.snapshot(best[0]) if best else None
        rows.append((_millis(ts), file, best[0] if best else None,
                     snap.schema_id if snap else None,
                     snap.sequence_number if snap else None))
    return _METADATA_LOG, rows


# ---- one snapshot's manifests ---------------------------------------------------------------

_SUMMARY = st.StructType([
    _f("contains_null", _BOOL, False), _f("contains_nan", _BOOL), _f("lower_bound", _STR),
    _f("upper_bound", _STR)])
_MANIFESTS = st.StructType([
    _f("content", _INT, False), _f("path", _STR, False), _f("length", _LONG, False),
    _f("partition_spec_id", _INT, False), _f("added_snapshot_id", _LONG, False),
    *[_f(f"{what}_{kind}_files_count", _INT, False) for kind in ("data", "delete")
      for what in ("added", "existing", "deleted")],
    _f("partition_summaries", st.ArrayType(_SUMMARY, False), False)])


def _manifests(table: IcebergSource, snap: IcebergSnapshot | None) -> Rows:
    rows = []
    for mf in table.manifest_files(snap) if snap is not None else ():
        counts = _file_counts(table, mf)
        zeros = (0, 0, 0)
        rows.append((mf.content, mf.path, mf.length, mf.spec_id, mf.added_snapshot_id,
                     *(counts if mf.content == 0 else zeros),
                     *(counts if mf.content == 1 else zeros),
                     _partition_summaries(table, mf)))
    return _MANIFESTS, rows


def _file_counts(table: IcebergSource, mf: IcebergManifestFile) -> tuple[int, int, int]:
    """Added, existing, deleted files: from the manifest list, or (a v1 snapshot listing
    its manifests inline records none) counted in the manifest."""
    if None not in (mf.added_files, mf.existing_files, mf.deleted_files):
        return int(mf.added_files or 0), int(mf.existing_files or 0), int(mf.deleted_files or 0)
    statuses = [e.status for e in table.manifest(mf).entries]
    return statuses.count(1), statuses.count(0), statuses.count(2)


def _partition_summaries(table: IcebergSource, mf: IcebergManifestFile
                         ) -> list[tuple[Any, ...]] | None:
    """Each partition field's summary with its bounds as Java's human strings (``"null"``
    for a missing bound, as ``Transform.toHumanString`` says). A field whose source column
    was dropped has Java's ``unknown`` result type (PartitionSpec.resultType), whose bounds
    read as NULL."""
    spec = table.metadata.spec(mf.spec_id)
    if mf.partitions is None or spec is None:
        return None
    out = []
    for pf, s in zip(spec.fields, mf.partitions, strict=False):
        source = table.schema.find(pf.source_ids[0])
        result = transform_result(pf.transform, source.type if source else _UNKNOWN)
        bounds = [human_string(pf.transform, result, None if raw is None or result == _UNKNOWN
                               else decode_bound(raw, result))
                  for raw in (s.lower_bound, s.upper_bound)]
        out.append((s.contains_null, s.contains_nan, *bounds))
    return out


_UNKNOWN = IcebergPrimitiveType("unknown", "unknown")


# ---- the partition type all specs share -----------------------------------------------------

@dataclass(frozen=True)
class UnionPartitionField:
    field_id: int
    name: str
    type: IcebergType


def partition_type(table: IcebergSource) -> list[UnionPartitionField]:
    """Java's ``Partitioning.partitionType(table)``: every partition field of every spec
    whose source is in the current schema, by field id, named as the newest spec names it;
    a v1 ``void`` field takes the type of a spec where it was not void."""
    current = table.schema
    picked: dict[int, tuple[str, str, IcebergType]] = {}
    for spec in sorted(table.metadata.specs, key=lambda s: -s.spec_id):
        for pf in spec.fields:
            source = current.find(pf.source_ids[0])
            if source is None:
                continue
            result = transform_result(pf.transform, source.type)
            known = picked.get(pf.field_id)
            if known is None:
                picked[pf.field_id] = (pf.name, pf.transform, result)
            elif known[1] == "void" and pf.transform != "void":
                picked[pf.field_id] = (known[0], pf.transform, result)
    return [UnionPartitionField(fid, name, t) for fid, (name, _, t) in sorted(picked.items())]


def _partition_struct(table: IcebergSource, union: Sequence[UnionPartitionField]
                      ) -> st.StructType:
    return st.StructType([_f(u.name, spark_type(u.type, table=table.name, column=u.name))
                          for u in union])


def _coerce(e: IcebergManifestEntry, spec: PartitionSpec | None,
            union: Sequence[UnionPartitionField]) -> tuple[int, tuple[Any, ...]]:
    """A file's partition projected onto the union type (Java's
    ``PartitionUtil.coercePartition``): how many union fields its spec has, and the values
    (NULL for the fields its spec lacks)."""
    ids = {pf.field_id for pf in spec.fields} if spec else set(e.partition)
    values = tuple(spark_value(e.partition.get(u.field_id), u.type) if u.field_id in ids
                   else None for u in union)
    return sum(u.field_id in ids for u in union), values


def _live_entries(table: IcebergSource, snap: IcebergSnapshot | None,
                  content: int | None = None
                  ) -> Iterator[tuple[IcebergManifestFile, IcebergManifestEntry, int | None]]:
    """(manifest, live entry, first row id) of a snapshot, manifests of ``content`` only if
    given. First row ids are inherited as Java's ManifestReader assigns them: from the
    manifest's ``first_row_id`` on, in entry order, for data files that have none; all NULL
    in a manifest without one (written before a v3 upgrade)."""
    for mf in table.manifest_files(snap) if snap is not None else ():
        if content is not None and mf.content != content:
            continue
        next_id = mf.first_row_id
        for e in table.manifest(mf).entries:
            if not e.live:
                continue
            first = None
            if next_id is not None and mf.content == 0:
                first = e.raw.get(142)
                if first is None:
                    first, next_id = next_id, next_id + e.record_count
            yield mf, e, first


_PARTITION_COUNTS = [
    _f("record_count", _LONG, False), _f("file_count", _INT, False),
    _f("total_data_file_size_in_bytes", _LONG, False),
    _f("position_delete_record_count", _LONG, False),
    _f("position_delete_file_count", _INT, False),
    _f("equality_delete_record_count", _LONG, False),
    _f("equality_delete_file_count", _INT, False),
    _f("last_updated_at", _TS), _f("last_updated_snapshot_id", _LONG)]


def _partitions(table: IcebergSource, snap: IcebergSnapshot | None) -> Rows:
    """Live data and delete files grouped by their partition in the union type. As in Java,
    a partition's ``spec_id`` is that of the file added by the newest snapshot still in the
    metadata (0 if none is), and files of specs with a different number of the union's
    fields are different partitions even where the values are equal."""
    union = partition_type(table)
    groups: dict[tuple[int, tuple[Any, ...]], list[Any]] = {}
    for _, e, _ in _live_entries(table, snap):
        key = _coerce(e, table.metadata.spec(e.spec_id), union) if union else (0, ())
        g = groups.setdefault(key, [key[1], 0, 0, 0, 0, 0, 0, 0, 0, None, None])
        added_by = table.metadata.snapshot(e.snapshot_id) if e.snapshot_id is not None else None
        if added_by is not None:
            at = added_by.timestamp_ms
            if g[9] is None or at > g[9]:
                g[1], g[9], g[10] = e.spec_id, at, added_by.snapshot_id
        if e.content == 0:
            g[2] += e.record_count
            g[3] += 1
            g[4] += e.file_size
        elif e.content == 1:
            g[5] += e.record_count
            g[6] += 1
        else:
            g[7] += e.record_count
            g[8] += 1
    rows = [(*g[:9], None if g[9] is None else _millis(g[9]), g[10]) for g in groups.values()]
    if not union:
        return st.StructType(_PARTITION_COUNTS), [r[2:] for r in rows]
    schema = st.StructType([_f("partition", _partition_struct(table, union), False),
                            _f("spec_id", _INT, False), *_PARTITION_COUNTS])
    return schema, rows


# ---- files ----------------------------------------------------------------------------------

_METRICS = ("column_size", "value_count", "null_value_count", "nan_value_count")
_IMAP = {name: st.MapType(_INT, t, False) for name, t in (
    ("column_sizes", _LONG), ("value_counts", _LONG), ("null_value_counts", _LONG),
    ("nan_value_counts", _LONG), ("lower_bounds", _BIN), ("upper_bounds", _BIN))}


def _metric_columns(table: IcebergSource) -> list[tuple[str, int, IcebergType]]:
    """(full name, field id, type) of every primitive field of the current schema, nested
    ones too (``address.city``, ``tags.element``), sorted by name, as Java's
    ``MetricsUtil.readableMetricsSchema`` lists them."""
    out = [(".".join(path), fid, f.type) for fid, (path, f) in table.schema.index.items()
           if isinstance(f.type, IcebergPrimitiveType)]
    return sorted(out)


def _files_schema(table: IcebergSource, union: Sequence[UnionPartitionField],
                  metrics: Sequence[tuple[str, int, IcebergType]]) -> st.StructType:
    readable = st.StructType([
        _f(name, st.StructType([*[_f(m, _LONG) for m in _METRICS],
                                _f("lower_bound", spark_type(t, table=table.name, column=name)),
                                _f("upper_bound", spark_type(t, table=table.name, column=name))]))
        for name, _, t in metrics])
    partition = [_f("partition", _partition_struct(table, union), False)] if union else []
    return st.StructType([
        _f("content", _INT), _f("file_path", _STR, False), _f("file_format", _STR, False),
        _f("spec_id", _INT), *partition, _f("record_count", _LONG, False),
        _f("file_size_in_bytes", _LONG, False), *[_f(n, t) for n, t in _IMAP.items()],
        _f("key_metadata", _BIN), _f("split_offsets", st.ArrayType(_LONG, False)),
        _f("equality_ids", st.ArrayType(_INT, False)), _f("sort_order_id", _INT),
        _f("first_row_id", _LONG), _f("referenced_data_file", _STR),
        _f("content_offset", _LONG), _f("content_size_in_bytes", _LONG),
        _f("readable_metrics", readable)])


def _files_of(content: int | None) -> Callable[[IcebergSource, IcebergSnapshot | None], Rows]:
    def build(table: IcebergSource, snap: IcebergSnapshot | None) -> Rows:
        union = partition_type(table)
        metrics = _metric_columns(table)
        schema = _files_schema(table, union, metrics)
        rows = [_file_row(table, e, first, union, metrics)
                for _, e, first in _live_entries(table, snap, content)]
        return schema, rows
    return build


def _file_row(table: IcebergSource, e: IcebergManifestEntry, first_row_id: int | None,
              union: Sequence[UnionPartitionField],
              metrics: Sequence[tuple[str, int, IcebergType]]) -> tuple[Any, ...]:
    raw = e.raw
    maps = [raw.get(fid) for fid in (108, 109, 110, 137, 125, 128)]
    partition = [_coerce(e, table.metadata.spec(e.spec_id), union)[1]] if union else []
    offsets = raw.get(132)
    if not offsets or offsets[-1] >= e.file_size:
        offsets = None  # Java drops split offsets past the end of the file as corrupt
    eq_ids = raw.get(135)
    return (e.content, e.file_path, e.file_format.upper(), e.spec_id, *partition,
            e.record_count, e.file_size, *[None if m is None else dict(m) for m in maps],
            raw.get(131), offsets, None if eq_ids is None else list(eq_ids), raw.get(140),
            first_row_id, e.referenced_data_file, e.content_offset, e.content_size,
            tuple(_readable(maps, fid, t) for _, fid, t in metrics))


def _readable(maps: Sequence[dict[int, Any] | None], fid: int, t: IcebergType
              ) -> tuple[Any, ...]:
    counts = [None if m is None else m.get(fid) for m in maps[:4]]
    bounds = [None if m is None or m.get(fid) is None else spark_value(decode_bound(m[fid], t), t)
              for m in maps[4:]]
    return (*counts, *bounds)


_BUILDERS: dict[str, tuple[Callable[[IcebergSource, IcebergSnapshot | None], Rows], bool]] = {
    "snapshots": (_snapshots, False),
    "history": (_history, False),
    "refs": (_refs, False),
    "metadata_log_entries": (_metadata_log_entries, False),
    "manifests": (_manifests, True),
    "files": (_files_of(None), True),
    "data_files": (_files_of(0), True),
    "delete_files": (_files_of(1), True),
    "partitions": (_partitions, True),
}

#: the metadata tables this module builds, by Iceberg's names
SYSTEM_TABLES: tuple[str, ...] = tuple(_BUILDERS)
