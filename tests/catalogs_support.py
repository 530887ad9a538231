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

from oracles import pypaimon_write

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
        if self.process.stdin is not None:  # the Paimon launcher stops on stdin EOF
            self.process.stdin.close()
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


PAIMON_CLASSPATH = REPO / ".oracles" / "paimon-rest.classpath"
PAIMON_LAUNCHER = REPO / "tests" / "oracles" / "java" / "paimon-rest" / "LocalPaimonRestServer.java"
PAIMON_TOKEN = "schemalab-test-token"  # noqa: S105 - the server's bearer token, loopback only


def start_paimon_rest_server(root: Path) -> RestServer:
    """Start Paimon's REST catalog server (paimon-core's test server, on okhttp's
    MockWebServer, loopback) over a filesystem catalog in ``root/data``, warehouse ``wh``.
    Stopped by closing its stdin."""
    if not PAIMON_CLASSPATH.is_file():
        raise RestServerUnavailable(
            f"{PAIMON_CLASSPATH} is missing: run `make oracle-jars` (or `make test-catalogs`)")
    data = root / "data"
    log = root / "paimon-rest-server.log"
    err = open(log, "wb")  # noqa: SIM115 - the server writes to it until stopped
    proc = subprocess.Popen(
        ["java", "-cp", PAIMON_CLASSPATH.read_text().strip(), str(PAIMON_LAUNCHER),
         str(data), "wh", PAIMON_TOKEN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=root)
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(b"READY "):
            url = line.split()[1].decode().rstrip("/").replace("localhost", "127.0.0.1")
            return RestServer(url, data, proc, log)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    raise RestServerUnavailable(f"Paimon's REST server did not start: {log.read_text()[-2000:]}")


def paimon_rest_props(server: RestServer) -> dict[str, str]:
    return {"type": "paimon-rest", "uri": server.uri, "warehouse": "wh",
            "token.provider": "bear", "token": PAIMON_TOKEN}


def make_paimon_tables(props: dict[str, str]) -> None:
    """Through Paimon's REST catalog with pypaimon: ``db.events`` (two commits, then a
    column added, a third commit)."""
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    opts = {k: v for k, v in props.items() if k != "type"}
    cat = CatalogFactory.create({**opts, "metastore": "rest"})
    cat.create_database("db", True)
    arrow = pa.schema([("id", pa.int64()), ("name", pa.string())])
    cat.create_table("db.events", Schema.from_pyarrow_schema(arrow), False)

    def commit(data: pa.Table) -> None:
        t = cat.get_table("db.events")
        pypaimon_write.append(t, data)

    commit(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=arrow))
    commit(pa.table({"id": [3], "name": ["c"]}, schema=arrow))
    cat.alter_table("db.events", [SchemaChange.add_column("score", AtomicType("INT"))], False)
    commit(pa.table({"id": [4], "name": ["d"], "score": pa.array([9], pa.int32())},
                    schema=arrow.append(pa.field("score", pa.int32()))))


ICEBERG12_CLASSPATH = REPO / ".oracles" / "iceberg-1.12.0.classpath"
JAVA_WRITER = REPO / "tests" / "oracles" / "java" / "iceberg-rest" / "JavaRestWriter.java"


def java_iceberg_table(server: RestServer, name: str) -> str:
    """Table ``java.NAME`` written by Java Iceberg 1.12.0 through the REST catalog (appends,
    a column added, tag ``v1``, branch ``dev``). Its identifier."""
    if not ICEBERG12_CLASSPATH.is_file():
        raise RestServerUnavailable(f"{ICEBERG12_CLASSPATH} is missing: run `make oracle-jars`")
    done = subprocess.run(
        ["java", "-cp", ICEBERG12_CLASSPATH.read_text().strip(), str(JAVA_WRITER),
         server.uri, name],
        capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or "DONE " not in done.stdout:
        raise RuntimeError(f"Java Iceberg's writer failed: {done.stderr[-3000:]}")
    return f"java.{name}"


JAVA_READER = REPO / "tests" / "oracles" / "java" / "iceberg-rest" / "JavaRestReader.java"


def java_iceberg_read(server: RestServer, ident: str) -> tuple[dict[int, list[str]], list[str]]:
    """Table ``ident`` read by Java Iceberg 1.12.0 through the REST catalog at every snapshot:
    each snapshot's rows (``v1|v2|...``, sorted) by id, and the current schema's columns."""
    if not ICEBERG12_CLASSPATH.is_file():
        raise RestServerUnavailable(f"{ICEBERG12_CLASSPATH} is missing: run `make oracle-jars`")
    done = subprocess.run(
        ["java", "-cp", ICEBERG12_CLASSPATH.read_text().strip(), str(JAVA_READER),
         server.uri, ident],
        capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or "SCHEMA " not in done.stdout:
        raise RuntimeError(f"Java Iceberg's reader failed: {done.stderr[-3000:]}")
    rows: dict[int, list[str]] = {}
    columns: list[str] = []
    current: list[str] = []
    for line in done.stdout.splitlines():
        if line.startswith("SNAPSHOT "):
            current = rows.setdefault(int(line.split()[1]), [])
        elif line.startswith("ROW "):
            current.append(line[4:])
        elif line.startswith("SCHEMA "):
            columns = line[7:].split(",")
    return {k: sorted(v) for k, v in rows.items()}, columns


PAIMON2_CLASSPATH = REPO / ".oracles" / "paimon-2.0.0.classpath"
PAIMON_READER = REPO / "tests" / "oracles" / "java" / "paimon-rest" / "JavaPaimonRestReader.java"


@dataclass
class JavaPaimonRead:
    """A table as Java Paimon 2.0.0 read it through the REST catalog."""

    #: rows (``v1|v2|...``, sorted) by snapshot id, oldest first
    rows: dict[int, list[str]]
    #: (schema id, commit kind) by snapshot id
    snapshots: dict[int, tuple[int, str]]
    #: the latest schema's columns
    columns: list[str]


def java_paimon_read(server: RestServer, *idents: str) -> dict[str, JavaPaimonRead]:
    """Tables ``idents`` read by Java Paimon 2.0.0 through Paimon's REST catalog at every
    snapshot, with each snapshot's schema."""
    if not PAIMON2_CLASSPATH.is_file():
        raise RestServerUnavailable(f"{PAIMON2_CLASSPATH} is missing: run `make oracle-jars`")
    done = subprocess.run(
        ["java", "-cp", PAIMON2_CLASSPATH.read_text().strip(), str(PAIMON_READER),
         server.uri, "wh", PAIMON_TOKEN, *idents],
        capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or "SCHEMA " not in done.stdout:
        raise RuntimeError(f"Java Paimon's reader failed: {done.stderr[-3000:]}")
    out: dict[str, JavaPaimonRead] = {}
    current: list[str] = []
    table = JavaPaimonRead({}, {}, [])
    for line in done.stdout.splitlines():
        if line.startswith("TABLE "):
            table = out.setdefault(line[6:], JavaPaimonRead({}, {}, []))
        elif line.startswith("SNAPSHOT "):
            _, sid, schema_id, kind = line.split()
            table.snapshots[int(sid)] = (int(schema_id), kind)
            current = table.rows.setdefault(int(sid), [])
        elif line.startswith("ROW "):
            current.append(line[4:])
        elif line.startswith("SCHEMA "):
            table.columns = line[7:].split(",")
    for t in out.values():
        t.rows = {k: sorted(v) for k, v in t.rows.items()}
    return out
