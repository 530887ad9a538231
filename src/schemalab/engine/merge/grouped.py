"""Partial-update and aggregation merged by Spark's own aggregate functions, where that gives
exactly what folding each key's versions oldest first gives.

The fold (:func:`schemalab.engine.merge.function.fold_merge`) collects every version of a
key into an array, sorts it and steps over it in a lambda: every row of a bucket to merge
is copied into an array of structs. When no version retracts (no -U/-D row in any file
read, no ``rowkind.field``), the versions merge in ``_SEQUENCE_NUMBER`` order (no
``sequence.field``) and each field's function only picks one version's value, the fold is
one built-in aggregate per field, which Spark runs in a hash aggregate of plain columns:

``last_non_null_value`` (partial-update's rule for a field without sequence group or
function)  the value of the newest version that has one: ``max_by(v, seq if v not NULL)``
``last_value``            the newest version's value, NULL too: ``max_by(v, seq)``
``first_value``           the oldest version's value: ``min_by(v, seq)``
``first_non_null_value``  ``min_by(v, seq if v not NULL)``
``max`` / ``min``         of the non-NULL values (``greatest`` / ``least`` in the fold)

``max_by``/``min_by`` skip rows whose ordering is NULL and take the value, NULL or not, of
the extreme one. A key's versions have distinct sequence numbers (one writer numbers a
bucket's records), so there are no ties. The result's sequence number is the newest
version's, and its row kind that version's own when it is the key's only one (Paimon's
reducer returns it as it is), else +I (the folds' result).

Measured by ``bench/merge_read.py`` (layout c: 20 commits of 5%, every row merged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.keyed import INSERT
from schemalab.engine.merge.function import MergeInput
from schemalab.engine.merge.options import AGGREGATION, PARTIAL_UPDATE
from schemalab.engine.merge.records import KIND_COL, SEQ_COL
from schemalab.engine.spark_reader import quote
from schemalab.types.model import AtomicType

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

#: the functions a built-in aggregate gives exactly (see the module's docstring)
_PICKS = ("last_non_null_value", "last_value", "first_value", "first_non_null_value")
_ORDERED = ("max", "min")


def grouped_merge(rows: DataFrame, m: MergeInput) -> DataFrame | None:
    """Each key's versions in ``rows`` merged into one row by built-in aggregates (columns:
    the fields read, ``__sl_seq``, ``__sl_kind``); None where that would not be exactly the
    fold (the caller folds then)."""
    from pyspark.sql import functions as F

    functions = _functions(m)
    if functions is None:
        return None
    seq = F.col(SEQ_COL)
    aggs = [_aggregate(F.col(quote(name)), seq, fn).alias(name)
            for name, fn in functions.items()]
    kind = F.when(F.count(F.lit(1)) == 1, F.max(KIND_COL)) \
        .otherwise(F.lit(INSERT)).cast("tinyint")
    merged = rows.groupBy(*[F.col(quote(k)) for k in m.keys]).agg(
        *aggs, F.max(SEQ_COL).alias(SEQ_COL), kind.alias(KIND_COL))
    return merged.select(*[F.col(quote(n)) for n in (*m.names, SEQ_COL, KIND_COL)])


def _functions(m: MergeInput) -> dict[str, str] | None:
    """Each value field's function, where every one has a built-in aggregate and the merge
    meets no retraction and no ``sequence.field``; else None."""
    opts = m.opts
    if not m.inserts_only or opts.sequence_fields or opts.rowkind_field is not None:
        return None
    out: dict[str, str] = {}
    for f in m.fields:
        if f.name in m.keys:
            continue
        if opts.engine == PARTIAL_UPDATE:
            if opts.sequence_groups or opts.aggregates:
                return None
            out[f.name] = "last_non_null_value"
            continue
        if opts.engine != AGGREGATION:
            return None
        spec = opts.aggregate_of(f.name)
        function = "last_non_null_value" if spec is None else spec.function
        ordered = function in _ORDERED and isinstance(f.type, AtomicType)
        if function not in _PICKS and not ordered:
            return None
        out[f.name] = function
    return out


def _aggregate(v: Column, seq: Column, function: str) -> Column:
    from pyspark.sql import functions as F

    if function == "max":
        return F.max(v)
    if function == "min":
        return F.min(v)
    order = F.when(v.isNotNull(), seq) if function.endswith("non_null_value") else seq
    return F.max_by(v, order) if function.startswith("last") else F.min_by(v, order)
