"""Notebooks stored to be read without a kernel: ``python -m schemalab.widgets.static NB...``.

``make notebooks`` runs it after executing the notebooks. A widget output keeps its readable
static view (``text/html`` and ``text/plain``, see
:class:`schemalab.widgets.common.ReadableWidget`) and loses its widget view: without saved
widget state that view can only render as "Error displaying widget: model not found"
(JupyterLab before Run All) or nothing at all (GitHub, nbconvert). Running the cell in
JupyterLab brings the live widget back. nbval does not compare widget views, so the stored
notebooks still pass it. Plotly figures stay as they are: their JSON renders without a kernel.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


def main(argv: Sequence[str] | None = None) -> int:
    paths = list(sys.argv[1:] if argv is None else argv)
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            nb = json.load(fh)
        n = strip_widget_views(nb)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh, indent=1, ensure_ascii=False, sort_keys=True)
            fh.write("\n")
        print(f"{path}: {n} widget view{'s' if n != 1 else ''} stored as static views")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
