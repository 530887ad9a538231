"""Which text boxes of a rendered view overlap: read from the DOM in the browser.

:data:`BOXES_JS` collects, inside one element, the bounding boxes of every plotly figure's
texts (title and subtitle, axis titles, tick labels, legend entries, annotations, point labels)
and its modebar, and the HTML labels of the ipywidgets around them (labels, buttons, dropdowns,
HTML text); :func:`overlaps` says which two of them share more than a pixel. Figures are
compared with themselves only (two figures never share pixels), widget labels with each other.
"""

from __future__ import annotations

from typing import Any

BOXES_JS = """
(root) => {
  const visible = (e) => {
    if (!e.isConnected) return false;
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const st = getComputedStyle(n);
      if (st.display === 'none' || st.visibility === 'hidden') return false;
      if (n.classList && n.classList.contains('lm-mod-hidden')) return false;
    }
    return true;
  };
  const box = (e, kind, group) => {
    const r = e.getBoundingClientRect();
    return {kind, group, text: (e.textContent || '').trim().slice(0, 80),
            x: r.left, y: r.top, w: r.width, h: r.height};
  };
  const out = [];
  const plots = [...root.querySelectorAll('.js-plotly-plot')].filter(visible);
  plots.forEach((plot, i) => {
    const g = 'plot' + i;
    const add = (sel, kind) => plot.querySelectorAll(sel).forEach((e) => {
      if (visible(e) && (e.textContent || '').trim()) out.push(box(e, kind, g));
    });
    add('.g-gtitle text.gtitle', 'title');
    add('.g-gtitle text.gtitle-subtitle', 'subtitle');
    add('.g-xtitle text, .g-x2title text, .g-ytitle text, .g-y2title text', 'axis title');
    add('.xtick text, .x2tick text', 'x tick');
    add('.ytick text, .y2tick text', 'y tick');
    add('.legend .legendtext', 'legend');
    add('.annotation-text-g text', 'annotation');
    add('.textpoint text', 'point label');
    // the figure as plotly drew it: its SVG (the container can be a few px narrower when
    // plotly keeps its minimum width in a narrow cell; the cell-width check covers that)
    const svg = plot.querySelector('.main-svg');
    const r = (svg || plot).getBoundingClientRect();
    out.push({kind: 'figure', group: g, text: 'figure', x: r.left, y: r.top, w: r.width,
              h: r.height});
    const mb = plot.querySelector('.modebar');
    if (mb && visible(mb)) {
      const r = mb.getBoundingClientRect();
      if (r.width > 0) out.push({kind: 'modebar', group: g, text: 'modebar',
                                 x: r.left, y: r.top, w: r.width, h: r.height});
    }
  });
  const sel = '.widget-label, .widget-html-content, .widget-button, .widget-toggle-button,' +
              ' .widget-dropdown > select, .widget-text > input, .lm-TabBar-tabLabel, ' +
              '.sl-position, .sl-where';
  root.querySelectorAll(sel).forEach((e) => {
    if (visible(e) && !e.closest('.js-plotly-plot') && (e.textContent || e.value || '').trim()
        && e.getBoundingClientRect().width > 0) out.push(box(e, 'html', 'html'));
  });
  return out;
}
"""

# point labels may sit on their own markers and lines; what they must not cover is text
_SAME_KIND_OK = {("point label", "point label")}


def _intersect(a: dict[str, Any], b: dict[str, Any], slack: float) -> float:
    w = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return w * h if w > slack and h > slack else 0.0


def _nested(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """One HTML box inside the other (a label inside its own button) is not an overlap."""
    def inside(p: dict[str, Any], q: dict[str, Any]) -> bool:
        return (p["x"] >= q["x"] - 1 and p["y"] >= q["y"] - 1
                and p["x"] + p["w"] <= q["x"] + q["w"] + 1
                and p["y"] + p["h"] <= q["y"] + q["h"] + 1)
    return inside(a, b) or inside(b, a)


def overlaps(boxes: list[dict[str, Any]], slack: float = 1.0) -> list[str]:
    """Every pair of boxes in one group whose intersection is wider and taller than
    ``slack`` px, described for a failure message."""
    found = []
    frames = {b["group"]: b for b in boxes if b["kind"] == "figure"}
    for a in boxes:
        f = frames.get(a["group"])
        if f is None or a is f:
            continue
        # a text cut by the figure's edge (plotly draws no text outside its SVG)
        if (a["x"] < f["x"] - slack or a["y"] < f["y"] - slack
                or a["x"] + a["w"] > f["x"] + f["w"] + slack
                or a["y"] + a["h"] > f["y"] + f["h"] + slack):
            found.append(f"{a['group']}: {a['kind']} {a['text']!r} "
                         f"[{a['x']:.0f},{a['y']:.0f} {a['w']:.0f}×{a['h']:.0f}] leaves the "
                         f"figure [{f['x']:.0f},{f['y']:.0f} {f['w']:.0f}×{f['h']:.0f}]")
    boxes = [b for b in boxes if b["kind"] != "figure"]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a["group"] != b["group"] or (a["kind"], b["kind"]) in _SAME_KIND_OK:
                continue
            if a["kind"] == "html" and _nested(a, b):
                continue
            if _intersect(a, b, slack):
                found.append(f"{a['group']}: {a['kind']} {a['text']!r} "
                             f"[{a['x']:.0f},{a['y']:.0f} {a['w']:.0f}×{a['h']:.0f}] overlaps "
                             f"{b['kind']} {b['text']!r} "
                             f"[{b['x']:.0f},{b['y']:.0f} {b['w']:.0f}×{b['h']:.0f}]")
    return found
