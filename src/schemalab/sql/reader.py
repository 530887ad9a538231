"""One statement's text → its tokens and its tree, read by :class:`SchemalabSpark`; every
failure becomes a :class:`SqlError` that names the statement, where the problem is and
what rule it broke.

    >>> parsed = read(" SELECT a FROM t; ", "query")
    >>> parsed.statement_text, [token.text for token in parsed.tokens], parsed.tree.sql()
    ('SELECT a FROM t', ['SELECT', 'a', 'FROM', 't'], 'SELECT a FROM t')
    >>> try:
    ...     read("SELECT 'open", "query")
    ... except SqlError as e:
    ...     print(e.rule, "|", e.message.split(": ", 1)[1])
    sql-syntax | the string that starts at line 1, column 8 is never closed ("'open"...)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import Token, TokenType

from schemalab.errors import SqlError
from schemalab.sql.dialect import QUERY_STARTS, SchemalabSpark
from schemalab.sql.split import unclosed_region
from schemalab.sql.syntax import error_detail, is_word

__all__ = ["SUPPORTED", "Parsed", "internal_error", "read", "snippet", "tokenize"]

SUPPORTED = ("schemalab runs CREATE TABLE, ALTER TABLE, COMMENT ON, DROP TABLE, SHOW TABLES, "
             "SHOW TAGS, DESCRIBE, INSERT, DELETE FROM, UPDATE (Iceberg tables), CALL (Paimon's "
             "procedures) and queries (SELECT, WITH, VALUES)")

_DIALECT = SchemalabSpark()


@dataclass(frozen=True)
class Parsed:
    """A statement read: its ``text`` as given, its ``tokens`` (without trailing ``;``)
    and its ``tree``."""

    text: str
    tokens: list[Token]
    tree: exp.Expr

    @property
    def statement_text(self) -> str:
        """``text`` without the whitespace around it and trailing ``;``."""
        text = self.text.strip()
        while text.endswith(";"):
            text = text[:-1].rstrip()
        return text


def tokenize(text: str) -> list[Token]:
    """Spark's tokens of ``text``, without trailing semicolons."""
    try:
        tokens = _DIALECT.tokenize(text)
    except SqlglotError as e:
        why = unclosed_region(text) or _clean(str(e))
        raise SqlError(f"Cannot read statement {snippet(text)}: {why}",
                       rule="sql-syntax") from e
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    return tokens


def read(text: str, what: str, *, tokens: list[Token] | None = None,
         query_only: bool = False) -> Parsed:
    """The tree of one statement. ``what`` names it in errors (``ALTER TABLE``,
    ``query``); with ``query_only`` anything but a query is refused before it is read."""
    tokens = tokenize(text) if tokens is None else tokens
    if not tokens:
        raise SqlError(f"Empty {what}" if query_only else
                       "Empty statement: there is no SQL to run", rule="sql-syntax")
    first = tokens[0]
    if query_only and not (first.token_type is TokenType.L_PAREN or is_word(first, *QUERY_STARTS)):
        raise SqlError(f"Expected a query (SELECT, WITH, VALUES) as {what}, found "
                       f"{snippet(text)}", rule="sql-syntax")
    if any(token.token_type is TokenType.SEMICOLON for token in tokens):
        raise SqlError((f"Expected one query as {what}, found several statements in "
                        f"{snippet(text)}") if query_only else
                       (f"Expected one statement, found several in {snippet(text)}; use "
                        "parse_statements for a script"), rule="sql-syntax")
    try:
        with _without_command_fallback_warnings():
            trees = _DIALECT.parser().parse(tokens, text)
    except ParseError as e:
        raise syntax_error(e, what) from e
    except SqlglotError as e:
        raise SqlError(f"Cannot parse {what}: {_clean(str(e))}", rule="sql-syntax") from e
    tree = trees[0] if len(trees) == 1 else None
    if tree is None:
        raise SqlError(f"Cannot parse {what}: no statement in {snippet(text)}",
                       rule="sql-syntax")
    return Parsed(text, tokens, tree)


def syntax_error(error: ParseError, what: str) -> SqlError:
    """The SqlError for a ParseError of schemalab's parser (or of sqlglot's own)."""
    rule = error_detail(error, "rule") or "sql-syntax"
    what = error_detail(error, "what") or what
    description = _clean(error_detail(error, "description") or str(error))
    column = error_detail(error, "column")
    if rule == "unknown-type":
        of_column = "" if column is None else f" for column {column}"
        message = (f"Unknown data type {error_detail(error, 'type')!r}{of_column} in {what}: "
                   f"{description}")
    elif rule == "sql-syntax":
        message = f"Cannot parse {what}: {description}"
    else:
        message = description
    return SqlError(message, table=error_detail(error, "table"), column=column, rule=rule)


def internal_error(what: str, error: Exception) -> SqlError:
    """Any other exception while reading: nothing may reach a notebook as a crash. Deep
    nesting exhausts recursion; anything else is a bug, reported as one."""
    if isinstance(error, RecursionError):
        return SqlError(f"{what}: it is nested too deeply", rule="sql-syntax")
    return SqlError(f"{what}: internal error {error!r}; please report it with the statement",
                    rule="internal-error")


def snippet(text: str, limit: int = 80) -> str:
    """``text`` on one line, shortened, quoted: for naming a statement in a message."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN_REPR = re.compile(r"<Token token_type: [^,]+, text: (.*?), line: \d+, col: \d+, "
                         r"start: \d+, end: \d+, comments: \[.*?\]>")


def _clean(message: str) -> str:
    message = _ANSI.sub("", message.split("\n")[0])
    return _TOKEN_REPR.sub(lambda m: repr(m.group(1)), message)


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
