"""Spark SQL text → statement values that the executor runs.

One statement becomes one value: DDL becomes the change values of :mod:`schemalab.changes`,
and queries (a SELECT, the rows of an INSERT, the condition of a DELETE) stay the Spark SQL
text that was written, together with the tables they read::

    >>> stmt = parse_statement("ALTER TABLE T ADD COLUMN c STRING NOT NULL AFTER a")
    >>> stmt.name, [change.sql() for change in stmt.changes]
    (TableName(database=None, table='T'), ['ADD COLUMN c STRING NOT NULL AFTER a'])
    >>> parse_statement("INSERT INTO T VALUES ('a1', 'b1')").query
    "VALUES ('a1', 'b1')"
    >>> parse_statement("WITH s AS (SELECT * FROM db.S) SELECT * FROM s JOIN T").tables
    (TableName(database='db', table='S'), TableName(database=None, table='T'))

Every statement is read from sqlglot's Spark tokens, so quoting, escapes and comments follow
one set of rules. Queries are checked and analysed with sqlglot's Spark parser. DDL is read
by the small recursive-descent parser below instead, because sqlglot's DDL trees lose what a
schema needs: ``TIMESTAMP(3)`` and ``TIMESTAMP WITHOUT TIME ZONE`` both become TIMESTAMPTZ,
Paimon spellings (``ARRAY<INT NOT NULL>``, ``ROW<..>``, ``BYTES``, ``MULTISET<..>``) do not
parse at all, and ``ALTER COLUMN c FIRST``, ``ALTER COLUMN s.x TYPE ..`` and
``UNSET TBLPROPERTIES`` fall back to an opaque ``exp.Command``. Type text is handed to
:func:`schemalab.types.parse_type` after mapping Spark's own spellings (see
:func:`_render_type`).

Anything that cannot be parsed or is not supported raises :class:`SqlError`, never another
exception.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import TokenType

from schemalab.errors import SqlError, UnknownTypeError
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from schemalab.types.model import (
    ArrayType,
    DataType,
    MapType,
    MultisetType,
    RowType,
    quote_identifier,
)
from schemalab.types.parse import parse_type

__all__ = [
    "AlterTable",
    "CreateTable",
    "DeleteFrom",
    "DescribeTable",
    "DropTable",
    "Insert",
    "Query",
    "RenameTable",
    "ShowTables",
    "Statement",
    "TableName",
    "parse_statement",
    "parse_statements",
    "rewrite_tables",
    "split_statements",
]

# --------------------------------------------------------------------------------------------
# Statement values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableName:
    """A table as a statement names it: ``db.t``, or ``t`` with ``database`` None.

    >>> TableName(None, "T").qualified()
    'default.T'
    >>> TableName("my db", "T").sql()
    '`my db`.T'
    """

    database: str | None
    table: str

    def qualified(self, default_db: str = "default") -> str:
        """``database.table``, with ``default_db`` for an unqualified name."""
        return f"{default_db if self.database is None else self.database}.{self.table}"

    def sql(self) -> str:
        """The name as Spark SQL, backtick-quoted where needed."""
        parts = (self.table,) if self.database is None else (self.database, self.table)
        return ".".join(quote_identifier(part) for part in parts)


@dataclass(frozen=True)
class CreateTable:
    """``CREATE TABLE``. Typed ``PARTITIONED BY`` columns are appended to ``columns``.
    ``options`` are the TBLPROPERTIES as written (``'primary-key'``/``'partition'`` are
    left for the schema to fold in), except ``'comment'``, which is the table comment."""

    name: TableName
    columns: tuple[ColumnSpec, ...]
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: dict[str, str]
    comment: str | None
    if_not_exists: bool
    text: str


@dataclass(frozen=True)
class AlterTable:
    """``ALTER TABLE`` (and ``COMMENT ON``): the changes to apply, in order, as one commit."""

    name: TableName
    changes: tuple[SchemaChange, ...]
    text: str


@dataclass(frozen=True)
class RenameTable:
    """``ALTER TABLE .. RENAME TO``. A ``new_name`` without a database keeps the table's
    database, as Spark's session catalog does."""

    name: TableName
    new_name: TableName
    text: str


@dataclass(frozen=True)
class DropTable:
    name: TableName
    if_exists: bool
    text: str


@dataclass(frozen=True)
class ShowTables:
    database: str | None
    text: str


@dataclass(frozen=True)
class DescribeTable:
    name: TableName
    text: str


@dataclass(frozen=True)
class Insert:
    """``INSERT INTO|OVERWRITE``. ``query`` is Spark SQL that produces the rows on its own
    (``VALUES (..), (..)`` or a SELECT), matched to ``columns`` (all columns when None)
    by position."""

    name: TableName
    columns: tuple[str, ...] | None
    query: str
    overwrite: bool
    text: str

    @cached_property
    def query_tables(self) -> tuple[TableName, ...]:
        """The tables ``query`` reads (CTE names excluded), to map with :func:`rewrite_tables`."""
        return _referenced_tables(_query_expression(self.query, "the INSERT query"))


@dataclass(frozen=True)
class DeleteFrom:
    """``DELETE FROM``. ``where`` is the Spark SQL condition as written; None deletes all."""

    name: TableName
    where: str | None
    text: str

    @cached_property
    def where_tables(self) -> tuple[TableName, ...]:
        """The tables that subqueries in ``where`` read."""
        if self.where is None:
            return ()
        return _referenced_tables(_condition_expression(self.where))


@dataclass(frozen=True)
class Query:
    """A query Spark can run (SELECT, WITH, VALUES, set operations). ``tables`` are the real
    tables it reads, in order of appearance, without CTE names."""

    sql: str
    tables: tuple[TableName, ...]
    text: str


