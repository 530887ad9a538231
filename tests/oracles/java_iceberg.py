"""Client for the Java Iceberg 1.12.0 oracle (``java_iceberg_worker.py`` in
``.venv-paimon-java``, on the classpath of ``make oracle-jars``).

    iceberg = JavaIceberg.start()
    iceberg.read("/x/db/t", snapshot_id=123, relocate={"/tmp/where/it/was/written": "/x/db"})
    # {"columns", "types" (Iceberg's), "rows" (canonical JSON texts, sorted)}
    iceberg.close()

The process plumbing (one JVM per session, requests answered in order, Java failures raised as
``JavaPaimonError`` with Java's class and message) is the Paimon client's.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from .java_paimon import ORACLES, REPO, JavaPaimon, JavaPaimonUnavailable, check_classpath

WORKER = ORACLES / "java_iceberg_worker.py"
VERSION = "1.12.0"
CLASSPATH = REPO / ".oracles" / f"iceberg-{VERSION}.classpath"


class JavaIceberg(JavaPaimon):
    @classmethod
    def start(cls, version: str = VERSION, timeout: float = 180.0,
              netty_jar: str | None = None) -> JavaIceberg:
        if version != VERSION:
            raise ValueError(f"no Java Iceberg oracle {version!r}; there is {VERSION}")
        py = cls.python()
        if not CLASSPATH.exists():
            raise JavaPaimonUnavailable(f"Java Iceberg {VERSION}'s jars are missing "
                                        f"({CLASSPATH}): run `make oracle-jars`")
        check_classpath(CLASSPATH)
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        proc = subprocess.Popen(
            [str(py), "-u", str(WORKER), "--classpath", str(CLASSPATH)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", env=env, cwd=str(ORACLES))
        client = cls(proc, timeout, version)
        ready = client._receive(timeout=120.0)
        if not ready.get("ok"):
            client.close()
            raise JavaPaimonUnavailable(f"the Java Iceberg worker did not start: {ready}")
        return client

    def read(self, table_dir: Any, snapshot_id: int | None = None, *,  # type: ignore[override]
             relocate: dict[str, str] | None = None, ref: str | None = None,
             **_: Any) -> dict[str, Any]:
        """Iceberg's read at a snapshot, the current one, or a ref (``TableScan.useRef``:
        its snapshot in ``SnapshotUtil.schemaFor(table, ref)``)."""
        return self.run("read", table_dir=str(table_dir), snapshot_id=snapshot_id,
                        relocate=relocate or {}, ref=ref)

    def refs(self, table_dir: Any, *, relocate: dict[str, str] | None = None) -> dict[str, Any]:
        """``Table.refs()``: name → kind, snapshot_id and the three retention settings."""
        return self.run("refs", table_dir=str(table_dir), relocate=relocate or {})

    def build(self, location: Any, steps: list[dict[str, Any]]) -> list[int | None]:
        """A table written by Iceberg's Java API step by step (see the worker's ``Builder``);
        the newest snapshot's id after each step."""
        return self.run("build", location=str(location), steps=steps)

    def snapshots(self, table_dir: Any, *,  # type: ignore[override]
                  relocate: dict[str, str] | None = None, **_: Any) -> list[Any]:
        return self.run("snapshots", table_dir=str(table_dir), relocate=relocate or {})

    def catalog_read(self, warehouse: Any, table: str,
                     snapshot_id: int | None = None) -> dict[str, Any]:
        """Java's ``HadoopCatalog(warehouse).loadTable(table)`` read (worker op)."""
        return self.run("catalog_read", warehouse=str(warehouse), table=table,
                        snapshot_id=snapshot_id)

    def as_of_time(self, warehouse: Any, table: str, millis: int) -> dict[str, Any]:
        """Spark's ``TIMESTAMP AS OF`` resolved as Iceberg's SparkCatalog does (worker op
        ``as_of_time``): ``snapshot_id`` (``SnapshotUtil.snapshotIdAsOfTime``),
        ``scan_snapshot_id`` (``TableScan.asOfTime``), and that snapshot's ``columns`` and
        ``rows``."""
        return self.run("as_of_time", warehouse=str(warehouse), table=table, millis=millis)

    def java_ddl(self, warehouse: Any, table: str, schema: dict[str, Any], *,
                 partitioning: list[Any] = (), properties: dict[str, str] | None = None,
                 statements: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
        """Java creates and alters a table in a Hadoop catalog (worker op ``java_ddl``)."""
        return self.run("java_ddl", warehouse=str(warehouse), table=table, schema=schema,
                        partitioning=list(partitioning), properties=properties or {},
                        statements=list(statements))

    def ref_statements(self, warehouse: Any, table: str,
                       statements: list[dict[str, Any]]) -> dict[str, Any]:
        """Iceberg's Spark extension statements for refs and write order, run by their
        Execs' steps on Java's API (worker op ``ref_statements``)."""
        return self.run("ref_statements", warehouse=str(warehouse), table=table,
                        statements=statements)

    def commit_properties(self, warehouse: Any, table: str, prefix: str,
                          count: int) -> list[str]:
        return self.run("commit_properties", warehouse=str(warehouse), table=table,
                        prefix=prefix, count=count)

    def java_dml(self, warehouse: Any, table: str, schema: dict[str, Any], *,
                 identity: list[str] = (), properties: dict[str, str] | None = None,
                 statements: list[dict[str, Any]] = ()) -> list[Any]:  # type: ignore[assignment]
        """Java runs INSERT / DELETE / INSERT OVERWRITE as Iceberg's Spark writes them (worker
        op ``java_dml``): per statement the new snapshot's operation, summary and added
        delete file formats."""
        return self.run("java_dml", warehouse=str(warehouse), table=table, schema=schema,
                        identity=list(identity), properties=properties or {},
                        statements=list(statements))
    def partition_check(self, warehouse: Any, table: str) -> dict[str, Any]:
        """Per data file: its manifest's partition tuple and Java's ``PartitionKey`` of each
        of its rows, as partition paths (worker op ``partition_check``)."""
        return self.run("partition_check", warehouse=str(warehouse), table=table)
