"""Rows of many files whose key a few other files hold: the lookup behind the merge read's
``newest`` and ``split`` buckets (see :mod:`schemalab.engine.merge.runs`).

Two ways, chosen per read:

``bitmap``     one integer key (TINYINT … BIGINT) whose values among the few files span at
               most :data:`MAX_SPAN` numbers: their keys are read on the driver (only that
               column, with pyarrow), set as bits of a bitmap, and each row tests its bit
               in a filter of its own scan — a scalar subquery holds the bitmap, so the test
               runs inside the scan's generated code, with no join, shuffle or hash table.
``broadcast``  any other key: a broadcast hash join against the few files' keys (Spark
               builds the hash table on the driver and ships it to every task).

Measured by ``bench/merge_read.py`` (3M rows, a tenth of the keys upserted): the broadcast
join cost 0.5 s over the scan of the other 2.7M rows, the bitmap 0.2 s with its driver read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemalab.engine.arrow_read import read_file
from schemalab.engine.plan import DataFile, ReadPlan
from schemalab.engine.spark_reader import quote
from schemalab.paimon.primary_key import RETRACT, VALUE_KIND
from schemalab.types.model import TINYINT, AtomicType, TypeRoot

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: the widest range of key values a bitmap covers (16 MiB of bits)
MAX_SPAN = 1 << 27
_INTEGERS = (TypeRoot.TINYINT, TypeRoot.SMALLINT, TypeRoot.INTEGER, TypeRoot.BIGINT)
_WORDS = "__sl_words"


def without_held(rows: DataFrame, keys: Sequence[str], others: DataFrame,
                 other_files: Sequence[DataFile], plan: ReadPlan, spark: SparkSession, *,
                 inserts_only: bool = False) -> tuple[DataFrame, DataFrame]:
    """(``rows`` whose key ``others`` — the rows of ``other_files`` — does not hold, ``rows``
    whose key it does). ``inserts_only``: ``others`` holds only the files' +I/+U rows
    (``ignore-delete``), so the bitmap counts only those."""
    from pyspark.sql import functions as F

    test = _bitmap(keys, other_files, plan, spark, inserts_only=inserts_only)
    if test is not None:
        return rows.where(~test), rows.where(test)
    broadcast = F.broadcast(others.select(*[F.col(quote(k)) for k in keys]))
    return (rows.join(broadcast, on=list(keys), how="left_anti"),
            rows.join(broadcast, on=list(keys), how="left_semi"))


def _rowkind_field(plan: ReadPlan) -> str | None:
    return plan.target.effective_options().get("rowkind.field")


def _bitmap(keys: Sequence[str], files: Sequence[DataFile], plan: ReadPlan,
            spark: SparkSession, *, inserts_only: bool) -> Column | None:
    """The bitmap test of the module's docstring, or None where it does not apply."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    if len(keys) != 1 or (inserts_only and _rowkind_field(plan) is not None):
        return None  # several key columns, or row kinds in a value column: join
    target = plan.target.field(keys[0])
    if target is None or not isinstance(target.type, AtomicType) or \
            target.type.root not in _INTEGERS:
        return None
    values = []
    for f in files:
        schema = plan.schemas.get(f.schema_id)
        source = None if schema is None else next(
            (x for x in schema.fields if x.id == target.id), None)
        if source is None or f.deletes:
            return None  # a key the file lacks, or rows deleted by position: join instead
        retracts = inserts_only and f.delete_row_count != 0
        columns = [(source.name, source.type)] + ([(VALUE_KIND, TINYINT())] if retracts else [])
        t = read_file(f, columns)
        key = t.column(0)
        if retracts:
            kind = t.column(1).fill_null(0)
            key = key.filter(pc.invert(pc.is_in(kind, pa.array(RETRACT, pa.int8()))))
        values.append(key.drop_null().to_numpy().astype(np.int64))
    found = np.concatenate(values) if values else np.zeros(0, np.int64)
    if not len(found):
        return F.lit(False)
    lo, hi = int(found.min()), int(found.max())
    if hi - lo >= MAX_SPAN:
        return None
    at = (found - lo).astype(np.uint64)
    words = np.zeros(((hi - lo) >> 6) + 1, dtype=np.uint64)
    np.bitwise_or.at(words, at >> np.uint64(6), np.left_shift(np.uint64(1), at & np.uint64(63)))
    bitmap = spark.createDataFrame(pa.table({_WORDS: pa.array(
        [words.view(np.int64)], type=pa.list_(pa.int64()))})).scalar()
    i = F.col(quote(keys[0])).cast("bigint") - F.lit(lo)
    # the key's bit: word i >> 6 (element_at counts from 1), bit i % 64 of it; CASE WHEN
    # evaluates element_at only for keys inside the bitmap (ANSI mode fails past its end)
    word = F.element_at(bitmap, F.shiftright(i, 6).cast("int") + 1)
    bit = F.call_function("shiftright", word, (i % 64).cast("int")).bitwiseAND(F.lit(1))
    return F.when(i.between(0, hi - lo), bit == 1).otherwise(F.lit(False))
