"""Where things live in a Paimon warehouse, and which names may live there.

    <warehouse>/<db>.db/<table>/schema/schema-N
    <warehouse>/<db>.db/<table>/snapshot/snapshot-N, LATEST, EARLIEST
    <warehouse>/<db>.db/<table>/manifest/...
    <warehouse>/<db>.db/<table>/<k1>=<v1>/.../bucket-<b>/data-<uuid>-<n>.parquet

Database and table names may hold anything a user can type between backticks (spaces,
quotes, dots, unicode, ``<script>``) except what would leave the warehouse: ``/``, NUL,
``.`` and ``..``, and a leading ``.`` (hidden files are ours: temporary and staging files).

Partition directories are named as Java Paimon names them (see
:func:`partition_value_text`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemalab.errors import InvalidIdentifierError
from schemalab.fileio import is_local
from schemalab.paimon.java_text import (
    java_double,
    java_epoch_days,
    java_float,
    java_is_whitespace_only,
    java_local_date_time,
    java_millis_of_day,
    java_plain_decimal,
)
from schemalab.types.model import TIMESTAMP_ROOTS, DataType, TypeRoot

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


# Paimon's PartitionPathUtils escapes these as %XX in partition directory names (as Hive).
_ESCAPE = set('"#%\'*/:=?\\\x7f{}[]^') | {chr(c) for c in range(0, 0x20)}

#: the table options that name partition directories (CoreOptions)
DEFAULT_NAME_OPTION = "partition.default-name"
LEGACY_NAME_OPTION = "partition.legacy-name"


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE else c for c in text)


@dataclass(frozen=True)
class PartitionNaming:
    """How a table names its partition directories: ``partition.default-name`` for a NULL,
    empty or blank value, and ``partition.legacy-name`` (default true: ``toString()`` of
    Paimon's internal value, so a DATE is its epoch day; false: the value cast to STRING)."""

    default_name: str = DEFAULT_PARTITION_NAME
    legacy_name: bool = True

    @classmethod
    def of(cls, options: Mapping[str, str]) -> PartitionNaming:
        legacy = str(options.get(LEGACY_NAME_OPTION, "true")).strip().lower() != "false"
        return cls(options.get(DEFAULT_NAME_OPTION) or DEFAULT_PARTITION_NAME, legacy)


#: (partition key, its type, its value) of one data file
PartitionItem = tuple[str, DataType, Any]


def partition_value_text(value: Any, t: DataType,
                         naming: PartitionNaming = PartitionNaming()) -> str:
    """A partition value as Java Paimon names its directory (before escaping): Java's
    ``InternalRowPartitionComputer.generatePartValues``.

        >>> import datetime as dt
        >>> from schemalab.types import parse_type as p
        >>> partition_value_text(dt.date(2024, 1, 5), p("DATE"))
        '19727'
        >>> partition_value_text(dt.date(2024, 1, 5), p("DATE"), PartitionNaming(legacy_name=False))
        '2024-01-05'
        >>> partition_value_text(" ", p("STRING"))
        '__DEFAULT_PARTITION__'
    """
    text = None if value is None else (
        _to_string(value, t) if naming.legacy_name else _cast_to_string(value, t))
    if text is None or java_is_whitespace_only(text):
        return naming.default_name
    return text


def _to_string(value: Any, t: DataType) -> str:
    """``toString()`` of Paimon's internal object for ``value``."""
    root = t.root
    if root is TypeRoot.DATE:
        return str(java_epoch_days(value))  # an Integer: days since the epoch
    if root is TypeRoot.TIME_WITHOUT_TIME_ZONE:
        return str(java_millis_of_day(value))  # an Integer: milliseconds of the day
    if root in TIMESTAMP_ROOTS:
        return java_local_date_time(_utc_wall_time(value))
    if root is TypeRoot.FLOAT:
        return java_float(value)
    if root is TypeRoot.DOUBLE:
        return java_double(value)
    if root is TypeRoot.DECIMAL:
        return java_plain_decimal(value, getattr(t, "scale", None))
    if root is TypeRoot.BOOLEAN:
        return "true" if value else "false"
    if isinstance(value, bytes):
        # Java prints a byte[] as "[B@<hash>", a name no reader can compute: Java Paimon
        # cannot read its own BINARY-partitioned tables. Keep the bytes' text.
        return value.decode("utf-8", "replace")
    return str(value)


def _cast_to_string(value: Any, t: DataType) -> str:
    """``partition.legacy-name`` = false: the value cast to STRING (CastExecutors)."""
    root = t.root
    if root is TypeRoot.DATE:
        return value.isoformat()
    if root is TypeRoot.TIME_WITHOUT_TIME_ZONE:
        return _fraction(value.strftime("%H:%M:%S"), value.microsecond,
                         getattr(t, "precision", None) or 0)
    if root in TIMESTAMP_ROOTS:
        ts = _utc_wall_time(value)
        precision = getattr(t, "precision", None)
        return _fraction(ts.strftime("%Y-%m-%d %H:%M:%S"), ts.microsecond,
                         6 if precision is None else precision)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return _to_string(value, t)


def java_to_string(value: Any, t: DataType) -> str:
    """``toString()`` of the internal object Java Paimon holds for ``value`` of type ``t``
    (DATE as its epoch days, TIMESTAMP as a LocalDateTime): what its maps and arrays print.

        >>> import datetime as dt
        >>> from schemalab.types import parse_type as p
        >>> java_to_string(dt.date(2024, 1, 5), p("DATE")), java_to_string(1e20, p("DOUBLE"))
        ('19727', '1.0E20')
    """
    return _to_string(value, t)


def java_cast_to_string(value: Any, t: DataType) -> str:
    """``value`` cast to STRING by Java Paimon's CastExecutors.

        >>> import datetime as dt
        >>> from schemalab.types import parse_type as p
        >>> java_cast_to_string(dt.date(2024, 1, 5), p("DATE"))
        '2024-01-05'
    """
    return _cast_to_string(value, t)


def _fraction(text: str, micros: int, precision: int) -> str:
    """DateTimeUtils.formatTimestamp's fraction: its 9 digits less trailing zeros, but at
    least ``precision`` of them."""
    digits = f"{micros:06d}000"
    while len(digits) > precision and digits.endswith("0"):
        digits = digits[:-1]
    return f"{text}.{digits}" if digits else text


def _utc_wall_time(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is not None:
        value = value.astimezone(_dt.UTC).replace(tzinfo=None)
    return value


def legacy_partition_value_text(value: Any) -> str:
    """A partition value as schemalab named its directory before it followed Java Paimon
    (DATE ``2024-01-05``, TIMESTAMP ``2024-01-05 10:11:12.345``, FLOAT as its double, ''
    as an empty name). Tables written then keep their files there; reads look there too."""
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


def partition_path(items: Sequence[PartitionItem],
                   naming: PartitionNaming = PartitionNaming()) -> str:
    """``k1=v1/k2=v2`` as Java Paimon names a file's partition directories (empty when
    unpartitioned): Java's ``PartitionPathUtils.generatePartitionPath``.

        >>> from schemalab.types import parse_type as p
        >>> partition_path([("dt", p("STRING"), "2024-01-01"), ("city", p("STRING"), "a/b")])
        'dt=2024-01-01/city=a%2Fb'
    """
    return "/".join(f"{escape_path_name(k)}={escape_path_name(partition_value_text(v, t, naming))}"
                    for k, t, v in items)


def legacy_partition_path(items: Sequence[PartitionItem]) -> str:
    """The directories earlier schemalab versions wrote the same partition to."""
    return "/".join(f"{escape_path_name(k)}={escape_path_name(legacy_partition_value_text(v))}"
                    for k, _, v in items)


def bucket_dir(table_path: str, partition: Sequence[PartitionItem], bucket: int,
               naming: PartitionNaming = PartitionNaming()) -> str:
    """``<table>/<partition dirs>/bucket-<b>``, the partition named as Java Paimon does."""
    return bucket_dir_at(table_path, partition_path(partition, naming), bucket)


def bucket_dir_at(table_path: str, partition_rel: str, bucket: int) -> str:
    base = os.path.join(table_path, partition_rel) if partition_rel else table_path
    return os.path.join(base, f"bucket-{bucket}")
