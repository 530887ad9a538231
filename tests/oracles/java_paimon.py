"""Client for the Java Paimon oracles (``java_paimon_worker.py`` in ``.venv-paimon-java``):
Paimon 1.0 (the bridge jar of paimon-python-ali) and Paimon 2.0.0 (from Maven Central,
``make oracle-jars``), the same operations on either (``JavaPaimon.start("2.0.0")``).

    java = JavaPaimon.start()
    java.create_table(wh, "t", [("id", "INT"), ("v", "STRING")], primary_keys=["id"],
                      options={"bucket": "1"})
    java.write(wh, "t", [[1, "a"], [2, "b"]])
    java.write(wh, "t", [[1, None]], row_kinds=["-D"])
    java.read(wh, "t", snapshot_id=1)   # {"columns", "types", "rows" (canonical, sorted)}
    java.close()

One worker (one JVM) serves a whole test session; requests are answered in order. A Java
failure raises ``JavaPaimonError`` carrying Java's exception class and message; ``call``
returns the raw response instead.
"""

from __future__ import annotations

import glob
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ORACLES = Path(__file__).resolve().parent
REPO = ORACLES.parent.parent
JAVA_VENV = REPO / ".venv-paimon-java"
WORKER = ORACLES / "java_paimon_worker.py"
MAKE_HINT = "run `make .venv-paimon-java` (from the repository root) to build it"
#: version → the classpath file ``make oracle-jars`` writes (1.0 is the bridge jar instead)
CLASSPATHS = {"2.0.0": REPO / ".oracles" / "paimon-2.0.0.classpath"}
VERSIONS = ("1.0", *CLASSPATHS)


class JavaPaimonUnavailable(RuntimeError):
    pass


class JavaPaimonError(RuntimeError):
    """Java (or the worker) refused a request. ``java_class``/``message`` are Java's."""

    def __init__(self, op: str, error: dict[str, Any]) -> None:
        self.op = op
        self.error = error
        self.java_class = error.get("class")
        self.message = error.get("message") or ""
        self.causes = error.get("causes", [])
        chain = "; caused by ".join(f"{c['class']}: {c['message']}" for c in self.causes[1:])
        super().__init__(f"{op}: {self.java_class}: {self.message}"
                         + (f" (caused by {chain})" if chain else ""))

    def text(self) -> str:
        """Every message in the cause chain, for matching."""
        return " | ".join(str(c.get("message")) for c in self.causes) or self.message


def pyspark_netty_jar() -> str:
    """PySpark's netty-common jar, which the bridge jar lacks (ROW/MAP columns need it)."""
    import pyspark

    jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars",
                                         "netty-common-*.jar")))
    if not jars:
        raise JavaPaimonUnavailable(f"no netty-common-*.jar under {pyspark.__file__}'s jars/")
    return jars[-1]


def check_classpath(cp: Path) -> None:
    """Every jar the classpath file names is there (a moved checkout or a cleaned Maven
    repository leaves the file naming jars that are gone)."""
    missing = [j for j in cp.read_text().strip().split(os.pathsep) if not os.path.exists(j)]
    if missing:
        raise JavaPaimonUnavailable(f"{cp} names {len(missing)} missing jar(s), e.g. "
                                    f"{missing[0]}: delete it and run `make oracle-jars`")


