"""Committing data files: manifest → manifest lists → ``snapshot/snapshot-N``.

A commit writes one manifest with the new ADD (and DELETE) entries, then for each attempt a
base manifest list (every manifest of the latest snapshot) and a delta list (the new one),
and finally ``snapshot-N`` create-if-absent. A writer that loses the race for N deletes its
lists, re-reads the new latest snapshot, and tries N+1: it never overwrites, and nothing it
wrote is referenced until its snapshot exists.

Where the latest snapshot is read and how ``snapshot-N`` comes to be is a
:class:`SnapshotCommitter`: the table's ``snapshot/`` directory by default (Java's
``RenamingSnapshotCommit``), or a catalog's commit endpoint
(:class:`schemalab.paimon_rest.RestCommitter`, Java's ``CatalogSnapshotCommit``), where the
catalog writes the snapshot file.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol

from schemalab import fileio
from schemalab.errors import CommitConflictError, SchemaLabError
from schemalab.paimon.features import (
    assign_row_ids,
    check_writable_features,
    row_tracking_enabled,
)
from schemalab.paimon.listing import ManifestReader
from schemalab.paimon.manifest import FileKind, FileNamer, ManifestEntry, ManifestFileMeta
from schemalab.paimon.manifest_codec import (
    manifest_file_meta,
    write_manifest,
    write_manifest_list,
)
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, SnapshotManager
from schemalab.schema.table_schema import TableSchema
from schemalab.version import __version__

WRITER_VERSION = f"schemalab-{__version__}"
MAX_ATTEMPTS = 200
#: the rule of an error after which a commit may have landed (a catalog that failed while
#: committing): its data files and manifests must stay, as Java's commit keeps them
UNKNOWN_OUTCOME = "catalog-commit-unknown"


class SnapshotCommitter(Protocol):
    """Where a table's latest snapshot is read and how the next one is committed."""

    def latest(self) -> Snapshot | None:
        """The snapshot a commit builds on."""

    def commit(self, snapshot: Snapshot, delta: Sequence[ManifestEntry],
               base: Snapshot | None) -> bool:
        """Commit ``snapshot`` (its ``delta`` entries, built on ``base``); False when another
        writer committed first (the caller re-reads and tries again)."""


class FileSystemCommitter:
    """The table's own ``snapshot/`` directory: ``snapshot-N`` created if absent."""

    def __init__(self, snapshots: SnapshotManager) -> None:
        self.snapshots = snapshots

    def latest(self) -> Snapshot | None:
        return self.snapshots.latest()

    def commit(self, snapshot: Snapshot, delta: Sequence[ManifestEntry],
               base: Snapshot | None) -> bool:
        return self.snapshots.commit(snapshot)


