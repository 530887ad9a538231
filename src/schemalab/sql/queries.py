"""Queries on sqlglot's trees: the tables a query reads, and the query with some of them
replaced (by temp views over their evolved reads).

    >>> tree = read_query("WITH s AS (SELECT * FROM db.S) SELECT * FROM s JOIN T").tree
    >>> referenced_tables(tree)
    (TableName(database='db', table='S'), TableName(database=None, table='T'))
    >>> rewrite_tables("SELECT T.a FROM T JOIN db.U u ON T.a = u.a",
    ...                {TableName(None, "T"): "v1", TableName("db", "U"): "v2"})
    'SELECT T.a FROM `v1` AS `T` JOIN `v2` u ON T.a = u.a'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token

from schemalab.errors import SqlError
from schemalab.sql.reader import SUPPORTED, Parsed, internal_error, read, snippet
from schemalab.sql.statements import TableName

# Spark's TABLE t, which sqlglot reads as SELECT * FROM t
_TABLE_QUERY = re.compile(r"TABLE\b", re.IGNORECASE)

__all__ = ["AsOfTime", "query_sql", "read_query", "referenced_tables", "rewrite_query",
           "rewrite_tables", "table_name", "versioned_tables"]


def read_query(sql: str, what: str = "query", *, tokens: list[Token] | None = None) -> Parsed:
    """``sql``, which must be one query (SELECT, WITH, VALUES, set operations, ``TABLE t``),
    read into a tree (from ``tokens`` when they were read already)."""
    parsed = read(sql, what, tokens=tokens, query_only=True)
    tree = parsed.tree
    if len(parsed.tokens) == 1 and parsed.tokens[0].text.upper() == "TABLE":
        raise SqlError(f"Cannot parse {what}: expected a table name after TABLE",
                       rule="sql-syntax")
    if not isinstance(tree, exp.Query | exp.Values):
        hint = ""
        if isinstance(tree, exp.Insert):
            hint = " Put WITH after INSERT INTO t: INSERT INTO t WITH c AS (..) SELECT .."
        raise SqlError(f"Unsupported statement: {tree.key.upper()} where {what} should be, in "
                       f"{snippet(sql)}. {SUPPORTED}.{hint}", rule="unsupported-statement")
    tree.meta["span"] = (parsed.tokens[0].start, parsed.tokens[-1].end + 1)
    return parsed


def query_sql(tree: exp.Expr, source: str) -> str:
    """The query read as ``tree`` from ``source``, as it will run: as written, without the
    comments and ``;`` around it, so it can be wrapped in other SQL; Spark's ``TABLE t``
    written as ``SELECT * FROM t``.

    >>> parsed = read_query("TABLE db.t -- all of it")
    >>> query_sql(parsed.tree, parsed.text)
    'SELECT * FROM db.t'
    """
    start, end = tree.meta["span"]
    written = source[start:end]
    table = tree.find(exp.Table)
    if _TABLE_QUERY.match(written) and table is not None:
        return f"SELECT * FROM {table_name(table).sql()}"
    return written


#: Iceberg's ref selectors as the last part of a name (``db.t.branch_dev``)
_SELECTOR = re.compile(r"^(?:branch|tag|snapshot_id)_.+", re.S)


def table_name(table: exp.Table) -> TableName:
    if table.args.get("catalog") and _SELECTOR.match(table.name):
        # db.t.branch_dev: branch dev of Iceberg table db.t (the warehouse resolves it)
        return TableName(table.catalog, f"{table.db}.{table.name}")
    if table.args.get("catalog"):
        raise SqlError(f"Unsupported table name {table.sql(dialect='spark')}: name a table as "
                       "table or database.table (catalogs are not supported)",
                       rule="unsupported-sql")
    return TableName(table.db or None, table.name)


def referenced_tables(tree: exp.Expr) -> tuple[TableName, ...]:
    """The real tables ``tree`` reads, each once, in order of first appearance in the text:
    not CTEs, not table functions such as ``range(10)``, not the relation names inside
    optimizer hints."""
    names: list[TableName] = []
    for table in sorted(_table_references(tree), key=_text_position):
        name = table_name(table)
        if name not in names:
            names.append(name)
    return tuple(names)


@dataclass(frozen=True)
class AsOfTime:
    """``t TIMESTAMP AS OF <expression>`` (Spark's synonym: ``FOR SYSTEM_TIME AS OF``): the
    expression as Spark SQL text; Spark, not the parser, says which time it is
    (:func:`schemalab.time_travel.timestamp_micros`).

    >>> versioned_tables("SELECT * FROM t FOR SYSTEM_TIME AS OF '2026-11-28 04:40:00'")
    ((TableName(database=None, table='t'), TIMESTAMP AS OF '2026-11-28 04:40:00'),)
    """

    expression: str
    #: the expression's tree (not compared: the text says it all)
    tree: exp.Expr | None = field(default=None, compare=False, hash=False, repr=False)

    def __repr__(self) -> str:
        return f"TIMESTAMP AS OF {self.expression}"


#: a table read ``VERSION AS OF`` a tag name (str) or a snapshot id (int), or
#: ``TIMESTAMP AS OF`` a time (:class:`AsOfTime`)
Versioned = tuple[TableName, str | int | AsOfTime]


def _version_of(table: exp.Table) -> str | int | AsOfTime | None:
    """What ``t VERSION AS OF 'v1'`` / ``VERSION AS OF 3`` names, or ``TIMESTAMP AS OF ..``
    (None: no such clause)."""
    v = table.args.get("version")
    if not isinstance(v, exp.Version) or v.args.get("kind") != "AS OF" \
            or v.expression is None:
        return None
    if v.text("this").upper() == "TIMESTAMP":
        return AsOfTime(v.expression.sql(dialect="spark"), v.expression)
    lit = v.expression
    if v.text("this").upper() != "VERSION" or not isinstance(lit, exp.Literal):
        return None
    return str(lit.this) if lit.is_string else int(lit.this)


def versioned_tables(sql: str) -> tuple[Versioned, ...]:
    """The ``VERSION AS OF`` and ``TIMESTAMP AS OF`` reads of query ``sql``, each once."""
    out: list[Versioned] = []
    for table in _table_references(read_query(sql).tree):
        version = _version_of(table)
        if version is not None and (table_name(table), version) not in out:
            out.append((table_name(table), version))
    return tuple(out)


def rewrite_tables(sql: str, mapping: Mapping[TableName | Versioned, str]) -> str:
    """``sql`` (a query) with each table reference in ``mapping`` replaced by the given name,
    e.g. a temp view over the table's evolved read. A reference matches a key exactly or by
    :meth:`TableName.qualified`; CTE names are never replaced. An unaliased reference keeps
    its old name as alias, so ``T.a`` still resolves. Everything else stays as written.
    """
    try:
        return rewrite_query(read_query(sql), mapping)
    except SqlError:
        raise
    except Exception as e:  # the same contract as parse_statement
        raise internal_error(f"Cannot rewrite query {snippet(sql)}", e) from e


def rewrite_query(parsed: Parsed, mapping: Mapping[TableName | Versioned, str]) -> str:
    """:func:`rewrite_tables` on a query already read. Names are replaced in place where
    the tree knows where they are, else the query is written out again from (a copy of)
    the tree."""
    tree = parsed.tree.copy()
    by_qualified = {key.qualified() if isinstance(key, TableName)
                    else (key[0].qualified(), key[1]): view for key, view in mapping.items()}
    edits: list[tuple[exp.Table, str]] = []
    versioned = False
    for table in _table_references(tree):
        ref = table_name(table)
        version = _version_of(table)
        if version is not None:  # a view of that version replaces the clause too
            view = mapping.get((ref, version), by_qualified.get((ref.qualified(), version)))
            if view is not None:
                table.set("version", None)
                edits.append((table, view))
                versioned = True
            continue
        view = mapping.get(ref, by_qualified.get(ref.qualified()))
        if view is not None:
            edits.append((table, view))
    if versioned:
        return _regenerate(tree, edits)
    start, end = tree.meta["span"]
    if _TABLE_QUERY.match(parsed.text[start:end]):  # TABLE t
        return f"SELECT * FROM {_replacement(*edits[0])}" if edits \
            else query_sql(parsed.tree, parsed.text)
    spliced = _splice(parsed.text, edits)
    if spliced is None:
        return _regenerate(tree, edits)
    return spliced[start:len(spliced) - (len(parsed.text) - end)]


def _table_references(tree: exp.Expr) -> Iterator[exp.Table]:
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        if table.find_ancestor(exp.Hint) is not None:
            continue
        if not table.args.get("db") and _names_a_cte(table):
            continue
        yield table


def _names_a_cte(table: exp.Table) -> bool:
    """Whether a CTE in scope has this name (Spark compares names case-insensitively). A CTE
    sees the ones before it, and itself only when RECURSIVE."""
    name = table.name.lower()
    child: exp.Expr = table
    node = table.parent
    while node is not None:
        visible: Sequence[exp.Expr] = ()
        if isinstance(node, exp.With):
            ctes = list(node.expressions)
            index = next((i for i, cte in enumerate(ctes) if cte is child), len(ctes))
            visible = ctes[:index + 1] if node.args.get("recursive") else ctes[:index]
        else:
            with_ = node.args.get("with_") or node.args.get("with")
            if isinstance(with_, exp.With) and with_ is not child:
                visible = with_.expressions
        if any(cte.alias_or_name.lower() == name for cte in visible):
            return True
        child, node = node, node.parent
    return False


def _text_position(table: exp.Table) -> int:
    starts = [p.meta["start"] for p in table.parts if "start" in p.meta]
    return min(starts, default=0)


# Spark wants an alias after these clauses (FROM t TABLESAMPLE (..) alias), not after the name.
_ALIAS_SAFE_TABLE_ARGS = frozenset({"this", "db", "catalog", "alias", "pivots"})


def _needs_alias(table: exp.Table) -> bool:
    if table.alias:
        return False
    return all(key in _ALIAS_SAFE_TABLE_ARGS for key, value in table.args.items() if value)


def _replacement(table: exp.Table, view: str) -> str:
    return _backtick(view) + (" AS " + _backtick(table.name) if _needs_alias(table) else "")


def _splice(sql: str, edits: list[tuple[exp.Table, str]]) -> str | None:
    """``sql`` with the edited table names replaced in place, or None when the tree does
    not say where a name is."""
    spans: list[tuple[int, int, str]] = []
    for table, view in edits:
        parts = table.parts
        if not parts or any("start" not in p.meta or "end" not in p.meta for p in parts):
            return None
        start = min(p.meta["start"] for p in parts)
        end = max(p.meta["end"] for p in parts) + 1
        spans.append((start, end, _replacement(table, view)))
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:], strict=False)):
        return None
    for start, end, replacement in reversed(spans):
        sql = sql[:start] + replacement + sql[end:]
    return sql


def _regenerate(tree: exp.Expr, edits: list[tuple[exp.Table, str]]) -> str:
    for table, view in edits:
        if _needs_alias(table):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
        table.set("this", exp.to_identifier(view, quoted=True))
        table.set("db", None)
        table.set("catalog", None)
    return tree.sql(dialect="spark")


def _backtick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def view_name(db: str, table: str) -> str:
    """A Spark temp view name for table ``db``.``table`` that no user name can collide
    with (a hash of both)."""
    digest = hashlib.sha1(f"{db}\x00{table}".encode()).hexdigest()[:12]
    return f"__sl_{digest}"
