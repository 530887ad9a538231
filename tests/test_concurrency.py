"""Concurrency: several processes commit INSERTs and ALTERs to one table at once.

Writer processes (see ``reliability_support.mixed_loop``) start together and commit through
the same code as the Spark write path (the Parquet file itself is written by pyarrow, so no
process needs a JVM; ``test_evolved_read.py::test_concurrent_inserts_and_alters`` races real
Spark INSERTs). Each logs a commit only after it succeeded. Then:

* every commit that reported success is visible, with the id it reported;
* history is linear: snapshot ids 1..S and schema ids 0..A with no gap, snapshot ``k``
  holds exactly the rows of the commits 1..k, snapshot schema ids never go back;
* no row is lost or duplicated (pyarrow over the manifests, and Spark's evolved read);
* a loser retries; with retries capped, a loser fails with a clear error and leaves no trace
  (no file of it remains: data file, manifest, lists, temporary files).

``SCHEMALAB_SOAK=1`` runs more writers for longer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import pytest
from reliability_support import hidden_files, metadata_problems, py_read_ids, read_log

import schemalab as sl
from schemalab.errors import CommitConflictError
from schemalab.paimon import commit as commits
from schemalab.paimon.orphans import find_orphans
from schemalab.schema.changes import ColumnSpec
from schemalab.table import Table
from schemalab.types.parse import parse_type

SOAK = os.environ.get("SCHEMALAB_SOAK") == "1"
SUPPORT = str(Path(__file__).parent / "reliability_support.py")
SRC = str(Path(__file__).parent.parent / "src")
#: (kind, commits) of each writer process
WRITERS = ([("insert", 40)] * 4 + [("alter", 20)] * 2 + [("mixed", 30)] * 2 if SOAK
           else [("insert", 12)] * 3 + [("alter", 8)] * 2 + [("mixed", 9)])


def make_table(tmp_path: Path, name: str) -> Table:
    wh = sl.Warehouse(tmp_path / "wh")
    return wh.create_table(name, [ColumnSpec("id", parse_type("BIGINT")),
                                  ColumnSpec("writer", parse_type("INT"))])


def race(tmp_path: Path, t: Table, writers: list[tuple[str, int]], tag: str,
         max_attempts: int | None = None, base: int = 0) -> list[list[dict[str, Any]]]:
    """Start every writer, let them go at once, wait; returns each writer's log."""
    go = str(tmp_path / f"go-{tag}")
    env = dict(os.environ, SCHEMALAB_GO_FILE=go,
               PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    logs: list[str] = []
    procs: list[subprocess.Popen[bytes]] = []
    errs: list[IO[bytes]] = []
    for w, (kind, n) in enumerate(writers):
        log = str(tmp_path / f"log-{tag}-{w}")
        args = [sys.executable, SUPPORT, "mixed-loop", t.path, log, str(base + (w + 1) * 100_000),
                str(n), kind] + ([] if max_attempts is None else [str(max_attempts)])
        # stderr to a file: a pipe read only at the end can fill up and block a writer
        errs.append(tempfile.TemporaryFile())
        procs.append(subprocess.Popen(args, env=env, stderr=errs[-1]))
        logs.append(log)
    try:
        deadline = time.monotonic() + 120
        while not all(read_log(x) for x in logs):
            assert time.monotonic() < deadline, "writers did not start"
            assert all(p.poll() is None for p in procs)
            time.sleep(0.02)
        Path(go).touch()
        for p in procs:
            p.wait(timeout=600)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    errors = []
    for err in errs:
        err.seek(0)
        errors.append(err.read().decode(errors="replace"))
    assert [p.returncode for p in procs] == [0] * len(procs), errors
    return [read_log(x)[1:] for x in logs]


def check_linear(t: Table, logs: list[list[dict[str, Any]]]) -> dict[str, int]:
    """Every logged success visible at the id it reported; ids contiguous; snapshot k has
    exactly the rows of commits 1..k. Returns figures."""
    records = [r for log in logs for r in log]
    snaps = {r["snapshot"]: r["ids"] for r in records if "snapshot" in r}
    schemas = [r["schema"] for r in records if "schema" in r]
    n_snap = sum(1 for r in records if "snapshot" in r)
    assert len(snaps) == n_snap, "two writers reported the same snapshot id"
    assert len(set(schemas)) == len(schemas), "two writers reported the same schema id"
    assert t.snapshot_manager.list_ids() == list(range(1, n_snap + 1))
    assert t.schema_manager.list_ids() == list(range(len(schemas) + 1))
    assert metadata_problems(t.path) == []
    assert sorted(snaps) == list(range(1, n_snap + 1))
    assert sorted(schemas) == list(range(1, len(schemas) + 1))
    expected: list[int] = []
    previous_schema = 0
    for sid in range(1, n_snap + 1):
        expected = sorted(expected + snaps[sid])
        snap = t.snapshot(sid)
        got = py_read_ids(t, sid)
        assert got == expected, f"snapshot {sid}: rows lost, added or duplicated"
        assert snap.total_record_count == len(expected) and snap.delta_record_count == 3
        assert snap.schema_id >= previous_schema
        previous_schema = snap.schema_id
    latest = t.schema
    for r in records:
        if "column" in r:
            assert latest.field(r["column"]) is not None
            assert t.schema_at(r["schema"]).field(r["column"]) is not None
        if "option" in r:
            assert r["option"] in latest.options
    assert hidden_files(t.path) == []
    assert find_orphans(t.path, older_than_seconds=0)[0] == []
    failed = [r for r in records if "failed" in r]
    return {"commits": n_snap + len(schemas), "snapshots": n_snap, "schemas": len(schemas),
            "failed": len(failed), "rows": len(expected)}


@pytest.mark.timeout(900)
def test_racing_inserts_and_alters_are_linear_and_lose_nothing(tmp_path: Path,
                                                              spark: Any) -> None:
    t = make_table(tmp_path, "race")
    logs = race(tmp_path, t, WRITERS, "a")
    figures = check_linear(t, logs)
    assert figures["failed"] == 0  # with the default retries every loser got in
    assert figures["snapshots"] == sum(
        n if k == "insert" else (n + 2) // 3 if k == "mixed" else 0 for k, n in WRITERS)
    # Spark's evolved read of the latest snapshot and of the first one agrees.
    spark_t = Table(t.path, spark=spark)
    df = spark_t.read()
    assert sorted(r[0] for r in df.select("id").collect()) == py_read_ids(t)
    added = [r["column"] for log in logs for r in log if "column" in r]
    assert set(added) <= set(df.columns)
    assert df.where(" OR ".join(f"`{c}` IS NOT NULL" for c in added)).count() == 0


@pytest.mark.timeout(900)
def test_losers_fail_clearly_and_leave_no_trace(tmp_path: Path) -> None:
    """With one attempt per commit, racing writers lose: each loser gets a clear error
    naming the table, and nothing of its commit stays (no file at all)."""
    t = make_table(tmp_path, "losers")
    all_logs: list[list[dict[str, Any]]] = []
    for rnd in range(4):
        all_logs += race(tmp_path, t, [("mixed", 15)] * 4, f"l{rnd}", max_attempts=1,
                         base=rnd * 1000)
        figures = check_linear(t, all_logs)
        if figures["failed"]:
            break
    failures = [r for log in all_logs for r in log if "failed" in r]
    assert failures, "no commit lost a race"
    for f in failures:
        assert "default.losers" in f["error"] and "nothing of" in f["error"], f
    present = set(py_read_ids(t))
    assert not present & {i for f in failures for i in f["ids"]}


def test_a_failed_spark_insert_commit_removes_its_data_files(
        tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """store.insert: when the commit gives up, the Parquet files it wrote are removed."""
    t = sl.Warehouse(tmp_path / "wh", spark=spark).create_table(
        "gives_up", [ColumnSpec("id", parse_type("BIGINT"))])
    t.insert([(1,)])
    before = sorted(os.listdir(os.path.join(t.path, "bucket-0")))
    monkeypatch.setattr(commits, "MAX_ATTEMPTS", 0)  # every attempt lost
    with pytest.raises(CommitConflictError, match="default.gives_up.*nothing of this commit"):
        t.insert([(2,)])
    assert sorted(os.listdir(os.path.join(t.path, "bucket-0"))) == before
    assert find_orphans(t.path, older_than_seconds=0)[0] == []
    assert hidden_files(t.path) == []
