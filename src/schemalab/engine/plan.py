"""Evolve-on-read planning: how each data file's columns become the schema read, for every
table format.

Every output field is matched by id to the field of the file's own schema (FLIP-226): an id
the file lacks reads as a constant (an Iceberg identity-partition value or default) or as
NULL, a file column whose id is gone is ignored, a renamed column is read under its old
name, a retyped one is cast under the table's cast mode. A format adapter (Paimon's
``Table``, Iceberg's ``plan``) says what each file's schema is; the plan, its explanation and
its execution are the same for both.

Planning groups files by the *projection they need* — which file column and type feeds
each output field — not by schema id, so a table with 50 schema versions whose files need 3
distinct projections costs 3 scans. Files that carry Parquet field ids and need no cast
Spark's Parquet reader cannot do are read together in one scan by field id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from schemalab.engine.footer import (
    parquet_has_field_ids,
    parquet_int96_columns,
    parquet_schema,
)
from schemalab.engine.merge.options import MergeOptions
from schemalab.engine.spark_reader import same_or_widens, spark_reader_widens, spark_sig
from schemalab.schema import TableSchema
from schemalab.types.casts import CastMode, alters_values, cast_kind
from schemalab.types.model import (
    TIMESTAMP_ROOTS,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.visitor import (
    PartnerVisitor,
    contains_row,
    id_signature,
    visit_with_partner,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt


ColumnKind = Literal["same", "renamed", "widened", "cast", "evolved", "null", "constant"]
#: how a file stores a column Spark cannot read as its type: TIMESTAMP(9) as Parquet INT64
#: nanoseconds, TIME as INT32 milliseconds of the day (pyarrow's, hence pypaimon's, forms)
StoredAs = Literal["timestamp-nanos", "time-millis"]
FileFormat = Literal["parquet", "orc", "avro"]
#: how rows of a data file are deleted by position
DeleteKind = Literal["deletion vector", "position delete file"]
#: why a live delete file removes nothing of a read (see IgnoredDelete)
IgnoreReason = Literal["not-live", "newer-data", "deletion-vector", "no-older-data"]


@dataclass(frozen=True)
class Constant:
    """A value every row of a file reads for a field the file does not hold: an Iceberg
    identity-partition value (``origin`` "partition") or a field's initial default
    ("default"), as a Python value of the field's type."""

    origin: Literal["partition", "default"]
    value: Any


def _no_positions() -> npt.NDArray[np.int64]:
    import numpy as np

    return np.zeros(0, np.int64)


@dataclass(frozen=True)
class PositionDeletes:
    """Rows of one data file deleted by their 0-based position in it: a deletion vector
    (Paimon's index file, Iceberg's Puffin blob) or the rows of a position delete file that
    name this data file. ``load`` reads the positions (sorted); planning never calls it."""

    kind: DeleteKind
    #: the file that holds them: a Paimon index file, a Puffin file, a position delete file
    source: str
    #: how many rows, when the metadata says (a deletion vector's cardinality)
    count: int | None = None
    sequence_number: int | None = None
    load: Callable[[], npt.NDArray[np.int64]] = field(default=_no_positions, compare=False,
                                                      repr=False)


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
    format: FileFormat = "parquet"
    #: primary-key files: how many -U/-D rows the file holds (None: not recorded)
    delete_row_count: int | None = None
    #: primary-key files: the first and last key, when recorded and ordered as Paimon
    #: orders keys (lets the merge read pass over files whose keys no other file holds)
    key_range: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
    #: rows deleted by position (several sources may name the same row)
    deletes: tuple[PositionDeletes, ...] = ()
    #: Iceberg's data sequence number: which equality deletes apply (see EqualityDeletes)
    data_sequence_number: int | None = None
    #: the partition an equality delete must share to apply (Iceberg: spec id + partition)
    delete_scope: str | None = None
    #: row tracking: the row id of the file's first row (rows take consecutive ids)
    first_row_id: int | None = None
    #: data evolution: the columns the file holds, when only some (None: every column)
    write_cols: tuple[str, ...] | None = None
    #: ids of the fields (of the file's own schema) that hold no NULL in the file, as its
    #: manifest's value statistics say (null count 0); None: not recorded
    non_null: frozenset[int] | None = None