Statement = (CreateTable | AlterTable | RenameTable | DropTable | ShowTables | DescribeTable
             | Insert | DeleteFrom | Query)


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def split_statements(text: str) -> list[str]:
    """The statements of a script: split on ``;`` outside quotes and comments, stripped,
    without the pieces that hold nothing but whitespace and comments.

    Quotes and comments follow Spark's lexer: backslash escapes in ``'..'`` and ``".."``
    (not in raw ``r'..'``), doubled backticks in ```..```, ``--`` to the end of the line and
    nested ``/* .. */``. An unterminated quote or comment runs to the end of the text, so
    its statement fails to parse rather than being cut in two.

    >>> split_statements("SELECT ';' AS a; -- done; really\\nSELECT 2;;")
    ["SELECT ';' AS a", '-- done; really\\nSELECT 2']
    """
    pieces: list[str] = []
    start = 0
    has_code = False
    for kind, begin, end in _lex_regions(text):
        if kind == "code":
            for offset, char in enumerate(text[begin:end]):
                if char == ";":
                    if has_code:
                        pieces.append(text[start:begin + offset].strip())
                    start, has_code = begin + offset + 1, False
                elif not char.isspace():
                    has_code = True
        elif kind in ("quoted", "open-quoted"):
            has_code = True
    if has_code:
        pieces.append(text[start:].strip())
    return pieces


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

    >>> parse_statement("COMMENT ON COLUMN db.T.c IS 'the c'").changes
    (UpdateColumnComment(path=('c',), comment='the c'),)
    """
    if not isinstance(text, str):
        raise SqlError(f"SQL text must be a string, not {type(text).__name__}",
                       rule="sql-syntax")
    try:
        return _parse(text)
    except SqlError:
        raise
    except Exception as e:
        # The contract is "a value or SqlError" for any text, so nothing may reach a notebook
        # as a crash: deeply nested input exhausts recursion in sqlglot or parse_type, and
        # anything else is a bug, reported as one.
        raise _unexpected(f"Cannot parse statement {_snippet(text)}", e) from e


def rewrite_tables(sql: str, mapping: Mapping[TableName, str]) -> str:
    """``sql`` (a query) with each table reference in ``mapping`` replaced by the given name,
    e.g. a temp view over the table's evolved read. A reference matches a key exactly or by
    :meth:`TableName.qualified`; CTE names are never replaced. An unaliased reference keeps
    its old name as alias, so ``T.a`` still resolves. Everything else stays as written.

    >>> rewrite_tables("SELECT T.a FROM T JOIN db.U u ON T.a = u.a",
    ...                {TableName(None, "T"): "v1", TableName("db", "U"): "v2"})
    'SELECT T.a FROM `v1` AS `T` JOIN `v2` u ON T.a = u.a'
    """
    try:
        sql, expression = _normalized_query(sql, "query")
        by_qualified = {key.qualified(): view for key, view in mapping.items()}
        edits: list[tuple[exp.Table, str]] = []
        for table in _table_references(expression):
            ref = _table_name(table)
            view = mapping.get(ref, by_qualified.get(ref.qualified()))
            if view is not None:
                edits.append((table, view))
        spliced = _splice_tables(sql, edits)
        return spliced if spliced is not None else _regenerate_tables(expression, edits)
    except SqlError:
        raise
    except Exception as e:  # the same contract as parse_statement
        raise _unexpected(f"Cannot rewrite query {_snippet(sql)}", e) from e


# --------------------------------------------------------------------------------------------
# Splitting: Spark's quotes and comments, without a full tokenizer (which would fail on an
# unterminated quote before the other statements could be reported)
# --------------------------------------------------------------------------------------------


def _lex_regions(text: str) -> Iterator[tuple[str, int, int]]:
    """``(kind, start, end)`` regions that cover ``text``; kind is ``code``, ``quoted``,
    ``comment``, or ``open-quoted``/``open-comment`` for one that runs off the end."""
    i, n, code_start = 0, len(text), 0
    while i < n:
        char = text[i]
        if char in "'\"`" or text.startswith(("--", "/*"), i):
            if code_start < i:
                yield "code", code_start, i
            if char == "`":
                end, kind = _end_of_backticks(text, i), "quoted"
            elif char in "'\"":
                raw = i > 0 and text[i - 1] in "rR" and (i < 2 or not _is_word_char(text[i - 2]))
                end, kind = _end_of_string(text, i, raw), "quoted"
            elif char == "-":
                newline = text.find("\n", i)
                end, kind = (n if newline < 0 else newline + 1), "comment"
            else:
                end, kind = _end_of_block_comment(text, i), "comment"
            if end < 0:
                yield f"open-{kind}", i, n
                return
            yield kind, i, end
            i = code_start = end
        else:
            i += 1
    if code_start < n:
        yield "code", code_start, n


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# Each _end_of_* returns the index after the closing delimiter, or -1 when it never closes.


def _end_of_string(text: str, start: int, raw: bool) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and not raw:
            i += 2
        elif text[i] == quote:
            return i + 1
        else:
            i += 1
    return -1


def _end_of_backticks(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "`":
            if text.startswith("``", i):
                i += 2
                continue
            return i + 1
        i += 1
    return -1


def _end_of_block_comment(text: str, start: int) -> int:
    depth, i = 0, start
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


# --------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------

class _SparkWordTokenizer(Spark.Tokenizer):
    """Spark's tokenizer with one token per word: by default it merges ``PRIMARY KEY`` or
    ``PARTITIONED BY`` into one token and swallows the rest of a ``SHOW``/``RENAME``
    statement as a single string."""

    COMMANDS: ClassVar[set[TokenType]] = set()
    KEYWORDS = {k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if " " not in k}


_WORD = re.compile(r"\w+")
# By name: the set of TokenType members differs between the sqlglot versions we allow.
_STRING_TOKENS = frozenset({"STRING", "RAW_STRING"})
# Literals that are neither strings nor names for DDL purposes (x'0A', N'..', ...).
_OTHER_LITERAL_TOKENS = frozenset({"BIT_STRING", "HEX_STRING", "BYTE_STRING", "NATIONAL_STRING",
                                   "NATIONAL_RAW_STRING", "HEREDOC_STRING", "UNICODE_STRING"})


@dataclass(frozen=True)
class _Token:
    """A token of the statement. ``kind``: ``word`` (unquoted name or keyword, as written),
    ``ident`` (backtick-quoted, unescaped), ``string`` (unescaped; adjacent literals are
    coalesced as Spark does, ``parts`` keeps them), ``number``, ``sym`` or ``other``."""

    kind: str
    value: str
    start: int
    end: int  # exclusive
    parts: tuple[str, ...] = ()

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.value.upper() in words

    def is_sym(self, *symbols: str) -> bool:
        return self.kind == "sym" and self.value in symbols

    def describe(self) -> str:
        if self.kind == "string":
            return "a string"
        if self.kind == "ident":
            return f"`{self.value}`"
        return repr(self.value)


def _tokenize(text: str) -> list[_Token]:
    try:
        raw = _SparkWordTokenizer(dialect="spark").tokenize(text)
    except SqlglotError as e:
        raise SqlError(f"Cannot read statement {_snippet(text)}: {_why_unreadable(text, e)}",
                       rule="sql-syntax") from e
    tokens: list[_Token] = []
    for token in raw:
        start, end = token.start, token.end + 1
        if tokens and start < tokens[-1].end:
            continue  # sqlglot splits a suffixed literal such as 10L into tokens on one span
        kind, value = _token_kind(token.token_type, token.text)
        if kind == "number":
            value = text[start:end]
        if kind == "string" and tokens and tokens[-1].kind == "string":
            last = tokens.pop()
            tokens.append(_Token("string", last.value + value, last.start, end,
                                 (*last.parts, value)))
            continue
        tokens.append(_Token(kind, value, start, end, (value,) if kind == "string" else ()))
    return tokens


def _why_unreadable(text: str, error: SqlglotError) -> str:
    for kind, start, _ in _lex_regions(text):
        if kind.startswith("open-"):
            line = text.count("\n", 0, start) + 1
            column = start - (text.rfind("\n", 0, start) + 1) + 1
            what = {"'": "string", '"': "string", "`": "quoted name"}.get(text[start], "comment")
            return (f"the {what} that starts at line {line}, column {column} is never closed "
                    f"({text[start:start + 20]!r}...)")
    return _clean_sqlglot(str(error))


def _token_kind(token_type: TokenType, text: str) -> tuple[str, str]:
    if token_type is TokenType.IDENTIFIER:
        return "ident", text
    if token_type.name in _STRING_TOKENS:
        return "string", text
    if token_type is TokenType.NUMBER:
        return "number", text
    if token_type.name in _OTHER_LITERAL_TOKENS:
        return "other", text
    if _WORD.fullmatch(text):
        return "word", text
    return "sym", text


# --------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------

_SUPPORTED = ("schemalab runs CREATE TABLE, ALTER TABLE, COMMENT ON, DROP TABLE, SHOW TABLES, "
              "DESCRIBE, INSERT, DELETE FROM and queries (SELECT, WITH, VALUES)")
_ADVICE = {
    "UPDATE": "To change rows, DELETE FROM them and INSERT the new values.",
    "MERGE": "To change rows, DELETE FROM them and INSERT the new values.",
    "TRUNCATE": "To remove all rows, write DELETE FROM t.",
    "REPLACE": "Write DROP TABLE t, then CREATE TABLE t.",
    "CREATE OR": "Write DROP TABLE t, then CREATE TABLE t.",
    "CREATE VIEW": "Views are not supported: run the SELECT itself.",
    "CREATE TEMPORARY": "Views are not supported: run the SELECT itself.",
    "EXPLAIN": "Run the query itself; table.explain_read() explains evolved reads.",
}
_QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "FROM"})


def _parse(text: str) -> Statement:
    tokens = _tokenize(text)
    while tokens and tokens[-1].is_sym(";"):
        tokens.pop()
    statement_text = text.strip()
    while statement_text.endswith(";"):
        statement_text = statement_text[:-1].rstrip()
    if not tokens:
        raise SqlError("Empty statement: there is no SQL to run", rule="sql-syntax")
    for token in tokens:
        if token.is_sym(";"):
            raise SqlError(f"Expected one statement, found several in {_snippet(text)}; "
                           "use parse_statements for a script", rule="sql-syntax")
    first = tokens[0]
    if first.is_sym("(") or first.is_word(*_QUERY_STARTS, "TABLE"):
        sql, expression = _normalized_query(text, "query")
        return Query(sql, _referenced_tables(expression), statement_text)
    parser = _Parser(text, tokens, statement_text)
    handlers = {
        "CREATE": parser.create, "ALTER": parser.alter, "COMMENT": parser.comment_on,
        "DROP": parser.drop, "SHOW": parser.show, "DESC": parser.describe,
        "DESCRIBE": parser.describe, "INSERT": parser.insert, "DELETE": parser.delete,
    }
    handler = handlers.get(first.value.upper()) if first.kind == "word" else None
    if handler is None:
        kind = first.value.upper() if first.kind == "word" else first.describe()
        raise parser.unsupported_statement(kind)
    return handler()


def _normalized_query(sql: str, what: str) -> tuple[str, exp.Expr]:
    """The query as it will run (outer comments and ``;`` trimmed, so it can be wrapped in
    other SQL) and its sqlglot tree. Spark's ``TABLE t`` becomes ``SELECT * FROM t``:
    sqlglot reads it as an alias."""
    tokens = _tokenize(sql)
    while tokens and tokens[-1].is_sym(";"):
        tokens.pop()
    if not tokens:
        raise SqlError(f"Empty {what}", rule="sql-syntax")
    # Checked on tokens, so the message can say what was expected.
    if not (tokens[0].is_sym("(") or tokens[0].is_word(*_QUERY_STARTS, "TABLE")):
        raise SqlError(f"Expected a query (SELECT, WITH, VALUES) as {what}, found "
                       f"{_snippet(sql)}", rule="sql-syntax")
    if any(token.is_sym(";") for token in tokens):
        raise SqlError(f"Expected one query as {what}, found several statements in "
                       f"{_snippet(sql)}", rule="sql-syntax")
    if tokens[0].is_word("TABLE"):
        parser = _Parser(sql, tokens, sql)
        parser.next()
        name = parser.table_name()
        parser.expect_end()
        sql = f"SELECT * FROM {name.sql()}"
    else:
        sql = sql[tokens[0].start:tokens[-1].end]
    return sql, _query_expression(sql, what)


_CREATE_MODIFIERS = frozenset({"OR", "REPLACE", "TEMPORARY", "GLOBAL", "EXTERNAL",
                               "MATERIALIZED", "STREAMING"})
# Words that continue a type after its name, outside brackets: TIMESTAMP(3) WITH LOCAL TIME
# ZONE, DOUBLE PRECISION, CHARACTER VARYING(3), Flink's INT ARRAY.
_TYPE_CONTINUATION_WORDS = frozenset({"WITH", "WITHOUT", "LOCAL", "TIME", "ZONE", "PRECISION",
                                      "VARYING", "ARRAY", "MULTISET"})
_ALTER_COLUMN_ACTIONS = ("TYPE <type>, COMMENT '<text>', FIRST, AFTER <column>, SET NOT NULL "
                         "or DROP NOT NULL")


class _Parser:
    """Recursive descent over one statement's tokens. Methods named after a statement parse
    it from its first keyword on; the others are its pieces."""

    def __init__(self, source: str, tokens: list[_Token], statement_text: str) -> None:
        self.source = source
        self.tokens = tokens
        self.text = statement_text
        self.pos = 0
        self.what = "statement"
        self.table: str | None = None

    # ---- cursor ----------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> _Token | None:
        at = self.pos + offset
        return self.tokens[at] if at < len(self.tokens) else None

    def next(self) -> _Token:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end of the statement")
        self.pos += 1
        return token

    def at_word(self, *words: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.is_word(*words)

    def accept_word(self, *words: str) -> bool:
        if self.at_word(*words):
            self.pos += 1
            return True
        return False

    def accept_phrase(self, *words: str) -> bool:
        """Consume ``words`` only if all of them come next: a column may be called ``if``."""
        if all(self.at_word(word, offset=i) for i, word in enumerate(words)):
            self.pos += len(words)
            return True
        return False

    def expect_word(self, *words: str) -> str:
        token = self.peek()
        if token is None or not token.is_word(*words):
            raise self.error(f"expected {' or '.join(words)}, found {_found(token)}", token)
        self.pos += 1
        return token.value.upper()

    def at_sym(self, *symbols: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.is_sym(*symbols)

    def accept_sym(self, symbol: str) -> bool:
        if self.at_sym(symbol):
            self.pos += 1
            return True
        return False

    def expect_sym(self, symbol: str) -> None:
        token = self.peek()
        if token is None or not token.is_sym(symbol):
            raise self.error(f"expected {symbol!r}, found {_found(token)}", token)
        self.pos += 1

    def at_end(self) -> bool:
        return self.pos >= len(self.tokens)

    def expect_end(self) -> None:
        token = self.peek()
        if token is not None:
            raise self.error(f"unexpected {token.describe()}", token)

    def rest_text(self) -> str:
        """The source from the current token to the last one."""
        return self.source[self.tokens[self.pos].start:self.tokens[-1].end]

    # ---- errors ----------------------------------------------------------------------------

    def error(self, message: str, token: _Token | None = None, *,
              column: str | None = None) -> SqlError:
        return SqlError(f"Cannot parse {self.what}: {message}{self.where(token)}",
                        table=self.table, column=column, rule="sql-syntax")

    def where(self, token: _Token | None) -> str:
        """`` (line L, column C)`` of ``token`` for messages, or nothing at the end."""
        if token is None:
            return ""
        line = self.source.count("\n", 0, token.start) + 1
        column = token.start - (self.source.rfind("\n", 0, token.start) + 1) + 1
        return f" (line {line}, column {column})"

    def unsupported(self, message: str, *, column: str | None = None) -> SqlError:
        return SqlError(message, table=self.table, column=column, rule="unsupported-sql")

    def unsupported_statement(self, kind: str) -> SqlError:
        words = kind.split()
        advice = _ADVICE.get(" ".join(words[:2]), _ADVICE.get(words[0] if words else "", ""))
        return SqlError(f"Unsupported statement: {kind} in {_snippet(self.text)}. "
                        f"{_SUPPORTED}. {advice}".rstrip(), table=self.table,
                        rule="unsupported-statement")

    def second_word(self) -> str:
        token = self.peek()
        return token.value.upper() if token is not None and token.kind == "word" else ""

    # ---- names, literals, properties -------------------------------------------------------

    def name(self, what: str) -> str:
        token = self.peek()
        if token is None or token.kind not in ("word", "ident"):
            raise self.error(f"expected {what}, found {_found(token)}", token)
        if token.value == "":
            raise self.error(f"expected {what}, found an empty name ``", token)
        self.pos += 1
        return token.value

    def path(self, what: str) -> tuple[str, ...]:
        parts = [self.name(what)]
        while self.accept_sym("."):
            parts.append(self.name(what))
        return tuple(parts)

    def table_name(self) -> TableName:
        parts = self.path("a table name")
        if len(parts) > 2:
            raise self.unsupported(
                f"Unsupported table name {'.'.join(parts)} in {self.what}: name a table as "
                "table or database.table (catalogs are not supported)")
        name = TableName(None, parts[0]) if len(parts) == 1 else TableName(parts[0], parts[1])
        if self.table is None:  # errors name the statement's (first) table
            self.table = name.qualified()
        return name

    def string(self, what: str) -> str:
        token = self.peek()
        if token is None or token.kind != "string":
            raise self.error(f"expected {what} as a quoted string, found {_found(token)}", token)
        self.pos += 1
        return token.value

    def comment_or_null(self) -> str | None:
        """``'text'`` or ``NULL`` (which removes a comment)."""
        if self.accept_word("NULL"):
            return None
        return self.string("a comment")

    def properties(self, *, values: bool) -> dict[str, str | None]:
        """Spark's propertyList: ``('k' = 'v', k.x = 1, 'k2' 'v2')``; keys are strings or
        dotted names, values strings, numbers or booleans. ``values`` says whether each key
        must have one (SET) or must not (UNSET)."""
        self.expect_sym("(")
        result: dict[str, str | None] = {}
        while True:
            key_token = self.peek()
            value: str | None
            if key_token is not None and key_token.kind == "string":
                self.pos += 1
                if self.accept_sym("="):
                    key, value = key_token.value, self.property_value(key_token.value)
                else:
                    # Without '=', the first literal is the key and the rest its value.
                    key = key_token.parts[0]
                    value = "".join(key_token.parts[1:]) if len(key_token.parts) > 1 else None
                    if value is None and not self.at_sym(",", ")"):
                        value = self.property_value(key)
            else:
                key = ".".join(self.path("a property key"))
                has_value = self.accept_sym("=") or not self.at_sym(",", ")")
                value = self.property_value(key) if has_value else None
            if key in result:
                raise self.error(f"property {key!r} is given twice", key_token)
            if values and value is None:
                raise self.error(f"property {key!r} needs a value: {key!r} = 'value'", key_token)
            if not values and value is not None:
                raise self.error(f"UNSET TBLPROPERTIES takes keys only, found a value for "
                                 f"{key!r}: write ({key!r})", key_token)
            result[key] = value
            if not self.accept_sym(","):
                break
        self.expect_sym(")")
        return result

    def property_value(self, key: str) -> str:
        token = self.peek()
        if token is not None and token.kind in ("string", "number"):
            self.pos += 1
            return token.value
        if token is not None and token.is_word("TRUE", "FALSE"):
            self.pos += 1
            return token.value.lower()
        raise self.error(f"expected a value for property {key!r} (a quoted string, a number, "
                         f"TRUE or FALSE), found {_found(token)}", token)

    # ---- types -----------------------------------------------------------------------------

    def data_type(self, what: str) -> DataType:
        """The type that starts here: its name, then brackets and whatever they hold, and
        the words that continue a type. What follows (NOT NULL, COMMENT, ...) is the
        caller's."""
        first, depth = self.pos, 0
        while (token := self.peek()) is not None:
            if depth == 0 and self.pos > first and not (
                    token.is_sym("(", "<", "<>") or token.is_word(*_TYPE_CONTINUATION_WORDS)):
                break
            if token.kind == "sym":
                depth += sum(token.value.count(c) for c in "<(")
                depth = max(0, depth - sum(token.value.count(c) for c in ">)"))
            self.pos += 1
        tokens = self.tokens[first:self.pos]
        if not tokens or tokens[0].kind != "word":
            raise self.error(f"expected a data type {what}, found {_found(self.peek())}",
                             self.peek())
        written = self.source[tokens[0].start:tokens[-1].end]
        rendered = _render_type(tokens)
        try:
            data_type = parse_type(rendered)
        except UnknownTypeError as e:
            reason = e.message.removeprefix(f"Unknown type {rendered!r}: ")
            raise SqlError(f"Unknown data type {written!r} {what} in {self.what}: {reason}"
                           f"{self.where(tokens[0])}", table=self.table,
                           rule="unknown-type") from e
        return _with_spark_map_keys(data_type)

    # ---- CREATE ----------------------------------------------------------------------------

    def create(self) -> Statement:
        self.next()
        if not self.accept_word("TABLE"):
            raise self.unsupported_statement(self.create_kind())
        self.what = "CREATE TABLE"
        if_not_exists = self.accept_phrase("IF", "NOT", "EXISTS")
        name = self.table_name()
        if self.at_word("LIKE"):
            raise self.unsupported("Unsupported CREATE TABLE .. LIKE: write the columns out: "
                                   "CREATE TABLE t (a INT, ...)")
        columns: list[ColumnSpec] = []
        primary_keys: tuple[str, ...] | None = None
        if self.at_sym("("):
            columns, primary_keys = self.table_elements()
        if self.accept_word("USING"):
            provider = ".".join(self.path("a table provider"))
            if provider.lower() != "paimon":
                raise self.unsupported(
                    f"Unsupported USING {provider} in CREATE TABLE: schemalab tables are "
                    "Paimon tables; write USING paimon or leave USING out")
        partition_keys: tuple[str, ...] = ()
        comment: str | None = None
        options: dict[str, str] = {}
        seen: set[str] = set()
        while not self.at_end():
            token = self.next()
            clause = token.value.upper() if token.kind == "word" else ""
            if clause in ("PARTITIONED", "COMMENT", "TBLPROPERTIES"):
                if clause in seen:  # Spark refuses duplicate clauses too
                    raise self.error(f"{clause} is given twice", token)
                seen.add(clause)
            if clause == "PARTITIONED":
                self.expect_word("BY")
                partition_keys = self.partition_fields(columns)
            elif clause == "COMMENT":
                comment = self.string("the table comment")
            elif clause == "TBLPROPERTIES":
                options = {k: v for k, v in self.properties(values=True).items() if v is not None}
            elif clause in ("OPTIONS", "LOCATION", "CLUSTERED", "CLUSTER", "SKEWED", "ROW",
                            "STORED", "DEFAULT", "AS", "USING"):
                raise self.unsupported(_create_clause_advice(clause))
            elif clause in _QUERY_STARTS:
                raise self.unsupported(_create_clause_advice("AS"))
            else:
                raise self.error(f"unexpected {token.describe()}", token)
        if "comment" in options:
            if comment is not None:
                raise self.error("the table comment is given twice: as COMMENT and as "
                                 "TBLPROPERTIES ('comment' = ...)")
            comment = options.pop("comment")
        if not columns:
            raise self.error("a table needs columns: CREATE TABLE t (a INT, b STRING)")
        return CreateTable(name, tuple(columns), partition_keys, primary_keys or (), options,
                           comment, if_not_exists, self.text)

    def create_kind(self) -> str:
        """``CREATE OR REPLACE TEMPORARY VIEW`` and the like, for the error message."""
        words = ["CREATE"]
        for token in self.tokens[1:]:
            if token.kind != "word":
                break
            words.append(token.value.upper())
            if words[-1] not in _CREATE_MODIFIERS:
                break
        return " ".join(words)

    def table_elements(self) -> tuple[list[ColumnSpec], tuple[str, ...] | None]:
        """``(col TYPE .., PRIMARY KEY (..))``: the columns and the primary key, if given."""
        self.expect_sym("(")
        columns: list[ColumnSpec] = []
        primary_keys: tuple[str, ...] | None = None
        while True:
            if self.at_table_constraint():
                keys = self.table_constraint()
                if primary_keys is not None:
                    raise self.error("PRIMARY KEY is given twice")
                primary_keys = keys
            else:
                column, is_key = self.column_definition()
                columns.append(column)
                if is_key:
                    if primary_keys is not None:
                        raise self.error("PRIMARY KEY is given twice")
                    primary_keys = (column.name,)
            if not self.accept_sym(","):
                break
        self.expect_sym(")")
        return columns, primary_keys

    def at_table_constraint(self) -> bool:
        # A column may be called `primary` or `constraint`: look at what follows.
        if self.at_word("CONSTRAINT"):
            return self.at_word("PRIMARY", "UNIQUE", "CHECK", "FOREIGN", offset=2)
        if self.at_word("PRIMARY", "FOREIGN"):
            return self.at_word("KEY", offset=1)
        return self.at_word("UNIQUE", "CHECK") and self.at_sym("(", offset=1)

    def table_constraint(self) -> tuple[str, ...]:
        if self.accept_word("CONSTRAINT"):
            self.name("a constraint name")
        token = self.peek()
        if not self.accept_word("PRIMARY"):
            raise self.unsupported(f"Unsupported constraint {_found(token)} in {self.what}: "
                                   "only PRIMARY KEY (..) is supported")
        self.expect_word("KEY")
        self.expect_sym("(")
        keys = [self.name("a primary key column")]
        while self.accept_sym(","):
            keys.append(self.name("a primary key column"))
        self.expect_sym(")")
        self.constraint_characteristics()
        return tuple(keys)

    def constraint_characteristics(self) -> None:
        # Paimon never enforces keys on write; NOT ENFORCED (Flink's spelling) and Spark's
        # RELY/NORELY change nothing here.
        while True:
            if not (self.accept_phrase("NOT", "ENFORCED")
                    or self.accept_word("ENFORCED", "RELY", "NORELY")):
                return

    def column_definition(self) -> tuple[ColumnSpec, bool]:
        """``name TYPE [NOT NULL] [COMMENT '..'] [PRIMARY KEY]``, options in any order."""
        name = self.name("a column name")
        data_type = self.data_type(f"for column {name}")
        comment: str | None = None
        not_null = is_key = False
        while True:
            token = self.peek()
            if self.accept_word("NOT"):
                self.expect_word("NULL")
                not_null = True
            elif self.accept_word("COMMENT"):
                if comment is not None:
                    raise self.error(f"column {name} has two comments", token)
                comment = self.string("a column comment")
            elif self.at_word("PRIMARY") or (self.at_word("CONSTRAINT")
                                             and self.at_word("PRIMARY", offset=2)):
                if self.accept_word("CONSTRAINT"):
                    self.name("a constraint name")
                self.expect_word("PRIMARY")
                self.expect_word("KEY")
                self.constraint_characteristics()
                is_key = True
            elif token is not None and token.is_word("DEFAULT", "GENERATED", "COLLATE",
                                                     "CONSTRAINT", "UNIQUE", "CHECK",
                                                     "REFERENCES"):
                raise self.unsupported(_column_option_advice(token.value.upper(), name),
                                       column=name)
            else:
                break
        if not_null:
            data_type = data_type.with_nullable(False)
        return ColumnSpec(name, data_type, comment), is_key

    def partition_fields(self, columns: list[ColumnSpec]) -> tuple[str, ...]:
        """``PARTITIONED BY (a, b)`` naming columns, or ``(x INT, ..)`` defining new ones,
        which are appended to ``columns``; Spark does not mix the two forms."""
        self.expect_sym("(")
        names: list[str] = []
        typed: list[bool] = []
        while True:
            token = self.peek()
            name = self.name("a partition column")
            if self.at_sym("(", "."):
                raise self.unsupported(
                    f"Unsupported partition transform {name}(..) in PARTITIONED BY: partition "
                    "by plain top-level columns, e.g. PARTITIONED BY (dt)", column=name)
            if self.at_sym(",", ")"):
                typed.append(False)
                if name not in {c.name for c in columns}:
                    raise SqlError(
                        f"Partition column {name} is not a column of table {self.table}: "
                        f"the columns are {[c.name for c in columns]}. Name a column, or give "
                        f"a type to add one: PARTITIONED BY ({name} STRING)",
                        table=self.table, column=name, rule="partition-keys-must-be-columns")
            else:
                typed.append(True)
                column = self.partition_column(name)
                if name in {c.name for c in columns}:
                    raise self.error(f"partition column {name} is already a column; "
                                     f"write PARTITIONED BY ({name}) without a type", token)
                columns.append(column)
            if name in names:
                raise self.error(f"partition column {name} is given twice", token)
            names.append(name)
            if not self.accept_sym(","):
                break
        self.expect_sym(")")
        if len(set(typed)) > 1:
            raise self.error("PARTITIONED BY cannot mix column names and new typed columns")
        return tuple(names)

    def partition_column(self, name: str) -> ColumnSpec:
        # Spark's colType: name TYPE [NOT NULL] [COMMENT '..'], no constraints.
        data_type = self.data_type(f"for partition column {name}")
        if self.accept_word("NOT"):
            self.expect_word("NULL")
            data_type = data_type.with_nullable(False)
        comment = self.string("a column comment") if self.accept_word("COMMENT") else None
        return ColumnSpec(name, data_type, comment)

    # ---- ALTER -----------------------------------------------------------------------------

    def alter(self) -> Statement:
        self.next()
        if not self.accept_word("TABLE"):
            raise self.unsupported_statement(f"ALTER {self.second_word()}".strip())
        self.what = "ALTER TABLE"
        name = self.table_name()
        token = self.peek()
        action = self.next().value.upper() if token is not None and token.kind == "word" else ""
        statement: Statement
        if action == "RENAME" and self.accept_word("TO"):
            statement = RenameTable(name, self.table_name(), self.text)
        else:
            changes = self.alter_table_action(action, token)
            statement = AlterTable(name, tuple(changes), self.text)
        self.expect_end()
        return statement

    def alter_table_action(self, action: str, token: _Token | None) -> list[SchemaChange]:
        column_words = ("COLUMN", "COLUMNS")
        if action == "ADD" and self.at_word(*column_words):
            return self.add_columns()
        if action == "DROP" and self.at_word(*column_words):
            return self.drop_columns()
        if action == "RENAME" and self.accept_word("COLUMN"):
            return [self.rename_column()]
        if action == "SET" and self.accept_word("TBLPROPERTIES"):
            return [_set_property(k, v or "") for k, v in self.properties(values=True).items()]
        if action == "UNSET" and self.accept_word("TBLPROPERTIES"):
            self.accept_phrase("IF", "EXISTS")
            return [UpdateComment(None) if key == "comment" else RemoveOption(key)
                    for key in self.properties(values=False)]
        if action in ("ALTER", "CHANGE"):
            return self.alter_columns(action)
        if action == "REPLACE":
            raise self.unsupported("Unsupported ALTER TABLE .. REPLACE COLUMNS: it would drop "
                                   "and re-add every column; write ADD COLUMN, DROP COLUMN and "
                                   "ALTER COLUMN statements instead")
        if not action:
            raise self.error(f"expected an action such as ADD COLUMN, found {_found(token)}",
                             token)
        kind = f"ALTER TABLE .. {action} {self.second_word()}".rstrip()
        raise self.unsupported(
            f"Unsupported {kind}: ALTER TABLE supports ADD COLUMN(S), DROP COLUMN(S), RENAME "
            "COLUMN, ALTER/CHANGE COLUMN, SET/UNSET TBLPROPERTIES and RENAME TO")

    def add_columns(self) -> list[SchemaChange]:
        self.next()
        parenthesized = self.accept_sym("(")
        changes: list[SchemaChange] = [self.add_column()]
        while self.accept_sym(","):
            changes.append(self.add_column())
        if parenthesized:
            self.expect_sym(")")
        return changes

    def add_column(self) -> AddColumn:
        """``path TYPE`` then NOT NULL, COMMENT '..', FIRST or AFTER x in any order. NOT NULL
        is kept in the type: refusing it is the schema rules' job, with Paimon's message."""
        path = self.path("a column name")
        column = ".".join(path)
        data_type = self.data_type(f"for column {column}")
        comment: str | None = None
        move: Move | None = None
        while True:
            token = self.peek()
            if self.accept_word("NOT"):
                self.expect_word("NULL")
                data_type = data_type.with_nullable(False)
            elif self.accept_word("COMMENT"):
                if comment is not None:
                    raise self.error(f"column {column} has two comments", token)
                comment = self.string("a column comment")
            elif self.at_word("FIRST", "AFTER"):
                if move is not None:
                    raise self.error(f"column {column} has two positions", token)
                move = self.position(path[-1])
            elif token is not None and token.is_word("DEFAULT", "GENERATED", "COLLATE"):
                raise self.unsupported(_column_option_advice(token.value.upper(), column),
                                       column=column)
            else:
                return AddColumn(path, data_type, comment, move)

    def position(self, field_name: str) -> Move:
        """Spark's colPosition: ``FIRST`` or ``AFTER column``."""
        if self.expect_word("FIRST", "AFTER") == "FIRST":
            return Move(field_name, "FIRST")
        return Move(field_name, "AFTER", self.name("the column to place it after"))

    def drop_columns(self) -> list[SchemaChange]:
        # DropColumn has no if-exists flag: with IF EXISTS a missing column is still reported
        # by the schema rules instead of being skipped.
        self.next()
        self.accept_phrase("IF", "EXISTS")
        parenthesized = self.accept_sym("(")
        changes: list[SchemaChange] = [DropColumn(self.path("a column name"))]
        while self.accept_sym(","):
            changes.append(DropColumn(self.path("a column name")))
        if parenthesized:
            self.expect_sym(")")
        return changes

    def rename_column(self) -> RenameColumn:
        path = self.path("a column name")
        self.expect_word("TO")
        new_name = self.name("the new column name")
        token = self.peek()
        if token is not None and token.is_sym("."):
            raise self.error(f"the new name is one name, not a path: RENAME COLUMN "
                             f"{'.'.join(path)} TO {new_name}", token)
        return RenameColumn(path, new_name)

    def alter_columns(self, keyword: str) -> list[SchemaChange]:
        """``ALTER|CHANGE [COLUMN] c action [, d action ...]`` (Spark 4's alterColumnSpecList),
        or Hive's ``CHANGE [COLUMN] c new_name TYPE [COMMENT ..] [FIRST|AFTER x]``."""
        self.accept_word("COLUMN")
        changes: list[SchemaChange] = []
        while True:
            path = self.path("a column name")
            if keyword == "CHANGE" and not changes and self.at_hive_column_type():
                changes.extend(self.hive_change_column(path))
                return changes
            changes.extend(self.alter_column_action(path))
            if not self.accept_sym(","):
                return changes

    def at_hive_column_type(self) -> bool:
        # Spark tries the ALTER COLUMN actions first: `CHANGE c TYPE INT` is a type change,
        # `CHANGE c first INT` a Hive rename to `first`.
        token, after = self.peek(), self.peek(1)
        if token is None or token.kind not in ("word", "ident"):
            return False
        if token.kind == "ident":
            return True
        word = token.value.upper()
        if word == "FIRST":
            return after is not None and not after.is_sym(",")
        if word == "COMMENT":
            return after is not None and after.kind != "string" and not after.is_word("NULL")
        return word not in ("TYPE", "AFTER", "SET", "DROP")

    def hive_change_column(self, path: tuple[str, ...]) -> list[SchemaChange]:
        """Hive's form names the type again. The type change is always emitted: whether it
        differs is known only against the schema, where an equal type changes nothing."""
        new_name = self.name("the new column name")
        column = ".".join(path)
        data_type = self.data_type(f"for column {column}")
        if self.at_word("NOT"):
            raise self.unsupported(
                f"Unsupported NOT NULL in CHANGE COLUMN {column}: to change nullability, write "
                f"ALTER TABLE .. ALTER COLUMN {column} SET NOT NULL (or DROP NOT NULL)",
                column=column)
        comment = self.string("a column comment") if self.accept_word("COMMENT") else None
        move = self.position(new_name) if self.at_word("FIRST", "AFTER") else None
        target = (*path[:-1], new_name)
        changes: list[SchemaChange] = []
        if new_name != path[-1]:
            changes.append(RenameColumn(path, new_name))
        changes.append(UpdateColumnType(target, data_type))
        if comment is not None:
            changes.append(UpdateColumnComment(target, comment))
        if move is not None:
            changes.append(self.top_level_move(target, move))
        return changes

    def alter_column_action(self, path: tuple[str, ...]) -> list[SchemaChange]:
        column = ".".join(path)
        token = self.peek()
        if self.accept_word("TYPE"):
            data_type = self.data_type(f"for column {column}")
            if self.at_word("NOT"):
                raise self.error(f"ALTER COLUMN {column} TYPE keeps the column's nullability; "
                                 f"to change it, write ALTER COLUMN {column} SET NOT NULL",
                                 self.peek(), column=column)
            return [UpdateColumnType(path, data_type)]
        if self.accept_word("COMMENT"):
            # COMMENT NULL is not Spark, but UpdateColumnComment.sql() writes it for "no comment".
            return [UpdateColumnComment(path, self.comment_or_null())]
        if self.at_word("FIRST", "AFTER"):
            return [self.top_level_move(path, self.position(path[-1]))]
        if self.at_word("SET", "DROP"):
            verb = self.next().value.upper()
            if self.at_word("DEFAULT"):
                raise self.unsupported(f"Unsupported {verb} DEFAULT for column {column}: "
                                       "default values are not supported", column=column)
            self.expect_word("NOT")
            self.expect_word("NULL")
            return [UpdateColumnNullability(path, nullable=verb == "DROP")]
        raise self.error(f"ALTER COLUMN {column} needs an action: {_ALTER_COLUMN_ACTIONS}; "
                         f"found {_found(token)}", token, column=column)

    def top_level_move(self, path: tuple[str, ...], move: Move) -> UpdateColumnPosition:
        if len(path) > 1:
            column = ".".join(path)
            raise self.unsupported(f"Unsupported FIRST/AFTER for nested column {column}: only "
                                   "top-level columns can be moved", column=column)
        return UpdateColumnPosition(move)

    # ---- COMMENT ON, DROP, SHOW, DESCRIBE --------------------------------------------------

    def comment_on(self) -> Statement:
        self.next()
        self.expect_word("ON")
        self.what = "COMMENT ON"
        if self.accept_word("TABLE"):
            name = self.table_name()
            self.expect_word("IS")
            statement = AlterTable(name, (UpdateComment(self.comment_or_null()),), self.text)
        elif self.accept_word("COLUMN"):
            token = self.peek()
            parts = self.path("table.column")
            if not 2 <= len(parts) <= 3:
                raise self.error(f"COMMENT ON COLUMN names table.column or "
                                 f"database.table.column, found {'.'.join(parts)}", token)
            name = TableName(None, parts[0]) if len(parts) == 2 else TableName(*parts[:2])
            self.table = name.qualified()
            self.expect_word("IS")
            change = UpdateColumnComment((parts[-1],), self.comment_or_null())
            statement = AlterTable(name, (change,), self.text)
        else:
            raise self.unsupported_statement(f"COMMENT ON {self.second_word()}".strip())
        self.expect_end()
        return statement

    def drop(self) -> Statement:
        self.next()
        if not self.accept_word("TABLE"):
            raise self.unsupported_statement(f"DROP {self.second_word()}".strip())
        self.what = "DROP TABLE"
        if_exists = self.accept_phrase("IF", "EXISTS")
        name = self.table_name()
        self.accept_word("PURGE")  # Paimon removes a dropped table's files anyway
        self.expect_end()
        return DropTable(name, if_exists, self.text)

    def show(self) -> Statement:
        self.next()
        if not self.accept_word("TABLES"):
            raise self.unsupported_statement(f"SHOW {self.second_word()}".strip())
        self.what = "SHOW TABLES"
        database: str | None = None
        if self.accept_word("FROM", "IN"):
            parts = self.path("a database name")
            if len(parts) > 1:
                raise self.unsupported(f"Unsupported database name {'.'.join(parts)} in SHOW "
                                       "TABLES: catalogs are not supported")
            database = parts[0]
        if not self.at_end():
            raise self.unsupported("Unsupported SHOW TABLES .. LIKE: write SHOW TABLES or "
                                   "SHOW TABLES IN db, without a pattern")
        return ShowTables(database, self.text)

    def describe(self) -> Statement:
        self.next()
        self.what = "DESCRIBE"
        if self.at_word("DATABASE", "SCHEMA", "NAMESPACE", "FUNCTION", "PROCEDURE", "QUERY",
                        *_QUERY_STARTS):
            raise self.unsupported_statement(f"DESCRIBE {self.second_word()}")
        if self.peek(1) is not None:  # DESC table: a table called `table`
            self.accept_word("TABLE")
        if self.at_word("EXTENDED", "FORMATTED") and self.peek(1) is not None \
                and not self.at_sym(".", offset=1):
            raise self.unsupported(f"Unsupported DESCRIBE {self.second_word()}: write DESCRIBE "
                                   "t; Warehouse.table(t).history() shows schemas, snapshots "
                                   "and files")
        name = self.table_name()
        if not self.at_end():
            raise self.unsupported("Unsupported DESCRIBE of a column or partition: write "
                                   "DESCRIBE t")
        return DescribeTable(name, self.text)

    # ---- INSERT, DELETE --------------------------------------------------------------------

    def insert(self) -> Statement:
        self.next()
        self.what = "INSERT"
        mode = self.expect_word("INTO", "OVERWRITE")
        if self.at_word("LOCAL", "DIRECTORY"):
            raise self.unsupported_statement("INSERT OVERWRITE DIRECTORY")
        self.accept_word("TABLE")
        name = self.table_name()
        token = self.peek()
        if token is not None and token.is_word("PARTITION", "IF", "BY", "REPLACE"):
            raise self.unsupported(_insert_clause_advice(token.value.upper()))
        if self.at_word("WITH") and self.at_sym("(", offset=1):
            raise self.unsupported("Unsupported INSERT .. WITH (options): write the INSERT "
                                   "without options")
        columns = self.insert_columns()
        if self.at_end():
            raise self.error("expected the rows to insert: VALUES (..) or a SELECT")
        query, _ = _normalized_query(self.rest_text(), "the INSERT query")
        return Insert(name, columns, query, mode == "OVERWRITE", self.text)

    def insert_columns(self) -> tuple[str, ...] | None:
        """``(a, b)`` when it is a column list: names only, and a query after it.
        ``INSERT INTO t (SELECT ..)`` starts a parenthesized query instead."""
        if not self.at_sym("("):
            return None
        names: list[str] = []
        offset = 1
        while True:
            token, separator = self.peek(offset), self.peek(offset + 1)
            if token is None or token.kind not in ("word", "ident") or not token.value \
                    or separator is None or not separator.is_sym(",", ")"):
                return None
            names.append(token.value)
            if separator.is_sym(")"):
                break
            offset += 2
        if self.peek(offset + 2) is None:  # `INSERT INTO t (a)`: no rows follow a list
            return None
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise self.error(f"the column list names {duplicates[0]} twice", self.peek(),
                             column=duplicates[0])
        self.pos += offset + 2
        return tuple(names)

    def delete(self) -> Statement:
        self.next()
        self.what = "DELETE"
        self.expect_word("FROM")
        name = self.table_name()
        where: str | None = None
        if self.accept_word("WHERE"):
            if self.at_end():
                raise self.error("expected a condition after WHERE")
            where = self.rest_text()
            _condition_expression(where)  # a bad condition fails here, not later in Spark
        elif not self.at_end():
            token = self.peek()
            raise self.unsupported(f"Unsupported {_found(token)} after DELETE FROM "
                                   f"{name.sql()}: write DELETE FROM t WHERE <condition>, "
                                   "without a table alias")
        return DeleteFrom(name, where, self.text)


