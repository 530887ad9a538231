"""Paimon's system tables (``t$snapshots``, ``t$schemas``, …) as Java Paimon 2.0 returns
them: the same column names, types and values, computed from the metadata schemalab reads.

Java Paimon builds each from the table's files (``org.apache.paimon.table.system``); the
rules followed here, per table:

- ``$snapshots``: every snapshot file, oldest first; ``commit_time`` is the commit's
  milliseconds as the local wall-clock time (``ZoneId.systemDefault()``);
- ``$schemas``: every schema, with ``fields``, keys and options as flat JSON;
- ``$options``: the latest schema's options, in the order of Java's HashMap of them;
- ``$tags``: ``tag/tag-<name>`` files, by name; ``$branches``: ``branch/branch-<name>``
  directories, by name, created when their directory was last modified;
- ``$manifests``: the latest snapshot's data manifests (base list, then delta list), the
  partition bounds cast to STRING as a row (``{east, 7}``);
- ``$files``: the latest snapshot's live files; stats as Java prints its ``TreeMap``
  (``{a=1, b=x}``, sorted by name) after evolving them to today's fields;
- ``$partitions`` / ``$buckets``: the live files grouped, sorted by the partition text.

    rows = system_table(table, "snapshots")   # SystemTable(name, columns, rows)
    rows.to_spark(spark)                      # a Spark DataFrame of the same
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from schemalab import fileio
from schemalab.errors import CorruptFileError, SqlError
from schemalab.paimon.binaryrow import decode_row, row_arity
from schemalab.paimon.index import deletion_files, index_files
from schemalab.paimon.java_text import java_hash_map_order
from schemalab.paimon.listing import BucketDirs
from schemalab.paimon.manifest import ManifestEntry, ManifestFileMeta
from schemalab.paimon.manifest_codec import read_manifest_list
from schemalab.paimon.paths import (
    DEFAULT_PARTITION_NAME,
    java_cast_to_string,
    java_to_string,
)
from schemalab.paimon.refs import java_duration, local_date_time
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import DataField, DataType
from schemalab.types.parse import field_to_json, parse_type

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


class Table(Protocol):
    """What the system tables read of a Paimon table (the ``Table`` facade has it all)."""

    path: str
    name: str
    meta_path: str  # a branch's own directory (the table's for main)

    @property
    def schema(self) -> TableSchema: ...

    @property
    def schemas(self) -> list[TableSchema]: ...

    @property
    def snapshots(self) -> list[Snapshot]: ...

    @property
    def latest_snapshot(self) -> Snapshot | None: ...

    def schema_at(self, schema_id: int) -> TableSchema: ...

    def live_entries(self, snapshot: Snapshot | None) -> list[ManifestEntry]: ...

#: (column, Paimon type, nullable) of a system table
Column = tuple[str, str, bool]


@dataclass(frozen=True)
class SystemTable:
    """One system table's rows, with Java Paimon's column names and types."""

    table: str
    name: str
    columns: tuple[Column, ...]
    rows: list[tuple[Any, ...]]

    def to_spark(self, spark: SparkSession) -> DataFrame:
        """The rows as a Spark DataFrame (Paimon's Spark types: TIMESTAMP is TIMESTAMP_NTZ);
        built from Python rows, so it works over Spark Connect too."""
        from pyspark.sql import types as st

        from schemalab.types.spark import to_spark

        schema = st.StructType([st.StructField(n, to_spark(parse_type(t)), nullable)
                                for n, t, nullable in self.columns])
        return spark.createDataFrame(self.rows, schema)


_SNAPSHOTS: tuple[Column, ...] = (
    ("snapshot_id", "BIGINT", False), ("schema_id", "BIGINT", False),
    ("commit_user", "STRING", False), ("commit_identifier", "BIGINT", False),
    ("commit_kind", "STRING", False), ("commit_time", "TIMESTAMP(3)", False),
    ("base_manifest_list", "STRING", False), ("delta_manifest_list", "STRING", False),
    ("changelog_manifest_list", "STRING", True), ("total_record_count", "BIGINT", True),
    ("delta_record_count", "BIGINT", True), ("changelog_record_count", "BIGINT", True),
    ("watermark", "BIGINT", True), ("next_row_id", "BIGINT", True),
    ("operation", "STRING", True))
_SCHEMAS: tuple[Column, ...] = (
    ("schema_id", "BIGINT", False), ("fields", "STRING", False),
    ("partition_keys", "STRING", False), ("primary_keys", "STRING", False),
    ("options", "STRING", False), ("comment", "STRING", True),
    ("update_time", "TIMESTAMP(3)", False))
_OPTIONS: tuple[Column, ...] = (("key", "STRING", False), ("value", "STRING", False))
_TAGS: tuple[Column, ...] = (
    ("tag_name", "STRING", False), ("snapshot_id", "BIGINT", False),
    ("schema_id", "BIGINT", False), ("commit_time", "TIMESTAMP(3)", False),
    ("record_count", "BIGINT", True), ("create_time", "TIMESTAMP(3)", True),
    ("time_retained", "STRING", True))
_BRANCHES: tuple[Column, ...] = (
    ("branch_name", "STRING", False), ("create_time", "TIMESTAMP(3)", False))
_MANIFESTS: tuple[Column, ...] = (
    ("file_name", "STRING", False), ("file_size", "BIGINT", False),
    ("num_added_files", "BIGINT", False), ("num_deleted_files", "BIGINT", False),
    ("schema_id", "BIGINT", False), ("min_partition_stats", "STRING", True),
    ("max_partition_stats", "STRING", True), ("min_row_id", "BIGINT", True),
    ("max_row_id", "BIGINT", True))
_FILES: tuple[Column, ...] = (
    ("partition", "STRING", True), ("bucket", "INT", False), ("file_path", "STRING", False),
    ("file_format", "STRING", False), ("schema_id", "BIGINT", False), ("level", "INT", False),
    ("record_count", "BIGINT", False), ("file_size_in_bytes", "BIGINT", False),
    ("min_key", "STRING", True), ("max_key", "STRING", True),
    ("null_value_counts", "STRING", False), ("min_value_stats", "STRING", False),
    ("max_value_stats", "STRING", False), ("min_sequence_number", "BIGINT", True),
    ("max_sequence_number", "BIGINT", True), ("creation_time", "TIMESTAMP(3)", True),
    ("deleteRowCount", "BIGINT", True), ("file_source", "STRING", True),
    ("first_row_id", "BIGINT", True), ("write_cols", "ARRAY<STRING>", True))
_PARTITIONS: tuple[Column, ...] = (
    ("partition", "STRING", True), ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False), ("file_count", "BIGINT", False),
    ("last_update_time", "TIMESTAMP(3)", True), ("created_at", "TIMESTAMP(3)", True),
    ("created_by", "STRING", True), ("updated_by", "STRING", True),
    ("options", "STRING", True), ("total_buckets", "INT", False), ("done", "BOOLEAN", False),
    ("deleted_record_count", "BIGINT", True))
_BUCKETS: tuple[Column, ...] = (
    ("partition", "STRING", True), ("bucket", "INT", False), ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False), ("file_count", "BIGINT", False),
    ("last_update_time", "TIMESTAMP(3)", True))

_FILE_SOURCES = {0: "APPEND", 1: "COMPACT"}


def _flat_json(value: Any) -> str:
    """Jackson's compact form (``JsonSerdeUtil.toFlatJson``): no spaces, unicode kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _local_time(millis: int) -> dt.datetime:
    """Epoch milliseconds as the local wall-clock time, as Java's ``ZoneId.systemDefault()``."""
    return dt.datetime.fromtimestamp(millis / 1000).replace(
        microsecond=(millis % 1000) * 1000)


def _snapshots(t: Table) -> list[tuple[Any, ...]]:
    return [(s.id, s.schema_id, s.commit_user, s.commit_identifier, s.commit_kind,
             _local_time(s.time_millis), s.base_manifest_list, s.delta_manifest_list,
             s.changelog_manifest_list, s.total_record_count, s.delta_record_count,
             s.changelog_record_count, s.watermark, s.next_row_id, s.operation)
            for s in t.snapshots]


def _schemas(t: Table) -> list[tuple[Any, ...]]:
    return [(s.id, _flat_json([field_to_json(f) for f in s.fields]),
             _flat_json(list(s.partition_keys)), _flat_json(list(s.primary_keys)),
             _flat_json(_java_options(s)), s.comment, _local_time(s.time_millis))
            for s in t.schemas]


def _java_options(s: TableSchema) -> dict[str, str]:
    """A schema's options as Java Paimon holds them: read into a HashMap (with what an old
    file version implies), so in the HashMap's order."""
    options = s.effective_options()
    return {k: options[k] for k in java_hash_map_order(list(options))}


def _options(t: Table) -> list[tuple[Any, ...]]:
    return list(_java_options(t.schema).items())


_TAG_PREFIX = "tag-"
_BRANCH_PREFIX = "branch-"


def _tags(t: Table) -> list[tuple[Any, ...]]:
    tag_dir = os.path.join(t.meta_path, "tag")  # a branch object: its own tags
    rows = []
    for name in sorted(n for n in fileio.list_names(tag_dir) if n.startswith(_TAG_PREFIX)):
        path = os.path.join(tag_dir, name)
        raw = fileio.read_bytes(path)
        snap = Snapshot.from_json(raw, path=path)
        try:
            data = json.loads(raw)
            created = local_date_time(data.get("tagCreateTime"))
            retained = java_duration(data.get("tagTimeRetained"))
        except ValueError as e:
            raise CorruptFileError(path, str(e), table=t.name) from None
        rows.append((name[len(_TAG_PREFIX):], snap.id, snap.schema_id,
                     _local_time(snap.time_millis), snap.total_record_count, created, retained))
    return rows


def _branches(t: Table) -> list[tuple[Any, ...]]:
    branch_dir = os.path.join(t.path, "branch")
    rows = []
    for name in sorted(n for n in fileio.list_names(branch_dir) if n.startswith(_BRANCH_PREFIX)):
        path = os.path.join(branch_dir, name)
        if not fileio.is_dir(path):
            continue
        rows.append((name[len(_BRANCH_PREFIX):],
                     dt.datetime.fromtimestamp(int(fileio.mtime(path) * 1000) / 1000)))
    return rows


def _row_text(values: Sequence[Any], types: Sequence[DataType]) -> str:
    """A row cast to STRING (Java's ``RowToStringCastRule``): ``{v1, v2}``, NULL as null."""
    return "{" + ", ".join("null" if v is None else java_cast_to_string(v, ty)
                           for v, ty in zip(values, types, strict=True)) + "}"


def _partition_types(schema: TableSchema) -> list[DataType]:
    return [schema.type_of(k) for k in schema.partition_keys]


def _manifests(t: Table) -> list[tuple[Any, ...]]:
    snap = t.latest_snapshot
    if snap is None:
        return []
    metas: list[ManifestFileMeta] = []
    for name in (snap.base_manifest_list, snap.delta_manifest_list):
        metas.extend(read_manifest_list(os.path.join(t.path, "manifest", name)))
    types = _partition_types(t.schema)
    rows = []
    for m in metas:
        mins, maxs = m.partition_stats.decode(types) if types else ([], [])
        rows.append((m.file_name, m.file_size, m.num_added_files, m.num_deleted_files,
                     m.schema_id, _row_text(mins, types), _row_text(maxs, types),
                     m.min_row_id, m.max_row_id))
    return rows


def _partition_text(e: ManifestEntry, schema: TableSchema) -> str:
    """``k1=v1/k2=v2`` with each value cast to STRING, NULL as the default partition name
    (PartitionsTable's text; it also sorts by it)."""
    types = _partition_types(schema)
    values = e.partition_values(types) if types else []
    default = schema.effective_options().get("partition.default-name", DEFAULT_PARTITION_NAME)
    return "/".join(f"{k}={default if v is None else java_cast_to_string(v, ty)}"
                    for k, v, ty in zip(schema.partition_keys, values, types, strict=True))


def _java_map(items: Sequence[tuple[str, str]]) -> str:
    """Java's ``TreeMap.toString()``: ``{a=1, b=x}``, keys in their natural order."""
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(items)) + "}"


