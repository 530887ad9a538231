"""Times pypaimon-rust (Rust + DataFusion) reading a Paimon table, for the side-by-side
reader benchmarks. Runs in its own environment, apart from the project's venv
(``make .venv-bench-rust``: pypaimon-rust 0.4.0 and pyarrow).

    .venv-bench-rust/bin/python bench/rust_read.py WAREHOUSE DB TABLE [--rounds 5]

Prints one JSON object: the row count and ``sum(id)`` it read (to check it read what the
others read) and the seconds of each timed round, after one warm-up round.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("warehouse")
    p.add_argument("database")
    p.add_argument("table")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": args.warehouse})
    query = (f"SELECT count(*) AS n, sum(id) AS s FROM "
             f"paimon.`{args.database}`.`{args.table}`")

    def once() -> tuple[int, int]:
        batches = ctx.sql(query)  # a list of pyarrow RecordBatches
        row = batches[0].to_pylist()[0]
        return int(row["n"]), int(row["s"] or 0)

    n, s = once()
    times = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"rows": n, "sum_id": s, "seconds": times}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
