"""The explorer's colours: one scheme for the kinds of change a field goes through, another for
schema ids (files, snapshots), and no colour in both.

Change kinds are saturated colours a reader learns once (added green, dropped red, renamed
blue, ...). Schema ids are ordered, so they get a sequential ramp of one hue that no change
kind uses: teal, light for old schema versions and dark for new ones.

    >>> set(EVENT_COLORS.values()) & {schema_color(i, 9) for i in range(10)}
    set()
    >>> schema_color(0, 4) != schema_color(4, 4)
    True
"""

from __future__ import annotations

#: a field's events, and "unchanged" for the versions in between
EVENT_COLORS = {
    "added": "#2da44e", "renamed": "#0969da", "retyped": "#d4a72c",
    "nullability_changed": "#8250df", "commented": "#6e7781", "moved": "#bc4c00",
    "default_changed": "#1b7c83", "dropped": "#cf222e", "unchanged": "#afb8c1",
}
#: how a change kind is named in legends and badges
EVENT_LABELS = {
    "added": "added", "renamed": "renamed", "retyped": "retyped",
    "nullability_changed": "nullability", "commented": "comment", "moved": "moved",
    "default_changed": "default", "dropped": "dropped",
}
#: connectors drawn between two fields' rows (lineage figure): neutral, so they never read as
#: a change kind
SWAP_COLOR = "#24292f"
REUSE_COLOR = "#8c959f"
#: the teal ramp of schema ids, oldest to newest
SCHEMA_RAMP = ("#a6dbd1", "#00494a")
#: entries that remove a file (a DELETE manifest entry), apart from every schema id
REMOVED_FILE_COLOR = "#d0d7de"
#: delete files and deletion vectors (Iceberg's position/equality deletes, Puffin deletion
#: vectors, Paimon's deletion-vector index files): a rose no change kind or schema id uses
DELETE_FILE_COLOR = "#f6d5e5"
#: other index files (Paimon's hash index)
INDEX_FILE_COLOR = "#eaeef2"


def event_color(kind: str) -> str:
    return EVENT_COLORS.get(kind, EVENT_COLORS["commented"])


def schema_color(schema_id: int | None, newest: int | None = None) -> str:
    """The colour of schema ``schema_id`` among ids ``0..newest`` (default: 0..9): a step along
    the teal ramp, so later versions are darker."""
    if schema_id is None:
        return "#cccccc"
    top = max(newest if newest is not None else 9, 1)
    f = min(max(schema_id, 0), top) / top
    lo, hi = _rgb(SCHEMA_RAMP[0]), _rgb(SCHEMA_RAMP[1])
    r, g, b = (round(a + (c - a) * f) for a, c in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def schema_text_color(schema_id: int | None, newest: int | None = None) -> str:
    """Black or white, whichever reads on :func:`schema_color`."""
    r, g, b = _rgb(schema_color(schema_id, newest))
    return "#ffffff" if 0.299 * r + 0.587 * g + 0.114 * b < 140 else "#1f2328"


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
