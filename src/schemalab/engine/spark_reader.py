"""What Spark's file readers do by themselves, as measured on PySpark 4.3, and the small
Spark-side helpers every scan needs.

    >>> from schemalab.types import parse_type as t
    >>> spark_reader_widens(t("INT"), t("BIGINT")), spark_reader_widens(t("BIGINT"), t("INT"))
    (True, False)
    >>> literal_path("/w/t[1]/data/a.parquet")
    '/w/t\\\\[1\\\\]/data/a.parquet'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError
from schemalab.types.casts import alters_values
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataType,
    MapType,
    TypeRoot,
)
from schemalab.types.spark import FIELD_ID_KEY, to_spark
from schemalab.types.visitor import contains_row

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column
    from pyspark.sql import types as st


@functools.lru_cache(maxsize=4096)
def spark_sig(t: DataType) -> str:
    """The Spark type that holds ``t``, as text: two types Spark cannot tell apart (VARCHAR
    lengths, CHAR and STRING) have one signature."""
    return to_spark(t).simpleString()


_INTS = {TypeRoot.TINYINT: 1, TypeRoot.SMALLINT: 2, TypeRoot.INTEGER: 3, TypeRoot.BIGINT: 4}


def spark_reader_widens(st_: DataType, tt: DataType) -> bool:
    """Type changes Spark's Parquet readers (vectorized and row) both apply correctly while
    reading; everything else is read in the file's type and cast afterwards."""
    # Widening inside ARRAY/MAP is applied by the readers too; without this ARRAY<INT> →
    # ARRAY<BIGINT> would cost its files a separate name-based scan plus a per-element
    # transform.
    if isinstance(st_, ArrayType) and isinstance(tt, ArrayType):
        return same_or_widens(st_.element, tt.element)
    if isinstance(st_, MapType) and isinstance(tt, MapType):
        return spark_sig(st_.key) == spark_sig(tt.key) and same_or_widens(st_.value, tt.value)
    if isinstance(st_, AtomicType) and isinstance(tt, AtomicType):
        s, t = st_.root, tt.root
        if s in _INTS and t in _INTS:
            return _INTS[t] >= _INTS[s] and _INTS[t] >= 3
        if s is TypeRoot.INTEGER and t is TypeRoot.DOUBLE:
            return True
        if s is TypeRoot.FLOAT and t is TypeRoot.DOUBLE:
            return True
        if s is TypeRoot.INTEGER and t is TypeRoot.DECIMAL:
            return (tt.precision or 10) - (tt.scale or 0) >= 10
        if s is TypeRoot.DECIMAL and t is TypeRoot.DECIMAL:
            return ((tt.scale or 0) >= (st_.scale or 0)
                    and (tt.precision or 10) - (tt.scale or 0)
                    >= (st_.precision or 10) - (st_.scale or 0))
        if s is TypeRoot.DATE and t is TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE:
            return True
    return False


def same_or_widens(st_: DataType, tt: DataType) -> bool:
    """Read as is, or widened by the reader. ROWs never: their fields are matched by id one
    by one (an "evolved" column, not a "widened" one)."""
    if contains_row(st_) or contains_row(tt):
        return False
    return ((spark_sig(st_) == spark_sig(tt) and not alters_values(st_, tt))
            or spark_reader_widens(st_, tt))


def literal_path(path: str) -> str:
    """``path`` with Hadoop glob characters escaped. Spark globs every path it reads: a
    table named ``x[1]`` would match ``x1`` instead, and globbing lists sibling directories,
    failing on any whose name Hadoop cannot parse (``a:b``). Escaped components are taken
    literally, without listing."""
    return re.sub(r"([{}\[\]*?\\])", r"\\\1", path)


def store_error(e: BaseException, uri: str) -> SchemaLabError | None:
    """A clear error for a Spark session that has no file system for ``uri``'s store (the
    usual case for ``s3a://`` on a Spark without hadoop-aws), or None for other errors."""
    text = str(e)
    if "S3AFileSystem not found" not in text and "No FileSystem for scheme" not in text:
        return None
    scheme = uri.split("://", 1)[0] if "://" in uri else "file"
    hint = ("add hadoop-aws matching your Spark's Hadoop version (spark.jars.packages "
            "org.apache.hadoop:hadoop-aws:<version>) and the fs.s3a settings listed in the "
            "README's \"Your tables, your cluster\"" if scheme == "s3a" else
            f"add the Hadoop connector for {scheme}:// to the session")
    return SchemaLabError(
        f"Spark cannot read or write {uri}: the session has no file system for "
        f"{scheme}:// ({hint}). History, lineage and explanations need no Spark and work "
        "already.", rule="spark-store")


def quote(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def _rebuild(t: st.DataType, leaf: Callable[[st.DataType], st.DataType],
             metadata: Callable[[dict[str, Any]], dict[str, Any]] = dict,
             nullable: bool | None = None) -> st.DataType:
    """``t`` rebuilt through its structs, arrays and maps: each leaf type through ``leaf``,
    each struct field's metadata through ``metadata``, and every nested nullability set to
    ``nullable`` (None: kept)."""
    from pyspark.sql import types as st

    def keep(flag: bool) -> bool:
        return flag if nullable is None else nullable

    def again(inner: st.DataType) -> st.DataType:
        return _rebuild(inner, leaf, metadata, nullable)

    if isinstance(t, st.StructType):
        return st.StructType([st.StructField(f.name, again(f.dataType), keep(f.nullable),
                                             metadata(f.metadata)) for f in t.fields])
    if isinstance(t, st.ArrayType):
        return st.ArrayType(again(t.elementType), keep(t.containsNull))
    if isinstance(t, st.MapType):
        return st.MapType(again(t.keyType), again(t.valueType), keep(t.valueContainsNull))
    return leaf(t)


def _same(t: st.DataType) -> st.DataType:
    return t


def cast_to(col: Column, t: st.DataType) -> Column:
    """``col.cast(t)``; an atomic type by its name (one call into Spark where a type object
    takes three: it is sent as JSON and parsed; a merge read builds hundreds of casts)."""
    from pyspark.sql import types as st

    named = (st.BooleanType, st.ByteType, st.ShortType, st.IntegerType, st.LongType,
             st.FloatType, st.DoubleType, st.DecimalType, st.BinaryType, st.DateType,
             st.TimestampType, st.TimestampNTZType)
    if type(t) in named or (type(t) is st.StringType and t == st.StringType()):
        return col.cast(t.simpleString())
    return col.cast(t)


def all_nullable(t: st.DataType) -> st.DataType:
    """``t`` with every nested field, array element and map value nullable. Spark reads every
    file column as nullable, and a cast may not turn a nullable ARRAY element / MAP value /
    ROW field into a NOT NULL one."""
    return _rebuild(t, _same, nullable=True)


def without_ids(t: st.DataType) -> st.DataType:
    """``t`` without Parquet field ids on nested fields (a read by name)."""
    return _rebuild(t, _same, lambda m: {k: v for k, v in m.items() if k != FIELD_ID_KEY})


def orc_read_type(t: st.DataType) -> st.DataType:
    """``t`` with every TIMESTAMP_NTZ as TIMESTAMP: Spark's ORC reader returns wrong values
    (silently) for an ORC timestamp requested as TIMESTAMP_NTZ; the instant, cast back in the
    session's UTC, is the file's wall time."""
    from pyspark.sql import types as st

    def leaf(inner: st.DataType) -> st.DataType:
        return st.TimestampType() if isinstance(inner, st.TimestampNTZType) else inner

    return _rebuild(t, leaf)
