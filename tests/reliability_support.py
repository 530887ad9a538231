"""Shared machinery of the reliability tests and of ``bench/reliability_report.py``.

* A tiny, independent **reference model** of a table (:class:`TableModel`): schema versions
  whose fields carry model identities (never Paimon's ids), and the rows of every INSERT in
  the schema they were written with. It predicts which ALTERs Paimon's rules refuse, and what
  a read of any snapshot returns in any schema: added → NULL, dropped → gone, renamed and
  moved → by identity, retyped along INT→BIGINT, INT→DOUBLE, INT→STRING, FLOAT→DOUBLE.
* Hypothesis strategies of random CREATE / INSERT / ALTER sequences (:func:`sequences`),
  generated against the model so that most ALTERs are valid and some are refused on purpose.
* :class:`SequenceRun` replays a sequence on a real :class:`schemalab.Warehouse` next to the
  model, and :func:`verify_runs` checks every read of many runs in **one** Spark job: each
  read (every snapshot with its own schema, and the current schema) becomes a column of
  ``to_json(struct(*))`` strings tagged with the read, and the union is collected once.
* pypaimon reads of the same tables, compared with the same model (:func:`pypaimon_problems`).
* Metadata checks for after faults (:func:`metadata_problems`, :func:`hidden_files`).
* Child-process entry points for the concurrency and crash tests (``python
  reliability_support.py alter-loop|insert-loop ...``), which log a line only *after* each
  commit succeeded.

Nothing here is a test itself; tests import it (pytest puts ``tests/`` on ``sys.path``) and
so does the bench script (which loads it from its file).
"""

from __future__ import annotations

import itertools
import json
import os
import struct
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from schemalab.errors import SchemaLabError
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnPosition,
    UpdateColumnType,
    sql_string,
)
from schemalab.types.model import (
    AtomicType,
    DataType,
    RowType,
    TypeRoot,
    quote_identifier,
)
from schemalab.types.parse import parse_type

# ============================================================================================
# The model
# ============================================================================================

ATOMIC = ("INT", "BIGINT", "FLOAT", "DOUBLE", "STRING")
_ROOT_NAMES = {TypeRoot.INTEGER: "INT", TypeRoot.BIGINT: "BIGINT", TypeRoot.FLOAT: "FLOAT",
               TypeRoot.DOUBLE: "DOUBLE", TypeRoot.VARCHAR: "STRING"}
#: (from, to) → "implicit" | "explicit": the only type changes the sequences make
CASTS = {("INT", "BIGINT"): "implicit", ("INT", "DOUBLE"): "implicit",
         ("INT", "STRING"): "explicit", ("FLOAT", "DOUBLE"): "implicit"}
CAST_MODES = ("implicit", "explicit", "explicit-null")
#: Spark's typeName() of each model type
_SPARK_NAMES = {"INT": "integer", "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double",
                "STRING": "string"}


@dataclass(frozen=True)
class MField:
    """A field of the model: ``key`` is its identity, stable across renames and moves."""

    key: int
    name: str
    type: MType


@dataclass(frozen=True)
class MRow:
    fields: tuple[MField, ...]


MType = str | MRow


def type_text(t: MType) -> str:
    if isinstance(t, MRow):
        return "ROW<" + ", ".join(f"{quote_identifier(f.name)} {type_text(f.type)}"
                                  for f in t.fields) + ">"
    return t


def dtype(t: MType) -> DataType:
    return parse_type(type_text(t))


def shape(t: MType) -> Any:
    """A comparable form of a type: atomic name, or ("ROW", ((name, shape), ...))."""
    if isinstance(t, MRow):
        return ("ROW", tuple((f.name, shape(f.type)) for f in t.fields))
    return t


def real_shape(t: DataType) -> Any:
    """:func:`shape` of a schemalab type (NOT NULL marked, so it never equals the model's)."""
    if isinstance(t, RowType):
        out: Any = ("ROW", tuple((f.name, real_shape(f.type)) for f in t.fields))
    elif isinstance(t, AtomicType):
        out = _ROOT_NAMES.get(t.root, t.sql())
    else:
        out = t.sql()
    return out if t.nullable else ("NOT NULL", out)


def spark_shape(t: MType) -> Any:
    if isinstance(t, MRow):
        return ("struct", tuple((f.name, spark_shape(f.type)) for f in t.fields))
    return _SPARK_NAMES[t]


def real_spark_shape(t: Any) -> Any:
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return ("struct", tuple((f.name, real_spark_shape(f.dataType)) for f in t.fields))
    return t.typeName()


def _sequence_groups(options: Iterable[tuple[str, str]]
                     ) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``fields.<seq fields>.sequence-group = <members>`` options."""
    return [(tuple(k[len("fields."):-len(".sequence-group")].split(",")),
             tuple(m.strip() for m in v.split(",") if m.strip()))
            for k, v in options if k.startswith("fields.") and k.endswith(".sequence-group")]


@dataclass(frozen=True)
class MSchema:
    fields: tuple[MField, ...]
    options: tuple[tuple[str, str], ...] = ()
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def protected(self) -> tuple[str, ...]:
        """Columns the sequences never rename, drop or retype: partition and primary keys,
        and the merge options' columns (``sequence.field``)."""
        seq = tuple(x for x in (self.option("sequence.field") or "").split(",") if x)
        for group, members in _sequence_groups(self.options):
            seq += group + members
        return self.partition_keys + self.primary_keys + seq

    @property
    def sequence_columns(self) -> tuple[str, ...]:
        """Key and sequence columns: the sequences fill them with small integers."""
        seq = tuple(x for x in (self.option("sequence.field") or "").split(",") if x)
        for group, _ in _sequence_groups(self.options):
            seq += group
        return self.primary_keys + seq


    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)

    def shape(self) -> tuple[Any, ...]:
        # primary-key columns are NOT NULL (Paimon makes them so at CREATE)
        return tuple((f.name, ("NOT NULL", shape(f.type)) if f.name in self.primary_keys
                      else shape(f.type)) for f in self.fields)


class Refused(Exception):
    """The model's prediction that Paimon's rules refuse an ALTER."""


@dataclass
class MSnapshot:
    schema_index: int            # the table's latest schema when it was committed
    write_schema_index: int      # the schema its rows were written in
    rows: list[dict[int, Any]]   # key → value (ROW values: dict key → value, or None)
    #: "+I" (INSERT: rows, upserts in a primary-key table), "-D" (DELETE: a delete record
    #: per row, holding the row as it read), "compact" (no rows)
    kind: str = "+I"


def _find(fields: Sequence[MField], name: str) -> int:
    return next((i for i, f in enumerate(fields) if f.name == name), -1)