def file_columns_of(write_cols: Sequence[str], schema: TableSchema) -> TableSchema:
    """``schema`` projected to a file's written columns (Java's ``RowType.project`` of the
    ``_WRITE_COLS`` it has; row-tracking columns among them are not the schema's)."""
    keep = [x for n in write_cols if (x := schema.field(n)) is not None]
    return dataclasses.replace(schema, fields=tuple(keep))


def _file_stats(e: ManifestEntry, file_schema: TableSchema, fields: Sequence[DataField]
                ) -> tuple[str, str, str]:
    """(null counts, mins, maxs) of a file, evolved to today's ``fields`` by field id: a
    field the file lacks has every row NULL and no bounds; a field without stats, null."""
    f = e.file
    if f.write_cols is not None:  # a data-evolution file holds (and has stats of) these only
        file_schema = file_columns_of(f.write_cols, file_schema)
    cols = f.value_stats_cols
    stat_fields = list(file_schema.fields) if cols is None else [
        x for n in cols if (x := file_schema.field(n)) is not None]
    try:
        mins, maxs = f.value_stats.decode([x.type for x in stat_fields])
    except ValueError:
        mins, maxs = [], []
    counts = f.value_stats.null_counts or ()
    by_id = {x.id: i for i, x in enumerate(stat_fields)}
    file_ids = {x.id for x in file_schema.fields}
    nulls, lows, highs = [], [], []
    for field in fields:
        i = by_id.get(field.id)
        if field.id not in file_ids:
            n, lo, hi = str(f.row_count), "null", "null"
        elif i is None or i >= len(mins):
            n, lo, hi = "null", "null", "null"
        else:
            count = counts[i] if i < len(counts) else None
            n = "null" if count is None else str(count)
            lo = "null" if mins[i] is None else java_to_string(mins[i], field.type)
            hi = "null" if maxs[i] is None else java_to_string(maxs[i], field.type)
        nulls.append((field.name, n))
        lows.append((field.name, lo))
        highs.append((field.name, hi))
    return _java_map(nulls), _java_map(lows), _java_map(highs)


