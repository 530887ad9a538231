"""From a snapshot to its data files: manifest lists → manifests → the live entries.

A snapshot names two manifest lists: ``baseManifestList`` (every file live before this
commit) and ``deltaManifestList`` (what this commit added and deleted). Reading both and
replaying their ADD/DELETE entries in order gives the table's data files at that snapshot.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from schemalab import fileio, progress
from schemalab.errors import CorruptFileError
from schemalab.paimon.manifest import FileIdentifier, FileKind, ManifestEntry, ManifestFileMeta
from schemalab.paimon.manifest_codec import read_manifest, read_manifest_list
from schemalab.paimon.paths import (
    PartitionItem,
    PartitionNaming,
    bucket_dir,
    bucket_dir_at,
    legacy_partition_path,
)
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema import TableSchema


@dataclass(frozen=True)
class ManifestRead:
    """One manifest: its manifest-list record, its entries, and where it was read from."""

    meta: ManifestFileMeta
    entries: tuple[ManifestEntry, ...]
    path: str = ""


@dataclass(frozen=True)
class ManifestListRead:
    """One manifest list of a snapshot: ``kind`` is "base", "delta" or "changelog"."""

    kind: str
    file_name: str
    manifests: tuple[ManifestRead, ...]


@dataclass(frozen=True)
class ManifestTree:
    """Everything a snapshot points at, in file order, and the live files it adds up to."""

    snapshot: Snapshot
    lists: tuple[ManifestListRead, ...]
    live: tuple[ManifestEntry, ...]

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per manifest entry, for a table widget or a DataFrame."""
        live = {e.identifier for e in self.live}
        return [
            {"list": lst.kind, "manifest_list": lst.file_name, "manifest": m.meta.file_name,
             "kind": e.kind.name, "partition": e.partition.hex(), "bucket": e.bucket,
             "level": e.file.level, "file_name": e.file.file_name,
             "row_count": e.file.row_count, "schema_id": e.file.schema_id,
             "live": e.kind is FileKind.ADD and e.identifier in live}
            for lst in self.lists for m in lst.manifests for e in m.entries
        ]


class ManifestReader:
    """Reads a table's manifest lists and manifests, keeping the last ones read: successive
    snapshots share most of them, and manifest files never change once written."""

    CACHE = 512

    def __init__(self, table_path: str) -> None:
        self.manifest_dir = os.path.join(table_path, "manifest")
        self._lists: OrderedDict[str, list[ManifestFileMeta]] = OrderedDict()
        self._manifests: OrderedDict[str, tuple[ManifestEntry, ...]] = OrderedDict()

    def _cached(self, cache: OrderedDict[str, Any], name: str,
                read: Callable[[str], Any]) -> Any:
        value = cache.get(name)
        if value is None:
            value = cache[name] = read(os.path.join(self.manifest_dir, name))
            if len(cache) > self.CACHE:
                cache.popitem(last=False)
        else:
            cache.move_to_end(name)
        return value

    def metas(self, file_name: str) -> list[ManifestFileMeta]:
        """The manifests manifest list ``file_name`` names (not the manifests' entries)."""
        return list(self._cached(self._lists, file_name, read_manifest_list))

    def read_list(self, kind: str, file_name: str) -> ManifestListRead:
        metas = self._cached(self._lists, file_name, read_manifest_list)
        return ManifestListRead(kind, file_name, tuple(
            ManifestRead(m, self._cached(self._manifests, m.file_name,
                                         lambda p: tuple(read_manifest(p))),
                         os.path.join(self.manifest_dir, m.file_name))
            for m in progress.track(metas, f"reading {kind} manifests", unit="manifests")))


def replay(lists: Sequence[ManifestListRead]) -> list[ManifestEntry]:
    """Live ADD entries after applying every entry in order, as Java's
    ``FileEntry.mergeEntries``: a DELETE cancels the ADD with the same identifier. A DELETE
    with no earlier ADD is ignored, as Java's scan ignores it. Adding a file that is already
    live means the table is corrupt (Java: "Trying to add file ... which is already in the
    map")."""
    live: dict[FileIdentifier, ManifestEntry] = {}
    for lst in lists:
        for m in lst.manifests:
            for e in m.entries:
                key = e.identifier
                if e.kind is FileKind.ADD:
                    if key in live:
                        raise CorruptFileError(
                            m.path or m.meta.file_name,
                            f"adds {e.file.file_name} (bucket {e.bucket}, level {e.file.level}), "
                            "which is already live")
                    live[key] = e
                else:
                    live.pop(key, None)
    return list(live.values())


