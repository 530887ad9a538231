"""Paimon manifests (Avro ``ManifestEntry``) and manifest lists (Avro ``ManifestFileMeta``).

A snapshot names two manifest lists (base and delta); each list names manifests; each
manifest holds one entry per data file added (ADD) or removed (DELETE)::

    snapshot-3 ─┬─ manifest-list-…-0 (base)  ─┬─ manifest-…-0 ─ ADD data-….parquet
                └─ manifest-list-…-1 (delta) ─┴─ manifest-…-1 ─ DELETE data-….parquet

Partitions, keys and column statistics inside the entries are serialized BinaryRows (see
:mod:`schemalab.binaryrow`); this module keeps them as bytes and decodes on request, because
a stats row is in the schema of the *file* it describes, not of the table today.

Writer schemas. pypaimon 2.1.0 and Java Paimon write the same fields with the same types,
unions and defaults, but name the records differently (pypaimon: ``ManifestEntry``,
``DataFileMeta``, ``record_KEY_STATS``; Java's AvroSchemaConverter:
``org.apache.paimon.avro.generated.record``, ``…record__FILE``, ``…record__FILE__KEY_STATS``),
and pypaimon's manifest list has two fields Java's lacks (``_TOTAL_BUCKETS``,
``_EXTRA_FILES``). Avro readers match fields by name, so both read each other's files.
:func:`write_manifest` / :func:`write_manifest_list` write pypaimon's schema by default
(``flavor="pypaimon"``, byte-for-byte the schema in paimon-dumps/avro_events.txt) or Java's
(``flavor="java"``). Readers accept any variant: fields are looked up by name, and fields
older writers lacked take their defaults.

    >>> e = ManifestEntry(FileKind.ADD, EMPTY_ROW, 0, -1, DataFileMeta("data-1.parquet", 10, 1))
    >>> e.identifier.file_name, e.file.level
    ('data-1.parquet', 0)
"""

from __future__ import annotations

import datetime as dt
import enum
import io
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import fastavro

from schemalab import fileio
from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.paimon.binaryrow import (
    EMPTY_ROW,
    BinaryRowError,
    decode_row,
    encode_row,
)
from schemalab.types.model import DataType

#: ``_VERSION`` of every manifest and manifest-list record (Java: FORMAT_IDENTIFIER = 2;
#: 1 was Paimon <= 0.x and is refused by Java with "please recreate the table").
FORMAT_IDENTIFIER = 2

MANIFEST_PREFIX = "manifest-"
MANIFEST_LIST_PREFIX = "manifest-list-"
INDEX_MANIFEST_PREFIX = "index-manifest-"

Flavor = Literal["pypaimon", "java"]
DEFAULT_CODEC = "zstandard"  # Java: manifest.compression = zstd -> Avro codec "zstandard"


class FileKind(enum.IntEnum):
    """``_KIND`` of a manifest entry."""

    ADD = 0
    DELETE = 1


class FileSource(enum.IntEnum):
    """``_FILE_SOURCE``: whether a data file came from a write or from compaction."""

    APPEND = 0
    COMPACT = 1


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimpleStats:
    """Min/max BinaryRows and per-column null counts (``_KEY_STATS``, ``_VALUE_STATS``,
    ``_PARTITION_STATS``). ``null_counts`` None means "not recorded"; Java's empty stats
    have an empty tuple.

    >>> from schemalab.types import INT
    >>> s = SimpleStats.of([1], [9], [0], [INT()])
    >>> s.decode([INT()])
    ([1], [9])
    """

    min_values: bytes = EMPTY_ROW
    max_values: bytes = EMPTY_ROW
    null_counts: tuple[int | None, ...] | None = ()

    def __post_init__(self) -> None:
        if self.null_counts is not None:
            object.__setattr__(self, "null_counts", tuple(self.null_counts))

    @staticmethod
    def of(mins: Sequence[Any], maxs: Sequence[Any], null_counts: Sequence[int | None] | None,
           types: Sequence[DataType]) -> SimpleStats:
        """Stats from Python values of ``types``."""
        return SimpleStats(encode_row(mins, types), encode_row(maxs, types),
                           None if null_counts is None else tuple(null_counts))

    def decode(self, types: Sequence[DataType], *, path: str = "<stats>"
               ) -> tuple[list[Any], list[Any]]:
        """(min values, max values) decoded with ``types``."""
        return (decode_row(self.min_values, types, path=path),
                decode_row(self.max_values, types, path=path))


