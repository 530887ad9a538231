"""The branches notebook in a real JupyterLab (issue 22): the Explorer's history view draws
one lane per branch of the Paimon table notebook 10 builds (main, dev, hotfix)."""

from __future__ import annotations

from typing import Any

import pytest
from test_tour_browser import (
    SHOTS,
    STEP_S,
    Lab,
    _wait,
    browser,
    lab,  # noqa: F401 - the fixture
    open_notebook,
    run_all,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]

NOTEBOOK = "10_branches_and_tags.ipynb"

# every visible figure's y tick labels in the current tab of the first Explorer
LANES_JS = """
(root) => {
  const panel = [...root.querySelectorAll('.lm-TabPanel-stackedPanel, .widget-tab-contents > *')]
    .find((e) => e.offsetParent !== null && !e.classList.contains('lm-mod-hidden'));
  const plots = [...(panel || root).querySelectorAll('.js-plotly-plot')]
    .filter((p) => p.offsetParent !== null);
  return {
    tab: root.querySelector('.lm-TabBar-tab.lm-mod-current')?.textContent.trim() ?? null,
    plots: plots.length,
    yticks: plots.flatMap((p) => [...p.querySelectorAll('.ytick text, .y2tick text')]
                                   .map((t) => t.textContent.trim())),
  };
}
"""


def test_history_view_draws_a_lane_per_branch(lab: Lab) -> None:  # noqa: F811
    with browser(lab, {"width": 1400, "height": 1100}, "96_branches_failure.png") as page:
        open_notebook(page, lab, NOTEBOOK)
        run_all(page)
        explorer = page.locator(".lm-TabPanel, .widget-tab").first
        explorer.evaluate("(e) => e.scrollIntoView({block: 'start'})")
        explorer.locator(".lm-TabBar-tab", has_text="Schema history").first.click()
        seen: Any = _wait("a lane per branch", lambda: explorer.evaluate(LANES_JS),
                          lambda s: s["tab"] == "Schema history"
                          and {"main", "dev", "hotfix"} <= set(s["yticks"]), STEP_S)
        assert seen["plots"] >= 1
        page.wait_for_timeout(500)
        explorer.screenshot(path=str(SHOTS / "20_branches_lanes.png"))
