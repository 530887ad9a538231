"""Notebook widgets for schemalab: history, lineage and snapshot views, the ALTER stepper.

    from schemalab.widgets import AlterStepper, Explorer, LineageView
    AlterStepper(wh, open("data/scenarios/flip226.sql").read())

Figures are plain plotly figures (``schemalab.widgets.figures``) that also render statically
and fill the cell's width; the widgets wire them to controls, and each shows a readable
static view where no kernel runs (GitHub, nbconvert).
"""

from schemalab.widgets.figures import (
    diff_html,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)
from schemalab.widgets.stepper import AlterStepper
from schemalab.widgets.views import (
    Explorer,
    LineageView,
    SchemaHistoryView,
    SnapshotTreeView,
    TimeTravelView,
)

__all__ = ["AlterStepper", "Explorer", "LineageView", "SchemaHistoryView", "SnapshotTreeView",
           "TimeTravelView", "diff_html", "lineage_figure", "schema_timeline_figure",
           "snapshot_tree_figure"]
