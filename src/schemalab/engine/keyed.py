"""Keyed records, as the engine merges them: each row of a primary-key file carries its
sequence number and its row kind (Paimon's key-value layout, which the engine reads).

    >>> ROW_KINDS[DELETE], DELETE in RETRACT
    ('-D', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.schema.table_schema import TableSchema

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"

#: RowKind bytes
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
RETRACT = (UPDATE_BEFORE, DELETE)
#: how each RowKind byte is written (org.apache.paimon.types.RowKind)
ROW_KINDS = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}


def merge_key_columns(schema: TableSchema) -> list[str]:
    """The columns one merged row is identified by: the primary key and the partition keys."""
    keys = list(schema.primary_keys)
    return keys + [k for k in schema.partition_keys if k not in keys]
