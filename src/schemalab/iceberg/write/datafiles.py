"""Data files of an Iceberg table, written by Spark: rows (already in the table's current
schema, see :mod:`schemalab.engine.frames`) → Parquet files under ``data/``, one
directory per partition (``data/<field>=<value>/``), each file's footer given Iceberg's
field ids and its metrics read back (:mod:`schemalab.iceberg.write.footer`).

Timestamps are stored as Iceberg stores them (INT64 microseconds, ``isAdjustedToUTC`` for
``timestamptz``) the way the Paimon writer stores Java Paimon's: Spark writes the integers
and the footer names their logical type. Spark writes into a hidden staging directory;
files move to their final names, invisible to readers until a snapshot lists them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote as url_quote
from urllib.parse import unquote

from schemalab import fileio
from schemalab.engine.spark_write import (
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    STAGING_PREFIX,
    as_java_stores,
    staged_parquet_files,
    write_error,
)
from schemalab.iceberg.metadata import IcebergSchema
from schemalab.iceberg.write.distribution import distribute
from schemalab.iceberg.write.footer import FileMetrics, icebergize
from schemalab.iceberg.write.murmur import add_columns
from schemalab.schema.table_schema import TableSchema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

_PART_COL = "__sl_ip"
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_MARK = "v"
_TEXT_KINDS = ("string", "binary")


@dataclass(frozen=True)
class PartitionColumn:
    """One partition field of the write: its id, its name in paths, the Spark column that
    computes its value (an int, long, string or boolean) and how a value parsed from
    Spark's directory name becomes the partition value and its path text."""

    field_id: int
    name: str
    column: Column
    #: "int", "long", "string", "boolean", "decimal", "binary" (its hex in the column) or
    #: "unscaled" (a decimal's unscaled value, whose scale is ``scale``)
    kind: str
    scale: int = 0
    #: named intermediate columns to add to the frame, in order, before ``staged``: the
    #: same value as ``column`` in projections Spark compiles (``column`` may bind values
    #: in lambdas, which Spark interprets)
    steps: tuple[tuple[str, Column], ...] = ()
    staged: Column | None = None

    @property
    def spark_column(self) -> Column:
        """The column Spark partitions by (after ``steps``): a text value with a marker in
        front, since Spark writes an empty string as it writes NULL
        (``__HIVE_DEFAULT_PARTITION__``), where Iceberg's ``''`` and NULL are two
        partitions."""
        from pyspark.sql import functions as F

        column = self.column if self.staged is None else self.staged
        if self.kind in _TEXT_KINDS:
            return F.concat(F.lit(_MARK), column.cast("string"))
        return column

    def value(self, text: str) -> Any:
        if text == _HIVE_NULL:
            return None
        raw = unquote(text)
        if self.kind in _TEXT_KINDS:
            raw = raw[len(_MARK):]
        if self.kind in ("int", "long"):
            return int(raw)
        if self.kind == "boolean":
            return raw == "true"
        if self.kind == "decimal":
            from decimal import Decimal

            return Decimal(raw)
        if self.kind == "binary":  # the value's hex (Spark partitions by no BINARY column)
            return bytes.fromhex(raw)
        if self.kind == "unscaled":
            from decimal import Context, Decimal

            return Decimal(int(Decimal(raw))).scaleb(-self.scale, context=Context(prec=80))
        return raw


@dataclass(frozen=True)
class WrittenDataFile:
    path: str
    file_size: int
    #: partition field id → value (the partition field's own type, Avro-ready)
    partition: dict[int, Any]
    partition_texts: tuple[str, ...]
    metrics: FileMetrics


def write_data_files(spark: SparkSession, df: DataFrame, table_path: str, location: str,
                     schema: IcebergSchema, write_schema: TableSchema,
                     partitions: Sequence[PartitionColumn], *, table: str,
                     path_text: Any, order: Sequence[Column] = (),
                     distribution: str = "none") -> list[WrittenDataFile]:
    """Write ``df`` as data files of the table at ``table_path`` (``location``: its URI in
    the metadata). ``path_text(pc, value)`` renders a partition value for the file's
    directory; ``order`` (the table's sort order) sorts the rows within each file, after
    the partition values; ``distribution`` spreads the rows over the write tasks first
    (:mod:`schemalab.iceberg.write.distribution`). Returns the files in their final
    places; no snapshot lists them yet."""
    staging = os.path.join(table_path, "data", f"{STAGING_PREFIX}{uuid.uuid4().hex}")
    names = [f"{_PART_COL}{i}" for i in range(len(partitions))]
    steps = [step for pc in partitions for step in pc.steps]
    columns = [(name, pc.spark_column) for name, pc in zip(names, partitions, strict=True)]
    out = add_columns(df, [*steps, *columns])
    if steps:
        out = out.drop(*(name for name, _ in steps))
    out = distribute(out, distribution, names, order)
    if order:  # before the stores' casts: the order is the table's values'
        out = out.sortWithinPartitions(*names, *order)
    out, storage = as_java_stores(out, write_schema)
    try:
        writer = out.write.mode("overwrite").option("compression", "zstd") \
            .option("parquet.block.size", str(ROW_GROUP_BYTES)) \
            .option("parquet.block.row.count.limit", str(ROW_GROUP_ROWS))
        if names:
            writer = writer.partitionBy(*names)
        uri = fileio.spark_uri(staging)
        try:
            writer.parquet(uri)
        except Exception as e:
            error = write_error(e, uri, write_schema, table)
            if error is None:
                raise
            raise error from None
        return _place(staging, table_path, location, schema, partitions, storage, path_text)
    finally:
        fileio.delete_dir(staging)


def _place(staging: str, table_path: str, location: str, schema: IcebergSchema,
           partitions: Sequence[PartitionColumn], storage: Any,
           path_text: Any) -> list[WrittenDataFile]:
    placed: list[WrittenDataFile] = []
    tag = uuid.uuid4()
    counter = 0
    for d, src in staged_parquet_files(staging, storage):
        metrics = icebergize(src, schema)
        if metrics.record_count == 0:
            continue
        texts = _dir_values(fileio.display(d, staging))
        values = {pc.field_id: pc.value(texts.get(f"{_PART_COL}{i}", _HIVE_NULL))
                  for i, pc in enumerate(partitions)}
        rel = "/".join(f"{url_quote(pc.name, safe='')}="
                       f"{url_quote(path_text(pc, values[pc.field_id]), safe='')}"
                       for pc in partitions)
        name = f"{counter:05d}-0-{tag}-00001.parquet"
        counter += 1
        dest_dir = os.path.join(table_path, "data", rel) if rel else \
            os.path.join(table_path, "data")
        fileio.makedirs(dest_dir)
        dest = os.path.join(dest_dir, name)
        fileio.move(src, dest)
        uri = "/".join(p for p in (location.rstrip("/"), "data", rel, name) if p)
        placed.append(WrittenDataFile(uri, fileio.size(dest), values,
                                      tuple(path_text(pc, values[pc.field_id])
                                            for pc in partitions), metrics))
    return placed


def _dir_values(rel: str) -> dict[str, str]:
    out = {}
    for part in rel.split("/"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def local_path(table_path: str, location: str, uri: str) -> str:
    """Where a file the metadata names lies (its URI under ``location``)."""
    loc = location.rstrip("/")
    return os.path.join(table_path, uri[len(loc):].lstrip("/")) if uri.startswith(loc) else uri
