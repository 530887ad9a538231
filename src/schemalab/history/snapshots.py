"""A snapshot's tree as the explorer sees it: manifest lists → manifests → file entries,
whatever the format (Paimon's base/delta lists, Iceberg's one manifest list)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemalab import forms


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

    def __repr__(self) -> str:
        return (f"FileNode({self.path!r}, {self.kind}, schema {self.schema_id}, "
                f"{self.row_count} row{'' if self.row_count == 1 else 's'})")


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

    @property
    def label(self) -> str:
        """How the snapshot is named on screen: Paimon's small ids as they are; Iceberg's
        random 19-digit ids by the snapshot's sequence number (``#3``)."""
        seq = self.summary.get("sequence-number")
        if isinstance(seq, int) and abs(self.id) >= 10**6:
            return f"#{seq}"
        return str(self.id)

    def __repr__(self) -> str:
        rows = "?" if self.record_count is None else self.record_count
        files = f", {len(self.live_files)} live files" if self.lists else ""
        return (f"SnapshotNode({self.id}, {self.kind}, schema {self.schema_id}, {rows} rows"
                f"{files})")

    def _repr_html_(self) -> str:
        return forms.html("snapshot", self)


@dataclass(frozen=True)
class SnapshotChange:
    """What one snapshot changed: the data-file entries it added and removed (not the files
    it only carried over), and how many data files are live after it."""

    snapshot_id: int
    added: tuple[FileNode, ...]
    removed: tuple[FileNode, ...]
    live_files: int

    def __repr__(self) -> str:
        return (f"SnapshotChange({self.snapshot_id}: +{len(self.added)} −{len(self.removed)} "
                f"files, {self.live_files} live)")

