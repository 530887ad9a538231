"""Open a table written by anyone, detecting its format from the layout."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import TableNotFoundError
from schemalab.iceberg import IcebergTable, is_iceberg_table
from schemalab.paimon.refs import branch_of
from schemalab.table import Table

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

_DATA_FILE_ENDINGS = (".parquet", ".orc", ".avro")


def open_table(path: str | os.PathLike[str], spark: SparkSession | None = None,
               options: dict[str, str] | None = None, *,
               catalog: str | dict[str, Any] | None = None) -> Table | IcebergTable:
    """A Paimon table (schemalab, Java Paimon, pypaimon: a ``schema/`` directory) or an
    Iceberg table (a ``metadata/`` directory with ``*.metadata.json``, or such a file), on
    local disk or any store pyarrow reaches (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``;
    ``options`` as for :class:`schemalab.Warehouse`). With ``catalog`` (a name or properties,
    see :mod:`schemalab.catalogs`), ``path`` is the table's name in that catalog (``db.t``)."""
    if catalog is not None:
        from schemalab.catalogs import catalog_config, connect, is_paimon_filesystem
        from schemalab.warehouse import Warehouse

        name, props = catalog_config(catalog)
        if is_paimon_filesystem(props):  # a warehouse directory
            return Warehouse(catalog={**props, "name": name}, spark=spark).table(os.fspath(path))
        return connect({**props, "name": name}).open(os.fspath(path), spark=spark)
    p = fileio.normalize(path)
    fileio.configure(p, options)
    fork = branch_of(p)
    if fork is not None:
        # <table>/branch/branch-<name>: its manifests and data files are the table's, so it
        # opens as that branch of the table (named ``db.t$branch_<name>``)
        return Table(fork[0], spark=spark).branch(fork[1])
    if fileio.list_names(os.path.join(p, "schema")):
        return Table(p, spark=spark)
    if is_iceberg_table(p) or (p.endswith((".json", ".json.gz")) and fileio.is_file(p)):
        # a metadata JSON file named any way (Iceberg's own test fixtures are *.json)
        return IcebergTable(p, spark=spark)
    raise TableNotFoundError(_not_a_table(p), rule="table-must-exist")


def _not_a_table(p: str) -> str:
    """Why ``p`` is not a table, and what to open instead."""
    if not fileio.exists(p):
        return f"{p} does not exist."
    if p.endswith(_DATA_FILE_ENDINGS) and fileio.is_file(p):
        table = _enclosing_table(p)
        hint = f" Open its table instead: {table}" if table else ""
        return f"{p} is a data file, not a table.{hint}"
    names = fileio.list_names(p)
    tables = sorted(f"{os.path.join(p, db, t)}" for db in names if db.endswith(".db")
                    for t in fileio.list_names(os.path.join(p, db))
                    if not t.startswith("."))
    if tables:
        shown = ", ".join(tables[:5]) + (f" (and {len(tables) - 5} more)"
                                          if len(tables) > 5 else "")
        return (f"{p} is a warehouse (its databases are the *.db directories), not a table. "
                f"Open one of its tables: {shown}")
    return (f"{p} is not a table: no Paimon schema/ directory and no Iceberg metadata/ "
            "directory with *.metadata.json inside.")


def _enclosing_table(p: str) -> str | None:
    """The table directory above a data file, if there is one."""
    d = os.path.dirname(p)
    while d and d not in ("/", os.path.dirname(d)):
        if fileio.list_names(os.path.join(d, "schema")) or is_iceberg_table(d):
            return d
        d = os.path.dirname(d)
    return None
