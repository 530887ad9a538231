"""Where things live in a Paimon warehouse, and which names may live there.

    <warehouse>/<db>.db/<table>/schema/schema-N
    <warehouse>/<db>.db/<table>/snapshot/snapshot-N, LATEST, EARLIEST
    <warehouse>/<db>.db/<table>/manifest/...
    <warehouse>/<db>.db/<table>/<k1>=<v1>/.../bucket-<b>/data-<uuid>-<n>.parquet

Database and table names may hold anything a user can type between backticks (spaces,
quotes, dots, unicode, ``<script>``) except what would leave the warehouse: ``/``, NUL,
``.`` and ``..``, and a leading ``.`` (hidden files are ours: temporary and staging files).

    >>> partition_path([("dt", "2024-01-01"), ("city", "a/b")])
    'dt=2024-01-01/city=a%2Fb'
"""

from __future__ import annotations

import datetime as _dt
import decimal
import os
from collections.abc import Sequence
from typing import Any

from schemalab.errors import InvalidIdentifierError
from schemalab.fileio import is_local

DEFAULT_DATABASE = "default"
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"
MAX_NAME_BYTES = 200


def check_name(name: str, what: str) -> str:
    """Refuse a database or table name that is empty, too long, or would escape the
    warehouse directory. Returns the name."""
    if not isinstance(name, str) or name == "":
        raise InvalidIdentifierError(f"A {what} name cannot be empty", rule="valid-identifier")
    bad = None
    if "/" in name or "\\" in name:
        bad = "contains a path separator"
    elif "\x00" in name:
        bad = "contains a NUL character"
    elif name in (".", ".."):
        bad = "is a relative path"
    elif name.startswith("."):
        bad = "starts with '.', which schemalab keeps for its temporary files"
    elif os.path.isabs(name):
        bad = "is an absolute path"
    elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
        bad = f"is longer than {MAX_NAME_BYTES} bytes"
    if bad:
        raise InvalidIdentifierError(f"Invalid {what} name {name!r}: it {bad}.",
                                     table=name if what == "table" else None,
                                     rule="valid-identifier")
    return name


def database_dir(warehouse: str, database: str) -> str:
    return os.path.join(warehouse, check_name(database, "database") + ".db")


def table_dir(warehouse: str, database: str, table: str) -> str:
    path = os.path.join(database_dir(warehouse, database), check_name(table, "table"))
    # Belt and braces on local disk, where links could lead elsewhere: whatever the name,
    # the result stays inside the warehouse. (check_name already refuses separators and
    # relative names, which is all an object store's keys could escape by.)
    root = os.path.realpath(warehouse)
    if is_local(warehouse) and os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise InvalidIdentifierError(f"Table {database}.{table} would be outside the warehouse",
                                     table=f"{database}.{table}", rule="valid-identifier")
    return path


# Hive's (and Paimon's PartitionPathUtils') characters that are escaped as %XX in paths.
_ESCAPE = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 0x20)}


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE else c for c in text)


def partition_value_text(value: Any) -> str:
    """A partition value as Paimon writes it into a directory name."""
    if value is None:
        return DEFAULT_PARTITION_NAME
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        if value.microsecond:
            text += f".{value.microsecond:06d}".rstrip("0")
        return text
    if isinstance(value, _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def partition_path(items: Sequence[tuple[str, Any]]) -> str:
    """``k1=v1/k2=v2`` for the given partition keys and values (empty when unpartitioned)."""
    return "/".join(f"{escape_path_name(k)}={escape_path_name(partition_value_text(v))}"
                    for k, v in items)


def bucket_dir(table_path: str, partition: Sequence[tuple[str, Any]], bucket: int) -> str:
    rel = partition_path(partition)
    base = os.path.join(table_path, rel) if rel else table_path
    return os.path.join(base, f"bucket-{bucket}")
