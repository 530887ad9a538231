"""Benchmark: the evolved full-scan read against a plain Parquet read of the same rows, and
against pypaimon and pypaimon-rust reading the same table; primary-key merges; compaction.

    .venv/bin/python bench/evolved_read.py [--rows 1000000,10000000] [--versions 1,10,50]
                                           [--repeats 5] [--quick] [--dir /tmp/schemalab-bench]
                                           [--primary-key] [--pk-pypaimon] [--rust] [--compact]

For each row count N and version count V a table of N rows is written with schemalab's own
write path (``Warehouse.create_table``, ``Table.alter``, ``Table.insert`` of ``spark.range``
frames): an equal share of rows after CREATE and after each of the V-1 ALTERs, so every schema
version has files. The history mixes renames, drops, re-adds of a dropped name with another
type (the case that trips Spark's vectorized Parquet reader when files are read by name) and
widenings INT→BIGINT / FLOAT→DOUBLE. The evolved read (``t.read()``) is then copied, in the
final schema, to plain Parquet (same codec, zstd) **in as many files as the table has live
data files**, so the ratio is the cost of evolving (or merging), not of small files.

With ``--primary-key`` each (N, V) also gets a primary-key table (``'primary-key' = 'id'``,
``'bucket' = '4'``) with the same history and rows, plus a last commit that upserts a tenth of
the keys (those written under the first schema) in the final schema: its read is Paimon's
deduplicate merge, evolved per file and then merged by key; its ratio to the plain read of the
final rows is the merge's cost (issue 15's target: ≤ 1.5). pypaimon reads it only with
``--pk-pypaimon`` (its merge read runs in Python).

Measured in one Spark session, candidates interleaved per repeat (one warm-up each first):

* ``evolved``   ``t.read()`` (planning included) + one aggregate over every column;
* ``plain``     ``spark.read.parquet(copy)`` + the same aggregate;
* ``compacted`` (``--compact``) the same read of a copy of the table after ``Table.compact()``;
* ``pypaimon``  pypaimon 2.x ``to_arrow`` of every split of the same table (only the read is
  timed; its scan planning is reported apart). It builds an Arrow table in-process while
  Spark aggregates, so the two are not the same work: it is the side-by-side figure only.

``--rust`` adds pypaimon-rust (DataFusion; ``count(*)``, ``sum(id)``) run in its own
environment (``make .venv-bench-rust``) and process after the Spark rounds.

Generated data is kept under ``--dir`` (default /tmp/schemalab-bench) and reused when a marker
file says it was made with the same parameters. Nothing else is cleaned.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))

# Bump when the generated table changes, so old data under --dir is regenerated.
GENERATOR_VERSION = 2
TABLE = "default.bench"
TARGET_RATIO = 1.10
PK_TARGET_RATIO = 1.5  # issue 15: a merge read against a plain read of the final rows
FILES_PER_INSERT = 2  # spark.range partitions per insert: one data file each
PK_BUCKETS = 4
PK_UPSERT_SHARE = 10  # the primary-key case upserts rows // 10 keys at the end


# --------------------------------------------------------------------------------------------
# The schema history
# --------------------------------------------------------------------------------------------


@dataclass
class Column:
    """A column by its role in the generated data; ``name`` and ``type`` evolve."""

    role: str
    name: str
    type: str  # INT, BIGINT, FLOAT, DOUBLE or STRING


@dataclass
class Step:
    kind: str  # rename, drop, re-add, add, widen
    text: str
    changes: list[Any] = field(default_factory=list)


def initial_columns() -> list[Column]:
    return [Column("id", "id", "BIGINT"), Column("name", "name", "STRING"),
            Column("qty", "qty", "INT"), Column("price", "price", "FLOAT"),
            Column("tag", "tag", "STRING"), Column("score", "score", "DOUBLE")]


def _type(name: str) -> Any:
    from schemalab import types

    return {"INT": types.INT, "BIGINT": types.BIGINT, "FLOAT": types.FLOAT,
            "DOUBLE": types.DOUBLE, "STRING": types.STRING}[name]()


def next_step(k: int, cols: list[Column], dropped: dict[str, str]) -> Step:
    """The ALTER that creates schema version ``k`` (k >= 1); updates ``cols`` in place.

    k=1 widens qty INT→BIGINT, k=2 widens price FLOAT→DOUBLE; then a cycle of six:
    rename the name column, drop ``tag``, re-add ``tag`` with the other type (STRING↔BIGINT),
    add ``m`` INT (a re-add after the first cycle: the dropped ``m`` was BIGINT), widen ``m``
    INT→BIGINT, drop ``m``. The table keeps 6-7 columns."""
    from schemalab.schema.changes import (
        AddColumn,
        DropColumn,
        RenameColumn,
        UpdateColumnType,
    )

    by_role = {c.role: c for c in cols}

    def widen(role: str, new: str) -> Step:
        c = by_role[role]
        old, c.type = c.type, new
        return Step("widen", f"{c.name} {old}→{new}", [UpdateColumnType((c.name,), _type(new))])

    def add(role: str, name: str, type_name: str) -> Step:
        cols.append(Column(role, name, type_name))
        before = dropped.pop(name, None)
        kind = "re-add" if before is not None else "add"
        text = f"{name} {type_name}" + (f" (was {before})" if before else "")
        return Step(kind, text, [AddColumn((name,), _type(type_name))])

    def drop(role: str) -> Step:
        c = by_role[role]
        cols.remove(c)
        dropped[c.name] = c.type
        return Step("drop", c.name, [DropColumn((c.name,))])

    if k == 1:
        return widen("qty", "BIGINT")
    if k == 2:
        return widen("price", "DOUBLE")
    phase = (k - 3) % 6
    if phase == 0:
        c = by_role["name"]
        old, c.name = c.name, f"name_{k}"
        return Step("rename", f"{old}→{c.name}", [RenameColumn((old,), c.name)])
    if phase == 1:
        return drop("tag")
    if phase == 2:
        return add("tag", "tag", "BIGINT" if dropped.get("tag") == "STRING" else "STRING")
    if phase == 3:
        return add("m", "m", "INT")
    if phase == 4:
        return widen("m", "BIGINT")
    return drop("m")


def value(role: str, type_name: str) -> Any:
    """The Spark expression of a column's values for the rows of ``spark.range``."""
    from pyspark.sql import functions as F

    i = F.col("id")
    if role == "id":
        out = i
    elif role == "name":
        out = F.concat(F.lit("n"), (i % 100_003).cast("string"))
    elif role == "qty":
        out = i % 1000
    elif role == "price":
        out = (i % 10_000) / 100
    elif role == "tag":
        out = F.concat(F.lit("t"), (i % 97).cast("string")) if type_name == "STRING" else i * 3
    elif role == "score":
        out = (i % 9973) * 0.5
    else:  # m
        out = i % 7
    spark_type = {"INT": "int", "BIGINT": "bigint", "FLOAT": "float", "DOUBLE": "double",
                  "STRING": "string"}[type_name]
    return out.cast(spark_type)


