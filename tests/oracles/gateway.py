"""A py4j gateway on a JVM started from a plain classpath (the Maven-fetched oracles).

Used by the workers in ``.venv-paimon-java`` (never the main venv: py4j 0.10.9.7 there).
``classpath`` is the text ``make oracle-jars`` writes (``.oracles/*.classpath``), which
includes py4j's own jar; ``callbacks`` starts py4j's callback server, so that Python objects
can implement Java interfaces (the Iceberg worker's path-rewriting FileIO).
"""

from __future__ import annotations

import sys
from typing import Any

# Arrow's MemoryUtil (inside Paimon's bundle) needs the two --add-opens; the rest keeps the
# JVM small and quick to start for tiny tables.
JVM_ARGS = ["--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "-Xmx1g", "-XX:TieredStopAtLevel=1"]


def start(classpath: str, callbacks: bool = False) -> Any:
    from py4j.java_gateway import (
        CallbackServerParameters,
        GatewayParameters,
        JavaGateway,
        launch_gateway,
    )

    port = launch_gateway(classpath=classpath, javaopts=JVM_ARGS, die_on_exit=True,
                          redirect_stdout=sys.stderr, redirect_stderr=sys.stderr)
    params = GatewayParameters(port=port, auto_convert=True)
    if not callbacks:
        return JavaGateway(gateway_parameters=params)
    gw = JavaGateway(gateway_parameters=params,
                     callback_server_parameters=CallbackServerParameters(
                         port=0, daemonize=True, daemonize_connections=True))
    # The JVM learns the callback server's (ephemeral) port, as PySpark does it.
    server = gw.java_gateway_server
    server.resetCallbackClient(server.getCallbackClient().getAddress(),
                               gw.get_callback_server().get_listening_port())
    return gw


def read_classpath(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read().strip()
