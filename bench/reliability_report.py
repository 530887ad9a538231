"""Reliability figures: the checks of issue 6 run once at a measurable scale, then counted.

    .venv/bin/python bench/reliability_report.py            # a few minutes on 2 cores
    .venv/bin/python bench/reliability_report.py --sequences 1000 --kills 100 --spark-kills 4

Runs, in one process with one Spark session (writer children start their own interpreters,
and for ``--spark-kills`` their own JVMs):

1. random CREATE / INSERT / ALTER sequences against the reference model, every read
   (each snapshot in its own schema, and the current schema) checked in Spark;
2. more sequences read back by pypaimon and compared with the model;
3. racing writer processes (INSERTs and ALTERs), with retries and with retries capped;
4. writers killed with SIGKILL at random moments (pure-Python writers, and Spark INSERTs),
   then ``clean-orphans``;
5. damaged schema / snapshot / manifest / data files, each expecting a clear error.

and prints: sequences tried, commits raced, kills survived, bad inputs tried, rows lost.
Any failed check stops the run with its message (and a non-zero exit status). The code is
the tests' own (``tests/reliability_support.py`` and the test modules), so the figures
describe exactly what ``make test`` checks, at a chosen scale.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"


def tests_module(name: str) -> ModuleType:
    """A module of tests/ (``reliability_support`` or a test module), loaded from its file:
    the tests are not a package, and a test module imports ``reliability_support`` by that
    name, so it is loaded first under it."""
    if name in sys.modules:
        return sys.modules[name]
    if name != "reliability_support":
        tests_module("reliability_support")
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def model_sequences(spark: Any, root: Path, n: int, batch: int = 4,
                    profile: str = "FULL", seed_value: int = 20240611) -> int:
    rs = tests_module("reliability_support")
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    import schemalab as sl

    if n <= 0:
        return 0

    wh = sl.Warehouse(root / f"model-{profile.lower()}", spark=spark)
    names = itertools.count()
    done: list[int] = []

    @seed(seed_value)
    @settings(max_examples=-(-n // batch), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(rs.sequences(getattr(rs, profile)), min_size=batch, max_size=batch))
    def check(seqs: list[Any]) -> None:
        runs = [rs.SequenceRun(wh, f"m{next(names)}", s).execute() for s in seqs]
        rs.verify_runs(spark, runs)
        done.append(len(runs))

    check()
    return sum(done)


def pypaimon_sequences(spark: Any, root: Path, n: int) -> tuple[int, list[str]]:
    rs = tests_module("reliability_support")
    from hypothesis import HealthCheck, given, seed, settings
    PYPAIMON = tests_module("test_model_pypaimon").PYPAIMON

    import schemalab as sl

    if n <= 0:
        return 0, []
    wh = sl.Warehouse(root / "pypaimon", spark=spark)
    names = itertools.count()
    problems: list[str] = []
    done: list[str] = []

    @seed(20240612)
    @settings(max_examples=n, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(rs.sequences(PYPAIMON))
    def check(seq: Any) -> None:
        run = rs.SequenceRun(wh, f"p{next(names)}", seq).execute()
        problems.extend(rs.pypaimon_problems(run))
        done.append(run.name)

    check()
    return len(done), problems


def races(root: Path, rounds: int) -> dict[str, int]:
    tc = tests_module("test_concurrency")
    py_read_ids = tests_module("reliability_support").py_read_ids

    out = {"commits": 0, "failed": 0, "writers": 0, "rows_lost": 0}
    for r in range(rounds):
        d = root / f"race{r}"
        d.mkdir()
        t = tc.make_table(d, "race")
        logs = tc.race(d, t, tc.WRITERS, "a")
        figures = tc.check_linear(t, logs)
        want = {i for log in logs for rec in log if "snapshot" in rec for i in rec["ids"]}
        out["rows_lost"] += len(want - set(py_read_ids(t)))
        out["commits"] += figures["commits"]
        out["writers"] += len(tc.WRITERS)
        d = root / f"losers{r}"
        d.mkdir()
        t = tc.make_table(d, "losers")
        logs = tc.race(d, t, [("mixed", 15)] * 4, "l", max_attempts=1)
        figures = tc.check_linear(t, logs)
        out["commits"] += figures["commits"] + figures["failed"]
        out["failed"] += figures["failed"]
        out["writers"] += 4
    return out


def kills(root: Path, n: int, spark_n: int, spark: Any) -> dict[str, int]:
    tcs = tests_module("test_crash_safety")
    py_read_ids = tests_module("reliability_support").py_read_ids

    from schemalab.table import Table

    out: dict[str, int] = {"python": 0, "spark": 0, "orphans": 0, "rows_lost": 0}
    for kind, count, run, seed in (("python", n, tcs.run_python_kills, 60),
                                   ("spark", spark_n, tcs.run_spark_kills, 70)):
        if not count:
            continue
        res = run(root / f"{kind}kills", count, random.Random(seed))
        out[kind] = res["kills"]
        out["orphans"] += res["orphans"]
        t = res["table"]
        want = {i for ids in res["ledger"].snapshots.values() for i in ids}
        # rows lost as the files say (pyarrow over the manifests) and as the evolved read says
        out["rows_lost"] += len(want - set(py_read_ids(t)))
        got = [r[0] for r in Table(t.path, spark=spark).read().select("id").collect()]
        out["rows_lost"] += len(want - set(got))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sequences", type=int, default=200, help="model sequences (Spark reads)")
    p.add_argument("--merge-sequences", type=int, default=40,
                   help="model sequences on merge-engine tables (upserts, deletes, compactions)")
    p.add_argument("--pypaimon", type=int, default=30, help="sequences read by pypaimon")
    p.add_argument("--race-rounds", type=int, default=2, help="rounds of racing writers")
    p.add_argument("--kills", type=int, default=40, help="SIGKILLs of pure-Python writers")
    p.add_argument("--spark-kills", type=int, default=1, help="SIGKILLs of Spark INSERTs")
    p.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    args = p.parse_args(argv)

    rs = tests_module("reliability_support")
    tbi = tests_module("test_bad_input")

    import schemalab as sl

    started = time.perf_counter()
    spark = sl.local_spark("reliability-report")
    with tempfile.TemporaryDirectory(prefix="schemalab-reliability-", dir=args.dir) as tmp:
        root = Path(tmp)
        timings: dict[str, float] = {}

        def timed(name: str, fn: Any, *a: Any) -> Any:
            t0 = time.perf_counter()
            result = fn(*a)
            timings[name] = time.perf_counter() - t0
            print(f"  {name}: done in {timings[name]:.0f}s", flush=True)
            return result

        print("running the reliability checks...", flush=True)
        n_model = timed("model sequences", model_sequences, spark, root, args.sequences)
        n_merge = timed("merge-engine model sequences", model_sequences, spark, root,
                        args.merge_sequences, 4, "MERGES", 20240613)
        n_pp, pp_problems = timed("pypaimon cross-check", pypaimon_sequences, spark, root,
                                  args.pypaimon)
        race = timed("racing writers", races, root, args.race_rounds)
        killed = timed("SIGKILLed writers", kills, root, args.kills, args.spark_kills, spark)
        (root / "bad").mkdir()
        bad = timed("bad inputs", tbi.run_bad_inputs, root / "bad")
    rows_lost = rs.STATS.rows_lost + race["rows_lost"] + killed["rows_lost"]
    total = time.perf_counter() - started
    s = rs.STATS
    print()
    print("Reliability figures")
    print(f"  sequences tried        {n_model + n_merge + n_pp}  ({n_model} against the model "
          f"in Spark, {n_merge} of them on merge-engine tables: "
          f"{s.inserts} inserts, {s.alters} alters of which {s.refused} refused as predicted, "
          f"{s.deletes} deletes ({s.deletes_refused} refused on append tables), "
          f"{s.compactions} compactions, {s.reads} reads; "
          f"tables {dict(sorted(s.engines.items()))}; "
          f"{n_pp} read back by pypaimon: {s.pypaimon_reads} reads, "
          f"{len(pp_problems)} differences)")
    print(f"  commits raced          {race['commits']}  ({race['writers']} writer processes; "
          f"{race['failed']} losers failed cleanly with retries capped at 1, none left a file)")
    print(f"  kills survived         {killed['python'] + killed['spark']}  "
          f"({killed['python']} pure-Python INSERT/ALTER writers, {killed['spark']} Spark "
          f"INSERTs; {killed['orphans']} orphan files found and removed by clean-orphans)")
    print(f"  bad inputs tried       {bad['tried']}  ({bad['error']} clear errors naming the "
          f"file, {bad['read']} harmless flips that still read correctly)")
    print(f"  rows lost              {rows_lost}")
    print(f"  time                   {total:.0f}s (" + ", ".join(
        f"{k} {v:.0f}s" for k, v in timings.items()) + ")")
    if pp_problems:
        print("\npypaimon differences:\n" + "\n".join(pp_problems[:5]))
    return 0 if rows_lost == 0 and not pp_problems else 1


if __name__ == "__main__":
    sys.exit(main())