def _found(token: _Token | None) -> str:
    return "the end of the statement" if token is None else token.describe()


def _set_property(key: str, value: str) -> SchemaChange:
    # Spark keeps the table comment in the 'comment' property.
    return UpdateComment(value) if key == "comment" else SetOption(key, value)


def _create_clause_advice(clause: str) -> str:
    advice = {
        "OPTIONS": "write table options as TBLPROPERTIES ('key' = 'value')",
        "LOCATION": "tables live in the warehouse; leave LOCATION out",
        "CLUSTERED": "set the bucket count as TBLPROPERTIES ('bucket' = 'N', "
                     "'bucket-key' = 'col')",
        "CLUSTER": "leave CLUSTER BY out",
        "SKEWED": "leave SKEWED BY out",
        "ROW": "leave ROW FORMAT out: files are Parquet",
        "STORED": "leave STORED AS out: files are Parquet",
        "DEFAULT": "collations are not supported",
        "AS": "create the table with its columns, then INSERT INTO t SELECT ..",
        "USING": "write USING once, right after the column list",
    }[clause]
    return f"Unsupported {clause} clause in CREATE TABLE: {advice}"


def _column_option_advice(option: str, column: str) -> str:
    what = {
        "DEFAULT": "default values are not supported",
        "GENERATED": "generated columns are not supported",
        "COLLATE": "collations are not supported",
    }.get(option, "only PRIMARY KEY constraints are supported")
    return f"Unsupported {option} for column {column}: {what}"


