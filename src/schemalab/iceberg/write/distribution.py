"""How an INSERT's rows are spread over Spark's write tasks, as Iceberg's Spark writer does it
(``SparkWriteConf.distributionMode``, ``SparkWriteUtil.writeRequirements``):

- the mode is the session's ``spark.sql.iceberg.distribution-mode``, else the table property
  ``write.distribution-mode``; a value other than ``none`` / ``hash`` / ``range`` is refused
  (``DistributionMode.fromName``: "Invalid distribution mode: x"). Without either, a sorted
  table writes ``range``, a partitioned one ``hash``, any other ``none``; ``range`` on a
  table neither partitioned nor sorted, and ``hash`` on an unpartitioned one, are ``none``;
- ``none``: rows stay in the tasks they are in (each task writes a file for every partition
  it holds rows of); ``hash``: rows are clustered by their partition values (a shuffle: one
  task, so one file, per partition); ``range``: rows are range-partitioned by the partition
  values, then the table's sort order.

Within each task the rows are then sorted by partition values and sort order, as before
(:func:`schemalab.iceberg.write.datafiles.write_data_files`).

    >>> write_mode({}, None, partitioned=True, ordered=False, table="db.t")
    'hash'
    >>> write_mode({DISTRIBUTION_MODE: "RANGE"}, None, partitioned=False, ordered=False,
    ...            table="db.t")
    'none'
    >>> write_mode({DISTRIBUTION_MODE: "range"}, "hash", partitioned=True, ordered=True,
    ...            table="db.t")
    'hash'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from schemalab.errors import SqlError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: the table property (``TableProperties.WRITE_DISTRIBUTION_MODE``)
DISTRIBUTION_MODE = "write.distribution-mode"
#: Spark's session setting (``SparkSQLProperties.DISTRIBUTION_MODE``), before the property
SESSION_DISTRIBUTION_MODE = "spark.sql.iceberg.distribution-mode"
MODES = ("none", "hash", "range")


def write_mode(properties: Mapping[str, str], session: str | None, *, partitioned: bool,
               ordered: bool, table: str) -> str:
    """The distribution mode of an INSERT into the table (see the module's text)."""
    name = session if session is not None else properties.get(DISTRIBUTION_MODE)
    if name is None:
        return "range" if ordered else "hash" if partitioned else "none"
    mode = name.lower()
    if mode not in MODES:
        where = SESSION_DISTRIBUTION_MODE if session is not None else \
            f"table property {DISTRIBUTION_MODE}"
        raise SqlError(f"Invalid distribution mode: {name} (table {table}: {where} is "
                       f"{name!r}; Iceberg's modes are {', '.join(MODES)})", table=table,
                       rule="iceberg-distribution-mode")
    if mode == "range" and not partitioned and not ordered:
        return "none"
    if mode == "hash" and not partitioned:
        return "none"
    return mode


def session_mode(spark: SparkSession) -> str | None:
    """The session's ``spark.sql.iceberg.distribution-mode`` (None: not set)."""
    value = spark.conf.get(SESSION_DISTRIBUTION_MODE, None)
    return None if value is None or value == "" else str(value)


def distribute(df: DataFrame, mode: str, partition_columns: Sequence[str],
               order: Sequence[Column]) -> DataFrame:
    """``df`` spread over write tasks by ``mode``: clustered by the ``partition_columns``
    (``hash``), or range-partitioned by them then ``order`` (``range``)."""
    from pyspark.sql import functions as F

    if mode == "hash" and partition_columns:
        return df.repartition(*[F.col(c) for c in partition_columns])
    if mode == "range" and (partition_columns or order):
        return df.repartitionByRange(*[F.col(c).asc_nulls_first() for c in partition_columns],
                                     *order)
    return df
