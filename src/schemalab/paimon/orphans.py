"""Files in a table directory that no snapshot references: what a killed writer leaves.

A writer writes data files, then a manifest, then manifest lists, and only then the snapshot
that makes them visible. If it dies before the snapshot, the files are orphans: invisible to
every reader, but taking space. Everything a snapshot names (main's, a branch's, or one a
tag keeps) — its manifest lists, their manifests, every data file any of those manifests
mentions (ADD or DELETE), and extra files — is kept, and so are all schema, snapshot and tag
files.

Like Paimon's ``remove_orphan_files``, only files older than ``older_than_seconds`` are
candidates, so a writer still in flight keeps its files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from schemalab import fileio
from schemalab.errors import SchemaLabError
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.listing import BucketDirs
from schemalab.paimon.manifest import ManifestEntry
from schemalab.paimon.manifest_codec import read_manifest, read_manifest_list
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot, SnapshotManager

DEFAULT_OLDER_THAN_SECONDS = 3600


@dataclass(frozen=True)
class OrphanReport:
    table_path: str
    orphans: tuple[str, ...]
    kept: int
    deleted: bool

    def text(self) -> str:
        verb = "deleted" if self.deleted else "would delete (dry run; pass --delete)"
        lines = [f"{len(self.orphans)} orphan file(s) in {self.table_path}; {verb}; "
                 f"{self.kept} referenced file(s) kept"]
        lines += [f"  {os.path.relpath(p, self.table_path)}" for p in self.orphans]
        return "\n".join(lines)


def _metadata_paths(table_path: str) -> list[str]:
    """Where main's and every branch's snapshot/, schema/ and tag/ live. A branch or tag
    directory whose name schemalab refuses to follow cannot be read, so what it keeps is
    unknown: refused (rule ``orphans-branches``) rather than guessed."""
    branches = paimon_refs.list_branches(table_path)
    metas = [table_path, *(paimon_refs.branch_path(table_path, b) for b in branches.valid)]
    refused = list(branches.refused)
    for meta in metas:
        refused += paimon_refs.list_tags(meta).refused
    if refused:
        names = ", ".join(name for name, _ in refused)
        raise SchemaLabError(
            f"{table_path} has branch or tag directories named {names}, which schemalab does "
            "not follow: the files they keep are unknown, so orphans cannot be told apart. "
            "Use Paimon's remove_orphan_files.", rule="orphans-branches")
    return metas


def _kept_snapshots(meta: str) -> list[Snapshot]:
    """The snapshots the branch at ``meta`` keeps: its snapshot files and its tags'."""
    snapshots = SnapshotManager(meta)
    out = [snapshots.get(sid) for sid in snapshots.list_ids()]
    for tag in paimon_refs.list_tags(meta).valid:
        out.append(paimon_refs.read_tag(meta, tag).snapshot)
    return out


def referenced_files(table_path: str) -> set[str]:
    """Absolute paths of every file some snapshot of the table still needs: main's and every
    branch's snapshots and tags (branches share the table's manifests and data files; a
    file's bucket directory is found with the schema of the branch that lists it)."""
    manifest_dir = os.path.join(table_path, "manifest")
    bucket_dirs = BucketDirs(table_path)
    keep: set[str] = set()
    seen_manifests: set[tuple[str, str]] = set()
    for meta in _metadata_paths(table_path):
        schemas = SchemaManager(meta)
        for snap in _kept_snapshots(meta):
            for name in (snap.base_manifest_list, snap.delta_manifest_list,
                         snap.changelog_manifest_list, snap.index_manifest):
                if not name:
                    continue
                keep.add(os.path.join(manifest_dir, name))
                if name == snap.index_manifest:
                    continue
                for meta_file in read_manifest_list(os.path.join(manifest_dir, name)):
                    path = os.path.join(manifest_dir, meta_file.file_name)
                    keep.add(path)
                    if (meta, path) in seen_manifests:
                        continue
                    seen_manifests.add((meta, path))
                    keep |= _entry_files(read_manifest(path), bucket_dirs, schemas)
    return keep


