"""Crash safety of schemalab's Iceberg writer (issue 24: "a killed writer leaves no visible
partial state"): writer processes killed with SIGKILL at random moments, then checked.

A child (``iceberg_crash_support.py``) commits ALTERs (metadata only, no JVM: many kills) or
Spark INSERTs (a JVM per child: one kill, landing while Spark writes) to table ``t`` and logs a
line only after each commit succeeded. After each kill:

* ``metadata/`` holds ``v1..vN.metadata.json`` with no gap, each a whole JSON document;
  ``version-hint.text`` names one of them; anything else a killed writer left is hidden
  (``.<name>.<uuid>.tmp``); every manifest list and manifest of every snapshot parses and
  every data file it names exists;
* every logged commit is visible, and at most one more (killed between commit and log line);
* pyiceberg reads exactly the rows of the logged INSERTs (none lost, none twice) and the
  columns of the logged ALTERs, as schemalab does;
* the next writer succeeds.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import fastavro
import pytest
from iceberg_crash_support import read_log

import schemalab as sl

pytestmark = pytest.mark.spark

SUPPORT = str(Path(__file__).parent / "iceberg_crash_support.py")
SRC = str(Path(__file__).parent.parent / "src")
ALTER_KILLS = 8
_STDERR: dict[int, IO[bytes]] = {}


def _start(*args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    err = tempfile.TemporaryFile()  # a pipe nobody reads could fill up and block the child
    p = subprocess.Popen([sys.executable, SUPPORT, *args], env=env, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=err)
    _STDERR[p.pid] = err
    return p


def _stderr(p: subprocess.Popen[bytes]) -> str:
    err = _STDERR[p.pid]
    err.seek(0)
    return err.read().decode("utf-8", "replace")[-3000:]


def _kill(p: subprocess.Popen[bytes]) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)  # the child's JVM too, as a crash would
    p.wait(timeout=60)


def _wait(p: subprocess.Popen[bytes], log: str, lines: int, timeout: float) -> None:
    """Until ``log`` has ``lines`` lines; fails as soon as the child died (a dead writer kills
    nothing, and the test would pass having tested nothing)."""
    deadline = time.monotonic() + timeout
    while len(read_log(log)) < lines:
        assert p.poll() is None, _stderr(p)
        assert time.monotonic() < deadline, f"writer made no progress: {_stderr(p)}"
        time.sleep(0.01)


def metadata_problems(table_dir: Path) -> list[str]:
    """What a reader could see of a torn commit (see the module docstring)."""
    meta = table_dir / "metadata"
    problems: list[str] = []
    versions: list[int] = []
    for name in sorted(os.listdir(meta)):
        m = re.fullmatch(r"v(\d+)\.metadata\.json", name)
        if m:
            versions.append(int(m.group(1)))
            try:
                json.loads((meta / name).read_text())["format-version"]
            except (ValueError, KeyError) as e:
                problems.append(f"{name}: {e!r}")
        elif not (name.startswith(".") or name.endswith(".avro")
                  or name == "version-hint.text"):
            problems.append(f"visible stray file {name}")
    if sorted(versions) != list(range(1, len(versions) + 1)):
        problems.append(f"metadata versions not contiguous: {sorted(versions)}")
    hint = int((meta / "version-hint.text").read_text().strip())
    if hint not in versions:
        problems.append(f"version-hint names v{hint}, not among {versions}")
    current = json.loads((meta / f"v{max(versions)}.metadata.json").read_text())
    for snap in current.get("snapshots", []):
        with open(_local(snap["manifest-list"]), "rb") as fh:
            manifests = list(fastavro.reader(fh))
        for mf in manifests:
            with open(_local(mf["manifest_path"]), "rb") as fh:
                for entry in fastavro.reader(fh):
                    path = _local(entry["data_file"]["file_path"])
                    if entry["status"] != 2 and not os.path.exists(path):
                        problems.append(f"snapshot {snap['snapshot-id']}: {path} missing")
    return problems


def _local(uri: str) -> str:
    return uri[len("file:"):] if uri.startswith("file:") else uri


def _pyiceberg(table: Any) -> tuple[list[str], list[int]]:
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(table.metadata_file)
    names = [f.name for f in t.schema().fields]
    ids = t.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist() \
        if t.current_snapshot() is not None else []
    return names, sorted(ids)


def _table(tmp_path: Path, spark: Any = None) -> tuple[str, Any]:
    wh_path = str(tmp_path / "wh")
    wh = sl.Warehouse(wh_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id BIGINT, writer INT)")
    return wh_path, wh


def test_killed_alter_writers_leave_a_consistent_table(tmp_path: Path) -> None:
    rng = random.Random(24)
    wh_path, wh = _table(tmp_path)
    table_dir = tmp_path / "wh" / "default" / "t"
    logged: list[str] = []
    extra = 0
    for r in range(ALTER_KILLS):
        log, go = str(tmp_path / f"log-{r}"), str(tmp_path / f"go-{r}")
        p = _start("alter-loop", wh_path, log, str(r * 1000), go)
        try:
            _wait(p, log, 1, 120)  # ready
            Path(go).touch()
            _wait(p, log, 2 + rng.randrange(3), 120)  # some commits land first
            time.sleep(rng.uniform(0.0, 0.3))
        finally:
            _kill(p)
        logged += [rec["column"] for rec in read_log(log) if "column" in rec]
        assert metadata_problems(table_dir) == [], f"kill {r + 1}"
        t = wh.table("t")
        names = [f.name for f in t.schema.fields]
        added = [n for n in names if n not in ("id", "writer")]
        # every logged ALTER is there, in order; at most one more (killed before its log)
        assert added[:len(logged)] == logged and len(added) - len(logged) <= 1, (r, added)
        extra += len(added) - len(logged)
        logged = added
        assert _pyiceberg(t)[0] == names
    wh.sql("ALTER TABLE t ADD COLUMN after_kills STRING")  # the next writer succeeds
    assert wh.table("t").schema.fields[-1].name == "after_kills"
    assert len(logged) >= 2 * ALTER_KILLS  # the writers got work done between kills
    assert extra <= ALTER_KILLS


@pytest.mark.timeout(600)
def test_a_killed_spark_insert_leaves_a_consistent_table(tmp_path: Path, spark: Any) -> None:
    wh_path, wh = _table(tmp_path, spark)
    table_dir = tmp_path / "wh" / "default" / "t"
    log, go = str(tmp_path / "log"), str(tmp_path / "go")
    p = _start("insert-loop", wh_path, log, "100000", go)
    try:
        _wait(p, log, 1, 240)  # its Spark is up
        Path(go).touch()
        _wait(p, log, 2, 240)  # one INSERT committed: the next is under way
        time.sleep(random.Random(7).uniform(0.0, 1.0))
    finally:
        _kill(p)
    records = [rec for rec in read_log(log) if "snapshot" in rec]
    assert records, _stderr(p)
    assert metadata_problems(table_dir) == []
    t = wh.table("t")
    snaps = [s.snapshot_id for s in t.snapshots]
    assert [rec["snapshot"] for rec in records] == snaps[:len(records)]
    assert len(snaps) - len(records) <= 1, snaps
    want = sorted(i for rec in records for i in rec["ids"])
    got = _pyiceberg(t)[1]
    if len(snaps) > len(records):  # the unlogged commit: all its rows, none twice
        assert len(got) == len(want) + 3 and set(want) <= set(got), got
    else:
        assert got == want
    assert sorted(r[0] for r in t.read().select("id").collect()) == got
    t.insert([{"id": -1, "writer": -1}])  # the next writer succeeds
    assert sorted(r[0] for r in wh.table("t").read().select("id").collect()) == [-1, *got]
