"""Paimon's ``$audit_log`` of a primary-key table, as Java Paimon 2.0's ``AuditLogTable``
reads it in a batch: each key's merged row with the row kind of the version that won
(``+I``, ``+U``, and ``-U`` / ``-D`` too: its read keeps retractions — ``forceKeepDelete`` —
where a plain read drops them), then the table's columns; with
``table-read.sequence-number.enabled`` also each row's ``_SEQUENCE_NUMBER`` after
``rowkind``. A key whose newest version is a delete that a full compaction has not yet
removed reads as a ``-D`` row; a deletion-vector table's visible files are read as they
are, with their rows' own kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemalab.engine.keyed import ROW_KINDS
from schemalab.engine.merge.keyed_read import FUNCTIONS, merge_input
from schemalab.engine.merge.records import KIND_COL, SEQ_COL, versions
from schemalab.engine.row_merge import SEQUENCE_NUMBER
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

#: a Paimon Table (schemalab.table.Table)
Table = Any
SEQUENCE_OPTION = "table-read.sequence-number.enabled"


def with_sequence_number(t: Table) -> bool:
    """``$audit_log`` adds ``_SEQUENCE_NUMBER`` after ``rowkind`` (Java's option)."""
    value = t.schema.effective_options().get(SEQUENCE_OPTION, "false")
    return str(value).strip().lower() == "true"


def keyed_audit_log(t: Table) -> DataFrame:
    """A primary-key table's ``$audit_log`` (see the module's docstring)."""
    from pyspark.sql import functions as F

    plan = t.read_plan()
    names = [f.name for f in plan.target.fields]
    seq = [F.col(SEQ_COL).cast("bigint").alias(SEQUENCE_NUMBER)] \
        if with_sequence_number(t) else []
    rows = versions(plan, t.spark) if any(g.files for g in plan.groups) else None
    if rows is None:
        empty = t.read().limit(0)
        return empty.select(F.lit("+I").alias("rowkind"),
                            *[F.lit(None).cast("bigint").alias(SEQUENCE_NUMBER)
                              for _ in seq], *[F.col(quote(n)) for n in names])
    if not plan.deletion_vectors:
        m = merge_input(plan)
        rows = FUNCTIONS[m.opts.engine](rows, m).where(F.col(KIND_COL).isNotNull())
    pairs = [c for k, text in sorted(ROW_KINDS.items()) for c in (F.lit(k), F.lit(text))]
    kind = F.element_at(F.create_map(*pairs), F.col(KIND_COL).cast("int"))
    return rows.select(kind.alias("rowkind"), *seq, *[F.col(quote(n)) for n in names])
