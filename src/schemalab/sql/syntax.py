"""What every part of schemalab's Spark parser shares: names as Spark reads them in DDL, and
errors that say where they are and which rule they broke.

Spark (outside ANSI mode) reserves almost no words, so in DDL a name is any word or
`quoted` name: a column may be called ``comment``, ``first`` or ``select``. sqlglot's
shared parser is stricter, which is right for queries, so only the DDL positions read
names through :meth:`SyntaxBase._parse_name`.

    >>> describe(None), describe(Token(TokenType.VAR, "x")), describe(Token(TokenType.STRING, "x"))
    ('the end of the statement', "'x'", 'a string')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NoReturn, TypeVar

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Token, TokenType

from schemalab.sql.statements import TableName

__all__ = ["NAME_PART", "SyntaxBase", "describe", "error_detail", "is_string", "is_word",
           "path_parts", "table_of_text", "unexpected", "unquote"]

E = TypeVar("E", bound=exp.Expr)

_WORD = re.compile(r"\w+")
# By name: literals are never names, and the set of TokenType members differs between
# sqlglot versions.
_LITERAL_TOKENS = frozenset({"STRING", "RAW_STRING", "NUMBER", "BIT_STRING", "HEX_STRING",
                             "BYTE_STRING", "NATIONAL_STRING", "NATIONAL_RAW_STRING",
                             "HEREDOC_STRING", "UNICODE_STRING"})
_STRING_TOKENS = frozenset({"STRING", "RAW_STRING"})


def is_word(token: Token | None, *words: str) -> bool:
    """Whether ``token`` is an unquoted word (one of ``words``, when given)."""
    if not token or token.token_type.name in _LITERAL_TOKENS:
        return False
    if token.token_type is TokenType.IDENTIFIER or not _WORD.fullmatch(token.text):
        return False
    return not words or token.text.upper() in words


def is_string(token: Token | None) -> bool:
    return bool(token and token.token_type.name in _STRING_TOKENS)


def describe(token: Token | None) -> str:
    """A token as an error message names it."""
    if not token:
        return "the end of the statement"
    if is_string(token):
        return "a string"
    if token.token_type is TokenType.IDENTIFIER:
        return f"`{token.text}`"
    return repr(token.text)


def unexpected(token: Token | None) -> str:
    """``unexpected 'x'``, or that the statement ended too soon."""
    return f"unexpected {describe(token)}" if token else "unexpected end of the statement"


def error_detail(error: ParseError, key: str) -> str | None:
    """What schemalab's parser recorded on ``error`` (``rule``, ``what``, ``table``)."""
    value = error.errors[0].get(key) if error.errors else None
    return value if isinstance(value, str) else None


