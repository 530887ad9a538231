"""Iceberg's own Spark SQL (Iceberg 1.12.0's ``iceberg-spark-runtime-4.1_2.13`` with its SQL
extensions, on a ``HadoopCatalog``) as an oracle, and its pytest fixture ``iceberg_spark``.

The runtime supports Spark 4.1 only, and the test process has PySpark 4.3: the worker
(``iceberg_spark_worker.py``) runs in ``.venv-iceberg-spark`` (``make .venv-iceberg-spark``)
and talks JSON lines; one worker (one JVM) serves the whole test run::

    spark = IcebergSpark.start()
    spark.run("/x/wh", ["ALTER TABLE t ADD COLUMN c INT"])   # [None] or [SparkError(...)]
    spark.read("/x/wh", "default.t", version=123)             # {"columns", "types", "rows"}
    spark.close()

Statements run after ``USE <that warehouse's catalog>.default``, so they are the very SQL
text schemalab runs. The runtime jar comes from Maven Central through ``spark.jars.packages``
into ``.cache/ivy`` (ignored; ``$SCHEMALAB_IVY_DIR`` to share one cache between clones).

In a test module: ``pytest_plugins = ["oracles.iceberg_spark"]`` and ask for ``iceberg_spark``;
a worker that cannot start FAILS the test, naming the make target.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from .java_paimon import ORACLES, REPO, JavaPaimon, JavaPaimonError, JavaPaimonUnavailable

VENV = REPO / ".venv-iceberg-spark"
WORKER = ORACLES / "iceberg_spark_worker.py"
IVY = os.environ.get("SCHEMALAB_IVY_DIR") or str(REPO / ".cache" / "ivy")
MAKE_HINT = "run `make .venv-iceberg-spark` (from the repository root)"


@dataclass(frozen=True)
class SparkError:
    """A statement Spark refused: the top exception and its chain of causes."""

    java_class: str
    message: str
    causes: tuple[tuple[str, str], ...]

    @property
    def by_spark(self) -> bool:
        """Spark itself refused it (its parser or analyzer: every exception is Spark's),
        before any Iceberg code saw the statement."""
        return all(c.startswith("org.apache.spark.") for c, _ in self.causes)

    @property
    def java_part(self) -> str:
        """Iceberg's (or Java's) message: the first cause that is not Spark's wrapping of
        it; Spark's own message when Spark refused by itself."""
        for cls, message in self.causes:
            if not cls.startswith("org.apache.spark."):
                return message
        return self.message

    def __str__(self) -> str:
        return " <- ".join(f"{c}: {m}" for c, m in self.causes)


def _error(raw: dict[str, Any]) -> SparkError:
    causes = tuple((c["class"], c["message"] or "") for c in raw.get("causes") or [])
    return SparkError(raw["class"], raw.get("message") or "",
                      causes or ((raw["class"], raw.get("message") or ""),))


class IcebergSpark(JavaPaimon):
    """The worker's client (the process plumbing is the Java oracles')."""

    @classmethod
    def start(cls, version: str = "1.12.0", timeout: float = 600.0,  # type: ignore[override]
              netty_jar: str | None = None) -> IcebergSpark:
        py = VENV / "bin" / "python"
        if not py.exists():
            raise JavaPaimonUnavailable(f"Iceberg's Spark oracle's venv is missing ({VENV}): "
                                        + MAKE_HINT)
        env = dict(os.environ)
        for var in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                    "PYSPARK_SUBMIT_ARGS"):
            env.pop(var, None)  # the test process's Spark 4.3 settings are not this one's
        proc = subprocess.Popen(
            [str(py), "-u", str(WORKER), "--ivy", IVY],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", env=env, cwd=str(ORACLES))
        client = cls(proc, timeout, version)
        # the first start fetches the runtime jar from Maven Central
        ready = client._receive(timeout=timeout)
        if not ready.get("ok"):
            client.close()
            raise JavaPaimonUnavailable(f"Iceberg's Spark worker did not start: {ready}")
        return client

    def run(self, warehouse: Any, statements: Sequence[str],  # type: ignore[override]
            namespace: str = "default") -> list[SparkError | None]:
        """Each statement in Spark SQL on the warehouse's catalog: None (done) or the
        error Spark raised."""
        return self.run_many([(warehouse, statements)], namespace)[0]

    def run_many(self, jobs: Sequence[tuple[Any, Sequence[str]]],
                 namespace: str = "default") -> list[list[SparkError | None]]:
        """Several warehouses' statements in one round trip."""
        answers = self._answer("run_many", jobs=[
            {"warehouse": str(w), "statements": list(s), "namespace": namespace}
            for w, s in jobs])
        return [[None if a["ok"] else _error(a["error"]) for a in job] for job in answers]

    def read(self, warehouse: Any, table: str,  # type: ignore[override]
             version: int | str | None = None) -> dict[str, Any]:
        """Spark's ``SELECT * FROM table [VERSION AS OF version]``: columns, Spark's types
        and the canonical rows (``tests/iceberg_canonical.py``), sorted. Raises when Spark
        refuses the read."""
        return self.read_many([(warehouse, table, version)])[0]

    def read_many(self, reads: Sequence[tuple[Any, str, int | str | None]],
                  check: bool = True) -> list[dict[str, Any]]:
        """Several reads in one round trip; ``check=False`` leaves a refused read as
        ``{"error": SparkError}`` instead of raising."""
        answers = self._answer("read_many", reads=[
            {"warehouse": str(w), "table": t, "version": v} for w, t, v in reads])
        for (w, t, v), a in zip(reads, answers, strict=True):
            if "error" in a and not check:
                a["error"] = _error(a["error"])
            elif "error" in a:
                raise AssertionError(f"Iceberg's Spark could not read {t} at {v} in {w}: "
                                     f"{_error(a['error'])}")
        return answers

    def _answer(self, op: str, **request: Any) -> Any:
        """One batched request, given time by its size (a busy machine runs each
        statement in seconds, not the tenths of a second it takes alone)."""
        items = sum(len(v) for v in request.values() if isinstance(v, list))
        resp = self.call(op, timeout=self.timeout + 10.0 * items, **request)
        if not resp["ok"]:
            raise JavaPaimonError(op, resp["error"])
        return resp["result"]

    def versions(self) -> dict[str, str]:
        return super().run("versions")


@pytest.fixture(scope="session")
def iceberg_spark() -> Iterator[IcebergSpark]:
    """Iceberg 1.12.0's Spark SQL, one worker for the whole run."""
    from .fixtures import started

    yield from started(IcebergSpark.start, "Iceberg's Spark SQL")


__all__ = ["IVY", "IcebergSpark", "SparkError", "iceberg_spark"]
