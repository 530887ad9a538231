"""Crash safety: writers killed with SIGKILL at random moments, then checked.

A child process commits INSERTs and ALTERs to one table in a loop and logs a line only after
each commit succeeded; the test kills it (its whole process group, JVM included) at a random
moment, and then checks the table:

* every schema, snapshot, manifest and manifest list parses, and ids are contiguous: no
  half-written metadata is visible (a killed writer leaves at most hidden temporary files);
* every commit that was logged is visible, and at most one more (killed between its commit
  and its log line); the table reads exactly the rows of its last committed snapshot, none
  lost and none twice;
* the next writer succeeds (the next round's child, and a final insert and ALTER here);
* ``schemalab clean-orphans`` lists what the killed writers left, deletes it with
  ``--delete``, and never touches a referenced file: every read is the same afterwards.

Most kills hit the pure-Python write path (pyarrow writes the Parquet file, everything after
is the same code as a Spark INSERT: staging directory, rename, manifest, lists, snapshot,
hints; ALTERs need no Spark), so many kills cost no JVM. One more (six in the soak) kills a
real Spark INSERT child, JVM and all. ``SCHEMALAB_SOAK=1`` multiplies the rounds.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import pytest
from reliability_support import (
    hidden_files,
    metadata_problems,
    py_insert,
    py_read_ids,
    read_log,
)

import schemalab as sl
from schemalab.paimon.orphans import clean_orphans, find_orphans, referenced_files
from schemalab.schema.changes import AddColumn, ColumnSpec
from schemalab.table import Table
from schemalab.types.parse import parse_type

SOAK = os.environ.get("SCHEMALAB_SOAK") == "1"
PY_KILLS = 120 if SOAK else 12
SPARK_KILLS = 6 if SOAK else 1
SUPPORT = str(Path(__file__).parent / "reliability_support.py")
SRC = str(Path(__file__).parent.parent / "src")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    return env


#: each writer's stderr, in a file: a pipe nobody reads until the end can fill up and block
#: a chatty writer (Spark's start-up) forever
_STDERR: dict[int, IO[bytes]] = {}


def _start(*args: str) -> subprocess.Popen[bytes]:
    # Its own session: the kill reaches the child's JVM too, as a crash of the machine would.
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([sys.executable, SUPPORT, *args], env=_env(),
                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
    _STDERR[p.pid] = err
    return p


def _stderr(p: subprocess.Popen[bytes]) -> str:
    err = _STDERR.get(p.pid)
    if err is None:
        return ""
    err.seek(0)
    return err.read().decode(errors="replace")


def _kill(p: subprocess.Popen[bytes]) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)


class Ledger:
    """What the logs of all killed writers say was committed."""

    def __init__(self) -> None:
        self.snapshots: dict[int, list[int]] = {}
        self.schemas: set[int] = set()

    def add(self, log: str) -> None:
        for rec in read_log(log):
            if "snapshot" in rec:
                self.snapshots[rec["snapshot"]] = rec["ids"]
            elif "schema" in rec:
                self.schemas.add(rec["schema"])


def check_after_kill(t: Table, ledger: Ledger, what: str) -> list[int]:
    """The checks after a kill; returns the ids the table holds."""
    problems = metadata_problems(t.path)
    assert problems == [], f"{what}: {problems}"
    snap_ids = t.snapshot_manager.list_ids()
    schema_ids = t.schema_manager.list_ids()
    logged_snaps = max(ledger.snapshots, default=0)
    logged_schema = max(ledger.schemas, default=0)
    latest = snap_ids[-1] if snap_ids else 0
    # every logged commit is visible; at most one more (killed before its log line)
    assert logged_snaps <= latest <= logged_snaps + 1, (what, snap_ids, logged_snaps)
    assert logged_schema <= schema_ids[-1] <= logged_schema + 1, (what, schema_ids)
    assert t.snapshot_manager.latest_id() == (latest or None)
    ids = py_read_ids(t)
    assert len(ids) == len(set(ids)), f"{what}: duplicated rows"
    want = sorted(i for s in ledger.snapshots.values() for i in s)
    if latest == logged_snaps + 1:
        # the unlogged commit: its rows are all there, with fresh ids
        extra = sorted(set(ids) - set(want))
        assert len(extra) == 3, (what, extra)
        ledger.snapshots[latest] = extra
        want = sorted(want + extra)
    assert ids == want, f"{what}: rows lost or added"
    ledger.schemas.add(schema_ids[-1])
    if latest:
        assert t.snapshot(latest).total_record_count == len(ids)
    return ids


def _orphans_cli(table_path: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "schemalab.cli", "clean-orphans", table_path,
                           "--older-than", "0", *flags], capture_output=True, text=True,
                          env=_env(), timeout=120)


def _clean_and_recheck(t: Table, ledger: Ledger, what: str) -> tuple[int, int]:
    """clean-orphans (dry run, then --delete) through the CLI; nothing referenced goes.
    Returns (orphans found, referenced files kept)."""
    before_ids = py_read_ids(t)
    keep = referenced_files(t.path)
    assert all(os.path.exists(p) for p in keep)
    orphans, _ = find_orphans(t.path, older_than_seconds=0)
    assert not set(orphans) & keep
    dry = _orphans_cli(t.path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"{len(orphans)} orphan file(s) in {t.path}; would delete")
    assert all(os.path.exists(p) for p in orphans)  # a dry run deletes nothing
    done = _orphans_cli(t.path, "--delete")
    assert done.returncode == 0, done.stderr
    assert f"{len(orphans)} orphan file(s)" in done.stdout and "; deleted;" in done.stdout
    assert all(os.path.exists(p) for p in keep), f"{what}: a referenced file was deleted"
    assert find_orphans(t.path, older_than_seconds=0)[0] == []
    assert hidden_files(t.path) == []
    assert py_read_ids(t) == before_ids
    for sid in t.snapshot_manager.list_ids():  # every snapshot still plans (files exist)
        t.read_plan(snapshot_id=sid)
    return len(orphans), len(keep)


def _make(tmp_path: Path, name: str) -> Table:
    wh = sl.Warehouse(tmp_path / "wh")
    return wh.create_table(name, [ColumnSpec("id", parse_type("BIGINT")),
                                  ColumnSpec("writer", parse_type("INT"))])


def run_python_kills(tmp_path: Path, kills: int, rng: random.Random) -> dict[str, Any]:
    """``kills`` rounds of: start a mixed INSERT/ALTER writer, kill it at a random moment."""
    t = _make(tmp_path, "crash")
    ledger = Ledger()
    orphans_seen = 0
    for r in range(kills):
        log = str(tmp_path / f"log-{r}")
        p = _start("mixed-loop", t.path, log, str((r + 1) * 100_000), "0", "mixed")
        try:
            deadline = time.monotonic() + 60
            while not read_log(log):
                assert p.poll() is None, _stderr(p)
                assert time.monotonic() < deadline, "writer did not start"
                time.sleep(0.01)
            # every other round waits for the writer's first commit, so that the writers
            # get work done between kills however busy the machine is; the others kill it
            # anywhere, the first commit included
            while r % 2 and len(read_log(log)) < 2 and time.monotonic() < deadline:
                assert p.poll() is None, _stderr(p)
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.6))
        finally:
            _kill(p)
        ledger.add(log)
        check_after_kill(t, ledger, f"kill {r + 1}")
        if r == kills // 2:  # clean in the middle too: later writers build on a cleaned table
            orphans_seen += _clean_and_recheck(t, ledger, f"kill {r + 1}")[0]
    # the next writer succeeds, here
    s = t.alter(AddColumn(("after",), parse_type("STRING")))
    snap = py_insert(t, [{"id": -1, "writer": -1, "after": "x"}])
    assert s.id == t.schema_manager.list_ids()[-1]
    assert snap.id == t.snapshot_manager.list_ids()[-1]
    ledger.snapshots[snap.id] = [-1]
    ledger.schemas.add(s.id)
    found, kept = _clean_and_recheck(t, ledger, "end")
    return {"table": t, "ledger": ledger, "kills": kills, "orphans": orphans_seen + found,
            "kept": kept, "commits": len(ledger.snapshots) + len(ledger.schemas)}


def _staging(table_path: str) -> bool:
    return any(n.startswith(".staging-") for n in os.listdir(table_path))


def run_spark_kills(tmp_path: Path, kills: int, rng: random.Random) -> dict[str, Any]:
    """Real Spark INSERTs (a JVM per child) killed at a random moment of their loop."""
    wh_path = str(tmp_path / "wh")
    t = _make(tmp_path, "sparkcrash")
    ledger = Ledger()
    orphans = 0
    for r in range(kills):
        log, go = str(tmp_path / f"slog-{r}"), str(tmp_path / f"go-{r}")
        p = _start("insert-loop", wh_path, "sparkcrash", log, str((r + 1) * 100_000), go)
        try:
            deadline = time.monotonic() + 240
            while not read_log(log):
                assert p.poll() is None, _stderr(p)
                assert time.monotonic() < deadline, "Spark writer did not start"
                time.sleep(0.05)
            Path(go).touch()
            # The first kill lands in the first INSERT (a Spark job writing into its staging
            # directory: the costly part); later ones (soak) after 1-2 commits, anywhere.
            wait_until = time.monotonic() + 120
            while len(read_log(log)) < 1 + min(r, 2) if r else not _staging(t.path):
                # a writer that died (it once did, on every INSERT) kills nothing: the test
                # would pass having tested nothing
                assert p.poll() is None, _stderr(p)
                assert time.monotonic() < wait_until, f"Spark writer {r} made no progress"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 1.0) if r == 0 else rng.uniform(0.0, 2.5))
        finally:
            _kill(p)
        ledger.add(log)
        check_after_kill(t, ledger, f"Spark kill {r + 1}")
        orphans += len(find_orphans(t.path, older_than_seconds=0)[0])
    snap = py_insert(t, [{"id": -1, "writer": -1}])  # the next writer succeeds
    ledger.snapshots[snap.id] = [-1]
    _clean_and_recheck(t, ledger, "Spark end")
    return {"table": t, "ledger": ledger, "kills": kills, "orphans": orphans}


@pytest.mark.timeout(900)
def test_killed_python_writers_leave_a_consistent_table(tmp_path: Path, spark: Any) -> None:
    out = run_python_kills(tmp_path, PY_KILLS, random.Random(6))
    t: Table = out["table"]
    assert out["commits"] >= PY_KILLS // 2  # the writers got work done between kills
    # Spark's evolved read agrees with the files: the latest and the first snapshot.
    df = Table(t.path, spark=spark).read()
    got = sorted(r[0] for r in df.select("id").collect())
    assert got == py_read_ids(t)
    assert df.columns[:2] == ["id", "writer"] and df.columns[-1] == "after"


@pytest.mark.timeout(900)
def test_killed_spark_inserts_leave_a_consistent_table(tmp_path: Path, spark: Any) -> None:
    out = run_spark_kills(tmp_path, SPARK_KILLS, random.Random(7))
    t: Table = out["table"]
    df = Table(t.path, spark=spark).read()
    assert sorted(r[0] for r in df.select("id").collect()) == py_read_ids(t)


def test_clean_orphans_cli_refuses_what_is_not_a_table(tmp_path: Path) -> None:
    r = _orphans_cli(str(tmp_path))
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "no schema/" in r.stderr
    assert "Traceback" not in r.stderr


def test_clean_orphans_keeps_young_files_and_foreign_directories(tmp_path: Path) -> None:
    """A writer still in flight (young files) and directories schemalab never writes are
    left alone; a corrupt snapshot stops the cleaner before it deletes anything."""
    t = _make(tmp_path, "o")
    py_insert(t, [{"id": 1, "writer": 0}])
    stray = Path(t.path) / "bucket-0" / "data-stray.parquet"
    stray.write_bytes(b"x")
    index = Path(t.path) / "index" / "index-1"
    index.parent.mkdir()
    index.write_bytes(b"y")
    assert clean_orphans(t.path, delete=True).orphans == ()  # young: kept (default 1 hour)
    assert stray.exists()
    rep = clean_orphans(t.path, older_than_seconds=0)
    assert rep.orphans == (str(stray),) and not rep.deleted and stray.exists()
    assert "would delete (dry run; pass --delete)" in rep.text()
    snap = Path(t.path) / "snapshot" / "snapshot-1"
    good = snap.read_bytes()
    snap.write_bytes(good[: len(good) // 2])
    r = _orphans_cli(t.path, "--delete")
    assert r.returncode == 1 and str(snap) in r.stderr and "Traceback" not in r.stderr
    assert stray.exists()
    snap.write_bytes(good)
    assert clean_orphans(t.path, delete=True, older_than_seconds=0).orphans == (str(stray),)
    assert not stray.exists() and index.exists()
    assert py_read_ids(t) == [1]
