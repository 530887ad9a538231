"""``ALTER TABLE`` actions and table properties as Spark writes them, on sqlglot's trees.

sqlglot's Spark dialect reads ``ADD COLUMN(S)``, ``DROP COLUMN(S)``, ``RENAME COLUMN``,
``SET TBLPROPERTIES``, ``RENAME TO`` and simple ``ALTER COLUMN`` actions, but falls back
to an opaque ``Command`` for ``ALTER COLUMN c FIRST|AFTER x``, nested ``ALTER COLUMN s.x
TYPE ..``, Spark 4's ``ALTER COLUMN a TYPE .., b COMMENT ..`` lists, Hive's ``CHANGE c d
TYPE``, ``ADD COLUMN a INT, b INT`` and ``UNSET TBLPROPERTIES``, and reads keywords as
column names only in some places. :class:`AlterSyntax` adds those as trees: sqlglot's own
nodes (``ColumnDef``, ``AlterColumn``, ``RenameColumn``, ``Drop``, ``AlterSet``) where one
fits, and the two below where none does.

    >>> from schemalab.sql.dialect import SchemalabSpark
    >>> alter = SchemalabSpark().parse("ALTER TABLE t ALTER COLUMN s.x TYPE BIGINT, c FIRST")[0]
    >>> [type(action).__name__ for action in alter.args["actions"]]
    ['AlterColumn', 'MoveColumn']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, NoReturn

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from schemalab.sql.syntax import (
    SyntaxBase,
    describe,
    is_string,
    is_word,
    path_parts,
    unexpected,
)

__all__ = ["AlterSyntax", "MoveColumn", "UnsetProperties"]

ALTER_TABLE_ACTIONS = ("ALTER TABLE supports ADD COLUMN(S), DROP COLUMN(S), RENAME COLUMN, "
                       "ALTER/CHANGE COLUMN, SET/UNSET TBLPROPERTIES and RENAME TO")
_ALTER_COLUMN_ACTIONS = ("TYPE <type>, COMMENT '<text>', FIRST, AFTER <column>, SET NOT NULL "
                         "or DROP NOT NULL")
_ACTION_ADVICE = {
    "REPLACE": "it would drop and re-add every column; write ADD COLUMN, DROP COLUMN and "
               "ALTER COLUMN statements instead",
}


class MoveColumn(exp.Expression):
    """``ALTER COLUMN c FIRST | AFTER x``: ``this`` is the column, ``position`` a
    ``ColumnPosition``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "position": True}


