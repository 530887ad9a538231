"""An Iceberg table directory (or one metadata file of it), opened read-only: its metadata
and files (:class:`~schemalab.iceberg.listing.IcebergSource`) with the read pipeline every
format shares (:class:`~schemalab.format.FormatTable`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from schemalab.engine.plan import ReadPlan
from schemalab.format import FormatTable
from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import gc_paused
from schemalab.iceberg.history import iceberg_history, snapshot_tree
from schemalab.iceberg.listing import IcebergSource
from schemalab.iceberg.metadata import IcebergSchema, IcebergSnapshot
from schemalab.iceberg.plan import plan_iceberg_read
from schemalab.iceberg.system_tables import system_table
from schemalab.spark import default_session

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


class IcebergTable(IcebergSource, FormatTable[IcebergSnapshot, IcebergSchema]):
    """An Iceberg table directory (or one metadata file of it), read-only.

    ``IcebergTable(path)`` validates the current metadata at once, so a broken table fails
    here with a :class:`CorruptFileError` naming the file and the problem."""

    def __init__(self, path: str | os.PathLike[str], name: str | None = None, *,
                 spark: SparkSession | None = None) -> None:
        super().__init__(path, name)
        self._spark = spark

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
        sort orders, and the snapshots (trees load on demand: ``history().tree(id)``)."""
        with gc_paused():
            return iceberg_history(self)

    def snapshot_tree(self, snapshot_id: int) -> SnapshotNode:
        """Snapshot → its manifest list → manifests → file entries (ADDED, EXISTING,
        DELETED), with partitions and column bounds decoded and shown under today's names."""
        return snapshot_tree(self, snapshot_id)

    # ---- metadata tables ----------------------------------------------------------------

    def system_table(self, name: str, snapshot_id: int | None = None) -> DataFrame:
        """Iceberg's metadata table ``name`` as Iceberg's Spark integration returns it (same
        columns, Spark types and values): ``snapshots``, ``history``, ``refs``,
        ``metadata_log_entries``, ``manifests``, ``files``, ``data_files``,
        ``delete_files``, ``partitions`` (also spelled ``$snapshots``). ``snapshot_id``
        reads ``manifests``, the files tables and ``partitions`` as of that snapshot (Spark's
        ``VERSION AS OF``). An unknown name is a SqlError (rule ``unknown-system-table``)."""
        return system_table(self, self.spark, name, snapshot_id)

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
