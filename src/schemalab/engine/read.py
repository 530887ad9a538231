"""Running a read plan on Spark: one DataFrame in the plan's schema, file groups unioned,
primary-key tables merged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.merge.read import merge_read
from schemalab.engine.plan import ReadPlan
from schemalab.engine.scan import read_group
from schemalab.engine.spark_reader import all_nullable
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


def execute(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """One Spark DataFrame in the plan's target schema."""
    if not any(g.files for g in plan.groups):
        return empty_frame(plan, spark)
    if plan.merge_engine is not None:
        return merge_read(plan, spark)
    frames = [read_group(plan, g, spark) for g in plan.groups if g.files]
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def empty_frame(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """No rows, in the plan's schema. Built in the JVM: ``createDataFrame([])`` would start a
    Python worker."""
    from pyspark.sql import functions as F

    return spark.range(0).select(*[
        F.lit(None).cast(all_nullable(to_spark(f.type))).alias(f.name)
        for f in plan.target.fields])
