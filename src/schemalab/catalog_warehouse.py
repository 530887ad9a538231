"""``sl.Warehouse(catalog=...)`` on an Iceberg catalog or Paimon's REST catalog
(:mod:`schemalab.catalogs`): the catalog's namespaces and tables, each read by schemalab.

On an Iceberg catalog, SQL writes through the catalog: CREATE TABLE is the catalog's
``createTable``; INSERT and ALTER write the data files (Spark) and manifests (schemalab's
Iceberg writer) and commit through the catalog with requirements
(:mod:`schemalab.catalog_commit`); DROP TABLE and ALTER TABLE .. RENAME TO are the
catalog's. Checkpoints and restores are refused (rule ``catalog-no-checkpoint``): a catalog's
state lives in its server, which a file checkpoint cannot bring back. On Paimon's REST
catalog, CREATE TABLE is its ``createTable``, ALTER its ``alterTable``, INSERT, DELETE and
``CALL sys.compact`` commit their snapshots through its ``commit`` endpoint
(:mod:`schemalab.paimon_rest`), DROP TABLE and RENAME are its own; the other procedures
(tags, branches, rollback, expire) are refused (rule ``catalog-read-only``).

Importing this module registers :class:`CatalogWarehouse` as what ``Warehouse(catalog=...)``
makes (``sl.Warehouse`` imports it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from schemalab.catalog_commit import create_table
from schemalab.catalogs import (
    CatalogIcebergTable,
    IcebergCatalog,
    PaimonRestCatalog,
    connect,
)
from schemalab.errors import SchemaLabError, SqlError, TableExistsError, TableNotFoundError
from schemalab.iceberg.write.schema_json import schema_json
from schemalab.iceberg.write.table import FORMAT_VERSION, table_definition
from schemalab.iceberg.write.tablemeta import spec_json
from schemalab.paimon import calls
from schemalab.paimon_rest import create_table as create_paimon_table
from schemalab.paimon_rest import read_only
from schemalab.schema.apply import new_table_schema
from schemalab.sql import (
    AlterTable,
    Call,
    CreateTable,
    DeleteFrom,
    DescribeTable,
    DropTable,
    Insert,
    Query,
    RenameTable,
    ShowTables,
    Statement,
    TableName,
)
from schemalab.warehouse import FOR_CATALOGS, StatementResult, Warehouse

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

    from schemalab.table import Table

#: what runs on Paimon's REST catalog (each write through the catalog's API)
_PAIMON_REST = (Query, ShowTables, DescribeTable, Insert, AlterTable, DeleteFrom, DropTable,
                RenameTable, Call)


def _no_checkpoint(what: str) -> SchemaLabError:
    return SchemaLabError(f"{what} of a warehouse opened on a catalog is not supported: the "
                          "catalog's state (which metadata file is current) lives in its "
                          "server, which a checkpoint of files cannot bring back",
                          rule="catalog-no-checkpoint")


class CatalogWarehouse(Warehouse):
    """``sl.Warehouse(catalog=...)`` on an Iceberg catalog or Paimon's REST catalog. Its
    tables are read by schemalab; on an Iceberg catalog, SQL commits through the catalog."""

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 spark: SparkSession | None = None, options: dict[str, str] | None = None, *,
                 catalog: str | dict[str, Any] | None = None, format: str = "iceberg") -> None:
        if catalog is None:
            raise SchemaLabError("CatalogWarehouse needs catalog=...", rule="catalog-config")
        self.catalog = connect(catalog)
        #: an Iceberg catalog makes Iceberg tables, whatever the format argument says
        self.format = "iceberg" if isinstance(self.catalog, IcebergCatalog) else "paimon"
        self.path = self.catalog.describe()
        self._spark = spark

    def __repr__(self) -> str:
        return f"Warehouse(catalog={self.catalog.name!r})"

    def _ident(self, name: str | TableName) -> str:
        return ".".join(self.resolve(name))

    def list_databases(self) -> list[str]:
        return self.catalog.list_databases()

    def list_tables(self, database: str | None = None) -> list[str]:
        return self.catalog.list_tables(database)

    def table(self, name: str | TableName) -> CatalogIcebergTable | Table:  # type: ignore[override]
        return self.catalog.open(self._ident(name), spark=self._spark)

    def _open_any(self, name: str | TableName) -> CatalogIcebergTable | Table:  # type: ignore[override]
        return self.table(name)

    def _open(self, name: str | TableName) -> Table:
        t = self.table(name)
        if isinstance(t, CatalogIcebergTable):
            raise SqlError(f"Table {t.name} is an Iceberg table of {self.catalog.describe()}; "
                           "this statement is Paimon's", table=t.name,
                           rule="unsupported-statement")
        return t

    def has_table(self, name: str | TableName) -> bool:
        try:
            self.catalog.load(self._ident(name))
            return True
        except TableNotFoundError:
            return False

    def execute(self, stmt: Statement) -> StatementResult:
        if isinstance(self.catalog, PaimonRestCatalog):
            return self._execute_paimon(self.catalog, stmt)
        if isinstance(stmt, CreateTable):
            return StatementResult(stmt.text, self._create_in_catalog(stmt))
        if isinstance(stmt, Call):
            raise SqlError(f"CALL {stmt.procedure}: Paimon's procedures do not run on "
                           f"{self.catalog.describe()} (an Iceberg catalog)",
                           rule="unsupported-statement")
        return super().execute(stmt)

    def _execute_paimon(self, catalog: PaimonRestCatalog, stmt: Statement) -> StatementResult:
        if isinstance(stmt, CreateTable):
            return StatementResult(stmt.text, self._create_in_paimon_catalog(catalog, stmt))
        if isinstance(stmt, Call) and calls.procedure_name(stmt.procedure) is not None:
            raise read_only(catalog.name, f"CALL {stmt.procedure}", (
                "the procedure writes tag, branch or snapshot files itself, which would fork "
                "the catalog's table; of the procedures, only sys.compact commits through "
                "the catalog"))
        if not isinstance(stmt, _PAIMON_REST):
            raise read_only(catalog.name, stmt.text.strip(), "the statement has no call in "
                            "the catalog's REST API")
        return super().execute(stmt)

    def _create_in_paimon_catalog(self, catalog: PaimonRestCatalog, stmt: CreateTable) -> str:
        ident = self._ident(stmt.name)
        if (stmt.using or "paimon") != "paimon":
            raise SqlError(f"CREATE TABLE {ident} USING {stmt.using}: {catalog.describe()} is "
                           "Paimon's REST catalog", table=ident, rule="unsupported-sql")
        if stmt.transforms:
            raise SqlError(f"Unsupported partition transform {stmt.transforms[0][0]} of "
                           f"{stmt.transforms[0][1]} in PARTITIONED BY: a Paimon table is "
                           "partitioned by plain top-level columns, e.g. PARTITIONED BY (dt)",
                           table=ident, column=stmt.transforms[0][1], rule="unsupported-sql")
        if self.has_table(stmt.name):
            if stmt.if_not_exists:
                return f"Table {ident} already exists."
            raise TableExistsError(f"Table {ident} already exists.", table=ident,
                                   rule="table-must-be-new")
        schema = new_table_schema(stmt.columns, partition_keys=stmt.partition_keys,
                                  primary_keys=stmt.primary_keys, options=dict(stmt.options),
                                  comment=stmt.comment, table=ident)
        if schema.primary_keys:
            from schemalab.paimon.primary_key import trimmed_primary_keys

            trimmed_primary_keys(schema, ident)  # Paimon refuses such a table at CREATE
        create_paimon_table(catalog.rest_api(), catalog.pypaimon, ident, schema)
        return f"Created {ident} (schema 0) in {catalog.name}."

    def _create_in_catalog(self, stmt: CreateTable) -> str:
        ident = self._ident(stmt.name)
        assert isinstance(self.catalog, IcebergCatalog)
        if (stmt.using or "iceberg") != "iceberg":
            raise SqlError(f"CREATE TABLE {ident} USING {stmt.using}: "
                           f"{self.catalog.describe()} is an Iceberg catalog", table=ident,
                           rule="unsupported-sql")
        if stmt.primary_keys:
            raise SqlError(f"Table {ident}: PRIMARY KEY is Paimon's; an Iceberg table names its "
                           "identifier fields with ALTER TABLE .. SET IDENTIFIER FIELDS",
                           table=ident, rule="unsupported-sql")
        if self.has_table(stmt.name):
            if stmt.if_not_exists:
                return f"Table {ident} already exists."
            raise TableExistsError(f"Table {ident} already exists.", table=ident,
                                   rule="table-must-be-new")
        parts = stmt.transforms or tuple(("identity", k) for k in stmt.partition_keys)
        d = table_definition(ident, stmt.columns, partitioning=parts,
                             properties=dict(stmt.options), comment=stmt.comment)
        create_table(self.catalog.pyiceberg, ident, schema_json(d.schema),
                     spec_json(0, d.partition_fields),
                     {**d.properties, FORMAT_VERSION: str(d.format_version)})
        return f"Created {ident} (Iceberg v{d.format_version}, schema 0) in {self.catalog.name}."

    def create_table(self, *args: Any, **kwargs: Any) -> Any:
        raise SqlError(f"Warehouse.create_table makes Paimon tables; on {self.catalog.describe()}"
                       " run CREATE TABLE through .sql()", rule="unsupported-statement")

    def drop_table(self, name: str | TableName, *, if_exists: bool = False) -> bool:
        """DROP TABLE through the catalog (its files stay, as the catalog's drop without
        purge leaves them)."""
        ident = self._ident(name)
        if not self.has_table(name):
            if if_exists:
                return False
            raise TableNotFoundError(f"Table {ident} does not exist.", table=ident,
                                     rule="table-must-exist")
        try:
            if isinstance(self.catalog, IcebergCatalog):
                self.catalog.pyiceberg.drop_table(ident)
            else:  # Paimon's: the catalog drops the table and its files
                self.catalog.pypaimon.drop_table(ident)
        except Exception as e:  # noqa: BLE001
            raise SchemaLabError(f"Table {ident}: the catalog refused the drop: {e}",
                                 table=ident, rule="catalog-commit-refused") from None
        return True

    def rename_table(  # type: ignore[override]
            self, name: str | TableName, new_name: str | TableName
    ) -> CatalogIcebergTable | Table:
        src, dest = self._ident(name), self._ident(new_name)
        self.catalog.load(src)  # a missing table: table-must-exist
        if self.has_table(new_name):
            raise TableExistsError(f"Table {dest} already exists.", table=dest,
                                   rule="table-must-be-new")
        try:
            if isinstance(self.catalog, IcebergCatalog):
                self.catalog.pyiceberg.rename_table(src, dest)
            else:
                self.catalog.pypaimon.rename_table(src, dest)
        except Exception as e:  # noqa: BLE001
            raise SchemaLabError(f"Table {src}: the catalog refused the rename to {dest}: {e}",
                                 table=src, rule="catalog-commit-refused") from None
        return self.table(dest)

    def checkpoint(self) -> Any:
        raise _no_checkpoint("A checkpoint")

    def restore(self, token: Any) -> None:
        raise _no_checkpoint("A restore")


FOR_CATALOGS[:] = [CatalogWarehouse]