class TableModel:
    """What a table must contain: schema versions and the rows of every snapshot."""

    def __init__(self, create: Create) -> None:
        self._keys = itertools.count()
        fields = tuple(MField(next(self._keys), name, self.fresh(t)) for name, t in create.columns)
        self.schemas = [MSchema(fields, tuple(sorted(create.options)), create.partition_keys,
                                create.primary_keys)]
        self.snapshots: list[MSnapshot] = []

    def fresh(self, t: DataType | MType) -> MType:
        """A model type with new identities for every (nested) field."""
        if isinstance(t, MRow):
            return MRow(tuple(MField(next(self._keys), f.name, self.fresh(f.type))
                              for f in t.fields))
        if isinstance(t, str):
            return t
        if isinstance(t, RowType):
            return MRow(tuple(MField(next(self._keys), f.name, self.fresh(f.type))
                              for f in t.fields))
        assert isinstance(t, AtomicType), t
        return _ROOT_NAMES[t.root]

    @property
    def schema(self) -> MSchema:
        return self.schemas[-1]

    # ---- ALTER ------------------------------------------------------------------------------

    def alter(self, changes: Sequence[Any]) -> MSchema:
        """Apply ``changes`` as one ALTER; :class:`Refused` leaves the model unchanged."""
        s = self.schema
        fields, options = s.fields, dict(s.options)
        for ch in changes:
            if isinstance(ch, SetOption) and dict(s.options).get(ch.key) == ch.value:
                # Java's generateTableSchema skips a SET to the value the ALTER started from,
                # even after an earlier SET of the key in the same ALTER (schemalab follows)
                continue
            fields, options = self._apply(ch, fields, options,
                                          s.partition_keys + s.primary_keys)
        new = MSchema(fields, tuple(sorted(options.items())), s.partition_keys, s.primary_keys)
        self.schemas.append(new)
        return new

    def _apply(self, ch: Any, fields: tuple[MField, ...], options: dict[str, str],
               partition_keys: tuple[str, ...]) -> tuple[tuple[MField, ...], dict[str, str]]:
        top = getattr(ch, "path", ("",))[0] if hasattr(ch, "path") else None
        is_top = hasattr(ch, "path") and len(ch.path) == 1
        if isinstance(ch, SetOption):
            if ch.key == "cast.mode" and ch.value not in CAST_MODES:
                raise Refused(f"cast.mode {ch.value!r}")
            return fields, {**options, ch.key: ch.value}
        if isinstance(ch, RemoveOption):
            return fields, {k: v for k, v in options.items() if k != ch.key}
        if isinstance(ch, UpdateColumnPosition):
            return _move(fields, ch.move), options
        if is_top and top in partition_keys and not isinstance(ch, AddColumn):
            raise Refused(f"partition or primary key {top}")
        if isinstance(ch, AddColumn):
            new = MField(next(self._keys), ch.path[-1], self.fresh(ch.data_type))

            def add(fs: tuple[MField, ...]) -> tuple[MField, ...]:
                if _find(fs, new.name) >= 0:
                    raise Refused(f"{new.name} exists")
                if ch.move is None:
                    return (*fs, new)
                if ch.move.kind == "FIRST":
                    return (new, *fs)
                at = _find(fs, ch.move.reference or "")
                if at < 0:
                    raise Refused(f"no {ch.move.reference}")
                return (*fs[:at + 1], new, *fs[at + 1:])
            return _edit(fields, ch.path[:-1], add), options
        if isinstance(ch, DropColumn):
            def drop(fs: tuple[MField, ...]) -> tuple[MField, ...]:
                at = _find(fs, ch.path[-1])
                if at < 0:
                    raise Refused(f"no {ch.path[-1]}")
                if len(fs) == 1:
                    raise Refused("cannot drop all fields")
                return fs[:at] + fs[at + 1:]
            return _edit(fields, ch.path[:-1], drop), options
        if isinstance(ch, RenameColumn):
            def rename(fs: tuple[MField, ...]) -> tuple[MField, ...]:
                at = _find(fs, ch.path[-1])
                if at < 0:
                    raise Refused(f"no {ch.path[-1]}")
                if _find(fs, ch.new_name) >= 0:
                    raise Refused(f"{ch.new_name} exists")
                return fs[:at] + (MField(fs[at].key, ch.new_name, fs[at].type),) + fs[at + 1:]
            return _edit(fields, ch.path[:-1], rename), options
        if isinstance(ch, UpdateColumnType):
            mode = options.get("cast.mode", "explicit")

            def retype(fs: tuple[MField, ...]) -> tuple[MField, ...]:
                at = _find(fs, ch.path[-1])
                if at < 0:
                    raise Refused(f"no {ch.path[-1]}")
                old = fs[at].type
                new_t = ch.new_type
                if not isinstance(old, str) or not isinstance(new_t, AtomicType):
                    raise Refused("only atomic retypes are modelled")
                target = _ROOT_NAMES[new_t.root]
                kind = CASTS.get((old, target))
                if kind is None:
                    raise Refused(f"{old} → {target}")
                if kind == "explicit" and mode == "implicit":
                    raise Refused(f"{old} → {target} is explicit")
                return fs[:at] + (MField(fs[at].key, fs[at].name, target),) + fs[at + 1:]
            return _edit(fields, ch.path[:-1], retype), options
        raise AssertionError(f"unmodelled change {ch!r}")

    # ---- INSERT -----------------------------------------------------------------------------

    def insert(self, rows: Sequence[Sequence[Any]]) -> None:
        s = self.schema
        stored = [{f.key: _store(v, f.type) for f, v in zip(s.fields, r, strict=True)}
                  for r in rows]
        i = len(self.schemas) - 1
        self.snapshots.append(MSnapshot(i, i, stored))
        if s.primary_keys and MergeSpec.of(s).engine == "first-row":
            # as Java's first-row writer, whose batch reads take compacted files only: the
            # commit is followed by a compaction (an APPEND, then a COMPACT snapshot)
            self.compact()

    # ---- reads -------------------------------------------------------------------------------

    def target(self, snapshot_id: int | None) -> MSchema:
        """The schema of a read: the snapshot's own, or the current one (``None``)."""
        if snapshot_id is None:
            return self.schema
        return self.schemas[self.snapshots[snapshot_id - 1].schema_index]

    def expected(self, snapshot_id: int | None) -> list[tuple[Any, ...]]:
        """Canonical rows (see :func:`canon`) of a read, sorted: evolution first (every
        version read in the target schema), then, in a primary-key table, the merge."""
        upto = len(self.snapshots) if snapshot_id is None else snapshot_id
        target = self.target(snapshot_id)
        versions: list[Version] = []
        for si, snap in enumerate(self.snapshots[:upto]):
            written = {f.key: f for f in self.schemas[snap.write_schema_index].fields}
            for ri, r in enumerate(snap.rows):
                versions.append(Version(snap.kind, si, ri, tuple(
                    (f.name, _expect(r.get(f.key), written[f.key].type if f.key in written
                                     else None, f.type)) for f in target.fields)))
        if not target.primary_keys:
            return sorted((v.row for v in versions), key=repr)
        compacted = [si for si, snap in enumerate(self.snapshots[:upto])
                     if snap.kind == "compact"]
        return sorted(merge(target, versions, compacted[-1] if compacted else -1), key=repr)

    # ---- DELETE and compaction ------------------------------------------------------------

    def delete(self, where: Where | None) -> bool:
        """DELETE FROM: a delete record for each row today's read shows that ``where``
        selects; whether that makes a snapshot (none when no row is selected, nor with
        ``ignore-delete``, whose delete records are not written). :class:`Refused` on an
        append table (Paimon deletes only in primary-key tables)."""
        s = self.schema
        if not s.primary_keys:
            raise Refused("DELETE on an append table")
        rows = [r for r in self.expected(None) if where is None or where.matches(r)]
        if not rows or MergeSpec.of(s).ignore_delete:
            return False
        stored = [{f.key: _uncanon(v, f.type) for f, (_, v) in zip(s.fields, r, strict=True)}
                  for r in rows]
        i = len(self.schemas) - 1
        self.snapshots.append(MSnapshot(i, i, stored, "-D"))
        return True

    def compact(self) -> bool:
        """A full compaction; whether it makes a snapshot: only when there are live files
        and some are not yet compacted, i.e. a write or an ALTER since the last compaction
        (which rewrites every bucket into one top-level file in today's schema, and writes
        no file for a bucket whose keys all merged away)."""
        snaps = self.snapshots
        last = max((i for i, x in enumerate(snaps) if x.kind == "compact"), default=-1)
        written = any(x.kind != "compact" for x in snaps[last + 1:])
        if last < 0:
            files, dirty = written, written
        else:
            files = written or bool(self.expected(last + 1))
            dirty = written or snaps[last].schema_index != len(self.schemas) - 1
        if not (files and dirty):
            return False
        i = len(self.schemas) - 1
        snaps.append(MSnapshot(i, i, [], "compact"))
        return True


# ---- the merge of a primary-key table, as Paimon's documentation describes it ------------------
#
# Written from Paimon 1.0's docs (primary-key-table/merge-engine/*, sequence-rowkind) and its
# MergeFunction classes, over the model's canonical values; never schemalab's merge code.

IGNORE_DELETE_KEYS = ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                      "partial-update.ignore-delete")
#: aggregate functions that accept retraction (-U/-D) in Paimon 1.0
RETRACTING = ("sum", "last_value", "last_non_null_value")


@dataclass(frozen=True)
class Version:
    """One record of a key: its kind, commit (snapshot index) and place in it, and its row
    in the read schema (canonical values)."""

    kind: str
    commit: int
    place: int
    row: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class MergeSpec:
    engine: str
    ignore_delete: bool
    sequence_field: str | None
    remove_record_on_delete: bool
    default_aggregate: str
    groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()

    @staticmethod
    def of(s: MSchema) -> MergeSpec:
        o = dict(s.options)
        return MergeSpec(o.get("merge-engine", "deduplicate"),
                         any(o.get(k) == "true" for k in IGNORE_DELETE_KEYS),
                         o.get("sequence.field"),
                         o.get("partial-update.remove-record-on-delete") == "true",
                         o.get("fields.default-aggregate-function", "last_non_null_value"),
                         tuple(_sequence_groups(s.options)))

    @property
    def deletes(self) -> bool:
        """Whether a DELETE reads back without failing (Paimon's rules: partial-update and
        first-row need ignore-delete (or remove-record-on-delete), aggregation a function that
        retracts)."""
        if self.ignore_delete or self.engine == "deduplicate":
            return True
        if self.engine == "partial-update":
            return self.remove_record_on_delete
        return self.engine == "aggregation" and self.default_aggregate in RETRACTING


