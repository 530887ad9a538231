"""The tour's ALTER stepper, clicked in a real JupyterLab in a real browser.

JupyterLab runs as a subprocess on a free loopback port, over a temporary copy of notebooks/
and data/ (the committed notebook is never touched; ``../data`` still resolves). Playwright
drives Debian's chromium (never Playwright's own browser download): it runs every cell of
00_tour.ipynb, then presses Reset, Step, Back in the rendered stepper and checks after each
press that the header, the lineage figure (plotly, an anywidget) and the read preview show
FLIP-226's states. Screenshots go to tests/browser/screenshots/.

Opt-in: skipped unless SCHEMALAB_BROWSER=1 (``make test-browser``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots"
NOTEBOOK = "00_tour.ipynb"

CHROMIUM = os.environ.get("SCHEMALAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Without the background-networking flags chromium keeps dialling Google, and the closed
# network here refuses it; the rest keep a headless run quiet and reproducible.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1300}

LAB_START_S = 90      # JupyterLab answering /api/status
PAGE_LOAD_S = 90      # the notebook open, its kernel idle
RUN_ALL_S = 240       # every cell run, Spark start included (2 cores)
STEP_S = 90           # one button press: a Spark statement and the re-render


# ---- JupyterLab ----------------------------------------------------------------------------------


@dataclass
class Lab:
    url: str
    token: str
    log: Path

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (kernels run in their own session, so a process-group
    kill of the server would miss them and the JVM under them)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _get(url: str, timeout: float = 5) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (loopback only)
        return int(r.status)


def _stop(proc: subprocess.Popen[bytes], lab: Lab) -> None:
    """Shut JupyterLab down: politely (it stops its kernels), then by signal, then whatever
    it started that is still alive."""
    below = _descendants(proc.pid)
    if proc.poll() is None:
        try:
            req = urllib.request.Request(f"{lab.url}api/shutdown", method="POST",
                                         headers={"Authorization": f"token {lab.token}"})
            urllib.request.urlopen(req, timeout=10).close()  # noqa: S310
            proc.wait(timeout=20)
        except Exception:
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    for pid in below:  # only processes this server started, by id
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab over a throwaway copy of notebooks/ and data/ (``../data`` still works)."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(REPO / "data", root / "data")
    with jupyterlab(root / "notebooks", tmp_path) as running:
        yield running


@contextlib.contextmanager
def jupyterlab(notebooks: Path, tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab serving ``notebooks``, with its own config dirs under ``tmp_path``."""
    jdirs = {k: tmp_path / "jupyter" / k.lower() for k in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR")}
    for d in jdirs.values():
        d.mkdir(parents=True)
    # no "get notified about Jupyter news?" toast over the notebook (the network is closed)
    notification = jdirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    env = {**os.environ, **{k: str(v) for k, v in jdirs.items()}, "PYTHONUNBUFFERED": "1"}
    port, token = _free_port(), secrets.token_hex(16)
    lab = Lab(url=f"http://127.0.0.1:{port}/", token=token, log=tmp_path / "jupyterlab.log")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--port-retries=0",
           f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={notebooks}",
           # window.jupyterapp: run cells and read kernel state through Lab's own commands
           "--LabApp.expose_app_in_browser=True",
           # no announcement feed or update check: the network is closed
           "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:  # CI containers run as root; Jupyter refuses that unless told
        cmd.append("--allow-root")
    with open(lab.log, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=notebooks, env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + LAB_START_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{lab.log_tail()}")
            try:
                if _get(f"{lab.url}api/status?token={token}") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab not ready in {LAB_START_S}s:\n{lab.log_tail()}")
            time.sleep(0.5)
        yield lab
    finally:
        _stop(proc, lab)


# ---- the page ------------------------------------------------------------------------------------

# What the rendered stepper shows, read from its DOM (the element is the .sl-stepper box).
STATE_JS = """
(root) => {
  const q = (s) => root.querySelector(s);
  const texts = (s) => [...root.querySelectorAll(s)].map((e) => e.textContent.trim());
  const table = q('table.sl-preview');
  const button = (name) => {
    const b = [...root.querySelectorAll('button')].find((e) => e.textContent.trim() === name);
    return b ? b.disabled : null;
  };
  return {
    position: q('.sl-position')?.textContent.trim() ?? null,
    where: q('.sl-where')?.textContent.trim() ?? null,
    statement: q('pre.sl-statement')?.textContent.trim() ?? null,
    columns: table ? texts('table.sl-preview thead th') : null,
    rows: table ? [...table.querySelectorAll('tbody tr')].map(
      (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())) : null,
    plots: root.querySelectorAll('.js-plotly-plot').length,
    traces: root.querySelectorAll('.js-plotly-plot .scatterlayer .trace').length,
    title: q('.js-plotly-plot .gtitle')?.textContent ?? null,
    xticks: texts('.js-plotly-plot .xtick text'),
    yticks: texts('.js-plotly-plot .ytick text'),
    error: q('.sl-error')?.textContent.trim() ?? null,
    disabled: {Back: button('Back'), Step: button('Step'), Play: button('Play'),
               Reset: button('Reset')},
  };
}
"""

# The notebook's progress, read through JupyterLab's own model (see expose_app_in_browser).
PROGRESS_JS = """
() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const cells = panel.content.widgets.filter((c) => c.model.type === 'code');
  const errors = [];
  for (const c of cells) {
    for (const o of c.model.outputs.toJSON()) {
      if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
    }
  }
  return {
    kernel: panel.sessionContext.session?.kernel?.status ?? null,
    cells: cells.length,
    counts: cells.map((c) => c.model.executionCount),
    errors,
  };
}
"""


def _wait(what: str, probe: Callable[[], Any], ok: Callable[[Any], bool], timeout: float,
          fail_fast: Callable[[Any], str | None] = lambda _: None) -> Any:
    """Poll ``probe`` until ``ok`` holds; on timeout fail with the last thing seen."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = probe()
        if ok(last):
            return last
        reason = fail_fast(last)
        if reason:
            pytest.fail(f"{what}: {reason}\nlast seen: {json.dumps(last, indent=1)}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached in {timeout:.0f}s\n"
                        f"last seen: {json.dumps(last, indent=1)}")
        time.sleep(0.25)


def _schema_of(state: dict[str, Any]) -> int | None:
    m = re.search(r"schema (\d+)", state.get("where") or "")
    return int(m.group(1)) if m else None


def _expect(position: int, n: int, *, statement: str | None = None, schema: int | None = None,
            columns: list[str] | None = None, rows: list[list[str]] | None = None,
            fields: int | None = None, versions: int | None = None,
            traces: int | None = None) -> Callable[[dict[str, Any]], bool]:
    """The stepper at ``position``: header, statement, lineage figure, preview, buttons."""
    def ok(s: dict[str, Any]) -> bool:
        if s["position"] != f"step {position} of {n}" or s["error"]:
            return False
        if s["disabled"] != {"Back": position == 0, "Step": position >= n,
                             "Play": position >= n, "Reset": False}:
            return False
        if position == 0:  # nothing ran: the next statement, no table, figure or preview
            return (s["where"] == "" and s["rows"] is None and s["plots"] == 0
                    and (s["statement"] or "").startswith(statement or ""))
        if statement is not None and s["statement"] != statement:
            return False
        if schema is not None and _schema_of(s) != schema:
            return False
        if columns is not None and s["columns"] != columns:
            return False
        if rows is not None and sorted(s["rows"] or []) != sorted(rows):
            return False
        if s["plots"] != 1:
            return False
        if fields is not None and sorted(s["yticks"]) != [f"field {i}" for i in range(fields)]:
            return False
        if versions is not None and s["xticks"] != [f"schema {i}" for i in range(versions)]:
            return False
        return traces is None or s["traces"] == traces
    return ok


def test_tour_stepper_in_jupyterlab(lab: Lab) -> None:
    from playwright.sync_api import sync_playwright

    from schemalab import sql

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no chromium at {CHROMIUM}: run `make test-browser` (installs it)")
    SHOTS.mkdir(exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    # what the stepper runs and shows, split as the stepper splits it
    statements = [s.strip() for s in sql.split_statements(
        (REPO / "data" / "scenarios" / "flip226.sql").read_text())]
    n = len(statements)
    assert n == 6 and statements[0].endswith("CREATE TABLE T (a STRING, b STRING, c STRING)")

    profile = tempfile.mkdtemp(prefix="schemalab-chromium-")
    console: list[str] = []
    page = None
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport=VIEWPORT, timeout=60_000)
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))

            def shot(name: str) -> None:
                page.screenshot(path=str(SHOTS / name))

            # -- open the tour, wait for its kernel -------------------------------------------
            page.goto(f"{lab.url}lab/tree/{NOTEBOOK}?token={lab.token}",
                      timeout=PAGE_LOAD_S * 1000)
            _wait("notebook open with an idle kernel", lambda: page.evaluate(PROGRESS_JS),
                  lambda p: p is not None and p["kernel"] == "idle" and p["cells"] > 0,
                  PAGE_LOAD_S)

            # -- Run > Run All Cells (after clearing, so every count must be new) -------------
            page.evaluate("() => window.jupyterapp.commands.execute("
                          "'notebook:clear-all-cell-outputs')")
            page.evaluate("() => { window.jupyterapp.commands.execute("
                          "'notebook:run-all-cells'); }")
            t0 = time.monotonic()
            done = _wait(
                "run all cells", lambda: page.evaluate(PROGRESS_JS),
                lambda p: (p["kernel"] == "idle" and not p["errors"]
                           and all(c is not None for c in p["counts"])),
                RUN_ALL_S,
                fail_fast=lambda p: "a cell raised " + "; ".join(p["errors"])
                if p and p["errors"] else None)
            print(f"run all: {len(done['counts'])} code cells in {time.monotonic() - t0:.0f}s")

            stepper = page.locator(".sl-stepper")
            assert stepper.count() == 1, "the tour renders exactly one stepper"

            def state() -> dict[str, Any]:
                return dict(stepper.evaluate(STATE_JS))

            def show() -> None:  # the stepper at the top of the notebook's viewport
                stepper.evaluate("(e) => e.scrollIntoView({block: 'start'})")
                page.wait_for_timeout(300)

            def press(button: str) -> None:
                # by text, not by role name: the Font Awesome icon's glyph is part of the
                # accessible name ("\uf0e2 Reset")
                stepper.locator("button", has_text=re.compile(rf"^\s*{button}\s*$")).click()

            # stepper.play() ran in the notebook: the last state, SELECT shown, Step disabled
            expected: dict[int, Callable[[dict[str, Any]], bool]] = {
                0: _expect(0, n, statement=statements[0]),
                # CREATE: schema 0, three fields, an empty read (header only)
                1: _expect(1, n, statement=statements[0], schema=0, columns=["a", "b", "c"],
                           rows=[], fields=3, versions=1, traces=3),
                # INSERT: one row, same schema
                2: _expect(2, n, statement=statements[1], schema=0, columns=["a", "b", "c"],
                           rows=[["a1", "b1", "c1"]], fields=3, versions=1, traces=3),
                # DROP c: schema 1, two columns; field 2 ends with a drop marker (+1 trace)
                3: _expect(3, n, statement=statements[2], schema=1, columns=["a", "b"],
                           rows=[["a1", "b1"]], fields=3, versions=2, traces=4),
                # ADD c: schema 2, a new field 3 named c; the old row reads it as NULL
                4: _expect(4, n, statement=statements[3], schema=2, columns=["a", "b", "c"],
                           rows=[["a1", "b1", "NULL"]], fields=4, versions=3, traces=5),
                # INSERT: two rows, the new one with its c
                5: _expect(5, n, statement=statements[4], schema=2, columns=["a", "b", "c"],
                           rows=[["a1", "b1", "NULL"], ["a2", "b2", "c2"]], fields=4,
                           versions=3, traces=5),
                6: _expect(6, n, statement=statements[5], schema=2, columns=["a", "b", "c"],
                           rows=[["a1", "b1", "NULL"], ["a2", "b2", "c2"]], fields=4,
                           versions=3, traces=5),
            }
            seen = _wait("stepper after Run All", state, expected[6], STEP_S)
            show()
            shot("01_after_run_all.png")

            press("Reset")
            _wait("stepper after Reset", state, expected[0], STEP_S)
            show()
            shot("02_after_reset.png")

            history: dict[int, dict[str, Any]] = {}
            for pos in range(1, 6):
                before = state()
                press("Step")
                t1 = time.monotonic()
                seen = _wait(f"stepper after Step to {pos}", state, expected[pos], STEP_S)
                print(f"step {pos}: {time.monotonic() - t1:.1f}s, {seen['where']}")
                assert seen != before, f"Step to {pos} changed nothing on screen"
                history[pos] = seen
                show()
                shot(f"03_step_{pos}.png")
            # the lineage figure grew where the schema did
            assert "field 3" not in history[3]["yticks"] and "field 3" in history[4]["yticks"]
            assert history[3]["traces"] < history[4]["traces"]
            assert _schema_of(history[2]) == 0 and _schema_of(history[3]) == 1

            press("Back")
            back = _wait("stepper after Back from 5", state, expected[4], STEP_S)
            for key in ("position", "where", "statement", "columns", "rows", "xticks",
                        "traces", "disabled"):
                assert back[key] == history[4][key], f"Back did not restore {key}"
            show()
            shot("04_after_back.png")

            # and forward again: the restored table takes the same INSERT the same way
            press("Step")
            _wait("stepper after Step again", state, expected[5], STEP_S)
            show()
            shot("05_step_again.png")
        except BaseException:
            if console:
                print("browser console:\n" + "\n".join(console[-40:]))
            print("jupyterlab log:\n" + lab.log_tail())
            if page is not None:
                try:
                    page.screenshot(path=str(SHOTS / "99_failure.png"))
                except Exception:
                    pass
            raise
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
