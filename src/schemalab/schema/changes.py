"""Schema changes as values: what an ALTER TABLE asks for, before any rule is checked.

Each change prints itself as the Spark SQL that asks for it::

    >>> from schemalab.types import STRING
    >>> AddColumn(("c",), STRING(), move=Move("c", "AFTER", "a")).sql()
    'ADD COLUMN c STRING AFTER a'
    >>> RenameColumn(("addr", "zip"), "postcode").sql()
    'RENAME COLUMN addr.zip TO postcode'

:func:`schemalab.schema.apply.apply_changes` applies them under Paimon's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Literal, get_args

from schemalab.errors import SchemaChangeError
from schemalab.types.model import DataType, quote_identifier

MoveKind = Literal["FIRST", "AFTER", "BEFORE", "LAST"]


def path_text(path: Sequence[str]) -> str:
    """A nested column's dotted name, as Paimon's messages print it."""
    return ".".join(path)


def _path_sql(path: Sequence[str]) -> str:
    return ".".join(quote_identifier(p) for p in path)


def sql_string(text: str) -> str:
    """A Spark SQL string literal: backslash escapes, as Spark reads them."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Move:
    """A column position: FIRST, LAST, or AFTER/BEFORE a reference column.

    ``reference`` names a sibling of the moved column (Spark's ``AFTER y``); a reference
    written as a path (``AFTER s.y``, Iceberg's ``moveAfter("s.x", "s.y")``) keeps its
    parent in ``reference_parent``, so a reference in another struct can be refused.

        >>> Move("x", "AFTER", "y", reference_parent=("s",)).sql()
        'AFTER s.y'
    """

    field_name: str
    kind: MoveKind
    reference: str | None = None
    reference_parent: tuple[str, ...] | None = None

    def sql(self) -> str:
        if self.kind in ("FIRST", "LAST"):
            return self.kind
        return f"{self.kind} {_path_sql((*(self.reference_parent or ()), self.reference or ''))}"


@dataclass(frozen=True)
class AddColumn:
    path: tuple[str, ...]
    data_type: DataType
    comment: str | None = None
    move: Move | None = None
    #: ``DEFAULT <literal>`` as written (Iceberg v3's initial and write default; Paimon
    #: refuses it)
    default: str | None = None

    def sql(self) -> str:
        text = f"ADD COLUMN {_path_sql(self.path)} {self.data_type.sql()}"
        if self.default is not None:
            text += f" DEFAULT {self.default}"
        if self.comment is not None:
            text += " COMMENT " + sql_string(self.comment)
        if self.move is not None:
            text += " " + self.move.sql()
        return text


@dataclass(frozen=True)
class DropColumn:
    path: tuple[str, ...]
    #: ``DROP COLUMN IF EXISTS``: Iceberg tables skip a missing column (Spark's analyzer
    #: leaves it out); Paimon's schema rules still report it
    if_exists: bool = False

    def sql(self) -> str:
        return f"DROP COLUMN {'IF EXISTS ' if self.if_exists else ''}{_path_sql(self.path)}"


@dataclass(frozen=True)
class RenameColumn:
    path: tuple[str, ...]
    new_name: str

    def sql(self) -> str:
        return f"RENAME COLUMN {_path_sql(self.path)} TO {quote_identifier(self.new_name)}"


@dataclass(frozen=True)
class UpdateColumnType:
    path: tuple[str, ...]
    new_type: DataType
    #: Spark's ALTER COLUMN ... TYPE keeps the column's nullability
    keep_nullability: bool = True

    def sql(self) -> str:
        return f"ALTER COLUMN {_path_sql(self.path)} TYPE {self.new_type.sql()}"


@dataclass(frozen=True)
class UpdateColumnNullability:
    path: tuple[str, ...]
    nullable: bool

    def sql(self) -> str:
        return (f"ALTER COLUMN {_path_sql(self.path)} "
                f"{'DROP' if self.nullable else 'SET'} NOT NULL")


@dataclass(frozen=True)
class UpdateColumnComment:
    path: tuple[str, ...]
    comment: str | None

    def sql(self) -> str:
        text = "NULL" if self.comment is None else sql_string(self.comment)
        return f"ALTER COLUMN {_path_sql(self.path)} COMMENT {text}"


@dataclass(frozen=True)
class UpdateColumnDefault:
    """Paimon 1.2+'s ``updateColumnDefaultValue``: the text of the default a writer puts in
    place of an omitted or NULL value (as Spark passes it: ``'x'`` for a string); None
    drops it.

        >>> UpdateColumnDefault(("c",), "'x'").sql(), UpdateColumnDefault(("c",), None).sql()
        ("ALTER COLUMN c SET DEFAULT 'x'", 'ALTER COLUMN c DROP DEFAULT')
    """

    path: tuple[str, ...]
    default: str | None

    def sql(self) -> str:
        what = "DROP DEFAULT" if self.default is None else f"SET DEFAULT {self.default}"
        return f"ALTER COLUMN {_path_sql(self.path)} {what}"


@dataclass(frozen=True)
class UpdateColumnPosition:
    """``ALTER COLUMN [parent.]name FIRST | AFTER ref``; ``parent`` is the struct a nested
    column moves in (Iceberg moves fields only within their struct).

        >>> UpdateColumnPosition(Move("x", "FIRST"), parent=("s",)).sql()
        'ALTER COLUMN s.x FIRST'
    """

    move: Move
    parent: tuple[str, ...] = ()

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.parent, self.move.field_name)

    def sql(self) -> str:
        return f"ALTER COLUMN {_path_sql(self.path)} {self.move.sql()}"


