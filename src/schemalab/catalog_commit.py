"""Commits through an Iceberg catalog, as Iceberg's clients make them: the writer's change
(:mod:`schemalab.iceberg.write.commit`) is applied to the table's current metadata, and the
difference is sent as the REST spec's updates (``add-schema``, ``set-current-schema``,
``add-spec``, ``add-snapshot``, ``set-snapshot-ref``, ``set-properties``, ...) with the
requirements that make it safe (``assert-table-uuid``, ``assert-current-schema-id``,
``assert-last-assigned-field-id``, ``assert-ref-snapshot-id``, ...), through pyiceberg's
``commit_table``: the REST ``updateTable`` (a 409 when a requirement fails), or the SQL
catalog's compare-and-swap of the metadata location. The catalog writes the metadata file.

A commit another writer beat (``CommitFailedException``) is re-read, re-applied and retried
like a Hadoop-layout commit; an update the catalog refuses names the table and the
catalog's reason (rule ``catalog-commit-refused``).

    >>> base = {"table-uuid": "u", "current-schema-id": 0, "last-column-id": 1,
    ...         "schemas": [{"schema-id": 0, "type": "struct", "fields": []}],
    ...         "properties": {}, "refs": {}, "snapshots": []}
    >>> new = {**base, "properties": {"k": "v"}}
    >>> reqs, ups = metadata_updates(base, new, "db.t")
    >>> [r["type"] for r in reqs], ups
    (['assert-table-uuid'], [{'action': 'set-properties', 'updates': {'k': 'v'}}])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schemalab import fileio
from schemalab.errors import SchemaLabError, TableExistsError
from schemalab.iceberg.metadata import load_json

#: metadata keys a catalog derives from the updates (or keeps itself): never sent
DERIVED = frozenset({
    "last-updated-ms", "last-column-id", "schema", "partition-spec", "last-partition-id",
    "current-snapshot-id", "last-sequence-number", "next-row-id", "snapshot-log",
    "metadata-log"})
#: what an update of each kind of list is keyed by
_IDS = {"schemas": "schema-id", "partition-specs": "spec-id", "sort-orders": "order-id",
        "snapshots": "snapshot-id"}


def _refused(table: str, why: str, what: str = "the commit") -> SchemaLabError:
    return SchemaLabError(f"Table {table}: the catalog refused {what}: {why}",
                          table=table, rule="catalog-commit-refused")


def _added(base: dict[str, Any], new: dict[str, Any], key: str,
           table: str) -> list[dict[str, Any]]:
    """The entries of list ``key`` that ``new`` adds; an entry that changed is refused
    (schemas, specs, sort orders and snapshots never change once written)."""
    ident = _IDS[key]
    before = {e[ident]: e for e in base.get(key) or ()}
    out = []
    for e in new.get(key) or ():
        old = before.get(e[ident])
        if old is None:
            out.append(e)
        elif old != e:
            raise _refused(table, f"{key} entry {e[ident]} would change; they are immutable")
    return out


def _removed(base: dict[str, Any], new: dict[str, Any], key: str) -> list[int]:
    ident = _IDS[key]
    kept = {e[ident] for e in new.get(key) or ()}
    return [e[ident] for e in base.get(key) or () if e[ident] not in kept]


#: (list, current id key, add action, its field, set action, its field, metadata key of
#: the last assigned id, its requirement's field); requirements are "assert-" + the field
_EVOLUTION = (
    ("schemas", "current-schema-id", "add-schema", "schema", "set-current-schema",
     "schema-id", "last-column-id", "last-assigned-field-id"),
    ("partition-specs", "default-spec-id", "add-spec", "spec", "set-default-spec", "spec-id",
     "last-partition-id", "last-assigned-partition-id"),
    ("sort-orders", "default-sort-order-id", "add-sort-order", "sort-order",
     "set-default-sort-order", "sort-order-id", "", ""))


def _evolution(base: dict[str, Any], new: dict[str, Any], table: str
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Requirements and updates for schemas, partition specs and sort orders."""
    reqs: list[dict[str, Any]] = []
    ups: list[dict[str, Any]] = []
    for key, current, add, field, set_, set_field, last, last_field in _EVOLUTION:
        added = _added(base, new, key, table)
        ups.extend({"action": add, field: e} for e in added)
        added_ids = {e[_IDS[key]] for e in added}
        moved = new.get(current) != base.get(current)
        if added or moved:
            reqs.append({"type": f"assert-{current}", current: base.get(current)})
        if added and last:
            reqs.append({"type": f"assert-{last_field}", last_field: base.get(last)})
        if moved:
            # -1: the last one added (a catalog may give an added entry an id of its own)
            ups.append({"action": set_, set_field:
                        -1 if new.get(current) in added_ids else new.get(current)})
    return reqs, ups