# --------------------------------------------------------------------------------------------
# Generating (or reusing) one data set
# --------------------------------------------------------------------------------------------


@dataclass
class DataSet:
    versions: int
    rows: int
    root: str
    warehouse: str
    plain: str
    #: final column name → rows written while its field id existed (all values non-null)
    expected_counts: dict[str, int]
    steps: dict[str, int]
    generated_in: float | None = None  # seconds, None when reused
    primary_key: bool = False

    @property
    def marker(self) -> str:
        return os.path.join(self.root, "bench.json")

    @property
    def label(self) -> str:
        return f"V={self.versions}" + (" pk" if self.primary_key else "")


def dataset(spark: Any, base: str, rows: int, versions: int,
            primary_key: bool = False) -> DataSet:
    root = os.path.join(base, f"v{versions}-rows{rows}" + ("-pk" if primary_key else ""))
    ds = DataSet(versions, rows, root, os.path.join(root, "warehouse"),
                 os.path.join(root, "plain"), {}, {}, primary_key=primary_key)
    want: dict[str, Any] = {"generator": GENERATOR_VERSION, "rows": rows, "versions": versions,
                            "files_per_insert": FILES_PER_INSERT}
    if primary_key:
        want.update(primary_key="id", buckets=PK_BUCKETS, upsert_share=PK_UPSERT_SHARE)
    try:
        with open(ds.marker) as f:
            marker = json.load(f)
        if {k: marker.get(k) for k in want} == want:
            ds.expected_counts = marker["expected_counts"]
            ds.steps = marker["steps"]
            return ds
    except (OSError, ValueError, KeyError):
        pass
    # Not generated, or with other parameters: redo this data set's own directory only.
    if os.path.isdir(root):
        shutil.rmtree(root)
    os.makedirs(root)
    t0 = time.perf_counter()
    _generate(spark, ds)
    ds.generated_in = time.perf_counter() - t0
    with open(ds.marker, "w") as f:
        json.dump({**want, "expected_counts": ds.expected_counts, "steps": ds.steps}, f,
                  indent=1)
    return ds