class SyntaxBase(SparkParser):
    """sqlglot's Spark parser with DDL names, positions in messages, and the first table a
    statement names remembered for its errors."""

    _statement_table: str | None = None

    def reset(self) -> None:
        super().reset()
        self._statement_table = None

    # ---- errors ----------------------------------------------------------------------------

    def raise_error(self, message: str, token: Token | None = None) -> None:
        token = token or self._curr or self._prev
        if message == "Invalid expression / Unexpected token" and token:
            message = unexpected(token)
        try:
            super().raise_error(message + self._where(token), token)  # type: ignore[arg-type]
        except ParseError as error:
            self._annotate(error)
            raise

    def fail(self, message: str, token: Token | None = None, *, rule: str = "sql-syntax",
             what: str | None = None, **details: str) -> NoReturn:
        """Stop with ``message`` at ``token`` (the current one by default), whatever the
        error level: schemalab never recovers from an error in a statement."""
        token = token or self._curr
        description = message + self._where(token)
        error = ParseError(description, [{"description": description, "rule": rule,
                                          "what": what, **details}])
        self._annotate(error)
        raise error

    def _parse_as_command(self, start: Token) -> exp.Command:
        # sqlglot keeps what it cannot read as an opaque Command; schemalab refuses it, and
        # says where reading stopped.
        self.fail(unexpected(self._curr))

    def _annotate(self, error: ParseError) -> None:
        if error.errors and self._statement_table is not None:
            error.errors[0].setdefault("table", self._statement_table)

    def _where(self, token: Token | None) -> str:
        """`` (line L, column C)`` where ``token`` starts, for messages."""
        if not token or not self.sql:
            return ""
        line = self.sql.count("\n", 0, token.start) + 1
        column = token.start - (self.sql.rfind("\n", 0, token.start) + 1) + 1
        return f" (line {line}, column {column})"

    def _labelled(self, what: str, parse: Callable[[], E | None]) -> E | None:
        """``parse()``, with errors inside it naming ``what`` (e.g. ``the INSERT query``)
        and the node remembering the source ``span`` it was read from."""
        start = self._curr
        try:
            node = parse()
        except ParseError as error:
            if error.errors:
                error.errors[0]["what"] = error.errors[0].get("what") or what
            raise
        if node is not None and start:
            node.meta["span"] = self._span_from(start)
        return node

    def _for_column(self, column: exp.Expr, parse: Callable[[], E | None]) -> E | None:
        """``parse()``, with errors inside it naming ``column`` (a path)."""
        try:
            return parse()
        except ParseError as error:
            if error.errors:
                name = ".".join(part.name for part in path_parts(column))
                error.errors[0].setdefault("column", name)
            raise

    def _span_from(self, start: Token) -> tuple[int, int]:
        """``(begin, end)`` of the source from ``start`` to the last token read."""
        last = self._prev or start
        return start.start, max(last.end, start.end) + 1

    # ---- names -----------------------------------------------------------------------------

    def _peek(self, offset: int) -> Token | None:
        """The token ``offset`` places after the current one, if there is one."""
        index = self._index + offset
        return self._tokens[index] if 0 <= index < len(self._tokens) else None

    def _at_name(self, offset: int = 0) -> bool:
        token = self._peek(offset)
        return bool(token and (token.token_type is TokenType.IDENTIFIER or is_word(token)))

    def _parse_name(self, what: str) -> exp.Identifier:
        """A name in DDL: any word, or a `quoted` name that is not empty."""
        token = self._curr
        if not self._at_name():
            self.fail(f"expected {what}, found {describe(token)}")
        assert token
        if token.text == "":
            self.fail(f"expected {what}, found an empty name ``")
        self._advance()
        identifier = exp.Identifier(this=token.text,
                                    quoted=token.token_type is TokenType.IDENTIFIER)
        identifier.update_positions(token)
        return identifier

    def _parse_path(self, what: str) -> exp.Expr:
        """``a`` or ``a.b.c``: an Identifier, or a Dot over Identifiers."""
        parts: list[exp.Expr] = [self._parse_name(what)]
        while self._match(TokenType.DOT):
            parts.append(self._parse_name(what))
        return parts[0] if len(parts) == 1 else exp.Dot.build(parts)

    def _parse_table_part(self, schema: bool = False) -> exp.Expr | None:
        # In DDL (schema=True) a table or database is named like a column; queries keep
        # sqlglot's rules, where a keyword after FROM is not a table.
        if schema:
            return self._parse_name("a table name")
        return super()._parse_table_part(schema=schema)

    def _parse_table_parts(self, schema: bool = False, is_db_reference: bool = False,
                           wildcard: bool = False,
                           fast: bool = False) -> exp.Table | exp.Dot | None:
        table = super()._parse_table_parts(schema=schema, is_db_reference=is_db_reference,
                                           wildcard=wildcard, fast=fast)
        if schema and self._statement_table is None and isinstance(table, exp.Table):
            self._statement_table = TableName(table.db or None, table.name).qualified()
        return table

    def _parse_primary_key_part(self) -> exp.Expr | None:
        return self._parse_name("a primary key column")

    def _parse_string_value(self, what: str) -> str:
        """A string literal's value; adjacent literals are one value, as in Spark."""
        if not is_string(self._curr):
            self.fail(f"expected {what} as a quoted string, found {describe(self._curr)}")
        parts: list[str] = []
        while is_string(self._curr):
            assert self._curr
            parts.append(self._curr.text)
            self._advance()
        return "".join(parts)


def path_parts(path: exp.Expr) -> list[exp.Expr]:
    """The names of a column path (an Identifier, or a Dot over them), outermost first."""
    if isinstance(path, exp.Dot):
        return [*path_parts(path.this), *path_parts(path.expression)]
    return [path]


# ---- names in the statements read by regular expressions (Iceberg's and Paimon's extensions)

#: one part of a dotted name: a `quoted` part (a doubled backtick is one backtick) or a word
NAME_PART = r"(?:`(?:[^`]|``)+`|[\w$]+)"


def unquote(part: str) -> str:
    """A name part as Spark reads it: ``a``, or the contents of `` `a``b` `` (a`b).

    >>> unquote("`a``b`"), unquote("t")
    ('a`b', 't')
    """
    return part[1:-1].replace("``", "`") if part.startswith("`") else part


def table_of_text(text: str) -> TableName:
    """The table ``t``, ``db.t`` or ``db.t.branch_dev`` names (three parts: a ref selector of
    ``db.t``, kept in the table part as Iceberg's SparkCatalog reads it).

    >>> table_of_text("`my db`.t.branch_dev")
    TableName(database='my db', table='t.branch_dev')
    """
    parts = [unquote(p) for p in re.findall(NAME_PART, text)]
    if len(parts) == 3:
        return TableName(parts[0], f"{parts[1]}.{parts[2]}")
    return TableName(parts[0], parts[1]) if len(parts) == 2 else TableName(None, parts[0])