@dataclass(frozen=True)
class SetOption:
    key: str
    value: str

    def sql(self) -> str:
        return f"SET TBLPROPERTIES ({sql_string(self.key)} = {sql_string(self.value)})"


@dataclass(frozen=True)
class RemoveOption:
    key: str

    def sql(self) -> str:
        return f"UNSET TBLPROPERTIES ({sql_string(self.key)})"


@dataclass(frozen=True)
class UpdateComment:
    comment: str | None

    def sql(self) -> str:
        if self.comment is None:
            return "UNSET TBLPROPERTIES ('comment')"
        return f"SET TBLPROPERTIES ('comment' = {sql_string(self.comment)})"


def _name(v: Any) -> str | None:
    return None if isinstance(v, str) and v else "must be a non-empty string"


def _path(v: Any) -> str | None:
    ok = isinstance(v, tuple | list) and v and all(isinstance(p, str) and p for p in v)
    return None if ok else "must be a non-empty tuple of names"


def _of(kind: Any, what: str) -> Callable[[Any], str | None]:
    return lambda v: None if isinstance(v, kind) else f"must be {what}"


#: What each field of a change (or of a ColumnSpec) must hold, by field name.
_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "path": _path, "new_name": _name, "field_name": _name, "key": _name, "name": _name,
    "reference": _name, "value": _of(str, "a string"), "comment": _of(str, "a string"),
    "default": _of(str, "a string (the default's SQL text)"),
    "data_type": _of(DataType, "a DataType (schemalab.types: INT(), STRING(), ...)"),
    "new_type": _of(DataType, "a DataType (schemalab.types: INT(), STRING(), ...)"),
    "nullable": _of(bool, "True or False"), "keep_nullability": _of(bool, "True or False"),
    "move": _of(Move, "a Move"),
    "parent": _of(tuple, "a tuple of names"), "reference_parent": _of(tuple, "a tuple of names"),
    "kind": lambda v: None if v in get_args(MoveKind) else f"must be one of {get_args(MoveKind)}",
}


def change_problem(change: object) -> tuple[str, str | None] | None:
    """What is wrong with the values of a change (or a :class:`ColumnSpec`) built in Python,
    and the column it names; None when every field holds what it must. (A change of an
    unknown kind is not this function's business.)

        >>> change_problem(AddColumn(("c",), "INT"))[0]
        "AddColumn.data_type must be a DataType (schemalab.types: INT(), STRING(), ...), not 'INT'"
    """
    if not is_dataclass(change) or isinstance(change, type):
        return None
    column = getattr(change, "name", None)
    if _path(getattr(change, "path", None)) is None:
        column = path_text(change.path)  # type: ignore[attr-defined]
    for f in fields(change):
        value, check = getattr(change, f.name), _CHECKS.get(f.name)
        if check is None or (value is None and "None" in str(f.type)):
            continue
        problem = check(value)
        if problem is not None:
            return f"{type(change).__name__}.{f.name} {problem}, not {value!r}", column
    move = getattr(change, "move", None)
    return change_problem(move) if isinstance(move, Move) else None


def create_problem(partition_keys: object, primary_keys: object, options: object,
                   comment: object) -> str | None:
    """What is wrong with the types of a CREATE's keys, options or comment built in Python
    (a string where a list of names goes, a number as an option value, ...), or None."""
    for what, keys in (("partition_keys", partition_keys), ("primary_keys", primary_keys)):
        if isinstance(keys, str) or not isinstance(keys, Sequence) \
                or not all(isinstance(k, str) for k in keys):
            return f"{what} must be a list of column names, not {keys!r}"
    if options is not None and not (isinstance(options, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in options.items())):
        return f"options must map strings to strings, not {options!r}"
    if comment is not None and not isinstance(comment, str):
        return f"comment must be a string, not {comment!r}"
    return None


SchemaChange = (AddColumn | DropColumn | RenameColumn | UpdateColumnType
                | UpdateColumnNullability | UpdateColumnComment | UpdateColumnPosition
                | UpdateColumnDefault | SetOption | RemoveOption | UpdateComment)


@dataclass(frozen=True)
class ColumnSpec:
    """A column of CREATE TABLE, before it has an id; ``default`` is the text of its default
    value (``DEFAULT 'x'``), as Paimon stores it."""

    name: str
    data_type: DataType
    comment: str | None = None
    default: str | None = None


class ChangeContext:
    """The table a change applies to: every error names it, the column and the rule."""

    def __init__(self, table: str) -> None:
        self.table = table

    def fail(self, message: str, *, column: str | None = None, rule: str,
             names_table: bool = False) -> SchemaChangeError:
        text = message if names_table else f"{message} (table {self.table})"
        return SchemaChangeError(text, table=self.table, column=column, rule=rule)

    def check_values(self, change: object) -> None:
        """Refuse a change (or column) built in Python whose fields hold the wrong types."""
        problem = change_problem(change)
        if problem is not None:
            raise self.fail(problem[0], column=problem[1], rule="change-value")

    def not_exists(self, column: str) -> SchemaChangeError:
        return self.fail(f"Column {column} does not exist in the {self.table} table.",
                         column=column, rule="column-must-exist", names_table=True)

    def already_exists(self, column: str) -> SchemaChangeError:
        return self.fail(f"Column {column} already exists in the {self.table} table.",
                         column=column, rule="column-must-be-new", names_table=True)
