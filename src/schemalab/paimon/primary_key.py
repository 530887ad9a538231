"""Primary-key tables in Paimon's layout: the key-value file columns and the key rules.

A primary-key table's data files hold, before the value columns (the whole row, under the
names of the schema it was written with), the trimmed primary key as ``_KEY_<pk>`` columns,
``_SEQUENCE_NUMBER`` (BIGINT) and ``_VALUE_KIND`` (TINYINT: 0 ``+I``, 1 ``-U``, 2 ``+U``,
3 ``-D``). Every row of a key lives in the bucket Paimon's bucket function gives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemalab.engine.merge.options import MergeOptions
from schemalab.errors import SchemaLabError
from schemalab.paimon.binaryrow import BinaryRowError, decode_row
from schemalab.paimon.merge_options import merge_options
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import AtomicType, TypeRoot

KEY_PREFIX = "_KEY_"
#: Java's SpecialFields: key columns carry the value field's id plus Integer.MAX_VALUE / 2
KEY_FIELD_ID_START = (2**31 - 1) // 2
SEQUENCE_NUMBER_ID = 2**31 - 2
VALUE_KIND_ID = 2**31 - 3



def trimmed_primary_keys(schema: TableSchema, table: str) -> list[str]:
    """The key of the table's files: the primary key without the partition keys (Java's
    ``TableSchema.trimmedPrimaryKeys``, with its messages)."""
    pk, parts = list(schema.primary_keys), list(schema.partition_keys)
    if not set(parts) <= set(pk):
        raise SchemaLabError(
            f"Primary key constraint {_jlist(pk)} should include all partition fields "
            f"{_jlist(parts)} (table {table})", table=table, rule="primary-key-partition")
    trimmed = [k for k in pk if k not in parts]
    if not trimmed:
        raise SchemaLabError(
            f"Primary key constraint {_jlist(pk)} should not be same with partition fields "
            f"{_jlist(parts)}, this will result in only one record in a partition (table "
            f"{table})", table=table, rule="primary-key-partition")
    return trimmed


#: key types whose Python values order as Paimon's key comparator orders them (FLOAT and
#: DOUBLE do not: Java orders NaN above every number and -0.0 below 0.0)
_ORDERED_ROOTS = frozenset(TypeRoot) - {TypeRoot.FLOAT, TypeRoot.DOUBLE, TypeRoot.VARIANT,
                                         TypeRoot.NULL, TypeRoot.ARRAY, TypeRoot.MULTISET,
                                         TypeRoot.MAP, TypeRoot.ROW}


def file_key_range(min_key: bytes, max_key: bytes, schema: TableSchema
                   ) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """A primary-key file's first and last key (``_MIN_KEY``/``_MAX_KEY``), decoded with the
    schema it was written with; None when unknown (no key recorded, or undecodable). A
    file's key is the *trimmed* primary key, without the partition keys (Java's
    ``TableSchema.trimmedPrimaryKeys``).

    >>> from schemalab.paimon.binaryrow import encode_row
    >>> from schemalab.schema import TableSchema
    >>> from schemalab.types import INT, DataField
    >>> s = TableSchema(0, [DataField(0, "id", INT())], 0, primary_keys=["id"])
    >>> file_key_range(encode_row([3], [INT()]), encode_row([9], [INT()]), s)
    ((3,), (9,))
    """
    if not schema.primary_keys or not min_key or len(min_key) <= 12:
        return None
    trimmed = [k for k in schema.primary_keys if k not in schema.partition_keys]
    types = [schema.type_of(k) for k in trimmed or schema.primary_keys]
    try:
        return tuple(decode_row(min_key, types)), tuple(decode_row(max_key, types))
    except (BinaryRowError, ValueError):
        return None


def key_range_ordered(schema: TableSchema) -> bool:
    """Whether the decoded keys of ``schema``'s files compare as Paimon compares them."""
    trimmed = [k for k in schema.primary_keys if k not in schema.partition_keys]
    types = [schema.type_of(k) for k in trimmed or schema.primary_keys]
    return all(isinstance(t, AtomicType) and t.root in _ORDERED_ROOTS for t in types)


def _jlist(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


def check_readable(schema: TableSchema, table: str) -> MergeOptions:
    """The table's merge options, after refusing what schemalab cannot read as Paimon does:
    options Paimon itself refuses (with its messages). Deletion vectors are read (the read
    plan's deletion-vector mode), not refused."""
    return merge_options(schema, table)


def check_writable(schema: TableSchema, table: str) -> list[str]:
    """The trimmed key, after checking that schemalab can write the table: every merge
    engine, ``sequence.field`` and ``rowkind.field`` are written as Paimon writes them; the
    bucket must be fixed."""
    trimmed = trimmed_primary_keys(schema, table)
    check_readable(schema, table)
    n = schema.int_option("bucket", -1, table)
    if n <= 0:
        raise SchemaLabError(
            f"Table {table} has a primary key and 'bucket' = '{n}': schemalab writes "
            "primary-key tables with a fixed number of buckets only (Paimon's dynamic and "
            "postpone bucket modes need a key index). Create the table with "
            "TBLPROPERTIES ('bucket' = 'N').", table=table, rule="primary-key-bucket")
    return trimmed
