"""Tables by catalog name: Iceberg catalogs through pyiceberg's ``load_catalog`` (REST, SQL,
Hive, Glue, ...), Paimon's REST catalog through pypaimon's REST client, and Paimon's
filesystem catalog (a :class:`~schemalab.Warehouse` directory).

    t = sl.open_table("db.t", catalog={"type": "rest", "uri": "http://127.0.0.1:8181"})
    t = sl.open_table("db.t", catalog="lake")          # a catalog configured by name
    wh = sl.Warehouse(catalog="lake"); wh.list_tables(); wh.table("db.t")

An Iceberg catalog is asked only where a table is: ``loadTable`` gives the metadata location
and the FileIO properties (the catalog's own, the table's ``config`` and the best-matching
``storage-credentials``, as the REST spec orders them), and schemalab reads the table itself
with :mod:`schemalab.iceberg`. A REST catalog asked for referenced snapshots only
(``snapshot-loading-mode: refs`` in the client's properties or the server's ``/v1/config``
defaults) answers with fewer snapshots than the table has; that is detected (snapshots the
snapshot log or a parent names are missing) and the table's history says it is partial.

Catalogs by name come from ``~/.schemalab.yaml`` (``$SCHEMALAB_CONFIG`` names another file),
then from pyiceberg's own configuration (``~/.pyiceberg.yaml``, ``$PYICEBERG_HOME``,
``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables)::

    catalogs:
      lake:                    # schemalab inspect --catalog lake db.t
        type: rest             # anything pyiceberg's load_catalog takes
        uri: http://127.0.0.1:8181
      local:
        type: sql
        uri: sqlite:////data/catalog.db
        warehouse: file:///data/iceberg
      paimon:
        type: filesystem       # Paimon's filesystem catalog: a warehouse directory
        warehouse: /data/paimon
      team:
        type: paimon-rest      # Paimon's REST catalog (or metastore: rest)
        uri: http://127.0.0.1:10000
        warehouse: wh
        token.provider: bear
        token: ...

An Iceberg catalog's tables are written as well: INSERT and ALTER (SQL through
``Warehouse(catalog=...)``, or the methods of the table ``open_table`` returns) write the data
and the manifests, and commit through the catalog (:mod:`schemalab.catalog_commit`: the REST
``updateTable`` with requirements, or the SQL catalog's compare-and-swap of the metadata
location), so a concurrent writer's commit is never lost. Paimon's REST catalog's tables
are written the same way: CREATE TABLE, ALTER, INSERT and DELETE commit through its
``createTable``, ``alterTable`` and ``commit`` endpoints (:mod:`schemalab.paimon_rest`).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.catalog_commit import CatalogTarget
from schemalab.errors import (
    SchemaLabError,
    TableNotFoundError,
)
from schemalab.iceberg import IcebergTable
from schemalab.iceberg.metadata import load_json, parse_table_metadata
from schemalab.iceberg.write import WritableIcebergTable
from schemalab.paimon_rest import PaimonRestTable, RestApi, load_rest_table

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

    from schemalab.history.model import TableHistory

CONFIG_ENV = "SCHEMALAB_CONFIG"
DEFAULT_CONFIG = os.path.join("~", ".schemalab.yaml")
#: catalog ``type`` values that mean Paimon's filesystem catalog (a warehouse directory)
PAIMON_FILESYSTEM = ("filesystem", "paimon", "paimon-filesystem")
#: Paimon's REST catalog (see :func:`connect`)
PAIMON_REST = ("paimon-rest",)

#: Iceberg FileIO property -> the option name :func:`schemalab.fileio.configure` takes
_S3_OPTIONS = {
    "s3.endpoint": "s3.endpoint",
    "s3.access-key-id": "s3.access-key",
    "s3.secret-access-key": "s3.secret-key",
    "s3.session-token": "s3.session-token",
    "s3.region": "s3.region",
    "client.region": "s3.region",
    "s3.path-style-access": "s3.path.style.access",
}


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


def config_file() -> str:
    """The schemalab configuration file: ``$SCHEMALAB_CONFIG``, else ``~/.schemalab.yaml``."""
    return os.path.expanduser(os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)


def _schemalab_catalogs() -> dict[str, dict[str, Any]]:
    path = config_file()
    if not os.path.isfile(path):
        return {}
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
    except yaml.YAMLError as e:
        raise SchemaLabError(f"{path} is not valid YAML: {e}", rule="catalog-config") from None
    cats = doc.get("catalogs", {}) if isinstance(doc, dict) else None
    if not isinstance(cats, dict) or not all(isinstance(v, dict) for v in cats.values()):
        raise SchemaLabError(f"{path}: 'catalogs' must map each catalog name to its "
                             "properties (type, uri, warehouse, ...)", rule="catalog-config")
    return {str(k): dict(v) for k, v in cats.items()}


def _client(module: str, what: str) -> None:
    """Refuse by name when the client library ``what`` needs is not installed (it is an
    optional dependency: ``pip install 'schemalab[catalogs]'``)."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise SchemaLabError(f"{what} needs {module}, which is not installed: pip install "
                             "'schemalab[catalogs]'", rule="catalog-config") from None


