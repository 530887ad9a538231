"""An Iceberg table directory (or one metadata file of it), opened read-only."""


from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.plan import ReadPlan
from schemalab.engine.read import execute
from schemalab.errors import (
    SchemaLabError,
    TableNotFoundError,
)
from schemalab.explain.read import ReadExplanation, explain
from schemalab.explain.why import WhyAnswer, why
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import (
    FileNode,
    ManifestListNode,
    ManifestNode,
    SnapshotNode,
)
from schemalab.iceberg.deletes import referenced_file
from schemalab.iceberg.history import (
    MetadataInfo,
    iceberg_history,
    metadata_timeline,
    snapshot_node,
)
from schemalab.iceberg.locate import find_current_metadata
from schemalab.iceberg.manifests import (
    IcebergManifest,
    IcebergManifestEntry,
    IcebergManifestFile,
    decode_bound,
    read_iceberg_manifest,
    read_iceberg_manifest_list,
)
from schemalab.iceberg.metadata import (
    IcebergSchema,
    IcebergSnapshot,
    load_json,
    parse_table_metadata,
)
from schemalab.iceberg.plan import plan_iceberg_read
from schemalab.iceberg.types import IcebergType
from schemalab.spark import default_session
from schemalab.table import SchemaChoice, name_from_path

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class IcebergDataFile:
    """A live data file of a snapshot, as reads and trees need it."""

    uri: str
    #: the local path (resolved against the table directory if the table was moved)
    path: str
    entry: IcebergManifestEntry
    manifest: IcebergManifestFile


