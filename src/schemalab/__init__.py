"""schemalab: explore and teach table schema evolution on a Paimon-format table store.

    import schemalab as sl
    wh = sl.Warehouse("path/to/warehouse")
    wh.sql("CREATE TABLE T (a STRING, b STRING, c STRING)")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The notebook and text forms of the values (schemas, histories, explanations) live at the
# edge, in render/, and are attached to their classes here, whichever module a user imports.
import schemalab.render.attach  # noqa: F401
from schemalab.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidIdentifierError,
    SchemaChangeError,
    SchemaLabError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
    UnknownTypeError,
    UnsupportedVersionError,
)
from schemalab.spark import local_spark
from schemalab.version import __version__ as __version__

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.table import Table
    from schemalab.warehouse import Warehouse

__all__ = [
    "CommitConflictError", "CorruptFileError", "InvalidIdentifierError", "SchemaChangeError",
    "SchemaLabError", "SqlError", "Table", "TableExistsError", "TableNotFoundError",
    "UnknownTypeError", "UnsupportedVersionError", "Warehouse", "local_spark", "open_table",
]


def __getattr__(name: str) -> Any:
    # Warehouse and Table pull in sqlglot; keep `import schemalab` itself light.
    if name == "Warehouse":
        # registers what Warehouse(catalog=...) makes (it imports schemalab.warehouse)
        import schemalab.catalog_warehouse  # noqa: F401
        from schemalab.warehouse import Warehouse

        return Warehouse
    if name == "Table":
        from schemalab.table import Table

        return Table
    if name == "open_table":
        from schemalab.open import open_table

        return open_table
    raise AttributeError(f"module 'schemalab' has no attribute {name!r}")