def _insert_clause_advice(clause: str) -> str:
    advice = {
        "PARTITION": "INSERT .. PARTITION (..) is not supported; give partition values as "
                     "ordinary columns: INSERT INTO t VALUES (..)",
        "IF": "INSERT .. IF NOT EXISTS is not supported",
        "BY": "INSERT .. BY NAME is not supported; list the columns: INSERT INTO t (a, b) ..",
        "REPLACE": "INSERT .. REPLACE WHERE is not supported; DELETE FROM t WHERE .., then "
                   "INSERT",
    }[clause]
    return f"Unsupported clause in INSERT: {advice}"


# --------------------------------------------------------------------------------------------
# Types: Spark spellings on top of schemalab.types.parse_type
# --------------------------------------------------------------------------------------------


def _render_type(tokens: Sequence[_Token]) -> str:
    """Type tokens as text for :func:`parse_type`, with Spark's meaning for Spark's words:
    a bare ``TIMESTAMP`` is Spark's TimestampType, which Paimon's Spark connector stores as
    ``TIMESTAMP(6) WITH LOCAL TIME ZONE``; a bare ``BINARY`` is Spark's BinaryType, i.e.
    ``BYTES``. Written with a precision or length (``TIMESTAMP(3)``, ``BINARY(4)``) they keep
    Paimon's meaning, which Spark has no spelling for. STRUCT/ROW field names are always
    quoted, so a field called ``timestamp`` stays a name."""
    out: list[str] = []
    opens_fields: list[bool] = []  # per open bracket: does a field name follow it and its commas?
    expect_field = False
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if expect_field and token.kind in ("word", "ident"):
            out.append(_backtick(token.value))
            expect_field = False
            continue
        expect_field = False
        if token.kind == "sym":
            for char in token.value:  # '<>' (an empty STRUCT) arrives as one token
                if char in "<(":
                    row = char == token.value[0] and i > 0 and tokens[i - 1].is_word("STRUCT",
                                                                                      "ROW")
                    opens_fields.append(row)
                    expect_field = row
                elif char in ">)":
                    if opens_fields:
                        opens_fields.pop()
                    expect_field = False
                elif char == ",":
                    expect_field = bool(opens_fields) and opens_fields[-1]
            out.append(token.value)
        elif token.is_word("TIMESTAMP") and not (
                after is not None and (after.is_sym("(") or after.is_word("WITH", "WITHOUT"))):
            out.append("TIMESTAMP_LTZ")
        elif token.is_word("BINARY") and not (
                after is not None and (after.is_sym("(") or after.is_word("VARYING"))):
            out.append("BYTES")
        elif token.kind == "ident":
            out.append(_backtick(token.value))
        elif token.kind == "string":
            out.append("'" + token.value.replace("'", "''") + "'")
        else:
            out.append(token.value)
    return " ".join(out)