def merge(target: MSchema, versions: list[Version], compacted: int) -> list[tuple[Any, ...]]:
    """The rows of a primary-key table: each key's versions in order (``sequence.field``
    value, then commit order, then order within the commit), merged by the merge engine.
    ``compacted``: the index of the last compaction (-1: none), for first-row, whose batch
    read sees compacted files only."""
    spec = MergeSpec.of(target)
    names = target.names
    keys = [names.index(k) for k in target.primary_keys]
    seq = names.index(spec.sequence_field) if spec.sequence_field else None

    def order(v: Version) -> tuple[Any, ...]:
        return ((v.row[seq][1][1],) if seq is not None else ()) + (v.commit, v.place)

    by_key: dict[tuple[Any, ...], list[Version]] = {}
    for v in sorted(versions, key=order):
        if spec.ignore_delete and v.kind == "-D":
            continue
        if spec.engine == "first-row" and v.commit > compacted:
            continue
        by_key.setdefault(tuple(v.row[i] for i in keys), []).append(v)
    out = []
    for vs in by_key.values():
        values = _merge_key(spec, names, keys, vs)
        if values is not None:
            out.append(tuple(zip(names, values, strict=True)))
    return out


def _merge_key(spec: MergeSpec, names: list[str], keys: list[int], vs: list[Version]
               ) -> list[Any] | None:
    n = len(names)
    if len(vs) == 1:
        # Java's ReducerMergeFunctionWrapper: a key's only record is returned as it is,
        # without the merge function (a partial-update row whose sequence group is NULL
        # keeps its group's values)
        return None if vs[0].kind == "-D" else [v for _, v in vs[0].row]
    if spec.engine == "deduplicate":
        last = vs[-1]
        return None if last.kind == "-D" else [v for _, v in last.row]
    if spec.engine == "first-row":
        first = vs[0]
        assert first.kind == "+I", "first-row meets deletes only with ignore-delete"
        return [v for _, v in first.row]
    acc: list[Any] = [None] * n
    for i in keys:
        acc[i] = vs[0].row[i][1]
    if spec.engine == "partial-update":
        deleted = True
        for v in vs:
            if v.kind == "-D":  # remove-record-on-delete: the row starts afresh
                assert spec.remove_record_on_delete
                acc = [v.row[i][1] if i in keys else None for i in range(n)]
                deleted = True
                continue
            deleted = False
            if spec.groups:
                acc = _update_groups(spec, names, acc, v)
                continue
            for i, (_, x) in enumerate(v.row):
                if x is not None:
                    acc[i] = x
        return None if deleted else acc
    assert spec.engine == "aggregation", spec.engine
    f = spec.default_aggregate
    started = [False] * n
    for v in vs:
        for i, (_, x) in enumerate(v.row):
            if i in keys:
                continue
            if v.kind == "+I":
                acc[i], started[i] = _agg(f, acc[i], x, started[i])
            else:
                acc[i] = _retract(f, acc[i], x)
    return acc  # an aggregated key always reads (retracted values included)


def _update_groups(spec: MergeSpec, names: list[str], acc: list[Any], v: Version
                   ) -> list[Any]:
    """Partial-update with sequence groups (Paimon docs, "Sequence Group"): a field outside
    every group takes the record's value unless NULL; a group's sequence fields and members
    take the record's values (NULL too) when the record's sequence fields are not all NULL
    and compare at least equal to the row's (NULL is the smallest)."""
    group_of: dict[int, list[int]] = {}
    for seqs, members in spec.groups:
        at = [names.index(x) for x in seqs if x in names]
        for c in (*seqs, *members):
            if c in names:
                group_of[names.index(c)] = at

    def rank(x: Any) -> tuple[int, Any]:
        return (0, 0) if x is None else (1, x[1])

    new = list(acc)
    for i, (_, x) in enumerate(v.row):
        group = group_of.get(i)
        if group is None:
            if x is not None:
                new[i] = x
            continue
        if all(v.row[j][1] is None for j in group):
            continue  # an empty sequence group is skipped
        if [rank(v.row[j][1]) for j in group] >= [rank(acc[j]) for j in group]:
            new[i] = x
    return new


def _arith(a: Any, b: Any, sign: int) -> Any:
    """a + sign·b on canonical numbers, in their type (FLOAT rounds to float32)."""
    tag = b[0] if a is None else a[0]
    av = 0 if a is None else a[1]
    r = av + sign * b[1]
    if tag == "f":
        return ("f", _f32(r) + 0.0)
    if tag == "d":
        return ("d", float(r) + 0.0)
    return ("i", r)


def _agg(f: str, acc: Any, x: Any, started: bool) -> tuple[Any, bool]:
    if f == "first_value":
        return (acc, True) if started else (x, True)
    if f == "last_value":
        return x, True
    if f == "last_non_null_value":
        return (acc if x is None else x), True
    if acc is None or x is None:
        return (x if acc is None else acc), True
    if f == "sum":
        return _arith(acc, x, 1), True
    if f == "max":
        return (x if x[1] > acc[1] else acc), True
    if f == "min":
        return (x if x[1] < acc[1] else acc), True
    raise AssertionError(f)


def _retract(f: str, acc: Any, x: Any) -> Any:
    if f == "sum":
        if x is None:
            return acc
        return _arith(acc, x, -1)
    if f == "last_value":
        return None
    if f == "last_non_null_value":
        return None if x is not None else acc
    raise AssertionError(f"{f} does not retract")


def _uncanon(c: Any, t: MType) -> Any:
    """A canonical value back to the model's stored form."""
    if c is None:
        return None
    if isinstance(t, MRow):
        return {f.key: _uncanon(v, f.type) for f, (_, v) in zip(t.fields, c[1], strict=True)}
    return c[1]


def _edit(fields: tuple[MField, ...], container: tuple[str, ...],
          fn: Callable[[tuple[MField, ...]], tuple[MField, ...]]) -> tuple[MField, ...]:
    if not container:
        return fn(fields)
    at = _find(fields, container[0])
    if at < 0 or not isinstance(fields[at].type, MRow):
        raise Refused(f"no ROW {container[0]}")
    f = fields[at]
    assert isinstance(f.type, MRow)
    inner = _edit(f.type.fields, container[1:], fn)
    return fields[:at] + (MField(f.key, f.name, MRow(inner)),) + fields[at + 1:]


def _move(fields: tuple[MField, ...], move: Move) -> tuple[MField, ...]:
    """Remove the column and put it first / right after the reference (Spark's semantics)."""
    at = _find(fields, move.field_name)
    if at < 0:
        raise Refused(f"no {move.field_name}")
    f = fields[at]
    rest = fields[:at] + fields[at + 1:]
    if move.kind == "FIRST":
        if at == 0:
            raise Refused("cannot move itself")
        return (f, *rest)
    ref = _find(rest, move.reference or "")
    if move.reference == move.field_name or ref < 0:
        raise Refused("bad reference")
    return (*rest[:ref + 1], f, *rest[ref + 1:])


def _store(v: Any, t: MType) -> Any:
    if v is None or not isinstance(t, MRow):
        return v
    return {f.key: _store(x, f.type) for f, x in zip(t.fields, v, strict=True)}


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _atom(v: Any, t: str) -> tuple[str, Any]:
    if t in ("INT", "BIGINT"):
        return ("i", v)
    if t == "FLOAT":
        return ("f", v + 0.0)  # + 0.0: -0.0 and 0.0 compare equal, keep repr-sorting stable
    if t == "DOUBLE":
        return ("d", float(v) + 0.0)
    return ("s", v)


def _expect(v: Any, src: MType | None, dst: MType) -> Any:
    """The canonical value a read must show for stored ``v`` written as ``src``."""
    if src is None or v is None:
        return None
    if isinstance(dst, MRow):
        assert isinstance(src, MRow)
        by_key = {f.key: f for f in src.fields}
        return ("row", tuple((f.name, _expect(v.get(f.key), by_key[f.key].type
                                              if f.key in by_key else None, f.type))
                             for f in dst.fields))
    assert isinstance(src, str)
    if src != dst:
        if dst == "STRING":
            v = str(v)
        elif dst == "DOUBLE":
            v = float(v)
    return _atom(v, dst)


def canon(v: Any, t: MType) -> Any:
    """A value read back (parsed JSON or an Arrow/Python value) in canonical form; a value of
    the wrong kind becomes ("bad", ...) so that it never equals an expected value."""
    if v is None:
        return None
    if isinstance(t, MRow):
        if not isinstance(v, dict) or list(v) != [f.name for f in t.fields]:
            return ("bad", repr(v))
        return ("row", tuple((f.name, canon(v[f.name], f.type)) for f in t.fields))
    if t in ("INT", "BIGINT"):
        ok = isinstance(v, int) and not isinstance(v, bool)
        return ("i", v) if ok else ("bad", repr(v))
    if t in ("FLOAT", "DOUBLE"):
        if isinstance(v, bool) or not isinstance(v, int | float):
            return ("bad", repr(v))
        # JSON holds a FLOAT as its shortest decimal: back to the float32 it stands for
        return ("f", _f32(v) + 0.0) if t == "FLOAT" else ("d", float(v) + 0.0)
    return ("s", v) if isinstance(v, str) else ("bad", repr(v))


