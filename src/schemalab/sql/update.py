"""``UPDATE t SET c = expr, .. [WHERE cond]`` read into an :class:`Update`: each assignment's
expression and the condition kept as written (Spark runs them), the tables their subqueries
read named. Top-level columns only; no alias, no FROM (Spark's UPDATE has neither).

    >>> from schemalab.sql import parse_statement
    >>> u = parse_statement("UPDATE db.t SET a = a + 1, b = concat(b, 'x,y') WHERE id = 2")
    >>> u.name, u.assignments, u.where
    (TableName(database='db', table='t'), (('a', 'a + 1'), ('b', "concat(b, 'x,y')")), 'id = 2')
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from schemalab.errors import SqlError
from schemalab.sql.queries import referenced_tables, table_name
from schemalab.sql.reader import Parsed
from schemalab.sql.statements import TableName, Update

_OPEN = (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE)
_CLOSE = (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE)


def _expression_texts(parsed: Parsed) -> list[str]:
    """The text right of each ``=`` of the SET list: split at top-level commas, up to a
    top-level WHERE."""
    tokens: list[Token] = parsed.tokens
    start = next(i for i, t in enumerate(tokens) if t.token_type is TokenType.SET) + 1
    pieces: list[list[Token]] = [[]]
    depth = 0
    for t in tokens[start:]:
        if depth == 0 and t.token_type is TokenType.WHERE:
            break
        depth += t.token_type in _OPEN
        depth -= t.token_type in _CLOSE
        if depth == 0 and t.token_type is TokenType.COMMA:
            pieces.append([])
        else:
            pieces[-1].append(t)
    out = []
    for piece in pieces:
        eq = next(i for i, t in enumerate(piece) if t.token_type is TokenType.EQ)
        out.append(parsed.text[piece[eq + 1].start:piece[-1].end + 1])
    return out


def parse_update(parsed: Parsed) -> Update:
    tree = parsed.tree
    assert isinstance(tree, exp.Update)
    table = tree.this
    if not isinstance(table, exp.Table):
        raise SqlError("UPDATE names one table: UPDATE t SET c = <value> WHERE <condition>",
                       rule="unsupported-sql")
    name = table_name(table)
    extra = [k for k, v in tree.args.items() if v and k not in ("this", "expressions", "where")]
    if extra or table.alias:
        what = repr(table.alias) if table.alias else extra[0].rstrip("_").upper()
        raise SqlError(f"Unsupported {what} in UPDATE {name.sql()}: write UPDATE t SET c = "
                       "<value> WHERE <condition>", table=name.qualified(),
                       rule="unsupported-sql")
    texts = _expression_texts(parsed)
    assignments = []
    for eq, text in zip(tree.expressions, texts, strict=True):
        column = eq.this
        if not isinstance(column, exp.Column) or column.table:
            raise SqlError(f"UPDATE {name.sql()}: SET {eq.this.sql(dialect='spark')} = ..: "
                           "schemalab sets top-level columns only (SET c = <value>)",
                           table=name.qualified(), rule="unsupported-sql")
        assignments.append((column.name, text))
    where = tree.args.get("where")
    cond = None
    if where is not None:
        start, end = where.this.meta["span"]
        cond = parsed.text[start:end]
    tables: list[TableName] = []
    for node in [*(eq.expression for eq in tree.expressions),
                 *([] if where is None else [where.this])]:
        tables += [n for n in referenced_tables(node) if n not in tables]
    return Update(name, tuple(assignments), cond, parsed.statement_text, tuple(tables))
