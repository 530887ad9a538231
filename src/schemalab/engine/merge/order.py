"""The order in which Paimon merges the versions of one key (``SortMergeReader``): by the
``sequence.field`` values when the table sets them (compared as Paimon's generated
``RecordComparator``: NULL first in either sort order, ``sequence.field.sort-order`` =
descending reverses the values only), then by ``_SEQUENCE_NUMBER``. The last version in this
order is the newest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from schemalab.engine.merge.options import MergeOptions
from schemalab.engine.merge.records import SEQ_COL
from schemalab.engine.spark_reader import quote

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column


class Fielded(Protocol):
    """A record or fold state: a struct column, or
    :class:`~schemalab.engine.merge.function.Values`."""

    def getField(self, name: str) -> Column: ...  # noqa: N802 - Column's own name


def sort_fields(opts: MergeOptions) -> list[tuple[str, bool]]:
    """``(column, ascending)`` pairs, most significant first: the sequence fields, then the
    sequence number."""
    return [(f, opts.sequence_ascending) for f in opts.sequence_fields] + [(SEQ_COL, True)]


def compare(left: Fielded, right: Fielded, fields: Sequence[tuple[str, bool]]) -> Column:
    """-1, 0 or 1 as ``left`` sorts before, with or after ``right`` (two structs holding
    ``fields``), NULL first: the comparator of ``array_sort`` and of sequence groups."""
    from pyspark.sql import functions as F

    out = F.lit(0)
    for name, ascending in reversed(fields):
        lf, rf = left.getField(name), right.getField(name)
        before, after = (-1, 1) if ascending else (1, -1)
        values = F.when(lf < rf, F.lit(before)).when(lf > rf, F.lit(after)).otherwise(out)
        out = (F.when(lf.isNull() & rf.isNull(), out).when(lf.isNull(), F.lit(-1))
               .when(rf.isNull(), F.lit(1)).otherwise(values))
    return out


def newest_first(opts: MergeOptions) -> list[Column]:
    """Window ordering that puts the newest version of a key first."""
    from pyspark.sql import functions as F

    out = []
    for name, ascending in sort_fields(opts):
        col = F.col(quote(name))
        # newest first = the merge order reversed: NULL (the oldest) last
        out.append(col.desc_nulls_last() if ascending else col.asc_nulls_last())
    return out
