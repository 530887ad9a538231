"""Reading and writing Paimon's manifests and manifest lists (Avro), and the manifest-list
record of a manifest schemalab wrote. The values are in :mod:`schemalab.paimon.manifest`,
the writer schemas in :mod:`schemalab.paimon.manifest_avro`."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import fastavro

from schemalab import fileio
from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.paimon.binaryrow import BinaryRowError, decode_row
from schemalab.paimon.manifest import (
    DEFAULT_CODEC,
    FORMAT_IDENTIFIER,
    DataFileMeta,
    FileKind,
    Flavor,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)
from schemalab.paimon.manifest_avro import manifest_entry_schema, manifest_file_meta_schema
from schemalab.types.model import DataType

_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MISSING = object()


class _Fields:
    """Typed access to one Avro record, naming the file and record in every error."""

    def __init__(self, record: Mapping[str, Any], path: str, where: str) -> None:
        self.record = record
        self.path = path
        self.where = where

    def fail(self, what: str) -> CorruptFileError:
        return CorruptFileError(self.path, f"{self.where}: {what}")

    def get(self, name: str, kinds: type | tuple[type, ...], *, optional: bool = False,
            default: Any = None) -> Any:
        value = self.record.get(name, _MISSING)
        if value is _MISSING:
            if optional:
                return default
            raise self.fail(f"missing field {name}")
        if value is None and optional:
            return None
        if not isinstance(value, kinds) or (isinstance(value, bool) and kinds is int):
            raise self.fail(f"{name} is {type(value).__name__}, not {_kind_names(kinds)}")
        return value

    def integer(self, name: str, *, optional: bool = False) -> int | None:
        return self.get(name, int, optional=optional)  # type: ignore[no-any-return]

    def str_list(self, name: str, *, optional: bool = False) -> tuple[str, ...] | None:
        items = self.get(name, list, optional=optional)
        if items is None:
            return None
        if not all(isinstance(i, str) for i in items):
            raise self.fail(f"{name} must be a list of strings")
        return tuple(items)

    def sub(self, name: str) -> _Fields:
        return _Fields(self.get(name, dict), self.path, f"{self.where}.{name}")

    def unknown(self, known: Iterable[str]) -> dict[str, Any]:
        known = set(known)
        return {k: v for k, v in self.record.items() if k not in known}


def _kind_names(kinds: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))


def _check_version(rec: _Fields) -> None:
    version = rec.integer("_VERSION")
    if version != FORMAT_IDENTIFIER:
        raise UnsupportedVersionError(
            rec.path, f"{rec.where}: manifest format _VERSION {version} is not supported "
            f"(only {FORMAT_IDENTIFIER}; version 1 files are from Paimon 0.x)")


def _stats_from(rec: _Fields) -> SimpleStats:
    counts = rec.get("_NULL_COUNTS", list, optional=True)
    if counts is not None and not all(c is None or isinstance(c, int) for c in counts):
        raise rec.fail("_NULL_COUNTS must be a list of longs")
    return SimpleStats(rec.get("_MIN_VALUES", bytes), rec.get("_MAX_VALUES", bytes),
                       None if counts is None else tuple(counts))


def _millis(rec: _Fields, name: str) -> int | None:
    value = rec.get(name, (dt.datetime, int), optional=True)
    if isinstance(value, dt.datetime):
        # fastavro turns timestamp-millis into an aware UTC datetime; undo it exactly.
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH_UTC) // dt.timedelta(milliseconds=1)
    return value


_FILE_FIELDS = ("_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS",
                "_VALUE_STATS", "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID",
                "_LEVEL", "_EXTRA_FILES", "_CREATION_TIME", "_DELETE_ROW_COUNT",
                "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_VALUE_STATS_COLS", "_EXTERNAL_PATH",
                "_FIRST_ROW_ID", "_WRITE_COLS", "_WRITE_COLS_SEQUENCES")


def _data_file_from(rec: _Fields) -> DataFileMeta:
    sequences = rec.get("_WRITE_COLS_SEQUENCES", list, optional=True)
    if sequences is not None and not all(isinstance(s, int) for s in sequences):
        raise rec.fail("_WRITE_COLS_SEQUENCES must be a list of longs")
    return DataFileMeta(
        file_name=rec.get("_FILE_NAME", str),
        file_size=rec.get("_FILE_SIZE", int),
        row_count=rec.get("_ROW_COUNT", int),
        min_key=rec.get("_MIN_KEY", bytes),
        max_key=rec.get("_MAX_KEY", bytes),
        key_stats=_stats_from(rec.sub("_KEY_STATS")),
        value_stats=_stats_from(rec.sub("_VALUE_STATS")),
        min_sequence_number=rec.get("_MIN_SEQUENCE_NUMBER", int),
        max_sequence_number=rec.get("_MAX_SEQUENCE_NUMBER", int),
        schema_id=rec.get("_SCHEMA_ID", int),
        level=rec.get("_LEVEL", int),
        extra_files=rec.str_list("_EXTRA_FILES") or (),
        creation_time=_millis(rec, "_CREATION_TIME"),
        delete_row_count=rec.integer("_DELETE_ROW_COUNT", optional=True),
        embedded_index=rec.get("_EMBEDDED_FILE_INDEX", bytes, optional=True),
        file_source=rec.integer("_FILE_SOURCE", optional=True),
        value_stats_cols=rec.str_list("_VALUE_STATS_COLS", optional=True),
        external_path=rec.get("_EXTERNAL_PATH", str, optional=True),
        first_row_id=rec.integer("_FIRST_ROW_ID", optional=True),
        write_cols=rec.str_list("_WRITE_COLS", optional=True),
        write_cols_sequences=None if sequences is None else tuple(sequences),
        extra=rec.unknown(_FILE_FIELDS),
    )


def read_manifest(path: str) -> list[ManifestEntry]:
    """The entries of a manifest file, in file order."""
    entries = []
    for i, record in enumerate(fileio.read_avro(path).records):
        rec = _Fields(record, path, f"entry {i}")
        _check_version(rec)
        kind = rec.get("_KIND", int)
        if kind not in (FileKind.ADD, FileKind.DELETE):
            raise rec.fail(f"_KIND {kind} is neither 0 (ADD) nor 1 (DELETE)")
        entries.append(ManifestEntry(
            kind=FileKind(kind),
            partition=rec.get("_PARTITION", bytes),
            bucket=rec.get("_BUCKET", int),
            total_buckets=rec.get("_TOTAL_BUCKETS", int),
            file=_data_file_from(rec.sub("_FILE")),
        ))
    return entries


_META_FIELDS = ("_VERSION", "_FILE_NAME", "_FILE_SIZE", "_NUM_ADDED_FILES", "_NUM_DELETED_FILES",
                "_PARTITION_STATS", "_SCHEMA_ID", "_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL",
                "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID", "_TOTAL_BUCKETS", "_EXTRA_FILES")


def read_manifest_list(path: str) -> list[ManifestFileMeta]:
    """The manifests a manifest-list file names, in file order."""
    metas = []
    for i, record in enumerate(fileio.read_avro(path).records):
        rec = _Fields(record, path, f"manifest {i}")
        _check_version(rec)
        metas.append(ManifestFileMeta(
            file_name=rec.get("_FILE_NAME", str),
            file_size=rec.get("_FILE_SIZE", int),
            num_added_files=rec.get("_NUM_ADDED_FILES", int),
            num_deleted_files=rec.get("_NUM_DELETED_FILES", int),
            partition_stats=_stats_from(rec.sub("_PARTITION_STATS")),
            schema_id=rec.get("_SCHEMA_ID", int),
            min_bucket=rec.integer("_MIN_BUCKET", optional=True),
            max_bucket=rec.integer("_MAX_BUCKET", optional=True),
            min_level=rec.integer("_MIN_LEVEL", optional=True),
            max_level=rec.integer("_MAX_LEVEL", optional=True),
            min_row_id=rec.integer("_MIN_ROW_ID", optional=True),
            max_row_id=rec.integer("_MAX_ROW_ID", optional=True),
            total_buckets=rec.integer("_TOTAL_BUCKETS", optional=True),
            extra_files=rec.str_list("_EXTRA_FILES", optional=True),
            extra=rec.unknown(_META_FIELDS),
        ))
    return metas


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _stats_record(s: SimpleStats) -> dict[str, Any]:
    return {"_MIN_VALUES": s.min_values, "_MAX_VALUES": s.max_values,
            "_NULL_COUNTS": None if s.null_counts is None else list(s.null_counts)}


def _opt_list(values: tuple[Any, ...] | None) -> list[Any] | None:
    return None if values is None else list(values)


def _entry_record(e: ManifestEntry) -> dict[str, Any]:
    f = e.file
    return {
        "_VERSION": FORMAT_IDENTIFIER,
        "_KIND": int(e.kind),
        "_PARTITION": e.partition,
        "_BUCKET": e.bucket,
        "_TOTAL_BUCKETS": e.total_buckets,
        "_FILE": {
            "_FILE_NAME": f.file_name,
            "_FILE_SIZE": f.file_size,
            "_ROW_COUNT": f.row_count,
            "_MIN_KEY": f.min_key,
            "_MAX_KEY": f.max_key,
            "_KEY_STATS": _stats_record(f.key_stats),
            "_VALUE_STATS": _stats_record(f.value_stats),
            "_MIN_SEQUENCE_NUMBER": f.min_sequence_number,
            "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
            "_SCHEMA_ID": f.schema_id,
            "_LEVEL": f.level,
            "_EXTRA_FILES": list(f.extra_files),
            "_CREATION_TIME": f.creation_time,  # an int: fastavro writes it as the long
            "_DELETE_ROW_COUNT": f.delete_row_count,
            "_EMBEDDED_FILE_INDEX": f.embedded_index,
            "_FILE_SOURCE": None if f.file_source is None else int(f.file_source),
            "_VALUE_STATS_COLS": _opt_list(f.value_stats_cols),
            "_EXTERNAL_PATH": f.external_path,
            "_FIRST_ROW_ID": f.first_row_id,
            "_WRITE_COLS": _opt_list(f.write_cols),
            "_WRITE_COLS_SEQUENCES": _opt_list(f.write_cols_sequences),
        },
    }


def _meta_record(m: ManifestFileMeta) -> dict[str, Any]:
    return {
        "_VERSION": FORMAT_IDENTIFIER,
        "_FILE_NAME": m.file_name,
        "_FILE_SIZE": m.file_size,
        "_NUM_ADDED_FILES": m.num_added_files,
        "_NUM_DELETED_FILES": m.num_deleted_files,
        "_PARTITION_STATS": _stats_record(m.partition_stats),
        "_SCHEMA_ID": m.schema_id,
        "_MIN_BUCKET": m.min_bucket,
        "_MAX_BUCKET": m.max_bucket,
        "_MIN_LEVEL": m.min_level,
        "_MAX_LEVEL": m.max_level,
        "_MIN_ROW_ID": m.min_row_id,
        "_MAX_ROW_ID": m.max_row_id,
        "_TOTAL_BUCKETS": m.total_buckets,
        "_EXTRA_FILES": _opt_list(m.extra_files),
    }


def _codec_name(codec: str) -> str:
    name = {"zstd": "zstandard", "none": "null", "uncompressed": "null"}.get(codec, codec)
    # fastavro reads and writes the same codecs; its reader table is the public one.
    known = fastavro.read.BLOCK_READERS
    if name not in known:
        raise ValueError(f"unknown Avro codec {codec!r}; fastavro knows {sorted(known)}")
    return name


def _write_avro(path: str, schema: Any, records: list[dict[str, Any]], codec: str,
                sync_marker: bytes | None) -> int:
    if sync_marker is not None and len(sync_marker) != 16:
        raise ValueError("an Avro sync marker is 16 bytes")
    buf = io.BytesIO()
    try:
        # The unparsed dict, so the header's schema JSON keeps pypaimon's key order.
        fastavro.writer(buf, schema, records, codec=_codec_name(codec),
                        sync_marker=sync_marker or b"")  # b"": fastavro picks a random one
    except (ValueError, TypeError, OverflowError) as e:
        raise ValueError(f"cannot write {path}: {e}") from e
    data = buf.getvalue()
    # Metadata files are immutable: create-if-absent, never overwrite.
    if not fileio.write_new(path, data):
        raise FileExistsError(f"{path} already exists; manifests are never overwritten")
    return len(data)


def write_manifest(path: str, entries: Iterable[ManifestEntry], codec: str = DEFAULT_CODEC,
                   *, flavor: Flavor = "pypaimon", sync_marker: bytes | None = None) -> int:
    """Write a new manifest file atomically; returns its size in bytes (the ``_FILE_SIZE``
    its manifest list records). FileExistsError if ``path`` exists. ``sync_marker`` (16
    bytes; random by default) makes the output reproducible."""
    records = [_entry_record(e) for e in entries]
    return _write_avro(path, manifest_entry_schema(flavor), records, codec, sync_marker)


def write_manifest_list(path: str, metas: Iterable[ManifestFileMeta],
                        codec: str = DEFAULT_CODEC, *, flavor: Flavor = "pypaimon",
                        sync_marker: bytes | None = None) -> int:
    """Write a new manifest-list file atomically; returns its size in bytes (the snapshot's
    ``*ManifestListSize``). Java's flavor drops ``total_buckets`` and ``extra_files``."""
    records = [_meta_record(m) for m in metas]
    if flavor == "java":
        for r in records:
            del r["_TOTAL_BUCKETS"], r["_EXTRA_FILES"]
    return _write_avro(path, manifest_file_meta_schema(flavor), records, codec, sync_marker)


