"""A Paimon snapshot's files planned into the engine's read plan: each live data file with its
path, decoded partition, key range, format and deletion vector, and the primary-key rules
(merge options, the deletion-vector mode, first-row's compacted files only)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from schemalab import fileio
from schemalab.engine.plan import DataFile, FileFormat, PositionDeletes, ReadPlan, plan_read
from schemalab.errors import SchemaLabError, UnsupportedFeatureError
from schemalab.explain.casts import FileRange
from schemalab.paimon.blob import check_blob_options, is_blob_file
from schemalab.paimon.data_evolution import plan_row_tracking_read
from schemalab.paimon.features import (
    check_readable_features,
    data_evolution_enabled,
)
from schemalab.paimon.index import deletion_files, index_files
from schemalab.paimon.listing import BucketDirs, partition_values
from schemalab.paimon.manifest import ManifestEntry, value_stats_fields
from schemalab.paimon.primary_key import check_readable, file_key_range, key_range_ordered
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import cast_mode
from schemalab.types.model import AtomicType, DataType, TypeRoot
from schemalab.types.visitor import contains


def data_files(path: str, table: str, snapshot: Snapshot | None,
               entries: Sequence[ManifestEntry],
               schema_at: Callable[[int], TableSchema]) -> list[DataFile]:
    """The live data files of ``snapshot`` (its manifest ``entries``) with their paths,
    decoded partitions and deletion vectors (from the snapshot's index manifest)."""
    dvs = deletion_files(path, index_files(path, snapshot)) if snapshot else {}
    out = []
    dirs = BucketDirs(path)
    for e in entries:
        if is_blob_file(e.file.file_name):  # a BLOB column's values: schemalab.paimon.blob
            continue
        check_not_vector_store(e.file.file_name, e.file.write_cols, table)
        s = schema_at(e.file.schema_id)
        file_path = dirs.data_file_path(e, s)
        fileio.check_data_file(file_path, e.file.file_size, table=table)
        dv = dvs.get((e.partition, e.bucket, e.file.file_name))
        deletes = () if dv is None else (PositionDeletes(
            "deletion vector", dv.index_file, dv.cardinality, load=dv.positions),)
        out.append(DataFile(
            path=file_path, schema_id=s.id, row_count=e.file.row_count,
            partition=partition_values(e, s), bucket=e.bucket,
            file_size=e.file.file_size, level=e.file.level,
            min_sequence_number=e.file.min_sequence_number,
            max_sequence_number=e.file.max_sequence_number,
            delete_row_count=e.file.delete_row_count,
            key_range=file_key_range(e.file.min_key, e.file.max_key, s)
            if s.primary_keys and key_range_ordered(s) else None,
            format=file_format(e.file.file_name, s), deletes=deletes,
            first_row_id=e.file.first_row_id, write_cols=e.file.write_cols,
            non_null=non_null_fields(e, s)))
    return out


def non_null_fields(e: ManifestEntry, s: TableSchema) -> frozenset[int] | None:
    """The ids of the fields of ``e``'s file (schema ``s``) whose value statistics count no
    NULL: ``_VALUE_STATS_COLS`` names the fields the statistics cover (absent: every field
    of the file's schema), ``_NULL_COUNTS`` their NULLs (an unknown count is no answer).
    None where the counts do not match the fields."""
    fields = value_stats_fields(e.file, s)
    counts = e.file.value_stats.null_counts
    if fields is None or counts is None or len(counts) != len(fields):
        return None
    return frozenset(f.id for f, n in zip(fields, counts, strict=True) if n == 0)


def check_not_vector_store(file_name: str, write_cols: Sequence[str] | None, table: str
                           ) -> None:
    """Refuse a VECTOR column kept in a vector-store file (``vector.file.format``, e.g.
    ``data-….vector.lance``: Java's ``VectorType.isVectorStoreFile``), which schemalab does
    not read; VECTORs inside Parquet, ORC and Avro data files are read as ARRAYs."""
    if ".vector." not in file_name:
        return
    raise UnsupportedFeatureError(
        f"Read of {table} refused: data file {file_name} is a vector-store file holding "
        f"the VECTOR column(s) {', '.join(write_cols or ())} apart from the rows (option "
        "'vector.file.format'); schemalab reads VECTORs from Parquet, ORC and Avro data "
        "files only.", table=table, feature="vector-store files", option="vector.file.format")


def _is_variant(t: DataType) -> bool:
    return isinstance(t, AtomicType) and t.root is TypeRoot.VARIANT


def check_no_variant_in_orc(table: str, target: TableSchema, files: Sequence[DataFile],
                            schema_at: Callable[[int], TableSchema]) -> None:
    """Refuse a VARIANT read from an ORC file. Java Paimon 2.0 neither writes one (its ORC
    ``FieldWriterFactory`` throws "Unsupported type: VARIANT") nor reads one (``OrcTypeUtil``
    has no VARIANT); pypaimon 2.1 writes a ``struct<value, metadata>`` it cannot read back.
    With no engine's read to follow, schemalab returns none silently."""
    wanted = {f.id for f in target.fields}
    for f in files:
        if f.format != "orc":
            continue
        for field in schema_at(f.schema_id).fields:
            if field.id in wanted and contains(field.type, _is_variant):
                raise UnsupportedFeatureError(
                    f"Read of {table} refused: data file {f.path.rsplit('/', 1)[-1]} holds "
                    f"the VARIANT column {field.name} in ORC ('file.format' = 'orc'), which "
                    "Java Paimon 2.0 can neither write nor read and pypaimon 2.1 writes but "
                    "cannot read back; schemalab reads VARIANT from Parquet files only.",
                    table=table, column=field.name, feature="VARIANT in ORC files",
                    option="file.format")


def plan_paimon_read(table: str, target: TableSchema, snapshot: Snapshot | None,
                     files: Sequence[DataFile],
                     schema_at: Callable[[int], TableSchema]) -> ReadPlan:
    """The read plan of ``files`` (the live files of ``snapshot``) in ``target``: a
    primary-key table's plan carries its merge options, a data-evolution table's how its
    files merge by row id."""
    check_readable_features(target, table)
    check_blob_options(target, table)
    check_no_variant_in_orc(table, target, files, schema_at)
    if data_evolution_enabled(target) or any(f.write_cols is not None for f in files):
        return plan_row_tracking_read(table, target, snapshot, files, schema_at)
    try:
        mode = cast_mode(target.effective_options())
    except ValueError as e:
        raise SchemaLabError(f"Table {table}: {e}", table=table, rule="cast-mode") from None
    merge = None
    files = list(files)
    options = (target if snapshot is None else schema_at(snapshot.schema_id)
               ).effective_options()
    dv_mode = False
    if target.primary_keys:
        merge = check_readable(target, table)
        # Paimon's deletion-vector mode: compaction marks replaced rows in deletion
        # vectors, so a batch read takes the files of level > 0 with their vectors and
        # merges nothing; level-0 files are not visible until compacted (Java's
        # KeyValueFileStoreScan level filter, MergeTreeSplitGenerator raw splits).
        dv_mode = options.get("deletion-vectors.enabled", "false").lower() == "true"
        if merge.skips_level0 and not dv_mode:
            # first-row: Java's batch scan takes compacted files only
            files = [f for f in files if f.level > 0]
    skipped = [f for f in files if dv_mode and f.level == 0]
    return plan_read(table, target, [f for f in files if not dv_mode or f.level > 0],
                     lambda f: schema_at(f.schema_id), mode,
                     snapshot_id=None if snapshot is None else snapshot.id, merge=merge,
                     deletion_vectors=dv_mode, skipped=skipped)


def file_format(file_name: str, schema: TableSchema) -> FileFormat:
    """A data file's format: its name's extension, else the table's ``file.format`` (which
    schema files of version <= 2 imply to be ORC)."""
    ext = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    fmt = ext if ext in ("parquet", "orc", "avro") else \
        schema.effective_options().get("file.format", "parquet").lower()
    if fmt not in ("parquet", "orc", "avro"):
        raise SchemaLabError(f"data file {file_name} is in format {fmt!r}; schemalab reads "
                             "Parquet, ORC and Avro data files", rule="file-format")
    return fmt  # type: ignore[return-value]


class ManifestStats:
    """Each live data file's (min, max) per field id, from its manifest entry's value stats,
    decoded on first use (only files with a cast column are decoded): the
    :class:`~schemalab.explain.casts.FileStats` of a Paimon read."""

    def __init__(self, entries: Iterable[ManifestEntry],
                 schema_at: Callable[[int], TableSchema]) -> None:
        self._entries = {e.file.file_name: e for e in entries}
        self._schema_at = schema_at
        self._decoded: dict[str, dict[int, tuple[Any, Any]]] = {}

    def range(self, file_name: str, field_id: int) -> FileRange:
        if file_name not in self._decoded:
            e = self._entries.get(file_name)
            self._decoded[file_name] = {} if e is None else self._decode(e)
        return self._decoded[file_name].get(field_id)

    def _decode(self, e: ManifestEntry) -> dict[int, tuple[Any, Any]]:
        schema = self._schema_at(e.file.schema_id)
        cols = e.file.value_stats_cols
        fields = list(schema.fields) if cols is None else [
            f for n in cols if (f := schema.field(n)) is not None]
        try:
            mins, maxs = e.file.value_stats.decode([f.type for f in fields])
        except ValueError:  # stats another writer left out or cut: no warning from them
            return {}
        return {f.id: (mins[i], maxs[i]) for i, f in enumerate(fields)
                if i < len(mins) and i < len(maxs)}
