"""Column types in DDL: sqlglot's Spark type parser plus the Paimon spellings it lacks.

sqlglot reads ``ARRAY<..>``, ``MAP<..>``, ``STRUCT<..>`` and Spark's atomic types into
``DataType`` trees. In DDL (``schema=True``) :class:`TypeSyntax` adds:

* ``NOT NULL`` inside a type: ``ARRAY<INT NOT NULL>``, ``MAP<STRING, INT NOT NULL>``
  (the node gets ``nullable=False``);
* ``ROW<..>``/``ROW(..)``, empty ``STRUCT<>``, and struct fields named by any word
  (``STRUCT<timestamp: TIMESTAMP>``), with ``NOT NULL`` and ``COMMENT``;
* ``MULTISET<..>`` (and Flink's ``INT MULTISET``), as a user-defined ``MULTISET`` node;
* ``VECTOR<FLOAT, 3>`` (Paimon 1.4+), as a user-defined ``VECTOR`` node read whole;
* any other plain word (not a keyword) as a user-defined type (``BYTES``; ``GEOMETRY``
  is refused later, by Paimon's type rules, with their message);
* every node remembers the ``span`` of source it was read from, so an atomic type can be
  handed to :func:`schemalab.types.parse.parse_type` as written (``TIMESTAMP(3)`` and
  ``TIMESTAMP`` are one DataType to sqlglot, and two types to Paimon).

    >>> from schemalab.sql.dialect import SchemalabSpark
    >>> create = SchemalabSpark().parse("CREATE TABLE t (a ARRAY<INT NOT NULL>)")[0]
    >>> array = create.find(exp.ColumnDef).args["kind"]
    >>> array.is_type("array"), array.expressions[0].args["nullable"], array.meta["span"]
    (True, False, (18, 37))
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from schemalab.sql.syntax import SyntaxBase, describe, error_detail, is_word

__all__ = ["TypeSyntax"]

# Types whose opening bracket a statement may leave open: such a type is an unknown type.
_OPENERS = frozenset({"ARRAY", "MAP", "STRUCT", "ROW", "MULTISET"})


class TypeSyntax(SyntaxBase):
    """Paimon's type spellings on top of sqlglot's ``_parse_types`` (see the module)."""

    _type_depth = 0

    def _parse_types(self, check_func: bool = False, schema: bool = False,
                     allow_identifiers: bool = True,
                     with_collation: bool = False) -> exp.Expr | None:
        start, start_index = self._curr, self._index
        if not start:
            return None
        nested = self._type_depth > 0
        self._type_depth += 1
        try:
            if schema and is_word(start, "ARRAY", "MAP") \
                    and self._next.token_type is TokenType.L_PAREN:
                self.fail(f"write {start.text.upper()}<..>, not {start.text.upper()}(..)",
                          self._next)
            if schema and is_word(start, "VECTOR") and self._next \
                    and self._next.token_type is TokenType.LT:
                node: exp.Expr | None = self._parse_vector_type()
            elif schema and is_word(start, *_OPENERS - {"ARRAY", "MAP"}):
                node = self._parse_paimon_nested_type()
            else:
                node = super()._parse_types(check_func=check_func, schema=schema,
                                            allow_identifiers=allow_identifiers,
                                            with_collation=with_collation)
            if node is None and schema and start.token_type is TokenType.VAR:
                self._retreat(start_index + 1)
                node = exp.DataType(this=exp.DType.USERDEFINED, kind=start.text)
            if node is None and schema and nested:  # sqlglot would skip an empty element
                self.fail(f"expected a type, found {describe(start)}")
        except ParseError as error:
            # A nested type that does not parse is an unknown type, as Paimon would say; the
            # outermost one is named, with where it starts.
            if schema and is_word(start, *_OPENERS) and error_detail(error, "rule") in (
                    None, "sql-syntax", "unknown-type"):
                written = self.sql[start.start:(self._prev or start).end + 1]
                found = "end" if not self._curr else describe(self._curr)
                self.fail(f"unexpected {found}", start, rule="unknown-type", type=written)
            raise
        finally:
            self._type_depth -= 1
        if not isinstance(node, exp.DataType) or not schema:
            return node
        if node.this is exp.DType.ARRAY and node.expressions \
                and "span" not in node.expressions[0].meta:
            node = self._postfix_array(node, start_index)
        node.meta["span"] = self._span_from(start)
        while self._match_text_seq("MULTISET"):  # Flink's suffix form, INT MULTISET
            node = _multiset(node)
            node.meta["span"] = self._span_from(start)
        if nested and self._match_text_seq("NOT", "NULL"):
            node.set("nullable", False)
        return node

    def _postfix_array(self, node: exp.DataType, start_index: int) -> exp.DataType:
        """Flink's ``INT ARRAY``, which sqlglot reads without a span for ``INT`` and then
        takes whatever follows as array values (``, b STRING`` in a column list): the
        element gets its span, and reading goes back to just after ``ARRAY``."""
        for index in range(start_index, self._index):
            token = self._tokens[index]
            if token.token_type is TokenType.ARRAY and (
                    index + 1 >= len(self._tokens)
                    or self._tokens[index + 1].token_type is not TokenType.LT):
                element = node.expressions[0]
                element.meta["span"] = (self._tokens[start_index].start,
                                        self._tokens[index - 1].end + 1)
                self._retreat(index + 1)
                return exp.DataType(this=exp.DType.ARRAY, expressions=[element], nested=True)
        return node

    def _parse_paimon_nested_type(self) -> exp.DataType | None:
        """``ROW``/``STRUCT`` with ``<..>`` or ``(..)``, and ``MULTISET<..>``; a plain
        word is left to the caller (a user-defined type, or a name)."""
        assert self._curr
        word = self._curr.text.upper()
        after = self._next
        if word == "MULTISET":
            if not after or after.token_type is not TokenType.LT:
                return None
            self._advance(2)
            element = self._parse_types(schema=True)
            if element is None:
                self.fail(f"expected a type in MULTISET<..>, found {describe(self._curr)}")
            self._expect(TokenType.GT, "'>'")
            return _multiset(element)
        if after and after.token_type is TokenType.NEQ:  # STRUCT<>: no fields
            self._advance(2)
            return exp.DataType(this=exp.DType.STRUCT, expressions=[], nested=True)
        if not after or after.token_type not in (TokenType.LT, TokenType.L_PAREN):
            return None
        self._advance(2)
        close = TokenType.GT if after.token_type is TokenType.LT else TokenType.R_PAREN
        fields: list[exp.Expr] = []
        if not self._match(close):
            fields = self._parse_csv(self._parse_row_field)
            self._expect(close, "'>'" if close is TokenType.GT else "')'")
        return exp.DataType(this=exp.DType.STRUCT, expressions=fields, nested=True)

    def _parse_vector_type(self) -> exp.DataType:
        """Paimon 1.4+'s ``VECTOR<element, length>`` (``VectorType.asSQLString``), read up to
        its ``>``; its span is handed whole to :func:`schemalab.types.parse.parse_type`, which
        checks the element and the length."""
        self._advance(2)
        while self._curr and self._curr.token_type is not TokenType.GT:
            self._advance()
        self._expect(TokenType.GT, "'>'")
        return exp.DataType(this=exp.DType.USERDEFINED, kind="VECTOR")

    def _parse_row_field(self) -> exp.ColumnDef:
        """``name [:] TYPE [NOT NULL] [COMMENT 'text']``."""
        name = self._parse_name("a field name")
        self._match(TokenType.COLON)
        kind = self._parse_types(schema=True)
        if kind is None:
            self.fail(f"expected a type for field {name.name}, found {describe(self._curr)}")
        constraints: list[exp.Expr] = []
        if self._match(TokenType.COMMENT):
            comment = exp.Literal.string(self._parse_string_value("a field comment"))
            constraints.append(exp.ColumnConstraint(kind=exp.CommentColumnConstraint(
                this=comment)))
        return exp.ColumnDef(this=name, kind=kind, constraints=constraints)

    def _expect(self, token_type: TokenType, what: str) -> None:
        if not self._match(token_type):
            self.fail(f"expected {what}, found {describe(self._curr)}")


def _multiset(element: exp.Expr) -> exp.DataType:
    return exp.DataType(this=exp.DType.USERDEFINED, kind="MULTISET", expressions=[element],
                        nested=True)
