"""Reading one group of files on Spark, in the plan's schema.

A group whose files carry Parquet field ids and need no cast Spark's reader cannot do is
read in one scan by field id. That scan requests synthetic column names (``_sl_f<id>``): the
vectorized reader fails when a file column's name equals a *different* requested field of
another type (a swap, or a dropped name re-used with a new type), and matching by id makes
names irrelevant anyway. Every other group is read by the files' own column names, in the
files' own types, and then evolved (:mod:`schemalab.engine.evolve`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemalab.engine.evolve import evolve, literal
from schemalab.engine.plan import ColumnRead, FileGroup, ReadPlan, StoredAs
from schemalab.engine.spark_reader import (
    all_nullable,
    literal_path,
    quote,
    store_error,
    without_ids,
)
from schemalab.fileio import spark_uri
from schemalab.paimon.primary_key import SEQUENCE_NUMBER, VALUE_KIND
from schemalab.schema import TableSchema
from schemalab.types.model import DataField, DataType, MapType, TypeRoot
from schemalab.types.spark import FIELD_ID_KEY, to_spark
from schemalab.types.visitor import TypeTransform, nested_names, visit

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

ID_SCAN_PREFIX = "_sl_f"
#: internal Spark column names a primary-key read adds to each row
SEQ_COL = "__sl_seq"
KIND_COL = "__sl_kind"
FILE_COL = "__sl_file"
#: a field id no file holds: requesting it keeps one row per record when no column is read
_ROWS_ONLY_ID = 2**31 - 1


def read_group(plan: ReadPlan, group: FileGroup, spark: SparkSession, *, system: bool = False,
               with_file: bool = False) -> DataFrame:
    """The files of ``group`` in the plan's schema. ``system`` adds the primary-key files'
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` (as ``__sl_seq``, ``__sl_kind``), ``with_file``
    each row's file (``__sl_file``)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    extra_fields: list[st.StructField] = []
    extra_cols: list[Column] = []
    if system:
        # Requested by name (no field id): Spark matches a field without an id by name even
        # in a scan by id, and pypaimon's files carry no ids at all.
        extra_fields = [st.StructField(SEQUENCE_NUMBER, st.LongType(), True),
                        st.StructField(VALUE_KIND, st.ByteType(), True)]
        extra_cols = [F.col(SEQUENCE_NUMBER).alias(SEQ_COL), F.col(VALUE_KIND).alias(KIND_COL)]
    if with_file:
        extra_cols.append(F.input_file_name().alias(FILE_COL))
    paths = [literal_path(spark_uri(f.path)) for f in group.files]
    if group.by_id:
        prefix = id_scan_prefix([plan.schemas[sid] for sid in group.schema_ids
                                 if sid in plan.schemas])
        read = [c.target for c in group.columns if _scanned(c)]
        fields = [st.StructField(f"{prefix}{t.id}", _id_read_type(t.type, prefix), True,
                                 {FIELD_ID_KEY: t.id}) for t in read]
        if not fields and not extra_fields:
            fields = [st.StructField("_sl_rows", st.IntegerType(), True,
                                     {FIELD_ID_KEY: _ROWS_ONLY_ID})]
        df = _parquet(spark, st.StructType(fields + extra_fields), paths)
        # Spark reads every file column as nullable (file sources apply ``asNullable`` to a
        # user schema), and a cast may not turn a nullable ARRAY element / MAP value / ROW
        # field into a NOT NULL one: cast to the all-nullable form of the target type.
        cols = [F.col(quote(f"{prefix}{c.target.id}")).cast(all_nullable(to_spark(
                    c.target.type))).alias(c.target.name) if _scanned(c) else
                literal(None if c.constant is None else c.constant.value,
                        c.target.type).alias(c.target.name)
                for c in group.columns]
        return df.select(*cols, *extra_cols)
    # By name, in each column's file type. Nested ROW fields are requested by name too (no
    # ids): files written without Parquet field ids (Paimon's, pypaimon's) fail a read schema
    # that carries ids, and the names are exactly the file's own, so nothing can collide.
    stored = dict(group.stored)
    read_fields = [st.StructField(c.source.name,
                                  _stored_read_type(stored[c.source.name])
                                  if c.source.name in stored
                                  else without_ids(to_spark(c.source.type)), True)
                   for c in group.columns if c.source is not None]
    if not read_fields and not extra_fields:
        # No column of the output exists in these files: still one row per record.
        df = _parquet(spark, None, paths).select(F.lit(1).alias("_sl_one"))
    else:
        df = _parquet(spark, st.StructType(read_fields + extra_fields), paths)
    out = []
    for c in group.columns:
        if c.source is None:
            value = None if c.constant is None else c.constant.value
            out.append(literal(value, c.target.type).alias(c.target.name))
            continue
        col = F.col(quote(c.source.name))
        if c.source.name in stored:
            col = _from_stored(col, stored[c.source.name], c.source.type)
        expr = evolve(col, c.source.type, c.target.type, plan.cast_mode, plan.table, c.target,
                      dict(c.defaults))
        out.append(expr.alias(c.target.name))
    return df.select(*out, *extra_cols)


def _parquet(spark: SparkSession, schema: st.StructType | None, paths: list[str]) -> DataFrame:
    """``spark.read.parquet`` of ``paths`` (with ``schema``), with a clear error when the
    session has no file system for their store."""
    reader = spark.read if schema is None else spark.read.schema(schema)
    try:
        return reader.parquet(*paths)
    except Exception as e:
        error = store_error(e, paths[0])
        if error is None:
            raise
        raise error from None


def _scanned(c: ColumnRead) -> bool:
    """Whether a scan by id requests the column: not for constants, nor for a column of
    Iceberg's ``unknown`` type, which no file holds."""
    return c.constant is None and c.target.type.root is not TypeRoot.NULL


def id_scan_prefix(schemas: Sequence[TableSchema]) -> str:
    """``_sl_f``, lengthened until no column of the files (at any depth) is named like a
    synthetic column: a file column called ``_sl_f1`` that is *not* field 1 would otherwise
    meet the vectorized reader's name-collision bug this scan exists to avoid."""
    names: set[str] = set()
    for schema in schemas:
        names |= nested_names(schema.fields)
    prefix = ID_SCAN_PREFIX
    while any(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
        prefix += "_"
    return prefix


class _SyntheticNames(TypeTransform):
    """The target type with every nested ROW field renamed ``<prefix><id>``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def row_field(self, f: DataField, new_type: DataType) -> DataField:
        return DataField(f.id, f"{self.prefix}{f.id}", new_type.with_nullable(True))

    def map(self, t: MapType, key: DataType, value: DataType) -> DataType:
        return MapType(t.key, value, t.nullable)  # map keys are never ROWs read by id


def _id_read_type(t: DataType, prefix: str = ID_SCAN_PREFIX) -> st.DataType:
    """The Spark type requested for ``t`` in a scan by id: nested ROW fields renamed
    ``<prefix><id>`` and carrying their ids, every level nullable."""
    return all_nullable(to_spark(visit(t, _SyntheticNames(prefix))))


def _stored_read_type(how: StoredAs) -> st.DataType:
    from pyspark.sql import types as st

    return st.LongType() if how == "timestamp-nanos" else st.IntegerType()


def _from_stored(col: Column, how: StoredAs, t: DataType) -> Column:
    """A column read in its stored form (see :func:`schemalab.engine.plan.stored_as`) as a
    value of type ``t``."""
    from pyspark.sql import functions as F

    if how == "timestamp-nanos":
        # Spark holds microseconds: the nanoseconds below them go, toward the past
        return F.timestamp_micros(F.floor(col / 1000)).cast(to_spark(t))
    seconds = (F.pmod(col, F.lit(60_000)) / 1000).cast("decimal(16, 6)")
    time = F.make_time((col / 3_600_000).cast("int"),
                       F.pmod((col / 60_000).cast("int"), F.lit(60)), seconds)
    return time.cast(to_spark(t))