# ============================================================================================
# Sequences of operations
# ============================================================================================


@dataclass(frozen=True)
class Create:
    columns: tuple[tuple[str, MType], ...]
    partition_keys: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    primary_keys: tuple[str, ...] = ()

    def describe(self) -> str:
        cols = ", ".join(f"{quote_identifier(n)} {type_text(t)}" for n, t in self.columns)
        if self.primary_keys:
            cols += f", PRIMARY KEY ({', '.join(map(quote_identifier, self.primary_keys))})"
        text = f"CREATE TABLE t ({cols})"
        if self.partition_keys:
            text += f" PARTITIONED BY ({', '.join(map(quote_identifier, self.partition_keys))})"
        if self.options:
            text += " TBLPROPERTIES (" + ", ".join(f"{sql_string(k)} = {sql_string(v)}"
                                                   for k, v in self.options) + ")"
        return text


@dataclass(frozen=True)
class Insert:
    rows: tuple[tuple[Any, ...], ...]
    via_sql: bool = False

    def describe(self) -> str:
        return f"INSERT{' (SQL)' if self.via_sql else ''} {list(self.rows)!r}"


@dataclass(frozen=True)
class Where:
    """A DELETE condition: ``op`` is "=", "IN", ">=" (on the key column, with ``values``) or
    "IS NULL" (on any atomic column)."""

    column: str
    op: str
    values: tuple[int, ...] = ()

    def sql(self) -> str:
        c = quote_identifier(self.column)
        if self.op == "IS NULL":
            return f"{c} IS NULL"
        if self.op == "IN":
            return f"{c} IN ({', '.join(map(str, self.values))})"
        return f"{c} {self.op} {self.values[0]}"

    def matches(self, row: tuple[tuple[str, Any], ...]) -> bool:
        v = dict(row)[self.column]
        if self.op == "IS NULL":
            return v is None
        if v is None:
            return False
        if self.op == "=":
            return bool(v[1] == self.values[0])
        if self.op == "IN":
            return v[1] in self.values
        return bool(v[1] >= self.values[0])


@dataclass(frozen=True)
class Delete:
    where: Where | None
    via_sql: bool = False

    def describe(self) -> str:
        return (f"DELETE{' (SQL)' if self.via_sql else ''} FROM t"
                + (f" WHERE {self.where.sql()}" if self.where else ""))


@dataclass(frozen=True)
class Compact:
    via_sql: bool = False

    def describe(self) -> str:
        return "CALL sys.compact(table => 't')" if self.via_sql else "Table.compact()"


@dataclass(frozen=True)
class Alter:
    changes: tuple[Any, ...]
    via_sql: bool = False
    #: what the generator meant (e.g. "swap a b"); for messages and figures only
    label: str = ""

    def describe(self) -> str:
        text = ", ".join(c.sql() for c in self.changes)
        return f"ALTER{' (SQL)' if self.via_sql else ''} {text}" + (
            f"   -- {self.label}" if self.label else "")


@dataclass(frozen=True)
class Sequence_:
    create: Create
    ops: tuple[Insert | Alter | Delete | Compact, ...]

    def describe(self) -> str:
        return "\n".join([self.create.describe(), *(op.describe() for op in self.ops)])


@dataclass(frozen=True)
class Profile:
    """What a generator may produce."""

    names: tuple[str, ...] = ("a", "b", "c", "d", "e", "a b", "x.y", "ü", "<s>")
    nested: bool = True
    partitions: bool = True
    options: bool = True
    #: ALTERs that the rules must refuse (duplicate names, missing columns, partition keys…)
    negative: bool = True
    sql: bool = True
    hostile_strings: bool = True
    max_inserts: int = 3
    max_alters: int = 5
    max_rows: int = 3
    atomic: tuple[str, ...] = ATOMIC
    #: DELETE FROM steps (refused on append tables)
    deletes: bool = True
    #: primary-key tables with merge engines (upserts of a few keys, deletes, compactions)
    #: instead of append tables
    merges: bool = False
    #: merge engines to draw from (see MERGE_CONFIGS)
    merge_configs: tuple[str, ...] = ()
    compactions: bool = False
    #: small numbers (sums never overflow; floats add exactly)
    small_values: bool = False


#: the merge-engine tables of the sequences: name → (table options, allowed atomic types,
#: nested columns, retype to STRING)
MERGE_CONFIGS: dict[str, tuple[dict[str, str], tuple[str, ...], bool, bool]] = {
    "deduplicate": ({}, ATOMIC, True, True),
    "deduplicate-ignore-delete": ({"ignore-delete": "true"}, ATOMIC, True, True),
    "deduplicate-sequence-field": ({"sequence.field": "sq"}, ATOMIC, True, True),
    "partial-update": ({"merge-engine": "partial-update"}, ATOMIC, True, True),
    "partial-update-remove": ({"merge-engine": "partial-update",
                               "partial-update.remove-record-on-delete": "true"}, ATOMIC, True,
                              True),
    "partial-update-ignore-delete": ({"merge-engine": "partial-update",
                                      "ignore-delete": "true"}, ATOMIC, True, True),
    "partial-update-sequence-group": ({"merge-engine": "partial-update"}, ATOMIC, True, True),
    "partial-update-sequence-field": ({"merge-engine": "partial-update",
                                       "partial-update.remove-record-on-delete": "true",
                                       "sequence.field": "sq"}, ATOMIC, True, True),
    "first-row": ({"merge-engine": "first-row", "first-row.ignore-delete": "true"}, ATOMIC,
                  True, True),
    "aggregation-sum": ({"merge-engine": "aggregation",
                         "fields.default-aggregate-function": "sum"},
                        ("INT", "BIGINT", "FLOAT", "DOUBLE"), False, False),
    "aggregation-max": ({"merge-engine": "aggregation",
                         "fields.default-aggregate-function": "max"}, ATOMIC, False, True),
    "aggregation-min": ({"merge-engine": "aggregation",
                         "fields.default-aggregate-function": "min"}, ATOMIC, False, True),
    "aggregation-last-non-null": ({"merge-engine": "aggregation"}, ATOMIC, True, True),
    "aggregation-last-value": ({"merge-engine": "aggregation",
                                "fields.default-aggregate-function": "last_value"}, ATOMIC,
                               True, True),
    "aggregation-first-value": ({"merge-engine": "aggregation",
                                 "fields.default-aggregate-function": "first_value"}, ATOMIC,
                                True, True),
}
KEY = "id"
SEQ = "sq"
GROUP = "g"
KEYS = (0, 1, 2, 3)


FULL = Profile()
MERGES = Profile(partitions=False, merges=True, merge_configs=tuple(MERGE_CONFIGS),
                 small_values=True, max_inserts=4, max_alters=3, max_rows=4, compactions=True)
TEMP_NAME = "tmp"


def _doubles() -> st.SearchStrategy[float]:
    return st.floats(allow_nan=False, allow_infinity=False)


def _text(profile: Profile) -> st.SearchStrategy[str]:
    if profile.hostile_strings:
        return st.text(max_size=5)
    return st.text(alphabet="abcxyz019 ", max_size=5)


def values(t: MType, profile: Profile) -> st.SearchStrategy[Any]:
    if isinstance(t, MRow):
        inner: st.SearchStrategy[Any] = st.tuples(*[values(f.type, profile) for f in t.fields])
    elif profile.small_values:
        inner = {"INT": st.integers(-20, 20), "BIGINT": st.integers(-20, 20),
                 "FLOAT": st.sampled_from((-1.5, 0.0, 0.25, 2.0, 7.5)),
                 "DOUBLE": st.sampled_from((-2.5, 0.0, 0.5, 3.0, 1e3)),
                 "STRING": st.text(alphabet="abé ", max_size=3)}[t]
    else:
        inner = {"INT": st.integers(-2**31, 2**31 - 1), "BIGINT": st.integers(-2**63, 2**63 - 1),
                 "FLOAT": st.floats(width=32, allow_nan=False, allow_infinity=False),
                 "DOUBLE": _doubles(), "STRING": _text(profile)}[t]
    return st.none() | inner