class IcebergTable:
    """An Iceberg table directory (or one metadata file of it), read-only.

    ``IcebergTable(path)`` validates the current metadata at once, so a broken table fails
    here with a :class:`CorruptFileError` naming the file and the problem."""

    def __init__(self, path: str | os.PathLike[str], name: str | None = None, *,
                 spark: SparkSession | None = None) -> None:
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
        self._spark = spark
        self.metadata_file = metadata_file
        self.metadata = parse_table_metadata(load_json(metadata_file), metadata_file)
        self._manifest_cache: dict[str, IcebergManifest] = {}
        self._list_cache: dict[str, list[IcebergManifestFile]] = {}

    def __repr__(self) -> str:
        m = self.metadata
        return (f"IcebergTable({self.name!r}, v{m.format_version}, schema={m.current_schema_id}, "
                f"snapshot={m.current_snapshot_id})")

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

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = default_session()
        return self._spark

    def snapshot_schema_id(self, snap: IcebergSnapshot) -> int:
        """The schema a snapshot was written with: its ``schema-id``, else (older writers
        did not record it) the current schema of the first metadata file on disk that made
        it current, else today's schema (what Java's SnapshotUtil.schemaFor does)."""
        if snap.schema_id is not None:
            return int(snap.schema_id)
        for info in self._timeline:
            if info.current_snapshot_id == snap.snapshot_id and info.current_schema_id is not None:
                return info.current_schema_id
        return self.metadata.current_schema_id

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
        for mf in self.manifest_files(snap):
            for e in self.manifest(mf).entries:
                if not e.live:
                    continue
                f = IcebergDataFile(e.file_path, self.resolve(e.file_path), e, mf)
                (deletes if mf.content != 0 or e.content != 0 else data).append(f)
        return data, deletes

    def snapshot_tree(self, snapshot_id: int) -> SnapshotNode:
        """Snapshot → its manifest list → manifests → file entries (ADDED, EXISTING,
        DELETED), with partitions and column bounds decoded and shown under today's names."""
        snap = self.snapshot(snapshot_id)
        current = self.schema
        manifests = []
        live: list[FileNode] = []
        for mf in self.manifest_files(snap):
            m = self.manifest(mf)
            nodes = tuple(self._file_node(e, current, m.schema_id) for e in m.entries)
            live.extend(n for n, e in zip(nodes, m.entries, strict=True)
                        if e.live and mf.content == 0 and e.content == 0)
            manifests.append(ManifestNode(
                self.relpath(mf.path),
                mf.added_files if mf.added_files is not None
                else sum(e.status == 1 for e in m.entries),
                mf.deleted_files if mf.deleted_files is not None
                else sum(e.status == 2 for e in m.entries),
                m.schema_id, nodes))
        if snap.manifest_list is not None:
            lists = (ManifestListNode("manifest-list", self.relpath(snap.manifest_list),
                                      tuple(manifests)),)
        else:
            lists = (ManifestListNode("manifests", "(listed in the metadata file)",
                                      tuple(manifests)),)
        return dataclasses.replace(snapshot_node(self, snap), lists=lists, live_files=tuple(live))

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

    def _file_node(self, e: IcebergManifestEntry, current: IcebergSchema,
                   manifest_schema_id: int | None) -> FileNode:
        schema_id = self.written_schema_id(e, manifest_schema_id)
        spec = self.metadata.spec(e.spec_id)
        names = {pf.field_id: pf.name for pf in spec.fields} if spec else {}
        partition = {names.get(fid, e.partition_names.get(fid, str(fid))): v
                     for fid, v in e.partition.items()}
        stats: dict[str, tuple[Any, Any, int | None]] = {}
        for fid in sorted(set(e.lower_bounds) | set(e.upper_bounds) | set(e.null_counts)):
            name, t = self._field_name_type(fid, current)
            lo, hi = e.lower_bounds.get(fid), e.upper_bounds.get(fid)
            stats[name] = (None if lo is None or t is None else decode_bound(lo, t),
                           None if hi is None or t is None else decode_bound(hi, t),
                           e.null_counts.get(fid))
        kind = e.status_name if e.content == 0 else f"{e.status_name} {e.content_name}"
        target = None if e.content != 1 else referenced_file(e)
        return FileNode(path=self.relpath(e.file_path), kind=kind, schema_id=schema_id,
                        row_count=e.record_count, partition=partition, file_size=e.file_size,
                        stats=stats, min_sequence_number=e.sequence_number,
                        max_sequence_number=e.sequence_number,
                        target=None if target is None else self.relpath(target))

    def _field_name_type(self, fid: int,
                         current: IcebergSchema) -> tuple[str, IcebergType | None]:
        f = current.find(fid)
        if f is not None:
            return current.full_name(fid) or str(fid), f.type
        for s in sorted(self.metadata.schemas, key=lambda s: -s.schema_id):
            f = s.find(fid)
            if f is not None:
                return f"{s.full_name(fid)} (dropped)", f.type
        return f"field {fid}", None

    # ---- history ----------------------------------------------------------------------------

    @functools.cached_property
    def _timeline(self) -> list[MetadataInfo]:
        return metadata_timeline(self)

    def history(self) -> TableHistory:
        """Schema versions with their changes, every field's lineage, partition specs and
        sort orders, and the snapshots (trees load on demand: ``history().tree(id)``)."""
        from schemalab.history.versions import gc_paused

        with gc_paused():
            return iceberg_history(self)

    # ---- metadata tables ----------------------------------------------------------------

    def system_table(self, name: str, snapshot_id: int | None = None) -> DataFrame:
        """Iceberg's metadata table ``name`` as Iceberg's Spark integration returns it (same
        columns, Spark types and values): ``snapshots``, ``history``, ``refs``,
        ``metadata_log_entries``, ``manifests``, ``files``, ``data_files``,
        ``delete_files``, ``partitions`` (also spelled ``$snapshots``). ``snapshot_id``
        reads ``manifests``, the files tables and ``partitions`` as of that snapshot (Spark's
        ``VERSION AS OF``). An unknown name is a SqlError (rule ``unknown-system-table``)."""
        from schemalab.iceberg.system_tables import system_table

        return system_table(self, name, snapshot_id)

    # ---- reads ------------------------------------------------------------------------------

    def target_schema(self, snap: IcebergSnapshot | None, schema: SchemaChoice) -> IcebergSchema:
        if schema == "current" or (schema in (None, "snapshot") and snap is None):
            return self.schema
        if isinstance(schema, int) and not isinstance(schema, bool):
            return self.schema_at(schema)
        if schema in (None, "snapshot") and snap is not None:
            return self.schema_at(self.snapshot_schema_id(snap))
        raise SchemaLabError(f"schema must be 'snapshot', 'current' or a schema id, not "
                             f"{schema!r}", table=self.name, rule="read-schema")

    def read_plan(self, snapshot_id: int | None = None,
                  schema: SchemaChoice = None) -> ReadPlan:
        """How a read of ``snapshot_id`` (default: current) gets each column from each group
        of files: the plan that :meth:`read` runs and :meth:`explain_read` describes."""
        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot
        if snapshot_id is None and schema is None:
            schema = "current"
        target = self.target_schema(snap, schema)
        if snap is None:
            return plan_iceberg_read(self, target, [], None)
        data, deletes = self.live_files(snap.snapshot_id)
        return plan_iceberg_read(self, target, data, snap.snapshot_id, deletes=deletes)

    def explain_read(self, snapshot_id: int | None = None,
                     schema: SchemaChoice = None) -> ReadExplanation:
        """For each group of files, how each output column of the read is produced, and why
        a value is NULL, a partition value, a default or cast: the explanation of the plan
        :meth:`read` runs. Files are grouped by the schema they were written under (see
        :meth:`written_schema_id`)."""
        return explain(self.read_plan(snapshot_id, schema), self.history())

    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None) -> WhyAnswer:
        """Why ``column`` reads as it does for the rows ``where`` selects (see
        :meth:`schemalab.table.Table.why`)."""
        return why(self.read_plan(snapshot_id, schema), self.history(), self.spark, column,
                   where)

    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None) -> DataFrame:
        """The evolved read as one Spark DataFrame.

        ``snapshot_id=None`` reads the current snapshot in the current schema. With a
        snapshot id the read uses *that snapshot's* schema (as Iceberg's time travel does);
        ``schema="current"`` projects the old snapshot onto today's schema instead, and an
        int picks any schema id."""
        return execute(self.read_plan(snapshot_id, schema), self.spark)