def _key_text(raw: bytes, schema: TableSchema) -> str | None:
    """``Arrays.toString`` of a file's min or max key (the trimmed primary key)."""
    keys = [k for k in schema.primary_keys if k not in schema.partition_keys] \
        or list(schema.primary_keys)
    if not keys or row_arity(raw) == 0:
        return None
    types = [schema.type_of(k) for k in keys]
    values = decode_row(raw, types)
    return "[" + ", ".join("null" if v is None else java_to_string(v, ty)
                           for v, ty in zip(values, types, strict=True)) + "]"


def _live(t: Table) -> list[ManifestEntry]:
    snap = t.latest_snapshot
    return [] if snap is None else t.live_entries(snap)


def _files(t: Table) -> list[tuple[Any, ...]]:
    schema = t.schema
    types = _partition_types(schema)
    dirs = BucketDirs(t.path)
    rows = []
    for e in _live(t):
        f = e.file
        file_schema = t.schema_at(f.schema_id)
        nulls, lows, highs = _file_stats(e, file_schema, schema.fields)
        ext = f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else ""
        rows.append((
            _row_text(e.partition_values(types), types), e.bucket,
            dirs.data_file_path(e, file_schema), ext, f.schema_id, f.level, f.row_count,
            f.file_size, _key_text(f.min_key, file_schema), _key_text(f.max_key, file_schema),
            nulls, lows, highs, f.min_sequence_number, f.max_sequence_number,
            f.creation_datetime, f.delete_row_count,
            None if f.file_source is None else _FILE_SOURCES.get(f.file_source),
            f.first_row_id, None if f.write_cols is None else list(f.write_cols)))
    return rows


