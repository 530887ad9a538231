"""The Paimon type model: type roots and families, atomic and nested types, fields.

Types are immutable values: compare them with ``==``, copy with ``with_nullable``::

    >>> ROW = RowType((DataField(0, "a", INT()), DataField(1, "b", STRING(False))))
    >>> ROW.sql()
    'ROW<`a` INT, `b` STRING NOT NULL>'
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace

MAX_LENGTH = 2147483647  # VARCHAR/VARBINARY length that prints as STRING / BYTES


class Family(enum.Enum):
    PREDEFINED = "PREDEFINED"
    CONSTRUCTED = "CONSTRUCTED"
    CHARACTER_STRING = "CHARACTER_STRING"
    BINARY_STRING = "BINARY_STRING"
    NUMERIC = "NUMERIC"
    INTEGER_NUMERIC = "INTEGER_NUMERIC"
    EXACT_NUMERIC = "EXACT_NUMERIC"
    APPROXIMATE_NUMERIC = "APPROXIMATE_NUMERIC"
    DATETIME = "DATETIME"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    COLLECTION = "COLLECTION"
    EXTENSION = "EXTENSION"


_F = Family


class TypeRoot(enum.Enum):
    """Paimon's DataTypeRoot, with the families its cast rules are written in."""

    CHAR = "CHAR"
    VARCHAR = "VARCHAR"
    BOOLEAN = "BOOLEAN"
    BINARY = "BINARY"
    VARBINARY = "VARBINARY"
    DECIMAL = "DECIMAL"
    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INTEGER = "INTEGER"
    BIGINT = "BIGINT"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DATE = "DATE"
    TIME_WITHOUT_TIME_ZONE = "TIME_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITHOUT_TIME_ZONE = "TIMESTAMP_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    VARIANT = "VARIANT"
    #: Paimon 1.4+: bytes kept apart from the rows (``.blob`` files), read as Spark's BINARY
    BLOB = "BLOB"
    #: not a Paimon type: a column that holds only NULLs (Iceberg v3's ``unknown``)
    NULL = "NULL"
    ARRAY = "ARRAY"
    MULTISET = "MULTISET"
    MAP = "MAP"
    ROW = "ROW"

    @property
    def families(self) -> frozenset[Family]:
        return _FAMILIES[self]


#: the two timestamp roots, which share precision handling and casts
TIMESTAMP_ROOTS = (TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)

_FAMILIES: dict[TypeRoot, frozenset[Family]] = {
    TypeRoot.CHAR: frozenset({_F.PREDEFINED, _F.CHARACTER_STRING}),
    TypeRoot.VARCHAR: frozenset({_F.PREDEFINED, _F.CHARACTER_STRING}),
    TypeRoot.BOOLEAN: frozenset({_F.PREDEFINED}),
    TypeRoot.BINARY: frozenset({_F.PREDEFINED, _F.BINARY_STRING}),
    TypeRoot.VARBINARY: frozenset({_F.PREDEFINED, _F.BINARY_STRING}),
    TypeRoot.DECIMAL: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.EXACT_NUMERIC}),
    TypeRoot.TINYINT: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.INTEGER_NUMERIC, _F.EXACT_NUMERIC}),
    TypeRoot.SMALLINT: frozenset(
        {_F.PREDEFINED, _F.NUMERIC, _F.INTEGER_NUMERIC, _F.EXACT_NUMERIC}
    ),
    TypeRoot.INTEGER: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.INTEGER_NUMERIC, _F.EXACT_NUMERIC}),
    TypeRoot.BIGINT: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.INTEGER_NUMERIC, _F.EXACT_NUMERIC}),
    TypeRoot.FLOAT: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.APPROXIMATE_NUMERIC}),
    TypeRoot.DOUBLE: frozenset({_F.PREDEFINED, _F.NUMERIC, _F.APPROXIMATE_NUMERIC}),
    TypeRoot.DATE: frozenset({_F.PREDEFINED, _F.DATETIME}),
    TypeRoot.TIME_WITHOUT_TIME_ZONE: frozenset({_F.PREDEFINED, _F.DATETIME, _F.TIME}),
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: frozenset({_F.PREDEFINED, _F.DATETIME, _F.TIMESTAMP}),
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: frozenset(
        {_F.PREDEFINED, _F.DATETIME, _F.TIMESTAMP, _F.EXTENSION}
    ),
    TypeRoot.VARIANT: frozenset({_F.PREDEFINED}),
    TypeRoot.BLOB: frozenset({_F.PREDEFINED}),
    TypeRoot.NULL: frozenset(),
    TypeRoot.ARRAY: frozenset({_F.CONSTRUCTED, _F.COLLECTION}),
    TypeRoot.MULTISET: frozenset({_F.CONSTRUCTED, _F.COLLECTION}),
    TypeRoot.MAP: frozenset({_F.CONSTRUCTED, _F.EXTENSION}),
    TypeRoot.ROW: frozenset({_F.CONSTRUCTED}),
}


# --------------------------------------------------------------------------------------------
# Type values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AtomicType:
    """A non-nested type. ``length`` for CHAR/VARCHAR/BINARY/VARBINARY; ``precision`` for
    DECIMAL/TIME/TIMESTAMP(_LTZ); ``scale`` for DECIMAL."""

    root: TypeRoot
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None

    def with_nullable(self, nullable: bool) -> AtomicType:
        return replace(self, nullable=nullable)

    def sql(self) -> str:
        return _with_null(self._sql_body(), self.nullable)

    def _sql_body(self) -> str:
        r = self.root
        if r is TypeRoot.VARCHAR:
            return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"
        if r is TypeRoot.VARBINARY:
            return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"
        if r in (TypeRoot.CHAR, TypeRoot.BINARY):
            return f"{r.value}({self.length})"
        if r is TypeRoot.DECIMAL:
            return f"DECIMAL({self.precision}, {self.scale})"
        if r is TypeRoot.INTEGER:
            return "INT"
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            return f"TIME({self.precision})"
        if r is TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE:
            return f"TIMESTAMP({self.precision})"
        if r is TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
            return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        return r.value

    def __str__(self) -> str:
        return self.sql()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql()!r})"


