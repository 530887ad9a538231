"""An Iceberg table's refs: the metadata's ``refs`` map as :class:`~schemalab.refs.Ref`\\ s,
and the snapshots each branch reaches through its parents.

Iceberg binds the schema of a ref's read as ``SnapshotUtil.schemaFor(table, ref)`` does: a
**tag** reads in the schema of its snapshot, a **branch** (``main`` too) in the table's
current schema, whatever schema its head was written with.

    >>> md = {"main": {"snapshot-id": 3, "type": "branch"},
    ...       "v1": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 86400000}}
    >>> parents = {1: None, 2: 1, 3: 2, 4: 2}
    >>> ancestry(parents, 3)
    [3, 2, 1]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schemalab.refs import MAIN, Ref


def ref_snapshot_id(ref: Mapping[str, Any]) -> int | None:
    """A ref's ``snapshot-id`` (None if it is missing or not an integer)."""
    sid = ref.get("snapshot-id")
    return sid if isinstance(sid, int) and not isinstance(sid, bool) else None


def ref_kind(ref: Mapping[str, Any]) -> str:
    return "tag" if str(ref.get("type", "branch")).lower() == "tag" else "branch"


def iceberg_refs(refs: Mapping[str, Mapping[str, Any]], current_schema_id: int,
                 schema_of_snapshot: Any) -> list[Ref]:
    """The metadata's refs, ``main`` first (without a snapshot if the table has none), then
    branches and tags by name. ``properties``
    keeps the ref's other keys as Iceberg writes them (``max-ref-age-ms``,
    ``max-snapshot-age-ms``, ``min-snapshots-to-keep``). ``schema_id`` is the schema a read of
    the ref binds: the table's current one for a branch, the snapshot's own for a tag
    (``schema_of_snapshot(id)``)."""
    out = []
    for name, r in refs.items():
        sid = ref_snapshot_id(r)
        kind = ref_kind(r)
        schema_id = current_schema_id if kind == "branch" or sid is None else \
            schema_of_snapshot(sid)
        props = {k: v for k, v in r.items() if k not in ("snapshot-id", "type")}
        out.append(Ref(name, "tag" if kind == "tag" else "branch", sid, schema_id, props))
    if MAIN not in refs:  # a table without snapshots: main is every table's branch
        out.append(Ref(MAIN, "branch", None, current_schema_id))
    return sorted(out, key=lambda r: (r.name != MAIN, r.kind != "branch", r.name))


def ancestry(parents: Mapping[int, int | None], head: int | None) -> list[int]:
    """``head`` and its ancestors, newest first, as far as the snapshots still in the
    metadata go (an expired parent ends the chain)."""
    out: list[int] = []
    seen: set[int] = set()
    cur = head
    while cur is not None and cur in parents and cur not in seen:
        out.append(cur)
        seen.add(cur)
        cur = parents[cur]
    return out