def _partition_values(t: MType, profile: Profile) -> st.SearchStrategy[Any]:
    if t == "STRING":
        alphabet = "ab /=%:#é'\"" if profile.hostile_strings else "ab"
        return st.none() | st.text(alphabet=alphabet, min_size=1, max_size=3)
    return st.none() | st.integers(-3, 3)


def _atomic_or_row(draw: Any, profile: Profile, depth: int = 0) -> MType:
    if profile.nested and depth == 0 and draw(st.integers(0, 5)) == 0:
        n = draw(st.integers(1, 3))
        names = draw(st.lists(st.sampled_from(("x", "y", "z", "w v")), min_size=n, max_size=n,
                              unique=True))
        return MRow(tuple(MField(-1, nm, _atomic_or_row(draw, profile, depth + 1))
                          for nm in names))
    return draw(st.sampled_from(profile.atomic))


class _Gen:
    """Draws one sequence, tracking a scratch model so that ALTERs mostly make sense."""

    def __init__(self, draw: Any, profile: Profile) -> None:
        self.draw = draw
        self.p = profile
        self.to_string = True

    def create(self) -> Create:
        d, p = self.draw, self.p
        if p.merges:
            return self.create_merge()
        n = d(st.integers(1, 4))
        names = d(st.lists(st.sampled_from(p.names), min_size=n, max_size=n, unique=True))
        cols = tuple((nm, _atomic_or_row(d, p)) for nm in names)
        parts: tuple[str, ...] = ()
        if p.partitions and len(cols) > 1 and d(st.integers(0, 4)) == 0:
            candidates = [nm for nm, t in cols if t in ("INT", "STRING")]
            if candidates:
                parts = (d(st.sampled_from(candidates)),)
        opts: tuple[tuple[str, str], ...] = ()
        if p.options and d(st.booleans()):
            opts = (("cast.mode", d(st.sampled_from(CAST_MODES))),)
        return Create(cols, parts, opts)

    def create_merge(self) -> Create:
        """A primary-key table (key ``id`` INT) with one of the merge configurations; the
        profile narrows to the types its aggregate function takes."""
        from dataclasses import replace

        d, p = self.draw, self.p
        config = d(st.sampled_from(p.merge_configs))
        opts, atomic, nested, to_string = MERGE_CONFIGS[config]
        self.p = p = replace(p, atomic=atomic, nested=nested and p.nested)
        self.to_string = to_string
        n = d(st.integers(1, 3))
        names = d(st.lists(st.sampled_from(p.names), min_size=n, max_size=n, unique=True))
        cols = [(nm, _atomic_or_row(d, p)) for nm in names]
        cols.insert(d(st.integers(0, len(cols))), (KEY, "INT"))
        if "sequence.field" in opts:
            cols.insert(d(st.integers(0, len(cols))), (SEQ, "INT"))
        options = {"bucket": str(d(st.integers(1, 2))), **opts}
        if config == "partial-update-sequence-group":
            members = d(st.lists(st.sampled_from(names), min_size=1, max_size=len(names),
                                 unique=True))
            cols.insert(d(st.integers(0, len(cols))), (GROUP, "INT"))
            options[f"fields.{GROUP}.sequence-group"] = ",".join(members)
        if p.options and d(st.booleans()):
            options["cast.mode"] = d(st.sampled_from(CAST_MODES))
        return Create(tuple(cols), (), tuple(sorted(options.items())), (KEY,))

    def delete(self, model: TableModel) -> Delete:
        d = self.draw
        s = model.schema
        which = d(st.integers(0, 4))
        where: Where | None = None
        if which == 1:
            where = Where(KEY, "=", (d(st.sampled_from(KEYS)),))
        elif which == 2:
            where = Where(KEY, "IN", tuple(d(st.lists(st.sampled_from(KEYS), min_size=1,
                                                      max_size=2, unique=True))))
        elif which == 3:
            where = Where(KEY, ">=", (d(st.sampled_from(KEYS)),))
        elif which == 4:
            cols = [f.name for f in s.fields if isinstance(f.type, str)
                    and f.name not in s.protected]
            if cols:
                where = Where(d(st.sampled_from(cols)), "IS NULL")
        return Delete(where, self.p.sql and d(st.booleans()))

    def rows(self, model: TableModel) -> tuple[tuple[Any, ...], ...]:
        s = model.schema
        n = self.draw(st.integers(1, self.p.max_rows))
        strategies = [(_partition_values(f.type, self.p) if f.name in s.partition_keys
                       else st.sampled_from(KEYS) if f.name in (*s.primary_keys, SEQ)
                       else st.none() | st.sampled_from(KEYS) if f.name == GROUP
                       else values(f.type, self.p)) for f in s.fields]
        return tuple(self.draw(st.tuples(*strategies)) for _ in range(n))

    def _unused(self, taken: Iterable[str], pool: Sequence[str]) -> str | None:
        free = [n for n in pool if n not in set(taken)]
        return self.draw(st.sampled_from(free)) if free else None

    def change(self, model: TableModel, fields: tuple[MField, ...],
               options: dict[str, str]) -> tuple[list[Any], str]:
        """One logical change (a swap is three renames) on the given state."""
        d, p = self.draw, self.p
        s = model.schema
        names = [f.name for f in fields]
        free_cols = [f.name for f in fields if f.name not in s.protected]
        rows = [f for f in fields if isinstance(f.type, MRow)]
        kinds = ["add", "add_at", "rename"]
        if len(free_cols) >= 1 and len(fields) > 1:
            kinds += ["drop", "move"]
        if len(free_cols) >= 2 and TEMP_NAME not in names:
            kinds.append("swap")
        if any(f.type in ("INT", "FLOAT") for f in fields if f.name in free_cols):
            kinds += ["retype", "retype"]
        if rows:
            kinds += ["nested_add", "nested_rename", "nested_retype", "nested_drop"]
        if p.options:
            kinds += ["option"]
        if p.negative:
            kinds += ["negative"]
        kind = d(st.sampled_from(kinds))
        pool = p.names
        if kind in ("add", "add_at"):
            name = self._unused(names, pool)
            if name is None:
                kind = "drop" if len(fields) > 1 and free_cols else "option"
            else:
                t = _atomic_or_row(d, p)
                move = None
                if kind == "add_at":
                    if d(st.booleans()):
                        move = Move(name, "FIRST")
                    else:
                        move = Move(name, "AFTER", d(st.sampled_from(names)))
                return [AddColumn((name,), dtype(t), move=move)], f"add {name}"
        if kind == "drop":
            name = d(st.sampled_from(free_cols))
            return [DropColumn((name,))], f"drop {name}"
        if kind == "rename":
            if not free_cols:
                return [SetOption("x.note", "n")], "option"
            old = d(st.sampled_from(free_cols))
            new = self._unused(names, (*pool, TEMP_NAME))
            if new is None:
                return [SetOption("x.note", "n")], "option"
            return [RenameColumn((old,), new)], f"rename {old} → {new}"
        if kind == "swap":
            a, b = d(st.lists(st.sampled_from(free_cols), min_size=2, max_size=2, unique=True))
            return ([RenameColumn((a,), TEMP_NAME), RenameColumn((b,), a),
                     RenameColumn((TEMP_NAME,), b)], f"swap {a} {b}")
        if kind == "move":
            name = d(st.sampled_from(names))
            others = [n for n in names if n != name]
            if names.index(name) != 0 and d(st.booleans()):
                return [UpdateColumnPosition(Move(name, "FIRST"))], f"move {name} first"
            ref = d(st.sampled_from(others))
            return [UpdateColumnPosition(Move(name, "AFTER", ref))], f"move {name} after {ref}"
        if kind == "retype":
            cands = [f for f in fields if f.type in ("INT", "FLOAT") and f.name in free_cols]
            f = d(st.sampled_from(cands))
            targets = [b for (a, b) in CASTS if a == f.type
                       and (self.to_string or b != "STRING")]
            if options.get("cast.mode") == "implicit" and not p.negative:
                targets = [b for b in targets if CASTS[(f.type, b)] == "implicit"]
            to = d(st.sampled_from(targets))
            return [UpdateColumnType((f.name,), parse_type(to))], f"retype {f.name} {to}"
        if kind.startswith("nested"):
            r = d(st.sampled_from(rows))
            assert isinstance(r.type, MRow)
            sub = [g.name for g in r.type.fields]
            if kind == "nested_add":
                name = self._unused(sub, ("x", "y", "z", "w v", "q"))
                if name is not None:
                    t = d(st.sampled_from(p.atomic))
                    return [AddColumn((r.name, name), parse_type(t))], f"add {r.name}.{name}"
            if kind == "nested_rename":
                old = d(st.sampled_from(sub))
                new = self._unused(sub, ("x", "y", "z", "w v", "q"))
                if new is not None:
                    return ([RenameColumn((r.name, old), new)],
                            f"rename {r.name}.{old} → {new}")
            if kind == "nested_retype":
                ints = [g.name for g in r.type.fields if g.type == "INT"]
                if ints:
                    g = d(st.sampled_from(ints))
                    return ([UpdateColumnType((r.name, g), parse_type("BIGINT"))],
                            f"retype {r.name}.{g} BIGINT")
            if kind == "nested_drop" and len(sub) > 1:
                g = d(st.sampled_from(sub))
                return [DropColumn((r.name, g))], f"drop {r.name}.{g}"
            name = self._unused(sub, ("x", "y", "z", "w v", "q"))
            if name is None:
                return [SetOption("x.note", "n")], "option"
            return [AddColumn((r.name, name), parse_type("INT"))], f"add {r.name}.{name}"
        if kind == "option":
            which = d(st.integers(0, 2))
            if which == 0:
                return [SetOption("cast.mode", d(st.sampled_from(CAST_MODES)))], "cast.mode"
            if which == 1 or "x.note" not in options:
                return [SetOption("x.note", d(st.sampled_from(("1", "two", "<b>'")))),
                        ], "option"
            return [RemoveOption("x.note")], "unset option"
        # negative: something the rules refuse
        which = d(st.integers(0, 6))
        existing = d(st.sampled_from(names))
        if which == 0:
            return [AddColumn((existing,), parse_type("INT"))], "bad: add existing"
        if which == 1 and len(names) > 1:
            other = d(st.sampled_from([n for n in names if n != existing]))
            return [RenameColumn((existing,), other)], "bad: rename onto existing"
        if which == 2:
            missing = self._unused(names, ("nope", "zz"))
            return [DropColumn((missing or "nope",))], "bad: drop missing"
        if which == 3:
            return [SetOption("cast.mode", "lenient")], "bad: cast.mode"
        if which == 4 and s.partition_keys:
            return [RenameColumn((s.partition_keys[0],), "pp")], "bad: rename partition key"
        if which == 5 and len(names) == 1:
            return [DropColumn((names[0],))], "bad: drop last column"
        if which == 6:
            return ([UpdateColumnType((existing,), parse_type("ROW<q INT>"))],
                    "bad: retype to ROW")
        return [UpdateColumnPosition(Move(existing, "AFTER", existing))], "bad: move after self"

    def alters(self, model: TableModel) -> list[Alter]:
        """One ALTER (sometimes two changes at once), or a swap as three ALTERs."""
        d = self.draw
        s = model.schema
        changes, label = self.change(model, s.fields, dict(s.options))
        if label.startswith("swap") and d(st.booleans()):
            return [Alter((c,), self._sql(), f"{label} ({i + 1}/3)")
                    for i, c in enumerate(changes)]
        if len(changes) == 1 and not label.startswith("bad") and d(st.integers(0, 3)) == 0:
            try:
                scratch = TableModel.__new__(TableModel)
                scratch._keys = itertools.count(10_000)
                scratch.schemas = [s]
                scratch.snapshots = []
                after = scratch.alter(changes)
                more, label2 = self.change(model, after.fields, dict(after.options))
                if not label2.startswith("bad"):
                    changes, label = changes + more, f"{label}; {label2}"
            except Refused:
                pass
        via_sql = len(changes) == 1 and self._sql()
        return [Alter(tuple(changes), via_sql, label)]

    def _sql(self) -> bool:
        return self.p.sql and self.draw(st.integers(0, 2)) == 0

    def sequence(self) -> Sequence_:
        d, p = self.draw, self.p
        create = self.create()
        model = TableModel(create)
        n_ins = d(st.integers(1, p.max_inserts))
        n_alt = d(st.integers(0, p.max_alters))
        n_del = 0
        if p.merges and MergeSpec.of(model.schema).deletes:
            n_del = d(st.integers(0, 2))
        elif p.deletes and not p.merges and d(st.integers(0, 9)) == 0:
            n_del = 1  # refused: append tables are insert-only
        n_compact = d(st.integers(0, 2)) if p.merges and p.compactions else 0
        plan = d(st.permutations(["I"] * n_ins + ["A"] * n_alt + ["D"] * n_del
                                 + ["C"] * n_compact))
        ops: list[Insert | Alter | Delete | Compact] = []
        for step in plan:
            if step == "D":
                dl = self.delete(model)
                try:
                    model.delete(dl.where)
                except Refused:
                    pass
                ops.append(dl)
                continue
            if step == "C":
                model.compact()
                ops.append(Compact(p.sql and d(st.booleans())))
                continue
            if step == "I":
                ins = Insert(self.rows(model), p.sql and d(st.integers(0, 3)) == 0)
                model.insert(ins.rows)
                ops.append(ins)
                continue
            for alter in self.alters(model):
                try:
                    model.alter(alter.changes)
                except Refused:
                    pass
                ops.append(alter)
        return Sequence_(create, tuple(ops))


