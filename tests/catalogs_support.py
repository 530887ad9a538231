"""Real catalogs for tests/test_catalogs.py: Iceberg's own REST catalog server (Java, the
classes of the apache/iceberg-rest-fixture image, on 127.0.0.1 with a JDBC catalog on SQLite
and a warehouse in a temporary directory) and pyiceberg's SQL catalog on SQLite, and tables
made through them with pyiceberg (creates, appends, a schema change, a branch and a tag)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CLASSPATH = REPO / ".oracles" / "iceberg-rest.classpath"
LAUNCHER = REPO / "tests" / "oracles" / "java" / "iceberg-rest" / "LocalRestServer.java"
START_TIMEOUT_S = 120


class RestServerUnavailable(RuntimeError):
    pass


@dataclass
class RestServer:
    """A running Iceberg REST catalog server."""

    uri: str
    warehouse: Path
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung JVM
            self.process.kill()
            self.process.wait()


def start_rest_server(root: Path, extra_env: dict[str, str] | None = None) -> RestServer:
    """Start Iceberg's REST catalog server on a free port of 127.0.0.1, its warehouse and its
    SQLite catalog under ``root``. Fails naming ``make oracle-jars`` when the classpath is
    missing."""
    if not CLASSPATH.is_file():
        raise RestServerUnavailable(
            f"{CLASSPATH} is missing: run `make oracle-jars` (or `make test-catalogs`) to "
            "fetch Iceberg's REST catalog server from Maven Central")
    warehouse = root / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    env.update({
        "CATALOG_WAREHOUSE": f"file://{warehouse}",
        "CATALOG_URI": f"jdbc:sqlite:{root / 'catalog.db'}",
        "CATALOG_REST_PORT": "0",
        **(extra_env or {}),
    })
    log = root / "rest-server.log"
    out = open(log, "wb")  # noqa: SIM115 - the server writes to it until stopped
    proc = subprocess.Popen(
        ["java", "-cp", CLASSPATH.read_text().strip(), str(LAUNCHER)],
        stdout=subprocess.PIPE, stderr=out, env=env, cwd=root)
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    line = b""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(b"READY "):
            port = int(line.split()[1])
            return RestServer(f"http://127.0.0.1:{port}", warehouse, proc, log)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    raise RestServerUnavailable(f"Iceberg's REST server did not start: {log.read_text()[-2000:]}")


def make_tables(catalog: Any, namespace: str = "db") -> dict[str, str]:
    """Tables made through ``catalog`` with pyiceberg: ``plain`` (two appends), ``evolved``
    (append, add a column, append, rename a column, append) and ``refs`` (three appends,
    tag ``v1`` on the first snapshot, branch ``dev`` on the second). Their identifiers by
    kind."""
    import pyarrow as pa
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    catalog.create_namespace_if_not_exists(namespace)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    names = {k: f"{namespace}.{k}" for k in ("plain", "evolved", "refs")}

    from pyiceberg.schema import Schema

    ice_schema = Schema(NestedField(1, "id", LongType(), required=True),
                        NestedField(2, "name", StringType(), required=False))
    plain = catalog.create_table(names["plain"], schema=ice_schema)
    plain.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=schema))
    plain.append(pa.table({"id": [3], "name": ["c"]}, schema=schema))

    ev = catalog.create_table(names["evolved"], schema=ice_schema)
    ev.append(pa.table({"id": [1], "name": ["a"]}, schema=schema))
    with ev.update_schema() as u:
        u.add_column("score", IntegerType())
    ev.append(pa.table({"id": [2], "name": ["b"], "score": pa.array([7], pa.int32())},
                       schema=schema.append(pa.field("score", pa.int32()))))
    with ev.update_schema() as u:
        u.rename_column("name", "label")
    ev.append(pa.table({"id": [3], "label": ["c"], "score": pa.array([9], pa.int32())},
                       schema=pa.schema([pa.field("id", pa.int64(), nullable=False),
                                         ("label", pa.string()), ("score", pa.int32())])))

    refs = catalog.create_table(names["refs"], schema=ice_schema)
    for i in range(3):
        refs.append(pa.table({"id": [i], "name": [f"r{i}"]}, schema=schema))
    snaps = refs.metadata.snapshots
    (refs.manage_snapshots().create_tag(snaps[0].snapshot_id, "v1")
     .create_branch(snaps[1].snapshot_id, "dev").commit())
    return names


def sql_catalog(root: Path, name: str = "local") -> Any:
    """pyiceberg's SQL catalog on a SQLite file under ``root``."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = root / "sql-warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    return SqlCatalog(name, uri=f"sqlite:///{root / 'sql-catalog.db'}",
                      warehouse=f"file://{warehouse}")


def rest_server(root: Path) -> Iterator[RestServer]:
    server = start_rest_server(root)
    try:
        yield server
    finally:
        server.stop()
