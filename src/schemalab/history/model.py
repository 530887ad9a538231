"""The format-neutral history model: schema versions, field lineage, snapshot trees.

Whatever wrote a table (schemalab, Java Paimon, pypaimon, Iceberg), an adapter turns it into
a :class:`TableHistory`; widgets, rich HTML reprs and the CLI all draw on this one model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemalab import forms
from schemalab.errors import NotFoundError
from schemalab.history.lineage import diff
from schemalab.history.snapshots import SnapshotChange, SnapshotNode
from schemalab.history.versions import FieldLineage, SchemaDiff, SchemaVersion
from schemalab.refs import MAIN, Ref

TREE_CACHE = 64


@dataclass(frozen=True)
class ForkPoint:
    """Where a branch left main: the newest snapshot both have (same id and commit time),
    and the tags on it (a Paimon branch created from a tag forks at the tag's snapshot).
    ``snapshot_id`` is None for a branch that shares no snapshot with main (created empty,
    or main has expired the fork)."""

    branch: str
    snapshot_id: int | None
    time_millis: int | None
    tags: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.snapshot_id is None:
            return f"branch {self.branch}: shares no snapshot with main"
        on = f" (tag {', '.join(self.tags)})" if self.tags else ""
        return f"branch {self.branch} forked from main at snapshot {self.snapshot_id}{on}"


@dataclass(frozen=True)
class HistoryWarning:
    """Something in a table's history that does not add up, found by looking (not told by
    the table's metadata): ``rule`` names what (``file-schema-rewritten``: a data file whose
    columns are not those of the schema file its schema id names — the history was
    rewritten), ``snapshot_ids`` the snapshots it affects, ``path`` the file (relative to
    the table)."""

    rule: str
    message: str
    snapshot_ids: tuple[int, ...]
    path: str | None = None
    schema_id: int | None = None
    file_columns: tuple[str, ...] = ()
    schema_columns: tuple[str, ...] = ()

    def mark(self) -> str:
        """The short form a snapshot carrying it is marked with."""
        return f"rewritten: a file under schema {self.schema_id} holds other columns"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message,
                "snapshot_ids": list(self.snapshot_ids), "path": self.path,
                "schema_id": self.schema_id, "file_columns": list(self.file_columns),
                "schema_columns": list(self.schema_columns)}


@dataclass(frozen=True)
class TableHistory:
    """Everything the explorer shows of a table's past."""

    format: str
    location: str
    name: str
    schemas: tuple[SchemaVersion, ...]
    lineage: tuple[FieldLineage, ...]
    snapshots: tuple[SnapshotNode, ...]
    #: Iceberg partition specs and sort orders, as versions of their own
    other_versions: tuple[SchemaVersion, ...] = ()
    current_schema_id: int | None = None
    #: loads one snapshot's full tree (manifest lists, manifests, files) on demand; history
    #: itself reads only snapshot files, so it stays fast for 10,000 snapshots
    tree_loader: Any = field(default=None, compare=False, repr=False)
    #: what a run of snapshots changed (``ids -> [SnapshotChange]``), read from the format's
    #: own record of each commit (Paimon's delta manifest lists); None: from the trees
    changes_loader: Any = field(default=None, compare=False, repr=False)
    #: every branch and tag (``main`` first); see :mod:`schemalab.history.graph`
    refs: tuple[Ref, ...] = ()
    #: one history per branch ref (``main`` too), by branch name
    branches: Mapping[str, TableHistory] = field(default_factory=dict, repr=False)
    #: where each branch other than main left main
    forks: Mapping[str, ForkPoint] = field(default_factory=dict)
    #: snapshot id -> what became of a snapshot no branch reaches ("staged", "rolled back",
    #: "kept by a tag")
    marks: Mapping[int, str] = field(default_factory=dict)
    #: Iceberg's snapshot-log: (snapshot id, when it became current), oldest first; it
    #: differs from the parent lineage after a rollback
    snapshot_log: tuple[tuple[int, int], ...] = ()
    #: why the history is incomplete (a catalog that returned only referenced snapshots),
    #: and the snapshots it lacks; None: complete
    partial: str | None = None
    missing_snapshot_ids: tuple[int, ...] = ()
    #: finds the history's warnings (:meth:`warnings`) on demand: it reads manifests and
    #: data file footers, which the history itself does not
    warnings_loader: Any = field(default=None, compare=False, repr=False)
    _warnings: list[tuple[HistoryWarning, ...]] = field(default_factory=list, init=False,
                                                        compare=False, repr=False)
    #: snapshot id -> position in ``snapshots``, and the last trees loaded (see tree())
    _positions: dict[int, int] = field(default_factory=dict, init=False, compare=False,
                                       repr=False)
    _trees: dict[int, SnapshotNode] = field(default_factory=dict, init=False, compare=False,
                                            repr=False)

    def tree(self, snapshot_id: int) -> SnapshotNode:
        """Snapshot ``snapshot_id`` with its manifest lists, manifests and live files.

        Looked up by id in constant time (to_json() asks for every snapshot's tree: a scan
        per call made it quadratic), and the last :data:`TREE_CACHE` trees are kept, so a
        widget going back and forth does not re-read manifests."""
        s = self.snapshots[self.tree_position(snapshot_id)]
        if s.lists or s.live_files or self.tree_loader is None:
            return s
        node = self._trees.get(snapshot_id)
        if node is None:
            node = self.tree_loader(snapshot_id)
            if len(self._trees) >= TREE_CACHE:
                del self._trees[next(iter(self._trees))]
            self._trees[snapshot_id] = node
        return node

    def warnings(self) -> tuple[HistoryWarning, ...]:
        """What does not add up in this history (this branch's; each branch's history has
        its own): data files whose columns are not their schema's after a fast-forward or a
        schema rollback rewrote the schema files (see :mod:`schemalab.paimon.rewritten`).
        Found on the first call (it reads every snapshot's delta manifests and a data file
        footer per writer), then kept."""
        if not self._warnings:
            self._warnings.append(() if self.warnings_loader is None
                                  else tuple(self.warnings_loader()))
        return self._warnings[0]

    def warning_marks(self) -> dict[int, str]:
        """Snapshot id → the mark of the warnings affecting it (beside :attr:`marks`, which
        say what became of snapshots no branch reaches)."""
        out: dict[int, list[str]] = {}
        for w in self.warnings():
            for sid in w.snapshot_ids:
                if w.mark() not in out.setdefault(sid, []):
                    out[sid].append(w.mark())
        return {sid: "; ".join(m) for sid, m in sorted(out.items())}

    def changes(self, snapshot_ids: Sequence[int] | None = None) -> list[SnapshotChange]:
        """What each snapshot (default: every one) changed: files added and removed, and
        its live-file count. Reads each commit's own changes, so the cost and the size of the
        answer grow with the number of snapshots, not with snapshots × files."""
        wanted = [s.id for s in self.snapshots] if snapshot_ids is None else list(snapshot_ids)
        for sid in wanted:
            self.tree_position(sid)  # a KeyError naming the table for an unknown id
        if self.changes_loader is not None:
            return list(self.changes_loader(wanted))
        return self._changes_from_trees(wanted)

    def _changes_from_trees(self, wanted: Sequence[int]) -> list[SnapshotChange]:
        """Changes as the difference of a snapshot's live files and its parent's (Iceberg
        records no per-commit list of its own that is cheaper to read)."""
        out = []
        for sid in wanted:
            live = _live_with_deletes(self.tree(sid))
            parent = self.tree(sid).parent_id
            before: dict[str, Any] = {}
            if parent is not None and parent in self._positions:
                before = _live_with_deletes(self.tree(parent))
            out.append(SnapshotChange(
                sid, tuple(f for p, f in live.items() if p not in before),
                tuple(f for p, f in before.items() if p not in live), len(live)))
        return out

    def tree_position(self, snapshot_id: int) -> int:
        """Where snapshot ``snapshot_id`` is in ``snapshots`` (:class:`NotFoundError`, a
        KeyError, if it is not)."""
        if not self._positions and self.snapshots:
            self._positions.update((s.id, i) for i, s in enumerate(self.snapshots))
        pos = self._positions.get(snapshot_id)
        if pos is None:
            raise NotFoundError(f"Table {self.name} has no snapshot {snapshot_id}",
                                table=self.name, rule="snapshot-must-exist")
        return pos

    def schema(self, schema_id: int) -> SchemaVersion:
        for v in self.schemas:
            if v.id == schema_id:
                return v
        raise NotFoundError(f"Table {self.name} has no schema {schema_id}", table=self.name,
                            rule="schema-must-exist")

    def diff(self, old_id: int, new_id: int) -> SchemaDiff:
        return diff(self.schemas, old_id, new_id, table=self.name)

    def branch(self, name: str) -> TableHistory:
        """The history of branch ``name`` (``main``: this history if no branch was listed)."""
        if name in self.branches:
            return self.branches[name]
        if name == MAIN and not self.branches:
            return self
        have = ", ".join(self.branches) or "main"
        raise NotFoundError(f"Table {self.name} has no branch {name!r} (branches: {have})",
                            table=self.name, rule="ref-must-exist")

    def tags_at(self, snapshot_id: int) -> list[str]:
        """The names of the tags on snapshot ``snapshot_id``."""
        return [r.name for r in self.refs if r.kind == "tag" and r.snapshot_id == snapshot_id]

    def lineage_of(self, field_id: int) -> FieldLineage:
        for lin in self.lineage:
            if lin.field_id == field_id:
                return lin
        raise NotFoundError(f"Table {self.name} has no field {field_id}", table=self.name,
                            rule="field-must-exist")

    def to_json(self, snapshot_ids: Sequence[int] | None = None) -> dict[str, Any]:
        """The shape of ``schemalab inspect --json`` (the public contract) (of every
        snapshot, or of ``snapshot_ids``). ``refs`` lists every branch and tag;
        ``branches`` holds every branch but main in the top level's shapes (the top level is
        the table: main, and for Iceberg every snapshot the metadata keeps)."""
        out = {"format": self.format, "location": self.location,
               **self._shapes(snapshot_ids)}
        out["refs"] = [r.to_json() for r in self.refs]
        out["branches"] = {name: h._shapes(snapshot_ids) for name, h in self.branches.items()
                           if name != MAIN}
        # main's and every other branch's, each naming its branch
        out["warnings"] = [{"branch": name, **w.to_json()} for name, h in
                           [(MAIN, self), *((n, b) for n, b in self.branches.items()
                                            if n != MAIN)] for w in h.warnings()]
        if self.partial:
            out["partial"] = {"reason": self.partial,
                              "missing_snapshot_ids": list(self.missing_snapshot_ids)}
        return out

    def _shapes(self, snapshot_ids: Sequence[int] | None) -> dict[str, Any]:
        """The top-level shapes of ``to_json``: schemas, lineage, snapshots."""
        wanted = None if snapshot_ids is None else set(snapshot_ids)
        return {
            "schemas": [{
                "id": v.id, "time_millis": v.time_millis,
                "fields": [{"id": f.id, "name": f.full_name, "type": f.type,
                            "nullable": f.nullable} for f in v.fields],
            } for v in self.schemas],
            "lineage": [{
                "field_id": lin.field_id,
                "events": [{"schema_id": e.schema_id, "kind": e.kind, "name": e.name,
                            "type": e.type} for e in lin.events],
            } for lin in self.lineage],
            "snapshots": [{
                "id": s.id, "parent_id": s.parent_id, "schema_id": s.schema_id,
                "time_millis": s.time_millis, "kind": s.kind, "record_count": s.record_count,
                **({"operation": s.summary["operation"]} if "operation" in s.summary else {}),
                "files": [{"path": f.path, "schema_id": f.schema_id, "row_count": f.row_count,
                           "partition": {k: _jsonable(v) for k, v in f.partition.items()},
                           "bucket": f.bucket} for f in self.tree(s.id).live_files],
            } for s in self.snapshots if wanted is None or s.id in wanted],
        }

    def __repr__(self) -> str:
        return (f"TableHistory({self.name!r}, {self.format}, {len(self.schemas)} schema "
                f"version{'s' if len(self.schemas) != 1 else ''}, {len(self.lineage)} field"
                f"{'s' if len(self.lineage) != 1 else ''}, {len(self.snapshots)} snapshot"
                f"{'s' if len(self.snapshots) != 1 else ''})")

    def __str__(self) -> str:
        """The whole history as text, as ``schemalab inspect`` prints it."""
        return forms.text("history", self)

    def _repr_html_(self) -> str:
        return forms.html("history", self)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _live_with_deletes(node: SnapshotNode) -> dict[str, Any]:
    """A snapshot's live data files and its live delete files (Iceberg's position and
    equality delete files and deletion vectors, which ``live_files`` leaves out), by path."""
    live: dict[str, Any] = {f.path: f for f in node.live_files}
    for lst in node.lists:
        for m in lst.manifests:
            for f in m.files:
                kind = f.kind.split(" ", 1)
                if len(kind) == 2 and "delet" in kind[1] and kind[0] in ("ADDED", "EXISTING"):
                    live.setdefault(f.path, f)
    return live