def _generate(spark: Any, ds: DataSet) -> None:
    import schemalab as sl
    from schemalab.schema.changes import ColumnSpec

    wh = sl.Warehouse(ds.warehouse, spark=spark)
    cols = initial_columns()
    if ds.primary_key:  # the history never alters the id column, as Paimon's key rules want
        t = wh.create_table(TABLE, [ColumnSpec(c.name, _type(c.type)) for c in cols],
                            primary_keys=("id",), options={"bucket": str(PK_BUCKETS)})
    else:
        t = wh.create_table(TABLE, [ColumnSpec(c.name, _type(c.type)) for c in cols])
    first_ids = {f.id for f in t.schema.fields}
    dropped: dict[str, str] = {}
    rows_with_id: dict[int, int] = {}
    start = 0
    for k in range(ds.versions):
        if k > 0:
            step = next_step(k, cols, dropped)
            t.alter(*step.changes)
            ds.steps[step.kind] = ds.steps.get(step.kind, 0) + 1
        end = ds.rows * (k + 1) // ds.versions
        frame = spark.range(start, end, numPartitions=FILES_PER_INSERT).select(
            *[value(c.role, c.type).alias(c.name) for c in cols])
        t.insert(frame)
        for f in t.schema.fields:
            rows_with_id[f.id] = rows_with_id.get(f.id, 0) + (end - start)
        start = end
    ds.expected_counts = {f.name: rows_with_id[f.id] for f in t.schema.fields}
    if ds.primary_key:
        # Upsert the keys of the first insert (all written under schema 0) in the final
        # schema: the merge must keep these versions, whose columns are all non-null.
        upserts = min(ds.rows // PK_UPSERT_SHARE, ds.rows // ds.versions)
        frame = spark.range(0, upserts, numPartitions=FILES_PER_INSERT).select(
            *[value(c.role, c.type).alias(c.name) for c in cols])
        t.insert(frame)
        for f in t.schema.fields:
            if f.id not in first_ids:
                ds.expected_counts[f.name] += upserts
    # The same rows stored once in the final schema, with the table's codec, as plain Parquet:
    # without field ids, so that spark.read.parquet matches columns by name. (Left in the
    # Spark schema, the ids would make this session's reads match by id.)
    from pyspark.sql import functions as F

    df = t.read()
    plain = df.select(*[F.col("`" + c.replace("`", "``") + "`").alias(c, metadata={})
                        for c in df.columns])
    plain.write.mode("overwrite").option("compression", "zstd").parquet(ds.plain)


# --------------------------------------------------------------------------------------------
# The candidates
# --------------------------------------------------------------------------------------------


def aggregate(df: Any) -> list[Any]:
    """The action every Spark candidate runs: count and max of every column."""
    from pyspark.sql import functions as F

    exprs = [F.count(F.lit(1)).alias("_rows")]
    for c in df.columns:
        q = "`" + c.replace("`", "``") + "`"
        exprs += [F.count(F.col(q)).alias(f"n_{c}"), F.max(F.col(q)).alias(f"max_{c}")]
    return list(df.agg(*exprs).collect()[0])


@dataclass
class Candidate:
    name: str
    run: Callable[[], float]
    times: list[float] = field(default_factory=list)
    #: CPU seconds the Spark JVM used during each timed run (None where unknown)
    jvm_cpu: list[float] = field(default_factory=list)


class JvmCpu:
    """CPU time of the Spark driver JVM (local mode: it runs the tasks too), from /proc.
    Less disturbed than wall time by other jobs on the machine; Linux only."""

    def __init__(self, spark: Any) -> None:
        self.stat: str | None = None
        try:
            pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
            self.stat = f"/proc/{pid}/stat"
            self.tick = os.sysconf("SC_CLK_TCK")
            self()
        except Exception:  # noqa: BLE001 - no /proc, no py4j access: just no CPU figure
            self.stat = None

    def __call__(self) -> float | None:
        if self.stat is None:
            return None
        with open(self.stat) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # utime + stime


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def pypaimon_read(warehouse: str) -> tuple[Any, float, float]:
    """pypaimon's read of every split to Arrow: (table, plan seconds, read seconds)."""
    import pypaimon

    t0 = time.perf_counter()
    catalog = pypaimon.CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table(TABLE)
    builder = table.new_read_builder()
    splits = builder.new_scan().plan().splits()
    read = builder.new_read()
    t1 = time.perf_counter()
    arrow = read.to_arrow(splits)
    t2 = time.perf_counter()
    return arrow, t1 - t0, t2 - t1


@dataclass
class Result:
    ds: DataSet
    files: int
    plain_files: int
    groups: int
    id_files: int
    name_groups: int
    name_files: int
    plan_ms: float
    build_ms: float
    candidates: dict[str, Candidate]
    pypaimon_plan: list[float] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    #: pypaimon-rust's timed rounds (its own process; --rust)
    rust: list[float] = field(default_factory=list)
    #: the compaction of the copy: seconds it took, files before and after (--compact)
    compaction: tuple[float, int, int] | None = None


def _parquet_files(path: str) -> int:
    return sum(1 for n in os.listdir(path) if n.endswith(".parquet"))


def prepare(spark: Any, ds: DataSet, with_pypaimon: bool, compact: bool = False) -> Result:
    import schemalab as sl

    t = sl.Warehouse(ds.warehouse, spark=spark).table(TABLE)
    plan = t.read_plan()
    plan_ms = statistics.median(timed(t.read_plan) for _ in range(3)) * 1000
    t.read()
    build_ms = statistics.median(timed(t.read) for _ in range(3)) * 1000
    if _parquet_files(ds.plain) != len(plan.files):
        # The plain copy holds the same final rows in as many files as the table has live
        # data files: small files cost a read the same whether or not it evolves or merges.
        copy = spark.read.parquet(ds.plain).repartition(len(plan.files))
        tmp = ds.plain + ".tmp"
        copy.write.mode("overwrite").option("compression", "zstd").parquet(tmp)
        shutil.rmtree(ds.plain)
        os.rename(tmp, ds.plain)
    plain_files = _parquet_files(ds.plain)
    res = Result(
        ds, len(plan.files), plain_files, len(plan.groups),
        sum(len(g.files) for g in plan.groups if g.by_id),
        sum(1 for g in plan.groups if not g.by_id),
        sum(len(g.files) for g in plan.groups if not g.by_id), plan_ms, build_ms, {})

    # Checks (untimed): the evolved read is right, and the plain copy holds the same rows.
    evolved = aggregate(t.read())
    plain = aggregate(spark.read.parquet(ds.plain))
    names = t.schema.field_names
    counts = dict(zip(names, evolved[1::2], strict=True))
    if evolved[0] != ds.rows or counts != ds.expected_counts:
        res.checks.append(f"evolved read WRONG: rows {evolved[0]}, non-null {counts}, "
                          f"expected {ds.rows} and {ds.expected_counts}")
    if evolved != plain:
        res.checks.append("plain copy differs from the evolved read")

    res.candidates["evolved"] = Candidate("evolved", lambda: timed(lambda: aggregate(t.read())))
    res.candidates["plain"] = Candidate(
        "plain", lambda: timed(lambda: aggregate(spark.read.parquet(ds.plain))))
    if with_pypaimon:
        arrow, _, _ = pypaimon_read(ds.warehouse)
        nonnull = {n: arrow.num_rows - arrow.column(n).null_count for n in arrow.column_names}
        if arrow.num_rows != ds.rows or nonnull != ds.expected_counts:
            res.checks.append(f"pypaimon read differs: rows {arrow.num_rows}, non-null "
                              f"{nonnull}")
        del arrow

        def run_pypaimon() -> float:
            arrow, plan_s, read_s = pypaimon_read(ds.warehouse)
            del arrow
            res.pypaimon_plan.append(plan_s)
            return read_s

        res.candidates["pypaimon"] = Candidate("pypaimon", run_pypaimon)
    if compact:
        compacted = compacted_copy(spark, ds, res)
        after = aggregate(compacted.read())
        if after != evolved:
            res.checks.append("the compacted copy reads differently from the table")
        res.candidates["compacted"] = Candidate(
            "compacted", lambda: timed(lambda: aggregate(compacted.read())))
    return res


def compacted_copy(spark: Any, ds: DataSet, res: Result) -> Any:
    """A copy of the data set's warehouse, compacted once by ``Table.compact()`` (reused when
    its marker says so); records the compaction's time and file counts in ``res``."""
    import schemalab as sl

    root = os.path.join(ds.root, "compacted")
    marker = os.path.join(root, "compacted.json")
    try:
        with open(marker) as f:
            res.compaction = tuple(json.load(f)["compaction"])  # type: ignore[assignment]
        return sl.Warehouse(os.path.join(root, "warehouse"), spark=spark).table(TABLE)
    except (OSError, ValueError, KeyError):
        pass
    if os.path.isdir(root):
        shutil.rmtree(root)
    shutil.copytree(ds.warehouse, os.path.join(root, "warehouse"))
    t = sl.Warehouse(os.path.join(root, "warehouse"), spark=spark).table(TABLE)
    before = len(t.read_plan().files)
    seconds = timed(t.compact)
    res.compaction = (seconds, before, len(t.read_plan().files))
    with open(marker, "w") as f:
        json.dump({"compaction": res.compaction}, f)
    return t


def rust_times(res: Result, repeats: int) -> None:
    """pypaimon-rust's read (count(*), sum(id) in DataFusion) of the same table, in its own
    environment and process, after the Spark rounds; checks it read the same row count."""
    import subprocess

    exe = os.path.join(os.path.dirname(HERE), ".venv-bench-rust", "bin", "python")
    if not os.path.exists(exe):
        res.checks.append("pypaimon-rust skipped: no .venv-bench-rust (make .venv-bench-rust)")
        return
    db, name = TABLE.split(".")
    proc = subprocess.run([exe, os.path.join(HERE, "rust_read.py"), res.ds.warehouse, db, name,
                           "--rounds", str(repeats)], capture_output=True, text=True)
    if proc.returncode:
        res.checks.append(f"pypaimon-rust failed: {proc.stderr.strip().splitlines()[-1:]}")
        return
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["rows"] != res.ds.rows:
        res.checks.append(f"pypaimon-rust read {out['rows']} rows, not {res.ds.rows}")
    res.rust = out["seconds"]


def measure(results: list[Result], repeats: int, jvm_cpu: JvmCpu) -> None:
    """One warm-up per candidate, then ``repeats`` rounds; each round runs every candidate of
    every data set, in an order that alternates round by round."""
    for res in results:
        for c in res.candidates.values():
            c.run()
        res.pypaimon_plan.clear()
    for r in range(repeats):
        for res in results:
            order = list(res.candidates.values())
            if r % 2:
                order.reverse()
            for c in order:
                before = jvm_cpu()
                c.times.append(c.run())
                after = jvm_cpu()
                if before is not None and after is not None and c.name != "pypaimon":
                    c.jvm_cpu.append(after - before)
        print(f"  round {r + 1}/{repeats} done", flush=True)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def report(results: list[Result], spark: Any, args: argparse.Namespace) -> None:
    print()
    print("Read plans (Table.read_plan(), latest snapshot in the current schema):")
    for res in results:
        ds = res.ds
        steps = ", ".join(f"{n} {k}" for k, n in sorted(ds.steps.items())) or "no ALTER"
        print(f"  {ds.label:<8} {res.files:>4} files in {res.groups} group(s): "
              f"{res.id_files} in the by-id scan, {res.name_files} in {res.name_groups} name "
              f"group(s); read_plan() {res.plan_ms:.1f} ms, t.read() without action "
              f"{res.build_ms:.0f} ms; plain copy {res.plain_files} files; history: {steps}")
    print()
    head = (f"{'V':>8} {'rows':>10} | {'evolved med/min s':>17} | {'plain med/min s':>15} | "
            f"{'evolved/plain':>13} | {'CPU ratio':>9} | {'pypaimon med/min s':>18} | "
            f"{'ours/pypaimon':>13} | {'rust med/min s':>14} | {'ours/rust':>9}")
    print(head)
    print("-" * len(head))
    verdicts = []
    for res in results:
        evolved, plain = res.candidates["evolved"], res.candidates["plain"]
        ev, pl = evolved.times, plain.times
        ratio = med(ev) / med(pl)
        verdicts.append((res.ds, ratio))
        cpu = (f"{med(evolved.jvm_cpu) / med(plain.jvm_cpu):>9.2f}"
               if evolved.jvm_cpu and plain.jvm_cpu and med(plain.jvm_cpu) > 0
               else f"{'n/a':>9}")
        line = (f"{res.ds.label:>8} {res.ds.rows:>10} | {med(ev):>8.3f}/{min(ev):<8.3f} | "
                f"{med(pl):>7.3f}/{min(pl):<7.3f} | {ratio:>13.2f} | {cpu} | ")
        py = res.candidates.get("pypaimon")
        if py is not None:
            line += (f"{med(py.times):>9.3f}/{min(py.times):<8.3f} | "
                     f"{med(ev) / med(py.times):>13.2f}")
        else:
            line += f"{'skipped':>18} | {'':>13}"
        if res.rust:
            line += (f" | {med(res.rust):>6.3f}/{min(res.rust):<7.3f} | "
                     f"{med(ev) / med(res.rust):>9.2f}")
        print(line)
    compacted = [r for r in results if "compacted" in r.candidates and r.compaction]
    if compacted:
        print()
        head = (f"{'table':>8} {'rows':>10} | {'files before→after':>18} | "
                f"{'compact s':>9} | {'before med s':>12} | {'after med s':>11} | "
                f"{'after/before':>12} | {'after/plain':>11}")
        print("Before and after Table.compact() (a copy of each table):")
        print(head)
        print("-" * len(head))
        for res in compacted:
            seconds, before, after = res.compaction  # type: ignore[misc]
            ev_s = med(res.candidates["evolved"].times)
            co_s = med(res.candidates["compacted"].times)
            pl_s = med(res.candidates["plain"].times)
            print(f"{res.ds.label:>8} {res.ds.rows:>10} | {f'{before}→{after}':>18} | "
                  f"{seconds:>9.1f} | {ev_s:>12.3f} | {co_s:>11.3f} | {co_s / ev_s:>12.2f} | "
                  f"{co_s / pl_s:>11.2f}")
    print()
    print("evolved = t.read() (planning included) + count & max of every column; plain = "
          "spark.read.parquet of the final-schema copy + the same aggregate; ratios are of "
          "medians. CPU ratio = the same ratio of the Spark JVM's CPU seconds (less disturbed "
          "by other load on the machine than wall time).")
    if any("pypaimon" in r.candidates for r in results):
        plans = ", ".join(f"{r.ds.label}: {med(r.pypaimon_plan) * 1000:.0f} ms"
                          for r in results if r.pypaimon_plan)
        print("pypaimon = to_arrow of every split (read only; its scan planning, not timed: "
              f"{plans}). pypaimon builds an Arrow table in-process while Spark aggregates, "
              "so ours/pypaimon is a side-by-side figure, not the same work.")
    if any(r.rust for r in results):
        print("rust = pypaimon-rust 0.4.0 (DataFusion) count(*) and sum(id) of the same table, "
              "in its own process after the Spark rounds (not interleaved).")
    for ds, ratio in verdicts:
        if ds.primary_key:
            state = "met" if ratio <= PK_TARGET_RATIO else "MISSED"
            print(f"target merge read/plain <= {PK_TARGET_RATIO:.2f} at V={ds.versions}, "
                  f"{ds.rows:,} rows: {state} ({ratio:.2f})")
            continue
        state = "met" if ratio <= TARGET_RATIO else "MISSED"
        print(f"target evolved/plain <= {TARGET_RATIO:.2f} at V={ds.versions}, {ds.rows:,} "
              f"rows: {state} ({ratio:.2f})")
    problems = [f"{r.ds.label}: {c}" for r in results for c in r.checks]
    print("checks: " + ("; ".join(problems) if problems else
                        "evolved read has the expected rows and non-null counts; the plain "
                        "copy aggregates identically" + ("; pypaimon reads the same counts"
                                                         if not args.skip_pypaimon else "")))
    print(f"load average at the end: {load()}")


def load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def machine_info(spark: Any) -> str:
    jvm = spark.sparkContext._jvm
    java = jvm.java.lang.System.getProperty("java.version")
    conf = spark.conf
    try:
        pyp = importlib.metadata.version("pypaimon")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        pyp = "not installed"
    return (f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}; "
            f"Python {platform.python_version()}; Spark {spark.version} "
            f"({spark.sparkContext.master}, driver memory "
            f"{spark.sparkContext.getConf().get('spark.driver.memory')}); Java {java}; "
            f"pypaimon {pyp}; vectorized Parquet reader "
            f"{conf.get('spark.sql.parquet.enableVectorizedReader')}, aggregate pushdown "
            f"{conf.get('spark.sql.parquet.aggregatePushdown')}")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", help="comma-separated rows per table (default 10000000)")
    p.add_argument("--versions", help="comma-separated schema version counts (default 1,10,50)")
    p.add_argument("--repeats", type=int, help="timed rounds after one warm-up (default 5)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 200000 rows, versions 1,10, 2 repeats (flags still win)")
    p.add_argument("--dir", default=os.path.join("/tmp", "schemalab-bench"),
                   help="where generated data is kept and reused (default /tmp/schemalab-bench)")
    p.add_argument("--driver-memory", default="6g", help="Spark driver heap (default 6g)")
    p.add_argument("--skip-pypaimon", action="store_true", help="leave pypaimon out")
    p.add_argument("--primary-key", action="store_true",
                   help="also measure a primary-key table (deduplicate merge read) per version "
                        "count")
    p.add_argument("--pk-pypaimon", action="store_true",
                   help="let pypaimon read the primary-key tables too (slow: a Python merge)")
    p.add_argument("--rust", action="store_true",
                   help="also time pypaimon-rust (its own environment: make .venv-bench-rust)")
    p.add_argument("--compact", action="store_true",
                   help="also read a compacted copy of each table (Table.compact(): one "
                        "COMPACT snapshot in the current schema)")
    args = p.parse_args(argv)
    quick = {"rows": "200000", "versions": "1,10", "repeats": 2}
    full = {"rows": "10000000", "versions": "1,10,50", "repeats": 5}
    for k, v in (quick if args.quick else full).items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    try:
        args.version_counts = [int(v) for v in args.versions.split(",") if v.strip()]
    except ValueError:
        p.error(f"--versions must be comma-separated integers, not {args.versions!r}")
    if not args.version_counts or min(args.version_counts) < 1:
        p.error("--versions needs counts >= 1")
    try:
        args.row_counts = [int(r.replace("_", "")) for r in args.rows.split(",") if r.strip()]
    except ValueError:
        p.error(f"--rows must be comma-separated integers, not {args.rows!r}")
    if not args.row_counts or \
            min(args.row_counts) < max(args.version_counts) * FILES_PER_INSERT:
        p.error("--rows must give every insert at least one row per file")
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from schemalab import local_spark

    started = time.perf_counter()
    spark = local_spark("schemalab-bench", cores=2, driver_memory=args.driver_memory)
    print(machine_info(spark))
    sizes = ", ".join(f"{r:,}" for r in args.row_counts)
    print(f"rows {sizes}, versions {args.version_counts}, repeats {args.repeats}, "
          f"data under {args.dir}; load average {load()}", flush=True)
    os.makedirs(args.dir, exist_ok=True)
    results = []
    kinds = [False, True] if args.primary_key else [False]
    for rows in args.row_counts:
        for pk in kinds:
            for v in args.version_counts:
                ds = dataset(spark, args.dir, rows, v, primary_key=pk)
                how = (f"generated in {ds.generated_in:.1f} s" if ds.generated_in is not None
                       else "reused")
                print(f"  {ds.label} rows {rows:,}: {how} ({ds.root})", flush=True)
                with_pypaimon = not args.skip_pypaimon and (args.pk_pypaimon or not pk)
                results.append(prepare(spark, ds, with_pypaimon, compact=args.compact))
    print(f"measuring: warm-up, then {args.repeats} interleaved round(s)", flush=True)
    measure(results, args.repeats, JvmCpu(spark))
    if args.rust:
        for res in results:
            rust_times(res, args.repeats)
    report(results, spark, args)
    print(f"total {time.perf_counter() - started:.0f} s")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
