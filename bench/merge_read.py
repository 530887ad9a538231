"""Benchmark: the primary-key merge read against a plain read of the same final rows in the
same number of files, for every merge engine, three table layouts and two queries.

    .venv/bin/python bench/merge_read.py [--rows 3000000,10000000] [--repeats 5]
                         [--engines deduplicate,partial-update,aggregation,first-row]
                         [--layouts a,b,c[,c-hot]] [--compacted] [--shuffle] [--before]
                         [--plain-built] [--dir /tmp/schemalab-bench-merge]

Each table has ``'bucket' = '4'`` and is written with schemalab's own write path, columns
``id INT`` (the key), ``v STRING``, ``n INT``, ``d DOUBLE``, with a RENAME (v → label) and a
widening INT→BIGINT (n) between its commits, so the read evolves each file group before the
merge. The layouts (issue 25):

* ``a``  one INSERT of every row, the ALTERs, then an upsert of every tenth key (10%);
* ``b``  the rows in four INSERTs, the ALTERs, then the same upsert;
* ``c``  streaming-like: 20 commits of 5% of ``--rows`` each, each commit's keys a uniform
         pseudo-random sample of ``[0, rows)`` (``pmod(xxhash64(commit, i), rows)``, each
         key once per commit), so later commits update keys earlier ones wrote: about 63%
         of the range ends up as keys, 1.6 versions per key; the ALTERs after the tenth;
* ``c-hot``  (not in the default matrix) layout c as generator version 2 made it: the keys
         ``(i * 1000003 + commit * 7919 * 131) % rows`` for ``i < rows / 20``, which fall
         in three narrow stripes — 386,797 keys of 3M, 7.8 versions per key — kept so the
         figures measured on it can be reproduced.

The merged read is copied once to plain Parquet in as many files as the table has live
files (``plain``). Each cell (rows × engine × layout × query) measures ``merge``
(``t.read()``) against ``plain`` (``spark.read.parquet``), interleaved per round after one
warm-up each, medians of ``--repeats`` rounds, planning included. The queries:

* ``full``    count, and count and max of every column;
* ``narrow``  ``count(*), sum(id), sum(n)``: a projection of two columns.

``--compacted`` adds the table after ``t.compact()`` against a plain copy of it, and
``--shuffle`` the former merge (rows shuffled by key), ``--before`` the merge without
``superseded`` buckets (as before they existed: ``newest`` or ``full``), ``--plain-built``
the plain copy's DataFrame built once (``merge`` reads are kept by the session, while
``spark.read.parquet`` lists the files and reads a footer each query). The ratio
``merge / plain`` is the merge's cost (target ≤ 1.5, deduplicate ≤ 1.3, issue 25). The load
average is printed with each cell: on a shared machine, quote it with the figures.
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

#: 3: layout c's keys are a uniform sample of the range (version 2's are ``c-hot``); the
#: other layouts' tables are as version 2 made them and are kept (see ``_version``)
GENERATOR_VERSION = 3
FILES = 4  # layout b's inserts of the initial rows (one file per bucket each)
BUCKETS = 4
UPSERT_EVERY = 10  # layouts a and b: every tenth key is upserted at the end
COMMITS = 20  # layout c: commits of rows / COMMITS keys each
TARGET = 1.5
TARGETS = {"deduplicate": 1.3}
LAYOUTS = ("a", "b", "c")  # the default matrix; "c-hot" on request
QUERIES = ("full", "narrow")


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
    #: the warm-up: the first read of the table in the session (nothing of it cached)
    first: float = float("nan")


def narrow(df: Any) -> list[Any]:
    """The narrow query: ``count(*), sum(id), sum(n)`` (two of the four columns)."""
    from pyspark.sql import functions as F

    return list(df.agg(F.count(F.lit(1)), F.sum("id"), F.sum("n")).collect()[0])


QUERY = {"full": aggregate, "narrow": narrow}


def _rows(spark: Any, ids: Any, prefix: str, renamed: bool) -> Any:
    """The table's columns for the keys ``ids`` (column ``id``, BIGINT)."""
    from pyspark.sql import functions as F

    return ids.select(
        F.col("id").cast("int").alias("id"),
        F.concat(F.lit(prefix), F.col("id")).alias("label" if renamed else "v"),
        (F.col("id") % 1000).cast("bigint" if renamed else "int").alias("n"),
        (F.col("id") / 7).alias("d"))


def _alter(wh: Any, name: str) -> None:
    wh.sql(f"ALTER TABLE {name} RENAME COLUMN v TO label; "
           f"ALTER TABLE {name} ALTER COLUMN n TYPE BIGINT")


