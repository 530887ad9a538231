"""A Paimon table: its schema versions, snapshots, writes and evolved reads. What it shares
with every format (the read pipeline, :class:`~schemalab.format.TableLike`) is in
:mod:`schemalab.format`; what is Paimon's is in :mod:`schemalab.paimon`.

    t = wh.table("T")
    t.schema            # the current TableSchema
    t.schemas           # every version, oldest first
    t.snapshots         # every snapshot, oldest first
    t.insert(rows)      # a new snapshot
    t.read()            # evolved read of the latest snapshot, as a Spark DataFrame
    t.read(snapshot_id=3)                    # time travel with snapshot 3's schema
    t.read(snapshot_id=3, schema="current")  # snapshot 3 seen through today's schema
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from schemalab import fileio
from schemalab.engine.execute import execute
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.errors import (
    NotFoundError,
    SchemaChangeError,
    SchemaLabError,
    SqlError,
    TableNotFoundError,
    with_message,
)
from schemalab.format import (
    FormatTable,
    RefTarget,
    SchemaChoice,
    SparkSource,
    name_from_path,
    unknown_ref,
)
from schemalab.history.graph import with_refs
from schemalab.history.model import TableHistory
from schemalab.history.names import unknown_name_hint
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.blob import attach_blobs
from schemalab.paimon.data_evolution import (
    DATA_SYSTEM_TABLES,
    data_system_table,
    with_system_columns,
)
from schemalab.paimon.history import paimon_history
from schemalab.paimon.listing import ManifestReader, live_files
from schemalab.paimon.manifest import ManifestEntry
from schemalab.paimon.plan import ManifestStats, data_files, plan_paimon_read
from schemalab.paimon.primary_key import check_readable
from schemalab.paimon.rewritten import check_files
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.paimon.system_tables import system_table
from schemalab.paimon.write import store
from schemalab.paimon.write.compact import CompactionResult, compact
from schemalab.paimon.write.files import WriteTarget
from schemalab.refs import MAIN, Ref
from schemalab.schema.changes import SchemaChange
from schemalab.schema.table_schema import TableSchema
from schemalab.spark import configure_session, default_session

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.explain.read import ReadExplanation
    from schemalab.explain.why import WhyAnswer

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _public(method: Callable[Concatenate[Table, _P], _R]) -> Callable[Concatenate[Table, _P], _R]:
    """A public call of a :class:`Table`: the schema directory is listed at most once in it,
    however often the call (and the calls it makes) asks for the schema; the next public call
    lists again (see :class:`Table`)."""
    @functools.wraps(method)
    def call(self: Table, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        depth = getattr(self._calls, "depth", 0)
        self._calls.depth = depth + 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._calls.depth = depth
            if depth == 0:
                self.schema_manager.refresh()
    return call


class Table(FormatTable[Snapshot, TableSchema]):
    """A Paimon table directory. ``name`` is ``db.table`` and appears in every error.

    What a table object reads it reads once: each manifest list and manifest once per object
    (they never change once written), and the schema directory once per public call — a
    statement of the warehouse's own uses the listing that found the table for its first
    call, a commit of this object adds its own schema, and every other public call
    (``t.schema``, ``t.read()``, ...) lists again, so schemas other writers commit show from
    the next call on."""

    def __init__(self, path: str, name: str | None = None, *,
                 warehouse: SparkSource | None = None, spark: SparkSession | None = None,
                 branch: str = MAIN) -> None:
        self.path = fileio.normalize(path)
        self.name = name or name_from_path(self.path)
        self.warehouse = warehouse
        self._spark = spark
        if spark is not None:
            # as a Warehouse does: without Spark's reads by field id, every column read by
            # id would be NULL
            configure_session(spark)
        #: the branch this object reads and writes; its schema/, snapshot/ and tag/ live at
        #: ``meta_path`` (the table's own for main), its manifests and data files under
        #: ``path`` (shared by every branch, as in Java Paimon)
        self.branch_name = branch
        self.meta_path = paimon_refs.branch_path(self.path, branch)
        if branch != MAIN:
            self.name = f"{self.name}{paimon_refs.BRANCH_SUFFIX}{branch}"
        self.schema_manager = SchemaManager(self.meta_path, self.name, keep_listing=True)
        self.snapshot_manager = SnapshotManager(self.meta_path, self.name)
        self._manifests = ManifestReader(self.path)
        self._calls = threading.local()

    @_public
    def __repr__(self) -> str:
        return f"Table({self.name!r}, schema={self.schema.id}, " \
               f"snapshot={self.snapshot_manager.latest_id()})"

    # ---- branches and tags (schemalab.paimon.refs) ----------------------------------------------

    @property
    @_public
    def refs(self) -> list[Ref]:
        """This branch, then (on main) every other branch, then the tags."""
        return paimon_refs.table_refs(self)

    @_public
    def ref_target(self, ref: str) -> RefTarget[Snapshot]:
        branch, snap, choice, why = paimon_refs.resolve_ref(self, ref)
        return RefTarget(self if branch is None else self.branch(branch), snap, choice, why)

    def branch(self, name: str) -> Table:
        """Branch ``name`` as a table of its own: its schemas, snapshots and tags, the
        table's manifests and data files. ``main`` (or this object's branch) is this table."""
        if name == self.branch_name:
            return self
        if name == MAIN or paimon_refs.branch_exists(self.path, name):
            base = self.name.split(paimon_refs.BRANCH_SUFFIX)[0]
            return Table(self.path, base, warehouse=self.warehouse, spark=self._spark,
                         branch=name)
        raise unknown_ref(self.name, name, self.refs)

    @property
    def spark(self) -> SparkSession:
        if self.warehouse is not None:
            return self.warehouse.spark
        if self._spark is None:
            self._spark = default_session()
        return self._spark

    # ---- metadata ---------------------------------------------------------------------------

    @property
    @_public
    def schema(self) -> TableSchema:
        latest = self.schema_manager.latest()
        if latest is None:
            raise TableNotFoundError(f"Table {self.name} has no schema ({self.path}).",
                                     table=self.name, rule="table-must-exist")
        return latest

    @property
    @_public
    def schemas(self) -> list[TableSchema]:
        return self.schema_manager.list_all()

    @_public
    def schema_at(self, schema_id: int) -> TableSchema:
        return self.schema_manager.get(schema_id)

    @property
    @_public
    def snapshots(self) -> list[Snapshot]:
        return self.snapshot_manager.get_all(self.snapshot_manager.list_ids())

    @property
    @_public
    def latest_snapshot(self) -> Snapshot | None:
        return self.snapshot_manager.latest()

    @_public
    def snapshot(self, snapshot_id: int) -> Snapshot:
        """Snapshot ``snapshot_id``, from snapshot/ or, once expired, from a tag keeping it."""
        ids = self.snapshot_manager.list_ids()
        if snapshot_id not in ids:
            kept = paimon_refs.tagged_snapshot(self, snapshot_id)
            if kept is not None:
                return kept
            tagged = sorted({t.snapshot.id for t in paimon_refs.tags_of(self)} - set(ids))
            also = f"; kept by tags: {tagged}" if tagged else ""
            raise SchemaLabError(f"Table {self.name} has no snapshot {snapshot_id} (snapshots: "
                                 f"{ids}{also})", table=self.name, rule="snapshot-must-exist")
        return self.snapshot_manager.get(snapshot_id)

    @_public
    def snapshot_as_of(self, millis: int) -> Snapshot:
        """The snapshot a read ``TIMESTAMP AS OF`` ``millis`` (epoch milliseconds) reads, as
        Paimon's ``scan.timestamp-millis`` (``StaticFromTimestampStartingScanner``): the
        newest snapshot committed at or before it (tags and expired snapshots do not count;
        a branch: its own snapshots). None such: Paimon's message (rule
        ``snapshot-as-of-time``)."""
        snap = self.snapshot_manager.earlier_or_equal_time_millis(millis)
        if snap is None:
            first = self.snapshot_manager.earliest()
            raise NotFoundError(
                f"Table {self.name}: There is currently no snapshot earlier than or equal to "
                f"timestamp [{millis}], the earliest snapshot's timestamp is "
                f"[{'null' if first is None else first.time_millis}]", table=self.name,
                rule="snapshot-as-of-time")
        return snap

    @property
    @_public
    def options(self) -> dict[str, str]:
        return self.schema.effective_options()

    # ---- schema changes ---------------------------------------------------------------------

    @_public
    def alter(self, *changes: SchemaChange) -> TableSchema:
        """Apply ``changes`` as one new schema version (Paimon's rules, atomic commit). A
        change naming a column that does not exist says what the history knows of the name
        (renamed, dropped) or which columns are close to it."""
        try:
            return self._commit_changes(changes, self.snapshot_manager.has_snapshots())
        except SchemaChangeError as e:
            if e.rule != "column-must-exist" or not e.column:
                raise
            h = self.history()
            current = [f.full_name for f in h.schemas[-1].fields] if h.schemas else []
            hint = unknown_name_hint(h.lineage, e.column, current)
            if not hint:
                raise
            raise with_message(e, f"{e.message} {hint}") from e

    def _commit_changes(self, changes: Sequence[SchemaChange],
                        has_snapshots: bool) -> TableSchema:
        """Commit ``changes`` as the next schema: a schema file of the table's own here; a
        catalog's table sends them to its catalog (:mod:`schemalab.paimon_rest`)."""
        return self.schema_manager.commit_changes(changes, has_snapshots=has_snapshots)

    # ---- writes -------------------------------------------------------------------------------

    def _write_target(self) -> WriteTarget:
        # a branch's snapshots and schemas are its own (meta_path); its data and manifest
        # files go under the table, as Java's FileStorePathFactory puts them
        return WriteTarget(self.path, self.name, self.schema, lambda: self.spark,
                           reader=self._manifests, meta_path=self.meta_path)

    @_public
    def insert(self, data: Any, *, columns: list[str] | tuple[str, ...] | None = None,
               by_position: bool = False, overwrite: bool = False) -> Snapshot | None:
        """Append rows: a Spark DataFrame, a pandas DataFrame, or a list of tuples/dicts.
        Values are cast to the current schema. Returns the new snapshot (None if no rows)."""
        snap = store.insert(self._write_target(), data, columns=columns,
                            by_position=by_position, overwrite=overwrite)
        schema = self.schema
        if snap is not None and schema.primary_keys and \
                check_readable(schema, self.name).skips_level0:
            # As Java's first-row writer: a batch read takes compacted files only, so the
            # commit is followed by a compaction (an APPEND, then a COMPACT snapshot).
            self.compact()
        return snap

    @_public
    def delete_where(self, where: str | None) -> Snapshot | None:
        """DELETE FROM: delete records for today's rows that ``where`` (a Spark SQL condition;
        None: every row) selects. Paimon deletes rows only in primary-key tables."""
        from pyspark.sql import functions as F

        self._check_deletable()
        rows = self.read()
        return self.delete_rows(rows if where is None else rows.where(F.expr(where)))

    @_public
    def delete_rows(self, rows: DataFrame) -> Snapshot | None:
        """Delete records for ``rows``, today's rows already selected (``Warehouse.sql`` passes
        them, so the condition may have subqueries over other tables)."""
        self._check_deletable()
        return store.delete_rows(self._write_target(), rows)

    def _check_deletable(self) -> None:
        if not self.schema.primary_keys:
            raise SqlError(
                f"DELETE FROM {self.name}: Paimon deletes rows only in primary-key tables "
                "(append tables are insert-only); use INSERT OVERWRITE to rewrite a partition.",
                table=self.name, rule="delete-needs-primary-key")

    # ---- reads --------------------------------------------------------------------------------

    @_public
    def live_entries(self, snapshot: Snapshot | None) -> list[ManifestEntry]:
        """The manifest entries of the data files live at ``snapshot``."""
        return [] if snapshot is None else live_files(self.path, snapshot, self._manifests)

    @_public
    def data_files(self, snapshot: Snapshot | None) -> list[DataFile]:
        """The live data files of ``snapshot`` with their paths, decoded partitions and
        deletion vectors (from the snapshot's index manifest)."""
        return data_files(self.path, self.name, snapshot, self.live_entries(snapshot),
                          self.schema_at)

    # ---- what the read pipeline (schemalab.format) asks of a format --------------------------

    def resolve_snapshot(self, snapshot_id: int | None) -> Snapshot | None:
        return self.snapshot(snapshot_id) if snapshot_id is not None else self.latest_snapshot

    def snapshot_schema_id(self, snap: Snapshot) -> int:
        return snap.schema_id

    def snapshot_id_of(self, snap: Snapshot) -> int:
        return snap.id

    def plan(self, snap: Snapshot | None, target: TableSchema) -> ReadPlan:
        files = self.data_files(snap)
        check_files(self.name, self.path, files, self.schema_at, self.meta_path)  # rewritten?
        plan = plan_paimon_read(self.name, target, snap, files, self.schema_at)
        return attach_blobs(plan, self.path, self.live_entries(snap), self.schema_at)

    def file_stats(self, plan: ReadPlan) -> ManifestStats:
        snap = None if plan.snapshot_id is None else self.snapshot(plan.snapshot_id)
        return ManifestStats(self.live_entries(snap), self.schema_at)

    @_public
    def history(self) -> TableHistory:
        """Schema versions with their changes, every field's lineage, and the snapshots
        (whose manifest trees load on demand: ``history().tree(snapshot_id)``); on main also
        the refs, one history per branch, fork points and tags
        (:func:`~schemalab.history.graph.with_refs`). A branch's own history
        (``t.branch("dev").history()``) holds that branch's schemas and snapshots."""
        kept = {tag.snapshot.id: tag.snapshot for tag in paimon_refs.tags_of(self)}
        h = paimon_history(self.path, self.name, self.schema_manager, self.snapshot_manager,
                           self._manifests, kept)
        return with_refs(h, self, branches=self.branch_name == MAIN)

    @_public
    def compact(self, *, partitions: str | None = None, order_strategy: str | None = None,
                order_by: Sequence[str] | str = ()) -> CompactionResult:
        """Paimon's full compaction (``CALL sys.compact``): rewrite the latest snapshot's files
        in today's schema — a primary-key table's buckets merged into one sorted run at the
        top level, an append table's small files into fewer — committed as a COMPACT
        snapshot. ``partitions`` ('p=1;p=2') limits it; ``order_strategy='order'`` with
        ``order_by`` sorts an unaware-bucket append table. A branch compacts its own latest
        snapshot (``t.branch("dev").compact()``)."""
        columns = [c.strip() for c in order_by.split(",")] if isinstance(order_by, str) \
            else list(order_by)

        def live(snap: Snapshot | None) -> list[tuple[ManifestEntry, DataFile]]:
            return list(zip(self.live_entries(snap), self.data_files(snap), strict=True))

        return compact(self._write_target(), live, self.schema_at, partitions=partitions,
                       order_strategy=order_strategy, order_by=[c for c in columns if c],
                       reader=self._manifests)

    @_public
    def system_table(self, name: str) -> DataFrame:
        """Paimon's system table ``name`` (``"snapshots"`` or ``"$snapshots"``; also
        ``schemas``, ``options``, ``tags``, ``branches``, ``manifests``, ``files``,
        ``partitions``, ``buckets``, ``audit_log``, ``row_tracking``) as Java Paimon 2.0
        returns it, as a Spark DataFrame.
        ``wh.sql("SELECT * FROM `t$snapshots`")`` reads the same."""
        key = name.lstrip("$").lower()
        if key in DATA_SYSTEM_TABLES:
            return data_system_table(self, key)
        return system_table(self, name).to_spark(self.spark)

    # ---- the shared read pipeline, as public calls (one schema listing each) ------------------

    @_public
    def read_plan(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
                  ref: str | None = None) -> ReadPlan:
        return super().read_plan(snapshot_id, schema, ref=ref)

    @_public
    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
             ref: str | None = None, system_columns: Sequence[str] = ()) -> DataFrame:
        """``system_columns`` (``"_ROW_ID"``, ``"_SEQUENCE_NUMBER"``) adds a row-tracking
        table's row ids and sequence numbers after its columns, as Paimon reads them."""
        if not system_columns:
            return super().read(snapshot_id, schema, ref=ref)
        plan = with_system_columns(self.read_plan(snapshot_id, schema, ref=ref),
                                   list(system_columns))
        return execute(plan, self.spark)

    @_public
    def explain_read(self, snapshot_id: int | None = None, schema: SchemaChoice = None,
                     key: Any = None, *, ref: str | None = None) -> ReadExplanation:
        return super().explain_read(snapshot_id, schema, key, ref=ref)

    @_public
    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None, *, ref: str | None = None) -> WhyAnswer:
        return super().why(column, where, snapshot_id, schema, ref=ref)
