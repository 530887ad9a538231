"""Iceberg's own Spark SQL as a subprocess oracle: JSON lines in on stdin, JSON lines out.

Runs in ``.venv-iceberg-spark`` (PySpark 4.1, ``make .venv-iceberg-spark``): Iceberg 1.12.0's
``iceberg-spark-runtime-4.1_2.13`` (fetched by ``spark.jars.packages`` into the Ivy cache the
client names) with Iceberg's SQL extensions, in one local SparkSession. Each warehouse a
request names becomes a ``HadoopCatalog`` of its own (``spark.sql.catalog.wN``, cache off, so
a table changed on disk by someone else is re-read), and statements run after
``USE wN.<namespace>``: the very SQL text schemalab ran, ``ALTER TABLE t ...`` included.

Requests (``{"id": 1, "op": ..., ...}``):

- ``run``: ``warehouse``, ``statements``, ``namespace`` (default ``default``) → per statement
  ``{"ok": true}`` or ``{"ok": false, "error": {"class", "message", "causes": [{"class",
  "message"}, ...]}}`` (a failed statement does not stop the next one);
- ``run_many``: ``jobs`` (a list of ``run`` requests) → a list of ``run`` answers;
- ``read``: ``warehouse``, ``table``, ``version`` (a snapshot id, a ref name or null) →
  ``{"columns", "types", "rows"}`` (rows: the canonical JSON texts of
  ``tests/iceberg_canonical.py``, sorted), or ``{"error": ...}`` when Spark refuses it;
- ``read_many``: ``reads`` (a list of ``read`` requests) → a list of ``read`` answers.

Usage: python iceberg_spark_worker.py --ivy .cache/ivy
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# the protocol keeps the real stdout; everything else (Ivy's resolution report, the JVM's
# own output, which the JVM inherits as fd 1) goes to stderr
from worker_protocol import error_of, serve  # noqa: E402

ICEBERG = "1.12.0"
RUNTIME = f"org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:{ICEBERG}"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Worker:
    def __init__(self, ivy: str) -> None:
        from pyspark.sql import SparkSession

        self.spark = (
            SparkSession.builder.master("local[1]").appName("iceberg-spark-oracle")
            .config("spark.jars.packages", RUNTIME)
            .config("spark.jars.ivy", ivy)
            .config("spark.sql.extensions", EXTENSIONS)
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.memory", "1g")
            # hundreds of tiny statements and reads: C1 only and no whole-stage codegen
            # start each one sooner than compiling it would pay back
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
            .config("spark.sql.codegen.wholeStage", "false")
            .getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        self.catalogs: dict[str, str] = {}

    def catalog(self, warehouse: str) -> str:
        """The catalog name of a Hadoop catalog on ``warehouse`` (registered once)."""
        warehouse = os.path.abspath(warehouse)
        name = self.catalogs.get(warehouse)
        if name is None:
            name = f"w{len(self.catalogs) + 1}"
            prefix = f"spark.sql.catalog.{name}"
            self.spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
            self.spark.conf.set(f"{prefix}.type", "hadoop")
            self.spark.conf.set(f"{prefix}.warehouse", warehouse)
            self.spark.conf.set(f"{prefix}.cache-enabled", "false")
            self.catalogs[warehouse] = name
        return name

    def op_run(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        catalog = self.catalog(req["warehouse"])
        self.spark.sql(f"USE {catalog}.{_quote(req.get('namespace') or 'default')}")
        out: list[dict[str, Any]] = []
        for statement in req["statements"]:
            try:
                self.spark.sql(statement).collect()
                out.append({"ok": True})
            except Exception as exc:  # noqa: BLE001 - each statement's own answer
                out.append({"ok": False, "error": error_of(exc)})
        return out

    def op_run_many(self, req: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [self.op_run(job) for job in req["jobs"]]

    def op_read(self, req: dict[str, Any]) -> dict[str, Any]:
        from iceberg_canonical import canonical_frame

        catalog = self.catalog(req["warehouse"])
        db, _, table = str(req["table"]).rpartition(".")
        name = f"{catalog}.{_quote(db or 'default')}.{_quote(table)}"
        version = req.get("version")
        at = "" if version is None else (
            f" VERSION AS OF {int(version)}" if isinstance(version, int)
            else " VERSION AS OF '" + str(version).replace("'", "\\'") + "'")
        try:
            columns, types, rows = canonical_frame(self.spark.sql(f"SELECT * FROM {name}{at}"))
        except Exception as exc:  # noqa: BLE001 - the read's own answer
            return {"error": error_of(exc)}
        return {"columns": columns, "types": types, "rows": rows}

    def op_read_many(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.op_read(r) for r in req["reads"]]

    def op_versions(self, req: dict[str, Any]) -> dict[str, str]:
        import pyspark

        return {"pyspark": pyspark.__version__, "spark": self.spark.version,
                "iceberg": ICEBERG}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ivy", required=True, help="the Ivy cache for spark.jars.packages")
    args = ap.parse_args()
    worker = serve(lambda: Worker(args.ivy))
    worker.spark.stop()
    os._exit(0)

if __name__ == "__main__":
    main()
