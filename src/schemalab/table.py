"""One table: its schema versions, snapshots, writes and evolved reads.

:class:`TableLike` is what every table schemalab opens offers — a Paimon :class:`Table` and
an Iceberg table alike — and what the widgets and the CLI are written against.

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

import dataclasses
import functools
import os
import threading
from collections.abc import Callable, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Literal,
    ParamSpec,
    Protocol,
    TypeVar,
    runtime_checkable,
)

from schemalab import fileio
from schemalab.engine import store
from schemalab.engine.compact import CompactionResult, compact
from schemalab.engine.plan import DataFile, FileFormat, PositionDeletes, ReadPlan, plan_read
from schemalab.engine.read import execute
from schemalab.engine.write import WriteTarget
from schemalab.errors import (
    SchemaChangeError,
    SchemaLabError,
    SqlError,
    TableNotFoundError,
    with_message,
)
from schemalab.explain.casts import FileStats
from schemalab.explain.key import explain_key
from schemalab.explain.read import ReadExplanation, explain
from schemalab.explain.why import WhyAnswer, why
from schemalab.history.model import TableHistory
from schemalab.history.names import unknown_name_hint
from schemalab.history.paimon import paimon_history
from schemalab.paimon.features import check_readable_features, check_whole_rows
from schemalab.paimon.index import deletion_files, index_files
from schemalab.paimon.manifest import ManifestEntry
from schemalab.paimon.primary_key import check_readable, file_key_range, key_range_ordered
from schemalab.paimon.scan import BucketDirs, ManifestReader, live_files, partition_values
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.paimon.system_tables import system_table
from schemalab.schema.changes import SchemaChange
from schemalab.schema.table_schema import TableSchema
from schemalab.spark import default_session
from schemalab.types.casts import cast_mode

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.warehouse import Warehouse

#: which schema a read uses: the snapshot's own (time travel), today's, or a schema id
SchemaChoice = Literal["snapshot", "current"] | int | None


@runtime_checkable
class TableLike(Protocol):
    """A table of any format, as the explorer uses it. ``schema``, ``schemas`` and
    ``snapshots`` are the format's own values; :meth:`history` is the format-neutral view
    of all of them."""

    name: str
    path: str

    @property
    def schema(self) -> Any: ...

    @property
    def schemas(self) -> Sequence[Any]: ...

    @property
    def snapshots(self) -> Sequence[Any]: ...

    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None) -> DataFrame:
        ...

    def read_plan(self, snapshot_id: int | None = None,
                  schema: SchemaChoice = None) -> ReadPlan: ...

    def explain_read(self, snapshot_id: int | None = None,
                     schema: SchemaChoice = None) -> ReadExplanation: ...

    def history(self) -> TableHistory: ...

    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None) -> WhyAnswer: ...


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


class Table:
    """A Paimon table directory. ``name`` is ``db.table`` and appears in every error.

    What a table object reads it reads once: each manifest list and manifest once per object
    (they never change once written), and the schema directory once per public call — the
    first call after opening uses the listing made when the table was opened
    (:meth:`Warehouse.table`), a commit of this object adds its own schema, and every later
    public call (``t.schema``, ``t.read()``, ...) lists again, so schemas other writers commit
    show from the next call on."""

    def __init__(self, path: str, name: str | None = None, *,
                 warehouse: Warehouse | None = None, spark: SparkSession | None = None) -> None:
        self.path = fileio.normalize(path)
        self.name = name or name_from_path(self.path)
        self.warehouse = warehouse
        self._spark = spark
        self.schema_manager = SchemaManager(self.path, self.name, keep_listing=True)
        self.snapshot_manager = SnapshotManager(self.path, self.name)
        self._manifests = ManifestReader(self.path)
        self._calls = threading.local()

    @_public
    def __repr__(self) -> str:
        return f"Table({self.name!r}, schema={self.schema.id}, " \
               f"snapshot={self.snapshot_manager.latest_id()})"

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
        if snapshot_id not in self.snapshot_manager.list_ids():
            raise SchemaLabError(f"Table {self.name} has no snapshot {snapshot_id} (snapshots: "
                                 f"{self.snapshot_manager.list_ids()})", table=self.name,
                                 rule="snapshot-must-exist")
        return self.snapshot_manager.get(snapshot_id)

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
            return self.schema_manager.commit_changes(
                changes, has_snapshots=self.snapshot_manager.has_snapshots())
        except SchemaChangeError as e:
            if e.rule != "column-must-exist" or not e.column:
                raise
            h = self.history()
            current = [f.full_name for f in h.schemas[-1].fields] if h.schemas else []
            hint = unknown_name_hint(h.lineage, e.column, current)
            if not hint:
                raise
            raise with_message(e, f"{e.message} {hint}") from e

    # ---- writes -------------------------------------------------------------------------------

    def _write_target(self) -> WriteTarget:
        return WriteTarget(self.path, self.name, self.schema, lambda: self.spark)

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
        dvs = deletion_files(self.path, index_files(self.path, snapshot)) if snapshot else {}
        out = []
        dirs = BucketDirs(self.path)
        entries = self.live_entries(snapshot)
        check_whole_rows(entries, self.name)
        for e in entries:
            s = self.schema_at(e.file.schema_id)
            path = dirs.data_file_path(e, s)
            fileio.check_data_file(path, e.file.file_size, table=self.name)
            dv = dvs.get((e.partition, e.bucket, e.file.file_name))
            deletes = () if dv is None else (PositionDeletes(
                "deletion vector", dv.index_file, dv.cardinality, load=dv.positions),)
            out.append(DataFile(
                path=path, schema_id=s.id, row_count=e.file.row_count,
                partition=partition_values(e, s), bucket=e.bucket,
                file_size=e.file.file_size, level=e.file.level,
                min_sequence_number=e.file.min_sequence_number,
                max_sequence_number=e.file.max_sequence_number,
                delete_row_count=e.file.delete_row_count,
                key_range=file_key_range(e.file.min_key, e.file.max_key, s)
                if s.primary_keys and key_range_ordered(s) else None,
                format=_file_format(e.file.file_name, s), deletes=deletes))
        return out

    def _target_schema(self, snapshot: Snapshot | None, schema: SchemaChoice) -> TableSchema:
        if schema == "current" or (schema in (None, "snapshot") and snapshot is None):
            return self.schema
        if isinstance(schema, int) and not isinstance(schema, bool):
            return self.schema_at(schema)
        if schema in (None, "snapshot") and snapshot is not None:
            return self.schema_at(snapshot.schema_id)
        raise SchemaLabError(f"schema must be 'snapshot', 'current' or a schema id, not "
                             f"{schema!r}", table=self.name, rule="read-schema")

    @_public
    def read_plan(self, snapshot_id: int | None = None, schema: SchemaChoice = None) -> ReadPlan:
        """How a read of ``snapshot_id`` (default: latest) would produce each column."""
        snap = self.snapshot(snapshot_id) if snapshot_id is not None else self.latest_snapshot
        if snapshot_id is None and schema is None:
            schema = "current"
        target = self._target_schema(snap, schema)
        check_readable_features(target, self.name)
        try:
            mode = cast_mode(target.effective_options())
        except ValueError as e:
            raise SchemaLabError(f"Table {self.name}: {e}", table=self.name,
                                 rule="cast-mode") from None
        merge = None
        files = self.data_files(snap)
        options = (target if snap is None else self.schema_at(snap.schema_id)
                   ).effective_options()
        dv_mode = False
        if target.primary_keys:
            opts = check_readable(target, self.name)
            merge = opts.engine
            # Paimon's deletion-vector mode: compaction marks replaced rows in deletion
            # vectors, so a batch read takes the files of level > 0 with their vectors and
            # merges nothing; level-0 files are not visible until compacted (Java's
            # KeyValueFileStoreScan level filter, MergeTreeSplitGenerator raw splits).
            dv_mode = options.get("deletion-vectors.enabled", "false").lower() == "true"
            if opts.skips_level0 and not dv_mode:
                # first-row: Java's batch scan takes compacted files only
                files = [f for f in files if f.level > 0]
        skipped = [f for f in files if dv_mode and f.level == 0]
        return plan_read(self.name, target, [f for f in files if not dv_mode or f.level > 0],
                         lambda f: self.schema_at(f.schema_id), mode,
                         snapshot_id=None if snap is None else snap.id, merge_engine=merge,
                         deletion_vectors=dv_mode, skipped=skipped)

    @_public
    def history(self) -> TableHistory:
        """Schema versions with their changes, every field's lineage, and the snapshots
        (whose manifest trees load on demand: ``history().tree(snapshot_id)``)."""
        return paimon_history(self.path, self.name, self.schema_manager,
                              self.snapshot_manager, self._manifests)

    @_public
    def explain_read(self, snapshot_id: int | None = None, schema: SchemaChoice = None,
                     key: Any = None) -> ReadExplanation:
        """For each group of files, how each output column of the read is produced, and why
        a value is NULL or cast. For a primary-key table, ``key`` (``{"id": 1}`` or the key's
        values in primary-key order) adds every version of that key and which one won."""
        plan = self.read_plan(snapshot_id, schema)
        snap = None if plan.snapshot_id is None else self.snapshot(plan.snapshot_id)
        stats = FileStats(self.live_entries(snap), self.schema_at)
        out = explain(plan, self.history(), stats)
        if key is None:
            return out
        return dataclasses.replace(out, key=explain_key(plan, self.spark, key))

    @_public
    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None) -> WhyAnswer:
        """Why ``column`` (``a.b`` for a nested field) reads as it does — NULL, cast, or
        another column's old data — for the rows ``where`` (a Spark SQL condition) selects:
        the plan :meth:`explain_read` describes, run and counted per schema version of the
        files, with the field's history."""
        return why(self.read_plan(snapshot_id, schema), self.history(), self.spark, column,
                   where)

    @_public
    def compact(self, *, partitions: str | None = None, order_strategy: str | None = None,
                order_by: Sequence[str] | str = ()) -> CompactionResult:
        """Paimon's full compaction (``CALL sys.compact``): rewrite the latest snapshot's files
        in today's schema — a primary-key table's buckets merged into one sorted run at the
        top level, an append table's small files into fewer — committed as a COMPACT
        snapshot. ``partitions`` ('p=1;p=2') limits it; ``order_strategy='order'`` with
        ``order_by`` sorts an unaware-bucket append table."""
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
        ``partitions``, ``buckets``) as Java Paimon 2.0 returns it, as a Spark DataFrame.
        ``wh.sql("SELECT * FROM `t$snapshots`")`` reads the same."""
        return system_table(self, name).to_spark(self.spark)

    @_public
    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None) -> DataFrame:
        """The evolved read as one Spark DataFrame.

        ``snapshot_id=None`` reads the latest snapshot in the current schema. With a snapshot
        id the read uses *that snapshot's* schema, as Paimon and Iceberg do; pass
        ``schema="current"`` to see the old snapshot through today's schema instead."""
        return execute(self.read_plan(snapshot_id, schema), self.spark)


def _file_format(file_name: str, schema: TableSchema) -> FileFormat:
    """A data file's format: its name's extension, else the table's ``file.format`` (which
    schema files of version <= 2 imply to be ORC)."""
    ext = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    fmt = ext if ext in ("parquet", "orc", "avro") else \
        schema.effective_options().get("file.format", "parquet").lower()
    if fmt not in ("parquet", "orc", "avro"):
        raise SchemaLabError(f"data file {file_name} is in format {fmt!r}; schemalab reads "
                             "Parquet, ORC and Avro data files", rule="file-format")
    return fmt  # type: ignore[return-value]


def name_from_path(path: str) -> str:
    """``db.table`` for a table directory ``.../<db>.db/<table>``, else the directory's name."""
    table = os.path.basename(path)
    db = os.path.basename(os.path.dirname(path))
    return f"{db[:-3]}.{table}" if db.endswith(".db") else table
