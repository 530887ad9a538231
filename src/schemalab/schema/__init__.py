"""A table's schema as a value, the changes an ALTER asks for, and the pure function that
applies them under Paimon's rules."""

from schemalab.schema.apply import apply_changes, new_table_schema, validate_schema
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnDefault,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from schemalab.schema.table_schema import TableSchema

__all__ = [
    "AddColumn", "ColumnSpec", "DropColumn", "Move", "RemoveOption", "RenameColumn",
    "SchemaChange", "SetOption", "TableSchema", "UpdateColumnComment", "UpdateColumnDefault",
    "UpdateColumnNullability", "UpdateColumnPosition", "UpdateColumnType", "UpdateComment",
    "apply_changes", "new_table_schema", "validate_schema",
]
