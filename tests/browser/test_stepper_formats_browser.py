"""The stepper on both formats (issue 24), clicked in a real JupyterLab in Debian's chromium.

A small notebook of notebook 12's own first cells (its warehouse and its script: a table, two
rows, a rename, a widening, STRING -> INT, a new column, one more row) shows
``AlterStepper(wh, script, formats=("paimon", "iceberg"))``. The test presses **Step** through
the script and **Back** once, and reads from the DOM after each press that both lanes, Paimon
and Iceberg, show what their format wrote (Paimon's ``schema/schema-N`` and snapshot files;
Iceberg's ``metadata/vN.metadata.json`` and the fields it moved), their evolved read and their
lineage figure, and that the difference panel says Iceberg refuses the STRING -> INT change
Paimon makes. Then the stepper is drawn again at 1200 and 900 px (Step, Back: new figures at
the new width) and at each width no two text boxes overlap (:mod:`overlap`).

Its own test, notebook and browser: added to the views layout test's notebook, the two-format
stepper ran Playwright's driver out of memory. Screenshots: tests/browser/screenshots/formats/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from overlap import BOXES_JS, overlaps
from test_tour_browser import (
    REPO,
    SHOTS,
    STEP_S,
    Lab,
    _wait,
    _write_notebook,
    browser,
    jupyterlab,
    open_notebook,
    run_all,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1500)]

NOTEBOOK = "two_formats.ipynb"
FORMATS_SHOTS = SHOTS / "formats"


def _notebook_cells() -> list[str]:
    """Notebook 12's code cells up to the one that shows the stepper (nothing steps it)."""
    nb = json.loads((REPO / "notebooks" / "12_one_alter_two_formats.ipynb").read_text())
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        cells.append("".join(c["source"]))
        if "formats=(\"paimon\", \"iceberg\")" in cells[-1]:
            return cells
    raise AssertionError("notebook 12 has no two-format AlterStepper cell")


def _script() -> list[str]:
    from schemalab.widgets.stepper import statement_text

    from schemalab import sql

    ns: dict[str, Any] = {}
    cell = _notebook_cells()[-1]
    exec(cell[:cell.index("stepper =")], ns)  # noqa: S102 - the notebook's own `script = ...`
    return [statement_text(s) for s in sql.split_statements(ns["script"])]


@pytest.fixture()
def formats_lab(tmp_path: Path) -> Iterator[Lab]:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    _write_notebook(root / "notebooks" / NOTEBOOK, _notebook_cells())
    with jupyterlab(root / "notebooks", tmp_path) as running:
        yield running


# The two-format stepper as drawn: its header, the statement, the difference panel, and per
# lane (in order) its label, metadata line, error, read preview and figures.
STATE_JS = """
(root) => {
  const text = (e) => (e ? e.textContent.replace(/\\s+/g, ' ').trim() : null);
  const lanes = [...root.querySelectorAll('.sl-lane-box')].map((lane) => {
    const table = lane.querySelector('table.sl-preview');
    const plots = [...lane.querySelectorAll('.js-plotly-plot')];
    return {
      label: text(lane.querySelector('.sl-lane')),
      meta: text(lane.querySelector('.sl-meta')),
      error: text(lane.querySelector('.sl-error')),
      progress: !!lane.querySelector('.sl-progress'),
      columns: table ? [...table.querySelectorAll('thead th')].map(text) : null,
      rows: table ? [...table.querySelectorAll('tbody tr')].map(
        (tr) => [...tr.querySelectorAll('td')].map(text)) : null,
      plots: plots.length,
      fresh: plots.length > 0 && plots.every((p) => !p.dataset.slOld),
      titles: plots.map((p) => text(p.querySelector('.gtitle'))),
      box: Math.round(lane.getBoundingClientRect().width),
      top: Math.round(lane.getBoundingClientRect().top),
    };
  });
  const app = window.jupyterapp;
  return {
    kernel: app.shell.currentWidget?.sessionContext?.session?.kernel?.status ?? null,
    position: text(root.querySelector('.sl-position')),
    statement: text(root.querySelector('pre.sl-statement')),
    difference: text(root.querySelector('.sl-difference')),
    lanes,
  };
}
"""

PLOTS_JS = """
(root) => [...root.querySelectorAll('.js-plotly-plot')].map((p) => ({
  svg: Math.round((p.querySelector('.main-svg') || p).getBoundingClientRect().width),
  lane: Math.round(p.closest('.sl-lane-box').getBoundingClientRect().width)}))
"""