@dataclass
class _Group:
    record_count: int = 0
    file_size: int = 0
    file_count: int = 0
    total_buckets: int = 0
    #: the newest file's creation time (the writer's wall clock)
    last_creation: dt.datetime | None = None

    def add(self, e: ManifestEntry) -> None:
        self.record_count += e.file.row_count
        self.file_size += e.file.file_size
        self.file_count += 1
        self.total_buckets = e.total_buckets
        c = e.file.creation_datetime
        if c is not None and (self.last_creation is None or c > self.last_creation):
            self.last_creation = c


def _deleted_rows(t: Table) -> dict[bytes, int]:
    """Rows each partition's deletion vectors remove (none without vectors)."""
    snap = t.latest_snapshot
    if snap is None:
        return {}
    out: dict[bytes, int] = {}
    for (partition, _bucket, _name), dv in deletion_files(
            t.path, index_files(t.path, snap)).items():
        n = dv.cardinality if dv.cardinality is not None else len(dv.positions())
        out[partition] = out.get(partition, 0) + n
    return out


def _partitions(t: Table) -> list[tuple[Any, ...]]:
    groups: dict[bytes, _Group] = {}
    texts: dict[bytes, str] = {}
    for e in _live(t):
        groups.setdefault(e.partition, _Group()).add(e)
        texts.setdefault(e.partition, _partition_text(e, t.schema_at(e.file.schema_id)))
    deleted = _deleted_rows(t)
    rows = [(texts[p], g.record_count, g.file_size, g.file_count, g.last_creation,
             None, None, None, None, g.total_buckets, False, deleted.get(p, 0))
            for p, g in groups.items()]
    return sorted(rows, key=lambda r: r[0])


