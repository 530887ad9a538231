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


@dataclass(frozen=True)
class ManifestNode:
    name: str
    added: int
    deleted: int
    schema_id: int | None
    files: tuple[FileNode, ...]


@dataclass(frozen=True)
class ManifestListNode:
    kind: str  # "base", "delta", "changelog" (Paimon) or "manifest-list" (Iceberg)
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


#: how many loaded snapshot trees a TableHistory keeps
