"""Every version of every key: the input of a merge.

Each group of files is first evolved to the schema read (renamed, retyped, added and dropped
columns as for append tables), so the versions of one key written under different schemas
compare and merge as values of one type. Each row carries its ``_SEQUENCE_NUMBER`` and
``_VALUE_KIND`` (as ``__sl_seq``, ``__sl_kind``), and on request its file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING

from schemalab.engine.keyed import RETRACT, merge_key_columns
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.scan import FILE_COL, KIND_COL, SEQ_COL, read_group
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

    from schemalab.engine.merge.keyset import KeyBitmap

__all__ = ["FILE_COL", "KIND_COL", "SEQ_COL", "key_columns", "retract", "versions",
           "value_columns"]


def versions(plan: ReadPlan, spark: SparkSession, *, with_file: bool = False,
             files: Collection[DataFile] | None = None,
             drop_held: KeyBitmap | None = None) -> DataFrame | None:
    """Every row of the plan's files (or of ``files`` among them), evolved to the plan's
    schema, with its sequence number and row kind (and, with ``with_file``, its file path);
    None when no file is read. ``drop_held``: without the rows whose key it holds (see
    :func:`schemalab.engine.scan.read_group`)."""
    wanted = None if files is None else {f.path for f in files}
    frames = []
    for g in plan.groups:
        chosen = g.files if wanted is None else tuple(f for f in g.files if f.path in wanted)
        if chosen:
            group = g if len(chosen) == len(g.files) else dataclasses.replace(g, files=chosen)
            frames.append(read_group(plan, group, spark, system=True, with_file=with_file,
                                     drop_held=drop_held))
    if not frames:
        return None
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


def key_columns(plan: ReadPlan) -> list[str]:
    """The columns one merged row is identified by (primary key and partition keys)."""
    return merge_key_columns(plan.target)


def value_columns(plan: ReadPlan) -> list[Column]:
    """The plan's output columns, by name."""
    from pyspark.sql import functions as F

    return [F.col(quote(f.name)) for f in plan.target.fields]


def retract(kind: Column) -> Column:
    """Whether a row kind retracts (``-U``, ``-D``)."""
    return kind.isin(*RETRACT)
