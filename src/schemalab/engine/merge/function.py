"""What every merge function gets, and the fold that partial-update and aggregation share.

A merge function turns the versions of each key (rows in the schema read plus ``__sl_seq``
and ``__sl_kind``) into one row per key with the *result's* sequence number and kind, as
Paimon's ``MergeFunction.getResult``; the read then drops results that retract
(``DropDeleteReader``). Paimon wraps every merge function in ``ReducerMergeFunctionWrapper``:
a key with a single version is returned as it is, without calling the function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.engine.merge.options import MergeOptions
from schemalab.engine.merge.order import Fielded, compare, sort_fields
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.spark_reader import all_nullable, cast_to, quote
from schemalab.types.model import DataField
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

_RECORDS = "__sl_records"
_RESULT = "__sl_result"
_STATE = "__sl_state"


@dataclass(frozen=True)
class MergeInput:
    """The table (for messages), the key columns, the fields read and the merge options."""

    table: str
    keys: tuple[str, ...]
    fields: tuple[DataField, ...]
    opts: MergeOptions
    #: no file read holds a -U/-D row (nor row kinds in a value column): no version retracts
    inserts_only: bool = False

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def null(self, f: DataField) -> Column:
        from pyspark.sql import functions as F

        return cast_to(F.lit(None), all_nullable(to_spark(f.type)))


#: one step of a fold: (state, record) → state; both structs
Step = Callable[["Column", "Column"], "Column"]
#: one step of a fold over a +I/+U record: (state, record) → the state's named values
AddStep = Callable[[Fielded, Fielded], "dict[str, Column]"]


class Values:
    """A record or fold state as one column expression per field, not a struct: a step
    reading a field gets that field's own expression, so each result column depends on
    the columns it reads only, and Spark prunes every other column from the scans."""

    def __init__(self, values: dict[str, Column]) -> None:
        self.values = values

    def getField(self, name: str) -> Column:  # noqa: N802 - as Column's
        return self.values[name]


@dataclass(frozen=True)
class Fold:
    """A merge function as a fold: its state before any version (``initial``: named
    values), and each ``step``'s result, are structs whose first fields are the record's
    (``__sl_seq``, ``__sl_kind``, the fields read), followed by any state of the function's
    own. ``add`` is the step as named values, for +I/+U records only (a fold known to meet
    no -U/-D record). ``init`` and ``init_values`` are built when first asked for: each
    expression built costs the driver calls into Spark."""

    initial: Callable[[], dict[str, Column]]
    step: Step
    add: AddStep | None = None

    @functools.cached_property
    def init(self) -> Column:
        return state(self.initial())

    @functools.cached_property
    def init_values(self) -> dict[str, Column]:
        return self.initial()


def record(m: MergeInput) -> Column:
    """The row's version as the struct a fold steps over: ``__sl_seq``, ``__sl_kind`` and
    the fields read, from the columns of those names."""
    from pyspark.sql import functions as F

    return F.struct(*[F.col(quote(n)).alias(n) for n in _record_names(m)])


def _record_names(m: MergeInput) -> list[str]:
    return [SEQ_COL, KIND_COL, *m.names]


def _finish(m: MergeInput, state: Column) -> Column:
    """The record part of a fold's state."""
    from pyspark.sql import functions as F

    return F.struct(*[state.getField(n).alias(n) for n in _record_names(m)])


def fold_merge(rows: DataFrame, m: MergeInput, fold: Fold) -> DataFrame:
    """The versions of each key in merge order, folded. A key with one version is that
    version (Paimon's reducer)."""
    from pyspark.sql import functions as F

    grouped = rows.groupBy(*[F.col(quote(k)) for k in m.keys]).agg(
        F.collect_list(record(m)).alias(_RECORDS))
    fields = sort_fields(m.opts)
    ordered = F.array_sort(F.col(_RECORDS), lambda a, b: compare(a, b, fields))
    folded = F.aggregate(ordered, fold.init, fold.step, lambda s: _finish(m, s))
    result = F.when(F.size(F.col(_RECORDS)) == 1, F.col(_RECORDS)[0]).otherwise(folded)
    return grouped.select(result.alias(_RESULT)).select(
        *[F.col(_RESULT).getField(n).alias(n) for n in (*m.names, SEQ_COL, KIND_COL)])


def fold_two(rows: DataFrame, m: MergeInput, fold: Fold, newer: str) -> DataFrame:
    """``rows`` (a key's older version as columns, its newer version as the record in
    column ``newer``, NULL where the key has no newer version) as the key's merged row:
    where ``newer`` is NULL the older version as it is (Paimon's reducer), otherwise the
    fold of the two. Columns: the fields read, ``__sl_seq``, ``__sl_kind``.

    The steps are written out, so they run as plain generated code (no array, sort or
    lambda), each state in a column of its own: a step reads every field of the state
    before it, and a state the optimiser inlined into each of those reads would be
    computed once per field, per field of the next step. Only rows with both versions
    build a record and fold."""
    from pyspark.sql import functions as F

    pairs = F.col(newer).isNotNull()
    first = rows.withColumn(_STATE, F.when(pairs, fold.step(fold.init, record(m))))
    second = first.withColumn(_STATE, F.when(pairs, fold.step(F.col(_STATE), F.col(newer))))
    return second.select(*[F.when(pairs, F.col(_STATE).getField(n))
                           .otherwise(F.col(quote(n))).alias(n)
                           for n in (*m.names, SEQ_COL, KIND_COL)])


def fold_two_inserts(rows: DataFrame, m: MergeInput, fold: Fold, newer: dict[str, Column],
                     present: Column) -> DataFrame:
    """:func:`fold_two` where neither version retracts (no -U/-D record in any file read):
    the key's older version in the columns of the fields' names, its newer one the values
    ``newer`` gives (a field not in it: the older's column), ``present`` where there is a
    newer one. Each result column is its own expression of its own inputs
    (:class:`Values`), so a query of a few columns reads only those (and the key's)."""
    return rows.select(*folded_two_inserts(m, fold, newer, present))


def folded_two_inserts(m: MergeInput, fold: Fold, newer: dict[str, Column],
                       present: Column) -> list[Column]:
    """The result columns of :func:`fold_two_inserts` (the fields read, ``__sl_seq``,
    ``__sl_kind``)."""
    from pyspark.sql import functions as F

    assert fold.add is not None
    names = _record_names(m)
    older = Values({n: F.col(quote(n)) for n in names})
    newest = Values({n: newer.get(n, F.col(quote(n))) for n in names})
    result = fold.add(Values(fold.add(Values(fold.init_values), older)), newest)
    # a key is the same in both versions: its column as it is, so that a filter on it
    # reaches the scan's Parquet filters (row groups skipped by their statistics)
    return [F.col(quote(n)) if n in m.keys else
            F.when(present, result[n]).otherwise(F.col(quote(n))).alias(n)
            for n in (*m.names, SEQ_COL, KIND_COL)]


def state(values: dict[str, Column]) -> Column:
    """A fold state struct from named values, in the given order."""
    from pyspark.sql import functions as F

    return F.struct(*[v.alias(k) for k, v in values.items()])