def _pyiceberg_catalog(name: str) -> dict[str, Any] | None:
    try:
        from pyiceberg.utils.config import Config
    except ImportError:  # no pyiceberg: no configuration of its own to look in
        return None

    found = Config().get_catalog_config(name)
    return dict(found) if found else None


def catalog_names() -> list[str]:
    """The catalogs configured in ``~/.schemalab.yaml`` (pyiceberg's are looked up by name
    only)."""
    return sorted(_schemalab_catalogs())


def catalog_config(catalog: str | Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """``(name, properties)`` of a catalog given by name or as properties. Properties may
    carry the catalog's ``name`` (pyiceberg's SQL catalog keys its tables by it); without
    one the name is the ``type``."""
    if isinstance(catalog, Mapping):
        props = {str(k): str(v) for k, v in catalog.items()}
        return props.pop("name", None) or props.get("type", "catalog"), props
    if not isinstance(catalog, str) or not catalog:
        raise SchemaLabError(f"A catalog is a name or a dict of properties, not {catalog!r}",
                             rule="catalog-config")
    found = _schemalab_catalogs().get(catalog) or _pyiceberg_catalog(catalog)
    if found is None:
        known = catalog_names()
        raise SchemaLabError(
            f"No catalog named {catalog!r}: configure it under 'catalogs:' in {config_file()}"
            f" (or in pyiceberg's .pyiceberg.yaml / PYICEBERG_CATALOG__{catalog.upper()}__URI)"
            + (f"; configured: {', '.join(known)}" if known else ""), rule="catalog-config")
    # a table's catalog name is the configured name (the SQL catalog keys tables by it)
    return catalog, {str(k): str(v) for k, v in found.items() if k != "name"}


def is_paimon(props: Mapping[str, str]) -> bool:
    """Whether catalog properties name one of Paimon's catalogs."""
    kind = props.get("type", "").lower()
    return kind in PAIMON_FILESYSTEM + PAIMON_REST or "metastore" in props


def is_paimon_filesystem(props: Mapping[str, str]) -> bool:
    """Whether catalog properties name Paimon's filesystem catalog (a warehouse directory)."""
    return is_paimon(props) and not _is_paimon_rest(props)


def _is_paimon_rest(props: Mapping[str, str]) -> bool:
    return (props.get("type", "").lower() in PAIMON_REST
            or props.get("metastore", "").lower() == "rest")


def connect(catalog: str | Mapping[str, Any]) -> IcebergCatalog | PaimonRestCatalog:
    """The catalog ``catalog`` names (not Paimon's filesystem catalog: that is a
    :class:`~schemalab.Warehouse` directory)."""
    name, props = catalog_config(catalog)
    if _is_paimon_rest(props):
        return PaimonRestCatalog({**props, "name": name})
    return IcebergCatalog({**props, "name": name})


def paimon_warehouse(catalog: str | Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """``(warehouse path, store options)`` of Paimon's filesystem catalog: what
    ``Warehouse(path, options=...)`` takes."""
    name, props = catalog_config(catalog)
    kind = props.pop("type", "").lower()
    metastore = props.pop("metastore", "filesystem").lower()
    if kind in PAIMON_REST or metastore == "rest":
        raise SchemaLabError(f"Catalog {name!r} is Paimon's REST catalog, not a warehouse "
                             "directory", rule="catalog-config")
    if metastore != "filesystem":
        raise SchemaLabError(
            f"Catalog {name!r}: Paimon metastore {metastore!r} is not supported; schemalab "
            "reads Paimon's filesystem catalog (metastore: filesystem)", rule="catalog-config")
    warehouse = props.pop("warehouse", "")
    if not warehouse:
        raise SchemaLabError(f"Catalog {name!r} (Paimon's filesystem catalog) needs a "
                             "'warehouse': the warehouse directory or URI", rule="catalog-config")
    return warehouse, props


def store_options(io_properties: Mapping[str, Any]) -> dict[str, str]:
    """Iceberg FileIO properties (``s3.access-key-id``, ``s3.endpoint``, ...) as the store
    options of :func:`schemalab.fileio.configure`."""
    return {_S3_OPTIONS[k]: str(v) for k, v in io_properties.items()
            if k in _S3_OPTIONS and isinstance(v, str | int | bool)}


# --------------------------------------------------------------------------------------------
# Iceberg catalogs through pyiceberg
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogTableRef:
    """Where a catalog says a table is: what ``loadTable`` answered."""

    catalog: str
    identifier: str
    metadata_location: str
    #: the FileIO properties the table is read with (catalog, table config, credentials)
    io_properties: dict[str, str] = dataclasses.field(repr=False)
    #: snapshot ids the catalog returned
    returned_snapshot_ids: tuple[int, ...]
    #: snapshots the table has (its log, parents, refs, metadata file) that were not returned
    missing_snapshot_ids: tuple[int, ...] = ()
    #: the catalog's own metadata, when schemalab reads from it (a partial answer)
    metadata_json: dict[str, Any] | None = dataclasses.field(default=None, repr=False)
    #: pyiceberg's table: the commit hook (``handle.catalog.commit_table``)
    handle: Any = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def partial(self) -> bool:
        return bool(self.missing_snapshot_ids)


class IcebergCatalog:
    """An Iceberg catalog reached through pyiceberg's ``load_catalog``."""

    def __init__(self, catalog: str | Mapping[str, Any]) -> None:
        self.name, self.properties = catalog_config(catalog)
        if is_paimon(self.properties):
            raise SchemaLabError(f"Catalog {self.name!r} is a Paimon catalog: open it with "
                                 "sl.Warehouse(catalog=...)", rule="catalog-config")
        _client("pyiceberg", f"Iceberg catalog {self.name!r}")
        from pyiceberg.catalog import load_catalog

        try:
            self.pyiceberg = load_catalog(self.name, **self.properties)
        except Exception as e:  # noqa: BLE001 - pyiceberg raises many kinds
            raise _unavailable(self.name, "cannot be opened", e) from None

    def __repr__(self) -> str:
        return f"IcebergCatalog({self.name!r}, type={self.properties.get('type', '?')!r})"

    def describe(self) -> str:
        where = self.properties.get("uri") or self.properties.get("warehouse") or ""
        return f"catalog {self.name}" + (f" ({where})" if where else "")

    def list_databases(self) -> list[str]:
        try:
            return sorted(".".join(ns) for ns in self.pyiceberg.list_namespaces())
        except Exception as e:  # noqa: BLE001
            raise _unavailable(self.name, "cannot list namespaces", e) from None

    def list_tables(self, database: str | None = None) -> list[str]:
        """Qualified names ``db.table`` of every table (or of one namespace's tables)."""
        out: list[str] = []
        for db in [database] if database else self.list_databases():
            try:
                out.extend(".".join(ident) for ident in self.pyiceberg.list_tables(db))
            except Exception as e:  # noqa: BLE001
                if type(e).__name__ == "NoSuchNamespaceError":
                    raise TableNotFoundError(f"Catalog {self.name} has no namespace {db!r}",
                                             rule="table-must-exist") from None
                raise _unavailable(self.name, f"cannot list the tables of {db!r}", e) from None
        return sorted(out)

    def load(self, identifier: str) -> CatalogTableRef:
        """Ask the catalog where table ``identifier`` is (``loadTable``)."""
        try:
            tbl = self.pyiceberg.load_table(identifier)
        except Exception as e:  # noqa: BLE001
            if type(e).__name__ in ("NoSuchTableError", "NoSuchNamespaceError",
                                    "NoSuchIdentifierError"):
                near = _close(identifier, self)
                raise TableNotFoundError(
                    f"Table {identifier} does not exist in {self.describe()}."
                    + (f" Did you mean {near}?" if near else ""),
                    table=identifier, rule="table-must-exist") from None
            raise _unavailable(self.name, f"cannot load table {identifier}", e) from None
        return _table_ref(self.name, identifier, tbl)

    def open(self, identifier: str, spark: SparkSession | None = None) -> CatalogIcebergTable:
        """Table ``identifier``, read by schemalab from where the catalog says it is."""
        return CatalogIcebergTable(self.load(identifier), spark=spark)


def _table_ref(catalog: str, identifier: str, tbl: Any) -> CatalogTableRef:
    md = tbl.metadata
    io_props = {str(k): v for k, v in tbl.io.properties.items() if isinstance(v, str)}
    location = str(tbl.metadata_location)
    fileio.configure(fileio.normalize(location), store_options(io_props))
    returned = tuple(s.snapshot_id for s in md.snapshots)
    missing = _missing_snapshots(md, location)
    metadata_json = json.loads(md.model_dump_json()) if missing else None
    return CatalogTableRef(catalog, identifier, location, io_props, returned, missing,
                           metadata_json, tbl)


def _missing_snapshots(md: Any, location: str) -> tuple[int, ...]:
    """Snapshots the table has that the catalog's answer left out: those its snapshot log,
    its refs and its snapshots' parents name, narrowed (when the metadata file can be read)
    to those the file holds, so snapshots expired long ago are not counted."""
    present = {s.snapshot_id for s in md.snapshots}
    named = {e.snapshot_id for e in md.snapshot_log}
    named |= {s.parent_snapshot_id for s in md.snapshots if s.parent_snapshot_id is not None}
    named |= {r.snapshot_id for r in md.refs.values()}
    if md.current_snapshot_id is not None and md.current_snapshot_id >= 0:
        named.add(md.current_snapshot_id)
    missing = named - present
    if not missing:
        return ()
    try:
        doc = load_json(fileio.normalize(location))
    except (SchemaLabError, OSError):
        return tuple(sorted(missing))
    in_file = {s.get("snapshot-id") for s in doc.get("snapshots") or () if isinstance(s, dict)}
    return tuple(sorted(i for i in in_file if isinstance(i, int) and i not in present))


def _close(identifier: str, cat: IcebergCatalog | PaimonRestCatalog) -> str | None:
    from schemalab.history.names import close_names

    try:
        return close_names(identifier, cat.list_tables())
    except SchemaLabError:
        return None


def _unavailable(name: str, what: str, e: BaseException) -> SchemaLabError:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return SchemaLabError(f"Catalog {name} {what}: {text}", rule="catalog-unavailable")


class CatalogIcebergTable(WritableIcebergTable):
    """An Iceberg table reached through a catalog. Read from the metadata file the catalog
    names; when the catalog answered with only some snapshots (``snapshots=refs``), from the
    catalog's answer, and its history says it is partial. INSERT and ALTER commit through the
    catalog (:mod:`schemalab.catalog_commit`)."""

    def __init__(self, ref: CatalogTableRef, *, spark: SparkSession | None = None) -> None:
        self._spark = spark
        self._load(ref)

    def _load(self, ref: CatalogTableRef) -> None:
        self.catalog_table = ref
        if ref.metadata_json is None:
            IcebergTable.__init__(self, ref.metadata_location, ref.identifier,
                                  spark=self._spark)
            return
        # The catalog's own (partial) metadata, with the table rooted where its file lives.
        location = fileio.normalize(ref.metadata_location)
        parent = os.path.dirname(location)
        self.path = os.path.dirname(parent) if os.path.basename(parent) == "metadata" else parent
        self.name = ref.identifier
        self.metadata_file = location
        self.metadata = parse_table_metadata(ref.metadata_json, location)
        self._manifest_cache = {}
        self._list_cache = {}

    @property
    def commit_target(self) -> CatalogTarget:
        return CatalogTarget(self._pyiceberg_catalog(), self.catalog_table.identifier,
                             self.path)

    def _pyiceberg_catalog(self) -> Any:
        catalog = getattr(self.catalog_table.handle, "catalog", None)
        if catalog is None:
            raise SchemaLabError(f"Table {self.name} was not loaded through a catalog that "
                                 "commits", table=self.name, rule="catalog-config")
        return catalog

    def refresh(self) -> None:
        """Ask the catalog again where the table is (after a commit, or another writer's)."""
        ref = self.catalog_table
        try:
            tbl = self._pyiceberg_catalog().load_table(ref.identifier)
        except Exception as e:  # noqa: BLE001
            raise _unavailable(ref.catalog, f"cannot load table {ref.identifier}", e) from None
        self._load(_table_ref(ref.catalog, ref.identifier, tbl))

    def __repr__(self) -> str:
        flag = ", partial" if self.catalog_table.partial else ""
        return f"{super().__repr__()[:-1]}, catalog={self.catalog_table.catalog!r}{flag})"

    def history(self) -> TableHistory:
        h = super().history()
        ref = self.catalog_table
        if not ref.partial:
            return h
        ids = ", ".join(map(str, ref.missing_snapshot_ids[:10]))
        more = len(ref.missing_snapshot_ids) - 10
        note = (f"catalog {ref.catalog} returned {len(ref.returned_snapshot_ids)} "
                f"of the table's snapshots (only those its refs name: snapshots=refs); "
                f"missing {len(ref.missing_snapshot_ids)}: {ids}"
                + (f" and {more} more" if more > 0 else "")
                + ". Load with snapshot-loading-mode: all for the whole history.")
        return dataclasses.replace(h, partial=note,
                                   missing_snapshot_ids=ref.missing_snapshot_ids)


# --------------------------------------------------------------------------------------------
# Paimon's REST catalog through pypaimon's REST client
# --------------------------------------------------------------------------------------------


class PaimonRestCatalog:
    """Paimon's REST catalog (``metastore: rest`` or ``type: paimon-rest``, with ``uri``,
    ``warehouse`` and its token options), reached through pypaimon's REST client. The catalog
    says where each table's directory is; schemalab reads the table there, and writes it
    through the catalog (:mod:`schemalab.paimon_rest`): snapshots through its ``commit``
    endpoint, schema changes through ``alterTable``, new tables through ``createTable``."""

    def __init__(self, catalog: str | Mapping[str, Any]) -> None:
        self.name, self.properties = catalog_config(catalog)
        opts = {k: v for k, v in self.properties.items() if k != "type"}
        opts["metastore"] = "rest"
        _client("pypaimon", f"Paimon REST catalog {self.name!r}")
        from pypaimon import CatalogFactory

        try:
            self.pypaimon = CatalogFactory.create(opts)
        except Exception as e:  # noqa: BLE001 - pypaimon raises many kinds
            raise _unavailable(self.name, "cannot be opened", e) from None

    def __repr__(self) -> str:
        return f"PaimonRestCatalog({self.name!r})"

    def describe(self) -> str:
        return f"catalog {self.name} ({self.properties.get('uri', '')})"

    def list_databases(self) -> list[str]:
        try:
            return sorted(self.pypaimon.list_databases())
        except Exception as e:  # noqa: BLE001
            raise _unavailable(self.name, "cannot list databases", e) from None

    def list_tables(self, database: str | None = None) -> list[str]:
        out: list[str] = []
        for db in [database] if database else self.list_databases():
            try:
                out.extend(f"{db}.{t}" for t in self.pypaimon.list_tables(db))
            except Exception as e:  # noqa: BLE001
                if type(e).__name__ == "DatabaseNotExistException":
                    raise TableNotFoundError(f"Catalog {self.name} has no database {db!r}",
                                             rule="table-must-exist") from None
                raise _unavailable(self.name, f"cannot list the tables of {db!r}", e) from None
        return sorted(out)

    def load(self, identifier: str) -> str:
        """The directory of table ``identifier``, as the catalog says."""
        try:
            path = str(self.pypaimon.get_table(identifier).table_path)
        except Exception as e:  # noqa: BLE001
            if type(e).__name__ in ("TableNotExistException", "DatabaseNotExistException"):
                near = _close(identifier, self)
                raise TableNotFoundError(
                    f"Table {identifier} does not exist in {self.describe()}."
                    + (f" Did you mean {near}?" if near else ""),
                    table=identifier, rule="table-must-exist") from None
            raise _unavailable(self.name, f"cannot load table {identifier}", e) from None
        path = fileio.normalize(path)
        # the catalog's store options (Paimon's own names, as Warehouse(options=) takes them)
        fileio.configure(path, {k: v for k, v in self.properties.items()
                                if k.startswith("s3.")})
        return path

    def rest_api(self) -> RestApi:
        """The catalog's REST API, as schemalab's writes call it."""
        return RestApi(self.pypaimon, self.name)

    def open(self, identifier: str, spark: SparkSession | None = None) -> PaimonRestTable:
        path = self.load(identifier)
        t = PaimonRestTable(path, identifier, spark=spark)
        t.catalog_name = self.name
        t.rest = load_rest_table(self.rest_api(), identifier)  # its uuid: what commits name
        return t