@dataclass(frozen=True)
class ColumnRead:
    """How one output column is produced from the files of a group."""

    target: DataField
    source: DataField | None
    kind: ColumnKind
    #: "implicit" or "explicit" for kind "cast" (and the worst cast inside "evolved")
    cast: str | None = None
    #: kind "constant": the value every row reads
    constant: Constant | None = None
    #: nested fields the file lacks that read a default instead of NULL (field id → value)
    defaults: tuple[tuple[int, Constant], ...] = ()


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
    format: FileFormat = "parquet"
    #: columns read only to apply equality deletes (``ReadPlan.extra``), dropped after
    extra: tuple[ColumnRead, ...] = ()

    @property
    def schema_ids(self) -> tuple[int, ...]:
        return tuple(sorted({f.schema_id for f in self.files}))

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


@dataclass(frozen=True)
class RowIdGroup:
    """The data files of one row-id range that a read merges column by column."""

    first_row_id: int
    row_count: int
    #: newest first (max sequence number, descending)
    files: tuple[DataFile, ...]
    #: (target field id, index in ``files`` of the file that supplies it); a field of the
    #: read that no file holds is absent (it reads NULL)
    suppliers: tuple[tuple[int, int], ...]

    def supplier(self, field_id: int) -> DataFile | None:
        """The file whose values of field ``field_id`` the read returns, None: no file."""
        for fid, i in self.suppliers:
            if fid == field_id:
                return self.files[i]
        return None

    @property
    def last_row_id(self) -> int:
        return self.first_row_id + self.row_count - 1


@dataclass(frozen=True)
class RowMerge:
    """How a read of a row-tracking table treats row ids: the row-id ranges whose files it
    merges, and the system columns it adds after the table's columns."""

    groups: tuple[RowIdGroup, ...] = ()
    system: tuple[str, ...] = ()

    @property
    def merged(self) -> frozenset[str]:
        """The paths of the files read through a merge."""
        return frozenset(f.path for g in self.groups for f in g.files)


#: a row whose value this file does not hold (an UPDATE left it to an older file)
PLACEHOLDER = object()


def _unloadable() -> list[object]:
    raise RuntimeError("this BlobFile was built without a loader")


@dataclass(frozen=True)
class BlobFile:
    """A live ``.blob`` file: which field (by id) it holds for which row ids."""

    path: str
    file_name: str
    field_id: int
    #: the column's name in the file's own schema (``_WRITE_COLS``)
    column: str
    first_row_id: int
    row_count: int
    max_sequence_number: int
    schema_id: int
    file_size: int
    #: reads the file: each row's bytes, None (NULL) or PLACEHOLDER
    load: Callable[[], list[object]] = field(default=_unloadable, compare=False, repr=False)

    @property
    def last_row_id(self) -> int:
        return self.first_row_id + self.row_count - 1


