"""A table's history as the graph it is, for any format: its refs, one history per branch,
where each branch forked from main, tags as labels, and what became of the snapshots no
branch reaches (staged by write-audit-publish, rolled back, or kept only by a tag).

Everything here is computed from the :class:`~schemalab.format.TableLike` API (``t.refs``,
``t.branch(name).history()``) and the histories' snapshots, so every format that lists its
refs and opens its branches gets the same graph.

    >>> from schemalab.history.snapshots import SnapshotNode
    >>> def snap(i, parent, t, **summary):
    ...     return SnapshotNode(i, parent, 0, t, "APPEND", 1, summary=summary)
    >>> main = [snap(1, None, 10), snap(2, 1, 20)]
    >>> dev = [main[0], snap(3, 1, 30)]
    >>> fork_point(main, dev).snapshot_id
    1
    >>> mark_snapshots([*main, snap(4, 2, 40, **{"wap.id": "w"}), snap(5, 2, 50)], [main, dev],
    ...                {})
    {4: 'staged', 5: 'rolled back'}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemalab.history.model import ForkPoint, TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import FieldLineage
from schemalab.refs import MAIN, Ref

#: what became of a snapshot no branch reaches
STAGED = "staged"
#: a staged snapshot whose changes a later snapshot published (Iceberg's cherry-pick: that
#: snapshot's summary names the ``published-wap-id``)
PUBLISHED = "staged, then published"
ROLLED_BACK = "rolled back"
TAG_ONLY = "kept by a tag"


def fork_point(main: Sequence[SnapshotNode], branch: Sequence[SnapshotNode],
               name: str = "", tags: Mapping[int, Sequence[str]] | None = None) -> ForkPoint:
    """The newest snapshot ``branch`` shares with ``main``: same id and commit time (Paimon
    copies a tag's snapshot into the branch; Iceberg's branches share the table's
    snapshots)."""
    ours = {(s.id, s.time_millis) for s in main}
    common = [s for s in branch if (s.id, s.time_millis) in ours]
    if not common:
        return ForkPoint(name, None, None)
    last = max(common, key=lambda s: (s.time_millis or 0, s.id))
    return ForkPoint(name, last.id, last.time_millis, tuple((tags or {}).get(last.id, ())))


def _reached(snapshots: Sequence[SnapshotNode], head: int | None) -> set[int]:
    parents = {s.id: s.parent_id for s in snapshots}
    out: set[int] = set()
    cur = head
    while cur is not None and cur in parents and cur not in out:
        out.add(cur)
        cur = parents[cur]
    return out


def mark_snapshots(snapshots: Sequence[SnapshotNode],
                   branch_snapshots: Iterable[Sequence[SnapshotNode]],
                   tags: Mapping[str, int | None]) -> dict[int, str]:
    """What became of each of ``snapshots`` that no branch history holds (same id and
    commit time): ``"kept by a tag"`` (a tag's snapshot or one of its ancestors),
    ``"staged"`` (``wap.id`` in its summary: written by write-audit-publish and not on a
    branch), ``"staged, then published"`` (such a snapshot whose ``wap.id`` a later
    snapshot's ``published-wap-id`` names: cherry-picked into a branch) or ``"rolled
    back"``. Snapshots a branch holds are not listed."""
    on_branch = {(s.id, s.time_millis) for b in branch_snapshots for s in b}
    by_tag: set[int] = set()
    for head in tags.values():
        by_tag |= _reached(snapshots, head)
    published = {s.summary.get("published-wap-id") for s in snapshots} - {None}
    marks: dict[int, str] = {}
    for s in snapshots:
        if (s.id, s.time_millis) in on_branch:
            continue
        if s.id in by_tag:
            marks[s.id] = TAG_ONLY
        elif "wap.id" in s.summary:
            marks[s.id] = PUBLISHED if s.summary["wap.id"] in published else STAGED
        else:
            marks[s.id] = ROLLED_BACK
    return marks


def with_refs(history: TableHistory, table: Any, *, branches: bool = True) -> TableHistory:
    """``history`` (the table's own) with its refs, and with ``branches``: one history per
    branch (``table.branch(name).history()``; ``main`` is the table's own history when the
    branch is the table), fork points, tags and snapshot marks."""
    refs: list[Ref] = list(table.refs)
    if not branches:
        return dataclasses.replace(history, refs=tuple(refs))
    per_branch: dict[str, TableHistory] = {}
    for r in refs:
        if r.kind != "branch":
            continue
        bt = table.branch(r.name)
        per_branch[r.name] = history if bt is table else bt.history()
    tags: dict[int, list[str]] = {}
    for r in refs:
        if r.kind == "tag" and r.snapshot_id is not None:
            tags.setdefault(r.snapshot_id, []).append(r.name)
    main = per_branch.get(MAIN)
    forks = {}
    if main is not None:
        forks = {name: fork_point(main.snapshots, h.snapshots, name, tags)
                 for name, h in per_branch.items() if name != MAIN}
    marks = mark_snapshots(history.snapshots, [h.snapshots for h in per_branch.values()],
                           {r.name: r.snapshot_id for r in refs if r.kind == "tag"})
    # marks the format's adapter set (a Paimon snapshot only a tag keeps) stay
    return dataclasses.replace(history, refs=tuple(refs), branches=per_branch, forks=forks,
                               marks={**history.marks, **marks})


def table_history(table: Any) -> TableHistory:
    """``table.history()`` as a graph: with :func:`with_refs` unless the format's history
    already carries its refs."""
    h: TableHistory = table.history()
    return h if h.refs else with_refs(h, table)


@dataclass(frozen=True)
class CrossLineage:
    """One field id on every branch that has it: its lineage there and its name at the
    branch's newest schema (None: dropped there). ``diverged``: the branches name it
    differently (renamed apart, or dropped on some)."""

    field_id: int
    on: Mapping[str, FieldLineage]
    names: Mapping[str, str | None]

    @property
    def diverged(self) -> bool:
        return len(set(self.names.values())) > 1


def _name_now(lin: FieldLineage) -> str | None:
    if lin.events and lin.events[-1].kind == "dropped":
        return None
    return lin.states[-1][1].full_name if lin.states else None


def lineage_across(history: TableHistory) -> list[CrossLineage]:
    """Every field id's lineage on every branch (the table's own lineage when the history
    has no branches), ordered by field id."""
    per = dict(history.branches) or {MAIN: history}
    ids = sorted({lin.field_id for h in per.values() for lin in h.lineage})
    out = []
    for fid in ids:
        on = {name: lin for name, h in per.items() for lin in h.lineage if lin.field_id == fid}
        out.append(CrossLineage(fid, on, {name: _name_now(lin) for name, lin in on.items()}))
    return out
