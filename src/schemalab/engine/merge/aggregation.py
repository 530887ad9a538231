"""Paimon's ``AggregateMergeFunction``: the versions of a key are folded oldest first, each
field by its aggregate function (``fields.<f>.aggregate-function``, else
``fields.default-aggregate-function``, else ``last_non_null_value``; key fields keep their
value, ``sequence.field`` fields their last non-NULL value). A +I/+U version aggregates, a
-U/-D version retracts. The result is an insert: a key whose versions were all retracted
still reads, with its retracted values, unless ``aggregation.remove-record-on-delete``
(Paimon 1.1) is set, where a -D version makes the key read as deleted (its values start
the next aggregation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.keyed import DELETE, INSERT, UPDATE_AFTER
from schemalab.engine.merge.aggregators import aggregators
from schemalab.engine.merge.function import Fold, MergeInput, fold_merge, state
from schemalab.engine.merge.grouped import grouped_merge
from schemalab.engine.merge.order import Fielded
from schemalab.engine.merge.records import KIND_COL, SEQ_COL

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame


def aggregation(rows: DataFrame, m: MergeInput) -> DataFrame:
    """Each key's versions aggregated into one row (by built-in aggregates where they give
    the same: :mod:`schemalab.engine.merge.grouped`)."""
    grouped = grouped_merge(rows, m)
    return fold_merge(rows, m, aggregation_fold(m)) if grouped is None else grouped


def aggregation_fold(m: MergeInput) -> Fold:
    """Paimon's aggregation as a fold of a key's versions, oldest first."""
    from pyspark.sql import functions as F

    aggs = aggregators(m.opts.aggregates, {f.name: f.type for f in m.fields}, m.table)
    flags = {f.name: f"__sl_init_{i}" for i, f in enumerate(m.fields)
             if f.name in aggs and aggs[f.name].stateful}

    def init() -> dict[str, Column]:
        values: dict[str, Column] = {SEQ_COL: F.lit(None).cast("long"),
                                     KIND_COL: F.lit(INSERT).cast("tinyint")}
        values.update({f.name: m.null(f) for f in m.fields})
        values.update({flag: F.lit(False) for flag in flags.values()})
        return values

    def values(acc: Fielded, x: Fielded, adds: Column | None) -> dict[str, Column]:
        """The state after version ``x``: aggregated where ``adds``, else retracted (None:
        ``x`` is known to be a +I/+U version)."""
        values: dict[str, Column] = {SEQ_COL: x.getField(SEQ_COL),
                                     KIND_COL: F.lit(INSERT).cast("tinyint")}
        new_flags: dict[str, Column] = {}
        for f in m.fields:
            a, v = acc.getField(f.name), x.getField(f.name)
            agg = aggs[f.name]
            flag = acc.getField(flags[f.name]) if f.name in flags else None
            added, fl_add = agg.agg(a, v, flag)
            if adds is None:
                values[f.name] = added
                if fl_add is not None:
                    new_flags[flags[f.name]] = fl_add
                continue
            taken, fl_ret = agg.retract(a, v, flag)
            values[f.name] = F.when(adds, added).otherwise(taken)
            if flag is not None and fl_add is not None and fl_ret is not None:
                new_flags[flags[f.name]] = F.when(adds, fl_add).otherwise(fl_ret)
        for flag_name in flags.values():
            values[flag_name] = new_flags.get(flag_name, acc.getField(flag_name))
        return values

    def step(acc: Column, x: Column) -> Column:
        kind = x.getField(KIND_COL)
        merged = state(values(acc, x, kind.isin(INSERT, UPDATE_AFTER)))
        if not m.opts.aggregation_remove_record_on_delete:
            return merged
        # Paimon 1.1: a -D makes the row the -D's own values, read as deleted
        removed: dict[str, Column] = {SEQ_COL: x.getField(SEQ_COL),
                                      KIND_COL: F.lit(DELETE).cast("tinyint")}
        removed.update({f.name: x.getField(f.name) for f in m.fields})
        removed.update({flag: F.lit(False) for flag in flags.values()})
        return F.when(kind == DELETE, state(removed)).otherwise(merged)

    return Fold(init, step, lambda acc, x: values(acc, x, None))