def _entry_files(entries: Iterable[ManifestEntry], bucket_dirs: BucketDirs,
                 schemas: SchemaManager) -> set[str]:
    keep: set[str] = set()
    for e in entries:
        # the file's place under the table is kept even when it has an external path: its
        # extra files live there
        d = bucket_dirs.bucket_path(e, schemas.get(e.file.schema_id))
        keep.add(os.path.join(d, e.file.file_name))
        keep.update(os.path.join(d, x) for x in e.file.extra_files)
        if e.file.external_path:
            keep.add(bucket_dirs.data_file_path(e, schemas.get(e.file.schema_id)))
    return keep


def _is_data_dir(name: str) -> bool:
    """A top-level directory of a Paimon table that holds data files (partition, bucket)."""
    return name.startswith("bucket-") or "=" in name


def find_orphans(table_path: str, *, older_than_seconds: float = DEFAULT_OLDER_THAN_SECONDS
                 ) -> tuple[list[str], int]:
    """(orphan paths, number of referenced files seen). Staging directories of dead writers
    are reported as one path each.

    Only the places a writer of this table writes are searched: ``manifest/``, partition
    and bucket directories, and hidden temporary files in ``schema/`` and ``snapshot/``.
    Directories schemalab does not write (``index/``, ``statistics/``, ``tag/``,
    ``changelog/``, ...) are never touched, nor is ``branch/`` but for hidden temporary
    files in a branch's ``schema/`` and ``snapshot/``. What every branch's snapshots and
    tags reference is kept (branches share the table's data and manifest files)."""
    table_path = fileio.normalize(table_path)
    if not fileio.is_dir(os.path.join(table_path, "schema")):
        raise SchemaLabError(f"{table_path} is not a Paimon table (no schema/ directory)",
                             rule="table-must-exist")
    keep = referenced_files(table_path)
    now = time.time()
    orphans: list[str] = []
    kept = 0

    def old(p: str) -> bool:
        try:
            return now - fileio.mtime(p) >= older_than_seconds
        except FileNotFoundError:  # removed meanwhile (a writer's own cleanup)
            return False

    for top in sorted(fileio.list_names(table_path)):
        top_path = os.path.join(table_path, top)
        if top.startswith(".staging-") and fileio.is_dir(top_path):
            if old(top_path):
                orphans.append(top_path)
            continue
        if not fileio.is_dir(top_path):
            continue
        if top in ("schema", "snapshot"):
            orphans += _temp_files(top_path, old)
            continue
        if top == paimon_refs.BRANCH_DIR:
            for b in paimon_refs.list_branches(table_path).valid:
                meta = paimon_refs.branch_path(table_path, b)
                orphans += _temp_files(os.path.join(meta, "schema"), old)
                orphans += _temp_files(os.path.join(meta, "snapshot"), old)
            continue
        if top != "manifest" and not _is_data_dir(top):
            continue
        for d, dirs, files in fileio.walk(top_path):
            for sub in list(dirs):
                if sub.startswith(".staging-"):
                    p = os.path.join(d, sub)
                    if old(p):
                        orphans.append(p)
                    dirs.remove(sub)
            for f in files:
                p = os.path.join(d, f)
                if p in keep:
                    kept += 1
                elif old(p):
                    orphans.append(p)
    return sorted(orphans), kept


def _temp_files(directory: str, old: Callable[[str], bool]) -> list[str]:
    """Committed metadata is never an orphan; only our hidden temp files can be."""
    return [os.path.join(directory, f) for f in sorted(fileio.list_names(directory))
            if f.startswith(".") and f.endswith(".tmp") and old(os.path.join(directory, f))]


def clean_orphans(table_path: str, *, delete: bool = False,
                  older_than_seconds: float = DEFAULT_OLDER_THAN_SECONDS) -> OrphanReport:
    """List (and with ``delete``, remove) the table's orphan files.

    Before deleting, the referenced files are worked out a second time: a writer that
    committed between the listing and the deletion keeps its files."""
    orphans, kept = find_orphans(table_path, older_than_seconds=older_than_seconds)
    if delete and orphans:
        keep = referenced_files(fileio.normalize(table_path))
        orphans = [p for p in orphans if p not in keep]
        for p in orphans:
            if fileio.is_dir(p):
                fileio.delete_dir(p)
            else:
                fileio.delete(p)
    return OrphanReport(fileio.normalize(table_path), tuple(orphans), kept, delete)
