"""Paimon's ``DeduplicateMergeFunction``: the newest version of a key wins (highest
``sequence.field`` values, then highest ``_SEQUENCE_NUMBER``); with ``ignore-delete`` its
-U/-D versions are skipped, so an older insert survives them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.merge.function import MergeInput
from schemalab.engine.merge.order import newest_first
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, retract
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

_TOP = "__sl_top"


def deduplicate(rows: DataFrame, m: MergeInput) -> DataFrame:
    """The winning version of each key, with its own sequence number and kind."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if m.opts.ignore_delete:
        rows = rows.where(~retract(F.col(KIND_COL)))
    keys = [F.col(quote(k)) for k in m.keys]
    if not m.opts.sequence_fields:
        # The highest sequence number per key, then its row: a per-key max rather than
        # row_number() == 1, which Spark plans with a partial "window group limit" that
        # sorts every row once more before the shuffle (25% slower at 10M rows). A writer
        # numbers each record of a bucket once, so a key's maximum is one row.
        top = F.max(SEQ_COL).over(Window.partitionBy(*keys))
        return rows.withColumn(_TOP, top).where(F.col(SEQ_COL) == F.col(_TOP)).drop(_TOP)
    ranked = F.row_number().over(Window.partitionBy(*keys).orderBy(*newest_first(m.opts)))
    return rows.withColumn(_TOP, ranked).where(F.col(_TOP) == 1).drop(_TOP)
