"""Notebooks stored to be read without a kernel: ``python -m schemalab.widgets.static NB...``.

``make notebooks`` runs it after executing the notebooks. A widget output keeps its readable
static view (``text/html`` and ``text/plain``, see
:class:`schemalab.widgets.common.ReadableWidget`) and loses its widget view: without saved
widget state that view can only render as "Error displaying widget: model not found"
(JupyterLab before Run All) or nothing at all (GitHub, nbconvert). Running the cell in
JupyterLab brings the live widget back. nbval does not compare widget views, so the stored
notebooks still pass it.

A plotly figure keeps its JSON (JupyterLab draws it, interactive, without a kernel) and gains
a PNG beside it: GitHub and nbconvert's HTML know no plotly renderer and showed nothing. The
PNG is drawn by plotly.js itself (``Plotly.toImage``) in Debian's chromium, driven by
Playwright (the browser tests' tools; never a browser download). nbval does not compare
images, so the stored notebooks still pass it. Without chromium or Playwright the figures
are left as they are, and the run says so.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PLOTLY = "application/vnd.plotly.v1+json"
#: the width figures are drawn at for their PNG (a notebook cell's width in JupyterLab)
PNG_WIDTH = 1100
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def strip_widget_views(nb: dict[str, Any]) -> int:
    """Remove widget views that have a static fallback beside them; how many were removed."""
    removed = 0
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data and ("text/html" in data or "text/plain" in data):
                del data[WIDGET_VIEW]
                removed += 1
    nb.get("metadata", {}).pop("widgets", None)
    return removed


def plotly_outputs(nb: dict[str, Any]) -> list[dict[str, Any]]:
    """The outputs' data dicts holding a plotly figure."""
    return [out["data"] for cell in nb.get("cells", []) for out in cell.get("outputs", [])
            if PLOTLY in out.get("data", {})]


def add_pngs(nbs: Sequence[dict[str, Any]]) -> int:
    """Give every plotly figure of ``nbs`` a PNG drawn by plotly.js in chromium; how many
    were drawn (0 when chromium or Playwright is missing)."""
    import shutil
    import tempfile

    figures = [d for nb in nbs for d in plotly_outputs(nb)]
    if not figures:
        return 0
    chromium = os.environ.get("SCHEMALAB_CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if not chromium:
        print("no chromium or Playwright: plotly figures stored without a PNG "
              "(GitHub and nbconvert will not show them)", file=sys.stderr)
        return 0
    import plotly.offline

    page_html = ("<html><head><meta charset='utf-8'><script>"
                 + plotly.offline.get_plotlyjs() + "</script></head><body></body></html>")
    drawn = 0
    with tempfile.TemporaryDirectory(prefix="schemalab-png-") as profile, \
            sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = context.new_page()
            page.set_content(page_html)
            for data in figures:
                fig = data[PLOTLY]
                height = int((fig.get("layout") or {}).get("height") or 450)
                url = page.evaluate(
                    """([fig, w, h]) => Plotly.toImage(
                        {data: fig.data || [], layout: fig.layout || {}},
                        {format: 'png', width: w, height: h})""",
                    [fig, PNG_WIDTH, height])
                data["image/png"] = url.split(",", 1)[1]
                drawn += 1
        finally:
            context.close()
    return drawn


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pngs = "--no-png" not in args
    paths = [a for a in args if a != "--no-png"]
    nbs = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            nbs.append(json.load(fh))
    drawn = add_pngs(nbs) if pngs else 0
    for path, nb in zip(paths, nbs, strict=True):
        n = strip_widget_views(nb)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh, indent=1, ensure_ascii=False, sort_keys=True)
            fh.write("\n")
        print(f"{path}: {n} widget view{'s' if n != 1 else ''} stored as static views, "
              f"{len(plotly_outputs(nb))} plotly figure(s)")
    if pngs:
        print(f"{drawn} plotly figure(s) drawn as PNG for GitHub and nbconvert")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