@dataclass(frozen=True)
class ReadPlan:
    table: str
    target: TableSchema
    cast_mode: CastMode
    groups: tuple[FileGroup, ...]
    #: snapshot read, or None for an empty table
    snapshot_id: int | None = None
    schemas: dict[int, TableSchema] = field(default_factory=dict)
    #: "paimon" or "iceberg": which rules the casts follow, for explanations
    format: str = "paimon"
    #: how a keyed table merges the rows of one key (the format reads its options); None
    #: reads every row
    merge: MergeOptions | None = None
    #: Paimon's deletion-vector mode: a primary-key table's files of level > 0 are read with
    #: their deletion vectors and not merged (level-0 files are not visible yet)
    deletion_vectors: bool = False
    #: equality delete files that apply to some file of the read
    equality_deletes: tuple[EqualityDeletes, ...] = ()
    #: fields read beside the target only to apply equality deletes (named ``__sl_eq_<id>``)
    extra: tuple[DataField, ...] = ()
    #: live files the read leaves out (Paimon's level-0 files in deletion-vector mode)
    skipped: tuple[DataFile, ...] = ()
    #: live delete files the read does not apply, and why (for explanations)
    ignored_deletes: tuple[IgnoredDelete, ...] = ()
    #: a read of a branch or tag: which schema binds and why (first line of explanations)
    binding: str | None = None
    #: row tracking / data evolution: files merged by row id, system columns read
    row_merge: RowMerge | None = None
    #: Paimon BLOB columns: their ``.blob`` files, joined to the rows by row id
    #: (:mod:`schemalab.engine.blob_join`)
    blobs: tuple[BlobFile, ...] = ()

    @property
    def files(self) -> list[DataFile]:
        return [f for g in self.groups for f in g.files]

    def map_files(self, change: Callable[[DataFile], DataFile]) -> ReadPlan:
        """The same read with each data file replaced by ``change(file)``."""
        return replace(self, groups=tuple(replace(g, files=tuple(change(f) for f in g.files))
                                          for g in self.groups))

    @property
    def merge_engine(self) -> str | None:
        """The merge engine of a keyed table (``merge.engine``), None for an append table."""
        return None if self.merge is None else self.merge.engine

    @property
    def merges(self) -> bool:
        """Whether the read merges the rows of a key (a primary-key table outside the
        deletion-vector mode), rather than returning every row that is not deleted."""
        return self.merge is not None and not self.deletion_vectors


@dataclass(frozen=True)
class EqualityDeletes:
    """An equality delete file: its rows delete every row of the data files it applies to
    whose ``field_ids`` columns equal a delete row's (NULL equals NULL). It applies to a data
    file with a lower data sequence number, in its scope (None: every partition); ``plan``
    reads its rows into columns ``__sl_eq_<id>``."""

    source: str
    sequence_number: int
    field_ids: tuple[int, ...]
    scope: str | None
    plan: ReadPlan
    row_count: int = 0

    def applies_to(self, f: DataFile) -> bool:
        return (f.data_sequence_number is not None
                and f.data_sequence_number < self.sequence_number
                and (self.scope is None or self.scope == f.delete_scope))


@dataclass(frozen=True)
class IgnoredDelete:
    """A live delete file that removes no row of the read, and why: the data file it names
    is not live (``not-live``), was written after it (``newer-data``), has a deletion vector
    that supersedes it (``deletion-vector``); an equality delete no older data file meets
    (``no-older-data``)."""

    kind: str
    source: str
    sequence_number: int | None
    reason: IgnoreReason
    data_file: str | None = None
    data_sequence_number: int | None = None


def extra_name(field_id: int) -> str:
    """The column an equality delete's field is read into, on both sides."""
    return f"__sl_eq_{field_id}"


def _parquet_ids(f: DataFile) -> bool:
    return f.format == "parquet" and parquet_has_field_ids(f.path)