def commit(table_path: str, table: str, schema: TableSchema,
           entries: Sequence[ManifestEntry], *, kind: str = "APPEND",
           commit_user: str | None = None,
           replaces: Callable[[Snapshot | None], list[ManifestEntry]] | None = None,
           keep_index: bool = True, reader: ManifestReader | None = None,
           meta_path: str | None = None,
           committer: SnapshotCommitter | None = None) -> Snapshot | None:
    """Commit ``entries`` as the next snapshot; None when there is nothing to commit.

    ``replaces`` (INSERT OVERWRITE) gives the DELETE entries against the snapshot an attempt
    builds on. It is asked again on every attempt: DELETEs worked out once, before the race,
    would miss files another writer added meanwhile (they would survive the overwrite, and
    two racing overwrites of one partition would both stay live). ``keep_index``: the new
    snapshot keeps the latest one's index manifest (deletion vectors, hash indexes), as Java
    does for files it does not rewrite (a compaction that rewrote every file with a deletion
    vector passes False). ``meta_path``: a branch's dir; ``committer``: None for files."""
    if not entries:
        return None
    # the writers check first (before Spark writes anything); this is the last line
    check_writable_features(schema, table, f"{kind} commit")
    namer = FileNamer()
    manifest_dir = os.path.join(table_path, "manifest")
    fileio.makedirs(manifest_dir)
    part_types = [schema.type_of(k) for k in schema.partition_keys]

    def write_delta(delta: list[ManifestEntry]) -> tuple[str, ManifestFileMeta]:
        name = namer.new_manifest()
        size = write_manifest(os.path.join(manifest_dir, name), delta)
        return name, manifest_file_meta(name, size, delta, part_types)

    delta_entries: list[ManifestEntry] = []
    manifest_name, delta_meta = "", None  # written on the first attempt
    snapshots = committer or FileSystemCommitter(SnapshotManager(meta_path or table_path, table))
    schemas = SchemaManager(meta_path or table_path, table)
    user = commit_user or str(uuid.uuid4())
    tracking = row_tracking_enabled(schema)
    for attempt in range(MAX_ATTEMPTS):
        latest = snapshots.latest()
        attempt_entries = list(entries) + (replaces(latest) if replaces is not None else [])
        next_row_id = None
        if tracking:
            attempt_entries, next_row_id = _with_row_ids(attempt_entries, latest)
        if delta_meta is None or attempt_entries != delta_entries:
            if manifest_name:
                fileio.delete(os.path.join(manifest_dir, manifest_name))
            delta_entries = attempt_entries
            manifest_name, delta_meta = write_delta(delta_entries)
        assert delta_meta is not None
        added = sum(e.file.row_count for e in delta_entries if e.kind == FileKind.ADD)
        removed = sum(e.file.row_count for e in delta_entries if e.kind == FileKind.DELETE)
        base_name, base_size, delta_name, delta_size = _write_lists(
            manifest_dir, namer, latest, delta_meta, reader or ManifestReader(table_path))
        previous_total = (latest.total_record_count or 0) if latest else 0
        # As Java's FileStoreCommitImpl: the table's latest schema at commit time, not the
        # writer's (an ALTER may have landed meanwhile; an older snapshot schema would make
        # time travel drop the files' new columns, and snapshot schema ids go backwards).
        schema_id = max([schema.id, *schemas.list_ids()])
        snap = Snapshot(
            id=(latest.id + 1) if latest else 1, schema_id=schema_id,
            base_manifest_list=base_name, delta_manifest_list=delta_name,
            commit_user=user, commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind=kind,
            time_millis=int(time.time() * 1000),
            total_record_count=previous_total + added - removed,
            delta_record_count=added - removed, version=3, uuid=str(uuid.uuid4()),
            base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
            writer_version=WRITER_VERSION,
            index_manifest=latest.index_manifest if keep_index and latest else None,
            next_row_id=next_row_id,
        )
        if _committed(snapshots, snap, delta_entries, latest, manifest_dir,
                      (manifest_name, base_name, delta_name)):
            return snap
        for name in (base_name, delta_name):
            fileio.delete(os.path.join(manifest_dir, name))
        time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    if manifest_name:
        fileio.delete(os.path.join(manifest_dir, manifest_name))
    raise CommitConflictError(
        f"Gave up committing to {table} after {MAX_ATTEMPTS} lost races; nothing of this "
        "commit is visible.", table=table, rule="commit-conflict")


def _committed(committer: SnapshotCommitter, snap: Snapshot, delta: list[ManifestEntry],
               base: Snapshot | None, manifest_dir: str, written: Sequence[str]) -> bool:
    """Commit ``snap``; a commit the committer refuses (a catalog's answer) removes the
    manifest files ``written`` for it, as nothing references them. One whose outcome is
    unknown keeps them: it may have landed."""
    try:
        return committer.commit(snap, delta, base)
    except SchemaLabError as e:
        if e.rule != UNKNOWN_OUTCOME:
            for name in written:
                fileio.delete(os.path.join(manifest_dir, name))
        raise


def _with_row_ids(entries: list[ManifestEntry], latest: Snapshot | None
                  ) -> tuple[list[ManifestEntry], int | None]:
    """A row-tracking table's entries with their first row ids, and the table's next row
    id after them (as the commit of snapshot ``latest.id + 1`` assigns them)."""
    snapshot_id = (latest.id + 1) if latest else 1
    first = (latest.next_row_id or 0) if latest else 0
    return assign_row_ids(entries, snapshot_id, first)


def _write_lists(manifest_dir: str, namer: FileNamer, latest: Snapshot | None,
                 delta_meta: ManifestFileMeta, reader: ManifestReader
                 ) -> tuple[str, int, str, int]:
    """The base manifest list (every manifest of ``latest``) and the delta list (the new
    manifest): (base name, its size, delta name, its size)."""
    base: list[ManifestFileMeta] = []
    if latest is not None:
        for name in (latest.base_manifest_list, latest.delta_manifest_list):
            base.extend(reader.metas(name))
    base_name, delta_name = namer.new_manifest_list(), namer.new_manifest_list()
    base_size = write_manifest_list(os.path.join(manifest_dir, base_name), base)
    delta_size = write_manifest_list(os.path.join(manifest_dir, delta_name), [delta_meta])
    return base_name, base_size, delta_name, delta_size

