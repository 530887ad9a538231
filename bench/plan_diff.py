"""Do two schemalab trees give Spark the same work? Prints the optimized and physical plans
of the benchmarks' reads (the evolved read and the primary-key merge read, each followed by
the benchmarks' aggregate) with expression ids and file-name UUIDs normalised, so the
outputs of two checkouts can be compared with ``diff``. Plans do not depend on the machine's
load, which makes this the way to check that a refactor left the read's cost unchanged when
the machine is too busy for timings.

    PYTHONPATH=<tree>/src .venv/bin/python bench/plan_diff.py TABLE[@SNAPSHOT] ... > plans.txt
"""

from __future__ import annotations

import re
import sys

from pyspark.sql import functions as F

import schemalab as sl
from schemalab.spark import local_spark


def aggregate(df):  # type: ignore[no-untyped-def]
    exprs = [F.count(F.lit(1)).alias("_rows")]
    for c in df.columns:
        q = "`" + c.replace("`", "``") + "`"
        exprs += [F.count(F.col(q)).alias(f"n_{c}"), F.max(F.col(q)).alias(f"max_{c}")]
    return df.agg(*exprs)


def normalise(text: str) -> str:
    text = re.sub(r"#\d+L?", "#", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", text)
    text = re.sub(r"/tmp/b20-[a-z]+-(old|new)", "/tmp/BENCH", text)
    text = re.sub(r"plan_id=\d+", "plan_id=", text)
    text = re.sub(r"(Subquery|ReusedExchange|BroadcastExchange|Exchange)[^\n]*?\[id=#?\d+\]",
                  r"\1 [id]", text)
    return re.sub(r"__sl_[a-z_]*\d+", "__sl_N", text)


def main() -> None:
    spark = local_spark("plan-diff")
    for arg in sys.argv[1:]:
        path, _, snap = arg.partition("@")
        t = sl.open_table(path, spark=spark)
        df = aggregate(t.read(snapshot_id=int(snap)) if snap else t.read())
        qe = df._jdf.queryExecution()
        print(f"### {normalise(path)}@{snap or 'latest'}")
        print(normalise(qe.optimizedPlan().toString()))
        print(normalise(qe.executedPlan().toString()))
    spark.stop()


if __name__ == "__main__":
    main()