def plan_read(table: str, target: TableSchema, files: Sequence[DataFile],
              source_of: Callable[[DataFile], TableSchema], mode: CastMode, *,
              has_field_ids: Callable[[DataFile], bool] = _parquet_ids,
              constant_of: Callable[[DataFile, DataField], Constant | None] | None = None,
              defaults: Mapping[int, Constant] | None = None,
              snapshot_id: int | None = None, format: str = "paimon",
              merge: MergeOptions | None = None, deletion_vectors: bool = False,
              equality_deletes: Sequence[EqualityDeletes] = (),
              extra: Sequence[DataField] = (), skipped: Sequence[DataFile] = (),
              ignored_deletes: Sequence[IgnoredDelete] = ()) -> ReadPlan:
    """Group ``files`` by the projection they need onto ``target``. ``source_of(file)`` is
    the schema the file's columns are named and typed by (ids are the table's);
    ``constant_of(file, field)`` fills a field the file lacks; ``defaults`` are nested
    fields' initial defaults; ``extra`` fields are read beside the target (into columns
    :func:`extra_name`) for ``equality_deletes``."""
    defaults = defaults or {}
    fields = (*target.fields, *extra)
    n_target = len(target.fields)
    groups: dict[tuple[object, ...], list[DataFile]] = {}
    info: dict[tuple[object, ...], tuple[tuple[ColumnRead, ...], bool,
                                         tuple[tuple[str, StoredAs], ...]]] = {}
    group_ignored: dict[tuple[object, ...], set[tuple[int, DataField]]] = {}
    group_schemas: dict[tuple[object, ...], dict[int, tuple[ColumnRead, ...]]] = {}
    schemas: dict[int, TableSchema] = {}
    # ColumnReads depend on the file's schema (object) and its constants only
    column_cache: dict[tuple[object, ...], tuple[tuple[ColumnRead, ...], bool]] = {}
    top_level: dict[int, dict[int, DataField]] = {}
    target_ids = {c.id for c in fields}
    for f in files:
        source = source_of(f)
        schemas.setdefault(f.schema_id, source)
        by_id = top_level.get(id(source))
        if by_id is None:
            by_id = top_level[id(source)] = {sf.id: sf for sf in source.fields}
        consts = () if constant_of is None else tuple(
            (t.id, c) for t in fields
            if t.id not in by_id and (c := constant_of(f, t)) is not None)
        ckey = (id(source), consts)
        cached = column_cache.get(ckey)
        if cached is None:
            by_const = dict(consts)
            cols = tuple(_column_read(t, by_id.get(t.id), by_const.get(t.id), defaults)
                         for t in fields)
            cached = column_cache[ckey] = (cols, all(_id_scan_safe(c, defaults) for c in cols))
        cols, id_safe = cached
        stored = stored_as(f, source)
        scan_by_id = id_safe and not stored and has_field_ids(f)
        if scan_by_id:
            key: tuple[object, ...] = ("id", f.format, tuple(
                (c.target.id, c.constant) for c in cols if c.constant is not None))
        else:
            key = ("name", f.format, stored) + tuple(
                (c.kind, c.constant) if c.source is None else
                (c.source.name, spark_sig(c.source.type), id_signature(c.source.type), c.kind)
                for c in cols)
        groups.setdefault(key, []).append(f)
        info.setdefault(key, (cols, scan_by_id, stored))
        group_schemas.setdefault(key, {}).setdefault(f.schema_id, cols[:n_target])
        ignored = group_ignored.setdefault(key, set())
        for sf in source.fields:
            if sf.id not in target_ids:
                ignored.add((f.schema_id, sf))
    plan_groups = tuple(
        FileGroup(tuple(fs), info[k][0][:n_target], info[k][1],
                  tuple(sorted(group_ignored[k], key=lambda x: (x[0], x[1].id))),
                  dict(sorted(group_schemas[k].items())), info[k][2], fs[0].format,
                  info[k][0][n_target:])
        for k, fs in groups.items())
    return ReadPlan(table, target, mode, plan_groups, snapshot_id, schemas, format,
                    merge, deletion_vectors, tuple(equality_deletes), tuple(extra),
                    tuple(skipped), tuple(ignored_deletes))


def _column_read(target: DataField, source: DataField | None, constant: Constant | None,
                 defaults: Mapping[int, Constant]) -> ColumnRead:
    if source is None:
        if constant is not None:
            return ColumnRead(target, None, "constant", constant=constant)
        return ColumnRead(target, None, "null")
    st, tt = source.type, target.type
    nested = tuple(sorted(_missing_defaults(tt, st, defaults).items()))
    renamed_or_same: ColumnKind = "same" if source.name == target.name else "renamed"
    if spark_sig(st) == spark_sig(tt) and id_signature(st) == id_signature(tt) \
            and not alters_values(st, tt):
        return ColumnRead(target, source, renamed_or_same)
    if contains_row(tt) or contains_row(st):
        return ColumnRead(target, source, "evolved", _worst_cast(st, tt), defaults=nested)
    kind = cast_kind(st, tt)
    if kind in ("identity", None):
        # identity: differs only in nullability or in a Spark-invisible way (VARCHAR lengths)
        return ColumnRead(target, source, renamed_or_same)
    if spark_reader_widens(st, tt):
        return ColumnRead(target, source, "widened", "implicit")
    return ColumnRead(target, source, "cast", kind)