class UnsetProperties(exp.Expression):
    """``UNSET TBLPROPERTIES [IF EXISTS] ('k', ..)``: ``expressions`` are the keys."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True, "exists": False}


Action = exp.Expr | list[exp.Expr] | None


class AlterSyntax(SyntaxBase):
    """Spark's ALTER TABLE grammar (see the module); anything else stops with an error that
    says what ALTER TABLE supports."""

    ALTER_PARSERS: ClassVar[dict[str, Callable[[AlterSyntax], Action]]] = {
        "ADD": lambda self: self._parse_alter_table_add(),
        "ALTER": lambda self: self._parse_alter_columns(change=False),
        "CHANGE": lambda self: self._parse_alter_columns(change=True),
        "DROP": lambda self: self._parse_alter_table_drop(),
        "RENAME": lambda self: self._parse_alter_table_rename(),
        "SET": lambda self: self._parse_alter_table_set(),
        "UNSET": lambda self: self._parse_alter_table_unset(),
    }

    # Comments are Spark string literals, where adjacent literals are one ('it''s' is "its").
    # Spark's CREATE TABLE clauses; other dialects' WITH (..) properties are not among them.
    PROPERTY_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | list[exp.Expr] | None]]] = {
        **{k: v for k, v in SyntaxBase.PROPERTY_PARSERS.items() if k != "WITH"},
        "COMMENT": lambda self: self.expression(exp.SchemaCommentProperty(
            this=exp.Literal.string(self._parse_string_value("the table comment")))),
        "TBLPROPERTIES": lambda self: self._parse_table_properties(),
        "USING": lambda self: self.expression(exp.FileFormatProperty(this=exp.var(".".join(
            part.name for part in path_parts(self._parse_path("a table provider")))))),
    }

    CONSTRAINT_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | None]]] = {
        **SyntaxBase.CONSTRAINT_PARSERS,
        "COMMENT": lambda self: self.expression(exp.CommentColumnConstraint(
            this=exp.Literal.string(self._parse_string_value("a column comment")))),
        # Spark takes a column's position among its options, in any order.
        "FIRST": lambda self: self.expression(exp.ColumnPosition(position="FIRST")),
        "AFTER": lambda self: self.expression(exp.ColumnPosition(
            this=self._parse_path("the column to place it after"), position="AFTER")),
    }

    # Spark's constraint characteristics; Paimon enforces none of them.
    KEY_CONSTRAINT_OPTIONS: ClassVar[dict[str, Sequence[str | Sequence[str]]]] = {
        **SyntaxBase.KEY_CONSTRAINT_OPTIONS,
        "ENFORCED": (),
    }

    _seen_table_properties = False

    def reset(self) -> None:
        super().reset()
        self._seen_table_properties = False

    def _parse_alter(self) -> exp.Alter | exp.Command:
        if not self._match(TokenType.TABLE):
            return super()._parse_alter()  # ALTER VIEW and the like: refused by kind
        table = self._parse_table_parts(schema=True)
        token = self._curr
        if not token or not is_word(token):
            self.fail(f"expected an action such as ADD COLUMN, found {describe(token)}")
        if not self._match_texts(self.ALTER_PARSERS):
            self._unsupported_action(token.text.upper(), self._next)
        action = self.ALTER_PARSERS[token.text.upper()](self)
        actions = action if isinstance(action, list) else [action] if action else []
        if self._curr:
            self.fail(unexpected(self._curr))
        return self.expression(exp.Alter(this=table, kind="TABLE", actions=actions))

    def _unsupported_action(self, action: str, after: Token | None) -> NoReturn:
        kind = f"{action} {after.text.upper()}" if after and is_word(after) else action
        advice = _ACTION_ADVICE.get(action, ALTER_TABLE_ACTIONS)
        self.fail(f"Unsupported ALTER TABLE .. {kind}: {advice}", rule="unsupported-sql")

    # ---- ADD, DROP, RENAME ---------------------------------------------------------------

    def _parse_alter_table_add(self) -> list[exp.Expr]:
        """``ADD COLUMN(S) [(]column [, column ..][)]``; each column is a ``ColumnDef``
        whose options (NOT NULL, COMMENT, FIRST/AFTER, ..) come in any order."""
        if not self._match_texts(("COLUMN", "COLUMNS")):
            self._unsupported_action("ADD", self._curr)
        wrapped = self._match(TokenType.L_PAREN)
        columns = self._parse_csv(self._parse_added_column)
        if wrapped:
            self._match_r_paren()
        return columns

    def _parse_added_column(self) -> exp.Expr:
        column = self._parse_field_def()
        if not isinstance(column, exp.ColumnDef):
            name = column.sql(dialect="spark") if column is not None else "?"
            self.fail(f"expected a data type for column {name}, found {describe(self._curr)}")
        return column

    def _parse_alter_table_drop(self) -> list[exp.Expr]:
        """``DROP COLUMN(S) [IF EXISTS] [(]path [, path ..][)]``."""
        if not self._match_texts(("COLUMN", "COLUMNS")):
            self._unsupported_action("DROP", self._curr)
        exists = self._match_text_seq("IF", "EXISTS")
        wrapped = self._match(TokenType.L_PAREN)
        paths = self._parse_csv(lambda: self._parse_path("a column name"))
        if wrapped:
            self._match_r_paren()
        return [self.expression(exp.Drop(kind="COLUMN", exists=exists, expressions=paths))]

    def _parse_alter_table_rename(self) -> exp.AlterRename | exp.RenameColumn | None:
        """``RENAME COLUMN path TO name``, or sqlglot's ``RENAME TO table``."""
        if not self._match(TokenType.COLUMN):
            if not self._match_text_seq("TO", advance=False):
                self.fail(f"expected COLUMN or TO after RENAME, found {describe(self._curr)}")
            return super()._parse_alter_table_rename()
        path = self._parse_path("a column name")
        if not self._match_text_seq("TO"):
            self.fail(f"expected TO, found {describe(self._curr)}")
        new_name = self._parse_name("the new column name")
        if self._match(TokenType.DOT, advance=False):
            self.fail(f"the new name is one name, not a path: RENAME COLUMN "
                      f"{path.sql(dialect='spark')} TO {new_name.sql(dialect='spark')}")
        return self.expression(exp.RenameColumn(this=path, to=new_name))

    # ---- ALTER / CHANGE COLUMN -----------------------------------------------------------

    def _parse_alter_columns(self, *, change: bool) -> list[exp.Expr]:
        """``ALTER|CHANGE [COLUMN] c action [, d action ..]`` (Spark 4's
        alterColumnSpecList), or Hive's ``CHANGE [COLUMN] c new_name TYPE [COMMENT ..]
        [FIRST|AFTER x]``."""
        self._match(TokenType.COLUMN)
        actions: list[exp.Expr] = []
        while True:
            path = self._parse_path("a column name")
            if change and not actions and self._at_hive_column_type():
                return self._parse_hive_change(path)
            actions.append(self._parse_alter_column_action(path))
            if not self._match(TokenType.COMMA):
                return actions

    def _at_hive_column_type(self) -> bool:
        # Spark tries the ALTER COLUMN actions first: `CHANGE c TYPE INT` is a type change,
        # `CHANGE c first INT` a Hive rename to `first`.
        token, after = self._curr, self._next
        if not token or not self._at_name():
            return False
        if token.token_type is TokenType.IDENTIFIER:
            return True
        word = token.text.upper()
        if word == "FIRST":
            return bool(after and after.token_type is not TokenType.COMMA)
        if word == "COMMENT":
            return bool(after and not is_string(after) and not is_word(after, "NULL"))
        return word not in ("TYPE", "AFTER", "SET", "DROP")

    def _parse_hive_change(self, path: exp.Expr) -> list[exp.Expr]:
        """Hive's form names the type again; sqlglot's tree for it is an ``AlterColumn``
        with ``rename_to``. A position follows as a ``MoveColumn`` of the new name."""
        new_name = self._parse_name("the new column name")
        column = path.sql(dialect="spark")
        dtype = self._for_column(path, lambda: self._parse_types(schema=True))
        if dtype is None:
            self.fail(f"expected a data type for column {column}, found {describe(self._curr)}")
        if self._match_text_seq("NOT", "NULL", advance=False):
            self.fail(f"Unsupported NOT NULL in CHANGE COLUMN {column}: to change nullability, "
                      f"write ALTER TABLE .. ALTER COLUMN {column} SET NOT NULL (or DROP NOT "
                      "NULL)", rule="unsupported-sql")
        comment = None
        if self._match(TokenType.COMMENT):
            comment = exp.Literal.string(self._parse_string_value("a column comment"))
        actions: list[exp.Expr] = [self.expression(exp.AlterColumn(
            this=path, rename_to=new_name, dtype=dtype, comment=comment))]
        if self._match_texts(("FIRST", "AFTER"), advance=False):
            parts = [*path_parts(path)[:-1], new_name.copy()]
            target = parts[0] if len(parts) == 1 else exp.Dot.build(parts)
            actions.append(self._parse_move(target))
        return actions

    def _parse_alter_column_action(self, path: exp.Expr) -> exp.Expr:
        column = path.sql(dialect="spark")
        token = self._curr
        if self._match_text_seq("TYPE"):
            dtype = self._for_column(path, lambda: self._parse_types(schema=True))
            if dtype is None:
                self.fail(f"expected a data type for column {column}, found "
                          f"{describe(self._curr)}")
            if self._match_text_seq("NOT", advance=False):
                self.fail(f"ALTER COLUMN {column} TYPE keeps the column's nullability; to "
                          f"change it, write ALTER COLUMN {column} SET NOT NULL")
            return self.expression(exp.AlterColumn(this=path, dtype=dtype))
        if self._match(TokenType.COMMENT):
            # COMMENT NULL is not Spark, but UpdateColumnComment.sql() writes it for "none".
            comment = exp.Null() if self._match(TokenType.NULL) else exp.Literal.string(
                self._parse_string_value("a comment"))
            return self.expression(exp.AlterColumn(this=path, comment=comment))
        if self._match_texts(("FIRST", "AFTER"), advance=False):
            return self._parse_move(path)
        if self._match_pair(TokenType.SET, TokenType.DEFAULT):
            return self.expression(exp.AlterColumn(this=path, default=self._parse_disjunction()))
        if self._match_pair(TokenType.DROP, TokenType.DEFAULT):
            return self.expression(exp.AlterColumn(this=path, drop=True))
        if self._match_text_seq("SET", "NOT", "NULL"):
            return self.expression(exp.AlterColumn(this=path, allow_null=False))
        if self._match_text_seq("DROP", "NOT", "NULL"):
            return self.expression(exp.AlterColumn(this=path, drop=True, allow_null=True))
        self.fail(f"ALTER COLUMN {column} needs an action: {_ALTER_COLUMN_ACTIONS}; found "
                  f"{describe(token)}", token)

    def _parse_move(self, column: exp.Expr) -> MoveColumn:
        """Spark's colPosition: ``FIRST`` or ``AFTER column``."""
        if self._match_text_seq("FIRST"):
            position = exp.ColumnPosition(position="FIRST")
        else:
            self._match_text_seq("AFTER")
            # Spark names a sibling (AFTER y); a path (AFTER s.y) is Iceberg's moveAfter
            position = exp.ColumnPosition(
                this=self._parse_path("the column to place it after"), position="AFTER")
        return self.expression(MoveColumn(this=column, position=position))

    # ---- SET / UNSET TBLPROPERTIES -------------------------------------------------------

    def _parse_alter_table_set(self) -> exp.AlterSet:
        if not self._match_text_seq("TBLPROPERTIES", advance=False):
            self._unsupported_action("SET", self._curr)
        return super()._parse_alter_table_set()

    def _parse_alter_table_unset(self) -> exp.Expr:
        if not self._match_text_seq("TBLPROPERTIES"):
            self._unsupported_action("UNSET", self._curr)
        exists = self._match_text_seq("IF", "EXISTS")
        keys = [exp.Literal.string(key) for key, _ in self._parse_property_list(values=False)]
        return self.expression(UnsetProperties(expressions=keys, exists=exists))

    def _parse_table_properties(self) -> list[exp.Expr]:
        if self._seen_table_properties:  # Spark refuses a clause given twice
            self.fail("TBLPROPERTIES is given twice", self._prev)
        self._seen_table_properties = True
        return [exp.Property(this=exp.Literal.string(key), value=value)
                for key, value in self._parse_property_list(values=True) if value is not None]

    def _parse_property_list(self, *, values: bool) -> list[tuple[str, exp.Expr | None]]:
        """Spark's propertyList: ``('k' = 'v', k.x = 1, 'k2' 'v2')``; keys are strings or
        dotted names, values strings, numbers or booleans. ``values`` says whether each key
        must have one (SET) or must not (UNSET)."""
        if not self._match(TokenType.L_PAREN):
            self.fail(f"expected '(', found {describe(self._curr)}")
        result: dict[str, exp.Expr | None] = {}
        while True:
            key_token = self._curr
            value: exp.Expr | None = None
            if is_string(key_token):
                assert key_token is not None
                key = key_token.text
                self._advance()
                if self._match(TokenType.EQ) or not self._at_list_end():
                    value = self._parse_property_value(key)
            else:
                key = ".".join(part.name for part in path_parts(
                    self._parse_path("a property key")))
                if self._match(TokenType.EQ) or not self._at_list_end():
                    value = self._parse_property_value(key)
            if key in result:
                self.fail(f"property {key!r} is given twice", key_token)
            if values and value is None:
                self.fail(f"property {key!r} needs a value: {key!r} = 'value'", key_token)
            if not values and value is not None:
                self.fail(f"UNSET TBLPROPERTIES takes keys only, found a value for {key!r}: "
                          f"write ({key!r})", key_token)
            result[key] = value
            if not self._match(TokenType.COMMA):
                break
        if not self._match(TokenType.R_PAREN):
            self.fail(f"expected ')', found {describe(self._curr)}")
        return list(result.items())

    def _at_list_end(self) -> bool:
        return not self._curr or self._curr.token_type in (TokenType.COMMA,
                                                               TokenType.R_PAREN)

    def _parse_property_value(self, key: str) -> exp.Expr:
        token = self._curr
        if is_string(token):
            return exp.Literal.string(self._parse_string_value("a value"))
        if token and token.token_type is TokenType.NUMBER:
            self._advance()
            return exp.Literal.number(token.text)
        if is_word(token, "TRUE", "FALSE"):
            assert token
            self._advance()
            return exp.Boolean(this=token.text.upper() == "TRUE")
        self.fail(f"expected a value for property {key!r} (a quoted string, a number, TRUE or "
                  f"FALSE), found {describe(token)}")
