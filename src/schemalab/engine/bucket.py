"""Each row's Paimon bucket as a Spark column, for fixed-bucket tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemalab.engine.spark_reader import quote
from schemalab.errors import SchemaLabError
from schemalab.paimon.bucket import bucket_keys, bucket_of
from schemalab.schema import TableSchema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column


def bucket_column(schema: TableSchema, table: str) -> Column | None:
    """A Spark column with each row's Paimon bucket for a fixed-bucket table; None when the
    table has no fixed buckets (``bucket`` = -1)."""
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
    return udf(*[F.col(quote(k)) for k in keys])