EMPTY_STATS = SimpleStats()


@dataclass(frozen=True)
class DataFileMeta:
    """One data file, as a manifest entry's ``_FILE`` record describes it.

    ``creation_time`` is the ``timestamp-millis`` long exactly as stored. Java and pypaimon
    both fill it from the writer's *local* wall clock (``LocalDateTime.now()``), so it is
    not a UTC instant; :attr:`creation_datetime` shows it as that naive wall-clock time.
    ``value_stats_cols`` None means the value stats cover every field of the file's schema,
    ``()`` means no value stats. ``extra`` holds fields of a newer writer schema that this
    module does not know; they are shown, not written back.
    """

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes = EMPTY_ROW
    max_key: bytes = EMPTY_ROW
    key_stats: SimpleStats = EMPTY_STATS
    value_stats: SimpleStats = EMPTY_STATS
    min_sequence_number: int = 0
    max_sequence_number: int = 0
    schema_id: int = 0
    level: int = 0
    extra_files: tuple[str, ...] = ()
    creation_time: int | None = None
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_files", tuple(self.extra_files))
        for name in ("value_stats_cols", "write_cols", "write_cols_sequences"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))

    @property
    def creation_datetime(self) -> dt.datetime | None:
        """``creation_time`` as the naive wall-clock time the writer's machine showed."""
        if self.creation_time is None:
            return None
        return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=self.creation_time)


class FileIdentifier(NamedTuple):
    """What makes two entries name the same data file (Java ``FileEntry.Identifier``)."""

    partition: bytes
    bucket: int
    level: int
    file_name: str
    extra_files: tuple[str, ...]
    embedded_index: bytes | None
    external_path: str | None


@dataclass(frozen=True)
class ManifestEntry:
    """One ADD or DELETE of a data file in a partition and bucket. ``partition`` is a
    serialized BinaryRow (:data:`~schemalab.binaryrow.EMPTY_ROW` when unpartitioned);
    ``total_buckets`` is -1 for tables without fixed buckets."""

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FileKind(self.kind))

    @property
    def identifier(self) -> FileIdentifier:
        f = self.file
        return FileIdentifier(self.partition, self.bucket, f.level, f.file_name,
                              f.extra_files, f.embedded_index, f.external_path)

    def partition_values(self, types: Sequence[DataType]) -> list[Any]:
        return decode_row(self.partition, types)


@dataclass(frozen=True)
class ManifestFileMeta:
    """One manifest as its manifest list describes it. ``total_buckets`` and
    ``extra_files`` exist only in pypaimon's manifest lists."""

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats = EMPTY_STATS
    schema_id: int = 0
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None
    total_buckets: int | None = None
    extra_files: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.extra_files is not None:
            object.__setattr__(self, "extra_files", tuple(self.extra_files))


# --------------------------------------------------------------------------------------------
# File names (FileStorePathFactory: one UUID per writer, a counter per kind of file)
# --------------------------------------------------------------------------------------------


