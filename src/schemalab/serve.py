"""``schemalab serve``: the Explorer of one table, or of a warehouse's tables, as a read-only
web page for a team, through Voilà.

    schemalab serve TABLE_OR_WAREHOUSE [--port N] [--host 127.0.0.1] [--allow-reads]

It writes a one-cell notebook into a private temporary directory and runs Voilà on that
notebook alone, so a viewer gets the rendered widgets and nothing else:

- no code: Voilà strips every cell's source (``strip_sources``) and shows no tracebacks;
- no kernel access: Voilà's kernel websocket passes only widget comm messages, kernel info
  and shutdown (its ``allowed_message_types``); an ``execute_request`` never reaches the
  kernel. Voilà serves one notebook: no file tree, no Jupyter REST API
  (``/api/contents``, ``/api/kernels``, ``/files/``); static files next to the notebook are
  refused (an empty ``file_allowlist``; the directory holds only the notebook anyway);
- metadata only unless ``--allow-reads``: history, lineage, snapshot trees and each read's
  explanation come from the table's metadata; the Time travel tab reads rows (on Spark)
  only when the server was started with ``--allow-reads``;
- 127.0.0.1 unless ``--host`` says otherwise: sharing beyond the machine is a decision.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from schemalab.errors import SchemaLabError

DEFAULT_PORT = 8866
NOTEBOOK = "explorer.ipynb"


def _is_table(path: Path) -> bool:
    return (path / "schema").is_dir() or (path / "metadata").is_dir()


def check_target(target: str) -> Path:
    """``target`` as a directory that exists: a table (Paimon ``schema/``, Iceberg
    ``metadata/``) or a warehouse of tables; else a clear error."""
    path = Path(target).expanduser().resolve()
    if not path.is_dir():
        raise SchemaLabError(f"{target}: no such table or warehouse directory; serve takes a "
                             "Paimon or Iceberg table directory or a warehouse directory",
                             rule="serve-target")
    if not _is_table(path) and not _tables_of(path):
        raise SchemaLabError(f"{target}: neither a table (no schema/ or metadata/ directory) "
                             "nor a warehouse of tables (no <db>.db/<table> directories)",
                             rule="serve-target")
    return path


def _tables_of(path: Path) -> list[Path]:
    """The table directories of a warehouse: ``<db>.db/<table>`` (Paimon's filesystem
    catalog, and schemalab's Iceberg warehouses)."""
    return sorted(t for db in path.glob("*.db") if db.is_dir()
                  for t in db.iterdir() if t.is_dir() and _is_table(t))


def explorer_page(target: str, allow_reads: bool = False) -> Any:
    """What the served notebook shows: the Explorer of the table at ``target``, or a table
    picker and the chosen table's Explorer for a warehouse."""
    import ipywidgets as W

    import schemalab as sl
    from schemalab.widgets import Explorer

    path = Path(target)
    if _is_table(path):
        return Explorer(sl.open_table(path), reads=allow_reads)
    tables = _tables_of(path)
    names = [f"{t.parent.name[:-3]}.{t.name}" for t in tables]
    pick = W.Dropdown(options=list(zip(names, range(len(tables)), strict=True)), value=0,
                      description="table", style={"description_width": "initial"})
    box = W.VBox([pick, Explorer(sl.open_table(tables[0]), reads=allow_reads)],
                 layout=W.Layout(width="100%"))

    def show(_: Any) -> None:
        box.children = (pick, Explorer(sl.open_table(tables[pick.value]), reads=allow_reads))

    pick.observe(show, names="value")
    return box


def write_notebook(directory: Path, target: Path, allow_reads: bool) -> Path:
    """The one-cell notebook Voilà renders."""
    source = ("from schemalab.serve import explorer_page\n"
              f"explorer_page({json.dumps(str(target))}, allow_reads={allow_reads!r})")
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                     "outputs": [], "source": source}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    out = directory / NOTEBOOK
    out.write_text(json.dumps(nb))
    return out


def voila_command(notebook: Path, port: int, host: str = "127.0.0.1") -> list[str]:
    """Voilà on ``notebook`` alone, with sources stripped, no tracebacks, no static files."""
    return [sys.executable, "-m", "voila", str(notebook), "--no-browser",
            f"--port={port}", f"--Voila.ip={host}", "--Voila.port_retries=0",
            "--strip_sources=True", "--show_tracebacks=False",
            "--VoilaConfiguration.file_allowlist=[]",
            "--VoilaConfiguration.file_denylist=['.*']",
            "--theme=light", f"--Voila.root_dir={notebook.parent}"]


def serve(target: str, port: int = DEFAULT_PORT, host: str = "127.0.0.1",
          allow_reads: bool = False) -> int:
    """Serve until Ctrl-C; returns Voilà's exit status."""
    path = check_target(target)
    try:
        import voila  # noqa: F401
    except ImportError:
        raise SchemaLabError("schemalab serve needs Voilà: pip install 'schemalab[lab]'",
                             rule="serve-target") from None
    with tempfile.TemporaryDirectory(prefix="schemalab-serve-") as tmp:
        notebook = write_notebook(Path(tmp), path, allow_reads)
        print(f"serving the Explorer of {path} at http://{host}:{port}/ "
              f"({'reads allowed' if allow_reads else 'metadata only'}); Ctrl-C stops it",
              file=sys.stderr)
        env = {**os.environ, "SCHEMALAB_PROGRESS": "never"}
        proc = subprocess.Popen(voila_command(notebook, port, host), cwd=tmp, env=env)
        # SIGTERM (a service manager, a test) stops Voilà the way Ctrl-C does: it shuts its
        # kernels down first
        previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
            return 0
        finally:
            signal.signal(signal.SIGTERM, previous)
