"""Which files a Paimon table's snapshots use, across every branch and tag: what expiring
snapshots, rolling back or deleting a tag may delete (a file no kept snapshot, tag or branch
uses), never a file something still reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from schemalab import fileio
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.listing import BucketDirs
from schemalab.paimon.manifest_codec import read_manifest, read_manifest_list
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.refs import MAIN


def files_of(table_path: str, snaps: Iterable[Snapshot], schemas: SchemaManager) -> set[str]:
    """Manifest lists, manifests and data files (with their extra files) ``snaps`` use.
    Index manifests and index files are left out: they are never deleted here."""
    manifest_dir = os.path.join(table_path, "manifest")
    dirs = BucketDirs(table_path)
    out: set[str] = set()
    seen: set[str] = set()
    for snap in snaps:
        for name in (snap.base_manifest_list, snap.delta_manifest_list,
                     snap.changelog_manifest_list):
            if not name:
                continue
            out.add(os.path.join(manifest_dir, name))
            for meta in read_manifest_list(os.path.join(manifest_dir, name)):
                path = os.path.join(manifest_dir, meta.file_name)
                out.add(path)
                if path in seen:
                    continue
                seen.add(path)
                for e in read_manifest(path):
                    schema = schemas.get(e.file.schema_id)
                    d = dirs.bucket_path(e, schema)
                    out.add(os.path.join(d, e.file.file_name))
                    out.update(os.path.join(d, x) for x in e.file.extra_files)
    return out


def kept_snapshots(table_path: str) -> list[tuple[Snapshot, SchemaManager]]:
    """Every snapshot something still reads: each branch's (main's included) snapshots and
    tags, with the schemas of the branch they belong to."""
    out: list[tuple[Snapshot, SchemaManager]] = []
    for branch in (MAIN, *paimon_refs.list_branches(table_path).valid):
        meta = paimon_refs.branch_path(table_path, branch)
        schemas = SchemaManager(meta)
        sm = SnapshotManager(meta)
        out += [(s, schemas) for s in sm.get_all(sm.list_ids())]
        for name in paimon_refs.list_tags(meta).valid:
            try:
                out.append((paimon_refs.read_tag(meta, name).snapshot, schemas))
            except FileNotFoundError:
                continue
    return out


def kept_files(table_path: str) -> set[str]:
    keep: set[str] = set()
    by_schemas: dict[int, tuple[SchemaManager, list[Snapshot]]] = {}
    for snap, schemas in kept_snapshots(table_path):
        by_schemas.setdefault(id(schemas), (schemas, []))[1].append(snap)
    for schemas, snaps in by_schemas.values():
        keep |= files_of(table_path, snaps, schemas)
    return keep


def delete_unused(table_path: str, candidates: set[str]) -> int:
    """Delete those of ``candidates`` nothing kept uses; the number deleted."""
    gone = sorted(candidates - kept_files(table_path))
    for path in gone:
        fileio.delete(path)
    return len(gone)
