"""The schema manager of one table: list, latest, get by id, commit.

A commit writes ``schema/schema-N`` create-if-absent (see :mod:`schemalab.fileio`). When two
committers race for the same N, exactly one wins; :meth:`SchemaManager.commit_changes`
re-reads the new latest schema and applies its changes again, so the loser's ALTER lands on
top of the winner's, or is refused by the rules if it no longer fits.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterable

from schemalab import fileio
from schemalab.errors import CommitConflictError, CorruptFileError, SchemaLabError
from schemalab.schema.apply import apply_changes, validate_schema
from schemalab.schema.changes import SchemaChange
from schemalab.schema.table_schema import TableSchema

SCHEMA_PREFIX = "schema-"
MAX_COMMIT_ATTEMPTS = 200


class SchemaManager:
    """Schema files under ``<table_path>/schema``. ``table`` names the table in errors.

    With ``keep_listing`` the directory's listing is kept until :meth:`refresh` (its owner
    says when: :class:`schemalab.table.Table` once per public call); a commit of this
    manager adds its own id to it, and a commit that loses a race lists again."""

    def __init__(self, table_path: str, table: str | None = None, *,
                 keep_listing: bool = False) -> None:
        self.table_path = table_path
        self.table = table or os.path.basename(os.path.normpath(table_path))
        self.directory = os.path.join(table_path, "schema")
        self._cache: dict[int, TableSchema] = {}
        self._keep_listing = keep_listing
        self._ids: list[int] | None = None

    def path(self, schema_id: int) -> str:
        return os.path.join(self.directory, f"{SCHEMA_PREFIX}{schema_id}")

    def list_ids(self) -> list[int]:
        """The schema ids, ascending: the kept listing, or a new one."""
        if self._ids is not None:
            return list(self._ids)
        ids = fileio.list_versions(self.directory, SCHEMA_PREFIX)
        if self._keep_listing:
            self._ids = ids
        return list(ids)

    def refresh(self) -> None:
        """Forget the kept listing: the next question lists the directory again."""
        self._ids = None

    def get(self, schema_id: int) -> TableSchema:
        """Schema ``schema_id``. Schema files never change once written, so they are cached."""
        cached = self._cache.get(schema_id)
        if cached is not None:
            return cached
        path = self.path(schema_id)
        try:
            raw = fileio.read_bytes(path)
        except FileNotFoundError:
            raise SchemaLabError(f"Schema {schema_id} of table {self.table} does not exist "
                                 f"({path})", table=self.table, rule="schema-must-exist") from None
        return self._load(schema_id, raw)

    def _load(self, schema_id: int, raw: bytes) -> TableSchema:
        path = self.path(schema_id)
        schema = TableSchema.from_json(raw, path=path)
        if schema.id != schema_id:
            raise CorruptFileError(path, f"file holds schema id {schema.id}, expected {schema_id}",
                                   table=self.table)
        self._cache[schema_id] = schema
        return schema

    def get_all(self, schema_ids: list[int]) -> list[TableSchema]:
        """Schemas ``schema_ids``, the files not yet read fetched together (concurrently on an
        object store, where each read is a request)."""
        fetched = fileio.prefetch([self.path(i) for i in schema_ids if i not in self._cache])
        for i in schema_ids:
            raw = fetched.get(self.path(i))
            if raw is not None and i not in self._cache:
                self._load(i, raw)
        return [self.get(i) for i in schema_ids]

    def list_all(self) -> list[TableSchema]:
        return self.get_all(self.list_ids())

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.get(ids[-1]) if ids else None

    def commit(self, schema: TableSchema) -> bool:
        """Write ``schema`` as ``schema-<id>`` if no such file exists. True if it was written."""
        validate_schema(schema, table=self.table)
        ok = fileio.write_new(self.path(schema.id), schema.to_json("java"))
        if ok:
            self._cache[schema.id] = schema
            if self._ids is not None and schema.id not in self._ids:
                self._ids = sorted([*self._ids, schema.id])
        else:
            self.refresh()  # another writer's schema is there: the kept listing is stale
        return ok

    def create(self, schema: TableSchema) -> TableSchema:
        """Commit the first schema (id 0) of a new table."""
        if not self.commit(schema):
            raise SchemaLabError(f"Table {self.table} already exists.", table=self.table,
                                 rule="table-must-be-new")
        return schema

    def commit_changes(self, changes: Iterable[SchemaChange], *, has_snapshots: bool = False
                       ) -> TableSchema:
        """Apply ``changes`` to the latest schema and commit the result, retrying on the
        fresh latest schema when another writer committed first."""
        changes = list(changes)
        for attempt in range(MAX_COMMIT_ATTEMPTS):
            latest = self.latest()
            if latest is None:
                raise SchemaLabError(f"Table {self.table} has no schema.", table=self.table,
                                     rule="table-must-exist")
            new = apply_changes(latest, changes, table=self.table, has_snapshots=has_snapshots)
            if self.commit(new):
                return new
            time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise CommitConflictError(
            f"Gave up committing a schema change to {self.table} after {MAX_COMMIT_ATTEMPTS} "
            "lost races; nothing of it was written.", table=self.table, rule="commit-conflict")
