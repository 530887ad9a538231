"""What every merge function gets, and the fold that partial-update and aggregation share.

A merge function turns the versions of each key (rows in the schema read plus ``__sl_seq``
and ``__sl_kind``) into one row per key with the *result's* sequence number and kind, as
Paimon's ``MergeFunction.getResult``; the read then drops results that retract
(``DropDeleteReader``). Paimon wraps every merge function in ``ReducerMergeFunctionWrapper``:
a key with a single version is returned as it is, without calling the function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.engine.merge.order import compare, sort_fields
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.spark_reader import all_nullable, quote
from schemalab.paimon.merge_options import MergeOptions
from schemalab.types.model import DataField
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

_RECORDS = "__sl_records"
_RESULT = "__sl_result"


@dataclass(frozen=True)
class MergeInput:
    """The table (for messages), the key columns, the fields read and the merge options."""

    table: str
    keys: tuple[str, ...]
    fields: tuple[DataField, ...]
    opts: MergeOptions

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def null(self, f: DataField) -> Column:
        from pyspark.sql import functions as F

        return F.lit(None).cast(all_nullable(to_spark(f.type)))


#: one step of a fold: (state, record) → state; both structs
Step = Callable[["Column", "Column"], "Column"]


def fold_merge(rows: DataFrame, m: MergeInput, init: Column, step: Step) -> DataFrame:
    """The versions of each key in merge order, folded by ``step`` from ``init``; ``init``
    and each step's result are structs whose first fields are the record's (``__sl_seq``,
    ``__sl_kind``, the fields read), followed by any state of the function's own. A key
    with one version is that version (Paimon's reducer)."""
    from pyspark.sql import functions as F

    record_names = [SEQ_COL, KIND_COL, *m.names]
    record = F.struct(*[F.col(quote(n)) for n in record_names])
    grouped = rows.groupBy(*[F.col(quote(k)) for k in m.keys]).agg(
        F.collect_list(record).alias(_RECORDS))
    fields = sort_fields(m.opts)
    ordered = F.array_sort(F.col(_RECORDS), lambda a, b: compare(a, b, fields))

    def finish(state: Column) -> Column:
        return F.struct(*[state.getField(n).alias(n) for n in record_names])

    folded = F.aggregate(ordered, init, step, finish)
    result = F.when(F.size(F.col(_RECORDS)) == 1, F.col(_RECORDS)[0]).otherwise(folded)
    return grouped.select(result.alias(_RESULT)).select(
        *[F.col(_RESULT).getField(n).alias(n) for n in (*m.names, SEQ_COL, KIND_COL)])


def state(values: dict[str, Column]) -> Column:
    """A fold state struct from named values, in the given order."""
    from pyspark.sql import functions as F

    return F.struct(*[v.alias(k) for k, v in values.items()])