@dataclass(frozen=True)
class ArrayType:
    element: DataType
    nullable: bool = True
    root: TypeRoot = field(default=TypeRoot.ARRAY, init=False, repr=False)

    def with_nullable(self, nullable: bool) -> ArrayType:
        return replace(self, nullable=nullable)

    def sql(self) -> str:
        return _with_null(f"ARRAY<{self.element.sql()}>", self.nullable)

    def __str__(self) -> str:
        return self.sql()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql()!r})"


@dataclass(frozen=True)
class VectorType(ArrayType):
    """Paimon 1.4+'s ``VECTOR<element, length>``: ``length`` values of a numeric or boolean
    element. Stored as a list in Parquet, ORC and Avro files (Java's ParquetSchemaConverter
    and AvroSchemaConverter treat it as an ARRAY), and shown by Paimon's Spark integration
    as ``ARRAY<element>`` without NULL elements, so every reader of an ARRAY reads it."""

    length: int = 1

    def sql(self) -> str:
        return _with_null(f"VECTOR<{self.element.sql()}, {self.length}>", self.nullable)


#: the element types a VECTOR may have (Java's ``VectorType.isValidElementType``)
VECTOR_ELEMENTS = frozenset({TypeRoot.BOOLEAN, TypeRoot.TINYINT, TypeRoot.SMALLINT,
                             TypeRoot.INTEGER, TypeRoot.BIGINT, TypeRoot.FLOAT,
                             TypeRoot.DOUBLE})


@dataclass(frozen=True)
class MultisetType:
    element: DataType
    nullable: bool = True
    root: TypeRoot = field(default=TypeRoot.MULTISET, init=False, repr=False)

    def with_nullable(self, nullable: bool) -> MultisetType:
        return replace(self, nullable=nullable)

    def sql(self) -> str:
        return _with_null(f"MULTISET<{self.element.sql()}>", self.nullable)

    def __str__(self) -> str:
        return self.sql()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql()!r})"


@dataclass(frozen=True)
class MapType:
    key: DataType
    value: DataType
    nullable: bool = True
    root: TypeRoot = field(default=TypeRoot.MAP, init=False, repr=False)

    def with_nullable(self, nullable: bool) -> MapType:
        return replace(self, nullable=nullable)

    def sql(self) -> str:
        return _with_null(f"MAP<{self.key.sql()}, {self.value.sql()}>", self.nullable)

    def __str__(self) -> str:
        return self.sql()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql()!r})"


@dataclass(frozen=True)
class DataField:
    """A column, or a field of a ROW: the id is what survives renames."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def __repr__(self) -> str:
        extra = "" if self.description is None else f", description={self.description!r}"
        if self.default_value is not None:
            extra += f", default_value={self.default_value!r}"
        return f"DataField({self.id}, {self.name!r}, {self.type.sql()}{extra})"

    def sql(self) -> str:
        # Java's DataField.asSQLString always backtick-quotes the name.
        text = "`" + self.name.replace("`", "``") + "` " + self.type.sql()
        if self.description is not None:
            text += " COMMENT '" + self.description.replace("'", "''") + "'"
        return text


@dataclass(frozen=True)
class RowType:
    fields: tuple[DataField, ...]
    nullable: bool = True
    root: TypeRoot = field(default=TypeRoot.ROW, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    def with_nullable(self, nullable: bool) -> RowType:
        return replace(self, nullable=nullable)

    def sql(self) -> str:
        return _with_null("ROW<" + ", ".join(f.sql() for f in self.fields) + ">", self.nullable)

    def __str__(self) -> str:
        return self.sql()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql()!r})"

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]


DataType = AtomicType | ArrayType | MultisetType | MapType | RowType


def _with_null(body: str, nullable: bool) -> str:
    return body if nullable else body + " NOT NULL"


_PLAIN_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_identifier(name: str) -> str:
    """Backtick-quote a name unless it is a plain identifier (Spark/Paimon SQL quoting)."""
    if _PLAIN_IDENTIFIER.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


# --------------------------------------------------------------------------------------------
# Constructors for the common types
# --------------------------------------------------------------------------------------------


def BOOLEAN(nullable: bool = True) -> AtomicType:  # noqa: N802 - mirrors Paimon's DataTypes
    return AtomicType(TypeRoot.BOOLEAN, nullable)


def TINYINT(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.TINYINT, nullable)


def SMALLINT(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.SMALLINT, nullable)


def INT(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.INTEGER, nullable)


def BIGINT(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.BIGINT, nullable)


def FLOAT(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.FLOAT, nullable)


def DOUBLE(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.DOUBLE, nullable)


def STRING(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.VARCHAR, nullable, length=MAX_LENGTH)


def BYTES(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.VARBINARY, nullable, length=MAX_LENGTH)


def DATE(nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.DATE, nullable)


def DECIMAL(precision: int, scale: int, nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.DECIMAL, nullable, precision=precision, scale=scale)


def TIMESTAMP(precision: int = 6, nullable: bool = True) -> AtomicType:  # noqa: N802
    return AtomicType(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, nullable, precision=precision)


