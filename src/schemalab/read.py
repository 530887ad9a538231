"""Evolve-on-read: plan how each data file's columns become the output schema, then read.

Every output field is matched by id to the field of the schema each file was written with
(FLIP-226): an id the file lacks reads as NULL, a file column whose id is gone is ignored, a
renamed column is read under its old name, a retyped one is cast under the table's cast mode.

Planning groups files by the *projection they need* — which file column and type feeds
each output field — not by schema id, so a table with 50 schema versions whose files need 3
distinct projections costs 3 scans. Files that carry Parquet field ids (ours) and need no
cast Spark's Parquet reader cannot do are read together in one scan by field id. That scan
requests synthetic column names (``_sl_f<id>``): the vectorized reader fails when a file
column's name equals a *different* requested field of another type (a swap, or a dropped
name re-used with a new type), and matching by id makes names irrelevant anyway.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from schemalab.casts import CastMode, cast_kind
from schemalab.errors import CorruptFileError
from schemalab.schema import TableSchema
from schemalab.types import (
    FIELD_ID_KEY,
    TIMESTAMP_ROOTS,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
    spark_field,
    to_spark,
)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

ColumnKind = Literal["same", "renamed", "widened", "cast", "evolved", "null"]
#: how a file stores a column Spark cannot read as its type: TIMESTAMP(9) as Parquet INT64
#: nanoseconds, TIME as INT32 milliseconds of the day (pyarrow's, hence pypaimon's, forms)
StoredAs = Literal["timestamp-nanos", "time-millis"]

ID_SCAN_PREFIX = "_sl_f"


@dataclass(frozen=True)
class DataFile:
    """A live data file as the read needs it."""

    path: str
    schema_id: int
    row_count: int
    partition: tuple[object, ...] = ()
    bucket: int = 0
    file_size: int = 0
    level: int = 0
    min_sequence_number: int = 0
    max_sequence_number: int = 0


@dataclass(frozen=True)
class ColumnRead:
    """How one output column is produced from the files of a group."""

    target: DataField
    source: DataField | None
    kind: ColumnKind
    #: "implicit" or "explicit" for kind "cast" (and the worst cast inside "evolved")
    cast: str | None = None

    def describe(self) -> str:
        t, s = self.target, self.source
        if s is None:
            return f"NULL: field {t.id} `{t.name}` did not exist when these files were written"
        src = f"`{s.name}`"
        if self.kind == "same":
            return f"by id from column {src}"
        if self.kind == "renamed":
            return f"by id from column {src} (renamed to `{t.name}`)"
        if self.kind == "widened":
            return f"by id from column {src} ({s.type.sql()} → {t.type.sql()}, widened on read)"
        if self.kind == "cast":
            return (f"by id from column {src} ({s.type.sql()} → {t.type.sql()} "
                    f"{self.cast} cast)")
        return f"by id from column {src} (nested fields evolved by id: {s.type.sql()} → " \
               f"{t.type.sql()})"


@dataclass(frozen=True)
class FileGroup:
    files: tuple[DataFile, ...]
    columns: tuple[ColumnRead, ...]
    #: read in one scan by Parquet field id
    by_id: bool
    #: file columns that the output does not use (dropped fields), by schema id
    ignored: tuple[tuple[int, DataField], ...] = ()
    #: how each output column comes from the files of each schema version in the group
    columns_by_schema: dict[int, tuple[ColumnRead, ...]] = field(default_factory=dict)
    #: file columns stored in a form Spark cannot read as their type (see ``stored_as``)
    stored: tuple[tuple[str, StoredAs], ...] = ()

    @property
    def schema_ids(self) -> tuple[int, ...]:
        return tuple(sorted({f.schema_id for f in self.files}))

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


@dataclass(frozen=True)
class ReadPlan:
    table: str
    target: TableSchema
    cast_mode: CastMode
    groups: tuple[FileGroup, ...]
    #: snapshot read, or None for an empty table
    snapshot_id: int | None = None
    schemas: dict[int, TableSchema] = field(default_factory=dict)

    @property
    def files(self) -> list[DataFile]:
        return [f for g in self.groups for f in g.files]


# --------------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------------


def plan_read(table: str, target: TableSchema, files: Sequence[DataFile],
              schema_of: Callable[[int], TableSchema], mode: CastMode,
              has_field_ids: Callable[[str], bool] | None = None,
              snapshot_id: int | None = None) -> ReadPlan:
    """Group ``files`` by the projection they need onto ``target``."""
    has_ids = has_field_ids or parquet_has_field_ids
    schemas: dict[int, TableSchema] = {}
    groups: dict[tuple[object, ...], list[DataFile]] = {}
    group_columns: dict[tuple[object, ...], tuple[ColumnRead, ...]] = {}
    group_ignored: dict[tuple[object, ...], set[tuple[int, DataField]]] = {}
    group_by_id: dict[tuple[object, ...], bool] = {}
    group_stored: dict[tuple[object, ...], tuple[tuple[str, StoredAs], ...]] = {}
    per_schema: dict[int, tuple[tuple[ColumnRead, ...], bool]] = {}
    for f in files:
        file_schema = schemas.get(f.schema_id)
        if file_schema is None:
            file_schema = schemas[f.schema_id] = schema_of(f.schema_id)
        if f.schema_id not in per_schema:
            cols = tuple(_column_read(t, file_schema) for t in target.fields)
            per_schema[f.schema_id] = (cols, all(_id_scan_safe(c) for c in cols))
        cols, id_safe = per_schema[f.schema_id]
        by_id = id_safe and has_ids(f.path)
        # The name-path key must pin down everything execution reads by: names and Spark
        # types are not enough for ROW columns, whose nested fields are mapped *by id* (a
        # nested field dropped and re-added under the same name and type has a new id, and
        # files from before and after need different projections).
        stored = () if by_id else stored_as(f.path, file_schema)
        key: tuple[object, ...] = ("id",) if by_id else ("name", stored) + tuple(
            None if c.source is None else (c.source.name, _id_sig(c.source.type), c.kind)
            for c in cols)
        groups.setdefault(key, []).append(f)
        if key not in group_columns:
            group_columns[key] = cols
            group_by_id[key] = by_id
            group_stored[key] = stored
        target_ids = {c.target.id for c in cols}
        ignored = group_ignored.setdefault(key, set())
        for sf in file_schema.fields:
            if sf.id not in target_ids:
                ignored.add((f.schema_id, sf))
    plan_groups = tuple(
        FileGroup(tuple(fs), group_columns[k], group_by_id[k],
                  tuple(sorted(group_ignored[k], key=lambda x: (x[0], x[1].id))),
                  {sid: per_schema[sid][0] for sid in sorted({f.schema_id for f in fs})},
                  group_stored[k])
        for k, fs in groups.items())
    return ReadPlan(table, target, mode, plan_groups, snapshot_id, schemas)


def _column_read(target: DataField, file_schema: TableSchema) -> ColumnRead:
    source = next((f for f in file_schema.fields if f.id == target.id), None)
    if source is None:
        return ColumnRead(target, None, "null")
    st, tt = source.type, target.type
    if _spark_sig(st) == _spark_sig(tt) and not _nested_differs(st, tt):
        return ColumnRead(target, source, "same" if source.name == target.name else "renamed")
    if _contains_row(tt) or _contains_row(st):
        return ColumnRead(target, source, "evolved", _worst_cast(st, tt))
    kind = cast_kind(st, tt)
    if kind in ("identity", None):
        # identity: differs only in nullability or in a Spark-invisible way (VARCHAR lengths)
        return ColumnRead(target, source, "same" if source.name == target.name else "renamed")
    if _spark_reader_widens(st, tt):
        return ColumnRead(target, source, "widened", "implicit")
    return ColumnRead(target, source, "cast", kind)


def _worst_cast(st: DataType, tt: DataType) -> str | None:
    kind = cast_kind(st, tt)
    return None if kind in (None, "identity") else kind


def _spark_sig(t: DataType) -> str:
    return to_spark(t).simpleString()


def _id_sig(t: DataType) -> str:
    """The Spark type with the field id of every nested ROW field (``simpleString`` has
    names and types only)."""
    if isinstance(t, RowType):
        return "struct<" + ",".join(f"{f.id}:{f.name}:{_id_sig(f.type)}" for f in t.fields) + ">"
    if isinstance(t, ArrayType):
        return f"array<{_id_sig(t.element)}>"
    if isinstance(t, MultisetType):
        return f"multiset<{_id_sig(t.element)}>"
    if isinstance(t, MapType):
        return f"map<{_id_sig(t.key)},{_id_sig(t.value)}>"
    return _spark_sig(t)


def _contains_row(t: DataType) -> bool:
    if isinstance(t, RowType):
        return True
    if isinstance(t, ArrayType | MultisetType):
        return _contains_row(t.element)
    if isinstance(t, MapType):
        return _contains_row(t.key) or _contains_row(t.value)
    return False


def _nested_differs(st: DataType, tt: DataType) -> bool:
    """Same Spark type but different nested ids (e.g. a ROW field dropped and re-added with
    the same name and type): not the same column data."""
    if isinstance(st, RowType) and isinstance(tt, RowType):
        if [f.id for f in st.fields] != [f.id for f in tt.fields]:
            return True
        return any(_nested_differs(a.type, b.type) for a, b in zip(st.fields, tt.fields,
                                                                    strict=True))
    if isinstance(st, ArrayType | MultisetType) and isinstance(tt, ArrayType | MultisetType):
        return _nested_differs(st.element, tt.element)
    if isinstance(st, MapType) and isinstance(tt, MapType):
        return _nested_differs(st.key, tt.key) or _nested_differs(st.value, tt.value)
    return False


_INTS = {TypeRoot.TINYINT: 1, TypeRoot.SMALLINT: 2, TypeRoot.INTEGER: 3, TypeRoot.BIGINT: 4}


def _spark_reader_widens(st: DataType, tt: DataType) -> bool:
    """Type changes Spark's Parquet readers (vectorized and row) both apply correctly while
    reading (measured, see spark-notes.md); everything else is read as the file's type and
    cast afterwards."""
    # Widening inside ARRAY/MAP is applied by the readers too (spark-notes.md); without this
    # ARRAY<INT> → ARRAY<BIGINT> would cost its files a separate name-based scan plus a
    # per-element transform.
    if isinstance(st, ArrayType) and isinstance(tt, ArrayType):
        return _same_or_widens(st.element, tt.element)
    if isinstance(st, MapType) and isinstance(tt, MapType):
        return (_spark_sig(st.key) == _spark_sig(tt.key)
                and _same_or_widens(st.value, tt.value))
    if isinstance(st, AtomicType) and isinstance(tt, AtomicType):
        s, t = st.root, tt.root
        if s in _INTS and t in _INTS:
            return _INTS[t] >= _INTS[s] and _INTS[t] >= 3
        if s is TypeRoot.INTEGER and t is TypeRoot.DOUBLE:
            return True
        if s is TypeRoot.FLOAT and t is TypeRoot.DOUBLE:
            return True
        if s is TypeRoot.INTEGER and t is TypeRoot.DECIMAL:
            return (tt.precision or 10) - (tt.scale or 0) >= 10
        if s is TypeRoot.DECIMAL and t is TypeRoot.DECIMAL:
            return ((tt.scale or 0) >= (st.scale or 0)
                    and (tt.precision or 10) - (tt.scale or 0)
                    >= (st.precision or 10) - (st.scale or 0))
        if s is TypeRoot.DATE and t is TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE:
            return True
    return False


def _same_or_widens(st: DataType, tt: DataType) -> bool:
    if _contains_row(st) or _contains_row(tt):
        return False  # ROWs are matched by id field by field: "evolved", not "widened"
    return _spark_sig(st) == _spark_sig(tt) or _spark_reader_widens(st, tt)


def _id_scan_safe(c: ColumnRead) -> bool:
    if c.kind in ("same", "renamed", "widened", "null"):
        return True
    if c.kind == "evolved" and c.source is not None:
        return _nested_id_safe(c.source.type, c.target.type)
    return False


def _nested_id_safe(st: DataType, tt: DataType) -> bool:
    if isinstance(st, RowType) and isinstance(tt, RowType):
        by_id = {f.id: f for f in st.fields}
        return all(f.id not in by_id or _nested_id_safe(by_id[f.id].type, f.type)
                   for f in tt.fields)
    if isinstance(st, ArrayType) and isinstance(tt, ArrayType):
        return _nested_id_safe(st.element, tt.element)
    if isinstance(st, MapType) and isinstance(tt, MapType):
        return (_spark_sig(st.key) == _spark_sig(tt.key)
                and _nested_id_safe(st.value, tt.value))
    return _same_or_widens(st, tt)


def stored_as(path: str, file_schema: TableSchema) -> tuple[tuple[str, StoredAs], ...]:
    """The top-level columns of a file stored in a form Spark's Parquet reader refuses for
    their type. Only files whose schema has a TIME or TIMESTAMP(7..9) column have their
    footer read: Spark writes both in forms it reads back, pyarrow (pypaimon) does not."""
    wanted = {f.name: f.type.root for f in file_schema.fields
              if isinstance(f.type, AtomicType) and (
                  f.type.root is TypeRoot.TIME_WITHOUT_TIME_ZONE
                  or (f.type.root in TIMESTAMP_ROOTS and (f.type.precision or 0) > 6))}
    if not wanted:
        return ()
    import pyarrow as pa

    arrow = parquet_schema(path)
    out: list[tuple[str, StoredAs]] = []
    for name in wanted:
        i = arrow.get_field_index(name)
        t = arrow.field(i).type if i >= 0 else None
        if t is not None and pa.types.is_timestamp(t) and t.unit == "ns":
            out.append((name, "timestamp-nanos"))
        elif t is not None and pa.types.is_time32(t):
            out.append((name, "time-millis"))
    return tuple(out)


def _stored_read_type(how: StoredAs) -> st.DataType:
    from pyspark.sql import types as st

    return st.LongType() if how == "timestamp-nanos" else st.IntegerType()


def _from_stored(col: Column, how: StoredAs, t: DataType) -> Column:
    """A column read in its stored form (see :func:`stored_as`) as a value of type ``t``."""
    from pyspark.sql import functions as F

    if how == "timestamp-nanos":
        # Spark holds microseconds: the nanoseconds below them go, toward the past
        return F.timestamp_micros(F.floor(col / 1000)).cast(to_spark(t))
    seconds = (F.pmod(col, F.lit(60_000)) / 1000).cast("decimal(16, 6)")
    time = F.make_time((col / 3_600_000).cast("int"),
                       F.pmod((col / 60_000).cast("int"), F.lit(60)), seconds)
    return time.cast(to_spark(t))


@functools.lru_cache(maxsize=1024)
def parquet_schema(path: str) -> pa.Schema:
    """The Arrow schema in the footer of the Parquet file at ``path``, read once: planning
    asks both whether it has field ids and how it stores its columns. Data files never
    change, so it is cached."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException) as e:
        raise CorruptFileError(path, f"unreadable Parquet footer ({e})") from None


