"""Where a table format plugs in: what every table offers, and the read pipeline every format
shares.

A format package (:mod:`schemalab.paimon`, :mod:`schemalab.iceberg`) supplies only what is
its own — which snapshot an id names (:meth:`FormatTable.resolve_snapshot`), the schema a
snapshot was written with (:meth:`FormatTable.snapshot_schema_id`), its files planned into the
engine's :class:`~schemalab.engine.plan.ReadPlan` (:meth:`FormatTable.plan`), its history
adapter and its write path. The pipeline is written once, here:

    snapshot id → snapshot → target schema → plan → execute (read) / explain / why

    >>> choose_schema("t", "current", 3, lambda: "today", lambda i: f"schema {i}")
    'today'
    >>> choose_schema("t", None, 3, lambda: "today", lambda i: f"schema {i}")
    'schema 3'
    >>> choose_schema("t", 1, None, lambda: "today", lambda i: f"schema {i}")
    'schema 1'
"""

from __future__ import annotations

import dataclasses
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from schemalab.engine.execute import execute
from schemalab.errors import NotFoundError, SchemaLabError
from schemalab.explain.casts import FileStats
from schemalab.explain.key import explain_key
from schemalab.explain.read import ReadExplanation, explain
from schemalab.explain.why import WhyAnswer, why
from schemalab.refs import MAIN, Ref

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.engine.plan import ReadPlan
    from schemalab.history.model import TableHistory

#: which schema a read uses: the snapshot's own (time travel), today's, or a schema id
SchemaChoice = Literal["snapshot", "current"] | int | None

SnapshotT = TypeVar("SnapshotT")
SchemaT = TypeVar("SchemaT")


class SparkSource(Protocol):
    """What a table asks of the warehouse it belongs to: the SparkSession its reads and
    writes run on (a :class:`~schemalab.warehouse.Warehouse` starts it lazily)."""

    @property
    def spark(self) -> SparkSession: ...


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

    @property
    def refs(self) -> list[Ref]: ...

    def branch(self, name: str) -> TableLike: ...

    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
             ref: str | None = None) -> DataFrame: ...

    def read_plan(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
                  ref: str | None = None) -> ReadPlan: ...

    def explain_read(self, snapshot_id: int | None = None, schema: SchemaChoice = None,
                     key: Any = None, *, ref: str | None = None) -> ReadExplanation: ...

    def history(self) -> TableHistory: ...

    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None, *, ref: str | None = None) -> WhyAnswer: ...


def choose_schema(table: str, schema: SchemaChoice, snapshot_schema_id: int | None,
                  current: Callable[[], SchemaT], schema_at: Callable[[int], SchemaT]
                  ) -> SchemaT:
    """The schema a read uses: ``"current"`` (or no snapshot to read) → today's; an int →
    that schema id; ``None``/``"snapshot"`` → the one the snapshot was written with."""
    if schema == "current" or (schema in (None, "snapshot") and snapshot_schema_id is None):
        return current()
    if isinstance(schema, int) and not isinstance(schema, bool):
        return schema_at(schema)
    if schema in (None, "snapshot") and snapshot_schema_id is not None:
        return schema_at(snapshot_schema_id)
    raise SchemaLabError(f"schema must be 'snapshot', 'current' or a schema id, not "
                         f"{schema!r}", table=table, rule="read-schema")


@dataclasses.dataclass(frozen=True)
class RefTarget(Generic[SnapshotT]):
    """What a read of a ref reads: ``table`` (the branch's own table object for a Paimon
    branch, else the table itself), its ``snapshot`` (None: a branch without snapshots), the
    schema that binds unless the caller picks one, and ``why`` that schema binds, in words
    (the first line of explanations)."""

    table: FormatTable[SnapshotT, Any]
    snapshot: SnapshotT | None
    schema: SchemaChoice
    why: str


def unknown_ref(table: str, name: str, refs: Sequence[Ref]) -> NotFoundError:
    """The error for a ref name the table does not have, listing those it has."""
    have = ", ".join(f"{r.kind} {r.name}" for r in refs) or "none"
    return NotFoundError(f"Table {table} has no branch or tag {name!r} (refs: {have})",
                         table=table, rule="ref-must-exist")


