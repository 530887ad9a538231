"""Spark SQL text → statement values that the warehouse runs.

    >>> stmt = parse_statement("ALTER TABLE T ADD COLUMN c STRING NOT NULL AFTER a")
    >>> stmt.name, [change.sql() for change in stmt.changes]
    (TableName(database=None, table='T'), ['ADD COLUMN c STRING NOT NULL AFTER a'])
    >>> parse_statement("WITH s AS (SELECT * FROM db.S) SELECT * FROM s JOIN T").tables
    (TableName(database='db', table='S'), TableName(database=None, table='T'))

Statements are read by sqlglot's Spark dialect, extended where Spark and Paimon DDL need
more (:mod:`schemalab.sql.dialect`); values are built from its trees (:mod:`.ddl`,
:mod:`.parse`, :mod:`.queries`). Anything that cannot be parsed or is not supported raises
:class:`schemalab.errors.SqlError`, never another exception.
"""

from schemalab.sql.parse import parse_statement, parse_statements
from schemalab.sql.queries import rewrite_tables
from schemalab.sql.split import split_statements
from schemalab.sql.statements import (
    AlterTable,
    Call,
    CreateTable,
    DeleteFrom,
    DescribeTable,
    DropTable,
    IcebergAlter,
    IcebergRefStatement,
    IcebergWriteOrder,
    Insert,
    PaimonTagStatement,
    Query,
    RenameTable,
    ShowTables,
    Statement,
    TableName,
    Update,
)

__all__ = [
    "AlterTable", "Call", "CreateTable", "DeleteFrom", "DescribeTable", "DropTable", "IcebergAlter",
    "IcebergRefStatement", "IcebergWriteOrder", "Insert", "PaimonTagStatement",
    "Query", "RenameTable", "ShowTables", "Statement", "TableName", "Update", "parse_statement",
    "parse_statements", "rewrite_tables", "split_statements",
]
