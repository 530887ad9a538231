"""The Spark side of :mod:`schemalab.engine.row_merge`: the files of each row-id range read
with their rows' positions and merged column by column by row id, and the system columns
``_ROW_ID`` / ``_SEQUENCE_NUMBER`` added after the table's columns."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from schemalab.engine.row_merge import (
    FLAG_PREFIX,
    RANK_COL,
    RID_COL,
    ROW_FILE_COL,
    ROW_ID,
    ROW_INDEX_COL,
    SEQUENCE_NUMBER,
    STORED_ROW_ID,
    STORED_SEQ,
    SYSTEM_COLUMNS,
    RowMerge,
    file_label,
)
from schemalab.engine.scan import FILE_COL, read_group
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

    from schemalab.engine.plan import DataFile, FileGroup, ReadPlan


def row_merge_read(plan: ReadPlan, spark: SparkSession, file_of: int | None = None
                   ) -> DataFrame:
    """The rows of a plan with a :class:`RowMerge`: files outside its groups as they are,
    the groups' files merged by row id; the system columns after the table's. ``file_of``
    (a field id) adds each row's file that supplied that field (``__sl_file``, for why)."""
    merge = plan.row_merge
    assert merge is not None
    merged = merge.merged
    keep = [FILE_COL] if file_of is not None else []
    frames: list[DataFrame] = []
    parts: list[DataFrame] = []
    for g in plan.groups:
        single = tuple(f for f in g.files if f.path not in merged)
        multi = tuple(f for f in g.files if f.path in merged)
        if single:
            df = read_group(plan, replace(g, files=single), spark, row_ids=bool(merge.system),
                            with_file=bool(keep))
            frames.append(_with_system(df, single, plan, merge, keep))
        if multi:
            df = read_group(plan, replace(g, files=multi), spark, row_ids=True,
                            with_file=bool(keep))
            parts.append(_flagged(df, g, multi, plan, merge, keep))
    if parts:
        frames.append(_merged(functools.reduce(lambda a, b: a.union(b), parts), plan, merge,
                              file_of))
    return functools.reduce(lambda a, b: a.union(b), frames)


def _file_map(files: Sequence[DataFile], value: Callable[[DataFile], int | None]) -> Column:
    """``value`` of the row's file (looked up by its file name)."""
    from pyspark.sql import functions as F

    pairs = [c for f in files for c in (F.lit(file_label(f)), F.lit(value(f)).cast("bigint"))]
    return F.element_at(F.create_map(*pairs), F.col(ROW_FILE_COL))


def _row_id(files: Sequence[DataFile]) -> Column:
    from pyspark.sql import functions as F

    return _file_map(files, lambda f: f.first_row_id) + F.col(ROW_INDEX_COL)


def _system_values(files: Sequence[DataFile]) -> list[Column]:
    """``_ROW_ID`` and ``_SEQUENCE_NUMBER`` of each row: stored, else Paimon's fallback."""
    from pyspark.sql import functions as F

    return [F.coalesce(F.col(STORED_ROW_ID), _row_id(files)).alias(ROW_ID),
            F.coalesce(F.col(STORED_SEQ), _file_map(files, lambda f: f.max_sequence_number)
                       ).alias(SEQUENCE_NUMBER)]


def _targets(plan: ReadPlan) -> list[Column]:
    from pyspark.sql import functions as F

    return [F.col(quote(t.name)) for t in plan.target.fields]


def _with_system(df: DataFrame, files: Sequence[DataFile], plan: ReadPlan,
                 merge: RowMerge, keep: list[str]) -> DataFrame:
    if not merge.system:
        return df.select(*_targets(plan), *keep)
    values = dict(zip(SYSTEM_COLUMNS, _system_values(files), strict=True))
    return df.select(*_targets(plan), *[values[c] for c in merge.system], *keep)


def _flagged(df: DataFrame, group: FileGroup, files: Sequence[DataFile], plan: ReadPlan,
             merge: RowMerge, keep: list[str]) -> DataFrame:
    """A merged scan's rows with their row id, their file's rank in its row-id group
    (0: newest) and, per column, whether this scan supplies it."""
    from pyspark.sql import functions as F

    rank = {f.path: i for g in merge.groups for i, f in enumerate(g.files)}
    supplied = {c.target.id for c in group.columns if c.kind != "null"}
    flags = [(F.lit(1) if t.id in supplied else F.lit(None)).cast("int")
             .alias(f"{FLAG_PREFIX}{t.id}") for t in plan.target.fields]
    return df.select(*_targets(plan), *flags, _row_id(files).alias(RID_COL),
                     _file_map(files, lambda f: rank[f.path]).alias(RANK_COL),
                     *_system_values(files), *keep)


def _merged(df: DataFrame, plan: ReadPlan, merge: RowMerge, file_of: int | None
            ) -> DataFrame:
    """One row per row id: each column from the file that supplies it, the system columns
    from the newest file of the group."""
    from pyspark.sql import functions as F

    cols = [F.max_by(F.col(quote(t.name)), F.col(f"{FLAG_PREFIX}{t.id}")).alias(t.name)
            for t in plan.target.fields]
    system = [F.min_by(F.col(c), F.col(RANK_COL)).alias(c) for c in merge.system]
    file = [] if file_of is None else [
        F.max_by(F.col(FILE_COL), F.col(f"{FLAG_PREFIX}{file_of}")).alias(FILE_COL)]
    return df.groupBy(RID_COL).agg(*cols, *system, *file).drop(RID_COL)
