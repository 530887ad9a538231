"""Compaction of a data-evolution table, as Java Paimon 2.0 compacts one
(``DataEvolutionCompactCoordinator`` planning ``DataEvolutionNormalCompactTask``\\ s, which
``CALL sys.compact`` runs).

A data-evolution table keeps each UPDATE of some columns as a file holding only those
columns for one row-id range; a read merges them by row id. Compaction folds such files
back into whole-row files while every row keeps its ``_ROW_ID``:

- per partition, files whose row-id ranges overlap or touch form a group; inside it the
  files of one range (which must all cover the same range) go together, ranges in order;
- ranges are gathered into a bin until its weight (each file's size, at least
  ``source.split.open-file-cost``) passes ``target-file-size`` (a range heavier than that
  is a bin of its own); a bin of at least ``compaction.min.file-num`` files (5 by default)
  is compacted, a smaller one left as it is;
- a compacted bin becomes **one** file: its rows merged by row id, in row-id order, in
  today's schema, with every column (``_WRITE_COLS`` unset); its ``_FIRST_ROW_ID`` is the
  bin's first row id, its sequence numbers the smallest and largest of the files it
  replaces, and the snapshot's ``nextRowId`` does not move.

A row's ``_SEQUENCE_NUMBER`` reads as the compacted file's largest afterwards, as after
Java's compaction (neither writes per-row sequence numbers into the new file).

A table with row tracking but no data evolution is compacted as other append tables (the
same files chosen), and, as Java's ``CALL sys.compact`` writes it (``withWriteType(
rowTypeWithRowTracking)``), each rewritten row keeps its ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` in columns of its own (Paimon's field ids 2147483642 and 2147483646):
the new file has no first row id, its ``_WRITE_COLS`` name the table's columns and those
two, its sequence numbers are the smallest and largest of its rows'.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.row_merge import ROW_ID, SEQUENCE_NUMBER, SYSTEM_COLUMNS, file_label
from schemalab.engine.spark_reader import all_nullable, quote
from schemalab.errors import SchemaLabError, UnsupportedFeatureError
from schemalab.paimon.features import DATA_EVOLUTION, ROW_TRACKING
from schemalab.paimon.manifest import FileKind, ManifestEntry
from schemalab.paimon.primary_key import SEQUENCE_NUMBER_ID
from schemalab.paimon.snapshot import Snapshot
from schemalab.paimon.write import files as write
from schemalab.paimon.write.files import WriteTarget
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import AtomicType
from schemalab.types.spark import FIELD_ID_KEY, spark_field, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

Pair = tuple[ManifestEntry, DataFile]
_MB = 1024 * 1024
#: Paimon's defaults of ``source.split.open-file-cost`` and ``compaction.min.file-num``
OPEN_FILE_COST = 4 * _MB
MIN_FILE_NUM = 5
#: Paimon's ``SpecialFields.ROW_ID`` field id (a stored ``_ROW_ID`` column)
ROW_ID_FIELD_ID = 2**31 - 6


@dataclass(frozen=True)
class RangeTask:
    """One compacted file to be: the files of consecutive row-id ranges of one partition."""

    pairs: tuple[Pair, ...]
    first_row_id: int
    row_count: int

    @property
    def files(self) -> list[DataFile]:
        return [f for _, f in self.pairs]


def _merge_ranges(pairs: Sequence[Pair], end: Callable[[DataFile], int]) -> list[list[Pair]]:
    """Java's ``RangeHelper.mergeOverlappingRanges``: pairs whose ranges ``[first, end]``
    overlap, grouped in range order; in a group the input order."""
    order = sorted(range(len(pairs)), key=lambda i: (_first(pairs[i][1]), end(pairs[i][1])))
    groups: list[list[int]] = []
    last = 0
    for i in order:
        f = pairs[i][1]
        if groups and _first(f) <= last:
            groups[-1].append(i)
            last = max(last, end(f))
        else:
            groups.append([i])
            last = end(f)
    return [[pairs[i] for i in sorted(g)] for g in groups]


def _first(f: DataFile) -> int:
    assert f.first_row_id is not None
    return f.first_row_id


def _check_file(table: str, f: DataFile) -> None:
    name = file_label(f)
    if f.first_row_id is None:
        raise UnsupportedFeatureError(
            f"COMPACT of {table} refused: data file {name} has no first row id, which a "
            "data-evolution compaction needs to keep each row's _ROW_ID. Nothing was written.",
            table=table, feature="data evolution", option=DATA_EVOLUTION)
    if name.endswith(".blob") or ".vector" in name or f.format != "parquet":
        raise UnsupportedFeatureError(
            f"COMPACT of {table} refused: data file {name} is a {f.format.upper()} file of "
            "a data-evolution table that schemalab does not compact (only Parquet files "
            "of whole rows or of some columns). Nothing was written.", table=table,
            feature="data evolution", option=DATA_EVOLUTION)
    if f.deletes:
        raise UnsupportedFeatureError(
            f"COMPACT of {table} refused: data file {name} has a deletion vector; "
            "schemalab does not compact a data-evolution table with deletion vectors. "
            "Nothing was written.", table=table,
            feature="data evolution with deletion vectors", option="deletion-vectors.enabled")


def plan_tasks(pairs: Sequence[Pair], schema: TableSchema, table: str,
               target_size: int) -> list[RangeTask]:
    """The files to compact, bin by bin (see the module's docstring)."""
    options = schema.effective_options()
    open_cost = _size(options.get("source.split.open-file-cost"), OPEN_FILE_COST)
    min_files = schema.int_option("compaction.min.file-num", MIN_FILE_NUM, table)
    by_partition: dict[bytes, list[Pair]] = {}
    for e, f in pairs:
        _check_file(table, f)
        by_partition.setdefault(e.partition, []).append((e, f))
    tasks: list[RangeTask] = []

    def flush(bin_: list[list[Pair]]) -> None:
        chosen = [p for rng in bin_ for p in rng]
        if chosen and len(chosen) >= min_files:
            first = _first(bin_[0][0][1])
            tasks.append(RangeTask(tuple(chosen), first,
                                   sum(rng[0][1].row_count for rng in bin_)))
        bin_.clear()

    for items in by_partition.values():
        for group in _merge_ranges(items, lambda f: _first(f) + f.row_count):
            bin_: list[list[Pair]] = []
            weight = 0
            for rng in _merge_ranges(group, lambda f: _first(f) + f.row_count - 1):
                _check_same_range(table, rng)
                w = sum(max(f.file_size, open_cost) for _, f in rng)
                if w > target_size:
                    flush(bin_)
                    weight = 0
                    flush([rng])
                    continue
                bin_.append(rng)
                weight += w
                if weight > target_size:
                    flush(bin_)
                    weight = 0
            flush(bin_)
    return tasks


def _check_same_range(table: str, rng: list[Pair]) -> None:
    a = rng[0][1]
    for _, f in rng[1:]:
        if f.first_row_id != a.first_row_id or f.row_count != a.row_count:
            raise SchemaLabError(
                f"Table {table}: data files {file_label(a)} (row ids {a.first_row_id}..."
                f"{_first(a) + a.row_count - 1}) and {file_label(f)} (row ids "
                f"{f.first_row_id}...{_first(f) + f.row_count - 1}) overlap without covering "
                "the same row ids; Java Paimon refuses to compact such a table too.",
                table=table, rule="row-id-ranges")


def _size(text: str | None, default: int) -> int:
    if text is None:
        return default
    t = text.strip().lower().replace(" ", "")
    for unit, mult in (("gb", 1024 * _MB), ("g", 1024 * _MB), ("mb", _MB), ("m", _MB),
                       ("kb", 1024), ("k", 1024), ("b", 1)):
        if t.endswith(unit) and t[: -len(unit)].isdigit():
            return int(t[: -len(unit)]) * mult
    return int(t) if t.isdigit() else default


def rewrite_task(target: WriteTarget, task: RangeTask, snap: Snapshot | None,
                 schema_of: Callable[[int], TableSchema], spark: SparkSession
                 ) -> tuple[write.WrittenFile, ManifestEntry]:
    """Write one task's rows as one file, in row-id order, and its ADD entry (first row id,
    sequence numbers and every column, as Java's ``DataEvolutionNormalCompactTask``)."""
    from pyspark.sql import functions as F

    from schemalab.engine.execute import execute
    from schemalab.paimon.data_evolution import plan_row_tracking_read, with_system_columns

    schema, table = target.schema, target.name
    plan = with_system_columns(
        plan_row_tracking_read(table, schema, snap, task.files, schema_of), [ROW_ID])
    df = execute(plan, spark)
    df = df.select(*with_field_ids(schema), F.col(ROW_ID))
    written = write.write_files(spark, df, target.path, schema, table=table,
                                sort_by=[quote(ROW_ID)], drop=[ROW_ID])
    if len(written) != 1 or written[0].row_count != task.row_count:
        for w in written:
            fileio.delete(w.path)
        raise SchemaLabError(
            f"Table {table}: compacting the rows {task.first_row_id}..."
            f"{task.first_row_id + task.row_count - 1} wrote {len(written)} file(s) of "
            f"{sum(w.row_count for w in written)} rows, not one file of {task.row_count}; "
            "nothing was committed.", table=table, rule="internal-error")
    entry = write.data_file_entry(
        written[0], schema, min_seq=min(f.min_sequence_number for f in task.files),
        max_seq=max(f.max_sequence_number for f in task.files))
    entry = dataclasses.replace(entry, partition=task.pairs[0][0].partition,
                                file=dataclasses.replace(entry.file,
                                                         first_row_id=task.first_row_id))
    return written[0], entry


def deletes(task: RangeTask) -> list[ManifestEntry]:
    return [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
            for e, _ in task.pairs]


def with_field_ids(schema: TableSchema) -> list[Column]:
    """The table's columns labelled with their field ids (a merge by row id or a fold
    through structs loses the ids Spark writes into the file)."""
    from pyspark.sql import functions as F

    return [F.col(quote(f.name)).cast(all_nullable(to_spark(f.type)))
            .alias(f.name, metadata=spark_field(f).metadata) for f in schema.fields]


def tracked_rows(plan: ReadPlan, spark: SparkSession) -> DataFrame:
    """A row-tracking table's rows with their ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as
    columns of their own, labelled with Paimon's field ids."""
    from pyspark.sql import functions as F

    from schemalab.engine.execute import execute
    from schemalab.paimon.data_evolution import with_system_columns

    df = execute(with_system_columns(plan, list(SYSTEM_COLUMNS)), spark)
    return df.select(*with_field_ids(plan.target),
                     F.col(ROW_ID).alias(ROW_ID, metadata={FIELD_ID_KEY: ROW_ID_FIELD_ID}),
                     F.col(SEQUENCE_NUMBER).alias(SEQUENCE_NUMBER,
                                                  metadata={FIELD_ID_KEY: SEQUENCE_NUMBER_ID}))


def _footer_range(meta: Any, column: str, path: str) -> tuple[int, int]:
    index = meta.schema.to_arrow_schema().get_field_index(column)
    stats = [meta.row_group(i).column(index).statistics for i in range(meta.num_row_groups)]
    if not stats or any(st is None or not st.has_min_max for st in stats):
        raise SchemaLabError(f"{path}: no statistics of {column} in its footer",
                             rule="internal-error")
    return min(st.min for st in stats), max(st.max for st in stats)


def tracked_entry(f: write.WrittenFile, entry: ManifestEntry, schema: TableSchema, table: str
                  ) -> ManifestEntry:
    """The ADD entry of a file :func:`tracked_rows` wrote, sorted by row id: its columns
    (the table's, then the two stored ones), its rows' smallest and largest sequence numbers
    (from the footer), value statistics named (they cover the table's columns only) and, as
    its rows' ids are consecutive, its first row id.

    Java's compaction leaves the first row id out, and pypaimon 2.1 then reads every
    ``_ROW_ID`` of the file as NULL (it does not read the stored column); with the first
    row id each engine reads the same ids (Java takes the stored ones, pypaimon counts
    from the first). Rows whose ids are not consecutive (a partition's rows between
    other partitions' ids, a sorted compaction) cannot be given one, so such a compaction
    is refused."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(fileio.open_input(f.path)).metadata
    lo, hi = _footer_range(meta, SEQUENCE_NUMBER, f.path)
    first, last = _footer_range(meta, ROW_ID, f.path)
    if last - first + 1 != f.row_count:
        raise UnsupportedFeatureError(
            f"COMPACT of {table} refused: the rows it would put in one file have the row ids "
            f"{first}..{last} with gaps ({f.row_count} rows; other partitions' rows or a "
            "sort order between them), so the file could not name a first row id, and "
            "pypaimon 2.1 reads the _ROW_ID of such a file as NULL. Nothing was written.",
            table=table, feature="row tracking", option=ROW_TRACKING)
    names = entry.file.value_stats_cols or tuple(
        fl.name for fl in schema.fields if isinstance(fl.type, AtomicType))
    return dataclasses.replace(entry, file=dataclasses.replace(
        entry.file, min_sequence_number=lo, max_sequence_number=hi, first_row_id=first,
        write_cols=(*(fl.name for fl in schema.fields), *SYSTEM_COLUMNS),
        value_stats_cols=names))
