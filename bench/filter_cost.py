"""Benchmark: where the time of layout a's narrow merge read goes, what any filter that
drops rows costs in Spark's generated code, and what dropping them in the reader costs.

    .venv/bin/python bench/filter_cost.py [--rows 10000000,30000000] [--repeats 15]
                                          [--dir /tmp/schemalab-bench-merge]

The table is ``bench/merge_read.py``'s deduplicate table of layout a (generated there, or
here on first use): one INSERT in four buckets, then every tenth key upserted. Its merge
reads each bucket as ``newest``: the base file's rows whose key no newer file holds, and the
newer files whole. The base's rows are dropped by schemalab's Parquet reader
(:mod:`schemalab.engine.kept_scan`: a bitmap of the newer keys tested per batch); before
it, by a filter in the plan testing the same bitmap.

Each round reads, with ``merge_read.py``'s narrow query (``count(*), sum(id), sum(n)``),
interleaved:

* ``plain``        the plain copy of the merged rows (``spark.read.parquet``, as issue 25's)
* ``merge``        ``t.read()``
* ``base``         the base files' rows, no filter
* ``keeps-all``    the base, filtered by ``id + 0 != -1`` (true for every row: keys are ≥ 0)
* ``drops-one``    the base without its greatest key (one row)
* ``drops-tenth``  the base without every tenth key (``pmod(id, 10) != 0``: as many rows as
                   the merge drops, by the cheapest test there is)
* ``bitmap``       the base filtered by the newer files' key bitmap (the merge's filter
                   before the reader, and where the reader does not apply)
* ``reader``       the base, those rows dropped by schemalab's reader (the merge's way)
* ``newer``        the newer files alone

The extra cost of a filter is its time less ``base``'s. Spark compiles each filter into the
scan's loop; ``keeps-all`` shows a test that never drops costs nothing, ``drops-one`` what
dropping any row at all costs, whatever the test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import merge_read  # bench/ is the script's directory: run as python bench/filter_cost.py
from merge_read import JvmCpu, narrow


def candidates(spark: Any, d: str) -> dict[str, Callable[[], Any]]:
    """The reads of the module's docstring, each a function running the narrow query."""
    from pyspark.sql import functions as F

    import schemalab as sl
    from schemalab.engine.merge.keyed_read import merge_input, plans_of
    from schemalab.engine.merge.keyset import held_bitmap
    from schemalab.engine.merge.records import versions

    t = sl.Warehouse(os.path.join(d, "wh"), spark=spark).table("t")
    plan = t.read_plan()
    m = merge_input(plan)
    buckets = plans_of(plan, m.opts)
    if {b.strategy for b in buckets} != {"newest"}:
        raise SystemExit(f"{d}: the merge reads {sorted({b.strategy for b in buckets})} "
                         "buckets, not only newest ones")
    base_files = [f for b in buckets for f in b.base]
    newer_files = [f for b in buckets for f in b.rest]
    base = versions(plan, spark, files=base_files)
    newer = versions(plan, spark, files=newer_files)
    assert base is not None and newer is not None
    greatest = max(f.key_range[1][0] for f in base_files if f.key_range is not None)
    key = F.col("id") + F.lit(0)  # not a column alone: Spark pushes no such filter to Parquet
    held = held_bitmap(m.keys, newer_files, plan)
    assert held is not None
    bitmap = base.where(~held.test(spark))
    reader = versions(plan, spark, files=base_files, drop_held=held)
    assert reader is not None
    frames = {"base": base, "keeps-all": base.where(key != -1),
              "drops-one": base.where(key != greatest),
              "drops-tenth": base.where(F.pmod(F.col("id"), F.lit(10)) != 0),
              "bitmap": bitmap, "reader": reader, "newer": newer}
    out: dict[str, Callable[[], Any]] = {
        "plain": lambda: narrow(spark.read.parquet(os.path.join(d, "plain"))),
        "merge": lambda: narrow(t.read())}
    out.update({name: (lambda df=df: narrow(df)) for name, df in frames.items()})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="10000000,30000000")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--dir", default="/tmp/schemalab-bench-merge")
    args = p.parse_args(argv)
    import schemalab as sl

    spark = sl.Warehouse(os.path.join(args.dir, "session")).spark
    cpu = JvmCpu(spark)
    print(f"python {sys.version.split()[0]}, pyspark {spark.version}, {os.cpu_count()} "
          f"cores; deduplicate, layout a, narrow query; medians of {args.repeats} "
          "interleaved rounds (wall s; extra = s over base; ns/row = extra per base row)")
    for rows in [int(r) for r in args.rows.split(",")]:
        d = merge_read.prepare(spark, args.dir, rows, "deduplicate", "a")
        cands = candidates(spark, d)
        for run in cands.values():  # warm-up
            run()
        wall: dict[str, list[float]] = {k: [] for k in cands}
        jvm: dict[str, list[float]] = {k: [] for k in cands}
        names = list(cands)
        for r in range(args.repeats):
            for k in names if r % 2 == 0 else names[::-1]:
                c0, t0 = cpu(), time.perf_counter()
                cands[k]()
                wall[k].append(time.perf_counter() - t0)
                jvm[k].append(cpu() - c0)
        med = {k: statistics.median(v) for k, v in wall.items()}
        print(f"\n{rows:,} rows (load {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
        print(f"{'read':13}{'wall':>8}{'cpu':>7}{'/plain':>8}{'extra':>8}{'ns/row':>8}")
        for k in names:
            extra = med[k] - med["base"]
            per_row = f"{extra / rows * 1e9:8.1f}" if k.startswith(("keeps", "drops",
                                                                       "bitmap", "reader")) \
                else ""
            print(f"{k:13}{med[k]:8.3f}{statistics.median(jvm[k]):7.2f}"
                  f"{med[k] / med['plain']:8.2f}{extra:8.3f}{per_row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
