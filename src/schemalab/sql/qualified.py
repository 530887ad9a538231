"""Column names qualified by their table, as Spark resolves them in a statement on one table.

Spark gives the relation of ``DELETE FROM db.t`` the qualifier ``spark_catalog.db.t``, so
its condition may name a column ``c``, ``t.c``, ``db.t.c`` or ``spark_catalog.db.t.c``
(``AttributeSeq.resolve`` tries the longest qualifier first, case-insensitively; what is left
of the name are nested fields). schemalab runs the condition over a view aliased ``t``:
:func:`unqualify` rewrites the longer forms to ``t.c`` in the condition's text.

    >>> unqualify("db.t.id = 1 AND `DB`.T.s.x > 2 AND spark_catalog.db.t.id < 9", "db", "t")
    't.id = 1 AND T.s.x > 2 AND t.id < 9'
    >>> unqualify("other.t.id = 1 AND t.id = 2", "db", "t")
    'other.t.id = 1 AND t.id = 2'
"""

from __future__ import annotations

from sqlglot import exp

from schemalab.sql.reader import read

#: Spark's name of its session catalog, the first part of a table's qualifier
SESSION_CATALOG = "spark_catalog"
_PREFIX = "DELETE FROM __sl_t WHERE "
_PARTS = ("catalog", "db", "table", "this")


def _parts(c: exp.Column) -> list[exp.Identifier]:
    return [p for k in _PARTS if isinstance(p := c.args.get(k), exp.Identifier)]


def unqualify(condition: str, db: str, table: str) -> str:
    """``condition`` with each column named through ``db.table`` (or
    ``spark_catalog.db.table``) named through ``table`` alone; other names as written."""
    text = _PREFIX + condition
    tree = read(text, "DELETE").tree
    qualifier = [SESSION_CATALOG, db.lower(), table.lower()]
    cuts: list[tuple[int, int]] = []
    for c in tree.find_all(exp.Column):
        parts = _parts(c)
        if any("start" not in p.meta for p in parts):
            continue
        names = [p.name.lower() for p in parts]
        for k in (3, 2):
            if len(parts) > k and names[:k] == qualifier[-k:]:
                cuts.append((parts[0].meta["start"], parts[k - 1].meta["start"]))
                break
    for start, end in sorted(cuts, reverse=True):
        text = text[:start] + text[end:]
    return text[len(_PREFIX):]