def _worst_cast(st: DataType, tt: DataType) -> str | None:
    kind = cast_kind(st, tt)
    return None if kind in (None, "identity") else kind


class _MissingDefaults(PartnerVisitor[dict[int, Constant]]):
    """Nested fields of the target the source lacks that have a default."""

    def __init__(self, defaults: Mapping[int, Constant]) -> None:
        self.defaults = defaults

    def atomic(self, t: AtomicType, partner: DataType | None) -> dict[int, Constant]:
        return {}

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, dict[int, Constant]]]
            ) -> dict[int, Constant]:
        out: dict[int, Constant] = {}
        for f, pf, inner in fields:
            out.update(inner)
            if pf is None and partner is not None and f.id in self.defaults:
                out[f.id] = self.defaults[f.id]
        return out

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: dict[int, Constant]) -> dict[int, Constant]:
        return element

    def map(self, t: MapType, partner: MapType | None, key: dict[int, Constant],
            value: dict[int, Constant]) -> dict[int, Constant]:
        return {**key, **value}


def _missing_defaults(target: DataType, source: DataType,
                      defaults: Mapping[int, Constant]) -> dict[int, Constant]:
    if not defaults or not contains_row(target):
        return {}
    return visit_with_partner(target, source, _MissingDefaults(defaults))


class _IdScanSafe(PartnerVisitor[bool]):
    """Whether Spark's scan by field id reads the target from this source by itself: every
    atomic value the same or widened by the reader, map keys unchanged."""

    def atomic(self, t: AtomicType, partner: DataType | None) -> bool:
        return partner is None or same_or_widens(partner, t)

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, bool]]) -> bool:
        return all(ok for _, _, ok in fields)

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: bool) -> bool:
        return element

    def map(self, t: MapType, partner: MapType | None, key: bool, value: bool) -> bool:
        return value and (partner is None or spark_sig(partner.key) == spark_sig(t.key))


def _id_scan_safe(c: ColumnRead, defaults: Mapping[int, Constant]) -> bool:
    if c.kind in ("same", "renamed", "widened", "null", "constant"):
        return True
    if c.kind == "evolved" and c.source is not None and not c.defaults:
        return visit_with_partner(c.target.type, c.source.type, _IdScanSafe())
    return False


def stored_as(f: DataFile, file_schema: TableSchema) -> tuple[tuple[str, StoredAs], ...]:
    """The top-level columns of a Parquet file stored in a form Spark's Parquet reader
    refuses for their type. Only files whose schema has a TIME or TIMESTAMP(7..9) column
    have their footer read: Spark writes both in forms it reads back, pyarrow (pypaimon)
    and Iceberg's nanosecond timestamps do not."""
    if f.format != "parquet":
        return ()
    wanted = [sf.name for sf in file_schema.fields
              if isinstance(sf.type, AtomicType) and (
                  sf.type.root is TypeRoot.TIME_WITHOUT_TIME_ZONE
                  or (sf.type.root in TIMESTAMP_ROOTS and (sf.type.precision or 0) > 6))]
    if not wanted:
        return ()
    import pyarrow as pa

    arrow = parquet_schema(f.path)
    out: list[tuple[str, StoredAs]] = []
    for name in wanted:
        i = arrow.get_field_index(name)
        t = arrow.field(i).type if i >= 0 else None
        if t is not None and pa.types.is_timestamp(t) and t.unit == "ns" \
                and name not in parquet_int96_columns(f.path):  # Spark reads INT96 itself
            out.append((name, "timestamp-nanos"))
        elif t is not None and pa.types.is_time32(t):
            out.append((name, "time-millis"))
    return tuple(out)
