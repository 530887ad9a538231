"""Paimon's ``FirstRowMergeFunction``: the oldest version of a key wins and later ones are
ignored. A -U/-D version reaching the function fails the read ("By default, First row merge
engine can not accept DELETE/UPDATE_BEFORE records.") unless ``ignore-delete`` skips it; a
key with a single version is returned as it is (Paimon's reducer), so a lone -D is simply
not read.

Java's batch scan of a first-row table reads compacted files only (level > 0: its writer
compacts level 0 away at once); the read plan leaves level 0 out (see ``merge_options``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.merge.function import MergeInput
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, retract
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

_FIRST = "__sl_first"
_COUNT = "__sl_count"
_RETRACTS = "__sl_retracts"


def first_row(rows: DataFrame, m: MergeInput) -> DataFrame:
    """The first version of each key, with its own sequence number and kind."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = Window.partitionBy(*[F.col(quote(k)) for k in m.keys])
    is_retract = retract(F.col(KIND_COL))
    if m.opts.ignore_delete:
        rows = rows.where(~is_retract)
        first = F.min(SEQ_COL).over(keys)
        return rows.withColumn(_FIRST, first).where(F.col(SEQ_COL) == F.col(_FIRST)) \
            .drop(_FIRST)
    message = (f"Table {m.table}: By default, First row merge engine can not accept "
               "DELETE/UPDATE_BEFORE records.\nYou can config 'ignore-delete' to ignore the "
               "DELETE/UPDATE_BEFORE records. (A -U/-D version of a key met other versions of "
               "it; rule merge-engine.)")
    rows = (rows.withColumn(_FIRST, F.min(SEQ_COL).over(keys))
            .withColumn(_COUNT, F.count(F.lit(1)).over(keys))
            .withColumn(_RETRACTS, F.max(is_retract.cast("int")).over(keys)))
    bad = (F.col(_COUNT) > 1) & (F.col(_RETRACTS) == 1)
    keep = F.when(bad, F.raise_error(F.lit(message)).cast("boolean")) \
        .otherwise(F.col(SEQ_COL) == F.col(_FIRST))
    return rows.where(keep).drop(_FIRST, _COUNT, _RETRACTS)
