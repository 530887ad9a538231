"""How ``open_table(path).history()`` scales with schema versions and snapshots.

Generates Paimon tables with 1/4, 1/2 and all of 1,000 schema versions and 10,000 snapshots
(a mix of ADD / RENAME (sometimes back to an older name) / DROP / retype / MOVE, ten
snapshots per schema version), times ``open_table(path).history()`` — which reads every
schema and snapshot file and computes each version's events and every field's lineage —
as the median of 5 runs, and prints the cost per version and per snapshot at each size, so
linear growth shows as a flat per-item cost. For comparison it writes an Iceberg metadata
JSON with the same schemas and as many snapshots and times pyiceberg's
``StaticTable.from_metadata`` plus a walk over every schema's fields.

    .venv/bin/python bench/history_scale.py            # 1,000 versions / 10,000 snapshots
    .venv/bin/python bench/history_scale.py --quick    # 200 / 2,000, for a smoke run

Files are written with plain ``open()`` (the exact bytes ``SchemaManager.commit`` and
``SnapshotManager.commit`` would write, but without their per-file fsync, which alone costs
~5 ms a file here). Every snapshot points at the same two tiny manifest lists: history()
reads snapshot JSON only; a snapshot's manifest tree is read when ``tree(id)`` is asked for.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from schemalab.open import open_table
from schemalab.paimon.binaryrow import EMPTY_ROW
from schemalab.paimon.manifest import DataFileMeta, FileKind, ManifestEntry
from schemalab.paimon.manifest_codec import manifest_file_meta, write_manifest, write_manifest_list
from schemalab.paimon.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from schemalab.schema.apply import apply_changes, new_table_schema
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RenameColumn,
    SchemaChange,
    UpdateColumnPosition,
    UpdateColumnType,
)
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import (
    BIGINT,
    INT,
    STRING,
    AtomicType,
    DataField,
    DataType,
    RowType,
)

RUNS = 5
SNAPSHOTS_PER_VERSION = 10
T0 = 1_700_000_000_000


# --------------------------------------------------------------------------------------------
# A random but reproducible schema history
# --------------------------------------------------------------------------------------------


def schema_history(versions: int, seed: int = 7) -> list[TableSchema]:
    """``versions`` schemas: schema 0 with 20 columns (one a ROW), then one change each."""
    rng = random.Random(seed)
    cols = [ColumnSpec("id", BIGINT(False))]
    cols += [ColumnSpec(f"c{i}", INT() if i % 2 else STRING()) for i in range(1, 19)]
    cols.append(ColumnSpec("addr", RowType((DataField(0, "city", STRING()),
                                            DataField(1, "zip", INT())), True)))
    schemas = [new_table_schema(cols, primary_keys=["id"], table="bench.t", time_millis=T0)]
    old_names: dict[int, list[str]] = {}  # field id -> names it had before
    counter = 0
    while len(schemas) < versions:
        s = schemas[-1]
        change = _random_change(rng, s, old_names, counter)
        counter += 1
        if change is None:
            continue
        new = apply_changes(s, [change], table="bench.t", time_millis=T0 + len(schemas) * 1000)
        if isinstance(change, RenameColumn) and len(change.path) == 1:
            f = s.field(change.path[0])
            assert f is not None
            old_names.setdefault(f.id, []).append(f.name)
        schemas.append(new)
    return schemas


def _random_change(rng: random.Random, s: TableSchema, old_names: dict[int, list[str]],
                   counter: int) -> SchemaChange | None:
    movable = [f for f in s.fields if f.name != "id"]
    names = {f.name for f in s.fields}
    roll = rng.random()
    n = len(s.fields)
    if roll < (0.35 if n < 25 else 0.15):
        return AddColumn((f"n{counter}",), INT() if rng.random() < 0.6 else STRING())
    if roll < 0.55:
        f = rng.choice(movable)
        back = [x for x in old_names.get(f.id, []) if x not in names]
        if back and rng.random() < 0.3:  # rename back to a name this field had before
            return RenameColumn((f.name,), rng.choice(back))
        return RenameColumn((f.name,), f"r{counter}")
    if roll < 0.75:
        droppable = [f for f in movable if f.name != "addr"]
        return DropColumn((rng.choice(droppable).name,)) if n > 12 else None
    if roll < 0.9:
        ints = [f for f in movable if isinstance(f.type, AtomicType) and f.type.sql() == "INT"]
        if not ints:
            return None
        return UpdateColumnType((rng.choice(ints).name,), BIGINT())
    f = rng.choice([f for f in s.fields[1:]])  # not the first: moving it FIRST is refused
    return UpdateColumnPosition(Move(f.name, "FIRST"))


# --------------------------------------------------------------------------------------------
# Writing the Paimon table
# --------------------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_paimon_table(path: str, schemas: list[TableSchema], snapshots: int) -> None:
    os.makedirs(os.path.join(path, "schema"))
    os.makedirs(os.path.join(path, "snapshot"))
    os.makedirs(os.path.join(path, "manifest"))
    for s in schemas:
        _write(os.path.join(path, "schema", f"schema-{s.id}"), s.to_json("java"))
    manifest_dir = os.path.join(path, "manifest")
    lists = []
    for kind in ("base", "delta"):
        entry = ManifestEntry(FileKind.ADD, EMPTY_ROW, 0, 1, DataFileMeta(
            f"data-bench-{kind}-0.parquet", 1000, 10, schema_id=0))
        m_name = f"manifest-bench-{kind}-0"
        size = write_manifest(os.path.join(manifest_dir, m_name), [entry])
        meta = manifest_file_meta(m_name, size, [entry], [])
        l_name = f"manifest-list-bench-{kind}-0"
        lists.append((l_name, write_manifest_list(os.path.join(manifest_dir, l_name), [meta])))
    (base, base_size), (delta, delta_size) = lists
    per_version = max(1, snapshots // len(schemas))
    for i in range(1, snapshots + 1):
        snap = Snapshot(
            id=i, schema_id=min((i - 1) // per_version, len(schemas) - 1),
            base_manifest_list=base, delta_manifest_list=delta, commit_user="bench",
            commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind="APPEND",
            time_millis=T0 + i * 100, total_record_count=20 * i, delta_record_count=20,
            version=3, uuid=str(uuid.UUID(int=i)), base_manifest_list_size=base_size,
            delta_manifest_list_size=delta_size, writer_version="schemalab-bench")
        _write(os.path.join(path, "snapshot", f"snapshot-{i}"), snap.to_json())
    _write(os.path.join(path, "snapshot", "LATEST"), str(snapshots))
    _write(os.path.join(path, "snapshot", "EARLIEST"), "1")


# --------------------------------------------------------------------------------------------
# The comparable Iceberg metadata file
# --------------------------------------------------------------------------------------------


def _iceberg_type(t: DataType) -> Any:
    if isinstance(t, RowType):
        return {"type": "struct", "fields": [_iceberg_field(f) for f in t.fields]}
    name = t.sql().replace(" NOT NULL", "")
    return {"INT": "int", "BIGINT": "long", "STRING": "string", "DOUBLE": "double"}[name]


def _iceberg_field(f: DataField) -> dict[str, Any]:
    # Iceberg field ids start at 1; shift Paimon's by one.
    return {"id": f.id + 1, "name": f.name, "required": not f.type.nullable,
            "type": _iceberg_type(f.type)}


def write_iceberg_metadata(path: str, schemas: list[TableSchema], snapshots: int) -> str:
    """A format-v2 metadata JSON with ``schemas`` and ``snapshots`` snapshots (the manifest
    lists they name are never read by ``StaticTable.from_metadata``)."""
    per_version = max(1, snapshots // len(schemas))
    snaps = []
    for i in range(1, snapshots + 1):
        snap: dict[str, Any] = {
            "snapshot-id": i, "sequence-number": i, "timestamp-ms": T0 + i * 100,
            "manifest-list": f"file://{path}/metadata/snap-{i}-1-bench.avro",
            "summary": {"operation": "append", "added-records": "20"},
            "schema-id": min((i - 1) // per_version, len(schemas) - 1)}
        if i > 1:
            snap["parent-snapshot-id"] = i - 1
        snaps.append(snap)
    meta = {
        "format-version": 2, "table-uuid": str(uuid.UUID(int=1)), "location": f"file://{path}",
        "last-sequence-number": snapshots, "last-updated-ms": T0 + snapshots * 100,
        "last-column-id": max(s.highest_field_id for s in schemas) + 1,
        "schemas": [{"type": "struct", "schema-id": s.id, "identifier-field-ids": [1],
                     "fields": [_iceberg_field(f) for f in s.fields]} for s in schemas],
        "current-schema-id": schemas[-1].id,
        "partition-specs": [{"spec-id": 0, "fields": []}], "default-spec-id": 0,
        "last-partition-id": 999,
        "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0,
        "properties": {}, "current-snapshot-id": snapshots, "snapshots": snaps,
        "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]}
                         for s in snaps],
        "metadata-log": [],
        "refs": {"main": {"snapshot-id": snapshots, "type": "branch"}},
    }
    os.makedirs(os.path.join(path, "metadata"), exist_ok=True)
    file = os.path.join(path, "metadata", f"00001-{uuid.UUID(int=2)}.metadata.json")
    _write(file, json.dumps(meta))
    return file


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


def median_ms(fn: Callable[[], Any], runs: int = RUNS) -> tuple[float, float, float]:
    """Median wall-clock, median CPU (process) and least CPU milliseconds of ``runs`` calls.
    On a shared machine CPU time is steadier than wall time, and the least CPU time is the
    best estimate of the intrinsic cost (contention only ever adds)."""
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - t) * 1000)
    return statistics.median(wall), statistics.median(cpu), min(cpu)


def paimon_history(path: str) -> Any:
    h = open_table(path).history()
    assert h.lineage and h.snapshots
    return h


def iceberg_walk(file: str) -> int:
    """Load the metadata and touch every field of every schema (id -> name per version)."""
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(file)
    n = 0
    for schema in table.schemas().values():
        n += len({f.field_id: f.name for f in schema.fields})
    n += len(table.snapshots())
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 versions, 2,000 snapshots")
    parser.add_argument("--versions", type=int, default=None)
    parser.add_argument("--snapshots", type=int, default=None)
    parser.add_argument("--dir", default=None, help="where to write tables (default: a temp "
                                                    "dir, removed afterwards)")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    versions = args.versions or (200 if args.quick else 1000)
    snapshots = args.snapshots or versions * SNAPSHOTS_PER_VERSION

    tmp = None if args.dir else tempfile.TemporaryDirectory(prefix="schemalab-bench-")
    root = args.dir or (tmp.name if tmp else ".")
    t = time.perf_counter()
    all_schemas = schema_history(versions)
    print(f"generated {versions} schema versions in {time.perf_counter() - t:.1f} s "
          f"(fields in the last: {len(all_schemas[-1].fields)}, highest field id "
          f"{all_schemas[-1].highest_field_id})")
    rows = []
    for frac in (4, 2, 1):
        nv, ns = versions // frac, snapshots // frac
        path = os.path.join(root, f"bench.db/t_{nv}")
        ice = os.path.join(root, f"iceberg_{nv}")
        if not os.path.exists(path):
            write_paimon_table(path, all_schemas[:nv], ns)
        ice_file = write_iceberg_metadata(ice, all_schemas[:nv], ns)
        h = paimon_history(path)  # warm the page cache; check the shape once
        assert len(h.schemas) == nv and len(h.snapshots) == ns
        ms, cpu, least = median_ms(functools.partial(paimon_history, path), args.runs)
        ice_ms, ice_cpu, _ = median_ms(functools.partial(iceberg_walk, ice_file), args.runs)
        fields = sum(len(v.fields) for v in h.schemas)
        rows.append((nv, ns, fields, ms, cpu, least, ice_ms, ice_cpu))
    print()
    print("schemalab history() = every schema + snapshot file read, events, lineage; "
          f"{args.runs} runs; ms (median wall, median CPU, least CPU)")
    print(f"{'versions':>8} {'snapshots':>9} {'fields':>7} {'wall':>6} {'cpu':>6} "
          f"{'min cpu':>7} {'us/version':>10} {'us/snapshot':>11} {'pyiceberg wall':>14} "
          f"{'pyiceberg cpu':>13}")
    for nv, ns, fields, ms, cpu, least, ice_ms, ice_cpu in rows:
        print(f"{nv:>8} {ns:>9} {fields:>7} {ms:>6.0f} {cpu:>6.0f} {least:>7.0f} "
              f"{cpu * 1000 / nv:>10.0f} {cpu * 1000 / ns:>11.1f} {ice_ms:>14.0f} "
              f"{ice_cpu:>13.0f}")
    full, full_cpu, full_least = rows[-1][3], rows[-1][4], rows[-1][5]
    print()
    print(f"full size: {full:.0f} ms wall, {full_cpu:.0f} ms CPU "
          f"({'within' if min(full, full_cpu) <= 2000 else 'OVER'} the 2 s target)")
    print(f"growth quarter -> full for 4x the items (4.00x is linear): median CPU "
          f"{full_cpu / rows[0][4]:.2f}x, least CPU {full_least / rows[0][5]:.2f}x")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("pyiceberg = StaticTable.from_metadata + every schema's fields + snapshots listed; "
          "it computes no events or lineage")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
