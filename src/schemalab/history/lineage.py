"""Lineage follows a field *id* through every schema version::

    >>> v0 = SchemaVersion(0, 1, (FieldInfo(1, "c", "STRING"),))
    >>> v1 = SchemaVersion(1, 2, ())
    >>> v2 = SchemaVersion(2, 3, (FieldInfo(2, "c", "STRING"),))
    >>> lin = compute_lineage([v0, v1, v2])
    >>> [(l.field_id, [e.kind for e in l.events]) for l in lin]
    [(1, ['added', 'dropped']), (2, ['added'])]
    >>> lin[1].name_reused_from
    (1,)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemalab.errors import NotFoundError
from schemalab.history.versions import (
    FieldEvent,
    FieldInfo,
    FieldLineage,
    SchemaDiff,
    SchemaVersion,
)


def field_events(old: SchemaVersion | None, new: SchemaVersion) -> tuple[FieldEvent, ...]:
    """The changes from ``old`` to ``new``, matched by field id (not by name)."""
    before = old.by_id() if old is not None else {}
    after = new.by_id()
    events: list[FieldEvent] = []
    old_order = [f.id for f in (old.fields if old else ()) if f.id in after]
    new_order = [f.id for f in new.fields if f.id in before]
    for f in new.fields:
        prev = before.get(f.id)
        if prev is None:
            events.append(FieldEvent(f.id, new.id, "added", f.full_name, f.type))
            continue
        if prev.full_name != f.full_name:
            events.append(FieldEvent(f.id, new.id, "renamed", f.full_name, f.type,
                                     old_name=prev.full_name))
        if prev.type != f.type:
            events.append(FieldEvent(f.id, new.id, "retyped", f.full_name, f.type,
                                     old_type=prev.type))
        if prev.nullable != f.nullable:
            events.append(FieldEvent(
                f.id, new.id, "nullability_changed", f.full_name,
                "NULL" if f.nullable else "NOT NULL",
                old_type="NULL" if prev.nullable else "NOT NULL"))
        if prev.comment != f.comment:
            events.append(FieldEvent(f.id, new.id, "commented", f.full_name, f.type))
        if prev.default != f.default:
            events.append(FieldEvent(f.id, new.id, "default_changed", f.full_name,
                                     f.default or "", old_type=prev.default))
    events.extend(_moves(old_order, new_order, after, new.id))
    for f in (old.fields if old else ()):
        if f.id not in after:
            events.append(FieldEvent(f.id, new.id, "dropped", f.full_name, f.type))
    return tuple(events)


def _moves(old_order: list[int], new_order: list[int], after: dict[int, FieldInfo],
           schema_id: int) -> list[FieldEvent]:
    """Fields whose position among their surviving siblings changed, kept minimal: the
    fields outside a longest common subsequence of the two orders are the ones that moved.

    Orders are compared per parent (top-level columns apart from each ROW's fields): moving
    a ROW column FIRST must report that column, not every column its nested fields outweigh
    in one flattened order."""
    if old_order == new_order:
        return []
    old_groups: dict[int | None, list[int]] = {}
    new_groups: dict[int | None, list[int]] = {}
    for i in old_order:
        old_groups.setdefault(after[i].parent_id, []).append(i)
    for i in new_order:
        new_groups.setdefault(after[i].parent_id, []).append(i)
    moved: set[int] = set()
    for parent, new_ids in new_groups.items():
        old_ids = old_groups.get(parent, [])
        if old_ids != new_ids:
            moved |= set(new_ids) - set(_lcs(old_ids, new_ids))
    return [FieldEvent(i, schema_id, "moved", after[i].full_name, after[i].type)
            for i in new_order if i in moved]


def _lcs(a: list[int], b: list[int]) -> list[int]:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if a[i] == b[j]
                           else max(table[i + 1][j], table[i][j + 1]))
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def with_events(versions: Sequence[SchemaVersion]) -> list[SchemaVersion]:
    """``versions`` (oldest first) with each one's events against its predecessor."""
    out: list[SchemaVersion] = []
    prev: SchemaVersion | None = None
    for v in versions:
        if v.kind != "schema":
            out.append(v)
            continue
        out.append(SchemaVersion(v.id, v.time_millis, v.fields, field_events(prev, v), v.kind,
                                 v.label, v.options, v.partition_keys, v.primary_keys))
        prev = v
    return out


def compute_lineage(versions: Sequence[SchemaVersion], *,
                    precomputed: bool = False) -> list[FieldLineage]:
    """Every field id's states and events across ``versions`` (oldest first), with name
    reuse ("c" as id 2, later "c" as id 5) and swaps flagged. Linear in the total number of
    fields over all versions. ``precomputed``: the versions already carry their events (from
    :func:`with_events`), so they are not computed a second time.

    A field's ``name_reused_from`` holds every other id that had one of its names before it
    took that name (by ADD or by RENAME). Two fields are ``swapped_with`` each other when at
    some version they hold names p and q and at a later one q and p — in one commit or
    through a temporary name over several (x→tmp, y→x, tmp→y): a name-based reader of old
    files gives each the other's data either way."""
    schema_versions = [v for v in versions if v.kind == "schema"]
    if not precomputed:
        schema_versions = with_events(schema_versions)
    states: dict[int, list[tuple[int, FieldInfo]]] = {}
    events: dict[int, list[FieldEvent]] = {}
    # name -> ids that held it, in the order they first took it
    name_owners: dict[str, list[int]] = {}
    # field id -> its names as runs [name, first, last] of indexes into schema_versions
    runs: dict[int, list[list[Any]]] = {}
    reused: dict[int, set[int]] = {}
    swaps: dict[int, set[int]] = {}
    for idx, v in enumerate(schema_versions):
        renamed: list[FieldInfo] = []
        for f in v.fields:
            name = f.full_name
            states.setdefault(f.id, []).append((v.id, f))
            field_runs = runs.setdefault(f.id, [])
            if field_runs and field_runs[-1][0] == name:
                field_runs[-1][2] = idx
                continue
            # f takes `name` here: added with it, or renamed (its own name or a parent's)
            if field_runs:
                renamed.append(f)
            field_runs.append([name, idx, idx])
            owners = name_owners.setdefault(name, [])
            earlier = [o for o in owners if o != f.id]
            if earlier:
                reused.setdefault(f.id, set()).update(earlier)
            if f.id not in owners:
                owners.append(f.id)
        for e in v.events:
            events.setdefault(e.field_id, []).append(e)
        if renamed:
            current = {f.id: f.full_name for f in v.fields}
            for f in renamed:
                for other in name_owners[f.full_name]:
                    other_name = current.get(other)
                    if (other == f.id or other_name is None
                            or not _held_together(runs[f.id], other_name,
                                                  runs[other], f.full_name)):
                        continue
                    swaps.setdefault(f.id, set()).add(other)
                    swaps.setdefault(other, set()).add(f.id)
    out = []
    for fid in sorted(states, key=lambda i: (states[i][0][0], i)):
        out.append(FieldLineage(fid, tuple(states[fid]), tuple(events.get(fid, ())),
                                tuple(sorted(reused.get(fid, ()))),
                                tuple(sorted(swaps.get(fid, ())))))
    return out


def _held_together(runs_a: list[list[Any]], name_a: str, runs_b: list[list[Any]],
                   name_b: str) -> bool:
    """Whether field A held ``name_a`` in some version where field B held ``name_b``."""
    return any(ra[0] == name_a and rb[0] == name_b and max(ra[1], rb[1]) <= min(ra[2], rb[2])
               for ra in runs_a for rb in runs_b)


def diff(versions: Sequence[SchemaVersion], old_id: int, new_id: int, *,
         table: str | None = None) -> SchemaDiff:
    by_id = {v.id: v for v in versions if v.kind == "schema"}
    if old_id not in by_id or new_id not in by_id:
        missing = old_id if old_id not in by_id else new_id
        raise NotFoundError(f"Table {table or '?'} has no schema version {missing}",
                            table=table, rule="schema-must-exist")
    return SchemaDiff(old_id, new_id, field_events(by_id[old_id], by_id[new_id]))