def _meta_expected(statement: str, done: dict[str, int]) -> dict[str, list[str]]:
    """What each lane's metadata line must name after ``statement`` ran: Paimon's new schema
    or snapshot file; Iceberg's next metadata.json and a field it moved (nothing for the
    STRING -> INT change Iceberg refuses). ``done`` counts what each format wrote so far
    (Paimon's schemas, Iceberg's metadata files and schemas) and is updated here."""
    kind = statement.split()[0].upper()
    if kind == "INSERT":
        done["versions"] += 1
        return {"Paimon": ["snapshot/snapshot-"],
                "Iceberg": [f"metadata/v{done['versions']}.metadata.json", "current-snapshot-id"]}
    if kind == "CREATE":
        done.update(paimon=1, versions=1, iceberg=1)
        return {"Paimon": ["schema/schema-0"],
                "Iceberg": ["metadata/v1.metadata.json", "last-column-id – → 3"]}
    paimon = [f"schema/schema-{done['paimon']}"]
    done["paimon"] += 1
    if re.search(r"ALTER COLUMN code TYPE INT", statement):
        return {"Paimon": paimon, "Iceberg": []}
    done["versions"] += 1
    done["iceberg"] += 1
    return {"Paimon": paimon,
            "Iceberg": [f"metadata/v{done['versions']}.metadata.json",
                        f"current-schema-id {done['iceberg'] - 2} → {done['iceberg'] - 1}"]}


def _drawn(n: int, position: int) -> Any:
    def ok(s: dict[str, Any]) -> bool:
        if s["position"] != f"step {position} of {n}" or len(s["lanes"]) != 2:
            return False
        # drawn anew (the figures of before a press are marked) and the kernel done: a lane
        # is filled after the one before it, the difference panel last
        return s["kernel"] == "idle" and all(
            lane["meta"] and lane["rows"] is not None and lane["plots"] == 1 and lane["fresh"]
            and all(lane["titles"]) and not lane["progress"] for lane in s["lanes"])
    return ok


def _shows(statement: str, want: dict[str, list[str]], refused: bool, after_refused: bool) -> Any:
    """The stepper shows what ``statement`` did in both lanes: the statement, each lane's
    metadata line naming ``want``, its lineage figure and its evolved read (the same number
    of rows in both), and the difference panel where the formats' rules part."""
    def ok(s: dict[str, Any]) -> bool:
        paimon, iceberg = s["lanes"]
        diff = s["difference"] or ""
        return (s["statement"] == re.sub(r"\s+", " ", statement)
                and all(part in (lane["meta"] or "") for lane in (paimon, iceberg)
                        for part in want[lane["label"]])
                and all("field lineage" in lane["titles"][0] for lane in (paimon, iceberg))
                and len(paimon["rows"]) == len(iceberg["rows"])
                and paimon["error"] is None
                # Iceberg refuses what Paimon casts, with Iceberg's message; it wrote nothing
                and (("Cannot change column type" in (iceberg["error"] or "")
                      and iceberg["meta"] == "no metadata file written"
                      and "Iceberg refuses what Paimon runs" in diff
                      and "Cannot change column type" in diff) if refused
                     else iceberg["error"] is None)
                # after it, Paimon's code is INT and Iceberg's still STRING
                and (not after_refused or "the reads differ" in diff))
    return ok


def _ids_out(text: str | None) -> str | None:
    """``text`` without what a new run of a step names differently: Iceberg's UUIDs in file
    names and its random snapshot ids."""
    if text is None:
        return None
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)
    return re.sub(r"-?\d{12,}", "<id>", text)


def _same_differences(was: dict[str, Any], s: dict[str, Any]) -> list[str]:
    """Where the stepper as drawn (``s``) differs from ``was``: one line per part, with both
    values (Iceberg's random file names and snapshot ids left out)."""
    out = [f"{k}: was {was[k]!r}, now {s[k]!r}"
           for k in ("position", "statement", "difference") if s[k] != was[k]]
    if len(s["lanes"]) != len(was["lanes"]):
        return [*out, f"lanes: was {len(was['lanes'])}, now {len(s['lanes'])}"]
    for got, old in zip(s["lanes"], was["lanes"], strict=True):
        for k in ("label", "meta", "columns", "rows", "error", "titles"):
            a, b = _ids_out(str(old[k])), _ids_out(str(got[k]))
            if a != b:
                out.append(f"lane {old['label']} {k}: was {a!r}, now {b!r}")
    return out


class _Same:
    """The stepper shows what it showed in ``was`` (after a Back, or the same step run
    again: then Iceberg's new files and snapshot have new random names); ``explain`` says
    what differs."""

    def __init__(self, was: dict[str, Any]) -> None:
        self.was = was

    def __call__(self, s: dict[str, Any]) -> bool:
        return not _same_differences(self.was, s)

    def explain(self, s: dict[str, Any]) -> str:
        return "differs from before in:\n  " + "\n  ".join(_same_differences(self.was, s))


