"""Reading one group of files on Spark, in the plan's schema, without its deleted rows.

A group whose files carry Parquet field ids and need no cast Spark's reader cannot do is
read in one scan by field id. That scan requests synthetic column names (``_sl_f<id>``): the
vectorized reader fails when a file column's name equals a *different* requested field of
another type (a swap, or a dropped name re-used with a new type), and matching by id makes
names irrelevant anyway. Every other group is read by the files' own column names, in the
files' own types, and then evolved (:mod:`schemalab.engine.evolve`): Parquet and ORC by
Spark's readers, Avro files (and ORC files with deletes by position) on the driver into
Arrow (:mod:`schemalab.engine.arrow_read`).

Evolution comes first, then deletes (:mod:`schemalab.engine.deletes`): by position on the
scan's rows (which know their file and position), by value on the evolved rows. Merges
(:mod:`schemalab.engine.merge`) take the group's rows after both.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemalab.engine import kept_scan
from schemalab.engine.arrow_read import read_file
from schemalab.engine.deletes import (
    FILE_NAME_COL,
    POS_COL,
    ROW_INDEX_FIELD,
    deleted_positions,
    drop_deleted_positions,
    drop_equality_deleted,
    file_name,
    jvm_position_filter,
    metadata_columns,
    unique_name_scans,
)
from schemalab.engine.evolve import evolve, literal
from schemalab.engine.keyed import SEQUENCE_NUMBER, VALUE_KIND
from schemalab.engine.plan import (
    ColumnRead,
    DataFile,
    FileGroup,
    ReadPlan,
    StoredAs,
)
from schemalab.engine.row_merge import (
    ROW_FILE_COL,
    ROW_ID,
    ROW_INDEX_COL,
    STORED_ROW_ID,
    STORED_SEQ,
)
from schemalab.engine.session_cache import local_frame
from schemalab.engine.spark_reader import (
    all_nullable,
    cast_to,
    literal_path,
    orc_read_type,
    quote,
    store_error,
    without_ids,
)
from schemalab.errors import SchemaLabError
from schemalab.fileio import spark_uri
from schemalab.schema import TableSchema
from schemalab.types.model import BIGINT, TINYINT, DataField, DataType, MapType, TypeRoot
from schemalab.types.spark import FIELD_ID_KEY, to_spark
from schemalab.types.visitor import TypeTransform, nested_names, visit

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as st

    from schemalab.engine.merge.keyset import KeyBitmap

ID_SCAN_PREFIX = "_sl_f"
#: internal Spark column names a primary-key read adds to each row
SEQ_COL = "__sl_seq"
KIND_COL = "__sl_kind"
FILE_COL = "__sl_file"
#: a field id no file holds: requesting it keeps one row per record when no column is read
_ROWS_ONLY_ID = 2**31 - 1


def read_group(plan: ReadPlan, group: FileGroup, spark: SparkSession, *, system: bool = False,
               with_file: bool = False, row_ids: bool = False,
               drop_held: KeyBitmap | None = None) -> DataFrame:
    """The files of ``group`` in the plan's schema, without their deleted rows. ``system``
    adds the primary-key files' ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` (as ``__sl_seq``,
    ``__sl_kind``), ``with_file`` each row's file (``__sl_file``), ``row_ids`` what a row id
    is made of (see :func:`_row_id_columns`). ``drop_held``: without the rows whose key
    (the bitmap's column, one integer column of the plan) it holds — dropped by Spark's
    Parquet reader itself where :mod:`schemalab.engine.kept_scan` applies, else filtered."""
    eqs = [e for e in plan.equality_deletes if any(e.applies_to(f) for f in group.files)]
    how = _Scan(plan, group, spark, system, with_file, bool(eqs), row_ids, drop_held)
    frames = [how.driver(files) if driver else how.native(files)
              for files, driver in _scans(group.files, bool(eqs))]
    df = functools.reduce(lambda a, b: a.union(b), frames)
    if eqs:
        # the plan reads every equality field: the target's columns, else ``plan.extra``
        column_of = {c.target.id: c.target.name for c in (*group.columns, *group.extra)}
        rows = [(e, _read_all(e.plan, spark)) for e in eqs]
        df = drop_equality_deleted(df, group.files, rows, column_of, spark)
    if eqs or group.extra:
        df = df.drop(*([FILE_NAME_COL] if eqs else []), *[c.target.name for c in group.extra])
    return df


def _read_all(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    frames = [read_group(plan, g, spark) for g in plan.groups if g.files]
    return functools.reduce(lambda a, b: a.union(b), frames)


def _scans(files: Sequence[DataFile], need_names: bool) -> list[tuple[list[DataFile], bool]]:
    """The scans a group's files are read in: (files, read on the driver). Avro files and
    ORC files with deletes by position go through the driver; the others through Spark, in
    scans whose file names are unique when rows must be told apart by file. Files without
    deletes by position are a scan of their own: no row positions, no filter, a plain read."""
    driver = [f for f in files if f.format == "avro" or (f.format == "orc" and f.deletes)]
    deleted = [f for f in files if f not in driver and f.deletes]
    whole = [f for f in files if f not in driver and not f.deletes]
    out: list[tuple[list[DataFile], bool]] = [(driver, True)] if driver else []
    out.extend((fs, False) for fs in unique_name_scans(deleted))
    if whole:
        out.extend((fs, False) for fs in (unique_name_scans(whole) if need_names else [whole]))
    return out


class _Scan:
    """How the scans of one group are read (see :func:`read_group`)."""

    def __init__(self, plan: ReadPlan, group: FileGroup, spark: SparkSession, system: bool,
                 with_file: bool, names: bool, row_ids: bool = False,
                 drop_held: KeyBitmap | None = None) -> None:
        self.plan, self.group, self.session = plan, group, spark
        self.system, self.with_file, self.names = system, with_file, names
        self.row_ids = row_ids
        self.columns = (*group.columns, *group.extra)
        self.drop_held = drop_held

    def _without_held(self, df: DataFrame, by_id_prefix: str | None, positions: bool
                      ) -> DataFrame | None:
        """The scan ``df`` (by field id with ``by_id_prefix``, else by the files' names)
        without the rows :attr:`drop_held` holds, dropped by the reader; None where that
        does not apply and the caller must filter (:meth:`_filtered`). Not with deletes by
        position: their filter reads the row positions of the scan as Spark's own format
        gives them."""
        if self.drop_held is None or positions or self.group.format != "parquet":
            return None
        scanned = self._key_column(by_id_prefix)
        if scanned is None:
            return None
        return kept_scan.without_held(df, scanned, self.drop_held, self.session,
                                      self.plan.table)

    def _filtered(self, df: DataFrame) -> DataFrame:
        """``df`` (the plan's columns) without the rows :attr:`drop_held` holds, by a filter
        on its key column."""
        assert self.drop_held is not None
        return df.where(~self.drop_held.test(self.session))

    def _key_column(self, by_id_prefix: str | None) -> str | None:
        """The scan's column of :attr:`drop_held`'s key: ``<prefix><id>`` in a scan by
        field id, else the file's own name; None where the files lack it."""
        assert self.drop_held is not None
        for c in self.columns:
            if c.target.name != self.drop_held.key:
                continue
            if by_id_prefix is not None:
                return f"{by_id_prefix}{c.target.id}" if _scanned(c) else None
            return None if c.source is None or c.source.name in dict(self.group.stored) \
                else c.source.name
        return None

    def native(self, files: list[DataFile]) -> DataFrame:
        """A scan by Spark's Parquet or ORC reader; deletes by position dropped."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as st

        plan, group = self.plan, self.group
        extra_fields: list[st.StructField] = []
        extra_cols: list[Column] = []
        if self.system:
            # Requested by name (no field id): Spark matches a field without an id by name
            # even in a scan by id, and pypaimon's files carry no ids at all.
            extra_fields = [st.StructField(SEQUENCE_NUMBER, st.LongType(), True),
                            st.StructField(VALUE_KIND, st.ByteType(), True)]
            extra_cols = [F.col(SEQUENCE_NUMBER).alias(SEQ_COL),
                          F.col(VALUE_KIND).alias(KIND_COL)]
        elif self.row_ids:
            extra_fields, extra_cols = _stored_row_tracking()
        if self.with_file:
            extra_cols.append(F.input_file_name().alias(FILE_COL))
        paths = [literal_path(spark_uri(f.path)) for f in files]
        positions = any(f.deletes for f in files)
        row_index = (positions or self.row_ids) and group.format == "parquet" and not any(
            c.source is not None and c.source.name.lower() == ROW_INDEX_FIELD
            for c in self.columns)
        if row_index:
            # each row's position, filled by Spark's reader (see deletes.ROW_INDEX_FIELD)
            extra_fields.append(st.StructField(ROW_INDEX_FIELD, st.LongType(), True))
        if group.by_id:
            prefix = id_scan_prefix([plan.schemas[sid] for sid in group.schema_ids
                                     if sid in plan.schemas])
            read = [c.target for c in self.columns if _scanned(c)]
            fields = [st.StructField(f"{prefix}{t.id}", _id_read_type(t.type, prefix), True,
                                     {FIELD_ID_KEY: t.id}) for t in read]
            if not fields and not extra_fields:
                fields = [st.StructField("_sl_rows", st.IntegerType(), True,
                                         {FIELD_ID_KEY: _ROWS_ONLY_ID})]
            df = _read(self.session, group.format, st.StructType(fields + extra_fields), paths)
            kept = self._without_held(df, prefix, positions)
            df = df if kept is None else kept
            # Spark reads every file column as nullable (file sources apply ``asNullable``
            # to a user schema), and a cast may not turn a nullable ARRAY element / MAP
            # value / ROW field into a NOT NULL one: cast to the all-nullable target type.
            cols = [cast_to(F.col(quote(f"{prefix}{c.target.id}")), all_nullable(to_spark(
                        c.target.type))).alias(c.target.name) if _scanned(c) else
                    literal(None if c.constant is None else c.constant.value,
                            c.target.type).alias(c.target.name)
                    for c in self.columns]
        else:
            # By name, in each column's file type. Nested ROW fields are requested by name
            # too (no ids): files written without Parquet field ids (Paimon's, pypaimon's)
            # fail a read schema that carries ids, and the names are exactly the file's own,
            # so nothing can collide.
            stored = dict(group.stored)
            read_fields = [st.StructField(c.source.name, self._file_type(c, stored), True)
                           for c in self.columns if c.source is not None]
            # No column of the output in these files: a scan of no column still gives one
            # row per record.
            df = _read(self.session, group.format,
                       st.StructType(read_fields + extra_fields)
                       if read_fields or extra_fields else None, paths)
            kept = self._without_held(df, None, positions)
            df = df if kept is None else kept
            cols = self._evolved(stored)
        out = self._kept(df, files, [*cols, *extra_cols], positions, row_index)
        return out if self.drop_held is None or kept is not None else self._filtered(out)

    def _kept(self, df: DataFrame, files: list[DataFile], cols: list[Column],
              positions: bool, row_index: bool) -> DataFrame:
        """``cols`` of the scan ``df`` of ``files``, without the rows deleted by position
        (``positions``), with what row ids and equality deletes need of each row's file."""
        table = self.plan.table
        # The JVM's filter finds a row's file itself: the scan then reads no _metadata. Not
        # where the rows keep their file's name: a later query that prunes the name away
        # would leave the struct unused beside the row index, which Spark refuses to plan
        # (see deletes.ROW_INDEX_FIELD); the expression filter always uses the file's size.
        keep = jvm_position_filter(files, self.session, table) \
            if positions and not (self.names or self.row_ids) else None
        meta = metadata_columns(df, files, positions=positions or self.row_ids,
                                sizes=positions and keep is None, row_index=row_index,
                                table=table, names=keep is None) \
            if positions or self.names or self.row_ids else []
        df = df.select(*cols, *meta)
        if self.row_ids:
            df = df.select("*", *_row_id_columns())
        if keep is not None:
            df = df.where(keep).drop(POS_COL)
        elif positions:
            df = drop_deleted_positions(df, files, self.session, table)
        elif self.row_ids:
            df = df.drop(POS_COL)
        if (positions or self.row_ids) and not self.names:
            df = df.drop(FILE_NAME_COL)
        return df

    def _file_type(self, c: ColumnRead, stored: dict[str, StoredAs]) -> st.DataType:
        assert c.source is not None
        if c.source.name in stored:
            return _stored_read_type(stored[c.source.name])
        t = without_ids(to_spark(c.source.type))
        # Spark's ORC reader returns garbage for an ORC timestamp requested as TIMESTAMP_NTZ:
        # request the instant and cast (the session is in UTC)
        return orc_read_type(t) if self.group.format == "orc" else t

    def _evolved(self, stored: dict[str, StoredAs]) -> list[Column]:
        """The output columns of a frame holding the file columns by name, in file types."""
        from pyspark.sql import functions as F

        out = []
        for c in self.columns:
            if c.source is None:
                value = None if c.constant is None else c.constant.value
                out.append(literal(value, c.target.type).alias(c.target.name))
                continue
            col = F.col(quote(c.source.name))
            if c.source.name in stored:
                col = _from_stored(col, stored[c.source.name], c.source.type)
            elif self.group.format == "orc":
                col = cast_to(col, without_ids(to_spark(c.source.type)))
            expr = evolve(col, c.source.type, c.target.type, self.plan.cast_mode,
                          self.plan.table, c.target, dict(c.defaults))
            out.append(expr.alias(c.target.name))
        return out

    def driver(self, files: list[DataFile]) -> DataFrame:
        """Files read on the driver into Arrow, deleted positions dropped there, evolved on
        Spark like a scan by name."""
        import pyarrow as pa
        from pyspark.sql import functions as F
        from pyspark.sql import types as st

        if self.row_ids:
            raise SchemaLabError(
                f"Table {self.plan.table}: row ids are read from Parquet and ORC files "
                f"without deletes only; {files[0].path} is {files[0].format.upper()}.",
                table=self.plan.table, rule="row-id-read")
        wanted: dict[str, DataType] = {c.source.name: c.source.type for c in self.columns
                                       if c.source is not None}
        if self.system:
            wanted[SEQUENCE_NUMBER] = BIGINT()
            wanted[VALUE_KIND] = TINYINT()
        tables = []
        for f in files:
            t = read_file(f, list(wanted.items()),
                          deleted_positions(f, self.plan.table) if f.deletes else None)
            t = t.append_column(FILE_NAME_COL, pa.array([file_name(f)] * t.num_rows,
                                                        pa.string()))
            tables.append(t.append_column(FILE_COL, pa.array([f.path] * t.num_rows,
                                                             pa.string())))
        table = pa.concat_tables(tables)
        schema = st.StructType(
            [st.StructField(n, without_ids(to_spark(t)), True) for n, t in wanted.items()]
            + [st.StructField(FILE_NAME_COL, st.StringType(), True),
               st.StructField(FILE_COL, st.StringType(), True)])
        df = local_frame(self.session, table, schema)
        extra_cols = []
        if self.system:
            extra_cols = [F.col(SEQUENCE_NUMBER).alias(SEQ_COL),
                          F.col(VALUE_KIND).alias(KIND_COL)]
        if self.with_file:
            extra_cols.append(F.col(FILE_COL))
        if self.names:
            extra_cols.append(F.col(FILE_NAME_COL))
        out = df.select(*self._evolved({}), *extra_cols)
        return out if self.drop_held is None else self._filtered(out)


def _stored_row_tracking() -> tuple[list[st.StructField], list[Column]]:
    """A row-tracking file's stored ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (requested by name:
    NULL where the file has none, as pypaimon's and most of Java's files)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    fields = [st.StructField(ROW_ID, st.LongType(), True),
              st.StructField(SEQUENCE_NUMBER, st.LongType(), True)]
    return fields, [F.col(ROW_ID).alias(STORED_ROW_ID), F.col(SEQUENCE_NUMBER).alias(STORED_SEQ)]


def _row_id_columns() -> list[Column]:
    """Each row's position in its file and the file's name: with the file's first row id,
    its row id (:mod:`schemalab.engine.row_merge`)."""
    from pyspark.sql import functions as F

    return [F.col(POS_COL).alias(ROW_INDEX_COL), F.col(FILE_NAME_COL).alias(ROW_FILE_COL)]


def _read(spark: SparkSession, fmt: str, schema: st.StructType | None,
          paths: list[str]) -> DataFrame:
    """Spark's ``fmt`` reader (Parquet or ORC) of ``paths`` (with ``schema``), with a clear
    error when the session has no file system for their store."""
    reader = spark.read if schema is None else spark.read.schema(schema)
    try:
        return reader.format(fmt).load(paths)
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