def _buckets(t: Table) -> list[tuple[Any, ...]]:
    types = _partition_types(t.schema)
    groups: dict[tuple[bytes, int], _Group] = {}
    for e in _live(t):
        groups.setdefault((e.partition, e.bucket), _Group()).add(e)
    rows = []
    for (partition, bucket), g in groups.items():
        values = decode_row(partition, types) if types else []
        rows.append((_row_text(values, types), bucket, g.record_count, g.file_size,
                     g.file_count, g.last_creation))
    return sorted(rows, key=lambda r: (r[0], r[1]))


#: each system table: its columns and how its rows are made
SYSTEM_TABLES: dict[str, tuple[tuple[Column, ...], Callable[[Table], list[tuple[Any, ...]]]]] = {
    "snapshots": (_SNAPSHOTS, _snapshots), "schemas": (_SCHEMAS, _schemas),
    "options": (_OPTIONS, _options), "tags": (_TAGS, _tags),
    "branches": (_BRANCHES, _branches), "manifests": (_MANIFESTS, _manifests),
    "files": (_FILES, _files), "partitions": (_PARTITIONS, _partitions),
    "buckets": (_BUCKETS, _buckets),
}

_NAME = re.compile(r"^\$?([A-Za-z_]+)$")


def system_table(t: Table, name: str) -> SystemTable:
    """``t``'s system table ``name`` (``snapshots`` or ``$snapshots``)."""
    m = _NAME.match(name)
    key = m.group(1).lower() if m else None
    if key is None or key not in SYSTEM_TABLES:
        known = ", ".join(f"${k}" for k in (*SYSTEM_TABLES, "audit_log", "row_tracking"))
        raise SqlError(f"Table {t.name} has no system table {name!r}; schemalab reads Paimon's "
                       f"{known}", table=t.name, rule="unknown-system-table")
    columns, rows = SYSTEM_TABLES[key]
    return SystemTable(t.name, key, columns, rows(t))