@functools.lru_cache(maxsize=65536)
def parquet_has_field_ids(path: str) -> bool:
    """Whether the Parquet file at ``path`` carries field ids (ours and Iceberg's do; Paimon's
    and pypaimon's do not). Data files never change, so the answer is cached."""
    schema = parquet_schema(path)
    return bool(schema) and all(
        f.metadata is not None and b"PARQUET:field_id" in f.metadata for f in schema)


# --------------------------------------------------------------------------------------------
# Executing a plan on Spark
# --------------------------------------------------------------------------------------------


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def execute(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """One Spark DataFrame in the plan's target schema."""
    if plan.target.primary_keys:
        # Paimon's deduplicate merge engine, after each file group is evolved
        from schemalab.primary_key import merge_read

        return merge_read(plan, spark)
    frames = [read_group(plan, g, spark) for g in plan.groups if g.files]
    if not frames:
        return empty_frame(plan, spark)
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def empty_frame(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    from pyspark.sql import types as st

    return spark.createDataFrame(
        [], st.StructType([spark_field(f, with_id=False) for f in plan.target.fields]))


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
        from schemalab.primary_key import (
            FILE_COL,
            KIND_COL,
            SEQ_COL,
            SEQUENCE_NUMBER,
            VALUE_KIND,
        )

        # Requested by name (no field id): Spark matches a field without an id by name even
        # in a scan by id, and pypaimon's files carry no ids at all.
        extra_fields = [st.StructField(SEQUENCE_NUMBER, st.LongType(), True),
                        st.StructField(VALUE_KIND, st.ByteType(), True)]
        extra_cols = [F.col(SEQUENCE_NUMBER).alias(SEQ_COL), F.col(VALUE_KIND).alias(KIND_COL)]
        if with_file:
            extra_cols.append(F.input_file_name().alias(FILE_COL))
    paths = [_literal_path(f.path) for f in group.files]
    if group.by_id:
        prefix = _id_scan_prefix([plan.schemas[sid] for sid in group.schema_ids
                                  if sid in plan.schemas])
        read_fields = [st.StructField(f"{prefix}{t.id}", _id_read_type(t.type, prefix), True,
                                      {"parquet.field.id": t.id}) for t in plan.target.fields]
        df = spark.read.schema(st.StructType(read_fields + extra_fields)).parquet(*paths)
        # Spark reads every file column as nullable (file sources apply ``asNullable`` to a
        # user schema), and a cast may not turn a nullable ARRAY element / MAP value / ROW
        # field into a NOT NULL one: cast to the all-nullable form of the target type.
        cols = [F.col(quote(f"{prefix}{t.id}")).cast(_nullable(to_spark(t.type))).alias(t.name)
                for t in plan.target.fields]
        return df.select(*cols, *extra_cols)
    # By name, in each column's file type. Nested ROW fields are requested by name too (no
    # ids): files written without Parquet field ids (Paimon's, pypaimon's) fail a read schema
    # that carries ids, and the names are exactly the file's own, so nothing can collide.
    stored = dict(group.stored)
    read_fields = [st.StructField(c.source.name,
                                  _stored_read_type(stored[c.source.name])
                                  if c.source.name in stored
                                  else _without_ids(to_spark(c.source.type)), True)
                   for c in group.columns if c.source is not None]
    if not read_fields and not extra_fields:
        # No column of the output exists in these files: still one row per record.
        df = spark.read.parquet(*paths)
        base = df.select(F.lit(1).alias("_sl_one"))
        return base.select(*[F.lit(None).cast(to_spark(c.target.type)).alias(c.target.name)
                             for c in group.columns])
    df = spark.read.schema(st.StructType(read_fields + extra_fields)).parquet(*paths)
    out = []
    for c in group.columns:
        if c.source is None:
            out.append(F.lit(None).cast(to_spark(c.target.type)).alias(c.target.name))
            continue
        col = F.col(quote(c.source.name))
        if c.source.name in stored:
            col = _from_stored(col, stored[c.source.name], c.source.type)
        expr = evolve(col, c.source.type, c.target.type, plan.cast_mode,
                      f"{plan.table}", c.target)
        out.append(expr.alias(c.target.name))
    return df.select(*out, *extra_cols)


def _literal_path(path: str) -> str:
    """``path`` with Hadoop glob characters escaped. Spark globs every path it reads: a
    table named ``x[1]`` would match ``x1`` instead, and globbing lists sibling directories,
    failing on any whose name Hadoop cannot parse (``a:b``). Escaped components are taken
    literally, without listing."""
    return re.sub(r"([{}\[\]*?\\])", r"\\\1", path)


def _id_scan_prefix(schemas: Sequence[TableSchema]) -> str:
    """``_sl_f``, lengthened until no column of the files (at any depth) is named like a
    synthetic column: a file column called ``_sl_f1`` that is *not* field 1 would otherwise
    meet the vectorized reader's name-collision bug this scan exists to avoid."""
    names: set[str] = set()
    for schema in schemas:
        for f in schema.fields:
            _collect_names(f, names)
    prefix = ID_SCAN_PREFIX
    while any(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
        prefix += "_"
    return prefix


def _collect_names(f: DataField, out: set[str]) -> None:
    out.add(f.name)
    t = f.type
    while isinstance(t, ArrayType | MultisetType | MapType):
        t = t.value if isinstance(t, MapType) else t.element
    if isinstance(t, RowType):
        for sub in t.fields:
            _collect_names(sub, out)


def _nullable(t: st.DataType) -> st.DataType:
    """``t`` with every nested field, array element and map value nullable."""
    from pyspark.sql import types as st

    if isinstance(t, st.StructType):
        return st.StructType([st.StructField(f.name, _nullable(f.dataType), True, f.metadata)
                              for f in t.fields])
    if isinstance(t, st.ArrayType):
        return st.ArrayType(_nullable(t.elementType), True)
    if isinstance(t, st.MapType):
        return st.MapType(_nullable(t.keyType), _nullable(t.valueType), True)
    return t


def _without_ids(t: st.DataType) -> st.DataType:
    """``t`` without Parquet field ids on nested fields (a read by name)."""
    from pyspark.sql import types as st

    if isinstance(t, st.StructType):
        return st.StructType([
            st.StructField(f.name, _without_ids(f.dataType), f.nullable,
                           {k: v for k, v in f.metadata.items() if k != FIELD_ID_KEY})
            for f in t.fields])
    if isinstance(t, st.ArrayType):
        return st.ArrayType(_without_ids(t.elementType), t.containsNull)
    if isinstance(t, st.MapType):
        return st.MapType(_without_ids(t.keyType), _without_ids(t.valueType),
                          t.valueContainsNull)
    return t


def _id_read_type(t: DataType, prefix: str = ID_SCAN_PREFIX) -> st.DataType:
    """The target type with nested ROW fields renamed ``<prefix><id>`` and carrying their
    ids."""
    from pyspark.sql import types as st

    if isinstance(t, RowType):
        return st.StructType([st.StructField(f"{prefix}{f.id}", _id_read_type(f.type, prefix),
                                             True, {"parquet.field.id": f.id})
                              for f in t.fields])
    if isinstance(t, ArrayType):
        return st.ArrayType(_id_read_type(t.element, prefix), True)
    if isinstance(t, MapType):
        return st.MapType(to_spark(t.key), _id_read_type(t.value, prefix), True)
    return to_spark(t)


def evolve(col: Column, source: DataType, target: DataType, mode: CastMode, table: str,
           field: DataField) -> Column:
    """Turn a column read in the file's type into the target type: nested ROW fields by id
    (added → NULL, dropped → gone, renamed → by id), atomic values by cast under ``mode``."""
    from pyspark.sql import functions as F

    if _spark_sig(source) == _spark_sig(target) and not _nested_differs(source, target):
        return col
    if isinstance(source, RowType) and isinstance(target, RowType):
        by_id = {f.id: f for f in source.fields}
        parts = []
        for tf in target.fields:
            sf = by_id.get(tf.id)
            if sf is None:
                parts.append(F.lit(None).cast(to_spark(tf.type)).alias(tf.name))
            else:
                parts.append(evolve(col.getField(sf.name), sf.type, tf.type, mode, table,
                                    tf).alias(tf.name))
        return F.when(col.isNull(), F.lit(None).cast(to_spark(target))).otherwise(
            F.struct(*parts))
    if isinstance(source, ArrayType) and isinstance(target, ArrayType):
        return F.transform(col, lambda x: evolve(x, source.element, target.element, mode,
                                                 table, field))
    if isinstance(source, MapType) and isinstance(target, MapType):
        m = col
        if _spark_sig(source.key) != _spark_sig(target.key):
            m = F.transform_keys(m, lambda k, v: _cast(k, source.key, target.key, mode, table,
                                                       field))
        return F.transform_values(m, lambda k, v: evolve(v, source.value, target.value, mode,
                                                         table, field))
    return _cast(col, source, target, mode, table, field)


def _cast(col: Column, source: DataType, target: DataType, mode: CastMode, table: str,
          field: DataField) -> Column:
    from pyspark.sql import functions as F

    spark_type = to_spark(target)
    kind = cast_kind(source, target)
    paimon = _paimon_conversion(col, source, target)
    if paimon is not None:
        return paimon
    if kind in ("identity", "implicit") or _spark_reader_widens(source, target):
        return col.cast(spark_type)
    if mode is CastMode.EXPLICIT_NULL or kind is None:
        return col.try_cast(spark_type)
    converted = col.try_cast(spark_type)
    message = F.concat(
        F.lit(f"Table {table}, column `{field.name}` (field {field.id}): value '"),
        col.cast("string"),
        F.lit(f"' cannot be cast from {source.sql()} to {target.sql()}. The table's "
              "cast.mode is 'explicit', which fails the read on such a value; set "
              "'cast.mode' = 'explicit-null' to read it as NULL."))
    return F.when(col.isNotNull() & converted.isNull(),
                  F.raise_error(message).cast(spark_type)).otherwise(converted)


def _paimon_conversion(col: Column, source: DataType, target: DataType) -> Column | None:
    """Casts whose Paimon result differs from Spark's ``cast``, done Paimon's way (as
    Java Paimon reads them; pypaimon differs on some, see tests/test_interop_pypaimon.py),
    or None where Spark's cast already agrees.

    - TIMESTAMP(p) → CHAR/VARCHAR/STRING: every one of the p fraction digits, zeros too
      (TimestampToStringCastRule); Spark's cast drops a zero fraction.
    - TIMESTAMP(p) → INT/BIGINT: epoch seconds, the milliseconds divided by 1000 toward zero
      (TimestampToNumericPrimitiveCastRule); Spark refuses the cast. The session time zone
      (UTC in ``local_spark``) stands for Java's default zone."""
    from pyspark.sql import functions as F

    if not (isinstance(source, AtomicType) and isinstance(target, AtomicType)
            and source.root in TIMESTAMP_ROOTS):
        return None
    if target.root in (TypeRoot.CHAR, TypeRoot.VARCHAR):
        p = source.precision if source.precision is not None else 6
        pattern = "yyyy-MM-dd HH:mm:ss" + ("." + "S" * min(p, 9) if p else "")
        return F.date_format(col, pattern)
    if target.root in (TypeRoot.BIGINT, TypeRoot.INTEGER):
        millis = F.floor(F.unix_micros(col.cast("timestamp")) / 1000)
        seconds = F.when(millis >= 0, F.floor(millis / 1000)).otherwise(F.ceil(millis / 1000))
        if target.root is TypeRoot.BIGINT:
            return seconds.cast("bigint")
        # Java's (int) narrowing keeps the low 32 bits
        return (F.pmod(seconds + 2**31, F.lit(2**32)) - 2**31).cast("int")
    return None

