"""Notebook widgets for schemalab: history, lineage and snapshot views, the ALTER stepper.

    from schemalab.widgets import AlterStepper, Explorer, LineageView
    AlterStepper(wh, open("data/scenarios/flip226.sql").read())

Figures are plain plotly figures (``schemalab.widgets.figures``) that also render statically.
"""

from schemalab.widgets.figures import (
    diff_html,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)
from schemalab.widgets.views import (
    AlterStepper,
    Explorer,
    LineageView,
    SchemaHistoryView,
    SnapshotTreeView,
    TimeTravelView,
)

__all__ = ["AlterStepper", "Explorer", "LineageView", "SchemaHistoryView", "SnapshotTreeView",
           "TimeTravelView", "diff_html", "lineage_figure", "schema_timeline_figure",
           "snapshot_tree_figure"]
