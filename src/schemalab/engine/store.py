"""The write path of a table: rows → Parquet data files → a committed snapshot."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schemalab.engine import pk_write, write
from schemalab.errors import CommitConflictError, SchemaLabError, SqlError
from schemalab.paimon import commit as commits
from schemalab.paimon.bucket import bucket_keys, bucket_of
from schemalab.paimon.manifest import FileKind, ManifestEntry
from schemalab.paimon.primary_key import check_writable
from schemalab.paimon.snapshot import Snapshot
from schemalab.schema.table_schema import TableSchema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

    from schemalab.table import Table


def insert(table: Table, data: Any, *, columns: Any = None, by_position: bool = False,
           overwrite: bool = False) -> Snapshot | None:
    schema = table.schema
    if schema.primary_keys:
        check_writable(schema, table.name)  # before Spark starts
    spark = table.spark
    df = write.to_frame(spark, data, schema, table.name, columns=columns,
                        by_position=by_position)

    def write_once() -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
        if schema.primary_keys:
            return pk_write.write_entries(table, df, schema)
        files = write.write_files(spark, df, table.path, schema, table=table.name,
                                  bucket_column=_bucket_column(schema, table.name))
        return files, [commits.data_file_entry(f, schema) for f in files]

    def replaces_for(files: list[write.WrittenFile]
                     ) -> Callable[[Snapshot | None], list[ManifestEntry]] | None:
        if not overwrite:
            return None
        partitions = {f.partition for f in files}

        def replaces(snap: Snapshot | None) -> list[ManifestEntry]:
            return _overwritten(table, snap, partitions)

        return replaces

    return _write_and_commit(table, schema, write_once, replaces_for,
                             kind="OVERWRITE" if overwrite else "APPEND")


#: how often a primary-key write that lost the sequence-number race is written again
PK_WRITE_ATTEMPTS = 5


def _write_and_commit(
        table: Table, schema: TableSchema,
        write_once: Callable[[], tuple[list[write.WrittenFile], list[ManifestEntry]]],
        replaces_for: Callable[[list[write.WrittenFile]],
                               Callable[[Snapshot | None], list[ManifestEntry]] | None],
        *, kind: str) -> Snapshot | None:
    """Write the data files, then commit them. A failed commit removes its files: nothing
    references them. A primary-key write whose rows were numbered before another commit to
    the same buckets (``sequence_guard``) is written again, numbered from the new latest
    snapshot, as an append commit that loses a race retries on the fresh snapshot."""
    for attempt in range(1, PK_WRITE_ATTEMPTS + 1):
        files, entries = write_once()
        replaces = replaces_for(files)
        if schema.primary_keys:
            replaces = pk_write.sequence_guard(table, entries, replaces)
        try:
            return commits.commit(table.path, table.name, schema, entries, kind=kind,
                                  replaces=replaces)
        except CommitConflictError as e:
            _remove(files)
            if e.rule == "primary-key-sequence-conflict" and attempt < PK_WRITE_ATTEMPTS:
                continue
            raise
        except BaseException:
            # lost too many races, a corrupt snapshot, an interrupt, ...
            _remove(files)
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def _remove(files: list[write.WrittenFile]) -> None:
    for f in files:
        with contextlib.suppress(OSError):
            os.unlink(f.path)


def _overwritten(table: Table, snap: Snapshot | None,
                 partitions: set[tuple[Any, ...]]) -> list[ManifestEntry]:
    """DELETE entries for the files of ``snap`` an INSERT OVERWRITE replaces: every file of
    the partitions it writes (all files of an unpartitioned table), as Spark's dynamic mode.
    The commit asks again for each attempt, against the snapshot that attempt builds on."""
    out = []
    schema = table.schema
    part_types = [schema.type_of(k) for k in schema.partition_keys]
    for e in table.live_entries(snap):
        values = tuple(e.partition_values(part_types)) if part_types else ()
        if not part_types or values in partitions:
            out.append(ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets,
                                     e.file))
    return out


def _bucket_column(schema: TableSchema, table: str) -> Column | None:
    """A Spark column with each row's Paimon bucket, for fixed-bucket tables."""
    n = int(schema.effective_options().get("bucket", "-1"))
    if n == -1:
        return None
    if n <= 0:
        raise SchemaLabError(f"Table {table}: option 'bucket' must be -1 or positive, not {n}",
                             table=table, rule="bucket")
    keys = bucket_keys(schema.effective_options(), schema.primary_keys, schema.partition_keys)
    if not keys:
        raise SchemaLabError(
            f"Table {table} has {n} fixed buckets but no bucket key: set the table option "
            "'bucket-key' (or use 'bucket' = '-1').", table=table, rule="bucket-key")
    missing = [k for k in keys if schema.field(k) is None]
    if missing:
        raise SchemaLabError(f"Table {table}: bucket key column {missing[0]} does not exist",
                             table=table, column=missing[0], rule="bucket-key")
    return bucket_udf(schema, keys, n)


def bucket_udf(schema: TableSchema, keys: list[str], n: int) -> Column:
    """A Spark column with ``bucket_of`` of each row's key values.

    A plain row-at-a-time Python UDF, on purpose: PySpark 4.3 rejects a pandas UDF declared
    with ``*cols`` (UNSUPPORTED_SIGNATURE), and a pandas UDF would hand an INT/BIGINT key
    column holding a NULL over as float64, so keys above 2**53 would hash wrongly. Pickled
    rows keep exact Python values (int, str, Decimal, date, datetime)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    key_types = [schema.type_of(k) for k in keys]

    def bucket(*values: Any) -> int:
        return bucket_of(list(values), key_types, n)

    udf = F.udf(bucket, st.IntegerType(), useArrow=False)
    return udf(*[F.col("`" + k.replace("`", "``") + "`") for k in keys])


def delete_where(table: Table, where: str | None, *,
                 rows: DataFrame | None = None) -> Snapshot | None:
    """DELETE FROM: delete records for the rows of a primary-key table that ``where``
    selects (or for ``rows``, today's rows already filtered)."""
    schema = table.schema
    if not schema.primary_keys:
        raise SqlError(
            f"DELETE FROM {table.name}: Paimon deletes rows only in primary-key tables "
            "(append tables are insert-only); use INSERT OVERWRITE to rewrite a partition.",
            table=table.name, rule="delete-needs-primary-key")
    return _write_and_commit(
        table, schema, lambda: pk_write.delete_where(table, where, rows),
        lambda files: None, kind="APPEND")
