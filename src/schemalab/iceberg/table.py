"""An Iceberg table directory (or one metadata file of it), opened read-only: its metadata
and files (:class:`~schemalab.iceberg.listing.IcebergSource`) with the read pipeline every
format shares (:class:`~schemalab.format.FormatTable`)."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import os
from typing import TYPE_CHECKING

from schemalab.engine.plan import ReadPlan
from schemalab.errors import NotFoundError
from schemalab.format import FormatTable, RefTarget, unknown_ref
from schemalab.history.graph import with_refs
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import gc_paused
from schemalab.iceberg.history import iceberg_history, snapshot_tree
from schemalab.iceberg.listing import IcebergSource
from schemalab.iceberg.manifests import IcebergManifestEntry
from schemalab.iceberg.metadata import IcebergSchema, IcebergSnapshot
from schemalab.iceberg.plan import plan_iceberg_read
from schemalab.iceberg.refs import ancestry, iceberg_refs, ref_kind, ref_snapshot_id
from schemalab.iceberg.system_tables import system_table
from schemalab.refs import MAIN, Ref
from schemalab.spark import configure_session, default_session

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


class IcebergTable(IcebergSource, FormatTable[IcebergSnapshot, IcebergSchema]):
    """An Iceberg table directory (or one metadata file of it), read-only.

    ``IcebergTable(path)`` validates the current metadata at once, so a broken table fails
    here with a :class:`CorruptFileError` naming the file and the problem."""

    #: the branch a view of :meth:`branch` shows (None: the whole table); class-level
    #: defaults, so a subclass that fills the metadata itself (catalogs) has them too
    branch_name: str | None = None
    _root_table: IcebergTable | None = None
    #: the table's history without refs, computed once: its branches share it
    _plain_history: TableHistory | None = None

    def __init__(self, path: str | os.PathLike[str], name: str | None = None, *,
                 spark: SparkSession | None = None) -> None:
        super().__init__(path, name)
        self._spark = spark
        if spark is not None:
            # as a Warehouse does: without Spark's reads by field id, every column read by
            # id would be NULL
            configure_session(spark)

    def __repr__(self) -> str:
        m = self.metadata
        return (f"IcebergTable({self.name!r}, v{m.format_version}, schema={m.current_schema_id}, "
                f"snapshot={m.current_snapshot_id})")

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = default_session()
        return self._spark

    # ---- history ----------------------------------------------------------------------------

    def history(self) -> TableHistory:
        """Schema versions with their changes, every field's lineage, partition specs and
        sort orders, and the snapshots (trees load on demand: ``history().tree(id)``); the
        refs, one history per branch, fork points and what became of the snapshots no branch
        reaches (:func:`~schemalab.history.graph.with_refs`). A branch's own history
        (``t.branch("dev").history()``) holds that branch's ancestry."""
        root = self._root
        if root._plain_history is None:
            with gc_paused():
                root._plain_history = iceberg_history(root)
        h = root._plain_history
        if self._root_table is None:
            return with_refs(h, self)
        # a branch: the table's schemas and lineage (computed once), its own snapshots
        keep = {s.snapshot_id for s in self.metadata.snapshots}
        h = dataclasses.replace(h, name=self.name,
                                snapshots=tuple(s for s in h.snapshots if s.id in keep),
                                snapshot_log=self.metadata.snapshot_log)
        return with_refs(h, self, branches=False)

    def snapshot_tree(self, snapshot_id: int) -> SnapshotNode:
        """Snapshot → its manifest list → manifests → file entries (ADDED, EXISTING,
        DELETED), with partitions and column bounds decoded and shown under today's names."""
        return snapshot_tree(self, snapshot_id)

    def snapshot_as_of(self, millis: int) -> IcebergSnapshot:
        """The snapshot a read ``TIMESTAMP AS OF`` ``millis`` (epoch milliseconds) reads, as
        Iceberg's ``SnapshotUtil.snapshotIdAsOfTime`` (1.12): the ``snapshot-log`` entry
        with the greatest ``timestamp-ms`` at or before ``millis`` (the first of equals).
        None such: Iceberg's message (rule ``snapshot-as-of-time``)."""
        root = self._root
        best: tuple[int, int] | None = None  # (timestamp-ms, snapshot id)
        for sid, ts in root.metadata.snapshot_log:
            if ts <= millis and (best is None or ts > best[0]):
                best = (ts, sid)
        if best is None:
            raise NotFoundError(f"Table {root.name}: Cannot find a snapshot older than "
                                f"{_instant_text(millis)}", table=root.name,
                                rule="snapshot-as-of-time")
        return root.snapshot(best[1])

    # ---- metadata tables ----------------------------------------------------------------

    def system_table(self, name: str, snapshot_id: int | None = None) -> DataFrame:
        """Iceberg's metadata table ``name`` as Iceberg's Spark integration returns it (same
        columns, Spark types and values): ``snapshots``, ``history``, ``refs``,
        ``metadata_log_entries``, ``manifests``, ``files``, ``data_files``,
        ``delete_files``, ``partitions`` (also spelled ``$snapshots``). ``snapshot_id``
        reads ``manifests``, the files tables and ``partitions`` as of that snapshot (Spark's
        ``VERSION AS OF``). An unknown name is a SqlError (rule ``unknown-system-table``)."""
        return system_table(self, self.spark, name, snapshot_id)

    # ---- refs -------------------------------------------------------------------------------

    @property
    def refs(self) -> list[Ref]:
        """The metadata's ``refs`` (main first; a v1 table without refs has ``main`` at its
        current snapshot), with Iceberg's retention keys in ``properties``. ``schema_id`` is
        the schema a read of the ref binds (see :meth:`ref_target`)."""
        root = self._root
        md = root.metadata
        return iceberg_refs(md.refs, md.current_schema_id,
                            lambda sid: root.snapshot_schema_id(root.snapshot(sid)))

    def ref_target(self, ref: str) -> RefTarget[IcebergSnapshot]:
        """Iceberg's rule (``SnapshotUtil.schemaFor``): a tag reads in the schema of its
        snapshot, a branch in the table's current schema."""
        root = self._root
        r = root.metadata.refs.get(ref)
        if r is None and ref == MAIN:  # no snapshot yet
            return RefTarget(root, None, "current", "branch main: the table's current schema "
                             f"{root.metadata.current_schema_id} binds (no snapshot yet)")
        if r is None:
            raise unknown_ref(root.name, ref, root.refs)
        sid = ref_snapshot_id(r)
        snap = None if sid is None else root.snapshot(sid)
        if ref_kind(r) == "tag":
            schema_id = root.snapshot_schema_id(snap) if snap is not None else None
            return RefTarget(root, snap, "snapshot",
                             f"tag {ref}: the schema of its snapshot {sid} (schema "
                             f"{schema_id}) binds, as Iceberg reads a tag")
        return RefTarget(root.branch(ref), snap, "current",
                         f"branch {ref}: the table's current schema "
                         f"{root.metadata.current_schema_id} binds, as Iceberg reads a branch")

    def branch(self, name: str) -> IcebergTable:
        """Branch ``name`` as a table: its snapshots and history are the branch head's
        ancestry (the snapshots still in the metadata), its current snapshot the head, its
        schemas the table's (Iceberg reads a branch in the table's current schema). ``main``
        is such a view too unless it reaches every snapshot (then it is the table)."""
        root = self._root
        r = root.metadata.refs.get(name)
        if r is None and name == MAIN:  # no snapshot yet
            return root
        if r is None or ref_kind(r) != "branch":
            raise unknown_ref(root.name, name, root.refs)
        md = root.metadata
        parents = {s.snapshot_id: s.parent_id for s in md.snapshots}
        keep = set(ancestry(parents, ref_snapshot_id(r)))
        if name == MAIN and len(keep) == len(md.snapshots):
            return root
        view = copy.copy(root)
        view.metadata = dataclasses.replace(
            md, snapshots=tuple(s for s in md.snapshots if s.snapshot_id in keep),
            current_snapshot_id=ref_snapshot_id(r),
            snapshot_log=tuple(e for e in md.snapshot_log if e[0] in keep),
            refs={n: x for n, x in md.refs.items()
                  if n == name or (ref_kind(x) == "tag" and ref_snapshot_id(x) in keep)})
        view.name = root.name if name == MAIN else f"{root.name}.branch_{name}"
        view.branch_name = name
        view._root_table = root
        return view

    @property
    def _root(self) -> IcebergTable:
        """The whole table (a branch view's table, else this one)."""
        return self._root_table if self._root_table is not None else self

    def written_schema_id(self, e: IcebergManifestEntry, manifest_schema_id: int | None = None
                          ) -> int:
        if self._root_table is not None:
            return self._root_table.written_schema_id(e, manifest_schema_id)
        return super().written_schema_id(e, manifest_schema_id)

    # ---- what the read pipeline (schemalab.format) asks of a format --------------------------

    def resolve_snapshot(self, snapshot_id: int | None) -> IcebergSnapshot | None:
        return self.snapshot(snapshot_id) if snapshot_id is not None else self.current_snapshot

    def plan(self, snap: IcebergSnapshot | None, target: IcebergSchema) -> ReadPlan:
        """Files are grouped by the schema they were written under (see
        :meth:`written_schema_id`)."""
        if snap is None:
            return plan_iceberg_read(self, target, [], None)
        data, deletes = self.live_files(snap.snapshot_id)
        return plan_iceberg_read(self, target, data, snap.snapshot_id, deletes=deletes)


def _instant_text(millis: int) -> str:
    """``DateTimeUtil.formatTimestampMillis``: Java's ``Instant.toString()`` with ``+00:00``
    for ``Z`` (``2026-11-28T04:40:00+00:00``, ``..:00.120+00:00``)."""
    try:
        when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=millis)
    except OverflowError:  # beyond year 9999: Python's datetime ends there
        return f"{millis} ms after the epoch"
    ms = f".{when.microsecond // 1000:03d}" if when.microsecond else ""
    return when.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0") + ms + "+00:00"
