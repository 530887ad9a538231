"""The format-neutral history model: schema versions, field lineage, snapshot trees.

Whatever wrote a table (schemalab, Java Paimon, pypaimon, Iceberg), an adapter turns it into
a :class:`TableHistory`; widgets, rich HTML reprs and the CLI all draw on this one model.

Lineage follows a field *id* through every schema version::

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

import contextlib
import gc
import html
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

EventKind = Literal["added", "renamed", "retyped", "nullability_changed", "commented", "moved",
                    "dropped"]
EVENT_KINDS: tuple[EventKind, ...] = ("added", "renamed", "retyped", "nullability_changed",
                                      "commented", "moved", "dropped")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a history is built: tens of thousands
    of small objects that all stay alive, whose collector passes freed nothing and made the
    cost grow faster than the history (bench/HISTORY_SCALE.md). Reference counting still
    frees everything that is dropped."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class FieldInfo:
    """A field in one schema version; nested fields have a dotted ``path`` and a parent."""

    id: int
    name: str
    type: str
    nullable: bool = True
    comment: str | None = None
    path: tuple[str, ...] = ()
    parent_id: int | None = None
    position: int = 0

    @property
    def full_name(self) -> str:
        return ".".join(self.path) if self.path else self.name


@dataclass(frozen=True)
class FieldEvent:
    """What happened to one field in one schema version."""

    field_id: int
    schema_id: int
    kind: EventKind
    name: str
    type: str
    old_name: str | None = None
    old_type: str | None = None

    def describe(self) -> str:
        n = f"`{self.name}`"
        if self.kind == "added":
            return f"added {n} {self.type}"
        if self.kind == "renamed":
            return f"renamed `{self.old_name}` → {n}"
        if self.kind == "retyped":
            return f"{n}: {self.old_type} → {self.type}"
        if self.kind == "nullability_changed":
            return f"{n}: {self.old_type} → {self.type}"
        if self.kind == "commented":
            return f"{n}: comment changed"
        if self.kind == "moved":
            return f"{n} moved"
        return f"dropped {n}"


@dataclass(frozen=True)
class SchemaVersion:
    """One schema version with the events that produced it (computed by field id)."""

    id: int
    time_millis: int | None
    fields: tuple[FieldInfo, ...]
    events: tuple[FieldEvent, ...] = ()
    #: "schema", or "partition-spec" / "sort-order" for Iceberg's other versioned things
    kind: str = "schema"
    label: str = ""
    options: dict[str, str] = field(default_factory=dict)
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()

    @property
    def top_level(self) -> tuple[FieldInfo, ...]:
        return tuple(f for f in self.fields if f.parent_id is None)

    def by_id(self) -> dict[int, FieldInfo]:
        return {f.id: f for f in self.fields}


@dataclass(frozen=True)
class FieldLineage:
    """A field id's life: its name/type in every version where it exists, and its events."""

    field_id: int
    states: tuple[tuple[int, FieldInfo], ...]
    events: tuple[FieldEvent, ...]
    #: ids of *other* fields that used one of this field's names before it
    name_reused_from: tuple[int, ...] = ()
    #: ids of fields this one swapped names with
    swapped_with: tuple[int, ...] = ()

    @property
    def names(self) -> list[str]:
        out: list[str] = []
        for _, f in self.states:
            if not out or out[-1] != f.full_name:
                out.append(f.full_name)
        return out

    @property
    def alive(self) -> bool:
        return not self.events or self.events[-1].kind != "dropped"


@dataclass(frozen=True)
class SchemaDiff:
    old: int
    new: int
    events: tuple[FieldEvent, ...]

    def by_kind(self, kind: EventKind) -> list[FieldEvent]:
        return [e for e in self.events if e.kind == kind]


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


def diff(versions: Sequence[SchemaVersion], old_id: int, new_id: int) -> SchemaDiff:
    by_id = {v.id: v for v in versions if v.kind == "schema"}
    if old_id not in by_id or new_id not in by_id:
        raise KeyError(f"no schema version {old_id if old_id not in by_id else new_id}")
    return SchemaDiff(old_id, new_id, field_events(by_id[old_id], by_id[new_id]))


# --------------------------------------------------------------------------------------------
# Snapshot trees
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileNode:
    """A data file entry in a manifest: ADD or DELETE, with its stats under today's names."""

    path: str
    kind: str
    schema_id: int
    row_count: int
    partition: dict[str, Any] = field(default_factory=dict)
    bucket: int | None = None
    level: int | None = None
    file_size: int = 0
    #: today's column name → (min, max, null count), decoded from the file's own stats
    stats: dict[str, tuple[Any, Any, int | None]] = field(default_factory=dict)
    min_key: tuple[Any, ...] | None = None
    max_key: tuple[Any, ...] | None = None
    min_sequence_number: int | None = None
    max_sequence_number: int | None = None


@dataclass(frozen=True)
class ManifestNode:
    name: str
    added: int
    deleted: int
    schema_id: int | None
    files: tuple[FileNode, ...]


@dataclass(frozen=True)
class ManifestListNode:
    kind: str  # "base", "delta", "changelog" (Paimon) or "manifest-list" (Iceberg)
    name: str
    manifests: tuple[ManifestNode, ...]


@dataclass(frozen=True)
class SnapshotNode:
    id: int
    parent_id: int | None
    schema_id: int | None
    time_millis: int | None
    kind: str
    record_count: int | None
    lists: tuple[ManifestListNode, ...] = ()
    live_files: tuple[FileNode, ...] = ()
    summary: dict[str, Any] = field(default_factory=dict)


