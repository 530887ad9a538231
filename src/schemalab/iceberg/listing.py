"""An Iceberg table's metadata and files, without reads or history: the current metadata
file, its snapshots and schemas, the manifests of a snapshot and the files live at it, and
where each file a URI names is read from. The table facade
(:class:`~schemalab.iceberg.table.IcebergTable`), the read planner and the history adapter
are built on it."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemalab import fileio, progress
from schemalab.errors import SchemaLabError, TableNotFoundError
from schemalab.format import name_from_path
from schemalab.iceberg.locate import find_current_metadata
from schemalab.iceberg.manifests import (
    IcebergManifest,
    IcebergManifestEntry,
    IcebergManifestFile,
    read_iceberg_manifest,
    read_iceberg_manifest_list,
)
from schemalab.iceberg.metadata import (
    IcebergSchema,
    IcebergSnapshot,
    load_json,
    parse_table_metadata,
)


@dataclass(frozen=True)
class IcebergDataFile:
    """A live data file of a snapshot, as reads and trees need it."""

    uri: str
    #: the local path (resolved against the table directory if the table was moved)
    path: str
    entry: IcebergManifestEntry
    manifest: IcebergManifestFile


@dataclass(frozen=True)
class MetadataInfo:
    """What the history needs from one metadata file of the table's past."""

    updated_ms: int
    schema_ids: tuple[int, ...]
    current_schema_id: int | None
    spec_ids: tuple[int, ...]
    order_ids: tuple[int, ...]
    current_snapshot_id: int | None
    #: the table's first metadata file (an empty metadata-log)
    is_first: bool


def _light_info(d: Mapping[str, Any]) -> MetadataInfo:
    def ids(key: str, id_key: str) -> tuple[int, ...]:
        return tuple(int(x[id_key]) for x in d.get(key) or () if isinstance(x, dict)
                     and isinstance(x.get(id_key), int))

    schema_ids = ids("schemas", "schema-id") or ((0,) if "schema" in d else ())
    cur = d.get("current-schema-id", 0 if "schema" in d else None)
    snap = d.get("current-snapshot-id")
    return MetadataInfo(int(d.get("last-updated-ms") or 0), schema_ids,
                         cur if isinstance(cur, int) else None,
                         ids("partition-specs", "spec-id") or (0,),
                         ids("sort-orders", "order-id") or (0,),
                         snap if isinstance(snap, int) and snap >= 0 else None,
                         not d.get("metadata-log"))


def metadata_timeline(table: IcebergSource) -> list[MetadataInfo]:
    """The table's metadata files still on disk, oldest first, current last. The
    metadata-log names the previous files (Iceberg keeps the last 100 by default); missing
    or unreadable ones are skipped."""
    out = []
    for _, uri in table.metadata.metadata_log:
        p = table.resolve(uri)
        try:
            d = load_json(p)
        except SchemaLabError:
            continue
        if isinstance(d, dict):
            out.append(_light_info(d))
    try:
        out.append(_light_info(load_json(table.metadata_file)))
    except SchemaLabError:  # pragma: no cover - it was just parsed
        pass
    return out


