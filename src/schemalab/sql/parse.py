"""Spark SQL text → statement values: each statement is read once into sqlglot's tree, and
its value is built from that tree.

    >>> parse_statement("INSERT INTO T VALUES ('a1', 'b1')").query
    "VALUES ('a1', 'b1')"
    >>> parse_statement("COMMENT ON COLUMN db.T.c IS 'the c'").changes
    (UpdateColumnComment(path=('c',), comment='the c'),)

The first words say what a statement is; statements schemalab does not run are refused
before they are read, with advice where there is some.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from schemalab.errors import SqlError
from schemalab.sql.ddl import (
    alter_table,
    call,
    comment_on,
    create_table,
    describe_table,
    drop_table,
    show_tables,
)
from schemalab.sql.dialect import QUERY_STARTS, Call
from schemalab.sql.iceberg_alter import parse_iceberg_alter
from schemalab.sql.iceberg_refs import parse_iceberg_refs
from schemalab.sql.paimon_tags import parse_paimon_tags
from schemalab.sql.queries import query_sql, read_query, referenced_tables, table_name
from schemalab.sql.reader import SUPPORTED, Parsed, internal_error, read, snippet, tokenize
from schemalab.sql.split import split_statements
from schemalab.sql.statements import DeleteFrom, Insert, Query, Statement
from schemalab.sql.syntax import describe, is_word
from schemalab.sql.update import parse_update

__all__ = ["parse_statement", "parse_statements"]

_ADVICE = {
    "MERGE": "To change rows, DELETE FROM them and INSERT the new values.",
    "TRUNCATE": "To remove all rows, write DELETE FROM t.",
    "REPLACE": "Write DROP TABLE t, then CREATE TABLE t.",
    "CREATE OR": "Write DROP TABLE t, then CREATE TABLE t.",
    "CREATE VIEW": "Views are not supported: run the SELECT itself.",
    "CREATE TEMPORARY": "Views are not supported: run the SELECT itself.",
    "EXPLAIN": "Run the query itself; table.explain_read() explains evolved reads.",
}
_CREATE_MODIFIERS = frozenset({"OR", "REPLACE", "TEMPORARY", "GLOBAL", "EXTERNAL",
                               "MATERIALIZED", "STREAMING"})
_NOT_DESCRIBED = frozenset({"DATABASE", "SCHEMA", "NAMESPACE", "FUNCTION", "PROCEDURE", "QUERY",
                            *QUERY_STARTS - {"TABLE"}})


def parse_statements(text: str) -> list[Statement]:
    """Every statement of a script (see :func:`split_statements`), in order. A failure names
    the statement's position in the script."""
    if not isinstance(text, str):
        raise SqlError(f"SQL text must be a string, not {type(text).__name__}",
                       rule="sql-syntax")
    pieces = split_statements(text)
    if not pieces:
        raise SqlError("No SQL statement to run: the text is empty or only comments",
                       rule="sql-syntax")
    statements: list[Statement] = []
    for number, piece in enumerate(pieces, start=1):
        try:
            statements.append(parse_statement(piece))
        except SqlError as e:
            if len(pieces) == 1:
                raise
            raise SqlError(f"Statement {number} of {len(pieces)}: {e.message}", table=e.table,
                           column=e.column, rule=e.rule) from e
    return statements


def parse_statement(text: str) -> Statement:
    """One statement (a trailing ``;`` is allowed) as a statement value.

    >>> parse_statement("ALTER TABLE T RENAME TO db.U").new_name
    TableName(database='db', table='U')
    """
    if not isinstance(text, str):
        raise SqlError(f"SQL text must be a string, not {type(text).__name__}",
                       rule="sql-syntax")
    try:
        return _statement(text)
    except SqlError:
        raise
    except Exception as e:
        # The contract is "a value or SqlError" for any text, so nothing may reach a notebook
        # as a crash.
        raise internal_error(f"Cannot parse statement {snippet(text)}", e) from e


def _statement(text: str) -> Statement:
    tokens = tokenize(text)
    if not tokens:
        raise SqlError("Empty statement: there is no SQL to run", rule="sql-syntax")
    if any(token.token_type is TokenType.SEMICOLON for token in tokens):
        raise SqlError(f"Expected one statement, found several in {snippet(text)}; use "
                       "parse_statements for a script", rule="sql-syntax")
    first = tokens[0]
    if first.token_type is TokenType.L_PAREN or is_word(first, *QUERY_STARTS):
        parsed = read_query(text, tokens=tokens)
        return Query(query_sql(parsed.tree, parsed.text), referenced_tables(parsed.tree),
                     parsed.statement_text)
    word = first.text.upper() if is_word(first) else ""
    iceberg = (parse_iceberg_alter(text) or parse_iceberg_refs(text)) if word == "ALTER" \
        else None
    if iceberg is not None:  # Iceberg's SQL extensions (partitions, identifier fields, refs)
        return iceberg
    tags = parse_paimon_tags(text) if word in ("ALTER", "SHOW") else None
    if tags is not None:  # Paimon's SQL extensions for tags (DELETE/RENAME TAG, SHOW TAGS)
        return tags
    builder, tree_type, what = _BUILDERS.get(word, (None, exp.Expr, ""))
    kind = _unsupported_kind(word, tokens)
    if builder is None or kind is not None:
        raise _unsupported_statement(kind or word or describe(first), text)
    parsed = read(text, what, tokens=tokens)
    if not isinstance(parsed.tree, tree_type):
        raise SqlError(f"Cannot parse {what}: {snippet(text)} is not a {what} statement",
                       rule="sql-syntax")
    return builder(parsed)