def _properties(base: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    before, after = base.get("properties") or {}, new.get("properties") or {}
    ups: list[dict[str, Any]] = []
    changed = {k: str(v) for k, v in after.items() if before.get(k) != v}
    if changed:
        ups.append({"action": "set-properties", "updates": changed})
    gone = [k for k in before if k not in after]
    if gone:
        ups.append({"action": "remove-properties", "removals": gone})
    return ups


def _snapshots_and_refs(base: dict[str, Any], new: dict[str, Any], table: str
                        ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    reqs: list[dict[str, Any]] = []
    ups: list[dict[str, Any]] = []
    before, after = base.get("refs") or {}, new.get("refs") or {}
    # a table with no refs but a current snapshot (v1 files) has main there
    if not before and int(base.get("current-snapshot-id") or -1) >= 0:
        before = {"main": {"snapshot-id": base["current-snapshot-id"], "type": "branch"}}
    for name in sorted(set(before) | set(after)):
        if before.get(name) == after.get(name):
            continue
        old = before.get(name)
        reqs.append({"type": "assert-ref-snapshot-id", "ref": name,
                     "snapshot-id": None if old is None else old["snapshot-id"]})
        if name not in after:
            ups.append({"action": "remove-snapshot-ref", "ref-name": name})
    ups.extend({"action": "add-snapshot", "snapshot": s}
               for s in _added(base, new, "snapshots", table))
    for name, ref in sorted(after.items()):
        if before.get(name) != ref:
            ups.append({"action": "set-snapshot-ref", "ref-name": name, **ref})
    gone = _removed(base, new, "snapshots")
    if gone:
        ups.append({"action": "remove-snapshots", "snapshot-ids": gone})
    return reqs, ups


def metadata_updates(base: dict[str, Any], new: dict[str, Any], table: str
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The REST spec's requirements and updates that turn metadata ``base`` into ``new``
    (both as their JSON); a difference no update expresses is refused, naming the key."""
    reqs: list[dict[str, Any]] = [{"type": "assert-table-uuid", "uuid": base["table-uuid"]}]
    ups: list[dict[str, Any]] = []
    if new.get("format-version") != base.get("format-version"):
        ups.append({"action": "upgrade-format-version",
                    "format-version": new["format-version"]})
    r, u = _evolution(base, new, table)
    reqs += r
    ups += u
    for key in ("schemas", "partition-specs"):
        gone = _removed(base, new, key)
        if gone:
            ups.append({"action": "remove-schemas" if key == "schemas"
                        else "remove-partition-specs",
                        "schema-ids" if key == "schemas" else "spec-ids": gone})
    if new.get("location") != base.get("location"):
        ups.append({"action": "set-location", "location": new["location"]})
    ups += _properties(base, new)
    r, u = _snapshots_and_refs(base, new, table)
    reqs += r
    ups += u
    handled = {"format-version", "table-uuid", "location", "properties", "refs",
               "current-schema-id", "default-spec-id", "default-sort-order-id", *_IDS}
    for key in sorted(set(base) | set(new)):
        if key not in handled and key not in DERIVED and base.get(key) != new.get(key):
            raise _refused(table, f"schemalab cannot send a change of {key!r} as an update")
    return reqs, ups


class CatalogTarget:
    """A :class:`~schemalab.iceberg.write.commit.CommitTarget` that commits through an
    Iceberg catalog (pyiceberg's ``Catalog``) to table ``identifier``."""

    def __init__(self, catalog: Any, identifier: str, table_path: str) -> None:
        self.catalog = catalog
        self.identifier = identifier
        self.table_path = table_path
        self._loaded: tuple[str, Any] | None = None

    def current(self) -> tuple[str, dict[str, Any]]:
        try:
            tbl = self.catalog.load_table(self.identifier)
        except Exception as e:  # noqa: BLE001 - pyiceberg raises many kinds
            raise SchemaLabError(f"Table {self.identifier}: the catalog cannot load it: "
                                 f"{_first_line(e)}", table=self.identifier,
                                 rule="catalog-unavailable") from None
        location = str(tbl.metadata_location)
        self._loaded = (location, tbl)
        # the metadata file itself: a catalog may answer with fewer snapshots (refs only)
        return location, load_json(fileio.normalize(location))

    def swap(self, base_file: str, base: dict[str, Any],
             new: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        from pyiceberg.exceptions import CommitFailedException

        assert self._loaded is not None and self._loaded[0] == base_file
        reqs, ups = metadata_updates(base, new, self.identifier)
        if not ups:
            return base_file, base
        requirements, updates = pyiceberg_models(reqs, ups, self.identifier)
        try:
            done = self.catalog.commit_table(self._loaded[1], requirements, updates)
        except CommitFailedException:  # a requirement failed: another writer committed
            return None
        except Exception as e:  # noqa: BLE001 - a refused update, an unreachable catalog
            if type(e).__name__ == "CommitStateUnknownException":
                raise SchemaLabError(
                    f"Table {self.identifier}: the catalog failed during the commit and its "
                    f"outcome is unknown: {_first_line(e)}; load the table to see whether it "
                    "is there (its files are kept)", table=self.identifier,
                    rule="catalog-commit-unknown") from None
            raise _refused(self.identifier, _first_line(e)) from None
        location = str(done.metadata_location)
        return location, load_json(fileio.normalize(location))


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def pyiceberg_models(reqs: Iterable[dict[str, Any]], ups: Iterable[dict[str, Any]],
            table: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """pyiceberg's requirement and update values of the REST spec's JSON."""
    from pydantic import TypeAdapter, ValidationError
    from pyiceberg.table.update import TableRequirement, TableUpdate

    try:
        r = TypeAdapter(TableRequirement)
        u = TypeAdapter(TableUpdate)
        return (tuple(r.validate_python(x) for x in reqs),
                tuple(u.validate_python(x) for x in ups))
    except ValidationError as e:
        raise _refused(table, f"pyiceberg cannot express the update: {e}") from None


def create_table(catalog: Any, identifier: str, schema: dict[str, Any],
                 spec: dict[str, Any], properties: dict[str, str]) -> None:
    """CREATE TABLE through the catalog (``createTable``), its namespace made first when
    missing (a warehouse directory's databases appear the same way). ``schema`` and
    ``spec`` are the spec's JSON; the catalog may assign ids of its own."""
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema

    namespace = identifier.rpartition(".")[0]
    try:
        catalog.create_namespace_if_not_exists(namespace)
        catalog.create_table(identifier, schema=Schema.model_validate(schema),
                             partition_spec=PartitionSpec.model_validate(spec),
                             properties=properties)
    except Exception as e:  # noqa: BLE001 - pyiceberg raises many kinds
        if type(e).__name__ == "TableAlreadyExistsError":
            raise TableExistsError(f"Table {identifier} already exists.", table=identifier,
                                   rule="table-must-be-new") from None
        raise _refused(identifier, _first_line(e), "CREATE TABLE") from None
