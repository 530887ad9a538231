"""The JSON-lines protocol the oracle workers speak (``java_paimon_worker.py``,
``java_iceberg_worker.py``, ``iceberg_spark_worker.py``), each in a venv of its own: one
request per line on stdin (``{"id", "op", ...}``), one answer per line on the real stdout
(``{"id", "ok", "result"}`` or ``{"id", "ok": false, "error"}``); ``op_<name>`` methods of
the worker object answer them, and ``shutdown`` ends the loop.

Importing this module takes the real stdout for the protocol and sends anything else that
prints there (the JVM child inherits fd 1, py4j, log4j, Ivy's report) to stderr; import it
before starting a JVM.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr


def error_of(exc: BaseException) -> dict[str, Any]:
    """A failure as the client sees it: the JVM's exception chain when there is one (py4j's
    ``java_exception``, PySpark's captured ``_origin``), else the Python one."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is None:
        return {"kind": "python", "class": type(exc).__name__, "message": str(exc),
                "causes": [], "trace": traceback.format_exc(limit=6)}
    causes = []
    cur = java
    while cur is not None and len(causes) < 10:
        message = cur.getMessage()
        causes.append({"class": str(cur.getClass().getName()),
                       "message": None if message is None else str(message)})
        nxt = cur.getCause()
        cur = None if nxt is None or nxt.equals(cur) else nxt
    return {"kind": "java", "class": causes[0]["class"], "message": causes[0]["message"],
            "causes": causes}


def _send(answer: dict[str, Any]) -> None:
    PROTO.write(json.dumps(answer, ensure_ascii=False) + "\n")


def serve(start: Callable[[], Any]) -> Any:
    """Start the worker (``start()``; a failure is answered as request 0 and exits), say
    ready, answer requests until ``shutdown`` or the end of stdin; returns the worker."""
    try:
        worker = start()
    except BaseException as exc:  # noqa: BLE001 - reported to the client, then exit
        _send({"id": 0, "ok": False, "error": error_of(exc)})
        raise SystemExit(1) from exc
    _send({"id": 0, "ok": True, "result": "ready"})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid = req.get("id")
        if req.get("op") == "shutdown":
            _send({"id": rid, "ok": True, "result": None})
            break
        try:
            handler = getattr(worker, "op_" + str(req.get("op")), None)
            if handler is None:
                raise ValueError(f"unknown op {req.get('op')!r}")
            answer = {"id": rid, "ok": True, "result": handler(req)}
        except Exception as exc:  # noqa: BLE001 - every failure becomes an answer
            answer = {"id": rid, "ok": False, "error": error_of(exc)}
        _send(answer)
    return worker