@st.composite
def sequences(draw: Any, profile: Profile = FULL) -> Sequence_:
    return _Gen(draw, profile).sequence()


# ============================================================================================
# Replaying a sequence on a real table, and checking it
# ============================================================================================


@dataclass
class Stats:
    """Figures for the report."""

    sequences: int = 0
    inserts: int = 0
    rows: int = 0
    alters: int = 0
    refused: int = 0
    deletes: int = 0
    deletes_refused: int = 0
    compactions: int = 0
    engines: dict[str, int] = field(default_factory=dict)
    reads: int = 0
    pypaimon_reads: int = 0
    spark_jobs: int = 0
    rows_lost: int = 0
    seconds_writing: float = 0.0
    seconds_verifying: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)

    def count(self, label: str) -> None:
        key = label.split(" ")[0] if not label.startswith("bad") else "refused-on-purpose"
        self.kinds[key] = self.kinds.get(key, 0) + 1


STATS = Stats()


def _sql_literal(v: Any, t: MType) -> str:
    if v is None:
        return "NULL"
    if isinstance(t, MRow):
        return "struct(" + ", ".join(_sql_literal(x, f.type)
                                     for x, f in zip(v, t.fields, strict=True)) + ")"
    if t in ("FLOAT", "DOUBLE"):
        return f"CAST('{v!r}' AS {t})"
    if t in ("INT", "BIGINT"):
        return f"CAST({v} AS {t})"
    return sql_string(v)


def table_sql(db: str, name: str) -> str:
    return f"{quote_identifier(db)}.{quote_identifier(name)}"


class SequenceFailure(AssertionError):
    pass


