"""Paimon's ``PartialUpdateMergeFunction`` (Paimon 1.0): the versions of a key are folded
oldest first, each field taking the newest non-NULL value.

* ``fields.<s>.sequence-group = a,b``: fields ``a``, ``b`` (and ``s`` itself) are updated only
  by versions whose ``s`` is at least the current one (NULL first), then take that version's
  value even if NULL; a version whose ``s`` is NULL leaves the group alone. A field of a group
  with an aggregate function aggregates instead (``aggReversed`` for older versions).
* -U/-D versions: skipped with ``ignore-delete``; with sequence groups they retract the
  groups they are newer for (fields set to NULL or retracted by their function, and with
  ``partial-update.remove-record-on-sequence-group`` a -D removes the row);
  with ``partial-update.remove-record-on-delete`` a -D empties the row and the key reads as
  deleted until a later insert; otherwise the read fails with Paimon's message.

The result carries the sequence number of the last insert folded in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.keyed import DELETE, INSERT
from schemalab.engine.merge.aggregators import Aggregator, aggregators
from schemalab.engine.merge.function import Fold, MergeInput, fold_merge, state
from schemalab.engine.merge.grouped import grouped_merge
from schemalab.engine.merge.options import SequenceGroup
from schemalab.engine.merge.order import Fielded, compare
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, retract
from schemalab.types.model import DataField

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame


def _init_name(i: int) -> str:
    return f"__sl_init_{i}"


class _Fold:
    def __init__(self, m: MergeInput) -> None:
        self.m = m
        self.aggs: dict[str, Aggregator] = aggregators(
            m.opts.aggregates, {f.name: f.type for f in m.fields}, m.table)
        self.groups = m.opts.sequence_groups
        self.group_of: dict[str, SequenceGroup] = {}
        for g in self.groups:
            for name in (*g.fields, *g.sequence_fields):
                self.group_of[name] = g
        self.flags = {f.name: _init_name(i) for i, f in enumerate(m.fields)
                      if f.name in self.aggs and self.aggs[f.name].stateful}

    # ---- state --------------------------------------------------------------------------

    def init(self) -> dict[str, Column]:
        from pyspark.sql import functions as F

        values: dict[str, Column] = {SEQ_COL: F.lit(None).cast("long"),
                                     KIND_COL: F.lit(INSERT).cast("tinyint")}
        values.update({f.name: self.m.null(f) for f in self.m.fields})
        values.update({flag: F.lit(False) for flag in self.flags.values()})
        return values

    def _state(self, acc: Column, seq: Column, kind: int, new: dict[str, Column],
               flags: dict[str, Column]) -> Column:
        return state(self._values(acc, seq, kind, new, flags))

    def _values(self, acc: Fielded, seq: Column, kind: int, new: dict[str, Column],
                flags: dict[str, Column]) -> dict[str, Column]:
        from pyspark.sql import functions as F

        values: dict[str, Column] = {SEQ_COL: seq, KIND_COL: F.lit(kind).cast("tinyint")}
        for f in self.m.fields:
            values[f.name] = new.get(f.name, acc.getField(f.name))
        for name, flag in self.flags.items():
            values[flag] = flags.get(name, acc.getField(flag))
        return values

    def _empty(self, seq: Column, kind: int) -> Column:
        from pyspark.sql import functions as F

        values: dict[str, Column] = {SEQ_COL: seq, KIND_COL: F.lit(kind).cast("tinyint")}
        values.update({f.name: self.m.null(f) for f in self.m.fields})
        values.update({flag: F.lit(False) for flag in self.flags.values()})
        return state(values)

    # ---- one step ------------------------------------------------------------------------

    def step(self, acc: Column, x: Column) -> Column:
        from pyspark.sql import functions as F

        kind = x.getField(KIND_COL)
        return F.when(retract(kind), self._retract(acc, x)).otherwise(self._add(acc, x))

    def _group_tests(self, acc: Fielded, x: Fielded, g: SequenceGroup) -> tuple[Column, Column]:
        """(the version leaves the group alone: all its sequence fields NULL,
        the version is at least as new as the group's current values)."""
        import functools
        import operator

        empty = functools.reduce(operator.and_, [x.getField(s).isNull()
                                                 for s in g.sequence_fields])
        newer = compare(x, acc, [(s, True) for s in g.sequence_fields]) >= 0
        return empty, newer

    def _add(self, acc: Column, x: Column) -> Column:
        return state(self.add(acc, x))

    def add(self, acc: Fielded, x: Fielded) -> dict[str, Column]:
        """The state after a +I/+U version ``x``, as named values."""
        from pyspark.sql import functions as F

        new: dict[str, Column] = {}
        flags: dict[str, Column] = {}
        tests = {g: self._group_tests(acc, x, g) for g in self.groups}
        for f in self.m.fields:
            name, a, v = f.name, acc.getField(f.name), x.getField(f.name)
            agg = self.aggs.get(name)
            flag = acc.getField(self.flags[name]) if name in self.flags else None
            g = self.group_of.get(name)
            if g is None:
                if agg is not None:
                    new[name], fl = agg.agg(a, v, flag)
                    if fl is not None:
                        flags[name] = fl
                else:
                    new[name] = F.coalesce(v, a)
                continue
            empty, newer = tests[g]
            if name in g.sequence_fields or agg is None:
                updated, reversed_, fl_new, fl_rev = v, a, flag, flag
            else:
                updated, fl_new = agg.agg(a, v, flag)
                reversed_, fl_rev = agg.agg_reversed(a, v, flag)
            new[name] = F.when(empty, a).when(newer, updated).otherwise(reversed_)
            if flag is not None and fl_new is not None and fl_rev is not None:
                flags[name] = F.when(empty, flag).when(newer, fl_new).otherwise(fl_rev)
        return self._values(acc, x.getField(SEQ_COL), INSERT, new, flags)

    def _retract(self, acc: Column, x: Column) -> Column:
        from pyspark.sql import functions as F

        opts = self.m.opts
        if opts.ignore_delete:
            return self._state(acc, acc.getField(SEQ_COL), INSERT, {}, {})
        kind = x.getField(KIND_COL)
        if self.groups:
            return self._retract_groups(acc, x)
        if opts.remove_record_on_delete:
            return F.when(kind == DELETE, self._empty(acc.getField(SEQ_COL), DELETE)) \
                .otherwise(self._state(acc, acc.getField(SEQ_COL), INSERT, {}, {}))
        message = (f"Table {self.m.table}: By default, Partial update can not accept delete "
                   "records, you can choose one of the following solutions:\n1. Configure "
                   "'ignore-delete' to ignore delete records.\n2. Configure "
                   "'partial-update.remove-record-on-delete' to remove the whole row when "
                   "receiving delete records.\n3. Configure 'sequence-group's to retract "
                   "partial columns. (A -U/-D version of a key met other versions of it; rule "
                   "merge-engine.)")
        return F.raise_error(F.lit(message))

    def _retract_groups(self, acc: Column, x: Column) -> Column:
        from pyspark.sql import functions as F

        new: dict[str, Column] = {}
        flags: dict[str, Column] = {}
        removes = F.lit(False)
        for g in self.groups:
            empty, newer = self._group_tests(acc, x, g)
            if set(g.sequence_fields) & set(self.m.opts.remove_record_on_sequence_group):
                removes = removes | (~empty & newer)
            for name in (*g.sequence_fields, *g.fields):
                a, v = acc.getField(name), x.getField(name)
                agg = self.aggs.get(name)
                flag = acc.getField(self.flags[name]) if name in self.flags else None
                if name in g.sequence_fields:
                    new[name] = F.when(empty, a).when(newer, v).otherwise(a)
                    continue
                if agg is None:
                    new[name] = F.when(empty, a).when(newer, self.m.null(self._field(name))) \
                        .otherwise(a)
                    continue
                retracted, fl = agg.retract(a, v, flag)
                new[name] = F.when(empty, a).otherwise(retracted)
                if flag is not None and fl is not None:
                    flags[name] = F.when(empty, flag).otherwise(fl)
        kept = self._state(acc, acc.getField(SEQ_COL), INSERT, new, flags)
        deleted = self._empty(acc.getField(SEQ_COL), DELETE)
        return F.when((x.getField(KIND_COL) == DELETE) & removes, deleted).otherwise(kept)

    def _field(self, name: str) -> DataField:
        return next(f for f in self.m.fields if f.name == name)


def partial_update_fold(m: MergeInput) -> Fold:
    """Paimon's partial-update as a fold of a key's versions, oldest first."""
    fold = _Fold(m)
    return Fold(fold.init, fold.step, fold.add)


def partial_update(rows: DataFrame, m: MergeInput) -> DataFrame:
    """Each key's versions folded into one row (by built-in aggregates where they give the
    same: :mod:`schemalab.engine.merge.grouped`)."""
    grouped = grouped_merge(rows, m)
    return fold_merge(rows, m, partial_update_fold(m)) if grouped is None else grouped
