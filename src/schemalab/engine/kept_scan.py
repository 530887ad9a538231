"""Rows whose key newer files hold, dropped inside Spark's Parquet reader, with no filter in
the plan: ``schemalab/jvm/KeptParquet.java``, a ``ParquetFileFormat`` put in place of the
scan's own. A merge's ``newest`` buckets keep their base rows this way
(:mod:`schemalab.engine.merge.keyed_read`).

Why not a filter: Spark compiles a filter into the scan's loop, and there any filter that
drops rows costs 0.4-4 ns a row more than one that drops none, whatever it tests
(``bench/filter_cost.py``, four runs). On layout a of ``bench/merge_read.py`` at 30M rows (narrow
query) the bitmap's filter added 0.09-0.16 s to the base's 0.28-0.34 s; the reader, which
tests the key column of each batch in a plain loop and moves the kept rows to the front of
each column, 0.015 s.

:func:`without_held` returns None where the reader does not apply — Spark Connect, the
class not built (see :mod:`schemalab.engine.jvm_udfs`), a column of a type the reader does
not move, a scan that is not Spark's Parquet reader — and the caller filters instead: the
same rows, slower.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from schemalab.engine import jvm_udfs
from schemalab.engine.deletes import bitmap_words
from schemalab.engine.jvm_udfs import text

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import types as st

    from schemalab.engine.merge.keyset import KeyBitmap

_CLASS = "KeptParquet"
#: how Spark's plans show the scan: ``Format: Parquet, schemalab_kept`` (``KeptParquet``'s
#: toString)
FORMAT_NAME = "schemalab_kept"
_PARQUET = "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat"
_RELATION = "LogicalRelation"


def without_held(df: DataFrame, key_column: str, held: KeyBitmap, spark: SparkSession,
                 table: str) -> DataFrame | None:
    """``df`` — a scan by Spark's Parquet reader (``spark.read...load``), its columns as
    read — without the rows whose ``key_column`` (an integer column of the scan: the
    merge's key as the files hold it) ``held`` holds. A row without a key fails the read
    naming ``table``. None where the reader does not apply (see the module's docstring)."""
    from pyspark.sql import DataFrame as Frame
    from pyspark.sql import types as st

    cls = jvm_udfs.udf_class(spark, _CLASS)
    if cls is None:
        return None
    fields = {f.name: f for f in df.schema.fields}
    key = fields.get(key_column)
    if key is None or not isinstance(key.dataType, (st.ByteType, st.ShortType,
                                                    st.IntegerType, st.LongType)):
        return None
    if not all(_moves(f.dataType) for f in df.schema.fields):
        return None
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    analyzed = df._jdf.queryExecution().analyzed()  # type: ignore[operator]
    if analyzed.getClass().getSimpleName() != _RELATION or \
            analyzed.relation().fileFormat().getClass().getName() != _PARQUET:
        return None
    words = bitmap_words(held.bits)
    payload = b"".join([text(table), text(key_column),
                        struct.pack("<qi", held.lo, len(words)), words.astype("<i8").tobytes()])
    fmt = jvm_udfs.kept_instance(spark, cls, payload, b"kept-parquet")
    r = analyzed.relation()
    relation = r.copy(r.location(), r.partitionSchema(), r.dataSchema(), r.bucketSpec(), fmt,
                      r.options(), r.sparkSession())
    scan = analyzed.copy(relation, analyzed.output(), analyzed.catalogTable(),
                         analyzed.isStreaming(), analyzed.stream())
    jdf = jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, scan)
    return Frame(jdf, spark)


def _moves(t: st.DataType) -> bool:
    """Whether ``KeptParquet`` moves rows of a column of type ``t``, at any depth: the types
    ``tests/test_kept_scan.py`` reads through it (not intervals nor VARIANT, which the
    reader's Java moves too, untested: those scans are filtered)."""
    from pyspark.sql import types as st

    if isinstance(t, st.StructType):
        return all(_moves(f.dataType) for f in t.fields)
    if isinstance(t, st.ArrayType):
        return _moves(t.elementType)
    if isinstance(t, st.MapType):
        return _moves(t.keyType) and _moves(t.valueType)
    return isinstance(t, (st.BooleanType, st.ByteType, st.ShortType, st.IntegerType,
                          st.LongType, st.FloatType, st.DoubleType, st.DecimalType,
                          st.StringType, st.BinaryType, st.DateType, st.TimestampType,
                          st.TimestampNTZType, st.NullType))