# --------------------------------------------------------------------------------------------
# Building a manifest list record for a manifest we wrote
# --------------------------------------------------------------------------------------------


def manifest_file_meta(file_name: str, file_size: int, entries: Sequence[ManifestEntry],
                       partition_types: Sequence[DataType]) -> ManifestFileMeta:
    """The manifest-list record of a manifest holding ``entries``, computed as Java's
    ``ManifestAvroWriter`` does: counts of ADD/DELETE, partition min/max/null counts,
    ``schema_id`` = the highest file schema id, bucket and level ranges, and the row-id range
    when every file has a first row id. ``total_buckets`` follows pypaimon: the entries'
    common bucket count when it is positive, else None (Java does not record it).

    >>> from schemalab.paimon.binaryrow import encode_row
    >>> from schemalab.types import STRING
    >>> es = [ManifestEntry(FileKind.ADD, encode_row([d], [STRING()]), 0, -1,
    ...                     DataFileMeta(f"data-{d}.parquet", 1, 1)) for d in ("b", "a")]
    >>> m = manifest_file_meta("manifest-x-0", 100, es, [STRING()])
    >>> m.num_added_files, m.partition_stats.decode([STRING()]), m.partition_stats.null_counts
    (2, (['a'], ['b']), (0,))
    """
    if not entries:
        raise ValueError("a manifest holds at least one entry")
    n = len(partition_types)
    mins: list[Any] = [None] * n
    maxs: list[Any] = [None] * n
    nulls = [0] * n
    for e in entries:
        try:
            values = decode_row(e.partition, partition_types)
        except BinaryRowError as err:
            raise ValueError(f"partition of {e.file.file_name}: {err.what}") from None
        for i, v in enumerate(values):
            if v is None:
                nulls[i] += 1
                continue
            if mins[i] is None or v < mins[i]:
                mins[i] = v
            if maxs[i] is None or v > maxs[i]:
                maxs[i] = v
    bucket_counts = {e.total_buckets for e in entries}
    total_buckets = bucket_counts.pop() if len(bucket_counts) == 1 else None
    row_ids = [(e.file.first_row_id, e.file.row_count) for e in entries]
    has_row_ids = all(first is not None for first, _ in row_ids)
    return ManifestFileMeta(
        file_name=file_name,
        file_size=file_size,
        num_added_files=sum(e.kind is FileKind.ADD for e in entries),
        num_deleted_files=sum(e.kind is FileKind.DELETE for e in entries),
        partition_stats=SimpleStats.of(mins, maxs, nulls, partition_types),
        schema_id=max(e.file.schema_id for e in entries),
        min_bucket=min(e.bucket for e in entries),
        max_bucket=max(e.bucket for e in entries),
        min_level=min(e.file.level for e in entries),
        max_level=max(e.file.level for e in entries),
        min_row_id=min(f for f, _ in row_ids) if has_row_ids else None,  # type: ignore[type-var]
        max_row_id=max(f + c - 1 for f, c in row_ids) if has_row_ids else None,  # type: ignore[operator]
        total_buckets=total_buckets if total_buckets is not None and total_buckets > 0
        else None,
    )
