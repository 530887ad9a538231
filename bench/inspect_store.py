"""``schemalab inspect`` of one table on local disk and on an S3 server, side by side.

Writes a Paimon table with ``--versions`` schema versions and ``--snapshots`` snapshots (the
generator of bench/history_scale.py), copies it into a bucket of moto's S3 server started on
127.0.0.1 (tests/infra), and times the CLI's ``inspect`` (text and ``--json``, which also
reads every snapshot's manifest tree) on both copies, in this process, output discarded:
median, min and max of ``--runs`` runs, the two interleaved. Loopback S3 has no network
latency, so the ratio is the cost of going through the S3 API, not of a real network.

    .venv/bin/python bench/inspect_store.py                   # 100 versions, 1,000 snapshots
    .venv/bin/python bench/inspect_store.py --snapshots 200   # smaller
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from history_scale import schema_history, write_paimon_table  # noqa: E402
from infra.s3 import start_s3  # noqa: E402

from schemalab import cli  # noqa: E402


def _inspect(path: str, *flags: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["inspect", path, *flags]) == 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--versions", type=int, default=100)
    p.add_argument("--snapshots", type=int, default=1000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="schemalab-inspect-bench-"))
    local = str(work / "wh" / "default.db" / "t")
    write_paimon_table(local, schema_history(args.versions), args.snapshots)
    server = start_s3(work / "s3")
    try:
        os.environ.update(server.env)
        from pyarrow import fs

        fs.copy_files(local, f"{server.bucket}/wh/default.db/t",
                      destination_filesystem=server.filesystem())
        remote = server.uri("wh/default.db/t")
        print(f"table: {args.versions} schema versions, {args.snapshots} snapshots; "
              f"load {os.getloadavg()[0]:.2f}")
        for flags in ((), ("--json",)):
            times: dict[str, list[float]] = {"local disk": [], "S3 (moto, loopback)": []}
            for path in (local, remote):
                _inspect(path, *flags)  # warm-up: imports, the store's client
            for _ in range(args.runs):
                for where, path in (("local disk", local), ("S3 (moto, loopback)", remote)):
                    t0 = time.perf_counter()
                    _inspect(path, *flags)
                    times[where].append(time.perf_counter() - t0)
            label = "inspect " + " ".join(flags) if flags else "inspect"
            med = {w: statistics.median(v) for w, v in times.items()}
            for w, v in times.items():
                print(f"  {label:<16} {w:<22} median {med[w]:6.2f} s "
                      f"(min {min(v):.2f}, max {max(v):.2f})")
            print(f"  {label:<16} S3 / local: {med['S3 (moto, loopback)'] / med['local disk']:.2f}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
