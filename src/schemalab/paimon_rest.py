"""Writes through Paimon's REST catalog, as Java Paimon 2.0's ``RESTCatalog`` makes them.

The writer writes what Java's client writes itself (data files, manifests, manifest lists,
under the table path the catalog's ``getTable`` names) and hands the rest to the catalog:

- CREATE TABLE is ``createTable`` (``POST /v1/{prefix}/databases/{db}/tables`` with the
  identifier and the schema: fields, partition keys, primary keys, options, comment); the
  server's catalog writes ``schema-0``.
- ALTER is ``alterTable`` (``POST .../tables/{table}`` with Paimon's ``SchemaChange`` JSON
  list: ``addColumn``, ``renameColumn``, ``setOption``, ...); the server applies the changes
  to its latest schema with Java's rules and writes ``schema-N``. schemalab checks them
  with its own rules first, so a refused change sends nothing.
- A snapshot is ``commitSnapshot`` (``POST .../tables/{table}/commit`` with the table's
  uuid, the uuid of the snapshot the commit builds on, the snapshot and the partition
  statistics of its delta): the server (Java's ``CatalogSnapshotCommit`` on the client,
  ``RenamingSnapshotCommit`` on the server's side) answers ``success: false`` when its
  latest snapshot is no longer the base, and otherwise writes ``snapshot-N`` and the
  ``LATEST`` hint itself. The latest snapshot is the catalog's (``GET .../snapshot``),
  as Java's ``SnapshotManager`` asks its ``SnapshotLoader``.

A commit that lost (``success: false`` after another writer's commit) is re-read and
retried like a filesystem commit (:func:`schemalab.paimon.commit.commit`). A catalog that
fails while committing (HTTP 5xx, a dropped connection) may have committed: the error says
so (rule ``catalog-commit-unknown``) and the files stay, as Java's commit keeps them. What
has no catalog API here (tags, branches, rollback and expire procedures, tables whose files
need the catalog's data tokens) is refused, naming it (rule ``catalog-read-only``): writing
those files behind the catalog would fork the table.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError, TableExistsError, TableNotFoundError
from schemalab.paimon.commit import UNKNOWN_OUTCOME
from schemalab.paimon.listing import partition_values
from schemalab.paimon.manifest import FileKind, ManifestEntry
from schemalab.paimon.refs import BRANCH_SUFFIX
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.schema import changes as ch
from schemalab.schema.apply import apply_changes
from schemalab.schema.table_schema import TableSchema
from schemalab.table import Table
from schemalab.types.parse import type_to_json

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.paimon.write.files import WriteTarget

#: HTTP statuses after which the catalog did not apply the request
_REFUSED = frozenset({400, 401, 403, 404, 405, 406, 409, 501})
TIMEOUT_S = 60.0
DEFAULT_PARTITION = "__DEFAULT_PARTITION__"


def read_only(catalog: str, what: str, why: str | None = None) -> SchemaLabError:
    """Why a write through Paimon's REST catalog is refused."""
    return SchemaLabError(
        f"{what} through Paimon's REST catalog{' ' + catalog if catalog else ''} is not "
        "supported: "
        + (why or "the catalog's REST API has no call for it, and writing the table's files "
           "behind the catalog would fork the table")
        + "; run it with Paimon (Java, or pypaimon) through the catalog",
        rule="catalog-read-only")


