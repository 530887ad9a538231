"""Running a read plan on Spark: one DataFrame in the plan's schema, file groups unioned
(each without its deleted rows), primary-key tables merged — or, in Paimon's
deletion-vector mode, not merged: their visible files already hold one live row per key."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from schemalab.engine.keyed import RETRACT
from schemalab.engine.merge.keyed_read import merge_read
from schemalab.engine.plan import ReadPlan
from schemalab.engine.row_merge_read import row_merge_read
from schemalab.engine.scan import KIND_COL, read_group
from schemalab.engine.session_cache import cached_read
from schemalab.engine.spark_reader import all_nullable, quote
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


def execute(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """One Spark DataFrame in the plan's target schema. The same plan again in the same
    session, under the same settings, gets the DataFrame built the first time (see
    :mod:`schemalab.engine.session_cache`)."""
    return cached_read(plan, spark, lambda: _build(plan, spark))


def _build(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    if not any(g.files for g in plan.groups):
        return empty_frame(plan, spark)
    if plan.blobs:
        from schemalab.engine.blob_join import blob_read

        return blob_read(plan, spark, execute)
    if plan.row_merge is not None:
        return row_merge_read(plan, spark)
    if plan.merges:
        return merge_read(plan, spark)
    return plain_read(plan, spark)


def plain_read(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """Every row of the plan's files that no delete removes. A primary-key table read this
    way (deletion-vector mode) also drops its retract rows (-U/-D), as Paimon's merge of a
    file holding them does."""
    from pyspark.sql import functions as F

    keyed = plan.merge_engine is not None
    frames = [read_group(plan, g, spark, system=keyed) for g in plan.groups if g.files]
    df = functools.reduce(lambda a, b: a.union(b), frames)
    if keyed:
        df = df.where(~F.col(KIND_COL).isin(*RETRACT)).select(
            *[F.col(quote(f.name)) for f in plan.target.fields])
    return df


def empty_frame(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """No rows, in the plan's schema. Built in the JVM: ``createDataFrame([])`` would start a
    Python worker."""
    from pyspark.sql import functions as F

    system = () if plan.row_merge is None else plan.row_merge.system
    return spark.range(0).select(*[
        F.lit(None).cast(all_nullable(to_spark(f.type))).alias(f.name)
        for f in plan.target.fields], *[F.lit(None).cast("bigint").alias(c) for c in system])