class IcebergSource:
    """An Iceberg table directory (or one metadata file of it): its metadata and files.

    ``IcebergSource(path)`` validates the current metadata at once, so a broken table fails
    here with a :class:`CorruptFileError` naming the file and the problem."""

    def __init__(self, path: str | os.PathLike[str], name: str | None = None) -> None:
        p = fileio.normalize(path)
        if fileio.is_file(p):
            metadata_file = p
            parent = os.path.dirname(p)
            root = os.path.dirname(parent) if os.path.basename(parent) == "metadata" else parent
        elif fileio.is_dir(p):
            root = p
            if os.path.basename(p) == "metadata" and not fileio.is_dir(
                    os.path.join(p, "metadata")):
                root = os.path.dirname(p)
            metadata_file = find_current_metadata(root)
        else:
            raise TableNotFoundError(f"{p} does not exist", rule="table-must-exist")
        self.path = root
        self.name = name or name_from_path(root)
        self.metadata_file = metadata_file
        self.metadata = parse_table_metadata(load_json(metadata_file), metadata_file)
        self._manifest_cache: dict[str, IcebergManifest] = {}
        self._list_cache: dict[str, list[IcebergManifestFile]] = {}

    # ---- metadata ---------------------------------------------------------------------------

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def location(self) -> str:
        return self.metadata.location

    @property
    def schema(self) -> IcebergSchema:
        return self.metadata.schema()

    @property
    def schemas(self) -> list[IcebergSchema]:
        return sorted(self.metadata.schemas, key=lambda s: s.schema_id)

    def schema_at(self, schema_id: int) -> IcebergSchema:
        try:
            return self.metadata.schema(schema_id)
        except KeyError:
            raise SchemaLabError(f"Table {self.name} has no schema {schema_id} (schemas: "
                                 f"{[s.schema_id for s in self.schemas]})", table=self.name,
                                 rule="schema-must-exist") from None

    @property
    def snapshots(self) -> list[IcebergSnapshot]:
        return list(self.metadata.snapshots)

    @property
    def current_snapshot(self) -> IcebergSnapshot | None:
        cid = self.metadata.current_snapshot_id
        return None if cid is None else self.metadata.snapshot(cid)

    def snapshot(self, snapshot_id: int) -> IcebergSnapshot:
        s = self.metadata.snapshot(snapshot_id)
        if s is None:
            raise SchemaLabError(f"Table {self.name} has no snapshot {snapshot_id} (snapshots: "
                                 f"{[x.snapshot_id for x in self.snapshots]})",
                                 table=self.name, rule="snapshot-must-exist")
        return s

    def snapshot_id_of(self, snap: IcebergSnapshot) -> int:
        return snap.snapshot_id

    def snapshot_schema_id(self, snap: IcebergSnapshot) -> int:
        """The schema a snapshot was written with: its ``schema-id``, else (older writers
        did not record it) the current schema of the first metadata file on disk that made
        it current, else today's schema (what Java's SnapshotUtil.schemaFor does)."""
        if snap.schema_id is not None:
            return int(snap.schema_id)
        for info in self.timeline:
            if info.current_snapshot_id == snap.snapshot_id and info.current_schema_id is not None:
                return info.current_schema_id
        return self.metadata.current_schema_id

    def written_schema_id(self, e: IcebergManifestEntry, manifest_schema_id: int | None = None
                          ) -> int:
        """The schema a data file was written under. Iceberg records none per file: it is
        the schema of the snapshot that added the file, else the manifest's, else today's."""
        added_by = self.metadata.snapshot(e.snapshot_id) if e.snapshot_id is not None else None
        if added_by is not None:
            return self.snapshot_schema_id(added_by)
        if manifest_schema_id is not None:
            return manifest_schema_id
        return self.schema.schema_id

    @functools.cached_property
    def timeline(self) -> list[MetadataInfo]:
        """The table's metadata files still on disk, oldest first (see
        :func:`metadata_timeline`)."""
        return metadata_timeline(self)

    # ---- paths ------------------------------------------------------------------------------

    def resolve(self, uri: str) -> str:
        """Where a file the metadata names by URI is read from. Paths under the table's
        ``location`` are re-rooted at the directory the table was opened from, so a moved or
        copied table works; a file in another store than the table's is not probed (a local
        copy of an s3:// table must not reach out to S3)."""
        local = fileio.normalize(uri)
        loc = fileio.normalize(self.metadata.location).rstrip("/")
        if loc and (local == loc or local.startswith(loc + "/")):
            return os.path.join(self.path, local[len(loc):].lstrip("/"))
        same_store = fileio.scheme(local) == fileio.scheme(self.path)
        if same_store and fileio.exists(local):
            return local
        # A table whose `location` itself is stale (copied, then registered elsewhere):
        # try the part after a `/metadata/` or `/data/` segment.
        for seg in ("/metadata/", "/data/"):
            start = local.rfind(seg)
            while start >= 0:
                cand = os.path.join(self.path, local[start + 1:])
                if fileio.exists(cand):
                    return cand
                start = local.rfind(seg, 0, start)
        return local

    def relpath(self, uri: str) -> str:
        return fileio.display(self.resolve(uri), self.path)

    # ---- manifests --------------------------------------------------------------------------

    def manifest_files(self, snap: IcebergSnapshot) -> list[IcebergManifestFile]:
        """The manifest list of ``snap`` (v1 snapshots may list manifests inline)."""
        if snap.manifest_list is None:
            return [IcebergManifestFile(m, 0, 0, 0, 0, 0, snap.snapshot_id, None, None, None, None,
                                 None, None) for m in snap.manifests]
        key = snap.manifest_list
        if key not in self._list_cache:
            self._list_cache[key] = read_iceberg_manifest_list(self.resolve(key))
        return self._list_cache[key]

    def manifest(self, mf: IcebergManifestFile) -> IcebergManifest:
        # Manifests are immutable and shared by many snapshots: read each once.
        if mf.path not in self._manifest_cache:
            self._manifest_cache[mf.path] = read_iceberg_manifest(self.resolve(mf.path), mf)
        return self._manifest_cache[mf.path]

    def data_files(self, snapshot_id: int | None = None) -> list[IcebergDataFile]:
        """The live data files of a snapshot (default: the current one)."""
        return self.live_files(snapshot_id)[0]

    def delete_files(self, snapshot_id: int | None = None) -> list[IcebergDataFile]:
        """The live delete files of a snapshot (default: the current one): position and
        equality delete files, and deletion vectors (Puffin)."""
        return self.live_files(snapshot_id)[1]

    def live_files(self, snapshot_id: int | None = None
                   ) -> tuple[list[IcebergDataFile], list[IcebergDataFile]]:
        """(data files, delete files) live at a snapshot (default: the current one)."""
        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot
        if snap is None:
            return [], []
        data: list[IcebergDataFile] = []
        deletes: list[IcebergDataFile] = []
        for mf in progress.track(self.manifest_files(snap), "reading manifests",
                                 unit="manifests"):
            for e in self.manifest(mf).entries:
                if not e.live:
                    continue
                f = IcebergDataFile(e.file_path, self.resolve(e.file_path), e, mf)
                (deletes if mf.content != 0 or e.content != 0 else data).append(f)
        return data, deletes
