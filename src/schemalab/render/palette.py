"""The explorer's colours: one scheme for the kinds of change a field goes through, one for
schema ids (files, snapshots). HTML badges and figures take them from here."""

from __future__ import annotations

#: a field's events, and "unchanged" for the versions in between
EVENT_COLORS = {
    "added": "#2da44e", "renamed": "#0969da", "retyped": "#bf8700",
    "nullability_changed": "#8250df", "commented": "#6e7781", "moved": "#6e7781",
    "dropped": "#cf222e", "unchanged": "#8c959f",
}
#: schema ids, cycling
SCHEMA_COLORS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B",
                 "#B279A2", "#FF9DA6", "#9D755D", "#BAB0AC"]


def event_color(kind: str) -> str:
    return EVENT_COLORS.get(kind, EVENT_COLORS["commented"])


def schema_color(schema_id: int | None) -> str:
    return "#cccccc" if schema_id is None else SCHEMA_COLORS[schema_id % len(SCHEMA_COLORS)]
