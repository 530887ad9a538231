"""Open a table written by anyone, detecting its format from the layout."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from schemalab.errors import TableNotFoundError
from schemalab.iceberg import IcebergTable, is_iceberg_table
from schemalab.table import Table

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession


def open_table(path: str | os.PathLike[str], spark: SparkSession | None = None
               ) -> Table | IcebergTable:
    """A Paimon table (schemalab, Java Paimon, pypaimon: a ``schema/`` directory) or an
    Iceberg table (a ``metadata/`` directory with ``*.metadata.json``, or such a file)."""
    p = os.path.abspath(os.fspath(path))
    if os.path.isdir(os.path.join(p, "schema")):
        return Table(p, spark=spark)
    if is_iceberg_table(p) or (os.path.isfile(p) and p.endswith((".json", ".json.gz"))):
        # a metadata JSON file named any way (Iceberg's own test fixtures are *.json)
        return IcebergTable(p, spark=spark)
    raise TableNotFoundError(
        f"{p} is not a table: no Paimon schema/ directory and no Iceberg metadata/ directory "
        "with *.metadata.json inside", rule="table-must-exist")
