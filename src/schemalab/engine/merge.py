"""The merge of a primary-key table's rows (Paimon's deduplicate merge engine).

Each group of files is first evolved to the schema read (renamed, retyped, added and dropped
columns as for append tables), and only then are the rows of one key merged, so a renamed or
retyped column merges correctly: the version with the highest sequence number wins, and a
key whose winner is a delete is gone.

    >>> wh.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES "   # doctest: +SKIP
    ...        "('primary-key' = 'id', 'bucket' = '2')")
    >>> wh.sql("INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b')")  # doctest: +SKIP
    >>> print(wh.table("t").explain_read(key={"id": 1}).key)     # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.plan import ReadPlan
from schemalab.engine.scan import KIND_COL, SEQ_COL, read_group
from schemalab.engine.spark_reader import quote
from schemalab.paimon.primary_key import RETRACT, check_merge_engine, merge_key_columns

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

_MAX_SEQ = "__sl_max_seq"


def versions(plan: ReadPlan, spark: SparkSession, *, with_file: bool = False) -> DataFrame:
    """Every row of every file, evolved to the plan's schema, with its sequence number and
    row kind (and, with ``with_file``, its file): the input of the merge."""
    check_merge_engine(plan.target, plan.table)
    frames = [read_group(plan, g, spark, system=True, with_file=with_file)
              for g in plan.groups if g.files]
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def merge_read(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """The deduplicate merge of the plan's files: per key, the row with the highest sequence
    number, unless it retracts the key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    df = versions(plan, spark)
    ignore_delete = plan.target.effective_options().get("ignore-delete", "false") == "true"
    if ignore_delete:
        df = df.where(~F.col(KIND_COL).isin(*RETRACT))
    keys = [F.col(quote(k)) for k in merge_key_columns(plan.target)]
    # The highest sequence number of each key, then its row. A per-key max rather than
    # row_number() == 1: Spark plans the latter with a partial "window group limit" that
    # sorts every row once more before the shuffle (25% slower at 10M rows; bench/README.md).
    # A writer numbers each record of a bucket once, so a key's maximum is one row.
    latest = Window.partitionBy(*keys)
    merged = df.withColumn(_MAX_SEQ, F.max(SEQ_COL).over(latest)) \
        .where((F.col(SEQ_COL) == F.col(_MAX_SEQ)) & ~F.col(KIND_COL).isin(*RETRACT))
    return merged.select(*[F.col(quote(f.name)) for f in plan.target.fields])

