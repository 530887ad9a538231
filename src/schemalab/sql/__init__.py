"""Spark SQL text → statement values that the warehouse runs.

    >>> stmt = parse_statement("ALTER TABLE T ADD COLUMN c STRING NOT NULL AFTER a")
    >>> stmt.name, [change.sql() for change in stmt.changes]
    (TableName(database=None, table='T'), ['ADD COLUMN c STRING NOT NULL AFTER a'])
"""

from schemalab.sql.parser import (
    AlterTable,
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
    parse_statement,
    parse_statements,
    rewrite_tables,
    split_statements,
)

__all__ = [
    "AlterTable", "CreateTable", "DeleteFrom", "DescribeTable", "DropTable", "Insert", "Query",
    "RenameTable", "ShowTables", "Statement", "TableName", "parse_statement", "parse_statements",
    "rewrite_tables", "split_statements",
]