def _with_spark_map_keys(t: DataType) -> DataType:
    """Spark map keys are never null, and Paimon's Spark connector makes them NOT NULL."""
    if isinstance(t, MapType):
        return MapType(_with_spark_map_keys(t.key).with_nullable(False),
                       _with_spark_map_keys(t.value), t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(_with_spark_map_keys(t.element), t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(_with_spark_map_keys(t.element), t.nullable)
    if isinstance(t, RowType):
        return RowType(tuple(replace(f, type=_with_spark_map_keys(f.type)) for f in t.fields),
                       t.nullable)
    return t


# --------------------------------------------------------------------------------------------
# Queries: sqlglot trees, the tables they read, and rewriting those
# --------------------------------------------------------------------------------------------


class _CommandFallbackFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


_COMMAND_FALLBACK = _CommandFallbackFilter()


@contextmanager
def _without_command_fallback_warnings() -> Iterator[None]:
    """sqlglot logs a warning when it can only read text as an opaque Command; such text is
    refused with a SqlError here, so in a notebook the warning would only be noise."""
    logger = logging.getLogger("sqlglot")
    logger.addFilter(_COMMAND_FALLBACK)
    try:
        yield
    finally:
        logger.removeFilter(_COMMAND_FALLBACK)


def _query_expression(sql: str, what: str) -> exp.Expr:
    """sqlglot's tree of one Spark query (SELECT, WITH, VALUES, set operations)."""
    try:
        with _without_command_fallback_warnings():
            parsed = sqlglot.parse(sql, read="spark")
    except ParseError as e:
        raise SqlError(f"Cannot parse {what}: {_describe_parse_error(e)}",
                       rule="sql-syntax") from e
    except SqlglotError as e:
        raise SqlError(f"Cannot parse {what}: {_clean_sqlglot(str(e))}",
                       rule="sql-syntax") from e
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise SqlError(f"Expected one query as {what}, found {len(statements)}: "
                       f"{_snippet(sql)}", rule="sql-syntax")
    expression = statements[0]
    if not isinstance(expression, exp.Query | exp.Values):
        kind = expression.key.upper()
        hint = ""
        if isinstance(expression, exp.Insert):
            hint = " Put WITH after INSERT INTO t: INSERT INTO t WITH c AS (..) SELECT .."
        raise SqlError(f"Unsupported statement: {kind} where {what} should be, in "
                       f"{_snippet(sql)}. {_SUPPORTED}.{hint}", rule="unsupported-statement")
    return expression


def _condition_expression(sql: str) -> exp.Expr:
    try:
        return sqlglot.parse_one(sql, read="spark", into=exp.Condition)
    except ParseError as e:
        raise SqlError(f"Cannot parse the DELETE condition {_snippet(sql)}: "
                       f"{_describe_parse_error(e)}", rule="sql-syntax") from e
    except SqlglotError as e:
        raise SqlError(f"Cannot parse the DELETE condition {_snippet(sql)}: "
                       f"{_clean_sqlglot(str(e))}", rule="sql-syntax") from e


def _table_references(expression: exp.Expr) -> Iterator[exp.Table]:
    """The nodes that name real tables: not CTEs, not table functions such as
    ``range(10)``, not the relation names inside optimizer hints."""
    for table in expression.find_all(exp.Table):
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


def _table_name(table: exp.Table) -> TableName:
    if table.args.get("catalog"):
        raise SqlError(f"Unsupported table name {table.sql(dialect='spark')}: name a table as "
                       "table or database.table (catalogs are not supported)",
                       rule="unsupported-sql")
    return TableName(table.db or None, table.name)


def _referenced_tables(expression: exp.Expr) -> tuple[TableName, ...]:
    """Each table once, in order of first appearance in the text."""
    tables = sorted(_table_references(expression), key=_text_position)
    names: list[TableName] = []
    for table in tables:
        name = _table_name(table)
        if name not in names:
            names.append(name)
    return tuple(names)


def _text_position(table: exp.Table) -> int:
    starts = [p.meta["start"] for p in table.parts if "start" in p.meta]
    return min(starts, default=0)


# Spark wants an alias after these clauses (FROM t TABLESAMPLE (..) alias), not after the name.
_ALIAS_SAFE_TABLE_ARGS = frozenset({"this", "db", "catalog", "alias", "pivots"})


def _needs_alias(table: exp.Table) -> bool:
    if table.alias:
        return False
    return all(key in _ALIAS_SAFE_TABLE_ARGS for key, value in table.args.items() if value)


def _splice_tables(sql: str, edits: list[tuple[exp.Table, str]]) -> str | None:
    """``sql`` with the edited table names replaced in place, or None when sqlglot did not
    record where a name is."""
    spans: list[tuple[int, int, str]] = []
    for table, view in edits:
        parts = table.parts
        if not parts or any("start" not in p.meta or "end" not in p.meta for p in parts):
            return None
        start = min(p.meta["start"] for p in parts)
        end = max(p.meta["end"] for p in parts) + 1
        replacement = _backtick(view)
        if _needs_alias(table):
            replacement += " AS " + _backtick(table.name)
        spans.append((start, end, replacement))
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:], strict=False)):
        return None
    for start, end, replacement in reversed(spans):
        sql = sql[:start] + replacement + sql[end:]
    return sql


