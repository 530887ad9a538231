"""Committing a Hadoop-catalog Iceberg table: the next ``v<N+1>.metadata.json`` is created
only if absent (a hard link of a fully written temporary file on local disk, a conditional
PUT on S3: :func:`schemalab.fileio.write_new`), then ``version-hint.text`` names it. Two
writers racing for the same N: one wins, the other re-reads the table, re-applies its change
to what won and tries N+2. A writer killed before the link leaves only a hidden temporary
file; killed after it, the commit is complete (readers, Java's included, look past the hint
for newer versions)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

from schemalab import fileio
from schemalab.errors import CommitConflictError, TableExistsError
from schemalab.iceberg.locate import find_current_metadata, metadata_version
from schemalab.iceberg.metadata import load_json
from schemalab.iceberg.write.tablemeta import now_ms

#: how often a commit that lost the race is re-applied before giving up
COMMIT_ATTEMPTS = 20
HINT = "version-hint.text"


def metadata_dir(table_path: str) -> str:
    return os.path.join(table_path, "metadata")


def _dump(d: dict[str, Any]) -> str:
    return json.dumps(d, indent=2)


def create(table_path: str, d: dict[str, Any], table: str) -> str:
    """Write a new table's ``v1.metadata.json`` (refused when the table exists)."""
    path = os.path.join(metadata_dir(table_path), "v1.metadata.json")
    fileio.makedirs(metadata_dir(table_path))
    if not fileio.write_new(path, _dump(d)):
        raise TableExistsError(f"Table {table} already exists.", table=table,
                               rule="table-must-be-new")
    fileio.write_replace(os.path.join(metadata_dir(table_path), HINT), "1")
    return path


def _uri(location: str, table_path: str, path: str) -> str:
    rel = fileio.display(path, table_path)
    return location.rstrip("/") + "/" + rel


def commit(table_path: str, table: str,
           change: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """Apply ``change`` (given a copy of the current metadata, returns the new metadata) and
    commit it as the next version; re-read and re-applied when another writer committed
    first. Returns the new metadata file and its contents."""
    for _ in range(COMMIT_ATTEMPTS):
        current = find_current_metadata(table_path)
        version = metadata_version(os.path.basename(current))
        assert version is not None
        base = load_json(current)
        new = change(copy.deepcopy(base))
        previous_ms = int(base.get("last-updated-ms", 0))
        new["last-updated-ms"] = max(now_ms(), previous_ms + 1)
        log = new.setdefault("metadata-log", [])
        log.append({"timestamp-ms": previous_ms,
                    "metadata-file": _uri(str(base["location"]), table_path, current)})
        keep = int(new.get("properties", {}).get("write.metadata.previous-versions-max", 100))
        del log[: max(0, len(log) - keep)]
        path = os.path.join(metadata_dir(table_path), f"v{version + 1}.metadata.json")
        if fileio.write_new(path, _dump(new)):
            fileio.write_replace(os.path.join(metadata_dir(table_path), HINT), str(version + 1))
            return path, new
    raise CommitConflictError(f"Table {table}: gave up after {COMMIT_ATTEMPTS} attempts, other "
                              "writers committed first every time", table=table,
                              rule="commit-conflict")
