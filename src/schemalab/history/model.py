"""The format-neutral history model: schema versions, field lineage, snapshot trees.

Whatever wrote a table (schemalab, Java Paimon, pypaimon, Iceberg), an adapter turns it into
a :class:`TableHistory`; widgets, rich HTML reprs and the CLI all draw on this one model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemalab.history.lineage import diff
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import FieldLineage, SchemaDiff, SchemaVersion
from schemalab.render.html import render_history_html

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