def _regenerate_tables(expression: exp.Expr, edits: list[tuple[exp.Table, str]]) -> str:
    for table, view in edits:
        if _needs_alias(table):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
        table.set("this", exp.to_identifier(view, quoted=True))
        table.set("db", None)
        table.set("catalog", None)
    return expression.sql(dialect="spark")


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN_REPR = re.compile(r"<Token token_type: [^,]+, text: (.*?), line: \d+, col: \d+, "
                         r"start: \d+, end: \d+, comments: \[.*?\]>")


def _clean_sqlglot(message: str) -> str:
    message = _ANSI.sub("", message)
    return _TOKEN_REPR.sub(lambda m: repr(m.group(1)), message)


def _describe_parse_error(error: ParseError) -> str:
    details = error.errors[0] if error.errors else None
    if not details:
        return _clean_sqlglot(str(error))
    text = _clean_sqlglot(str(details.get("description", "")))
    return f"{text} (line {details.get('line')}, column {details.get('col')})"


def _unexpected(what: str, error: Exception) -> SqlError:
    if isinstance(error, RecursionError):
        return SqlError(f"{what}: it is nested too deeply", rule="sql-syntax")
    return SqlError(f"{what}: internal error {error!r}; please report it with the statement",
                    rule="internal-error")


def _snippet(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")



def _backtick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
