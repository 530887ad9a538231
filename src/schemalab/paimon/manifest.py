"""Paimon manifests (Avro ``ManifestEntry``) and manifest lists (Avro ``ManifestFileMeta``).

A snapshot names two manifest lists (base and delta); each list names manifests; each
manifest holds one entry per data file added (ADD) or removed (DELETE)::

    snapshot-3 ─┬─ manifest-list-…-0 (base)  ─┬─ manifest-…-0 ─ ADD data-….parquet
                └─ manifest-list-…-1 (delta) ─┴─ manifest-…-1 ─ DELETE data-….parquet

Partitions, keys and column statistics inside the entries are serialized BinaryRows (see
:mod:`schemalab.paimon.binaryrow`); this module keeps them as bytes and decodes on request, because
a stats row is in the schema of the *file* it describes, not of the table today.

Reading and writing the files: :mod:`schemalab.paimon.manifest_codec`; their Avro writer
schemas: :mod:`schemalab.paimon.manifest_avro`.

    >>> e = ManifestEntry(FileKind.ADD, EMPTY_ROW, 0, -1, DataFileMeta("data-1.parquet", 10, 1))
    >>> e.identifier.file_name, e.file.level
    ('data-1.parquet', 0)
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid as uuid_module
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from schemalab.paimon.binaryrow import (
    EMPTY_ROW,
    decode_row,
    encode_row,
)
from schemalab.types.model import DataType

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.schema.table_schema import TableSchema
    from schemalab.types.model import DataField

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


def value_stats_fields(file: DataFileMeta, schema: TableSchema) -> list[DataField] | None:
    """The fields ``file``'s value statistics cover, in their order: those its
    ``_VALUE_STATS_COLS`` names (absent: every field of its schema ``schema``). None where a
    name is not a field of ``schema``: the statistics' values and NULL counts are by
    position, and without that field's type none of them can be placed."""
    cols = file.value_stats_cols
    if cols is None:
        return list(schema.fields)
    fields = [schema.field(n) for n in cols]
    known = [f for f in fields if f is not None]
    return known if len(known) == len(fields) else None


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
