"""Server processes for tests: free loopback ports, readiness waits, log tails, sure teardown.

Every server is started in its own session (so its process group holds the JVM a launcher
script ``exec``s, plus the children it forks: a worker's executors, Spark's Python workers),
with ``PR_SET_PDEATHSIG`` so that it is told to stop even if the test process dies without
running finalizers, and is registered for an ``atexit`` stop as well as its fixture's
finalizer. Stopping sends SIGTERM to the whole group (JVM shutdown hooks run: a worker stops
its executors), then SIGKILL to whatever is left after ``grace`` seconds.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

LOOPBACK = "127.0.0.1"


class InfraError(RuntimeError):
    """A test server did not start (or died); the message carries its log tail."""


def free_port(host: str = LOOPBACK) -> int:
    """A port that was free on ``host`` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_open(port: int, host: str = LOOPBACK) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


_RUNNING: set[ServerProcess] = set()


class ServerProcess:
    """One server: ``argv`` started in a new session, stdout+stderr to ``log_path``."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, *,
                 env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
                 ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.started_at = time.monotonic()
        self.ready_seconds: float | None = None
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
                preexec_fn=_die_with_parent)
        _RUNNING.add(self)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as e:
            return f"(no log: {e})"
        return "\n".join(text.splitlines()[-lines:])

    def log_contains(self, needle: str) -> bool:
        try:
            return needle in self.log_path.read_text(errors="replace")
        except OSError:
            return False

    def failure(self, what: str) -> InfraError:
        state = ("still running" if self.alive()
                 else f"exited with code {self.proc.returncode}")
        return InfraError(
            f"{self.name}: {what} ({state}, after {time.monotonic() - self.started_at:.1f} s)\n"
            f"command: {' '.join(self.argv)}\nlog: {self.log_path}\n"
            f"---- last lines of the log ----\n{self.log_tail()}")

    def wait_ready(self, check: Callable[[], bool], *, timeout: float, what: str,
                   interval: float = 0.1) -> float:
        """Poll ``check`` until it holds; fail with the log tail if the process exits or
        ``timeout`` seconds pass. Returns the seconds since start."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                raise self.failure(f"exited before {what}")
            try:
                if check():
                    break
            except Exception:  # noqa: BLE001 - not ready yet, whatever the reason
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise self.failure(f"not {what} within {timeout:.0f} s")
            time.sleep(interval)
        self.ready_seconds = time.monotonic() - self.started_at
        return self.ready_seconds

    def stop(self, grace: float = 20.0) -> int | None:
        """SIGTERM to the process group, SIGKILL after ``grace`` s; reap. Idempotent."""
        _RUNNING.discard(self)
        pgid = self.proc.pid  # start_new_session: the group id is the child's pid
        deadline = time.monotonic() + grace
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(grace)
        # Children of the group (executors, Python workers) may outlive the leader.
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        # SIGKILL is delivered, not awaited: on a busy machine the group's other members
        # were still listed when stop returned (test-cluster saw it once)
        killed = time.monotonic() + 5
        while _group_alive(pgid) and time.monotonic() < killed:
            time.sleep(0.05)
        return self.proc.returncode

    def __repr__(self) -> str:
        return f"<ServerProcess {self.name} pid={self.pid} alive={self.alive()}>"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def group_pids(pgid: int) -> list[int]:
    """Live pids of a process group (Linux /proc), for leak checks."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields after "comm)": state ppid pgrp ...; zombies (Z) are not alive
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(d.name))
    return out


@atexit.register
def _stop_all() -> None:  # pragma: no cover - only when a finalizer did not run
    for server in list(_RUNNING):
        server.stop(grace=5)
