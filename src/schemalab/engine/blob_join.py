"""BLOB columns on read (Paimon's BLOB type, :mod:`schemalab.paimon.blob`): a column whose
values are kept apart from the rows, in files of their own that cover ranges of row ids,
joined to the rows by row id after the read. The format says where the files are and how to
load one (:class:`BlobFile`'s ``load``); the engine chooses each row's value as Java Paimon
2.0's ``BlobFallbackRecordReader`` does, joins the values and describes them.

    >>> f = lambda name, first, n, seq: BlobFile(name, name, 2, "pic", first, n, seq, 0, 0)
    >>> old, new = f("old", 0, 2, 1), f("new", 0, 2, 5)
    >>> data = {"old": [b"a", b"b"], "new": [PLACEHOLDER, None]}
    >>> resolve_values([old, new], lambda b: data[b.file_name])
    {1: None, 0: b'a'}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from schemalab.engine.plan import PLACEHOLDER, BlobFile, ReadPlan, RowMerge
from schemalab.engine.session_cache import local_frame
from schemalab.errors import CorruptFileError
from schemalab.types.model import AtomicType, DataType, TypeRoot

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

_ROW_ID_COL = "__sl_blob_rid"


def is_blob(t: DataType) -> bool:
    return isinstance(t, AtomicType) and t.root is TypeRoot.BLOB


def resolve_values(files: Sequence[BlobFile],
                   values_of: Callable[[BlobFile], list[object]] | None = None
                   ) -> dict[int, bytes | None]:
    """Row id → value of one column's files: Java's fallback through sequence groups,
    newest first (a placeholder, or a row no file of the group covers, falls through)."""
    groups: dict[int, list[BlobFile]] = {}
    for f in files:
        groups.setdefault(f.max_sequence_number, []).append(f)
    out: dict[int, bytes | None] = {}
    decided: set[int] = set()
    for seq in sorted(groups, reverse=True):
        for f in groups[seq]:
            values = f.load() if values_of is None else values_of(f)
            if len(values) != f.row_count:
                raise CorruptFileError(
                    f.path, f"BLOB file {f.file_name} holds {len(values)} rows; its manifest "
                    f"entry says {f.row_count}")
            for i, v in enumerate(values):
                rid = f.first_row_id + i
                if v is PLACEHOLDER or rid in decided:
                    continue
                decided.add(rid)
                out[rid] = v  # type: ignore[assignment]
    return out


def with_blobs(plan: ReadPlan, files: Sequence[BlobFile]) -> ReadPlan:
    """``plan`` carrying the BLOB files of its target's BLOB columns (those of dropped
    columns are left out)."""
    wanted = {f.id for f in plan.target.fields if is_blob(f.type)}
    return dataclasses.replace(plan, blobs=tuple(f for f in files if f.field_id in wanted))


def blob_read(plan: ReadPlan, spark: SparkSession,
              run: Callable[[ReadPlan, SparkSession], DataFrame],
              keep: Sequence[str] = ()) -> DataFrame:
    """The plan's rows (read by ``run`` with their row ids) with each BLOB column's values
    joined by row id; the columns in the plan's order, system columns as asked, then the
    base read's columns ``keep`` (``__sl_file`` for why)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from schemalab.engine.row_merge import ROW_ID
    from schemalab.engine.spark_reader import quote

    merge = plan.row_merge or RowMerge()
    asked = merge.system
    system = asked if ROW_ID in asked else (*asked, ROW_ID)
    base = run(dataclasses.replace(plan, blobs=(), row_merge=dataclasses.replace(
        merge, system=system)), spark)
    blob_fields = [f for f in plan.target.fields if is_blob(f.type)]
    if not blob_fields:
        return base
    ids: set[int] = set()
    columns: dict[int, dict[int, bytes | None]] = {}
    for bf in blob_fields:
        files = [f for f in plan.blobs if f.field_id == bf.id]
        columns[bf.id] = resolve_values(files)
        ids.update(columns[bf.id])
    order = sorted(ids)
    arrow = pa.table({_ROW_ID_COL: pa.array(order, pa.int64()), **{
        f"__sl_blob_{fid}": pa.array([vals.get(r) for r in order], pa.binary())
        for fid, vals in columns.items()}})
    values = local_frame(spark, arrow) if order else None
    df = base
    if values is not None:
        df = df.join(values, F.col(quote(ROW_ID)) == F.col(_ROW_ID_COL), "left")
    out = []
    for t in plan.target.fields:
        if is_blob(t.type):
            col = F.col(f"__sl_blob_{t.id}") if values is not None else \
                F.lit(None).cast("binary")
            out.append(col.alias(t.name))
        else:
            out.append(F.col(quote(t.name)))
    return df.select(*out, *[F.col(quote(c)) for c in (*asked, *keep)])


#: how explain_read describes a BLOB column of a data file
BLOB_TEXT = ("from the column's .blob files, joined to these rows by row id (see the BLOB "
             "lines)")


def blob_lines(plan: ReadPlan, field_id: int | None = None) -> list[str]:
    """The BLOB columns of the read (only field ``field_id``'s when given), in words: which
    ``.blob`` files hold their values and how a row's value is chosen."""
    out = []
    for t in plan.target.fields:
        if not is_blob(t.type) or (field_id is not None and t.id != field_id):
            continue
        files = sorted((f for f in plan.blobs if f.field_id == t.id),
                       key=lambda f: (f.first_row_id, -f.max_sequence_number, f.file_name))
        if not files:
            out.append(f"BLOB `{t.name}` (field {t.id}): no .blob file holds it: NULL")
            continue
        out.append(
            f"BLOB `{t.name}` (field {t.id}): its values are in {len(files)} .blob file"
            f"{'s' if len(files) != 1 else ''} beside the rows, joined by row id; a row takes "
            "the value (or NULL) of the newest file (highest sequence number) that holds it, "
            "an UPDATE's placeholders falling back to older files:")
        for f in files:
            named = "" if f.column == t.name else f" (written as `{f.column}`)"
            out.append(f"  {f.file_name}: rows {f.first_row_id}..{f.last_row_id}, sequence "
                       f"number {f.max_sequence_number}{named}")
    return out