def manifest_tree(table_path: str, snapshot: Snapshot,
                  reader: ManifestReader | None = None) -> ManifestTree:
    """Read the base, delta and (if any) changelog manifest lists of ``snapshot`` with all
    their manifests. Only base + delta make up the live files."""
    reader = reader or ManifestReader(table_path)
    lists = [reader.read_list("base", snapshot.base_manifest_list),
             reader.read_list("delta", snapshot.delta_manifest_list)]
    live = replay(lists)
    if snapshot.changelog_manifest_list:
        lists.append(reader.read_list("changelog", snapshot.changelog_manifest_list))
    return ManifestTree(snapshot, tuple(lists), tuple(live))


def live_files(table_path: str, snapshot: Snapshot,
               reader: ManifestReader | None = None) -> list[ManifestEntry]:
    """The data files of the table at ``snapshot``: base + delta manifest lists replayed."""
    reader = reader or ManifestReader(table_path)
    return replay([reader.read_list("base", snapshot.base_manifest_list),
                   reader.read_list("delta", snapshot.delta_manifest_list)])


def partition_values(e: ManifestEntry, file_schema: TableSchema) -> tuple[Any, ...]:
    """The partition values of a file, decoded with the schema it was written with."""
    part_types = [file_schema.type_of(k) for k in file_schema.partition_keys]
    return tuple(e.partition_values(part_types)) if part_types else ()


def partition_items(e: ManifestEntry, file_schema: TableSchema) -> list[PartitionItem]:
    """(key, type, value) of each partition key of the file."""
    keys = file_schema.partition_keys
    return list(zip(keys, [file_schema.type_of(k) for k in keys],
                    partition_values(e, file_schema), strict=True))


class BucketDirs:
    """Where the files of one table's partitions and buckets live.

    A partition's directory is named as Java Paimon names it (``dt=19727`` for a DATE).
    Earlier schemalab versions named some values otherwise (``dt=2024-01-05``): a file they
    wrote is still found, under that name. The legacy name is looked for only where it
    differs, and by listing directories, each once per ``BucketDirs``: a table that has no
    legacy directories costs one listing of its root. Keep one for one read or history."""

    def __init__(self, table_path: str) -> None:
        self.table_path = table_path
        self._names: dict[str, frozenset[str]] = {}

    def _listing(self, directory: str) -> frozenset[str]:
        names = self._names.get(directory)
        if names is None:
            names = self._names[directory] = frozenset(fileio.list_names(directory))
        return names

    def _exists(self, path: str) -> bool:
        parent, name = os.path.split(path)
        if parent != self.table_path and not self._exists(parent):
            return False
        return name in self._listing(parent)

    def bucket_path(self, e: ManifestEntry, file_schema: TableSchema) -> str:
        """The directory of a manifest entry's bucket: ``<partition dirs>/bucket-<b>``."""
        items = partition_items(e, file_schema)
        naming = PartitionNaming.of(file_schema.options)
        java = bucket_dir(self.table_path, items, e.bucket, naming)
        if not items:
            return java
        legacy = bucket_dir_at(self.table_path, legacy_partition_path(items), e.bucket)
        if legacy == java or not self._exists(os.path.join(legacy, e.file.file_name)):
            return java
        return legacy

    def data_file_path(self, e: ManifestEntry, file_schema: TableSchema) -> str:
        """Where a manifest entry's data file lives: its external path if it has one, else
        in its bucket's directory under the table."""
        if e.file.external_path:
            return e.file.external_path.removeprefix("file:")
        return os.path.join(self.bucket_path(e, file_schema), e.file.file_name)


def bucket_path(table_path: str, e: ManifestEntry, file_schema: TableSchema,
                dirs: BucketDirs | None = None) -> str:
    """The directory of a manifest entry's bucket (see :class:`BucketDirs`; pass one when
    resolving many entries)."""
    return (dirs or BucketDirs(table_path)).bucket_path(e, file_schema)


def data_file_path(table_path: str, e: ManifestEntry, file_schema: TableSchema,
                   dirs: BucketDirs | None = None) -> str:
    """Where a manifest entry's data file lives (see :class:`BucketDirs`; pass one when
    resolving many entries)."""
    return (dirs or BucketDirs(table_path)).data_file_path(e, file_schema)