class FileNamer:
    """Names new metadata files as one Paimon writer does: ``<prefix><uuid>-<n>`` with a
    UUID fixed per namer and ``n`` counting up per prefix from 0.

    >>> namer = FileNamer("0b8f3f8e-3b7a-4b8e-9a0e-2c1d5e6f7a8b")
    >>> namer.new_manifest_list(), namer.new_manifest_list(), namer.new_manifest()
    ('manifest-list-0b8f3f8e-3b7a-4b8e-9a0e-2c1d5e6f7a8b-0', \
'manifest-list-0b8f3f8e-3b7a-4b8e-9a0e-2c1d5e6f7a8b-1', \
'manifest-0b8f3f8e-3b7a-4b8e-9a0e-2c1d5e6f7a8b-0')
    """

    def __init__(self, uuid: str | None = None) -> None:
        self.uuid = uuid or str(uuid_module.uuid4())
        self._counters: dict[str, int] = {}

    def new_file_name(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        self._counters[prefix] = n + 1
        return f"{prefix}{self.uuid}-{n}"

    def new_manifest(self) -> str:
        return self.new_file_name(MANIFEST_PREFIX)

    def new_manifest_list(self) -> str:
        return self.new_file_name(MANIFEST_LIST_PREFIX)


def new_file_name(prefix: str) -> str:
    """A fresh ``<prefix><uuid>-0`` name, e.g. ``new_file_name(MANIFEST_PREFIX)``."""
    return FileNamer().new_file_name(prefix)


# --------------------------------------------------------------------------------------------
# Avro writer schemas
# --------------------------------------------------------------------------------------------

_JAVA_RECORD = "org.apache.paimon.avro.generated.record"


def _nullable(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    # Java's AvroSchemaConverter: nullable fields are ["null", T] with default null.
    return {"name": name, "type": _nullable(avro_type), "default": None}


def _stats_schema(name: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            _opt("_NULL_COUNTS", {"type": "array", "items": ["null", "long"]}),
        ],
    }


def _data_file_schema(flavor: Flavor) -> dict[str, Any]:
    java = flavor == "java"
    stats_name = (_JAVA_RECORD + "__FILE_" if java else "record") + "_{}_STATS"
    return {
        "type": "record",
        "name": _JAVA_RECORD + "__FILE" if java else "DataFileMeta",
        "fields": [
            {"name": "_FILE_NAME", "type": "string"},
            {"name": "_FILE_SIZE", "type": "long"},
            {"name": "_ROW_COUNT", "type": "long"},
            {"name": "_MIN_KEY", "type": "bytes"},
            {"name": "_MAX_KEY", "type": "bytes"},
            {"name": "_KEY_STATS", "type": _stats_schema(stats_name.format("KEY"))},
            {"name": "_VALUE_STATS", "type": _stats_schema(stats_name.format("VALUE"))},
            {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
            {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
            {"name": "_SCHEMA_ID", "type": "long"},
            {"name": "_LEVEL", "type": "int"},
            {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
            _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
            _opt("_DELETE_ROW_COUNT", "long"),
            _opt("_EMBEDDED_FILE_INDEX", "bytes"),
            _opt("_FILE_SOURCE", "int"),  # TINYINT in Paimon; Avro has no byte type
            _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
            _opt("_EXTERNAL_PATH", "string"),
            _opt("_FIRST_ROW_ID", "long"),
            _opt("_WRITE_COLS", {"type": "array", "items": "string"}),
            _opt("_WRITE_COLS_SEQUENCES", {"type": "array", "items": "long"}),
        ],
    }


def manifest_entry_schema(flavor: Flavor = "pypaimon") -> dict[str, Any]:
    """The Avro writer schema of manifest files."""
    return {
        "type": "record",
        "name": _JAVA_RECORD if flavor == "java" else "ManifestEntry",
        "fields": [
            {"name": "_VERSION", "type": "int"},
            {"name": "_KIND", "type": "int"},
            {"name": "_PARTITION", "type": "bytes"},
            {"name": "_BUCKET", "type": "int"},
            {"name": "_TOTAL_BUCKETS", "type": "int"},
            {"name": "_FILE", "type": _data_file_schema(flavor)},
        ],
    }


def manifest_file_meta_schema(flavor: Flavor = "pypaimon") -> dict[str, Any]:
    """The Avro writer schema of manifest-list files."""
    java = flavor == "java"
    fields: list[dict[str, Any]] = [
        {"name": "_VERSION", "type": "int"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_NUM_ADDED_FILES", "type": "long"},
        {"name": "_NUM_DELETED_FILES", "type": "long"},
        {"name": "_PARTITION_STATS", "type": _stats_schema(
            _JAVA_RECORD + "__PARTITION_STATS" if java else "record_PARTITION_STATS")},
        {"name": "_SCHEMA_ID", "type": "long"},
        _opt("_MIN_BUCKET", "int"),
        _opt("_MAX_BUCKET", "int"),
        _opt("_MIN_LEVEL", "int"),
        _opt("_MAX_LEVEL", "int"),
        _opt("_MIN_ROW_ID", "long"),
        _opt("_MAX_ROW_ID", "long"),
    ]
    if not java:
        fields += [_opt("_TOTAL_BUCKETS", "int"),
                   _opt("_EXTRA_FILES", {"type": "array", "items": "string"})]
    return {"type": "record", "name": _JAVA_RECORD if java else "ManifestFileMeta",
            "fields": fields}


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

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
