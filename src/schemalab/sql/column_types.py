"""A column type's tree → Paimon's type, with Spark's meaning for Spark's spellings.

Nested types (ARRAY, MAP, STRUCT/ROW, MULTISET) are converted node by node; an atomic type
is handed, as written, to :func:`schemalab.types.parse.parse_type`, which owns Paimon's
atomic types and their rules. Two words mean what Spark means by them when written bare: a
``TIMESTAMP`` is Spark's TimestampType, which Paimon's Spark connector stores as
``TIMESTAMP(6) WITH LOCAL TIME ZONE``, and a ``BINARY`` is Spark's BinaryType, i.e.
``BYTES``. Written with a precision or length (``TIMESTAMP(3)``, ``BINARY(4)``) they keep
Paimon's meaning, which Spark has no spelling for. Spark map keys are never null.

    >>> from schemalab.sql.dialect import SchemalabSpark
    >>> sql = "CREATE TABLE t (c MAP<STRING, ARRAY<TIMESTAMP(3)>>)"
    >>> node = SchemalabSpark().parse(sql)[0].find(exp.ColumnDef).args["kind"]
    >>> paimon_type(node, sql).sql()
    'MAP<STRING NOT NULL, ARRAY<TIMESTAMP(3)>>'
"""

from __future__ import annotations

from sqlglot import exp

from schemalab.errors import UnknownTypeError
from schemalab.types.model import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    VectorType,
)
from schemalab.types.parse import parse_type

__all__ = ["TypeTextError", "paimon_type"]

_SPARK_SPELLINGS = {"TIMESTAMP": "TIMESTAMP_LTZ", "BINARY": "BYTES"}


class TypeTextError(Exception):
    """An atomic type that Paimon does not know: ``written`` as it stands in ``start`` (a
    source offset) and the ``reason`` from :func:`parse_type`."""

    def __init__(self, written: str, reason: str, start: int) -> None:
        super().__init__(f"{written!r}: {reason}")
        self.written = written
        self.reason = reason
        self.start = start


def paimon_type(node: exp.Expr, sql: str) -> DataType:
    """The Paimon type of ``node``, a DataType read from ``sql`` by
    :class:`schemalab.sql.dialect.SchemalabSpark`. Raises :class:`TypeTextError`."""
    nullable = node.args.get("nullable") is not False
    children = node.expressions
    if isinstance(node, exp.DataType) and all("span" in child.meta for child in children
                                               if isinstance(child, exp.DataType)):
        if node.this is exp.DType.ARRAY and len(children) == 1:
            return ArrayType(paimon_type(children[0], sql), nullable)
        if node.this is exp.DType.MAP and len(children) == 2:
            key = paimon_type(children[0], sql).with_nullable(False)
            return MapType(key, paimon_type(children[1], sql), nullable)
        if node.this is exp.DType.USERDEFINED and node.args.get("kind") == "MULTISET":
            return MultisetType(paimon_type(children[0], sql), nullable)
        if node.this is exp.DType.STRUCT:
            return RowType(tuple(_field(child, sql) for child in children), nullable)
    return _atomic(node, sql).with_nullable(nullable)


def _field(column: exp.Expr, sql: str) -> DataField:
    comment = next((c.kind.this.this for c in column.args.get("constraints") or []
                    if isinstance(c.kind, exp.CommentColumnConstraint)), None)
    return DataField(-1, column.name, paimon_type(column.args["kind"], sql), comment)


def _atomic(node: exp.Expr, sql: str) -> DataType:
    start, end = node.meta.get("span", (0, len(sql)))
    written = sql[start:end]
    text = _SPARK_SPELLINGS.get(written.upper(), written)
    try:
        data_type = parse_type(text)
    except UnknownTypeError as e:
        raise TypeTextError(written, e.message.removeprefix(f"Unknown type {text!r}: "),
                            start) from e
    return _with_map_keys_not_null(data_type)


def _with_map_keys_not_null(t: DataType) -> DataType:
    """For a type parse_type read whole (Flink's ``MAP<..> ARRAY``): map keys NOT NULL."""
    if isinstance(t, MapType):
        return MapType(_with_map_keys_not_null(t.key).with_nullable(False),
                       _with_map_keys_not_null(t.value), t.nullable)
    if isinstance(t, VectorType):  # elements are numbers or booleans: no map inside
        return t
    if isinstance(t, ArrayType | MultisetType):
        return type(t)(_with_map_keys_not_null(t.element), t.nullable)
    if isinstance(t, RowType):
        return RowType(tuple(DataField(f.id, f.name, _with_map_keys_not_null(f.type),
                                       f.description, f.default_value) for f in t.fields),
                       t.nullable)
    return t
