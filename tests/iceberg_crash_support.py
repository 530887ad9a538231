"""Writer processes for the Iceberg crash-safety test (``tests/test_iceberg_crash_safety.py``).

Run as ``python iceberg_crash_support.py alter-loop|insert-loop WAREHOUSE LOG START GO``: the
writer opens table ``t`` of an Iceberg warehouse, logs ``{"ready": true}``, waits for file GO,
then commits in a loop and logs one JSON line only *after* each commit succeeded:

* ``alter-loop``  ``ALTER TABLE t ADD COLUMN c<k> INT`` (k = START, START+1, ...): metadata only,
  no Spark, so a test can kill many of them without a JVM each;
* ``insert-loop`` ``INSERT`` of three rows with fresh ids (START, START+1, ...) through a real
  local Spark: the kill can land while Spark writes the data files.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def log_line(path: str, rec: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_log(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        # a torn last line was never logged
        return [json.loads(line) for line in fh if line.endswith("\n")]


def _wait_for(path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(path)
        time.sleep(0.01)


def alter_loop(warehouse: str, log: str, start: int, go: str) -> None:
    import schemalab as sl

    wh = sl.Warehouse(warehouse, format="iceberg")
    log_line(log, {"ready": True})
    _wait_for(go, 600)
    k = start
    while True:
        wh.sql(f"ALTER TABLE t ADD COLUMN c{k} INT")
        log_line(log, {"column": f"c{k}"})
        k += 1


def insert_loop(warehouse: str, log: str, start: int, go: str) -> None:
    import schemalab as sl

    spark = sl.local_spark(f"iceberg-insert-loop-{start}", cores=1, driver_memory="1g")
    t = sl.Warehouse(warehouse, spark=spark, format="iceberg").table("t")
    log_line(log, {"ready": True})
    _wait_for(go, 600)
    k = start
    while True:
        ids = [k, k + 1, k + 2]
        snap = t.insert([{"id": i, "writer": start} for i in ids])
        assert snap is not None
        log_line(log, {"snapshot": snap.snapshot_id, "ids": ids})
        k += 3


if __name__ == "__main__":
    mode, wh_path, log_path, first, go_file = sys.argv[1:6]
    {"alter-loop": alter_loop, "insert-loop": insert_loop}[mode](
        wh_path, log_path, int(first), go_file)
