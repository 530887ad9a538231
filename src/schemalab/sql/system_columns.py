"""Row-tracking system columns in SQL: ``SELECT _ROW_ID, _SEQUENCE_NUMBER, * FROM t``.

Paimon's Spark integration exposes a row-tracking table's ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` as metadata columns: a query may name them, and ``*`` does not include
them. schemalab's temp view of such a table carries them as ordinary columns when the query
names them, so each ``*`` of the query becomes ``* EXCEPT (_ROW_ID, _SEQUENCE_NUMBER)``.

    >>> names_system_columns("SELECT _row_id, * FROM t")
    ('_ROW_ID',)
    >>> hide_from_stars("SELECT _ROW_ID, * FROM `v`", ("_ROW_ID",))
    'SELECT _ROW_ID, * EXCEPT (`_ROW_ID`) FROM `v`'
"""

from __future__ import annotations

from sqlglot import exp

from schemalab.engine.row_merge import SYSTEM_COLUMNS
from schemalab.sql.queries import read_query


def names_system_columns(sql: str) -> tuple[str, ...]:
    """The system columns (in Paimon's order) a query names, case-insensitively."""
    named = {c.name.upper() for c in read_query(sql).tree.find_all(exp.Column)
             if isinstance(c.this, exp.Identifier)}
    return tuple(c for c in SYSTEM_COLUMNS if c in named)


def hide_from_stars(sql: str, columns: tuple[str, ...]) -> str:
    """``sql`` with ``columns`` left out of every ``*`` (Spark's ``* EXCEPT``)."""
    ends = sorted({s.meta["end"] for s in read_query(sql).tree.find_all(exp.Star)
                   if "end" in s.meta}, reverse=True)
    hidden = " EXCEPT (" + ", ".join(f"`{c}`" for c in columns) + ")"
    for end in ends:
        sql = sql[:end + 1] + hidden + sql[end + 1:]
    return sql
