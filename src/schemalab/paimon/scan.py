"""From a snapshot to its data files: manifest lists → manifests → the live entries.

A snapshot names two manifest lists: ``baseManifestList`` (every file live before this
commit) and ``deltaManifestList`` (what this commit added and deleted). Reading both and
replaying their ADD/DELETE entries in order gives the table's data files at that snapshot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from schemalab.errors import CorruptFileError
from schemalab.paimon.manifest import (
    FileIdentifier,
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    read_manifest,
    read_manifest_list,
)
from schemalab.paimon.snapshot import Snapshot


@dataclass(frozen=True)
class ManifestNode:
    """One manifest: its manifest-list record, its entries, and where it was read from."""

    meta: ManifestFileMeta
    entries: tuple[ManifestEntry, ...]
    path: str = ""


@dataclass(frozen=True)
class ManifestListNode:
    """One manifest list of a snapshot: ``kind`` is "base", "delta" or "changelog"."""

    kind: str
    file_name: str
    manifests: tuple[ManifestNode, ...]


@dataclass(frozen=True)
class ManifestTree:
    """Everything a snapshot points at, in file order, and the live files it adds up to."""

    snapshot: Snapshot
    lists: tuple[ManifestListNode, ...]
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


def _read_list(table_path: str, kind: str, file_name: str) -> ManifestListNode:
    manifest_dir = os.path.join(table_path, "manifest")
    metas = read_manifest_list(os.path.join(manifest_dir, file_name))
    nodes = []
    for m in metas:
        path = os.path.join(manifest_dir, m.file_name)
        nodes.append(ManifestNode(m, tuple(read_manifest(path)), path))
    return ManifestListNode(kind, file_name, tuple(nodes))


def replay(lists: tuple[ManifestListNode, ...]) -> list[ManifestEntry]:
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


def manifest_tree(table_path: str, snapshot: Snapshot) -> ManifestTree:
    """Read the base, delta and (if any) changelog manifest lists of ``snapshot`` with all
    their manifests. Only base + delta make up the live files."""
    lists = [_read_list(table_path, "base", snapshot.base_manifest_list),
             _read_list(table_path, "delta", snapshot.delta_manifest_list)]
    live = replay(tuple(lists))
    if snapshot.changelog_manifest_list:
        lists.append(_read_list(table_path, "changelog", snapshot.changelog_manifest_list))
    return ManifestTree(snapshot, tuple(lists), tuple(live))


def live_files(table_path: str, snapshot: Snapshot) -> list[ManifestEntry]:
    """The data files of the table at ``snapshot``: base + delta manifest lists replayed."""
    lists = (_read_list(table_path, "base", snapshot.base_manifest_list),
             _read_list(table_path, "delta", snapshot.delta_manifest_list))
    return replay(lists)
