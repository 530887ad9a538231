"""The statement values that the warehouse runs: one per statement, values only.

DDL carries the change values of :mod:`schemalab.schema.changes`; queries (a SELECT, the
rows of an INSERT, the condition of a DELETE) stay the Spark SQL text that was written,
together with the tables they read::

    >>> TableName(None, "T").qualified()
    'default.T'
    >>> call = Call("sys.compact", (("table", "db.t"),), "CALL sys.compact(table => 'db.t')")
    >>> call.argument("TABLE")
    'db.t'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schemalab.schema.changes import ColumnSpec, SchemaChange
from schemalab.types.model import quote_identifier

__all__ = [
    "AlterTable", "Call", "CreateTable", "DeleteFrom", "DescribeTable", "DropTable", "Insert",
    "Query", "RenameTable", "ShowTables", "Statement", "TableName", "Update",
]


@dataclass(frozen=True)
class TableName:
    """A table as a statement names it: ``db.t``, or ``t`` with ``database`` None.

    >>> TableName(None, "T").qualified("lab")
    'lab.T'
    >>> TableName("my db", "T").sql()
    '`my db`.T'
    """

    database: str | None
    table: str

    def qualified(self, default_db: str = "default") -> str:
        """``database.table``, with ``default_db`` for an unqualified name."""
        return f"{default_db if self.database is None else self.database}.{self.table}"

    def sql(self) -> str:
        """The name as Spark SQL, backtick-quoted where needed."""
        parts = (self.table,) if self.database is None else (self.database, self.table)
        return ".".join(quote_identifier(part) for part in parts)


@dataclass(frozen=True)
class CreateTable:
    """``CREATE TABLE``. Typed ``PARTITIONED BY`` columns are appended to ``columns``.
    ``options`` are the TBLPROPERTIES as written (``'primary-key'``/``'partition'`` are
    left for the schema to fold in), except ``'comment'``, which is the table comment."""

    name: TableName
    columns: tuple[ColumnSpec, ...]
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: dict[str, str]
    comment: str | None
    if_not_exists: bool
    text: str
    #: ``USING paimon`` / ``USING iceberg`` (lower case), None when not given
    using: str | None = None
    #: Iceberg partition transforms as (transform, column), e.g. ("bucket[16]", "id"), in
    #: PARTITIONED BY order (identity for plain columns); empty unless one is a transform
    transforms: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AlterTable:
    """``ALTER TABLE`` (and ``COMMENT ON``): the changes to apply, in order, as one commit."""

    name: TableName
    changes: tuple[SchemaChange, ...]
    text: str


@dataclass(frozen=True)
class RenameTable:
    """``ALTER TABLE .. RENAME TO``. A ``new_name`` without a database keeps the table's
    database, as Spark's session catalog does."""

    name: TableName
    new_name: TableName
    text: str


@dataclass(frozen=True)
class DropTable:
    name: TableName
    if_exists: bool
    text: str


@dataclass(frozen=True)
class ShowTables:
    database: str | None
    text: str


@dataclass(frozen=True)
class DescribeTable:
    name: TableName
    text: str


