"""Record Java Iceberg's own metadata tables of the fixture tables (no Spark).

For every table of ``fixtures/iceberg-java-1.10/`` and every metadata table schemalab builds,
Java Iceberg 1.12.0 makes the table (``MetadataTableUtils.createMetadataTableInstance``),
plans its scan and reads its ``DataTask`` rows, exactly what Iceberg's Spark integration
turns into Spark rows. Written: ``{"<table>.<metadata table>": {"schema": SchemaParser's
JSON, "rows": [[canonical values]]}}`` (or ``{"error": ...}``), gzip'd, to
``fixtures/iceberg-java-1.10/system-tables-iceberg-1.12.0.json.gz``; values in the fixture
README's canonical form (Iceberg's internal values: timestamps are microseconds, dates days).

Runs in the Java oracles' venv, on ``make oracle-jars``'s classpath, with the Iceberg
worker's path-relocating FileIO (the tables were written under another directory)::

    .venv-paimon-java/bin/python tests/oracles/record_iceberg_system_tables.py <unpacked db dir>

(``ICEBERG_ORACLE_CLASSPATH`` names another classpath file.)
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import gateway  # noqa: E402
from java_iceberg_worker import IType, RelocatingFileIO, latest_metadata  # noqa: E402

FIXTURE = HERE.parent / "fixtures" / "iceberg-java-1.10"
OUT = FIXTURE / "system-tables-iceberg-1.12.0.json.gz"
CLASSPATH = Path(os.environ.get("ICEBERG_ORACLE_CLASSPATH")
                 or HERE.parent.parent / ".oracles" / "iceberg-1.12.0.classpath")
SYSTEMS = ("snapshots", "history", "refs", "metadata_log_entries", "manifests", "files",
           "data_files", "delete_files", "partitions")
EPOCH = dt.datetime(1970, 1, 1)


class Canonical:
    def __init__(self, gw: Any) -> None:
        self.I = gw.jvm.org.apache.iceberg
        self.obj = gw.jvm.java.lang.Class.forName("java.lang.Object")

    def __call__(self, v: Any, t: IType) -> Any:  # noqa: PLR0911 - one case per type
        if v is None:
            return None
        k = t.id
        if k in ("BOOLEAN", "INTEGER", "LONG"):
            return v
        if k in ("STRING", "UUID"):
            return str(v.toString()) if hasattr(v, "toString") else v
        if k in ("FLOAT", "DOUBLE"):
            return "F:" + repr(float(v))
        if k == "DECIMAL":
            return "D:" + str(v if isinstance(v, Decimal) else Decimal(str(v.toString())))
        if k == "DATE":
            return "DATE:" + (dt.date(1970, 1, 1) + dt.timedelta(days=int(v))).isoformat()
        if k == "TIMESTAMP":
            return "TS:" + (EPOCH + dt.timedelta(microseconds=int(v))).isoformat()
        if k in ("BINARY", "FIXED"):
            raw = v if isinstance(v, bytes | bytearray) else self.I.util.ByteBuffers.toByteArray(v)
            return "B:" + bytes(raw).hex()
        if k == "STRUCT":
            return {"struct": [[n, self(v.get(i, self.obj), ft)]
                               for i, (n, ft) in enumerate(t.fields)]}
        if k == "LIST":
            return [self(x, t.elem) for x in list(v)]
        if k == "MAP":
            pairs = [[self(e.getKey(), t.key), self(e.getValue(), t.value)]
                     for e in list(v.entrySet())]
            return {"map": sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))}
        if k == "UNKNOWN":
            return None
        raise TypeError(f"no canonical form for Iceberg type {k}")


def record(gw: Any, db: Path, name: str, system: str) -> dict[str, Any]:
    ice = gw.jvm.org.apache.iceberg
    canonical = Canonical(gw)
    written = json.loads((FIXTURE / "expected" / f"{name}.json").read_text())["written_at"]
    io = RelocatingFileIO(gw, {str(Path(written).parent): str(db)})
    table = ice.BaseTable(ice.StaticTableOperations(
        str(latest_metadata(db / name / "metadata")), io), name)
    meta = ice.MetadataTableUtils.createMetadataTableInstance(
        table, ice.MetadataTableType.valueOf(system.upper()))
    fields = IType(meta.schema().asStruct()).fields
    rows = []
    tasks = meta.newScan().planFiles().iterator()
    while tasks.hasNext():
        it = tasks.next().asDataTask().rows().iterator()
        while it.hasNext():
            row = it.next()
            rows.append([canonical(row.get(i, canonical.obj), ft)
                         for i, (_, ft) in enumerate(fields)])
    return {"schema": json.loads(ice.SchemaParser.toJson(meta.schema())), "rows": rows}


def main() -> None:
    db = Path(sys.argv[1])
    gw = gateway.start(gateway.read_classpath(str(CLASSPATH)), callbacks=True)
    version = str(gw.jvm.org.apache.iceberg.IcebergBuild.version())
    assert version.startswith("1.12.0"), version
    out: dict[str, Any] = {}
    for name in sorted(p.stem for p in (FIXTURE / "expected").glob("*.json")):
        for system in SYSTEMS:
            try:
                out[f"{name}.{system}"] = record(gw, db, name, system)
            except Exception as e:  # noqa: BLE001 - Java's failure is the answer recorded
                out[f"{name}.{system}"] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}
    OUT.write_bytes(gzip.compress(json.dumps(out, sort_keys=True).encode(), mtime=0))
    gw.shutdown()


if __name__ == "__main__":
    main()
