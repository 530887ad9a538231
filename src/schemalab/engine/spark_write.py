"""What every Spark write of data files shares, whatever the table format: values turned
into the form the footer is then completed for (see :mod:`schemalab.engine.parquet_types`),
Parquet row-group sizes, the staging directory's prefix, and the errors a write raises.

Spark writes into a hidden staging directory inside the table; files are then moved to their
final names, invisible to readers until a snapshot references them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.engine.parquet_thrift import annotate_columns
from schemalab.engine.parquet_types import (
    ColumnStorage,
    array_element_field_id,
    column_storage,
)
from schemalab.engine.spark_reader import quote, store_error
from schemalab.errors import SchemaLabError
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import VectorType

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

STAGING_PREFIX = ".staging-"
#: starts the message of the Spark error a bad value raises while writing: a NULL in a NOT NULL
#: column, or a value the column's type cannot hold. ``[schemalab:<rule>:<column index>]``
WRITE_ERROR = re.compile(r"\[schemalab:([a-z-]+):(\d+)\] ?")
#: Parquet row groups of at most this many (buffered) bytes and rows: a reader splits a file
#: at row groups only, so a compacted file of 10M rows written as one 128 MB row group
#: (Parquet's default) was read by one task while the other core idled (5.3 s vs 3.9 s for
#: the same rows in 20 files, bench/evolved_read.py --compact); by bytes alone, well-encoded
#: rows still made groups of 6.5M rows
ROW_GROUP_BYTES = 32 * 1024 * 1024
ROW_GROUP_ROWS = 500_000


def write_error(e: Exception, uri: str, schema: TableSchema,
                table: str | None) -> SchemaLabError | None:
    """The error a failed Spark write of ``schema``'s rows to ``uri`` stands for: a value a
    column refused (``[schemalab:<rule>:<column index>]``), or the store's; None for others."""
    m = WRITE_ERROR.search(str(e))
    if m is None:
        return store_error(e, uri)
    message = str(e)[m.end():].split(" SQLSTATE")[0].split("\n")[0]
    column = schema.fields[int(m.group(2))].name
    return SchemaLabError(message.strip(), table=table, column=column, rule=m.group(1))


def as_java_stores(df: DataFrame, schema: TableSchema, key_prefix: str = ""
                   ) -> tuple[DataFrame, dict[str, ColumnStorage]]:
    """``df`` with every column whose type Java Paimon stores otherwise than Spark would
    turned into what Java stores (see :mod:`schemalab.engine.parquet_types`), and how each
    such column's footer must be completed once Spark wrote it (Iceberg stores timestamps as
    Java Paimon does: INT64 microseconds). Columns named ``key_prefix`` + a field's name
    (Paimon's ``_KEY_<k>`` key columns) are stored as that field."""
    from pyspark.sql import functions as F

    storage: dict[str, ColumnStorage] = {}
    cols = []
    for sf in df.schema.fields:
        f = schema.field(sf.name)
        if f is None and key_prefix and sf.name.startswith(key_prefix):
            f = schema.field(sf.name[len(key_prefix):])
        how = column_storage(f.type) if f is not None else None
        if how is not None and f is not None and isinstance(f.type, VectorType) \
                and sf.name == f.name:  # Java's VECTOR element id, as Paimon readers match
            how = replace(how, field_ids=(*how.field_ids, (
                ("list", "element"), array_element_field_id(f.id))))
        if how is None or (how.convert is None and not how.int96 and not how.field_ids):
            cols.append(F.col(quote(sf.name)))
            continue
        storage[sf.name] = how
        cols.append(F.col(quote(sf.name)) if how.convert is None else
                    how.convert(F.col(quote(sf.name))).alias(sf.name, metadata=sf.metadata))
    return (df.select(*cols) if storage else df), storage


def complete_footer(path: str, storage: dict[str, ColumnStorage]) -> None:
    annotations = {(name, *p): a for name, how in storage.items() for p, a in how.annotations}
    int96 = [(name, *p) for name, how in storage.items() for p in how.int96]
    ids = {(name, *p): i for name, how in storage.items() for p, i in how.field_ids}
    if annotations or int96 or ids:
        annotate_columns(path, annotations, int96, ids)


def staged_parquet_files(staging: str, storage: dict[str, ColumnStorage] | None
                         ) -> Iterator[tuple[str, str]]:
    """The Parquet files Spark wrote under ``staging``, in a stable order, each as (its
    directory, its path) with its footer completed (``storage``) before it is yielded."""
    for d, _, names in sorted(fileio.walk(staging)):
        for n in sorted(names):
            if not n.endswith(".parquet"):
                continue
            src = os.path.join(d, n)
            if storage:
                complete_footer(src, storage)
            yield d, src
