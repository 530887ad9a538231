"""``SchemalabSpark``: sqlglot's Spark dialect plus what Spark and Paimon DDL need and
sqlglot's Spark lacks. A query reads into the same tree as with sqlglot's Spark (only
Spark's ``TABLE t`` is added, and a WHERE condition remembers its source ``span``).

    >>> tree = SchemalabSpark().parse("CALL sys.compact(table => 'db.t')")[0]
    >>> type(tree).__name__, tree.name, [kwarg.name for kwarg in tree.expressions]
    ('Call', 'sys.compact', ['table'])
    >>> SchemalabSpark().parse("SHOW TABLES IN db")[0].args["db"].name
    'db'

What is added, each where sqlglot's parser has a seat for it:

* types (:mod:`schemalab.sql.type_syntax`) and ALTER TABLE actions and table properties
  (:mod:`schemalab.sql.alter_syntax`);
* names: in DDL any word names a table or column (``CREATE TABLE t (select INT)``);
* ``CREATE TABLE`` column lists read constraints only where one starts, so a column may be
  called ``constraint`` or ``primary``;
* ``INSERT`` with Spark's column list (``INSERT INTO t (select) VALUES (1)``), its query
  remembering its source ``span``; ``TABLE t`` as a query;
* ``DELETE FROM``, ``COMMENT ON .. IS NULL``, ``DESC extended`` (a table so named),
  ``SHOW TABLES [IN db] [LIKE ..]`` and ``CALL proc(name => value, ..)``, which sqlglot's
  Spark reads as opaque commands or not at all.

Where sqlglot would keep what it cannot read as an opaque ``Command``, this parser stops
with an error that says where reading stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType
from sqlglot.trie import new_trie

from schemalab.sql.alter_syntax import AlterSyntax
from schemalab.sql.syntax import describe, is_word, path_parts, unexpected
from schemalab.sql.type_syntax import TypeSyntax

__all__ = ["QUERY_STARTS", "Call", "SchemalabSpark"]

# First words of a query: Spark's TABLE t and FROM t SELECT .. too.
QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE"})
_CONSTRAINT_STARTS = frozenset({"PRIMARY KEY", "FOREIGN KEY"})
_UNNAMED_CONSTRAINT_WORDS = frozenset({"UNIQUE", "CHECK", "BUCKET", "TRUNCATE", "EXCLUDE",
                                       "PERIOD"})


class Call(exp.Expression):
    """``CALL proc(name => value, ..)``: ``this`` names the procedure, ``expressions`` are
    ``Kwarg`` nodes (a positional argument is a bare value)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": False}

    @property
    def name(self) -> str:
        return ".".join(part.name for part in path_parts(self.this))


def _literal(token: Any, negative: bool) -> exp.Expr | None:
    """The tree sqlglot's parser makes of one literal token (``-`` before a number: Neg)."""
    kind = token.token_type
    if kind is TokenType.NUMBER:
        number = exp.Literal(this=token.text, is_string=False)
        return exp.Neg(this=number) if negative else number
    if negative:
        return None
    if kind is TokenType.STRING:
        return exp.Literal(this=token.text, is_string=True)
    if kind is TokenType.NULL:
        return exp.Null()
    if kind in (TokenType.TRUE, TokenType.FALSE):
        return exp.Boolean(this=kind is TokenType.TRUE)
    return None