def _unsupported_kind(word: str, tokens: list[Token]) -> str | None:
    """The kind of statement (``CREATE VIEW``) when its first words are ones schemalab does
    not run, else None."""
    words = [token.text.upper() if is_word(token) else "" for token in tokens[:3]]
    second = words[1] if len(words) > 1 else ""
    if word == "CREATE" and second != "TABLE":
        kind = ["CREATE"]
        for token in tokens[1:]:
            if not is_word(token):
                break
            kind.append(token.text.upper())
            if kind[-1] not in _CREATE_MODIFIERS:
                break
        return " ".join(kind)
    if (word in ("ALTER", "DROP") and second != "TABLE") or (word == "SHOW"
                                                           and second != "TABLES"):
        return f"{word} {second}".strip()
    if word == "COMMENT" and second == "ON" and words[2:3] not in (["TABLE"], ["COLUMN"]):
        return " ".join(words).strip()
    if word in ("DESC", "DESCRIBE") and second in _NOT_DESCRIBED:
        return f"DESCRIBE {second}"
    if word == "INSERT" and second == "OVERWRITE" and words[2:3] in (["LOCAL"], ["DIRECTORY"]):
        return "INSERT OVERWRITE DIRECTORY"
    return None


def _unsupported_statement(kind: str, text: str) -> SqlError:
    words = kind.split()
    advice = _ADVICE.get(" ".join(words[:2]), _ADVICE.get(words[0] if words else "", ""))
    return SqlError(f"Unsupported statement: {kind} in {snippet(text)}. {SUPPORTED}. "
                    f"{advice}".rstrip(), rule="unsupported-statement")


# ---- INSERT, DELETE --------------------------------------------------------------------------


def _insert(parsed: Parsed) -> Insert:
    tree = parsed.tree
    assert isinstance(tree, exp.Insert)
    target = tree.this
    table = target.this if isinstance(target, exp.Schema) else target
    assert isinstance(table, exp.Table)
    name = table_name(table)
    for clause, present in (("PARTITION", table.args.get("partition")),
                            ("IF", tree.args.get("exists")), ("BY", tree.args.get("by_name")),
                            ("REPLACE", tree.args.get("where"))):
        if present:
            raise SqlError(f"Unsupported clause in INSERT: {_INSERT_CLAUSE_ADVICE[clause]}",
                           table=name.qualified(), rule="unsupported-sql")
    columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) \
        else None
    query = tree.expression
    return Insert(name, columns, query_sql(query, parsed.text), bool(tree.args.get("overwrite")),
                  parsed.statement_text, referenced_tables(query))


_INSERT_CLAUSE_ADVICE = {
    "PARTITION": "INSERT .. PARTITION (..) is not supported; give partition values as "
                 "ordinary columns: INSERT INTO t VALUES (..)",
    "IF": "INSERT .. IF NOT EXISTS is not supported",
    "BY": "INSERT .. BY NAME is not supported; list the columns: INSERT INTO t (a, b) ..",
    "REPLACE": "INSERT .. REPLACE WHERE is not supported; DELETE FROM t WHERE .., then INSERT",
}


def _delete(parsed: Parsed) -> DeleteFrom:
    tree = parsed.tree
    assert isinstance(tree, exp.Delete)
    table = tree.this
    assert isinstance(table, exp.Table)
    name = table_name(table)
    extra = [key for key, value in tree.args.items() if value and key not in ("this", "where")]
    if extra:
        raise SqlError(f"Unsupported {extra[0].upper()} in DELETE: write DELETE FROM t WHERE "
                       "<condition>", table=name.qualified(), rule="unsupported-sql")
    if table.alias:
        raise SqlError(f"Unsupported {table.alias!r} after DELETE FROM {name.sql()}: write "
                       "DELETE FROM t WHERE <condition>, without a table alias",
                       table=name.qualified(), rule="unsupported-sql")
    where = tree.args.get("where")
    if where is None:
        return DeleteFrom(name, None, parsed.statement_text)
    start, end = where.this.meta["span"]
    return DeleteFrom(name, parsed.text[start:end], parsed.statement_text,
                      referenced_tables(where.this))


# First word → how to build the value, the tree that must come out, what errors call it.
_BUILDERS: dict[str, tuple[Callable[[Parsed], Statement], type[exp.Expr], str]] = {
    "CREATE": (create_table, exp.Create, "CREATE TABLE"),
    "ALTER": (alter_table, exp.Alter, "ALTER TABLE"),
    "COMMENT": (comment_on, exp.Comment, "COMMENT ON"),
    "DROP": (drop_table, exp.Drop, "DROP TABLE"),
    "SHOW": (show_tables, exp.Show, "SHOW TABLES"),
    "DESC": (describe_table, exp.Describe, "DESCRIBE"),
    "DESCRIBE": (describe_table, exp.Describe, "DESCRIBE"),
    "INSERT": (_insert, exp.Insert, "INSERT"),
    "DELETE": (_delete, exp.Delete, "DELETE"),
    "UPDATE": (parse_update, exp.Update, "UPDATE"),
    "CALL": (call, Call, "CALL"),
}