class SequenceRun:
    """One sequence replayed on table ``default.<name>`` of ``wh``, next to the model."""

    def __init__(self, wh: Any, name: str, seq: Sequence_) -> None:
        self.wh = wh
        self.name = name
        self.seq = seq
        self.model = TableModel(seq.create)
        self.table: Any = None

    def fail(self, what: str) -> SequenceFailure:
        return SequenceFailure(f"{what}\n-- table default.{self.name}, sequence:\n"
                               f"{self.seq.describe()}")

    def execute(self) -> SequenceRun:
        t0 = time.perf_counter()
        c = self.seq.create
        from schemalab.sql import TableName

        self.table = self.wh.create_table(
            TableName("default", self.name), [ColumnSpec(n, dtype(t)) for n, t in c.columns],
            partition_keys=list(c.partition_keys), primary_keys=list(c.primary_keys),
            options=dict(c.options))
        t = self.table
        if c.primary_keys:
            spec = MergeSpec.of(self.model.schema)
            label = spec.engine + (f" {spec.default_aggregate}"
                                   if spec.engine == "aggregation" else "")
            STATS.engines[label] = STATS.engines.get(label, 0) + 1
        for op in self.seq.ops:
            if isinstance(op, Compact):
                if op.via_sql:
                    self.wh.sql("CALL sys.compact(table => "
                                f"{sql_string('default.' + self.name)})")
                else:
                    t.compact()
                self.model.compact()
                STATS.compactions += 1
                continue
            if isinstance(op, Delete):
                self.delete(op)
                continue
            if isinstance(op, Insert):
                if op.via_sql:
                    s = self.model.schema
                    literals = [", ".join(_sql_literal(v, f.type)
                                          for v, f in zip(r, s.fields, strict=True))
                                for r in op.rows]
                    if len(s.fields) == 1 and isinstance(s.fields[0].type, MRow):
                        # Spark's parser unpacks a VALUES row that is a single struct(..)
                        # into its fields (``VALUES (struct(1, 2))`` is a row of 2 columns),
                        # as it would for its own tables: a single ROW column needs SELECT.
                        query = " UNION ALL ".join(f"SELECT {x}" for x in literals)
                    else:
                        query = "VALUES " + ", ".join(f"({x})" for x in literals)
                    self.wh.sql(f"INSERT INTO {table_sql('default', self.name)} {query}")
                else:
                    t.insert(list(op.rows))
                self.model.insert(op.rows)
                STATS.inserts += 1
                STATS.rows += len(op.rows)
                continue
            STATS.alters += 1
            STATS.count(op.label)
            try:
                self.model.alter(op.changes)
                predicted = None
            except Refused as e:
                predicted = str(e)
            try:
                if op.via_sql:
                    self.wh.sql(f"ALTER TABLE {table_sql('default', self.name)} "
                                f"{op.changes[0].sql()}")
                else:
                    t.alter(*op.changes)
                error = None
            except SchemaLabError as e:
                error = e
            if self.agree(op.describe(), predicted, error):
                STATS.refused += 1
        STATS.seconds_writing += time.perf_counter() - t0
        self.check_metadata()
        STATS.sequences += 1
        return self

    def delete(self, op: Delete) -> None:
        STATS.deletes += 1
        try:
            self.model.delete(op.where)
            predicted = None
        except Refused as e:
            predicted = str(e)
        try:
            if op.via_sql:
                self.wh.sql(f"DELETE FROM {table_sql('default', self.name)}"
                            + (f" WHERE {op.where.sql()}" if op.where else ""))
            else:
                self.table.delete_where(op.where.sql() if op.where else None)
            error = None
        except SchemaLabError as e:
            error = e
        if self.agree(op.describe(), predicted, error):
            STATS.deletes_refused += 1

    def agree(self, what: str, predicted: str | None, error: SchemaLabError | None) -> bool:
        """Whether the model refused ``what`` (its reason ``predicted``), after checking that
        schemalab refused it too (``error``) or accepted it too."""
        if predicted is None and error is not None:
            raise self.fail(f"{what} was refused but the model accepts it: {error}")
        if predicted is not None and error is None:
            raise self.fail(f"{what} was accepted but the model refuses it ({predicted})")
        return predicted is not None

    def check_metadata(self) -> None:
        """Schema versions, field ids and snapshots against the model (no Spark)."""
        t, m = self.table, self.model
        schemas = t.schemas
        if [s.id for s in schemas] != list(range(len(m.schemas))):
            raise self.fail(f"schema ids {[s.id for s in schemas]}, expected "
                            f"0..{len(m.schemas) - 1}")
        ids: dict[int, int] = {}
        for real, want in zip(schemas, m.schemas, strict=True):
            got = tuple((f.name, real_shape(f.type)) for f in real.fields)
            if got != want.shape():
                raise self.fail(f"schema {real.id} is {got}, expected {want.shape()}")
            if dict(real.options) != dict(want.options):
                raise self.fail(f"schema {real.id} options {dict(real.options)}, expected "
                                f"{dict(want.options)}")
            if tuple(real.partition_keys) != want.partition_keys:
                raise self.fail(f"schema {real.id} partition keys {real.partition_keys}")
            _map_ids(real.fields, want.fields, ids, self)
        if len(set(ids.values())) != len(ids):
            raise self.fail(f"two model fields share a field id: {ids}")
        snaps = t.snapshots
        if [s.id for s in snaps] != list(range(1, len(m.snapshots) + 1)):
            raise self.fail(f"snapshot ids {[s.id for s in snaps]}")
        total = 0
        for real_snap, want_snap in zip(snaps, m.snapshots, strict=True):
            total += len(want_snap.rows)
            if real_snap.schema_id != want_snap.schema_index:
                raise self.fail(f"snapshot {real_snap.id} has schema {real_snap.schema_id}, "
                                f"expected {want_snap.schema_index}")
            if not m.schema.primary_keys and real_snap.total_record_count != total:
                raise self.fail(f"snapshot {real_snap.id} counts {real_snap.total_record_count} "
                                f"rows, expected {total}")

    def reads(self) -> list[tuple[int | None, Any]]:
        """(snapshot id or None for the current schema, DataFrame) of every read to check:
        each snapshot with its own schema, and the latest in the current schema when that
        differs from the last snapshot's."""
        t, m = self.table, self.model
        out: list[tuple[int | None, Any]] = [(n, t.read(snapshot_id=n))
                                             for n in range(1, len(m.snapshots) + 1)]
        if not m.snapshots or m.snapshots[-1].schema_index != len(m.schemas) - 1:
            out.append((None, t.read()))
        return out


def _map_ids(real: Sequence[Any], want: Sequence[MField], ids: dict[int, int],
             run: SequenceRun) -> None:
    for r, w in zip(real, want, strict=True):
        if ids.setdefault(w.key, r.id) != r.id:
            raise run.fail(f"field {w.name!r} changed its id from {ids[w.key]} to {r.id}")
        if isinstance(w.type, MRow):
            _map_ids(r.type.fields, w.type.fields, ids, run)


def _json_column(df: Any, tag: str) -> Any:
    from pyspark.sql import functions as F

    cols = [F.col(quote_identifier(c)) for c in df.columns]
    return df.select(F.lit(tag).alias("__tag"),
                     F.to_json(F.struct(*cols), {"ignoreNullFields": "false"}).alias("__json"))


def verify_runs(spark: Any, runs: Sequence[SequenceRun]) -> None:
    """Every read of every run against the model, in one Spark job."""
    t0 = time.perf_counter()
    frames = []
    expected: dict[str, tuple[SequenceRun, int | None, MSchema]] = {}
    for i, run in enumerate(runs):
        for snapshot_id, df in run.reads():
            target = run.model.target(snapshot_id)
            got_shape = tuple((f.name, real_spark_shape(f.dataType)) for f in df.schema.fields)
            want_shape = tuple((f.name, spark_shape(f.type)) for f in target.fields)
            if got_shape != want_shape:
                raise run.fail(f"read of snapshot {snapshot_id} has columns {got_shape}, "
                               f"expected {want_shape}")
            tag = f"{i}/{snapshot_id}"
            expected[tag] = (run, snapshot_id, target)
            frames.append(_json_column(df, tag))
    union = frames[0]
    for f in frames[1:]:
        union = union.unionAll(f)
    collected = union.collect()
    STATS.spark_jobs += 1
    got: dict[str, list[tuple[Any, ...]]] = {tag: [] for tag in expected}
    for row in collected:
        run, _, target = expected[row[0]]
        obj = json.loads(row[1])
        if list(obj) != target.names:
            raise run.fail(f"read {row[0]} row has keys {list(obj)}, expected {target.names}")
        got[row[0]].append(tuple((f.name, canon(obj[f.name], f.type)) for f in target.fields))
    for tag, (run, snapshot_id, _) in expected.items():
        want = run.model.expected(snapshot_id)
        have = sorted(got[tag], key=repr)
        STATS.reads += 1
        if have != want:
            missing = [r for r in want if r not in have]
            STATS.rows_lost += len(missing)
            what = "the current schema" if snapshot_id is None else f"snapshot {snapshot_id}"
            raise run.fail(f"read of {what} differs from the model:\n  got      {have}\n"
                           f"  expected {want}")
    STATS.seconds_verifying += time.perf_counter() - t0


# ============================================================================================
# pypaimon reading the same tables
# ============================================================================================


def pypaimon_reads(warehouse: str, ident: str, snapshot_id: int | None) -> tuple[list[str],
                                                                                  list[dict]]:
    import pypaimon

    table = pypaimon.CatalogFactory.create({"warehouse": warehouse}).get_table(ident)
    if snapshot_id is not None:
        table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    rb = table.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return list(arrow.schema.names), arrow.to_pylist()


def pypaimon_problems(run: SequenceRun) -> list[str]:
    """pypaimon's read of every snapshot (and of the latest) against the model."""
    out = []
    reads: list[int | None] = [*range(1, len(run.model.snapshots) + 1), None]
    for snapshot_id in reads:
        target = run.model.target(snapshot_id)
        try:
            names, rows = pypaimon_reads(run.wh.path, f"default.{run.name}", snapshot_id)
        except Exception as e:  # noqa: BLE001 - reported as a difference
            out.append(f"snapshot {snapshot_id}: pypaimon failed: {type(e).__name__}: {e}")
            continue
        STATS.pypaimon_reads += 1
        if snapshot_id is None and not run.model.snapshots:
            continue  # pypaimon returns no schema for a table without snapshots
        if names != target.names:
            out.append(f"snapshot {snapshot_id}: pypaimon columns {names}, expected "
                       f"{target.names}")
            continue
        have = sorted((tuple((f.name, canon(r[f.name], f.type)) for f in target.fields)
                       for r in rows), key=repr)
        want = run.model.expected(snapshot_id)
        if have != want:
            out.append(f"snapshot {snapshot_id}: pypaimon read\n  got      {have}\n"
                       f"  expected {want}")
    return out