class SchemalabParser(AlterSyntax, TypeSyntax):
    """sqlglot's Spark parser with the additions listed in the module."""

    SUPPORTS_TABLE_QUERY = True

    # Spark's temporalClause: FOR? (SYSTEM_VERSION | VERSION | SYSTEM_TIME | TIMESTAMP) AS OF
    VERSION_PHRASES: ClassVar[dict[tuple[str, ...], str]] = {
        **AlterSyntax.VERSION_PHRASES,
        ("FOR", "SYSTEM_VERSION"): "VERSION",
        ("SYSTEM_VERSION", "AS", "OF"): "VERSION",
        ("SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
    }

    STATEMENT_PARSERS: ClassVar[dict[TokenType, Callable[..., exp.Expr | None]]] = {
        **AlterSyntax.STATEMENT_PARSERS,
        TokenType.SHOW: lambda self: self._parse_show(),
        TokenType.COMMAND: lambda self: self._parse_call_or_command(),
    }

    SHOW_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | None]]] = {
        "TABLES": lambda self: self._parse_show_tables(),
    }
    SHOW_TRIE: ClassVar[dict[Any, Any]] = new_trie(key.split(" ") for key in SHOW_PARSERS)

    def raise_error(self, message: str, token: Any = None) -> None:
        if message.startswith("Required keyword"):  # an incomplete clause
            message = unexpected(self._curr)
        super().raise_error(message, token)

    # ---- CREATE TABLE columns ------------------------------------------------------------

    def _parse_schema(self, this: exp.Expr | None = None) -> exp.Expr | None:
        # Unlike sqlglot's, never a subquery: the callers that matter here (CREATE TABLE,
        # PARTITIONED BY) always hold columns, and INSERT reads its own column list.
        if not self._match(TokenType.L_PAREN):
            return this
        elements = self._parse_csv(self._parse_schema_element)
        self._match_r_paren()
        return self.expression(exp.Schema(this=this, expressions=elements))

    def _parse_schema_element(self) -> exp.Expr | None:
        if self._at_table_constraint():
            return self._parse_constraint()
        if self._at_name() and self._next.token_type is TokenType.L_PAREN:
            return self._parse_function()  # a partition transform, refused by name later
        return self._parse_field_def()

    def _at_table_constraint(self) -> bool:
        # A column may be called `constraint`, `unique` or `primary`: look at what follows.
        token, after = self._curr, self._next
        if not token:
            return False
        if token.token_type is TokenType.CONSTRAINT and self._at_name(1):
            third = self._peek(2)
            return third is not None and (third.text.upper() in _CONSTRAINT_STARTS
                                          or is_word(third, *_UNNAMED_CONSTRAINT_WORDS))
        if token.text.upper() in _CONSTRAINT_STARTS:
            return True
        return is_word(token, *_UNNAMED_CONSTRAINT_WORDS) \
            and after.token_type is TokenType.L_PAREN

    def _parse_field_def(self) -> exp.Expr | None:
        path = self._parse_path("a column name")
        return self._for_column(path, lambda: self._parse_column_def(path))

    # ---- INSERT, DELETE, WHERE -----------------------------------------------------------

    def _parse_value(self, values: bool = True) -> exp.Tuple | None:
        # A row of plain literals -- what INSERT .. VALUES mostly holds, a thousand rows at a
        # time in a notebook -- becomes the same tree the expression parser builds, without
        # the ~20 precedence levels it descends for each value. Anything else (expressions,
        # casts, suffixed numbers, comments) takes sqlglot's own path.
        row = self._literal_row()
        return row if row is not None else super()._parse_value(values)

    def _literal_row(self) -> exp.Tuple | None:
        tokens, i = self._tokens, self._index
        if i >= len(tokens) or tokens[i].token_type is not TokenType.L_PAREN:
            return None
        values: list[exp.Expr] = []
        i += 1
        while i < len(tokens):
            token = tokens[i]
            negative = token.token_type is TokenType.DASH
            if negative:
                i += 1
                if i >= len(tokens):
                    return None
                token = tokens[i]
            value = _literal(token, negative)
            if value is None or token.comments or tokens[i - negative].comments:
                return None
            values.append(value)
            i += 1
            if i >= len(tokens) or tokens[i].comments:
                return None
            if tokens[i].token_type is TokenType.R_PAREN:
                self._advance(i + 1 - self._index)
                return exp.Tuple(expressions=values)
            if tokens[i].token_type is not TokenType.COMMA:
                return None
            i += 1
        return None


    def _parse_insert(self) -> exp.Insert:
        """Spark's ``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (..)] [IF NOT EXISTS]
        [(a, b) | BY NAME] [REPLACE WHERE ..] query``; OVERWRITE DIRECTORY is refused
        before parsing."""
        overwrite = self._match(TokenType.OVERWRITE)
        if not overwrite and not self._match(TokenType.INTO):
            self.fail(f"expected INTO or OVERWRITE, found {describe(self._curr)}")
        self._match(TokenType.TABLE)
        table = self._parse_table_parts(schema=True)
        assert isinstance(table, exp.Table)  # DDL names are never expressions
        if self._match(TokenType.PARTITION, advance=False):
            table.set("partition", self._parse_partition())
        exists = self._match_text_seq("IF", "NOT", "EXISTS")
        if self._match(TokenType.WITH, advance=False) \
                and self._next.token_type is TokenType.L_PAREN:
            self.fail("Unsupported INSERT .. WITH (options): write the INSERT without options",
                      rule="unsupported-sql")
        columns = self._parse_insert_columns()
        by_name = self._match_text_seq("BY", "NAME")
        replace_where = self._parse_disjunction() if self._match_pair(
            TokenType.REPLACE, TokenType.WHERE) else None
        if not self._curr:
            self.fail("expected the rows to insert: VALUES (..) or a SELECT")
        query = self._labelled("the INSERT query", self._parse_insert_query)
        target = table if columns is None else self.expression(
            exp.Schema(this=table, expressions=columns))
        return self.expression(exp.Insert(this=target, expression=query, overwrite=overwrite,
                                          exists=exists, by_name=by_name, where=replace_where))

    def _parse_insert_columns(self) -> list[exp.Expr] | None:
        """``(a, b)`` when it is a column list: names only, and a query after it.
        ``INSERT INTO t (SELECT ..)`` starts a parenthesized query instead."""
        if not self._match(TokenType.L_PAREN, advance=False):
            return None
        offset = 1
        while True:
            separator = self._peek(offset + 1)
            if not self._at_name(offset) or separator is None or \
                    separator.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
                return None
            if separator.token_type is TokenType.R_PAREN:
                break
            offset += 2
        if self._peek(offset + 2) is None:  # `INSERT INTO t (a)`: no rows follow
            return None
        self._advance()
        names = self._parse_csv(lambda: self._parse_name("a column name"))
        self._match_r_paren()
        seen: set[str] = set()
        for name in names:
            if name.name in seen:
                self.fail(f"the column list names {name.name} twice", column=name.name)
            seen.add(name.name)
        return list(names)

    def _parse_insert_query(self) -> exp.Expr | None:
        token = self._curr
        if not (token.token_type is TokenType.L_PAREN or is_word(token, *QUERY_STARTS)):
            self.fail(f"Expected a query (SELECT, WITH, VALUES), found {describe(token)}")
        query = self._parse_derived_table_values(allow_value_synonym=False) \
            or self._parse_ddl_select()
        if self._curr:
            self.fail(unexpected(self._curr))
        return query

    def _parse_delete(self) -> exp.Delete:
        if not self._match(TokenType.FROM, advance=False):
            self.fail(f"expected FROM, found {describe(self._curr)}")
        where = next((i for i in range(self._index, len(self._tokens))
                      if self._tokens[i].token_type is TokenType.WHERE), None)
        try:
            delete = super()._parse_delete()
        except ParseError as error:
            if where is not None and self._index > where and error.errors:
                error.errors[0]["what"] = error.errors[0].get("what") or "the DELETE condition"
            raise
        if self._curr:
            if delete.args.get("where") is not None:
                self.fail(unexpected(self._curr), what="the DELETE condition")
            self.fail(f"Unsupported {describe(self._curr)} after DELETE FROM "
                      f"{delete.this.sql(dialect='spark')}: write DELETE FROM t WHERE "
                      "<condition>, without a table alias", rule="unsupported-sql")
        return delete

    def _parse_where(self, skip_where_token: bool = False) -> exp.Where | None:
        if not skip_where_token and not self._match(TokenType.WHERE):
            return None
        start = self._curr
        if not start:
            self.fail("expected a condition after WHERE")
        where = super()._parse_where(skip_where_token=True)
        if where is not None and where.this is not None:
            where.this.meta["span"] = self._span_from(start)
        return where

    # ---- COMMENT ON, DESCRIBE, SHOW, CALL ------------------------------------------------

    def _parse_comment(self, allow_exists: bool = True) -> exp.Expr:
        """``COMMENT ON TABLE t | COLUMN [db.]t.c IS 'text' | NULL`` (NULL removes it)."""
        index = self._index
        if not (self._match(TokenType.ON)
                and self._match_set((TokenType.TABLE, TokenType.COLUMN))):
            self._retreat(index)
            return super()._parse_comment(allow_exists)
        kind = self._prev.text.upper()
        this = self._parse_table_parts(schema=True) if kind == "TABLE" \
            else self._parse_path("table.column")
        if not self._match(TokenType.IS):
            self.fail(f"expected IS, found {describe(self._curr)}")
        comment: exp.Expr = exp.Null() if self._match(TokenType.NULL) \
            else exp.Literal.string(self._parse_string_value("a comment"))
        return self.expression(exp.Comment(this=this, kind=kind, expression=comment))

    def _parse_describe(self) -> exp.Describe:
        if not self._next and self._at_name():  # DESC extended: a table so named
            return self.expression(exp.Describe(this=self._parse_table_parts(schema=True)))
        statement = super()._parse_describe()
        if self._curr:
            self.fail("Unsupported DESCRIBE of a column or partition: write DESCRIBE t",
                      rule="unsupported-sql")
        return statement

    def _parse_show_tables(self) -> exp.Show:
        database = self._parse_name("a database name") \
            if self._match_set((TokenType.FROM, TokenType.IN)) else None
        if database is not None and self._match(TokenType.DOT, advance=False):
            self.fail("Unsupported database name in SHOW TABLES: catalogs are not supported",
                      rule="unsupported-sql")
        like = self._parse_string() if self._match(TokenType.LIKE) else None
        return self.expression(exp.Show(this="TABLES", db=database, like=like))

    def _parse_call_or_command(self) -> exp.Expr:
        if self._prev.text.upper() != "CALL":
            return self._parse_command()
        procedure = self._parse_path("a procedure name")
        if not self._match(TokenType.L_PAREN):
            self.fail(f"expected '(', found {describe(self._curr)}")
        arguments: list[exp.Expr] = []
        if not self._match(TokenType.R_PAREN):
            arguments = self._parse_csv(self._parse_call_argument)
            self._match_r_paren()
        return self.expression(Call(this=procedure, expressions=arguments))

    def _parse_call_argument(self) -> exp.Expr | None:
        if self._at_name() and self._next.token_type is TokenType.FARROW:
            name = self._parse_name("an argument name")
            self._advance()
            return self.expression(exp.Kwarg(this=name, expression=self._parse_disjunction()))
        return self._parse_disjunction()


class SchemalabSpark(Spark):
    """The dialect: Spark's, with :class:`SchemalabParser`. Its tokenizer reads ``SHOW``
    and ``CALL`` statements as tokens rather than one opaque string."""

    class Tokenizer(Spark.Tokenizer):
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.SHOW, TokenType.COMMAND}

    Parser = SchemalabParser
