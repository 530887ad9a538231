"""A snapshot's tree as the explorer sees it: manifest lists → manifests → file entries,
whatever the format (Paimon's base/delta lists, Iceberg's one manifest list)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileNode:
    """A data file entry in a manifest: ADD or DELETE, with its stats under today's names."""

    path: str
    kind: str
    schema_id: int
    row_count: int
    partition: dict[str, Any] = field(default_factory=dict)
    bucket: int | None = None
    level: int | None = None
    file_size: int = 0
    #: today's column name → (min, max, null count), decoded from the file's own stats
    stats: dict[str, tuple[Any, Any, int | None]] = field(default_factory=dict)
    min_key: tuple[Any, ...] | None = None
    max_key: tuple[Any, ...] | None = None
    min_sequence_number: int | None = None
    max_sequence_number: int | None = None
    #: a delete file or deletion vector: the one data file it names, if it names one
    target: str | None = None
    #: a data file: how many of its rows a deletion vector deletes (Paimon), if any
    deleted_rows: int | None = None
    #: a data file: the index file holding its deletion vector (Paimon)
    deleted_by: str | None = None


@dataclass(frozen=True)
class ManifestNode:
    name: str
    added: int
    deleted: int
    schema_id: int | None
    files: tuple[FileNode, ...]


@dataclass(frozen=True)
class ManifestListNode:
    #: "base", "delta", "changelog", "index" (Paimon's index manifest: deletion-vector and
    #: hash index files) or "manifest-list" (Iceberg)
    kind: str
    name: str
    manifests: tuple[ManifestNode, ...]


@dataclass(frozen=True)
class SnapshotNode:
    id: int
    parent_id: int | None
    schema_id: int | None
    time_millis: int | None
    kind: str
    record_count: int | None
    lists: tuple[ManifestListNode, ...] = ()
    live_files: tuple[FileNode, ...] = ()
    summary: dict[str, Any] = field(default_factory=dict)
    #: what ``record_count`` counts (Iceberg's total-records and Paimon's totalRecordCount
    #: count rows in data files: deleted rows and merged-away versions included)
    record_count_text: str | None = None


#: how many loaded snapshot trees a TableHistory keeps