class RestError(Exception):
    """A catalog's answer that is not a success: its HTTP status (0: no answer) and text."""

    def __init__(self, status: int, message: str, resource_type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        #: the ErrorResponse's ``resourceType`` (``SNAPSHOT``, ``TABLE``, ...)
        self.resource_type = resource_type

    @property
    def refused(self) -> bool:
        """Whether the catalog surely did not apply the request."""
        return self.status in _REFUSED or self.status == -1


class RestApi:
    """Paimon's REST catalog API with schemalab's own JSON, through pypaimon's client for
    the address, the resource paths and the authentication (bearer token, DLF signing)."""

    def __init__(self, pypaimon_catalog: Any, catalog: str) -> None:
        self.api = pypaimon_catalog.rest_api
        self.paths = self.api.resource_paths
        self.catalog = catalog
        #: the catalog vends per-table data tokens (credentials the table's files need)
        self.data_tokens = str(getattr(pypaimon_catalog, "data_token_enabled", "")
                               ).lower() == "true"

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The answer's JSON (None when empty); :class:`RestError` for anything but 2xx."""
        import requests
        from pypaimon.api.typedef import RESTAuthParameter

        data = "" if body is None else json.dumps(body, ensure_ascii=False)
        headers = self.api.rest_auth_function(RESTAuthParameter(
            path=path, parameters={}, method=method, data=data))
        headers = {**headers, "Content-Type": "application/json"}
        url = self.api.client.get_uri() + path
        try:
            r = requests.request(method, url, data=data.encode("utf-8") if data else None,
                                 headers=headers, timeout=TIMEOUT_S)
        except requests.ConnectionError as e:
            # nothing sent (refused connection) or no answer (reset, timeout): only the
            # first is sure not to have reached the catalog
            sent = not isinstance(e, requests.ConnectTimeout) and "NewConnectionError" \
                not in repr(e)
            raise RestError(0 if sent else -1, f"{type(e).__name__}: {e}") from None
        except requests.Timeout as e:
            raise RestError(0, f"no answer within {TIMEOUT_S:.0f} s: {e}") from None
        if not r.ok:
            try:
                err = json.loads(r.text)
                message, kind = str(err.get("message") or r.text), err.get("resourceType")
            except (ValueError, AttributeError):
                message, kind = r.text, None
            raise RestError(r.status_code, f"HTTP {r.status_code}: {message.strip()}", kind)
        return json.loads(r.text) if r.text.strip() else None


@dataclass(frozen=True)
class RestTable:
    """One table of a Paimon REST catalog, as its writes address it."""

    api: RestApi
    database: str
    table: str
    #: the table's uuid (``getTable``'s ``id``): a commit to a table dropped and created
    #: again under the same name is refused
    table_id: str

    @property
    def identifier(self) -> str:
        return f"{self.database}.{self.table}"

    def get(self, what: str) -> Any:
        return self.api.call("GET", what)


def load_rest_table(api: RestApi, identifier: str) -> RestTable:
    db, _, name = identifier.partition(".")
    try:
        got = api.call("GET", api.paths.table(db, name))
    except RestError as e:
        if e.status == 404:
            raise TableNotFoundError(f"Table {identifier} does not exist in catalog "
                                     f"{api.catalog}.", table=identifier,
                                     rule="table-must-exist") from None
        raise _unavailable(api.catalog, f"cannot load table {identifier}", e) from None
    return RestTable(api, db, name, str(got.get("id") or ""))


def _unavailable(catalog: str, what: str, e: RestError) -> SchemaLabError:
    return SchemaLabError(f"Catalog {catalog} {what}: {e.message}", rule="catalog-unavailable")


def _refused(table: str, what: str, e: RestError | str) -> SchemaLabError:
    why = e.message if isinstance(e, RestError) else e
    return SchemaLabError(f"Table {table}: the catalog refused {what}: {why}", table=table,
                          rule="catalog-commit-refused")


def _unknown(table: str, what: str, e: RestError) -> SchemaLabError:
    return SchemaLabError(
        f"Table {table}: the catalog failed during {what} and its outcome is unknown: "
        f"{e.message}; load the table to see whether it is there (its files are kept)",
        table=table, rule=UNKNOWN_OUTCOME)


# --------------------------------------------------------------------------------------------
# Snapshots: the commit endpoint
# --------------------------------------------------------------------------------------------


class RestCommitter:
    """A :class:`~schemalab.paimon.commit.SnapshotCommitter` committing through the REST
    catalog's commit endpoint; ``snapshots`` reads the files the catalog writes."""

    def __init__(self, rest: RestTable, snapshots: SnapshotManager, schema: TableSchema) -> None:
        self.rest = rest
        self.snapshots = snapshots
        self.schema = schema

    def latest(self) -> Snapshot | None:
        """The catalog's latest snapshot (``GET .../snapshot``); a directory holding
        snapshots the catalog does not know is refused (they were written behind it)."""
        rest = self.rest
        # the directory first: a snapshot another writer commits through the catalog after
        # the catalog's answer is not one written behind it
        files = self.snapshots.list_ids()
        try:
            got = rest.get(rest.api.paths.table_snapshot(rest.database, rest.table))
        except RestError as e:
            if e.status != 404 or e.resource_type != "SNAPSHOT":
                if e.status == 404:
                    raise TableNotFoundError(f"Table {rest.identifier} does not exist in "
                                             f"catalog {rest.api.catalog}.",
                                             table=rest.identifier,
                                             rule="table-must-exist") from None
                raise _unavailable(rest.api.catalog, f"cannot load the latest snapshot of "
                                   f"{rest.identifier}", e) from None
            got = None
        # GetTableSnapshotResponse: {"snapshot": TableSnapshot {"snapshot": Snapshot, ...}}
        held = (got or {}).get("snapshot") or {}
        if not held.get("snapshot"):
            if files:
                raise _refused(rest.identifier, "a commit", (
                    f"it knows no snapshot of the table, but its directory holds snapshots "
                    f"{files[0]}..{files[-1]} written behind it; schemalab does not fork the "
                    "table"))
            return None
        return Snapshot.from_dict(held["snapshot"], path=f"catalog {rest.api.catalog}")

    def commit(self, snapshot: Snapshot, delta: Sequence[ManifestEntry],
               base: Snapshot | None) -> bool:
        rest = self.rest
        body = {"tableId": rest.table_id, "baseSnapshotUuid": base.uuid if base else None,
                "snapshot": snapshot.to_dict("java"),
                "statistics": partition_statistics(delta, self.schema)}
        what = f"the commit of snapshot {snapshot.id}"
        try:
            got = rest.api.call("POST", rest.api.paths.commit_table(rest.database, rest.table),
                                body)
        except RestError as e:
            if e.refused:
                raise _refused(rest.identifier, what, e) from None
            raise _unknown(rest.identifier, what, e) from None
        if isinstance(got, dict) and got.get("success"):
            return True
        now = self.latest()
        if (now.uuid if now else None) == (base.uuid if base else None) and \
                (now.id if now else None) == (base.id if base else None):
            # nobody committed meanwhile: not a lost race, a refusal
            raise _refused(rest.identifier, what, "it answered success=false while its latest "
                           f"snapshot is still {base.id if base else 'none'}")
        return False


def partition_statistics(delta: Sequence[ManifestEntry],
                         schema: TableSchema) -> list[dict[str, Any]]:
    """Java's ``PartitionStatistics`` of a commit's delta, one per partition: records,
    bytes and files added less those deleted, the newest file's creation time, buckets."""
    default = schema.options.get("partition.default-name", DEFAULT_PARTITION)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for e in delta:
        values = partition_values(e, schema)
        sign = -1 if e.kind == FileKind.DELETE else 1
        spec = {k: default if v is None else str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in zip(schema.partition_keys, values, strict=True)}
        s = out.setdefault(values, {"spec": spec, "recordCount": 0, "fileSizeInBytes": 0,
                                    "fileCount": 0, "lastFileCreationTime": 0,
                                    "totalBuckets": e.total_buckets})
        s["recordCount"] += sign * e.file.row_count
        s["fileSizeInBytes"] += sign * e.file.file_size
        s["fileCount"] += sign
        s["lastFileCreationTime"] = max(s["lastFileCreationTime"], e.file.creation_time or 0)
    return list(out.values())


# --------------------------------------------------------------------------------------------
# Schemas: createTable and alterTable
# --------------------------------------------------------------------------------------------


def _move_json(move: ch.Move, table: str) -> dict[str, Any]:
    if move.reference_parent:
        raise read_only("", f"ALTER of {table} moving {move.field_name} within a struct",
                        "Paimon's SchemaChange moves top-level columns only")
    return {"fieldName": move.field_name, "referenceFieldName": move.reference,
            "type": move.kind}


def _names(path: Sequence[str]) -> list[str]:
    return list(path)


def change_json(c: ch.SchemaChange, table: str) -> dict[str, Any]:
    """Paimon's ``SchemaChange`` JSON (what ``alterTable`` takes) of one change."""
    if isinstance(c, ch.AddColumn):
        return {"action": "addColumn", "fieldNames": _names(c.path),
                "dataType": type_to_json(c.data_type), "comment": c.comment,
                "move": None if c.move is None else _move_json(c.move, table)}
    if isinstance(c, ch.DropColumn):
        return {"action": "dropColumn", "fieldNames": _names(c.path)}
    if isinstance(c, ch.RenameColumn):
        return {"action": "renameColumn", "fieldNames": _names(c.path), "newName": c.new_name}
    if isinstance(c, ch.UpdateColumnType):
        return {"action": "updateColumnType", "fieldNames": _names(c.path),
                "newDataType": type_to_json(c.new_type), "keepNullability": c.keep_nullability}
    if isinstance(c, ch.UpdateColumnNullability):
        return {"action": "updateColumnNullability", "fieldNames": _names(c.path),
                "newNullability": c.nullable}
    if isinstance(c, ch.UpdateColumnComment):
        return {"action": "updateColumnComment", "fieldNames": _names(c.path),
                "newComment": c.comment}
    if isinstance(c, ch.UpdateColumnDefault):
        return {"action": "updateColumnDefaultValue", "fieldNames": _names(c.path),
                "newDefaultValue": c.default}
    if isinstance(c, ch.UpdateColumnPosition):
        if c.parent:
            raise read_only("", f"ALTER of {table} moving {'.'.join(c.path)}",
                            "Paimon's SchemaChange moves top-level columns only")
        return {"action": "updateColumnPosition", "move": _move_json(c.move, table)}
    if isinstance(c, ch.SetOption):
        return {"action": "setOption", "key": c.key, "value": c.value}
    if isinstance(c, ch.RemoveOption):
        return {"action": "removeOption", "key": c.key}
    if isinstance(c, ch.UpdateComment):
        return {"action": "updateComment", "comment": c.comment}
    raise read_only("", f"ALTER of {table} ({type(c).__name__})",
                    "Paimon's SchemaChange has no such change")


def alter_table(rest: RestTable, latest: TableSchema, changes: Sequence[ch.SchemaChange],
                *, has_snapshots: bool) -> None:
    """``alterTable``: checked first with schemalab's rules on ``latest`` (nothing is sent
    when they refuse), then applied by the catalog to its latest schema."""
    apply_changes(latest, list(changes), table=rest.identifier, has_snapshots=has_snapshots)
    body = {"changes": [change_json(c, rest.identifier) for c in changes]}
    try:
        rest.api.call("POST", rest.api.paths.table(rest.database, rest.table), body)
    except RestError as e:
        if e.refused:
            raise _refused(rest.identifier, "the ALTER", e) from None
        raise _unknown(rest.identifier, "the ALTER", e) from None


def create_table(api: RestApi, pypaimon_catalog: Any, identifier: str,
                 schema: TableSchema) -> None:
    """``createTable`` (its database made first when missing, as a warehouse directory's
    databases appear)."""
    db, _, name = identifier.partition(".")
    d = schema.to_dict("java")
    body = {"identifier": {"database": db, "object": name},
            "schema": {"fields": d["fields"], "partitionKeys": d["partitionKeys"],
                       "primaryKeys": d["primaryKeys"], "options": d["options"],
                       "comment": schema.comment}}
    try:
        pypaimon_catalog.create_database(db, True)
    except Exception as e:  # noqa: BLE001 - pypaimon raises many kinds
        raise _refused(identifier, "CREATE DATABASE", RestError(0, str(e))) from None
    try:
        api.call("POST", api.paths.tables(db), body)
    except RestError as e:
        if e.status == 409:
            raise TableExistsError(f"Table {identifier} already exists.", table=identifier,
                                   rule="table-must-be-new") from None
        if e.refused:
            raise _refused(identifier, "CREATE TABLE", e) from None
        raise _unknown(identifier, "CREATE TABLE", e) from None


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


class PaimonRestTable(Table):
    """A table of Paimon's REST catalog, read like any Paimon table. INSERT, DELETE and
    compaction commit their snapshots through the catalog's commit endpoint, ALTER through
    ``alterTable``. Its branches are read-only here (rule ``catalog-read-only``)."""

    #: the catalog the table was found through
    catalog_name = "?"
    #: how its writes reach the catalog (None: opened without one, writes refused)
    rest: RestTable | None = None

    def _rest(self, what: str) -> RestTable:
        if self.rest is None:
            raise read_only(self.catalog_name, f"{what} of {self.name}")
        if self.rest.api.data_tokens:
            raise read_only(self.catalog_name, f"{what} of {self.name}", (
                "the catalog vends data tokens (data-token.enabled) for the table's files, "
                "and schemalab's file access does not take them"))
        return self.rest

    def _write_target(self) -> WriteTarget:
        rest = self._rest("A write")
        target = super()._write_target()
        return dataclasses.replace(
            target, committer=RestCommitter(rest, self.snapshot_manager, target.schema))

    def _commit_changes(self, changes: Sequence[ch.SchemaChange],
                        has_snapshots: bool) -> TableSchema:
        rest = self._rest("ALTER")
        latest = self.schema_manager.latest()
        if latest is None:
            raise SchemaLabError(f"Table {self.name} has no schema.", table=self.name,
                                 rule="table-must-exist")
        alter_table(rest, latest, changes, has_snapshots=has_snapshots)
        self.schema_manager.refresh()
        new = self.schema_manager.latest()
        assert new is not None
        return new

    def branch(self, name: str) -> Table:
        t = super().branch(name)
        if t is self:
            return t
        b = _RestBranch(self.path, self.name.split(BRANCH_SUFFIX)[0], warehouse=self.warehouse,
                        spark=self._spark, branch=t.branch_name)
        b.catalog_name = self.catalog_name
        return b


class _RestBranch(Table):
    """A branch of a REST catalog's table: read; its writes refused (the catalog's commit
    endpoint takes a branch, but schemalab makes no branch commits through it yet)."""

    catalog_name = "?"

    def _refuse(self, what: str) -> SchemaLabError:
        return read_only(self.catalog_name, f"{what} of branch {self.name}",
                         "schemalab commits to a REST catalog's main branch only")

    def _write_target(self) -> WriteTarget:
        raise self._refuse("A write")

    def _commit_changes(self, changes: Sequence[ch.SchemaChange],
                        has_snapshots: bool) -> TableSchema:
        raise self._refuse("ALTER")

