"""DDL trees → statement values: ``CREATE TABLE`` → :class:`CreateTable`, ``ALTER TABLE``
and ``COMMENT ON`` → the change values of :mod:`schemalab.schema.changes`, and so on. What
a tree holds that Paimon tables do not support is refused here, by name, with advice.

    >>> from schemalab.sql.reader import read
    >>> parsed = read("ALTER TABLE T ADD COLUMN c STRING NOT NULL AFTER a", "ALTER TABLE")
    >>> [change.sql() for change in alter_table(parsed).changes]
    ['ADD COLUMN c STRING NOT NULL AFTER a']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from schemalab.errors import SqlError
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
    UpdateColumnDefault,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from schemalab.sql.alter_syntax import MoveColumn, UnsetProperties
from schemalab.sql.column_types import TypeTextError, paimon_type
from schemalab.sql.dialect import Call
from schemalab.sql.queries import table_name
from schemalab.sql.reader import Parsed
from schemalab.sql.statements import (
    AlterTable,
    CreateTable,
    DescribeTable,
    DropTable,
    RenameTable,
    ShowTables,
    TableName,
)
from schemalab.sql.statements import Call as CallStatement
from schemalab.sql.syntax import path_parts
from schemalab.types.model import DataType

__all__ = ["alter_table", "call", "comment_on", "create_table", "describe_table",
           "drop_table", "show_tables"]

_CREATE_CLAUSE_ADVICE: dict[type[exp.Expr], tuple[str, str]] = {
    exp.OptionsProperty: ("OPTIONS", "write table options as TBLPROPERTIES ('key' = 'value')"),
    exp.LocationProperty: ("LOCATION", "tables live in the warehouse; leave LOCATION out"),
    exp.ClusteredByProperty: ("CLUSTERED", "set the bucket count as TBLPROPERTIES "
                                           "('bucket' = 'N', 'bucket-key' = 'col')"),
    exp.ClusterProperty: ("CLUSTER", "leave CLUSTER BY out"),
    exp.RowFormatDelimitedProperty: ("ROW", "leave ROW FORMAT out: files are Parquet"),
    exp.RowFormatSerdeProperty: ("ROW", "leave ROW FORMAT out: files are Parquet"),
    exp.LikeProperty: ("LIKE", "write the columns out: CREATE TABLE t (a INT, ...)"),
}
_COLUMN_OPTIONS: dict[type[exp.Expr], tuple[str, str]] = {
    exp.DefaultColumnConstraint: ("DEFAULT", "a default is a literal (Paimon casts its text)"),
    exp.ComputedColumnConstraint: ("GENERATED", "generated columns are not supported"),
    exp.GeneratedAsIdentityColumnConstraint: ("GENERATED", "generated columns are not supported"),
    exp.GeneratedAsRowColumnConstraint: ("GENERATED", "generated columns are not supported"),
    exp.CollateColumnConstraint: ("COLLATE", "collations are not supported"),
}


class _Statement:
    """What every error about one statement names: which statement, which table."""

    def __init__(self, parsed: Parsed, what: str, table: TableName | None = None) -> None:
        self.parsed = parsed
        self.what = what
        self.table = None if table is None else table.qualified()

    @property
    def text(self) -> str:
        return self.parsed.statement_text

    def syntax(self, message: str, *, column: str | None = None) -> SqlError:
        return SqlError(f"Cannot parse {self.what}: {message}", table=self.table, column=column,
                        rule="sql-syntax")

    def unsupported(self, message: str, *, column: str | None = None) -> SqlError:
        return SqlError(message, table=self.table, column=column, rule="unsupported-sql")

    def data_type(self, node: exp.Expr | None, column: str) -> DataType:
        if not isinstance(node, exp.DataType):
            raise self.syntax(f"expected a data type for column {column}")
        try:
            return paimon_type(node, self.parsed.text)
        except TypeTextError as e:
            text = self.parsed.text
            line = text.count("\n", 0, e.start) + 1
            col = e.start - (text.rfind("\n", 0, e.start) + 1) + 1
            raise SqlError(f"Unknown data type {e.written!r} for column {column} in {self.what}: "
                           f"{e.reason} (line {line}, column {col})", table=self.table,
                           column=column, rule="unknown-type") from e


# ---- CREATE TABLE --------------------------------------------------------------------------


def create_table(parsed: Parsed) -> CreateTable:
    tree = parsed.tree
    assert isinstance(tree, exp.Create)
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    table = schema.this if schema is not None else tree.this
    assert isinstance(table, exp.Table)
    name = table_name(table)
    s = _Statement(parsed, "CREATE TABLE", name)
    extra = [key for key, value in tree.args.items()
             if value and key not in ("this", "kind", "exists", "properties", "expression")]
    if extra:
        raise s.syntax(f"unexpected {extra[0].upper()}")
    if tree.expression is not None:
        raise s.unsupported(_create_clause("AS", "create the table with its columns, then "
                                                 "INSERT INTO t SELECT .."))
    columns, primary_keys = _table_elements(s, schema.expressions if schema else [])
    partition_keys: tuple[str, ...] = ()
    comment: str | None = None
    options: dict[str, str] = {}
    seen: set[str] = set()
    using: str | None = None
    partitioned: exp.Expr | None = None
    for prop in tree.args["properties"].expressions if tree.args.get("properties") else []:
        clause = _clause_of(prop)
        if clause in ("PARTITIONED", "COMMENT", "USING"):
            if clause in seen:  # Spark refuses duplicate clauses too
                raise s.syntax(f"{clause} is given twice")
            seen.add(clause)
        if isinstance(prop, exp.PartitionedByProperty):
            partitioned = prop.this
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
        elif type(prop) is exp.Property:  # TBLPROPERTIES; the clauses are subclasses
            key = _property_key(prop)
            if key in options:
                raise s.syntax(f"property {key!r} is given twice")
            options[key] = _property_value(prop)
        elif isinstance(prop, exp.FileFormatProperty) and not prop.args.get("hive_format"):
            using = prop.name.lower()
            if using not in ("paimon", "iceberg"):
                raise s.unsupported(f"Unsupported USING {prop.name} in CREATE TABLE: schemalab "
                                    "tables are Paimon or Iceberg tables; write USING paimon, "
                                    "USING iceberg or leave USING out")
        elif isinstance(prop, exp.FileFormatProperty):
            raise s.unsupported(_create_clause("STORED", "leave STORED AS out: files are "
                                                         "Parquet"))
        else:
            clause, advice = _CREATE_CLAUSE_ADVICE.get(
                type(prop), (prop.sql(dialect="spark"), "leave it out"))
            raise s.unsupported(_create_clause(clause, advice))
    transforms: tuple[tuple[str, str], ...] = ()
    if partitioned is not None and using == "iceberg":
        transforms = iceberg_transforms(s, partitioned, columns)
    elif partitioned is not None and using is None and any(
            not isinstance(e, exp.Identifier | exp.Column | exp.ColumnDef)
            for e in (partitioned.expressions if isinstance(partitioned, exp.Schema)
                      else [partitioned])):
        transforms = iceberg_transforms(s, partitioned, columns)  # an Iceberg warehouse's
    elif partitioned is not None:
        partition_keys = _partition_keys(s, partitioned, columns)
    if "comment" in options:
        if comment is not None:
            raise s.syntax("the table comment is given twice: as COMMENT and as "
                           "TBLPROPERTIES ('comment' = ...)")
        comment = options.pop("comment")
    if not columns:
        raise s.syntax("a table needs columns: CREATE TABLE t (a INT, b STRING)")
    return CreateTable(name, tuple(columns), partition_keys, primary_keys, options, comment,
                       bool(tree.args.get("exists")), s.text, using, transforms)


def _create_clause(clause: str, advice: str) -> str:
    return f"Unsupported {clause} clause in CREATE TABLE: {advice}"


def _clause_of(prop: exp.Expr) -> str:
    if isinstance(prop, exp.PartitionedByProperty):
        return "PARTITIONED"
    if isinstance(prop, exp.SchemaCommentProperty):
        return "COMMENT"
    if isinstance(prop, exp.FileFormatProperty) and not prop.args.get("hive_format"):
        return "USING"
    return ""


def _table_elements(s: _Statement, elements: Sequence[exp.Expr]
                    ) -> tuple[list[ColumnSpec], tuple[str, ...]]:
    """``(col TYPE .., PRIMARY KEY (..))``: the columns and the primary key, if given."""
    columns: list[ColumnSpec] = []
    primary_keys: tuple[str, ...] | None = None
    for element in elements:
        keys: tuple[str, ...] | None = None
        if isinstance(element, exp.ColumnDef):
            column, is_key = _column_definition(s, element)
            columns.append(column)
            keys = (column.name,) if is_key else None
        elif isinstance(element, exp.Constraint | exp.PrimaryKey):
            keys = _primary_key(s, element)
        elif isinstance(element, exp.Identifier):
            raise s.syntax(f"expected a data type for column {element.name}")
        else:
            raise s.unsupported(f"Unsupported constraint {element.sql(dialect='spark')} in "
                                "CREATE TABLE: only PRIMARY KEY (..) is supported")
        if keys is not None:
            if primary_keys is not None:
                raise s.syntax("PRIMARY KEY is given twice")
            primary_keys = keys
    return columns, primary_keys or ()


def _primary_key(s: _Statement, element: exp.Expr) -> tuple[str, ...]:
    key = element.expressions[0] if isinstance(element, exp.Constraint) and len(
        element.expressions) == 1 else element
    if not isinstance(key, exp.PrimaryKey):
        raise s.unsupported(f"Unsupported constraint {element.sql(dialect='spark')} in CREATE "
                            "TABLE: only PRIMARY KEY (..) is supported")
    # Paimon never enforces keys on write: NOT ENFORCED, RELY and NORELY change nothing.
    return tuple(part.name for part in key.expressions)


def _column_definition(s: _Statement, column: exp.ColumnDef) -> tuple[ColumnSpec, bool]:
    """``name TYPE [NOT NULL] [COMMENT '..'] [PRIMARY KEY]``, options in any order."""
    if not isinstance(column.this, exp.Identifier):
        raise s.syntax(f"expected a column name, found {column.this.sql(dialect='spark')}")
    name = column.name
    data_type = s.data_type(column.args.get("kind"), name)
    options = _column_options(s, column, name)
    if options.position is not None:
        raise s.syntax(f"FIRST/AFTER places a column only in ALTER TABLE .. ADD COLUMN, "
                       f"found it for column {name}")
    if options.extra:
        raise s.unsupported(_column_option_advice(options.extra[0], name), column=name)
    return ColumnSpec(name, data_type.with_nullable(not options.not_null), options.comment,
                      options.default), options.primary_key


@dataclass
class _ColumnOptions:
    """What follows a column's type: NOT NULL, COMMENT, a position, PRIMARY KEY, and the
    constraints Paimon has no place for (``extra``)."""

    not_null: bool = False
    comment: str | None = None
    position: exp.ColumnPosition | None = None
    primary_key: bool = False
    default: str | None = None
    extra: list[exp.Expr] = field(default_factory=list)


def _column_options(s: _Statement, column: exp.ColumnDef, name: str) -> _ColumnOptions:
    options = _ColumnOptions()
    for constraint in column.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            if kind.args.get("allow_null"):  # a bare NULL: not Spark's syntax
                raise s.syntax(f"unexpected NULL for column {name}: a column is nullable "
                               "unless it says NOT NULL")
            options.not_null = True
        elif isinstance(kind, exp.CommentColumnConstraint):
            if options.comment is not None:
                raise s.syntax(f"column {name} has two comments")
            options.comment = kind.name
        elif isinstance(kind, exp.ColumnPosition):
            if options.position is not None:
                raise s.syntax(f"column {name} has two positions")
            options.position = kind
        elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
            options.primary_key = True
        elif isinstance(kind, exp.DefaultColumnConstraint) and isinstance(
                kind.this, exp.Literal | exp.Neg | exp.Boolean):
            options.default = kind.this.sql(dialect="spark")
        else:
            options.extra.append(kind if kind is not None else constraint)
    return options


def _column_option_advice(constraint: exp.Expr, column: str) -> str:
    option, what = _COLUMN_OPTIONS.get(type(constraint), (
        constraint.sql(dialect="spark").split(" ")[0].upper() or "constraint",
        "only PRIMARY KEY constraints are supported"))
    return f"Unsupported {option} for column {column}: {what}"


def _partition_keys(s: _Statement, fields: exp.Expr,
                    columns: list[ColumnSpec]) -> tuple[str, ...]:
    """``PARTITIONED BY (a, b)`` naming columns, or ``(x INT, ..)`` defining new ones,
    which are appended to ``columns``; Spark does not mix the two forms."""
    names: list[str] = []
    typed: list[bool] = []
    for element in fields.expressions if isinstance(fields, exp.Schema) else [fields]:
        if isinstance(element, exp.Identifier):
            name = element.name
            typed.append(False)
            if name not in {c.name for c in columns}:
                raise SqlError(
                    f"Partition column {name} is not a column of table {s.table}: the columns "
                    f"are {[c.name for c in columns]}. Name a column, or give a type to add "
                    f"one: PARTITIONED BY ({name} STRING)", table=s.table, column=name,
                    rule="partition-keys-must-be-columns")
        elif isinstance(element, exp.ColumnDef) and isinstance(element.this, exp.Identifier):
            column, is_key = _column_definition(s, element)
            name = column.name
            typed.append(True)
            if is_key:
                raise s.syntax(f"partition column {name} cannot be a PRIMARY KEY here")
            if name in {c.name for c in columns}:
                raise s.syntax(f"partition column {name} is already a column; write "
                               f"PARTITIONED BY ({name}) without a type")
            columns.append(column)
        else:
            written = element.sql(dialect="spark")
            raise s.unsupported(f"Unsupported partition transform {written} in PARTITIONED BY: "
                                "partition by plain top-level columns, e.g. PARTITIONED BY (dt)",
                                column=written)
        if name in names:
            raise s.syntax(f"partition column {name} is given twice")
        names.append(name)
    if len(set(typed)) > 1:
        raise s.syntax("PARTITIONED BY cannot mix column names and new typed columns")
    return tuple(names)


# ---- ALTER TABLE, COMMENT ON ---------------------------------------------------------------


def alter_table(parsed: Parsed) -> AlterTable | RenameTable:
    tree = parsed.tree
    assert isinstance(tree, exp.Alter) and isinstance(tree.this, exp.Table)
    name = table_name(tree.this)
    s = _Statement(parsed, "ALTER TABLE", name)
    actions = tree.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        return RenameTable(name, table_name(actions[0].this), s.text)
    changes: list[SchemaChange] = []
    for action in actions:
        changes.extend(_changes(s, action))
    return AlterTable(name, tuple(changes), s.text)


def _changes(s: _Statement, action: exp.Expr) -> list[SchemaChange]:
    if isinstance(action, exp.ColumnDef):
        return [_add_column(s, action)]
    if isinstance(action, exp.Drop):
        # IF EXISTS: an Iceberg table skips a missing column, as Spark's analyzer leaves it
        # out; Paimon's schema rules still report it.
        exists = bool(action.args.get("exists"))
        return [DropColumn(_path(path), exists) for path in action.expressions]
    if isinstance(action, exp.RenameColumn):
        return [RenameColumn(_path(action.this), action.args["to"].name)]
    if isinstance(action, exp.AlterColumn):
        return _alter_column(s, action)
    if isinstance(action, MoveColumn):
        return [_move(s, _path(action.this), action.args["position"])]
    if isinstance(action, exp.AlterSet):
        properties = [p for group in action.expressions for p in
                      (group.expressions if isinstance(group, exp.Properties) else [group])]
        return [_set_property(_property_key(p), _property_value(p)) for p in properties]
    if isinstance(action, UnsetProperties):
        return [UpdateComment(None) if key.name == "comment" else RemoveOption(key.name)
                for key in action.expressions]
    raise s.unsupported(f"Unsupported ALTER TABLE action {action.sql(dialect='spark')}")


def _add_column(s: _Statement, column: exp.ColumnDef) -> AddColumn:
    """NOT NULL is kept in the type: refusing it is the schema rules' job, with Paimon's
    message."""
    path = _path(column.this)
    name = ".".join(path)
    data_type = s.data_type(column.args.get("kind"), name)
    options = _column_options(s, column, name)
    if options.primary_key:
        raise s.unsupported(f"Unsupported PRIMARY KEY for column {name}: a table's primary "
                            "key is fixed when it is created", column=name)
    if options.extra:
        raise s.unsupported(_column_option_advice(options.extra[0], name), column=name)
    move = None if options.position is None else _position(path[-1], options.position)
    return AddColumn(path, data_type.with_nullable(not options.not_null), options.comment, move,
                     options.default)


def _alter_column(s: _Statement, action: exp.AlterColumn) -> list[SchemaChange]:
    path = _path(action.this)
    column = ".".join(path)
    rename_to = action.args.get("rename_to")
    if rename_to is not None:  # Hive's CHANGE c d TYPE: the type is always named again
        target = (*path[:-1], rename_to.name)
        changes: list[SchemaChange] = []
        if rename_to.name != path[-1]:
            changes.append(RenameColumn(path, rename_to.name))
        changes.append(UpdateColumnType(target, s.data_type(action.args.get("dtype"), column)))
        if action.args.get("comment") is not None:
            changes.append(UpdateColumnComment(target, action.args["comment"].name))
        return changes
    if action.args.get("dtype") is not None:
        return [UpdateColumnType(path, s.data_type(action.args["dtype"], column))]
    comment = action.args.get("comment")
    if comment is not None:
        return [UpdateColumnComment(path, None if isinstance(comment, exp.Null)
                                    else comment.name)]
    allow_null = action.args.get("allow_null")
    if allow_null is not None:
        return [UpdateColumnNullability(path, nullable=bool(allow_null))]
    default = action.args.get("default")
    if default is not None:
        if not isinstance(default, exp.Literal | exp.Neg | exp.Boolean):
            raise s.unsupported(f"Unsupported SET DEFAULT for column {column}: a default is a "
                                f"literal (Paimon casts its text), not "
                                f"{default.sql(dialect='spark')}", column=column)
        return [UpdateColumnDefault(path, default.sql(dialect="spark"))]
    if action.args.get("drop"):
        return [UpdateColumnDefault(path, None)]
    raise s.unsupported(f"Unsupported ALTER COLUMN {column} action", column=column)


def _move(s: _Statement, path: tuple[str, ...], position: exp.ColumnPosition) -> SchemaChange:
    """``ALTER COLUMN [s.]x FIRST | AFTER y``: a nested column moves within its struct (the
    schema rules refuse what a format does not allow)."""
    return UpdateColumnPosition(_position(path[-1], position), parent=path[:-1])


def _position(field_name: str, position: exp.ColumnPosition) -> Move:
    if position.args["position"] == "FIRST":
        return Move(field_name, "FIRST")
    ref = _path(position.this)
    return Move(field_name, "AFTER", ref[-1], reference_parent=ref[:-1] if len(ref) > 1
                else None)


def _path(node: exp.Expr) -> tuple[str, ...]:
    return tuple(part.name for part in path_parts(node))


def _property_key(prop: exp.Expr) -> str:
    return prop.this.name if isinstance(prop.this, exp.Literal) else prop.this.sql()


def _property_value(prop: exp.Expr) -> str:
    value = prop.args.get("value")
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    return value.name if value is not None else ""


def _set_property(key: str, value: str) -> SchemaChange:
    # Spark keeps the table comment in the 'comment' property.
    return UpdateComment(value) if key == "comment" else SetOption(key, value)


def comment_on(parsed: Parsed) -> AlterTable:
    tree = parsed.tree
    assert isinstance(tree, exp.Comment)
    comment = None if isinstance(tree.expression, exp.Null) else tree.expression.name
    if tree.args.get("kind") == "TABLE":
        name = table_name(tree.this)
        return AlterTable(name, (UpdateComment(comment),), parsed.statement_text)
    parts = _path(tree.this)
    if not 2 <= len(parts) <= 3:
        raise _Statement(parsed, "COMMENT ON").syntax(
            f"COMMENT ON COLUMN names table.column or database.table.column, found "
            f"{'.'.join(parts)}")
    name = TableName(None, parts[0]) if len(parts) == 2 else TableName(*parts[:2])
    return AlterTable(name, (UpdateColumnComment((parts[-1],), comment),),
                      parsed.statement_text)


# ---- DROP, SHOW, DESCRIBE, CALL ------------------------------------------------------------


def drop_table(parsed: Parsed) -> DropTable:
    tree = parsed.tree
    assert isinstance(tree, exp.Drop)
    tables = tree.args.get("tables") or []
    if len(tables) != 1 or not isinstance(tables[0], exp.Table):
        raise _Statement(parsed, "DROP TABLE").syntax("name one table: DROP TABLE t")
    extra = [key.upper() for key in ("cascade", "restrict", "constraints", "sync", "force")
             if tree.args.get(key)]
    if extra:
        raise _Statement(parsed, "DROP TABLE", table_name(tables[0])).syntax(
            f"unexpected {extra[0]}: write DROP TABLE [IF EXISTS] t [PURGE]")
    # PURGE changes nothing: Paimon removes a dropped table's files anyway.
    return DropTable(table_name(tables[0]), bool(tree.args.get("exists")),
                     parsed.statement_text)


def show_tables(parsed: Parsed) -> ShowTables:
    tree = parsed.tree
    assert isinstance(tree, exp.Show)
    if tree.args.get("like") is not None:
        raise SqlError("Unsupported SHOW TABLES .. LIKE: write SHOW TABLES or SHOW TABLES IN "
                       "db, without a pattern", rule="unsupported-sql")
    database = tree.args.get("db")
    return ShowTables(None if database is None else database.name,
                      parsed.statement_text)


def describe_table(parsed: Parsed) -> DescribeTable:
    tree = parsed.tree
    assert isinstance(tree, exp.Describe)
    if not isinstance(tree.this, exp.Table):
        raise SqlError(f"Unsupported DESCRIBE of {tree.this.sql(dialect='spark')}: write "
                       "DESCRIBE t", rule="unsupported-sql")
    name = table_name(tree.this)
    if tree.args.get("partition") or tree.expressions:
        raise _Statement(parsed, "DESCRIBE", name).unsupported(
            "Unsupported DESCRIBE of a column or partition: write DESCRIBE t")
    if tree.args.get("style"):
        raise _Statement(parsed, "DESCRIBE", name).unsupported(
            f"Unsupported DESCRIBE {tree.args['style']}: write DESCRIBE t; "
            "Warehouse.table(t).history() shows schemas, snapshots and files")
    return DescribeTable(name, parsed.statement_text)


def call(parsed: Parsed) -> CallStatement:
    tree = parsed.tree
    assert isinstance(tree, Call)
    s = _Statement(parsed, "CALL")
    arguments: list[tuple[str, str]] = []
    for position, argument in enumerate(tree.expressions, 1):
        # named (table => 'db.t') or positional ('db.t'), as Paimon's grammar takes them
        named = isinstance(argument, exp.Kwarg)
        value = argument.expression if named else argument
        what = f"argument {argument.name}" if named else f"argument {position}"
        if isinstance(value, exp.Boolean):
            text = "true" if value.this else "false"
        elif isinstance(value, exp.Literal):
            text = value.name
        else:
            raise s.syntax(f"{what} takes a string, a number or a boolean, "
                           f"found {value.sql(dialect='spark')}")
        if named and any(name.lower() == argument.name.lower() for name, _ in arguments):
            raise s.syntax(f"argument {argument.name} is given twice")
        arguments.append((argument.name if named else "", text))
    return CallStatement(tree.name, tuple(arguments), s.text)


#: Spark's partition transform functions (Iceberg's Spark catalog) → Iceberg's transforms
_ICEBERG_TRANSFORMS = {"years": "year", "months": "month", "days": "day", "hours": "hour",
                       "year": "year", "month": "month", "day": "day", "hour": "hour",
                       "date_hour": "hour", "date": "day"}


def iceberg_transforms(s: _Statement, fields: exp.Expr,
                       columns: list[ColumnSpec]) -> tuple[tuple[str, str], ...]:
    """``PARTITIONED BY (dt, bucket(16, id), days(ts), truncate(4, s))`` of an Iceberg table:
    (transform, column) pairs in Iceberg's spelling (``identity``, ``bucket[16]``...)."""
    out: list[tuple[str, str]] = []
    for element in fields.expressions if isinstance(fields, exp.Schema) else [fields]:
        width = element.args.get("expression")
        if isinstance(element, exp.Identifier | exp.Column):
            out.append(("identity", _dotted(element)))
            continue
        if isinstance(element, exp.PartitionedByBucket | exp.PartitionByTruncate) and \
                isinstance(width, exp.Literal) and not width.is_string:
            kind = "bucket" if isinstance(element, exp.PartitionedByBucket) else "truncate"
            out.append((f"{kind}[{int(width.this)}]", _dotted(element.this)))
            continue
        if isinstance(element, exp.Anonymous | exp.Func) and len(element.expressions) == 1:
            name = element.name.lower() if isinstance(element, exp.Anonymous) else \
                element.sql_name().lower()
            arg = element.expressions[0]
            if name in _ICEBERG_TRANSFORMS and isinstance(arg, exp.Column | exp.Identifier):
                out.append((_ICEBERG_TRANSFORMS[name], _dotted(arg)))
                continue
        if isinstance(element, exp.ColumnDef):
            raise s.unsupported("An Iceberg table is partitioned by its columns: "
                                "PARTITIONED BY (dt) or a transform, not a new typed column",
                                column=element.name)
        written = element.sql(dialect="spark")
        raise s.unsupported(f"Unsupported partition transform {written} in PARTITIONED BY: "
                            "Iceberg tables take identity columns, bucket(n, c), "
                            "truncate(w, c), years(c), months(c), days(c), hours(c)",
                            column=written)
    return tuple(out)


def _dotted(e: exp.Expr) -> str:
    if isinstance(e, exp.Column):
        return ".".join(p.name for p in e.parts)
    return e.name
