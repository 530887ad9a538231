"""Committing an Iceberg table: a change (given a copy of the current metadata, it returns the
new metadata) is applied to what the table is now and committed atomically; when another
writer committed first, the table is read again and the change re-applied to what won.

Where the metadata lives and how a commit is swapped in is a :class:`CommitTarget`:

- :class:`HadoopTarget` (a path): Java's ``HadoopCatalog`` layout. The next
  ``v<N+1>.metadata.json`` is created only if absent (a hard link of a fully written
  temporary file on local disk, a conditional PUT on S3: :func:`schemalab.fileio.write_new`),
  then ``version-hint.text`` names it. Two writers racing for the same N: one wins, the other
  tries N+2. A writer killed before the link leaves only a hidden temporary file; killed
  after it, the commit is complete (readers, Java's included, look past the hint).
- a catalog (:mod:`schemalab.catalog_commit`): the change is sent as the REST spec's updates
  with requirements (``updateTable`` / pyiceberg's ``commit_table``), and the catalog writes
  the metadata file.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any, Protocol

from schemalab import fileio
from schemalab.errors import CommitConflictError, SchemaLabError, TableExistsError
from schemalab.iceberg.locate import find_current_metadata, metadata_version
from schemalab.iceberg.metadata import load_json
from schemalab.iceberg.write.tablemeta import now_ms

#: how often a commit that lost the race is re-applied before giving up
COMMIT_ATTEMPTS = 20
#: the rule of an error after which a commit may have landed (a catalog that failed while
#: committing): the files written for it must stay, as Java's clients keep them
UNKNOWN_OUTCOME = "catalog-commit-unknown"
HINT = "version-hint.text"

Change = Callable[[dict[str, Any]], dict[str, Any]]


class CommitTarget(Protocol):
    """Where a table's metadata lives and how a new version of it is committed."""

    #: the table's root directory (``metadata/`` and ``data/`` below it), as fileio reads it
    table_path: str

    def current(self) -> tuple[str, dict[str, Any]]:
        """The current metadata file and its contents."""

    def swap(self, base_file: str, base: dict[str, Any],
             new: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """Commit ``new`` over ``base`` (read from ``base_file``): the new metadata file and
        its contents, or None when another writer committed since ``base`` was read."""


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


class HadoopTarget:
    """The Hadoop-catalog layout: ``metadata/v<N>.metadata.json`` and ``version-hint.text``."""

    def __init__(self, table_path: str, table: str = "") -> None:
        self.table_path = table_path
        self.table = table or table_path

    def current(self) -> tuple[str, dict[str, Any]]:
        path = find_current_metadata(self.table_path)
        name = os.path.basename(path)
        if not name.startswith("v"):
            # 00003-<uuid>.metadata.json: a catalog's table, whose current version only the
            # catalog knows; a v4.metadata.json beside it would fork the table
            raise SchemaLabError(
                f"Table {self.table}: its metadata ({name}) is a catalog's, not the Hadoop "
                "layout's (v<N>.metadata.json): commit through its catalog "
                "(sl.Warehouse(catalog=...) or sl.open_table(name, catalog=...))",
                table=self.table, rule="commit-through-catalog")
        return path, load_json(path)

    def swap(self, base_file: str, base: dict[str, Any],
             new: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        version = metadata_version(os.path.basename(base_file))
        assert version is not None
        previous_ms = int(base.get("last-updated-ms", 0))
        new["last-updated-ms"] = max(now_ms(), previous_ms + 1)
        log = new.setdefault("metadata-log", [])
        log.append({"timestamp-ms": previous_ms,
                    "metadata-file": _uri(str(base["location"]), self.table_path, base_file)})
        keep = int(new.get("properties", {}).get("write.metadata.previous-versions-max", 100))
        del log[: max(0, len(log) - keep)]
        mdir = metadata_dir(self.table_path)
        path = os.path.join(mdir, f"v{version + 1}.metadata.json")
        if not fileio.write_new(path, _dump(new)):
            return None
        fileio.write_replace(os.path.join(mdir, HINT), str(version + 1))
        return path, new


def target_of(where: str | CommitTarget, table: str = "") -> CommitTarget:
    """A commit target: a path is the Hadoop layout's."""
    return HadoopTarget(where, table) if isinstance(where, str) else where


def commit(where: str | CommitTarget, table: str,
           change: Change) -> tuple[str, dict[str, Any]]:
    """Apply ``change`` (given a copy of the current metadata, returns the new metadata) and
    commit it; re-read and re-applied when another writer committed first. ``where`` is a
    table path (the Hadoop layout) or a :class:`CommitTarget`. Returns the new metadata file
    and its contents."""
    target = target_of(where, table)
    for _ in range(COMMIT_ATTEMPTS):
        current, base = target.current()
        done = target.swap(current, base, change(copy.deepcopy(base)))
        if done is not None:
            return done
    raise CommitConflictError(f"Table {table}: gave up after {COMMIT_ATTEMPTS} attempts, other "
                              "writers committed first every time", table=table,
                              rule="commit-conflict")
