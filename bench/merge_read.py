"""Benchmark: the primary-key merge read against a plain read of the same final rows in the
same number of files, before and after compaction.

    .venv/bin/python bench/merge_read.py [--rows 3000000,10000000] [--repeats 5]
                                         [--engines deduplicate,partial-update]
                                         [--dir /tmp/schemalab-bench-merge]

For each row count and merge engine, a primary-key table (``'bucket' = '4'``) is written with
schemalab's own write path: the rows in ``FILES`` inserts under schema 0, a RENAME and a
widening INT→BIGINT, then an upsert of a tenth of the keys (every tenth key) in the final
schema — so each bucket holds several sorted runs of two schemas, and the read evolves each
file group before the merge. The merged read is then copied once to plain Parquet in as many
files as the table has live files (``plain``), and the table is compacted (a COMPACT
snapshot: one sorted run per bucket, today's schema); its files are copied again the same
way (``plain-compacted``).

Measured in one Spark session, candidates interleaved per round (one warm-up each first),
medians of ``--repeats`` rounds; each candidate runs the same aggregate over every column
(count, and count and max of each column), planning included:

* ``merge``            ``t.read(snapshot_id=before)``: the merge of the upserted table, per
                       bucket where the files are (the default; no shuffle)
* ``merge-shuffle``    the same plan merged the former way (rows shuffled by key)
* ``plain``            ``spark.read.parquet`` of its rows, same number of files
* ``compacted``        ``t.read()`` after ``t.compact()`` (one run per bucket: no merge)
* ``plain-compacted``  ``spark.read.parquet`` of those rows, same number of files

The ratio ``merge / plain`` is the merge's cost (target ≤ 1.5, issue 15). The load average is
printed before and after each row count: on a shared machine, quote it with the figures. The
JVM's CPU seconds per run are printed beside wall time (less disturbed by other jobs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import evolved_read  # bench/ is the script's directory: run as python bench/merge_read.py
from evolved_read import aggregate, load

GENERATOR_VERSION = 1
FILES = 4  # inserts of the initial rows (spark.range partitions: one file per bucket each)
BUCKETS = 4
UPSERT_EVERY = 10  # every tenth key is upserted at the end
TARGET = 1.5


class JvmCpu(evolved_read.JvmCpu):
    """CPU seconds of the Spark driver JVM (NaN where unknown, so differences stay numbers)."""

    def __call__(self) -> float:  # type: ignore[override]
        seconds = super().__call__()
        return float("nan") if seconds is None else seconds


@dataclass
class Candidate:
    name: str
    run: Callable[[], Any]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def generate(wh: Any, name: str, rows: int, engine: str) -> Any:
    from pyspark.sql import functions as F

    spark = wh.spark
    extra = "" if engine == "deduplicate" else f", 'merge-engine' = '{engine}'"
    wh.sql(f"CREATE TABLE {name} (id INT NOT NULL, v STRING, n INT, d DOUBLE, "
           f"PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '{BUCKETS}'{extra})")
    t = wh.table(name)
    share = rows // FILES
    for i in range(FILES):
        df = spark.range(i * share, (i + 1) * share, numPartitions=1).select(
            F.col("id").cast("int").alias("id"), F.concat(F.lit("v"), F.col("id")).alias("v"),
            (F.col("id") % 1000).cast("int").alias("n"), (F.col("id") / 7).alias("d"))
        t.insert(df)
    wh.sql(f"ALTER TABLE {name} RENAME COLUMN v TO label; "
           f"ALTER TABLE {name} ALTER COLUMN n TYPE BIGINT")
    up = spark.range(0, share * FILES, UPSERT_EVERY, numPartitions=1).select(
        F.col("id").cast("int").alias("id"), F.concat(F.lit("u"), F.col("id")).alias("label"),
        (F.col("id") + 5_000_000_000).alias("n"), F.lit(None).cast("double").alias("d"))
    wh.table(name).insert(up)
    return wh.table(name)


def plain_copy(spark: Any, df: Any, files: int, path: str) -> None:
    df.repartition(files).write.mode("overwrite").option("compression", "zstd").parquet(path)


def run_case(spark: Any, base: str, rows: int, engine: str, repeats: int,
             cpu: JvmCpu) -> dict[str, Any]:
    import schemalab as sl

    d = os.path.join(base, f"{engine}-{rows}")
    marker = os.path.join(d, "MARKER")
    want = json.dumps({"v": GENERATOR_VERSION, "rows": rows, "engine": engine})
    if not (os.path.exists(marker) and open(marker).read() == want):
        shutil.rmtree(d, ignore_errors=True)
        wh = sl.Warehouse(os.path.join(d, "wh"), spark=spark)
        t = generate(wh, "t", rows, engine)
        before = t.latest_snapshot.id
        n_files = len(t.live_entries(t.latest_snapshot))
        plain_copy(spark, t.read(snapshot_id=before), n_files, os.path.join(d, "plain"))
        t.compact()
        n_after = len(t.live_entries(t.latest_snapshot))
        plain_copy(spark, t.read(), n_after, os.path.join(d, "plain-compacted"))
        json.dump({"before": before, "files": n_files, "files_after": n_after},
                  open(os.path.join(d, "info.json"), "w"))
        open(marker, "w").write(want)
    info = json.load(open(os.path.join(d, "info.json")))
    wh = sl.Warehouse(os.path.join(d, "wh"), spark=spark)
    t = wh.table("t")
    before = info["before"]
    from schemalab.engine.merge.keyed_read import merge_read

    cands = [
        Candidate("merge", lambda: aggregate(t.read(snapshot_id=before))),
        Candidate("merge-shuffle", lambda: aggregate(
            merge_read(t.read_plan(before), spark, how="shuffle"))),
        Candidate("plain", lambda: aggregate(spark.read.parquet(os.path.join(d, "plain")))),
        Candidate("compacted", lambda: aggregate(t.read())),
        Candidate("plain-compacted",
                  lambda: aggregate(spark.read.parquet(os.path.join(d, "plain-compacted")))),
    ]
    results = {c.name: c.run() for c in cands}  # warm-up, and the answers
    assert len({repr(v) for v in results.values()}) == 1, results
    for _ in range(repeats):
        for c in cands:
            c0, t0 = cpu(), time.perf_counter()
            c.run()
            c.wall.append(time.perf_counter() - t0)
            c.cpu.append(cpu() - c0)
    return {"info": info, "cands": cands}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="3000000,10000000")
    p.add_argument("--engines", default="deduplicate,partial-update")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dir", default="/tmp/schemalab-bench-merge")
    args = p.parse_args(argv)
    import schemalab as sl

    spark = sl.Warehouse(os.path.join(args.dir, "session")).spark
    cpu = JvmCpu(spark)
    print(f"python {sys.version.split()[0]}, pyspark {spark.version}, "
          f"{os.cpu_count()} cores, {BUCKETS} buckets, {FILES} inserts + 1 upsert of every "
          f"{UPSERT_EVERY}th key; medians of {args.repeats} rounds (wall s / JVM cpu s)")
    for rows in [int(r) for r in args.rows.split(",")]:
        for engine in args.engines.split(","):
            l0 = load()
            r = run_case(spark, args.dir, rows, engine, args.repeats, cpu)
            c = {x.name: x for x in r["cands"]}

            def m(name: str, what: str = "wall", c: dict[str, Candidate] = c) -> float:
                return statistics.median(getattr(c[name], what))

            files, after = r["info"]["files"], r["info"]["files_after"]
            print(f"\n{rows:,} rows, {engine}: {files} files before compaction, {after} "
                  f"after; load {l0} → {load()}")
            print(f"  {'':18}{'merge/read':>12}{'plain':>10}{'ratio':>8}{'cpu ratio':>11}")
            for label, a, b in [("before compaction", "merge", "plain"),
                                ("  shuffle (old)", "merge-shuffle", "plain"),
                                ("after compaction", "compacted", "plain-compacted")]:
                ratio, cr = m(a) / m(b), m(a, "cpu") / m(b, "cpu")
                flag = "ok" if ratio <= TARGET else f"> {TARGET}"
                print(f"  {label:18}{m(a):>11.2f}s{m(b):>9.2f}s{ratio:>8.2f}{cr:>11.2f}  {flag}")
            print(f"  merge before / after compaction: {m('merge') / m('compacted'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
