"""Table metadata JSON as Java's ``TableMetadataParser`` writes it (keys in Java's order,
v1 files also carrying the deprecated ``schema`` and ``partition-spec``), and the edits a
commit makes to it: a new snapshot, a new current schema, a new partition spec."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from schemalab.errors import NotFoundError, SchemaLabError
from schemalab.iceberg.metadata import IcebergSchema, PartitionField
from schemalab.iceberg.write.schema_json import schema_json
from schemalab.version import __version__

#: Java's ``PartitionSpec.PARTITION_DATA_ID_START - 1``: last-partition-id of an unpartitioned
#: table
NO_PARTITION_ID = 999
#: what Java 1.4+ puts in every new table's properties
DEFAULT_PROPERTIES = {"write.parquet.compression-codec": "zstd"}


def now_ms() -> int:
    return int(time.time() * 1000)


def new_snapshot_id() -> int:
    """A random positive long, as Java's ``SnapshotIdGeneratorUtil`` makes them."""
    u = uuid.uuid4().int
    return ((u >> 64) ^ (u & ((1 << 64) - 1))) & ((1 << 63) - 1)


def spec_json(spec_id: int, fields: Sequence[PartitionField]) -> dict[str, Any]:
    return {"spec-id": spec_id, "fields": [
        {"name": f.name, "transform": f.transform, "source-id": f.source_ids[0],
         "field-id": f.field_id} for f in fields]}


def new_table_metadata(location: str, schema: IcebergSchema, last_column_id: int,
                       partition_fields: Sequence[PartitionField], version: int,
                       properties: dict[str, str]) -> dict[str, Any]:
    """The first metadata file of a new table (no snapshot yet)."""
    sj = schema_json(schema)
    spec = spec_json(0, partition_fields)
    last_pid = max((f.field_id for f in partition_fields), default=NO_PARTITION_ID)
    d: dict[str, Any] = {"format-version": version, "table-uuid": str(uuid.uuid4()),
                         "location": location}
    if version >= 2:
        d["last-sequence-number"] = 0
    d["last-updated-ms"] = now_ms()
    d["last-column-id"] = last_column_id
    if version == 1:
        d["schema"] = sj
    d["current-schema-id"] = schema.schema_id
    d["schemas"] = [sj]
    if version == 1:
        d["partition-spec"] = spec["fields"]
    d["default-spec-id"] = 0
    d["partition-specs"] = [spec]
    d["last-partition-id"] = last_pid
    d["default-sort-order-id"] = 0
    d["sort-orders"] = [{"order-id": 0, "fields": []}]
    d["properties"] = {**DEFAULT_PROPERTIES, **properties}
    d["current-snapshot-id"] = -1
    if version >= 3:
        d["next-row-id"] = 0
    d["refs"] = {}
    d["snapshots"] = []
    d["statistics"] = []
    d["partition-statistics"] = []
    d["snapshot-log"] = []
    d["metadata-log"] = []
    return d


def engine_summary() -> dict[str, str]:
    """Who committed a snapshot, in the summary keys Iceberg gives an engine
    (``EnvironmentContext.ENGINE_NAME`` / ``ENGINE_VERSION``; Spark's ``SparkCatalog`` puts
    ``spark`` and its version there). Java's library adds ``iceberg-version``
    (``"Apache Iceberg 1.12.0 (commit ..)"``, ``IcebergBuild.fullVersion``) to every
    snapshot it produces: that names a build of Java's library, which schemalab is not, so
    schemalab writes its own name here instead (docs/compatibility.md)."""
    return {"engine-name": "schemalab", "engine-version": __version__}


def add_snapshot(d: dict[str, Any], snapshot: dict[str, Any], branch: str = "main") -> None:
    """Add ``snapshot`` and make it ``branch``'s head (main: the current snapshot too); its
    summary ends with :func:`engine_summary`, as Java's ends with its environment's keys."""
    snapshot.setdefault("summary", {}).update(engine_summary())
    d.setdefault("snapshots", []).append(snapshot)
    sid = snapshot["snapshot-id"]
    if "sequence-number" in snapshot:
        d["last-sequence-number"] = snapshot["sequence-number"]
    refs = d.setdefault("refs", {})  # the branch keeps its retention (builderFrom)
    refs[branch] = {**refs.get(branch, {}), "snapshot-id": sid, "type": "branch"}
    if branch == "main":
        d["current-snapshot-id"] = sid
        d.setdefault("snapshot-log", []).append({"timestamp-ms": snapshot["timestamp-ms"],
                                                 "snapshot-id": sid})


def branch_head(d: dict[str, Any], branch: str, table: str) -> int | None:
    """The snapshot a commit to ``branch`` builds on (None: main of a table without
    snapshots). Another branch must exist and be a branch, as Iceberg's SparkTable and
    ``SnapshotProducer.targetBranch`` require."""
    ref = d.get("refs", {}).get(branch)
    if branch == "main" and ref is None:
        cur = d.get("current-snapshot-id")
        return cur if isinstance(cur, int) and cur != -1 else None
    if ref is None:
        raise NotFoundError(f"Cannot use branch (does not exist): {branch} (table {table})",
                            table=table, rule="ref-must-exist")
    if ref.get("type", "branch") != "branch":
        raise SchemaLabError(f"{branch} is a tag, not a branch. Tags cannot be targets for "
                             f"producing snapshots (table {table})", table=table,
                             rule="iceberg-write-target")
    return int(ref["snapshot-id"])


def set_current_schema(d: dict[str, Any], schema: IcebergSchema, last_column_id: int) -> None:
    """Add ``schema`` (or reuse an equal one, as Java does) and make it current."""
    sj = schema_json(schema)
    for existing in d.get("schemas", []):
        same = {k: v for k, v in existing.items() if k != "schema-id"}
        if same == {k: v for k, v in sj.items() if k != "schema-id"}:
            d["current-schema-id"] = existing["schema-id"]
            break
    else:
        d["schemas"].append(sj)
        d["current-schema-id"] = schema.schema_id
    d["last-column-id"] = max(int(d.get("last-column-id", 0)), last_column_id)
    if d.get("format-version") == 1:
        d["schema"] = next(s for s in d["schemas"]
                           if s["schema-id"] == d["current-schema-id"])


def set_default_spec(d: dict[str, Any], fields: Sequence[PartitionField]) -> int:
    """Add a spec of ``fields`` (or reuse an equal one) and make it the default; its id."""
    key = [(f.name, f.transform, f.source_ids[0], f.field_id) for f in fields]
    for sp in d.get("partition-specs", []):
        if [(f["name"], f["transform"], f["source-id"], f["field-id"])
                for f in sp["fields"]] == key:
            d["default-spec-id"] = sp["spec-id"]
            break
    else:
        new_id = max((sp["spec-id"] for sp in d.get("partition-specs", [])), default=-1) + 1
        d["partition-specs"].append(spec_json(new_id, fields))
        d["default-spec-id"] = new_id
    d["last-partition-id"] = max([int(d.get("last-partition-id", NO_PARTITION_ID)),
                                  *(f.field_id for f in fields)])
    if d.get("format-version") == 1:
        d["partition-spec"] = next(sp["fields"] for sp in d["partition-specs"]
                                   if sp["spec-id"] == d["default-spec-id"])
    return int(d["default-spec-id"])