def _check_layout(page: Any, stepper: Any, width: int, failures: list[str]) -> None:
    """No overlapping text boxes in the stepper at ``width``; each figure as wide as its
    lane; the stepper screenshotted."""
    page.wait_for_timeout(700)
    stepper.evaluate("(e) => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    failures.extend(f"{width} px: {f}" for f in overlaps(stepper.evaluate(BOXES_JS)))
    for p in stepper.evaluate(PLOTS_JS):
        if not 0.9 * p["lane"] <= p["svg"] <= p["lane"] + 1:
            failures.append(f"{width} px: a figure {p['svg']} px wide in a {p['lane']} px lane")
    # the stepper's top, then each lane on its own (stacked, they outgrow the viewport)
    page.screenshot(path=str(FORMATS_SHOTS / f"{width}_stepper.png"))
    for k, label in enumerate(("paimon", "iceberg")):
        stepper.locator(".sl-lane-box").nth(k).screenshot(
            path=str(FORMATS_SHOTS / f"{width}_lane_{label}.png"))


def _node_rss_mb() -> int:
    """The resident memory of Playwright's node driver (what ran out before), in MB."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"playwright" in cmd and b"node" in cmd:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) // 1024
        except (OSError, ValueError):
            continue
    return total


def test_stepper_on_both_formats(formats_lab: Lab) -> None:
    shutil.rmtree(FORMATS_SHOTS, ignore_errors=True)
    FORMATS_SHOTS.mkdir(parents=True)
    statements = _script()
    n = len(statements)
    refused = next(i for i, s in enumerate(statements, start=1)
                   if re.search(r"ALTER COLUMN code TYPE INT", s))
    with browser(formats_lab, {"width": 1600, "height": 1200}, "95_formats_failure.png") as page:
        open_notebook(page, formats_lab, NOTEBOOK)
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        run_all(page)
        stepper = page.locator(".sl-stepper")
        assert stepper.count() == 1

        def state() -> dict[str, Any]:
            return dict(stepper.evaluate(STATE_JS))

        def press(button: str) -> None:
            stepper.evaluate("(e) => e.querySelectorAll('.js-plotly-plot')"
                             ".forEach((p) => { p.dataset.slOld = '1'; })")
            stepper.locator("button", has_text=re.compile(rf"^\s*{button}\s*$")).click()

        def drawn(what: str, pos: int, shows: Any) -> dict[str, Any]:
            """The stepper at ``pos`` with both lanes drawn anew and showing ``shows``. (A
            figure view that misses its first draw is replaced by the widget itself:
            FullWidthFigure, after 4 s.)"""
            ready = _drawn(n, pos)
            return dict(_wait(what, state, lambda s: bool(ready(s) and shows(s)), STEP_S * 2,
                              explain=getattr(shows, "explain", lambda _: "")))

        start = _wait("the stepper at step 0", state,
                      lambda s: s["position"] == f"step 0 of {n}", STEP_S)
        assert [lane["label"] for lane in start["lanes"]] == ["Paimon", "Iceberg"], start
        assert all(lane["plots"] == 0 and lane["rows"] is None for lane in start["lanes"])

        seen: dict[int, dict[str, Any]] = {}
        done: dict[str, int] = {}
        for pos in range(1, n + 1):
            t0 = time.monotonic()
            press("Step")
            want = _meta_expected(statements[pos - 1], done)
            s = drawn(f"both lanes after Step to {pos}", pos,
                      _shows(statements[pos - 1], want, pos == refused, pos > refused))
            print(f"step {pos}: {time.monotonic() - t0:.1f}s, driver {_node_rss_mb()} MB")
            seen[pos] = s
            stepper.evaluate("(e) => e.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(FORMATS_SHOTS / f"step_{pos}.png"))
        # Paimon wrote a schema per ALTER, Iceberg one fewer (it refused one)
        assert done["paimon"] == done["iceberg"] + 1, done
        assert seen[n]["lanes"][0]["columns"] == seen[n]["lanes"][1]["columns"]
        assert "code" in seen[n]["lanes"][0]["columns"]

        press("Back")
        # Back shows step n - 1 again: the same statement, files, reads, figures, difference
        drawn(f"both lanes after Back to {n - 1}", n - 1, _Same(seen[n - 1]))
        print(f"after Back: driver {_node_rss_mb()} MB")

        # the stepper at three widths: side by side at 1600, stacked below; figures drawn
        # at each width by a Step or Back there
        failures: list[str] = []
        _check_layout(page, stepper, 1600, failures)
        wide = state()["lanes"]
        assert wide[0]["top"] == wide[1]["top"], "two lanes fit side by side at 1600 px"
        for width, button, pos in ((1200, "Step", n), (900, "Back", n - 1)):
            page.set_viewport_size({"width": width, "height": 1200})
            press(button)
            drawn(f"both lanes at {width} px", pos, _Same(seen[pos]))
            _check_layout(page, stepper, width, failures)
            narrow = state()["lanes"]
            if width == 900:
                assert narrow[0]["top"] < narrow[1]["top"], "stacked in a narrow cell"
        print(f"end: driver {_node_rss_mb()} MB")
        assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:60])