#: how many loaded snapshot trees a TableHistory keeps
TREE_CACHE = 64


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
        if not self._positions and self.snapshots:
            self._positions.update((s.id, i) for i, s in enumerate(self.snapshots))
        pos = self._positions.get(snapshot_id)
        if pos is None:
            raise KeyError(f"{self.name} has no snapshot {snapshot_id}")
        s = self.snapshots[pos]
        if s.lists or s.live_files or self.tree_loader is None:
            return s
        node = self._trees.get(snapshot_id)
        if node is None:
            node = self.tree_loader(snapshot_id)
            if len(self._trees) >= TREE_CACHE:
                del self._trees[next(iter(self._trees))]
            self._trees[snapshot_id] = node
        return node

    def schema(self, schema_id: int) -> SchemaVersion:
        for v in self.schemas:
            if v.id == schema_id:
                return v
        raise KeyError(f"{self.name} has no schema {schema_id}")

    def diff(self, old_id: int, new_id: int) -> SchemaDiff:
        return diff(self.schemas, old_id, new_id)

    def lineage_of(self, field_id: int) -> FieldLineage:
        for lin in self.lineage:
            if lin.field_id == field_id:
                return lin
        raise KeyError(f"{self.name} has no field {field_id}")

    def to_json(self) -> dict[str, Any]:
        """The shape ARCHITECTURE.md fixes for ``schemalab inspect --json``."""
        return {
            "format": self.format,
            "location": self.location,
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
                "files": [{"path": f.path, "schema_id": f.schema_id, "row_count": f.row_count,
                           "partition": {k: _jsonable(v) for k, v in f.partition.items()},
                           "bucket": f.bucket} for f in self.tree(s.id).live_files],
            } for s in self.snapshots],
        }

    def _repr_html_(self) -> str:
        return render_history_html(self)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def flatten_fields(fields: Iterable[Any], *, type_text: Any, path: tuple[str, ...] = (),
                   parent: int | None = None) -> list[FieldInfo]:
    """FieldInfos of Paimon ``DataField``s, nested ROW fields (also inside ARRAY/MAP)
    included with dotted paths. ``type_text(data_type)`` renders a type."""
    from schemalab.types import ArrayType, MapType, MultisetType, RowType

    out: list[FieldInfo] = []
    for pos, f in enumerate(fields):
        p = (*path, f.name)
        out.append(FieldInfo(f.id, f.name, type_text(f.type), f.type.nullable, f.description,
                             p if path else (), parent, pos))
        inner = f.type
        while isinstance(inner, ArrayType | MultisetType | MapType):
            inner = inner.value if isinstance(inner, MapType) else inner.element
        if isinstance(inner, RowType):
            out.extend(flatten_fields(inner.fields, type_text=type_text, path=p, parent=f.id))
    return out


# --------------------------------------------------------------------------------------------
# HTML (every name escaped)
# --------------------------------------------------------------------------------------------


def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


_EVENT_COLORS = {"added": "#1a7f37", "renamed": "#0969da", "retyped": "#9a6700",
                 "nullability_changed": "#8250df", "commented": "#57606a", "moved": "#57606a",
                 "dropped": "#cf222e"}


def event_badge(ev: FieldEvent) -> str:
    color = _EVENT_COLORS.get(ev.kind, "#57606a")
    return (f'<span class="sl-ev sl-{e(ev.kind)}" style="color:{color}">'
            f"{e(ev.describe())}</span>")


def render_history_html(h: TableHistory) -> str:
    rows = []
    for v in h.schemas:
        evs = ", ".join(event_badge(ev) for ev in v.events) or "—"
        rows.append(f"<tr><td>{v.id}</td><td>{e(_fmt_time(v.time_millis))}</td>"
                    f"<td>{len(v.top_level)}</td><td>{evs}</td></tr>")
    lin_rows = []
    for lin in h.lineage:
        flags = []
        if lin.name_reused_from:
            flags.append("name reused from field " + ", ".join(map(str, lin.name_reused_from)))
        if lin.swapped_with:
            flags.append("swapped with field " + ", ".join(map(str, lin.swapped_with)))
        lin_rows.append(
            f"<tr><td>{lin.field_id}</td><td>{' → '.join(e(n) for n in lin.names)}</td>"
            f"<td>{'; '.join(event_badge(ev) for ev in lin.events)}</td>"
            f"<td>{e('; '.join(flags))}</td></tr>")
    snap_rows = [f"<tr><td>{s.id}</td><td>{'' if s.schema_id is None else s.schema_id}</td>"
                 f"<td>{e(s.kind)}</td><td>{'' if s.record_count is None else s.record_count}"
                 f"</td><td>{len(s.live_files)}</td></tr>" for s in h.snapshots]
    return (
        f'<div class="sl-history"><h4>{e(h.name)} <small>({e(h.format)})</small></h4>'
        "<table><thead><tr><th>schema</th><th>time</th><th>columns</th><th>changes</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        "<table><thead><tr><th>field id</th><th>names</th><th>events</th><th>flags</th></tr>"
        f"</thead><tbody>{''.join(lin_rows)}</tbody></table>"
        "<table><thead><tr><th>snapshot</th><th>schema</th><th>kind</th><th>rows</th>"
        f"<th>live files</th></tr></thead><tbody>{''.join(snap_rows)}</tbody></table></div>")


def _fmt_time(millis: int | None) -> str:
    import datetime as dt

    if millis is None or millis <= 0:
        return ""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
