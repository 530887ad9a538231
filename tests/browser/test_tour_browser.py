"""The tour's ALTER stepper, clicked in a real JupyterLab in a real browser.

JupyterLab runs as a subprocess on a free loopback port, over a temporary copy of notebooks/
and data/ (the committed notebook is never touched; ``../data`` still resolves). Playwright
drives Debian's chromium (never Playwright's own browser download).

- The tour: it opens showing the stepper's static view (no raw widget repr, no "model not
  found"), runs every cell of 00_tour.ipynb — the stepper must still be at step 0 — then
  presses Step through all six statements, Back, Step, Play and Reset, and checks after each
  press that the header, the lineage figure (plotly, an anywidget; a label per change, the
  full width of the cell) and the read preview show FLIP-226's states.
- Real scale: a notebook builds the 50-version trips table of data/scenarios/
  rides_history.sql and opens it in the Explorer at 1600 px; every tab is shown and
  screenshotted, the lineage checked (40 rows a page, full width, labels only where fields
  change, focus on one name).

Screenshots go to tests/browser/screenshots/.

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

# the tour ends with a second, two-format stepper (issue 24): its Run All takes longer
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

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
    # every cell in the DOM: JupyterLab 4 attaches only the cells in view by default, so a
    # figure further down would be "missing" until scrolled to
    tracker = jdirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
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
    labels: [...root.querySelectorAll('.js-plotly-plot .scatterlayer .textpoint text')]
      .filter((t) => t.textContent.trim()).length,
    plotWidth: Math.round(q('.js-plotly-plot')?.getBoundingClientRect().width ?? 0),
    width: Math.round(root.getBoundingClientRect().width),
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
          fail_fast: Callable[[Any], str | None] = lambda _: None,
          explain: Callable[[Any], str] = lambda _: "") -> Any:
    """Poll ``probe`` until ``ok`` holds; on timeout fail with the last thing seen (and what
    ``explain`` says of it: which part differs from what was wanted)."""
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
            why = explain(last)
            pytest.fail(f"{what}: not reached in {timeout:.0f}s\n"
                        + (f"{why}\n" if why else "")
                        + f"last seen: {json.dumps(last, indent=1)}")
        time.sleep(0.25)


def _schema_of(state: dict[str, Any]) -> int | None:
    m = re.search(r"schema (\d+)", state.get("where") or "")
    return int(m.group(1)) if m else None


def _field_ids(yticks: list[str]) -> list[int]:
    """Field ids from the lineage figure's row labels (``name #id``)."""
    return sorted(int(m.group(1)) for t in yticks if (m := re.search(r"#(\d+)", t)))


def _expect(position: int, n: int, *, statement: str | None = None, schema: int | None = None,
            columns: list[str] | None = None, rows: list[list[str]] | None = None,
            fields: int | None = None, versions: int | None = None,
            labels: int | None = None) -> Callable[[dict[str, Any]], bool]:
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
        if fields is not None and _field_ids(s["yticks"]) != list(range(fields)):
            return False
        if versions is not None and s["xticks"] != [str(i) for i in range(versions)]:
            return False
        return labels is None or s["labels"] == labels
    return ok


@contextlib.contextmanager
def browser(lab: Lab, viewport: dict[str, int], failure_shot: str) -> Iterator[Any]:
    """A chromium page (Debian's, driven by Playwright); on failure the console, the lab's
    log and a screenshot."""
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no chromium at {CHROMIUM}: run `make test-browser` (installs it)")
    SHOTS.mkdir(exist_ok=True)
    profile = tempfile.mkdtemp(prefix="schemalab-chromium-")
    console: list[str] = []
    page = None
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport=viewport, timeout=60_000)
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            yield page
        except BaseException:
            if console:
                print("browser console:\n" + "\n".join(console[-40:]))
            print("jupyterlab log:\n" + lab.log_tail())
            if page is not None:
                try:
                    page.screenshot(path=str(SHOTS / failure_shot))
                except Exception:
                    pass
            raise
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


def open_notebook(page: Any, lab: Lab, notebook: str) -> None:
    page.goto(f"{lab.url}lab/tree/{notebook}?token={lab.token}", timeout=PAGE_LOAD_S * 1000)
    _wait("notebook open with an idle kernel", lambda: page.evaluate(PROGRESS_JS),
          lambda p: p is not None and p["kernel"] == "idle" and p["cells"] > 0, PAGE_LOAD_S)