def generate(wh: Any, name: str, rows: int, engine: str, layout: str = "b") -> Any:
    """The table of one layout (see the module's docstring)."""
    from pyspark.sql import functions as F

    spark = wh.spark
    extra = "" if engine == "deduplicate" else f", 'merge-engine' = '{engine}'"
    wh.sql(f"CREATE TABLE {name} (id INT NOT NULL, v STRING, n INT, d DOUBLE, "
           f"PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '{BUCKETS}'{extra})")
    if layout in ("c", "c-hot"):
        share = rows // COMMITS
        for i in range(COMMITS):
            ids = spark.range(0, share, numPartitions=1)
            if layout == "c":
                # a uniform sample of [0, rows) per commit, each key once in it
                keys = ids.select(F.pmod(F.xxhash64(F.lit(i), F.col("id")), F.lit(rows))
                                  .alias("id")).distinct().coalesce(1)
            else:
                # generator version 2's: id * 1000003 + shift mod rows for id < rows / 20,
                # three narrow stripes of keys (hot keys, 7.8 versions each at 3M rows)
                keys = ids.select(((F.col("id") * 1_000_003 + i * 7_919 * 131) % rows)
                                  .alias("id"))
            wh.table(name).insert(_rows(spark, keys, f"c{i}_", i >= COMMITS // 2))
            if i == COMMITS // 2 - 1:
                _alter(wh, name)
        return wh.table(name)
    inserts = 1 if layout == "a" else FILES
    share = rows // inserts
    for i in range(inserts):
        wh.table(name).insert(_rows(
            spark, spark.range(i * share, (i + 1) * share, numPartitions=1), "v", False))
    _alter(wh, name)
    up = spark.range(0, share * inserts, UPSERT_EVERY, numPartitions=1)
    wh.table(name).insert(_rows(spark, up, "u", True).withColumn(
        "n", F.col("id") + 5_000_000_000).withColumn("d", F.lit(None).cast("double")))
    return wh.table(name)


def _version(layout: str) -> int:
    """The generator version a layout's tables were last changed in (an unchanged layout
    keeps its tables across a version bump; c-hot is version 2's c under a new name)."""
    return GENERATOR_VERSION if layout == "c" else 2


def plain_copy(spark: Any, df: Any, files: int, path: str) -> None:
    df.repartition(files).write.mode("overwrite").option("compression", "zstd").parquet(path)


def prepare(spark: Any, base: str, rows: int, engine: str, layout: str,
            compacted: bool = False) -> str:
    """The directory of one table and its plain copy (``compacted``: and the table
    compacted, with its plain copy), generated unless already there."""
    import schemalab as sl

    d = os.path.join(base, f"{engine}-{layout}-{rows}")
    marker = os.path.join(d, "MARKER")
    want = json.dumps({"v": _version(layout), "rows": rows, "engine": engine,
                       "layout": layout})
    if not (os.path.exists(marker) and open(marker).read() == want):
        shutil.rmtree(d, ignore_errors=True)
        wh = sl.Warehouse(os.path.join(d, "wh"), spark=spark)
        t = generate(wh, "t", rows, engine, layout)
        before = t.latest_snapshot.id
        n_files = len(t.live_entries(t.latest_snapshot))
        plain_copy(spark, t.read(snapshot_id=before), n_files, os.path.join(d, "plain"))
        json.dump({"before": before, "files": n_files}, open(os.path.join(d, "info.json"), "w"))
        open(marker, "w").write(want)
    info = json.load(open(os.path.join(d, "info.json")))
    if compacted and "files_after" not in info:
        t = sl.Warehouse(os.path.join(d, "wh"), spark=spark).table("t")
        t.compact()
        info["files_after"] = len(t.live_entries(t.latest_snapshot))
        plain_copy(spark, t.read(), info["files_after"], os.path.join(d, "plain-compacted"))
        json.dump(info, open(os.path.join(d, "info.json"), "w"))
    return d


def candidates(spark: Any, d: str, query: str, compacted: bool, shuffle: bool,
               superseded_off: bool = False, plain_built: bool = False
               ) -> tuple[list[Candidate], dict[str, Any]]:
    import schemalab as sl

    info = json.load(open(os.path.join(d, "info.json")))
    t = sl.Warehouse(os.path.join(d, "wh"), spark=spark).table("t")
    before, q = info["before"], QUERY[query]
    cands = [Candidate("merge", lambda: q(t.read(snapshot_id=before))),
             Candidate("plain", lambda: q(spark.read.parquet(os.path.join(d, "plain"))))]
    if plain_built:  # the plain copy's DataFrame built once: no listing nor footer per query
        built = spark.read.parquet(os.path.join(d, "plain"))
        cands.append(Candidate("plain-built", lambda: q(built)))
    if shuffle:  # imported here: older trees (bench/plan_diff.py's) name it otherwise
        from schemalab.engine.merge.keyed_read import merge_read

        cands.append(Candidate("merge-shuffle", lambda: q(
            merge_read(t.read_plan(before), spark, how="shuffle"))))
    if superseded_off:
        from schemalab.engine.merge import runs

        def without_superseded() -> Any:
            cap, runs.SUPERSEDED_ROWS = runs.SUPERSEDED_ROWS, 0
            try:
                return q(t.read(snapshot_id=before))
            finally:
                runs.SUPERSEDED_ROWS = cap

        cands.append(Candidate("merge-before", without_superseded))
    if compacted:
        cands += [Candidate("compacted", lambda: q(t.read())),
                  Candidate("plain-compacted", lambda: q(
                      spark.read.parquet(os.path.join(d, "plain-compacted"))))]
    return cands, info


def measure(cands: list[Candidate], repeats: int, cpu: JvmCpu) -> None:
    """One warm-up each (the answers must agree; its time is the first read's), then
    ``repeats`` interleaved rounds."""
    results = {}
    for c in cands:
        t0 = time.perf_counter()
        results[c.name] = c.run()
        c.first = time.perf_counter() - t0
    assert len({repr(v) for v in results.values()}) == 1, results
    for _ in range(repeats):
        for c in cands:
            c0, t0 = cpu(), time.perf_counter()
            c.run()
            c.wall.append(time.perf_counter() - t0)
            c.cpu.append(cpu() - c0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="3000000,10000000")
    p.add_argument("--engines", default="deduplicate,partial-update,aggregation,first-row")
    p.add_argument("--layouts", default=",".join(LAYOUTS))
    p.add_argument("--queries", default=",".join(QUERIES))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--prepare-only", action="store_true", help="generate the tables only")
    p.add_argument("--compacted", action="store_true")
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--before", action="store_true",
                   help="add the merge without superseded buckets")
    p.add_argument("--plain-built", action="store_true",
                   help="add the plain copy's DataFrame built once (the merge's read is "
                        "kept; spark.read.parquet lists the files each query)")
    p.add_argument("--dir", default="/tmp/schemalab-bench-merge")
    args = p.parse_args(argv)
    import schemalab as sl

    spark = sl.Warehouse(os.path.join(args.dir, "session")).spark
    cpu = JvmCpu(spark)
    print(f"python {sys.version.split()[0]}, pyspark {spark.version}, {os.cpu_count()} "
          f"cores, {BUCKETS} buckets; medians of {args.repeats} rounds, merge and plain "
          "interleaved; ratio = merge / plain wall (JVM cpu ratio); first = the two first reads' "
          "ratio (the warm-up: nothing of the table cached yet)")
    print(f"{'rows':>10} {'engine':15}{'lay':>4} {'query':7}{'files':>6}{'merge':>8}"
          f"{'plain':>8}{'ratio':>7}{'cpu':>6}  target first  load")
    for rows in [int(r) for r in args.rows.split(",")]:
        for engine in args.engines.split(","):
            for layout in args.layouts.split(","):
                d = prepare(spark, args.dir, rows, engine, layout, args.compacted)
                if args.prepare_only:
                    continue
                for query in args.queries.split(","):
                    cands, info = candidates(spark, d, query, args.compacted, args.shuffle,
                                             args.before, args.plain_built)
                    measure(cands, args.repeats, cpu)
                    _report(rows, engine, layout, query, info, cands)
    return 0


def _report(rows: int, engine: str, layout: str, query: str, info: dict[str, Any],
            cands: list[Candidate]) -> None:
    c = {x.name: x for x in cands}

    def m(name: str, what: str = "wall") -> float:
        return statistics.median(getattr(c[name], what))

    target = TARGETS.get(engine, TARGET)
    pairs = [(a, b, label) for a, b, label in (
        ("merge", "plain", ""), ("merge", "plain-built", "  merge / plain-built"),
        ("merge-shuffle", "plain", "  merge-shuffle"),
        ("merge-before", "plain", "  merge-before"),
        ("compacted", "plain-compacted", "  compacted")) if a in c and b in c]
    for a, b, label in pairs:
        ratio, cr = m(a) / m(b), m(a, "cpu") / m(b, "cpu")
        flag = "ok" if ratio <= target else f">{target}"
        files = info["files"] if a != "compacted" else info["files_after"]
        head = f"{rows:>10,} {engine:15}{layout:>4} {query:7}" if not label else \
            f"{label:<37}"
        first = c[a].first / c[b].first
        print(f"{head}{files:>6}{m(a):>7.2f}s{m(b):>7.2f}s{ratio:>7.2f}{cr:>6.2f}  "
              f"{flag:6}{first:>6.2f}  {load()}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
