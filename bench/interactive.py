"""The explorer's latency budget, as a person feels it (issue 15):

===========================================  ========
cold ``import`` → first rendered Explorer    ≤ 8 s
a warm stepper step, metadata statement      ≤ 0.3 s
a warm stepper step, 1k-row INSERT           ≤ 0.6 s
Back                                         ≤ 0.2 s
Explorer on a 1,000-version table            ≤ 1 s
===========================================  ========

Each figure is the median of ``--runs`` runs (the cold start: separate processes). "Warm"
means Spark is running and the stepper has already taken a step. A step is what the Step
button does: run the statement, then render the diff, the lineage, a preview of the evolved
read and the explanation.

    .venv/bin/python bench/interactive.py [--runs 5] [--stepper-only]

``--stepper-only`` measures the three stepper figures alone (Step and Back), without the cold
start and the 1,000-version Explorer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BUDGET = {"cold import → first Explorer": 8.0, "stepper step, metadata": 0.3,
          "stepper step, 1k-row INSERT": 0.6, "Back": 0.2,
          "Explorer, 1,000-version table": 1.0}

_COLD = """
import time, sys
t0 = time.perf_counter()
import schemalab as sl
from schemalab.widgets import Explorer
Explorer(sl.open_table(sys.argv[1]))
print(time.perf_counter() - t0)
"""


def _median(fn: Callable[[], float], runs: int) -> tuple[float, list[float]]:
    values = [fn() for _ in range(runs)]
    return statistics.median(values), values


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--stepper-only", action="store_true",
                   help="only the stepper's Step and Back figures")
    args = p.parse_args(argv)

    from history_scale import schema_history, write_paimon_table
    from schemalab.widgets import AlterStepper, Explorer

    import schemalab as sl

    work = Path(tempfile.mkdtemp(prefix="schemalab-interactive-"))
    results: dict[str, tuple[float, list[float]]] = {}

    if not args.stepper_only:
        # a small evolved table for the cold start (no Spark needed to render the Explorer)
        small = str(work / "small" / "default.db" / "t")
        write_paimon_table(small, schema_history(12), 30)
        results["cold import → first Explorer"] = _median(lambda: float(subprocess.run(
            [sys.executable, "-c", _COLD, small], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"}).stdout.strip().splitlines()[-1]),
            args.runs)

        big = str(work / "big" / "default.db" / "t")
        write_paimon_table(big, schema_history(1000), 1000)
        results["Explorer, 1,000-version table"] = _median(
            lambda: _timed(lambda: Explorer(sl.open_table(big))), args.runs)

    spark = sl.local_spark()
    rows = ", ".join(f"({i}, 'n{i}', {i % 97})" for i in range(1000))
    meta, insert, back = [], [], []
    for r in range(args.runs + 1):  # the first round warms Spark and the stepper up
        wh = sl.Warehouse(work / f"stepper{r}", spark=spark)
        stepper = AlterStepper(wh, [
            "CREATE TABLE t (id INT, name STRING, qty INT)",
            "INSERT INTO t VALUES (1, 'a', 1)",
            "ALTER TABLE t RENAME COLUMN qty TO amount",
            f"INSERT INTO t VALUES {rows}",
            "ALTER TABLE t ADD COLUMN note STRING"])
        stepper.step()
        stepper.step()
        m = _timed(stepper.step)           # ALTER ... RENAME
        i = _timed(stepper.step)           # INSERT of 1,000 rows
        b = _timed(stepper.back)           # back to before the INSERT
        if r:
            meta.append(m)
            insert.append(i)
            back.append(b)
    results["stepper step, metadata"] = (statistics.median(meta), meta)
    results["stepper step, 1k-row INSERT"] = (statistics.median(insert), insert)
    results["Back"] = (statistics.median(back), back)

    print(f"load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    for name, (med, values) in results.items():
        budget = BUDGET[name]
        verdict = "ok" if med <= budget else "OVER"
        print(f"  {name:<32} median {med:6.3f} s  (min {min(values):.3f}, max {max(values):.3f})"
              f"  budget {budget:.1f} s  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