class JavaPaimon:
    def __init__(self, proc: subprocess.Popen[str], timeout: float,
                 version: str = "1.0") -> None:
        #: "1.0" or "2.0.0": which Paimon answers
        self.version = version
        self.proc = proc
        self.timeout = timeout
        self._next_id = 0
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr_tail: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    # -- process ------------------------------------------------------------------------------

    @classmethod
    def python(cls) -> Path:
        py = JAVA_VENV / "bin" / "python"
        if not py.exists():
            raise JavaPaimonUnavailable(f"the Java Paimon oracle's venv is missing ({JAVA_VENV}): "
                                        + MAKE_HINT)
        return py

    @classmethod
    def start(cls, version: str = "1.0", timeout: float = 180.0,
              netty_jar: str | None = None) -> JavaPaimon:
        py = cls.python()
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if version == "1.0":
            args = ["--netty-jar", netty_jar or pyspark_netty_jar()]
        else:
            cp = CLASSPATHS.get(version)
            if cp is None:
                raise ValueError(f"no Java Paimon oracle {version!r}; there are {VERSIONS}")
            if not cp.exists():
                raise JavaPaimonUnavailable(f"Java Paimon {version}'s jars are missing ({cp}): "
                                            "run `make oracle-jars` (from the repository root)")
            check_classpath(cp)
            args = ["--classpath", str(cp)]
        proc = subprocess.Popen(
            [str(py), "-u", str(WORKER), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", env=env, cwd=str(ORACLES))
        client = cls(proc, timeout, version)
        ready = client._receive(timeout=120.0)
        if not ready.get("ok"):
            client.close()
            raise JavaPaimonUnavailable(f"the Java Paimon worker did not start: {ready}")
        return client

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr_tail = (self._stderr_tail + [line])[-60:]
            if os.environ.get("JAVA_PAIMON_VERBOSE"):
                sys.stderr.write("[java-paimon] " + line)

    def _receive(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"the Java Paimon worker gave no answer in {timeout:.0f} s; "
                               "stderr tail:\n" + "".join(self._stderr_tail)) from None
        if line is None:
            raise JavaPaimonUnavailable("the Java Paimon worker exited; stderr tail:\n"
                                        + "".join(self._stderr_tail))
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("shutdown", timeout=20)
            except Exception:  # noqa: BLE001 - ending it anyway
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> JavaPaimon:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -----------------------------------------------------------------------------

    def call(self, op: str, timeout: float | None = None, **request: Any) -> dict[str, Any]:
        """Send one request, return the raw response ``{"id", "ok", "result" | "error"}``."""
        self._next_id += 1
        rid = self._next_id
        request = {"id": rid, "op": op, **{k: _plain(v) for k, v in request.items()}}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        resp = self._receive(timeout or self.timeout)
        if resp.get("id") != rid:
            raise RuntimeError(f"out-of-order answer from the worker: {resp!r} for {rid}")
        return resp

    def run(self, op: str, **request: Any) -> Any:
        resp = self.call(op, **request)
        if not resp["ok"]:
            raise JavaPaimonError(op, resp["error"])
        return resp["result"]

    def create_table(self, warehouse: Any, table: str, columns: list[Any], *,
                     partition_keys: list[str] | None = None,
                     primary_keys: list[str] | None = None,
                     options: dict[str, str] | None = None, database: str = "default",
                     comment: str | None = None) -> dict[str, Any]:
        return self.run("create_table", warehouse=warehouse, database=database, table=table,
                        columns=[list(c) for c in columns], partition_keys=partition_keys,
                        primary_keys=primary_keys, options=options or {}, comment=comment)

    def write(self, warehouse: Any, table: str, rows: list[Any], *,
              row_kinds: list[str] | None = None, database: str = "default") -> int | None:
        """Commit ``rows`` (in the table's current column order) as one snapshot; returns its
        id. ``row_kinds`` holds "+I", "-U", "+U", "-D" per row."""
        return self.run("write", warehouse=warehouse, database=database, table=table,
                        rows=rows, row_kinds=row_kinds)["snapshot_id"]

    def alter(self, warehouse: Any, table: str, *changes: dict[str, Any],
              database: str = "default") -> dict[str, Any]:
        return self.run("alter", warehouse=warehouse, database=database, table=table,
                        changes=list(changes))

    def read(self, warehouse: Any, table: str, snapshot_id: int | None = None, *,
             options: dict[str, str] | None = None, database: str = "default") -> dict[str, Any]:
        return self.run("read", warehouse=warehouse, database=database, table=table,
                        snapshot_id=snapshot_id, options=options)

    def time_travel(self, warehouse: Any, table: str, options: dict[str, str], *,
                    database: str = "default") -> int | None:
        """The snapshot id a read with ``options`` starts from (worker op ``time_travel``:
        ``TimeTravelUtil.tryTravelToSnapshot``)."""
        return self.run("time_travel", warehouse=warehouse, database=database, table=table,
                        options=options)

    def snapshots(self, warehouse: Any, table: str, *, database: str = "default") -> list[Any]:
        return self.run("snapshots", warehouse=warehouse, database=database, table=table)

    def compact(self, warehouse: Any, table: str, *, database: str = "default") -> Any:
        return self.run("compact", warehouse=warehouse, database=database, table=table)

    def delete_where(self, warehouse: Any, table: str, column: str, values: list[Any], *,
                     database: str = "default") -> Any:
        """Delete rows of an append table with deletion vectors (as Spark's DELETE does)."""
        return self.run("delete_where", warehouse=warehouse, database=database, table=table,
                        column=column, values=values)

    def describe(self, warehouse: Any, table: str, *, database: str = "default") -> Any:
        return self.run("describe", warehouse=warehouse, database=database, table=table)

    # branches and tags, through the Table API Paimon's procedures call
    def create_tag(self, warehouse: Any, table: str, tag: str, snapshot_id: int | None = None,
                   *, time_retained_seconds: int | None = None, database: str = "default"
                   ) -> Any:
        return self.run("create_tag", warehouse=warehouse, database=database, table=table,
                        tag=tag, snapshot_id=snapshot_id,
                        time_retained_seconds=time_retained_seconds)

    def delete_tag(self, warehouse: Any, table: str, tag: str, *, database: str = "default"
                   ) -> Any:
        return self.run("delete_tag", warehouse=warehouse, database=database, table=table,
                        tag=tag)

    def create_branch(self, warehouse: Any, table: str, branch: str, tag: str | None = None,
                      *, database: str = "default") -> Any:
        return self.run("create_branch", warehouse=warehouse, database=database, table=table,
                        branch=branch, tag=tag)

    def delete_branch(self, warehouse: Any, table: str, branch: str, *,
                      database: str = "default") -> Any:
        return self.run("delete_branch", warehouse=warehouse, database=database, table=table,
                        branch=branch)

    def fast_forward(self, warehouse: Any, table: str, branch: str, *,
                     database: str = "default") -> Any:
        return self.run("fast_forward", warehouse=warehouse, database=database, table=table,
                        branch=branch)

    def rollback(self, warehouse: Any, table: str, *, snapshot_id: int | None = None,
                 tag: str | None = None, database: str = "default") -> Any:
        return self.run("rollback", warehouse=warehouse, database=database, table=table,
                        snapshot_id=snapshot_id, tag=tag)

    def expire(self, warehouse: Any, table: str, retain_max: int, retain_min: int = 1, *,
               database: str = "default") -> int:
        n: int = self.run("expire", warehouse=warehouse, database=database, table=table,
                          retain_max=retain_max, retain_min=retain_min)
        return n

    def refs(self, warehouse: Any, table: str, *, database: str = "default") -> Any:
        return self.run("refs", warehouse=warehouse, database=database, table=table)


# Schema changes, as the worker's ``alter`` takes them. A path is a name or a list of names
# (nested fields).
def add_column(path: Any, type_: str, comment: str | None = None,
               move: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "add_column", "path": path, "type": type_, "comment": comment, "move": move}


def rename_column(path: Any, new_name: str) -> dict[str, Any]:
    return {"kind": "rename_column", "path": path, "new_name": new_name}


def drop_column(path: Any) -> dict[str, Any]:
    return {"kind": "drop_column", "path": path}


def update_column_type(path: Any, type_: str, keep_nullability: bool = False) -> dict[str, Any]:
    return {"kind": "update_column_type", "path": path, "type": type_,
            "keep_nullability": keep_nullability}


def update_column_nullability(path: Any, nullable: bool) -> dict[str, Any]:
    return {"kind": "update_column_nullability", "path": path, "nullable": nullable}


def update_column_comment(path: Any, comment: str) -> dict[str, Any]:
    return {"kind": "update_column_comment", "path": path, "comment": comment}


def move_column(name: str, *, first: bool = False, after: str | None = None,
                before: str | None = None, last: bool = False) -> dict[str, Any]:
    move: dict[str, Any] = {"first": first, "last": last}
    if after is not None:
        move["after"] = after
    if before is not None:
        move["before"] = before
    return {"kind": "update_column_position", "path": name, "move": move}


def set_option(key: str, value: str) -> dict[str, Any]:
    return {"kind": "set_option", "key": key, "value": value}


def remove_option(key: str) -> dict[str, Any]:
    return {"kind": "remove_option", "key": key}


def _plain(v: Any) -> Any:
    if isinstance(v, Path):
        return str(v)
    return v
