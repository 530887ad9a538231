"""Row-tracking system columns in SQL: ``SELECT _ROW_ID, _SEQUENCE_NUMBER, * FROM t``.

Paimon's Spark integration exposes a row-tracking table's ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` as metadata columns: a query may name them, and ``*`` does not include
them. schemalab's temp view of such a table carries them as ordinary columns when the query
names them, so each ``*`` of the query becomes ``* EXCEPT (_ROW_ID, _SEQUENCE_NUMBER)``.

    >>> names_system_columns("SELECT _row_id, * FROM t")
    ('_ROW_ID',)
    >>> hide_from_stars("SELECT _ROW_ID, * FROM `v`", ("_ROW_ID",))
    'SELECT _ROW_ID, * EXCEPT (`_ROW_ID`) FROM `v`'

In a join each table gets the system columns the query names with its alias or name
(``a._ROW_ID``); an unqualified one goes to every table of the query:

    >>> named = named_system_columns("SELECT a._ROW_ID, b.x FROM t a JOIN db.u b ON a.k = b.k")
    >>> named.of(TableName(None, "t"), lambda: True), named.of(TableName("db", "u"), lambda: True)
    (('_ROW_ID',), ())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from schemalab.engine.row_merge import SYSTEM_COLUMNS
from schemalab.sql.queries import read_query, referenced_tables, table_name
from schemalab.sql.statements import TableName


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



@dataclass(frozen=True)
class NamedSystemColumns:
    """The system columns a query names: per table for those qualified by its alias or
    name (``a._ROW_ID``), and the unqualified ones."""

    qualified: dict[TableName, tuple[str, ...]]
    loose: tuple[str, ...]
    tables: int

    def of(self, name: TableName, tracks_rows: Callable[[], bool]) -> tuple[str, ...]:
        """What table ``name``'s read adds: its qualified ones, and the unqualified ones
        when it is the query's only table or a row-tracking table among several.
        ``tracks_rows`` is asked only then (it reads the table's schema)."""
        cols = set(self.qualified.get(name, ()))
        if self.loose and (self.tables == 1 or tracks_rows()):
            cols |= set(self.loose)
        return tuple(c for c in SYSTEM_COLUMNS if c in cols)


def named_system_columns(sql: str) -> NamedSystemColumns:
    """Which system columns ``sql`` names, and for which of its tables."""
    if not any(c.lower() in sql.lower() for c in SYSTEM_COLUMNS):
        return NamedSystemColumns({}, (), 0)
    tree = read_query(sql).tree
    tables = referenced_tables(tree)
    by_qualifier: dict[str, set[TableName]] = {}
    for t in tree.find_all(exp.Table):
        if isinstance(t.this, exp.Identifier) and not t.args.get("catalog") \
                and table_name(t) in tables:
            for q in (t.alias_or_name.lower(), t.name.lower()):
                by_qualifier.setdefault(q, set()).add(table_name(t))
    qualified: dict[TableName, set[str]] = {}
    loose: set[str] = set()
    for c in tree.find_all(exp.Column):
        if not isinstance(c.this, exp.Identifier) or c.name.upper() not in SYSTEM_COLUMNS:
            continue
        if not c.table:
            loose.add(c.name.upper())
        for name in by_qualifier.get(c.table.lower(), ()) if c.table else ():
            qualified.setdefault(name, set()).add(c.name.upper())
    return NamedSystemColumns(
        {n: tuple(x for x in SYSTEM_COLUMNS if x in cols) for n, cols in qualified.items()},
        tuple(x for x in SYSTEM_COLUMNS if x in loose), len(tables))