def run_all(page: Any, timeout: float = RUN_ALL_S) -> None:
    """Run > Run All Cells, after clearing the outputs so every count must be new."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    t0 = time.monotonic()
    done = _wait(
        "run all cells", lambda: page.evaluate(PROGRESS_JS),
        lambda p: (p["kernel"] == "idle" and not p["errors"]
                   and all(c is not None for c in p["counts"])),
        timeout, fail_fast=lambda p: "a cell raised " + "; ".join(p["errors"])
        if p and p["errors"] else None)
    print(f"run all: {len(done['counts'])} code cells in {time.monotonic() - t0:.0f}s")


# What the notebook shows before it runs: the stored outputs, read without a kernel.
STORED_JS = """
() => ({
  statics: document.querySelectorAll('.sl-static').length,
  stepperStatic: [...document.querySelectorAll('.sl-static')].some(
    (e) => e.textContent.includes('AlterStepper') && e.textContent.includes('step 0 of 6')),
  rawRepr: document.body.innerText.includes('children=('),
  modelNotFound: document.body.innerText.includes('model not found'),
  stderr: document.querySelectorAll(
    '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]').length,
  plots: document.querySelectorAll('.js-plotly-plot').length,
  // the PNG: JupyterLab's image renderer, or plotly's own renderer drawing it untrusted
  images: document.querySelectorAll('.jp-RenderedImage img, .jp-RenderedPlotly img').length,
})
"""


def test_tour_stepper_in_jupyterlab(lab: Lab) -> None:
    from schemalab import sql

    for old in SHOTS.glob("0*.png"):
        old.unlink()
    # what the stepper runs and shows: each statement without the script's header comments
    statements = [s.strip() for s in sql.split_statements(
        (REPO / "data" / "scenarios" / "flip226.sql").read_text())]
    shown = [re.sub(r"^(\s*--[^\n]*\n|\s*\n)+", "", s) for s in statements]
    n = len(statements)
    assert n == 6 and shown[0] == "CREATE TABLE T (a STRING, b STRING, c STRING)"

    with browser(lab, VIEWPORT, "99_failure.png") as page:
        def shot(name: str) -> None:
            page.screenshot(path=str(SHOTS / name))

        open_notebook(page, lab, NOTEBOOK)
        # -- as committed: static views, no raw widget reprs, no JVM warning ----------------
        # A figure shows as its stored PNG (an untrusted notebook takes the safe renderer;
        # GitHub and nbconvert show the same PNG) or, once trusted, as the plotly figure.
        stored = _wait("the stored outputs rendered", lambda: page.evaluate(STORED_JS),
                       lambda p: p["statics"] >= 2 and p["plots"] + p["images"] >= 1,
                       PAGE_LOAD_S)
        assert stored["stepperStatic"] and not stored["rawRepr"], stored
        assert not stored["modelNotFound"] and stored["stderr"] == 0, stored
        shot("00_as_committed.png")

        run_all(page)
        steppers = page.locator(".sl-stepper")
        # the tour's stepper, and in its last section the stepper on both formats (which
        # test_stepper_formats_browser.py clicks through)
        assert steppers.count() == 2, "the tour renders two steppers"
        stepper = steppers.first

        def state() -> dict[str, Any]:
            return dict(stepper.evaluate(STATE_JS))

        def show() -> None:  # the stepper at the top of the notebook's viewport
            stepper.evaluate("(e) => e.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)

        def press(button: str) -> None:
            # by text, not by role name: the Font Awesome icon's glyph is part of the
            # accessible name ("\uf0e2 Reset")
            stepper.locator("button", has_text=re.compile(rf"^\s*{button}\s*$")).click()

        # labels: one per change — three types at CREATE, "dropped", the new c's type
        expected: dict[int, Callable[[dict[str, Any]], bool]] = {
            0: _expect(0, n, statement=shown[0]),
            # CREATE: schema 0, three fields, an empty read (header only)
            1: _expect(1, n, statement=shown[0], schema=0, columns=["a", "b", "c"],
                       rows=[], fields=3, versions=1, labels=3),
            # INSERT: one row, same schema
            2: _expect(2, n, statement=shown[1], schema=0, columns=["a", "b", "c"],
                       rows=[["a1", "b1", "c1"]], fields=3, versions=1, labels=3),
            # DROP c: schema 1, two columns; field 2 ends with a drop
            3: _expect(3, n, statement=shown[2], schema=1, columns=["a", "b"],
                       rows=[["a1", "b1"]], fields=3, versions=2, labels=4),
            # ADD c: schema 2, a new field 3 named c; the old row reads it as NULL
            4: _expect(4, n, statement=shown[3], schema=2, columns=["a", "b", "c"],
                       rows=[["a1", "b1", "NULL"]], fields=4, versions=3, labels=5),
            # INSERT: two rows, the new one with its c
            5: _expect(5, n, statement=shown[4], schema=2, columns=["a", "b", "c"],
                       rows=[["a1", "b1", "NULL"], ["a2", "b2", "c2"]], fields=4,
                       versions=3, labels=5),
            6: _expect(6, n, statement=shown[5], schema=2, columns=["a", "b", "c"],
                       rows=[["a1", "b1", "NULL"], ["a2", "b2", "c2"]], fields=4,
                       versions=3, labels=5),
        }
        # Run All leaves the stepper where a reader starts: step 0, Step enabled
        _wait("stepper after Run All", state, expected[0], STEP_S)
        show()
        shot("01_after_run_all.png")

        history: dict[int, dict[str, Any]] = {}
        for pos in range(1, n + 1):
            before = state()
            press("Step")
            t1 = time.monotonic()
            seen = _wait(f"stepper after Step to {pos}", state, expected[pos], STEP_S)
            print(f"step {pos}: {time.monotonic() - t1:.1f}s, {seen['where']}")
            assert seen != before, f"Step to {pos} changed nothing on screen"
            # the lineage figure fills the stepper's width, not plotly's default 700 px
            assert seen["plotWidth"] >= 0.9 * seen["width"], (seen["plotWidth"], seen["width"])
            history[pos] = seen
            show()
            shot(f"03_step_{pos}.png")
        # the lineage figure grew where the schema did; CREATE says "no data yet"
        assert _field_ids(history[3]["yticks"]) == [0, 1, 2]
        assert _field_ids(history[4]["yticks"]) == [0, 1, 2, 3]
        assert "no data yet" in history[1]["where"] and "None" not in history[1]["where"]
        assert _schema_of(history[2]) == 0 and _schema_of(history[3]) == 1

        press("Back")
        back = _wait("stepper after Back from 6", state, expected[5], STEP_S)
        for key in ("position", "where", "statement", "columns", "rows", "xticks", "labels",
                    "disabled"):
            assert back[key] == history[5][key], f"Back did not restore {key}"
        show()
        shot("04_after_back.png")

        # and forward again: the restored table takes the same statement the same way
        press("Step")
        _wait("stepper after Step again", state, expected[6], STEP_S)
        press("Reset")
        _wait("stepper after Reset", state, expected[0], STEP_S)
        press("Play")
        _wait("stepper after Play", state, expected[6], STEP_S * 2)
        show()
        shot("05_after_play.png")


# ---- the Explorer on a 50-version table, at 1600 px ---------------------------------------

SCALE_NOTEBOOK = "scale_explorer.ipynb"
SCALE_VIEWPORT = {"width": 1600, "height": 1150}
SCALE_CELLS = [
    "import tempfile\n\nimport schemalab as sl\nfrom schemalab.widgets import Explorer",
    "wh = sl.Warehouse(tempfile.mkdtemp(prefix='schemalab-scale-'))\n"
    "wh.sql(open('../data/scenarios/rides_history.sql').read())\n"
    "t = wh.table('trips')",
    "Explorer(t)",
]

# The visible tab of the Explorer: its plot, ticks and labels.
TAB_JS = """
(root) => {
  const panel = [...root.querySelectorAll('.lm-TabPanel-stackedPanel, .widget-tab-contents > *')]
    .find((e) => e.offsetParent !== null && !e.classList.contains('lm-mod-hidden'));
  const scope = panel || root;
  const plot = [...scope.querySelectorAll('.js-plotly-plot')].find((e) => e.offsetParent !== null);
  const texts = (s) => plot ? [...plot.querySelectorAll(s)].map((e) => e.textContent.trim()) : [];
  return {
    tab: root.querySelector('.lm-TabBar-tab.lm-mod-current')?.textContent.trim() ?? null,
    width: Math.round(root.getBoundingClientRect().width),
    plotWidth: plot ? Math.round(plot.getBoundingClientRect().width) : 0,
    plotHeight: plot ? Math.round(plot.getBoundingClientRect().height) : 0,
    yticks: texts('.ytick text'),
    xticks: texts('.xtick text'),
    labels: texts('.scatterlayer .textpoint text').filter((t) => t).length,
    legend: texts('.legend .legendtext'),
    subtitle: plot?.querySelector('.gtitle-subtitle, .gtitle tspan:last-child')?.textContent ?? '',
    preview: scope.querySelectorAll('table.sl-preview tbody tr').length,
    error: scope.querySelector('.sl-error')?.textContent.trim() ?? null,
  };
}
"""


def _write_notebook(path: Path, cells: list[str]) -> None:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                     "outputs": [], "source": c} for c in cells],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


@pytest.fixture()
def scale_lab(tmp_path: Path) -> Iterator[Lab]:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    shutil.copytree(REPO / "data", root / "data")
    _write_notebook(root / "notebooks" / SCALE_NOTEBOOK, SCALE_CELLS)
    with jupyterlab(root / "notebooks", tmp_path) as running:
        yield running


def test_explorer_on_a_50_version_table_at_1600px(scale_lab: Lab) -> None:
    for old in SHOTS.glob("1*.png"):
        old.unlink()
    with browser(scale_lab, SCALE_VIEWPORT, "98_scale_failure.png") as page:
        open_notebook(page, scale_lab, SCALE_NOTEBOOK)
        # a single-document view: the notebook takes the whole width
        page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
        run_all(page, RUN_ALL_S + 120)
        explorer = page.locator(".lm-TabPanel, .widget-tab").first
        explorer.evaluate("(e) => e.scrollIntoView({block: 'start'})")

        def tab() -> dict[str, Any]:
            return dict(explorer.evaluate(TAB_JS))

        def select(title: str) -> None:
            explorer.locator(".lm-TabBar-tab", has_text=title).click()

        first = _wait("the schema history tab", tab,
                      lambda s: s["plotWidth"] > 0 and len(s["legend"]) >= 5, STEP_S)
        assert first["plotWidth"] >= 0.9 * first["width"] and first["width"] >= 1300, first
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "10_scale_schema_history.png"))

        select("Lineage")
        lineage = _wait("the lineage tab", tab,
                        lambda s: s["tab"] == "Lineage" and len(s["yticks"]) == 40, STEP_S)
        # full width at 1600 px, 50 versions on the axis, 40 of 111 fields on the first page,
        # a label only where something changes (the page's fields were created in schema 0:
        # one type label each, then their later changes), a legend of change kinds
        assert lineage["plotWidth"] >= 0.9 * lineage["width"], lineage
        # every version has its tick; labels every few versions, the last always, so that
        # they stay apart in a 900 px window too (widgets.frame.sparse_labels)
        shown = [t for t in lineage["xticks"] if t]
        assert shown[0] == "0" and shown[-1] == "49" and set(shown) <= {str(i) for i in range(50)}
        assert len(shown) >= 10, shown
        assert 40 <= lineage["labels"] <= 40 + 30, lineage["labels"]
        assert {"added", "renamed", "retyped", "dropped", "swapped names",
                "name used again"} <= set(lineage["legend"])
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "11_scale_lineage_1600.png"))

        box = explorer.locator("input[placeholder='every field']")
        box.fill("promo_code")
        box.press("Enter")
        focused = _wait("the lineage focused on promo_code", tab,
                        lambda s: len(s["yticks"]) == 2, STEP_S)
        assert _field_ids(focused["yticks"]) == [96, 98] and focused["labels"] == 3, focused
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "12_scale_lineage_focus.png"))

        select("Snapshots")
        _wait("the snapshots tab", tab, lambda s: s["tab"] == "Snapshots"
              and s["plotWidth"] >= 0.9 * s["width"], STEP_S)
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "13_scale_snapshots.png"))

        select("Time travel")
        _wait("the time travel tab", tab, lambda s: s["tab"] == "Time travel", STEP_S)
        explorer.locator("button", has_text=re.compile(r"^\s*Read\s*$")).click()
        read = _wait("a read of the latest snapshot", tab,
                     lambda s: s["preview"] == 8 or s["error"], STEP_S)
        assert read["error"] is None, read
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "14_scale_time_travel.png"))