# ============================================================================================
# After faults: every metadata file parses, nothing hidden is left
# ============================================================================================


def metadata_problems(table_path: str) -> list[str]:
    """Every schema, snapshot, manifest and manifest-list file that does not parse, and gaps
    in schema or snapshot ids."""
    from schemalab import fileio
    from schemalab.paimon.manifest_codec import read_manifest, read_manifest_list
    from schemalab.paimon.snapshot import Snapshot
    from schemalab.schema.table_schema import TableSchema

    out = []
    for sub, parse in (("schema", TableSchema.from_json), ("snapshot", Snapshot.from_json)):
        d = os.path.join(table_path, sub)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            p = os.path.join(d, name)
            if name.startswith(".") or name in ("LATEST", "EARLIEST"):
                continue
            try:
                parse(fileio.read_bytes(p), path=p)
            except Exception as e:  # noqa: BLE001
                out.append(f"{p}: {type(e).__name__}: {e}")
        prefix = "schema-" if sub == "schema" else "snapshot-"
        ids = fileio.list_versions(d, prefix)
        first = 0 if sub == "schema" else 1
        if ids and ids != list(range(first, first + len(ids))):
            out.append(f"{sub} ids are not contiguous: {ids}")
    d = os.path.join(table_path, "manifest")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.startswith("."):
            continue
        p = os.path.join(d, name)
        try:
            (read_manifest_list if name.startswith("manifest-list-") else read_manifest)(p)
        except Exception as e:  # noqa: BLE001
            out.append(f"{p}: {type(e).__name__}: {e}")
    return out


def hidden_files(root: str) -> list[str]:
    """Temporary files and staging directories (names starting with '.') under ``root``."""
    return sorted(os.path.join(d, x) for d, ds, fs in os.walk(root) for x in ds + fs
                  if x.startswith("."))


# ============================================================================================
# Child processes: they log a line only after a commit succeeded
# ============================================================================================


def log_line(path: str, record: dict[str, Any]) -> None:
    """Append one JSON line with a single write (atomic for small appends)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
    finally:
        os.close(fd)


def read_log(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.endswith("\n"):  # a torn last line was never logged
                out.append(json.loads(line))
    return out


def wait_for(path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout}s")
        time.sleep(0.02)


def alter_loop(table_path: str, log: str, start: int) -> None:
    """Forever: add column ``c<k>``, then set option ``k<k>``; log each committed schema."""
    from schemalab.table import Table
    from schemalab.types.parse import parse_type

    t = Table(table_path)
    log_line(log, {"ready": True})
    k = start
    while True:
        s = t.alter(AddColumn((f"c{k}",), parse_type("INT")))
        log_line(log, {"schema": s.id, "column": f"c{k}"})
        s = t.alter(SetOption(f"k{k}", str(k)))
        log_line(log, {"schema": s.id, "option": f"k{k}"})
        k += 1


def insert_loop(warehouse: str, table: str, log: str, start: int, go_file: str) -> None:
    """Start Spark, wait for ``go_file``, then forever insert 3 rows with fresh ids; log each
    committed snapshot with its ids."""
    from importlib import resources

    import schemalab as sl

    # A test JVM: quicker to start, slower at steady state (spark-notes.md).
    log_conf = resources.files("schemalab").joinpath("log4j2.properties")
    java = f"-Dlog4j2.configurationFile=file:{log_conf} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    spark = sl.local_spark(f"insert-loop-{start}", cores=1, driver_memory="1g",
                           extra_conf={"spark.driver.extraJavaOptions": java})
    t = sl.Warehouse(warehouse, spark=spark).table(table)
    log_line(log, {"ready": True})
    wait_for(go_file, 600)
    k = start
    while True:
        ids = [k, k + 1, k + 2]
        snap = t.insert([{"id": i, "writer": start} for i in ids])
        log_line(log, {"snapshot": snap.id, "ids": ids})
        k += 3


def py_insert(table: Any, rows: Sequence[dict[str, Any]]) -> Any:
    """INSERT without Spark: the same steps as ``store.insert`` (a data file written under a
    hidden staging directory and moved to its final name, then manifest → manifest lists →
    snapshot), with pyarrow writing the Parquet file (with field ids) instead of Spark. Lets
    crash and race tests run many writer processes without a JVM each. Unpartitioned,
    unbucketed tables only. On a failed commit the data file is removed, as store.insert
    does."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemalab.paimon import commit as commits
    from schemalab.paimon.write import files as write
    from schemalab.types.arrow import arrow_schema

    schema = table.schema
    assert not schema.partition_keys
    staging = os.path.join(table.path, f"{write.STAGING_PREFIX}{uuid.uuid4().hex}")
    os.makedirs(staging)
    try:
        src = os.path.join(staging, "part-0.parquet")
        data = pa.Table.from_pylist(list(rows), schema=arrow_schema(schema.fields))
        pq.write_table(data, src, compression="zstd")
        meta = pq.ParquetFile(src).metadata
        dest_dir = os.path.join(table.path, "bucket-0")
        os.makedirs(dest_dir, exist_ok=True)
        name = f"data-{uuid.uuid4()}-0.parquet"
        dest = os.path.join(dest_dir, name)
        os.rename(src, dest)
    finally:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    written = write.WrittenFile(dest, name, meta.num_rows, os.path.getsize(dest), (), 0,
                                write.file_stats(meta, schema))
    try:
        return commits.commit(table.path, table.name, schema,
                              [write.data_file_entry(written, schema)])
    except BaseException:
        os.unlink(dest)
        raise


def py_read_ids(table: Any, snapshot_id: int | None = None) -> list[int]:
    """The ``id`` column of every live row of a snapshot (default: latest), read with pyarrow
    from the files the manifests name (column ``id`` is never renamed in these tests)."""
    import pyarrow.parquet as pq

    snap = table.latest_snapshot if snapshot_id is None else table.snapshot(snapshot_id)
    out: list[int] = []
    for f in table.data_files(snap):
        out += pq.read_table(f.path, columns=["id"]).column("id").to_pylist()
    return sorted(out)


def mixed_loop(table_path: str, log: str, start: int, count: int, what: str,
               max_attempts: int | None = None) -> None:
    """``count`` commits (forever when 0): ``what`` is "insert" (3 rows with fresh ids),
    "alter" (add column ``c<k>``, then set option ``k<k>``) or "mixed" (insert, alter,
    option in turn). Each success is logged after it committed; with ``max_attempts`` a
    commit that keeps losing races fails, and the failure is logged with its message."""
    from schemalab.errors import CommitConflictError
    from schemalab.paimon import commit as commits
    from schemalab.paimon import schema_manager as manager
    from schemalab.table import Table
    from schemalab.types.parse import parse_type

    if max_attempts is not None:
        commits.MAX_ATTEMPTS = max_attempts
        manager.MAX_COMMIT_ATTEMPTS = max_attempts
    import pyarrow.parquet  # noqa: F401 - imported before "ready": kills hit commits, not imports

    t = Table(table_path)
    log_line(log, {"ready": True, "pid": os.getpid()})
    go = os.environ.get("SCHEMALAB_GO_FILE")
    if go:  # racing writers start together
        wait_for(go, 300)
    kinds = {"insert": ("insert",), "alter": ("alter", "option"),
             "mixed": ("insert", "alter", "option")}[what]
    k = start
    n = 0
    while count == 0 or n < count:
        kind = kinds[n % len(kinds)]
        n += 1
        try:
            if kind == "insert":
                ids = [k * 10 + j for j in range(3)]
                snap = py_insert(t, [{"id": i, "writer": start} for i in ids])
                log_line(log, {"snapshot": snap.id, "ids": ids})
            elif kind == "alter":
                s = t.alter(AddColumn((f"c{k}",), parse_type("INT")))
                log_line(log, {"schema": s.id, "column": f"c{k}"})
            else:
                s = t.alter(SetOption(f"k{k}", str(k)))
                log_line(log, {"schema": s.id, "option": f"k{k}"})
        except CommitConflictError as e:
            log_line(log, {"failed": kind, "error": str(e), "ids":
                           [k * 10 + j for j in range(3)] if kind == "insert" else []})
        k += 1


def main(argv: Sequence[str]) -> int:
    mode = argv[0]
    if mode == "mixed-loop":
        mixed_loop(argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5],
                   int(argv[6]) if len(argv) > 6 else None)
        return 0
    if mode == "alter-loop":
        alter_loop(argv[1], argv[2], int(argv[3]))
    elif mode == "insert-loop":
        insert_loop(argv[1], argv[2], argv[3], int(argv[4]), argv[5])
    else:
        raise SystemExit(f"unknown mode {mode}")
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a child process
    sys.exit(main(sys.argv[1:]))