@dataclass(frozen=True)
class Insert:
    """``INSERT INTO|OVERWRITE``. ``query`` is Spark SQL that produces the rows on its own
    (``VALUES (..), (..)`` or a SELECT), matched to ``columns`` (all columns when None)
    by position. ``query_tables`` are the tables it reads (CTE names excluded), to map with
    :func:`schemalab.sql.rewrite_tables`; they follow from ``query``, so equality ignores
    them."""

    name: TableName
    columns: tuple[str, ...] | None
    query: str
    overwrite: bool
    text: str
    query_tables: tuple[TableName, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class DeleteFrom:
    """``DELETE FROM``. ``where`` is the Spark SQL condition as written; None deletes all.
    ``where_tables`` are the tables that subqueries in ``where`` read."""

    name: TableName
    where: str | None
    text: str
    where_tables: tuple[TableName, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Update:
    """``UPDATE t SET c = expr, .. [WHERE cond]``: ``assignments`` are (column, Spark SQL
    expression as written); ``where`` as in :class:`DeleteFrom`; ``tables`` are the tables
    subqueries in the expressions or the condition read."""

    name: TableName
    assignments: tuple[tuple[str, str], ...]
    where: str | None
    text: str
    tables: tuple[TableName, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Query:
    """A query Spark can run (SELECT, WITH, VALUES, set operations). ``tables`` are the real
    tables it reads, in order of appearance, without CTE names."""

    sql: str
    tables: tuple[TableName, ...]
    text: str


@dataclass(frozen=True)
class Call:
    """``CALL procedure(name => value, ..)``, Paimon's Spark procedure syntax, e.g.
    ``CALL sys.compact(table => 'db.t', order_strategy => 'zorder')``. ``arguments`` are
    the arguments in the order written, each with its name (``""`` for a positional one,
    as in ``CALL sys.create_tag('db.t', 'v1')``) and its value as text (a string literal's
    contents, a number or a boolean as written)."""

    procedure: str
    arguments: tuple[tuple[str, str], ...]
    text: str

    def argument(self, name: str) -> str | None:
        """The value of a named argument (names compare case-insensitively), or None."""
        return next((value for key, value in self.arguments if key.lower() == name.lower()),
                    None)


@dataclass(frozen=True)
class IcebergAlter:
    """``ALTER TABLE t ADD|DROP|REPLACE PARTITION FIELD ..`` or ``SET|DROP IDENTIFIER
    FIELDS ..``. ``transforms``: (transform, column) pairs; a DROP or the REPLACE's first
    may name a partition field instead (``(name, "")``)."""

    name: TableName
    action: str
    transforms: tuple[tuple[str, str], ...] = ()
    alias: str | None = None
    fields: tuple[str, ...] = ()
    text: str = ""

    @property
    def partitioning(self) -> bool:
        return not self.fields and self.action in ("ADD", "DROP", "REPLACE")


@dataclass(frozen=True)
class IcebergRefStatement:
    """``ALTER TABLE t CREATE|REPLACE|DROP BRANCH|TAG ..``: ``action`` is ``"create"`` (with
    ``create``/``replace`` as written: CREATE, REPLACE or CREATE OR REPLACE) or ``"drop"``.
    Retention is in milliseconds, as Iceberg stores it."""

    name: TableName
    action: str
    kind: str
    ref: str
    create: bool = False
    replace: bool = False
    if_not_exists: bool = False
    if_exists: bool = False
    snapshot_id: int | None = None
    max_ref_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    text: str = ""


@dataclass(frozen=True)
class IcebergWriteOrder:
    """``ALTER TABLE t WRITE ..``: the new sort order as (transform, column, direction,
    null order) in Iceberg's JSON words, and the ``write.distribution-mode`` to set (None:
    left as it is, for ``LOCALLY ORDERED BY``)."""

    name: TableName
    order: tuple[tuple[str, str, str, str], ...]
    distribution_mode: str | None
    text: str = ""


@dataclass(frozen=True)
class PaimonTagStatement:
    """Paimon's Spark SQL extensions for tags that Iceberg's grammar lacks:
    ``ALTER TABLE t DELETE TAG [IF EXISTS] v``, ``ALTER TABLE t RENAME TAG v TO w`` and
    ``SHOW TAGS t`` (``action`` is ``"delete"``, ``"rename"`` or ``"show"``). Creating and
    replacing a tag is :class:`IcebergRefStatement`: both grammars spell it alike."""

    name: TableName
    action: str
    tag: str = ""
    target: str = ""
    if_exists: bool = False
    text: str = ""


Statement = (CreateTable | AlterTable | RenameTable | DropTable | ShowTables | DescribeTable
             | Insert | DeleteFrom | Update | Query | Call | IcebergAlter
             | IcebergRefStatement | IcebergWriteOrder | PaimonTagStatement)