class FormatTable(ABC, Generic[SnapshotT, SchemaT]):
    """The read pipeline of a table of any format; a format's table class supplies the
    abstract methods (and ``name``)."""

    name: str

    @property
    @abstractmethod
    def spark(self) -> SparkSession: ...

    @property
    @abstractmethod
    def schema(self) -> SchemaT:
        """Today's schema."""

    @abstractmethod
    def schema_at(self, schema_id: int) -> SchemaT: ...

    @abstractmethod
    def resolve_snapshot(self, snapshot_id: int | None) -> SnapshotT | None:
        """The snapshot ``snapshot_id`` names (None: the table's current one, None if the
        table has none); an unknown id is refused."""

    @abstractmethod
    def snapshot_schema_id(self, snap: SnapshotT) -> int:
        """The schema ``snap`` was written with."""

    @abstractmethod
    def snapshot_id_of(self, snap: SnapshotT) -> int:
        """``snap``'s id."""

    @property
    def refs(self) -> list[Ref]:
        """Every branch and tag, ``main`` first. A format lists its own; this default
        knows only ``main``, at the current snapshot and schema."""
        snap = self.resolve_snapshot(None)
        schema_id = getattr(self.schema, "id", None)
        return [Ref(MAIN, "branch", None if snap is None else self.snapshot_id_of(snap),
                    schema_id if isinstance(schema_id, int) else None)]

    def ref_target(self, ref: str) -> RefTarget[SnapshotT]:
        """What a read of branch or tag ``ref`` reads (see :class:`RefTarget`); an unknown
        name is refused listing the refs there are. A format overrides this for its own
        refs; this default reads ``main`` in today's schema."""
        if ref == MAIN:
            return RefTarget(self, self.resolve_snapshot(None), "current",
                             "branch main: its current schema binds")
        raise unknown_ref(self.name, ref, self.refs)

    def branch(self, name: str) -> FormatTable[SnapshotT, SchemaT]:
        """A table object for branch ``name`` (``main`` is the table itself)."""
        if name == MAIN:
            return self
        raise unknown_ref(self.name, name, self.refs)

    @abstractmethod
    def plan(self, snap: SnapshotT | None, target: SchemaT) -> ReadPlan:
        """The format's files of ``snap`` planned into the engine's read plan."""

    @abstractmethod
    def history(self) -> TableHistory: ...

    def file_stats(self, plan: ReadPlan) -> FileStats | None:
        """The files' own value statistics, for explanations (None: the format keeps none
        that explanations use)."""
        return None

    def target_schema(self, snap: SnapshotT | None, schema: SchemaChoice) -> SchemaT:
        """The schema a read of ``snap`` uses (see :func:`choose_schema`)."""
        sid = None if snap is None else self.snapshot_schema_id(snap)
        return choose_schema(self.name, schema, sid, lambda: self.schema, self.schema_at)

    def read_plan(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
                  ref: str | None = None) -> ReadPlan:
        """How a read of ``snapshot_id`` (default: the current snapshot, in today's schema)
        gets each column from each group of files: the plan that :meth:`read` runs and
        :meth:`explain_read` describes. ``ref`` reads a branch head or a tag instead, with
        the schema the format binds for it (see :meth:`ref_target`)."""
        if ref is not None:
            if snapshot_id is not None:
                raise SchemaLabError(f"Table {self.name}: read a snapshot id or a ref, not both "
                                     f"(snapshot {snapshot_id}, ref {ref!r})", table=self.name,
                                     rule="one-read-target")
            target = self.ref_target(ref)
            tbl = target.table
            chosen = target.schema if schema is None else schema
            plan = tbl.plan(target.snapshot, tbl.target_schema(target.snapshot, chosen))
            return dataclasses.replace(plan, binding=target.why if schema is None else None)
        snap = self.resolve_snapshot(snapshot_id)
        if snapshot_id is None and schema is None:
            schema = "current"
        return self.plan(snap, self.target_schema(snap, schema))

    def read(self, snapshot_id: int | None = None, schema: SchemaChoice = None, *,
             ref: str | None = None) -> DataFrame:
        """The evolved read as one Spark DataFrame.

        ``snapshot_id=None`` reads the current snapshot in the current schema. With a
        snapshot id the read uses *that snapshot's* schema (time travel, as Paimon and
        Iceberg do); ``schema="current"`` projects the old snapshot onto today's schema
        instead, and an int picks any schema id. ``ref`` reads a branch head or a tag."""
        return execute(self.read_plan(snapshot_id, schema, ref=ref), self.spark)

    def explain_read(self, snapshot_id: int | None = None, schema: SchemaChoice = None,
                     key: Any = None, *, ref: str | None = None) -> ReadExplanation:
        """For each group of files, how each output column of the read is produced, and why
        a value is NULL, a partition value, a default or cast: the explanation of the plan
        :meth:`read` runs. For a primary-key table, ``key`` (``{"id": 1}`` or the key's
        values in primary-key order) adds every version of that key and which one won."""
        plan = self.read_plan(snapshot_id, schema, ref=ref)
        tbl = self if ref is None else self.ref_target(ref).table
        out = explain(plan, tbl.history(), tbl.file_stats(plan))
        if key is None:
            return out
        return dataclasses.replace(out, key=explain_key(plan, self.spark, key))

    def why(self, column: str, where: str | None = None, snapshot_id: int | None = None,
            schema: SchemaChoice = None, *, ref: str | None = None) -> WhyAnswer:
        """Why ``column`` (``a.b`` for a nested field) reads as it does — NULL, cast, or
        another column's old data — for the rows ``where`` (a Spark SQL condition) selects:
        the plan :meth:`explain_read` describes, run and counted per schema version of the
        files, with the field's history."""
        tbl = self if ref is None else self.ref_target(ref).table
        return why(self.read_plan(snapshot_id, schema, ref=ref), tbl.history(), self.spark,
                   column, where)


def name_from_path(path: str) -> str:
    """``db.table`` for a table directory ``.../<db>.db/<table>``, else the directory's name."""
    table = os.path.basename(path)
    db = os.path.basename(os.path.dirname(path))
    return f"{db[:-3]}.{table}" if db.endswith(".db") else table
