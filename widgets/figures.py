"""Plain plotly figures built from the history model, and the diff's HTML.

They are ``go.Figure`` values, so they render statically in nbconvert and JupyterLab and
compare equal run to run under nbval; the widgets in :mod:`schemalab.widgets.views` only wire
them to controls. Each figure fills its cell's width.

- :func:`lineage_figure`: one row per field id across every schema version
  (:mod:`schemalab.widgets.lineage_figure`);
- :func:`schema_timeline_figure`: versions and snapshots on one axis, and what each version
  changed (:mod:`schemalab.widgets.timeline_figure`);
- :func:`branch_lanes_figure`: one lane per branch, forks, tags, and the snapshots no branch
  reaches (:mod:`schemalab.widgets.lanes_figure`);
- :func:`snapshot_tree_figure`: a snapshot → its manifest lists → manifests → files
  (:mod:`schemalab.widgets.tree_figure`).
"""

from __future__ import annotations

import html

from schemalab.widgets.lanes_figure import branch_lanes_figure
from schemalab.widgets.lineage_figure import lineage_figure
from schemalab.widgets.timeline_figure import schema_timeline_figure
from schemalab.widgets.tree_figure import snapshot_tree_figure

from schemalab.history.versions import FieldEvent, SchemaDiff
from schemalab.render.palette import EVENT_COLORS

__all__ = ["branch_lanes_figure", "diff_html", "lineage_figure", "schema_timeline_figure",
           "snapshot_tree_figure"]


def _without_kind(ev: FieldEvent) -> str:
    """``ev.describe()`` without a leading kind word, which the badge before it shows."""
    text = ev.describe()
    return text[len(ev.kind) + 1:] if text.startswith(ev.kind + " ") else text


def diff_html(d: SchemaDiff) -> str:
    """A schema diff as an HTML list, every name escaped."""
    if not d.events:
        return f"<p>schema {d.old} → {d.new}: no field changes</p>"
    items = "".join(
        f"<li><span style='color:{EVENT_COLORS.get(ev.kind, '#57606a')};font-weight:600'>"
        f"{html.escape(ev.kind.replace('_', ' '))}</span> {html.escape(_without_kind(ev))} "
        f"<small style='color:#57606a'>(field {ev.field_id})</small></li>" for ev in d.events)
    return f"<p><b>schema {d.old} → {d.new}</b></p><ul class='sl-diff'>{items}</ul>"
