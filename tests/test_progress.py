"""Progress of long work (issue 26): what the shared :mod:`schemalab.progress` counts where
reads plan, ``inspect`` walks snapshots and compactions rewrite files, what a terminal sees,
and that Ctrl-C in a compaction commits nothing and leaves no file behind."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab import progress
from schemalab.paimon.manifest_codec import read_manifest_list
from schemalab.paimon.snapshot import SnapshotManager


def _events(kind: str) -> tuple[list[progress.Event], Any]:
    seen: list[progress.Event] = []
    return seen, progress.observe(lambda e: seen.append(e) if kind in e.what else None)


def test_a_task_counts_to_its_total_and_says_when_interrupted(
        capsys: pytest.CaptureFixture[str]) -> None:
    seen, watching = _events("reading")
    progress.configure("always")
    try:
        with watching:
            assert list(progress.track("abc", "reading manifests", unit="manifests")) == \
                ["a", "b", "c"]
            with pytest.raises(KeyboardInterrupt):
                for k in progress.track(range(5), "reading files", unit="files"):
                    if k == 2:
                        raise KeyboardInterrupt
    finally:
        progress.configure("auto")
    done = [(e.what, e.done, e.total, e.state) for e in seen if e.state != "running"]
    assert done == [("reading manifests", 3, 3, "done"),
                    ("reading files", 2, 5, "interrupted")]
    err = capsys.readouterr().err
    # a terminal line per task, redrawn in place, ended with the final count
    assert "reading manifests: [########################] 3/3 manifests\n" in err
    assert "reading files: [#########...............] 2/5 files (interrupted)\n" in err


def test_quick_work_shows_nothing_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    progress.configure("auto")  # stderr is not a terminal under pytest, and it ends at once
    list(progress.track(range(3), "reading manifests", unit="manifests"))
    progress.configure("never")
    try:
        list(progress.track(range(3), "reading manifests", unit="manifests"))
    finally:
        progress.configure("auto")
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="not one of auto, always, never"):
        progress.configure("loud")  # type: ignore[arg-type]


def test_cli_progress_flag_lasts_one_command(tmp_path: Path) -> None:
    from schemalab import cli

    before = progress.configure("auto")
    try:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            assert cli.main(["inspect", "--no-progress", str(tmp_path / "nope")]) == 1
        assert "does not exist" in err.getvalue()
        assert progress.configure("auto") == "auto"  # the command's "never" is undone
    finally:
        progress.configure(before)


def test_a_terminal_sees_long_work_without_asking() -> None:
    """stderr a TTY (a pseudo-terminal here), 20 steps over about a second: the line shows
    and ends with the count; the same work with 5 steps shows nothing."""
    import pty

    code = ("import time\nfrom schemalab import progress\n"
            "for _ in progress.track(range({n}), 'reading manifests', unit='manifests'):\n"
            "    time.sleep(0.06)\n")
    seen = {}
    for n in (20, 5):
        master, slave = pty.openpty()
        proc = subprocess.run([sys.executable, "-c", code.format(n=n)], stderr=slave,
                              stdout=subprocess.DEVNULL, timeout=60,
                              env={**os.environ, "SCHEMALAB_PROGRESS": "auto"})
        os.close(slave)
        out = b""
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 4096):
                out += chunk
        os.close(master)
        assert proc.returncode == 0
        seen[n] = out.decode()
    assert "reading manifests: [########################] 20/20 manifests" in seen[20]
    assert seen[5] == ""


@pytest.fixture()
def history_table(spark: Any, tmp_path: Path) -> Any:
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("CREATE TABLE t (id INT, v STRING)")
    for k in range(4):
        wh.sql(f"INSERT INTO t VALUES ({k}, 'v{k}'), ({k + 10}, 'w{k}')")
    return wh.table("t")


def _manifests_of(table_path: str, list_name: str) -> int:
    return len(read_manifest_list(os.path.join(table_path, "manifest", list_name)))


@pytest.mark.spark
def test_read_planning_counts_every_manifest_of_the_snapshot(history_table: Any) -> None:
    path = str(history_table.path)
    snap = SnapshotManager(path, "t").latest()
    assert snap is not None
    expected = {"base": _manifests_of(path, snap.base_manifest_list),
                "delta": _manifests_of(path, snap.delta_manifest_list)}
    assert expected["base"] >= 3  # four inserts: the earlier ones are the base
    seen, watching = _events("manifests")
    with watching:
        sl.open_table(path, spark=history_table.spark).read_plan()
    finals = {e.what: (e.done, e.total) for e in seen if e.state == "done"}
    assert finals == {"reading base manifests": (expected["base"],) * 2,
                      "reading delta manifests": (expected["delta"],) * 2}


@pytest.mark.spark
def test_inspect_shows_snapshots_done_on_stderr_only_when_asked(history_table: Any) -> None:
    cmd = [sys.executable, "-m", "schemalab.cli", "inspect", str(history_table.path)]
    asked = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "SCHEMALAB_PROGRESS": "always"})
    assert asked.returncode == 0, asked.stderr
    assert "reading snapshots: [########################] 4/4 snapshots\n" in asked.stderr
    plain = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "SCHEMALAB_PROGRESS": "auto"})
    assert plain.returncode == 0 and "reading" not in plain.stderr, plain.stderr
    assert plain.stdout == asked.stdout  # stdout is the same: progress is stderr only


@pytest.mark.spark
def test_inspect_progress_flags_override_the_environment(history_table: Any) -> None:
    """``--progress`` shows the line where SCHEMALAB_PROGRESS says never; ``--no-progress``
    hides it where the environment says always; stdout is the same either way."""
    cmd = [sys.executable, "-m", "schemalab.cli", "inspect", str(history_table.path)]
    shown = subprocess.run([*cmd, "--progress"], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "SCHEMALAB_PROGRESS": "never"})
    assert shown.returncode == 0, shown.stderr
    assert "reading snapshots: [########################] 4/4 snapshots\n" in shown.stderr
    hidden = subprocess.run([*cmd, "--no-progress"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "SCHEMALAB_PROGRESS": "always"})
    assert hidden.returncode == 0 and "reading" not in hidden.stderr, hidden.stderr
    assert hidden.stdout == shown.stdout
    both = subprocess.run([*cmd, "--progress", "--no-progress"], capture_output=True,
                          text=True, timeout=60)
    assert both.returncode == 2 and "not allowed with" in both.stderr


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
            and not p.name.startswith(".")}


@pytest.mark.spark
def test_ctrl_c_in_a_compaction_commits_nothing_and_leaves_no_file(history_table: Any) -> None:
    t = history_table
    root = Path(t.path)
    before = (t.latest_snapshot.id, _files(root),
              sorted(tuple(r) for r in t.read().collect()))

    def ctrl_c(e: progress.Event) -> None:
        # a real SIGINT once the new files are written, before the commit: Python's handler
        # raises KeyboardInterrupt in the compaction as a Ctrl-C would
        if e.what.startswith("compacting") and e.done == e.total and e.state == "running":
            signal.raise_signal(signal.SIGINT)

    seen, watching = _events("compacting")
    with watching, progress.observe(ctrl_c), pytest.raises(KeyboardInterrupt):
        t.compact()
    assert [e.state for e in seen][-1] == "interrupted"
    again = sl.open_table(root, spark=t.spark)
    assert (again.latest_snapshot.id, _files(root),
            sorted(tuple(r) for r in again.read().collect())) == before
    # and the table compacts afterwards: nothing stale was left in its way
    result = again.compact()
    assert result.snapshot is not None and result.files_before >= 4
    assert sorted(tuple(r) for r in again.read().collect()) == before[2]
