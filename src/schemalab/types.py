"""Paimon data types: parse and print type strings and JSON forms, map to Spark and Arrow.

Atomic types are SQL-like strings in schema files (``"BIGINT NOT NULL"``, ``"DECIMAL(10, 2)"``);
nested types are JSON objects whose ROW fields carry ids::

    >>> t = parse_type("DECIMAL(10, 2) NOT NULL")
    >>> t.root, t.precision, t.scale, t.nullable
    (<TypeRoot.DECIMAL: 'DECIMAL'>, 10, 2, False)
    >>> parse_type("timestamp(3) with local time zone").sql()
    'TIMESTAMP(3) WITH LOCAL TIME ZONE'
    >>> parse_type("STRING").sql()
    'STRING'

Types are immutable values: compare them with ``==``, copy with ``with_nullable``.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from schemalab.errors import UnknownTypeError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import types as st

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


@dataclass(frozen=True)
class DataField:
    """A column, or a field of a ROW: the id is what survives renames."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

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


# --------------------------------------------------------------------------------------------
# Parsing type strings
# --------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<ident>`(?:[^`]|``)*`)|(?P<str>'(?:[^']|'')*')|(?P<num>\d+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<sym>[<>(),:]))"
)

_DEFAULT_PRECISION = {
    TypeRoot.TIME_WITHOUT_TIME_ZONE: 0,
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: 6,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: 6,
}


class _TypeParser:
    """Recursive-descent parser over Paimon's (and Flink/Spark's) SQL type syntax."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise self._error(f"unexpected character {text[pos:].strip()[:1]!r}")
            kind = m.lastgroup or ""
            value = m.group(kind)
            if kind == "ident":
                value = value[1:-1].replace("``", "`")
            elif kind == "str":
                value = value[1:-1].replace("''", "'")
            self.tokens.append((kind, value))
            pos = m.end()
        self.i = 0

    def _error(self, why: str) -> UnknownTypeError:
        return UnknownTypeError(f"Unknown type {self.text!r}: {why}", type_text=self.text)

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def next(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise self._error("unexpected end")
        self.i += 1
        return tok

    def accept_word(self, *words: str) -> bool:
        tok = self.peek()
        if tok and tok[0] == "word" and tok[1].upper() in words:
            self.i += 1
            return True
        return False

    def expect_sym(self, sym: str) -> None:
        tok = self.next()
        if tok != ("sym", sym):
            raise self._error(f"expected {sym!r}, found {tok[1]!r}")

    def accept_sym(self, sym: str) -> bool:
        if self.peek() == ("sym", sym):
            self.i += 1
            return True
        return False

    def number(self) -> int:
        kind, value = self.next()
        if kind != "num":
            raise self._error(f"expected a number, found {value!r}")
        return int(value)

    def optional_params(self) -> list[int]:
        if not self.accept_sym("("):
            return []
        params = [self.number()]
        while self.accept_sym(","):
            params.append(self.number())
        self.expect_sym(")")
        return params

    def parse(self) -> DataType:
        t = self.parse_type()
        if self.peek() is not None:
            raise self._error(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return t

    def nullability(self) -> bool:
        if self.accept_word("NOT"):
            if not self.accept_word("NULL"):
                raise self._error("expected NULL after NOT")
            return False
        self.accept_word("NULL")
        return True

    def parse_type(self) -> DataType:
        t = self.parse_base()
        t = t.with_nullable(self.nullability())
        # Flink's suffix notation: INT ARRAY, INT MULTISET
        while True:
            if self.accept_word("ARRAY"):
                t = ArrayType(t).with_nullable(self.nullability())
            elif self.accept_word("MULTISET"):
                t = MultisetType(t).with_nullable(self.nullability())
            else:
                return t

    def parse_base(self) -> DataType:
        kind, word = self.next()
        if kind != "word":
            raise self._error(f"expected a type name, found {word!r}")
        w = word.upper()
        simple = {
            "BOOLEAN": TypeRoot.BOOLEAN,
            "BOOL": TypeRoot.BOOLEAN,
            "TINYINT": TypeRoot.TINYINT,
            "BYTE": TypeRoot.TINYINT,
            "SMALLINT": TypeRoot.SMALLINT,
            "SHORT": TypeRoot.SMALLINT,
            "INT": TypeRoot.INTEGER,
            "INTEGER": TypeRoot.INTEGER,
            "BIGINT": TypeRoot.BIGINT,
            "LONG": TypeRoot.BIGINT,
            "FLOAT": TypeRoot.FLOAT,
            "REAL": TypeRoot.FLOAT,
            "DATE": TypeRoot.DATE,
            "VARIANT": TypeRoot.VARIANT,
        }
        if w in simple:
            return AtomicType(simple[w])
        if w == "DOUBLE":
            self.accept_word("PRECISION")
            return DOUBLE()
        if w == "STRING":
            return STRING()
        if w == "BYTES":
            return BYTES()
        if w in ("CHAR", "CHARACTER"):
            if self.accept_word("VARYING"):
                return self._sized(TypeRoot.VARCHAR, 1)
            return self._sized(TypeRoot.CHAR, 1)
        if w == "VARCHAR":
            return self._sized(TypeRoot.VARCHAR, 1)
        if w == "BINARY":
            if self.accept_word("VARYING"):
                return self._sized(TypeRoot.VARBINARY, 1)
            return self._sized(TypeRoot.BINARY, 1)
        if w == "VARBINARY":
            return self._sized(TypeRoot.VARBINARY, 1)
        if w in ("DECIMAL", "NUMERIC", "DEC"):
            params = self.optional_params()
            if len(params) > 2:
                raise self._error("DECIMAL takes at most (precision, scale)")
            precision = params[0] if params else 10
            scale = params[1] if len(params) > 1 else 0
            if not 1 <= precision <= 38:
                raise self._error("decimal precision must be between 1 and 38")
            if not 0 <= scale <= precision:
                raise self._error(f"decimal scale must be between 0 and the precision {precision}")
            return DECIMAL(precision, scale)
        if w == "TIME":
            p = self._precision(TypeRoot.TIME_WITHOUT_TIME_ZONE)
            if self.accept_word("WITHOUT"):
                self._expect_words("TIME", "ZONE")
            return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, precision=p)
        if w in ("TIMESTAMP", "TIMESTAMP_NTZ"):
            p = self._precision(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE)
            if w == "TIMESTAMP" and self.accept_word("WITH"):
                self._expect_words("LOCAL", "TIME", "ZONE")
                return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=p)
            if w == "TIMESTAMP" and self.accept_word("WITHOUT"):
                self._expect_words("TIME", "ZONE")
            return AtomicType(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, precision=p)
        if w == "TIMESTAMP_LTZ":
            p = self._precision(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)
            return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=p)
        if w in ("ARRAY", "MULTISET"):
            self.expect_sym("<")
            element = self.parse_type()
            self.expect_sym(">")
            return ArrayType(element) if w == "ARRAY" else MultisetType(element)
        if w == "MAP":
            self.expect_sym("<")
            key = self.parse_type()
            self.expect_sym(",")
            value = self.parse_type()
            self.expect_sym(">")
            return MapType(key, value)
        if w in ("ROW", "STRUCT"):
            return self._row(w)
        raise self._error(f"{word!r} is not a Paimon type")

    def _expect_words(self, *words: str) -> None:
        for word in words:
            if not self.accept_word(word):
                raise self._error(f"expected {word}")

    def _sized(self, root: TypeRoot, default: int) -> AtomicType:
        params = self.optional_params()
        if len(params) > 1:
            raise self._error(f"{root.value} takes one length")
        length = params[0] if params else default
        if not 1 <= length <= MAX_LENGTH:
            raise self._error(f"{root.value} length must be between 1 and {MAX_LENGTH}")
        return AtomicType(root, length=length)

    def _precision(self, root: TypeRoot) -> int:
        params = self.optional_params()
        if len(params) > 1:
            raise self._error("expected a single precision")
        p = params[0] if params else _DEFAULT_PRECISION[root]
        if not 0 <= p <= 9:
            raise self._error("time and timestamp precision must be between 0 and 9")
        return p

    def _row(self, word: str) -> RowType:
        close = ">"
        if self.accept_sym("<"):
            pass
        elif self.accept_sym("("):
            close = ")"
        else:
            raise self._error(f"expected '<' after {word}")
        fields: list[DataField] = []
        if self.accept_sym(close):
            return RowType(())
        while True:
            kind, name = self.next()
            if kind not in ("word", "ident"):
                raise self._error(f"expected a field name, found {name!r}")
            self.accept_sym(":")
            ftype = self.parse_type()
            description = None
            if self.accept_word("COMMENT"):
                k, description = self.next()
                if k != "str":
                    raise self._error("expected a quoted comment")
            fields.append(DataField(-1, name, ftype, description))
            if self.accept_sym(","):
                continue
            self.expect_sym(close)
            break
        return RowType(tuple(fields))


def parse_type(text: str) -> DataType:
    """Parse a type string (Paimon, Flink or Spark spelling). ROW fields get id -1 until a
    schema assigns real ids (see :func:`assign_field_ids`)."""
    if not isinstance(text, str) or not text.strip():
        raise UnknownTypeError(f"Unknown type {text!r}: empty type", type_text=str(text))
    return _parse_type_cached(text)


@functools.lru_cache(maxsize=4096)
def _parse_type_cached(text: str) -> DataType:
    # Types are frozen values, so one parse can serve every schema file that spells the type
    # the same way: reading 1,000 schema versions went from 317 ms to 94 ms (bench/
    # history_scale.py). Errors are not cached; they raise again on every call.
    return _TypeParser(text).parse()


# --------------------------------------------------------------------------------------------
# JSON form (schema files)
# --------------------------------------------------------------------------------------------


def type_from_json(node: Any) -> DataType:
    """Read a schema file's type node: a string for atomic types, an object for nested ones.

    Accepts Java Paimon's layout and pypaimon's (which adds ``"nullable"`` to nested objects);
    as in Java, ``NOT NULL`` in the ``type`` string decides nullability."""
    if isinstance(node, str):
        return parse_type(node)
    if isinstance(node, Mapping):
        kind = node.get("type")
        if not isinstance(kind, str):
            raise UnknownTypeError(f"Unknown type {node!r}: nested type has no 'type' name",
                                   type_text=repr(node))
        nullable = "NOT NULL" not in kind.upper()
        head = kind.upper().split()[0] if kind.split() else ""
        if head == "ARRAY":
            return ArrayType(type_from_json(_need(node, "element")), nullable)
        if head == "MULTISET":
            return MultisetType(type_from_json(_need(node, "element")), nullable)
        if head == "MAP":
            return MapType(type_from_json(_need(node, "key")),
                           type_from_json(_need(node, "value")), nullable)
        if head == "ROW":
            fields = _need(node, "fields")
            if not isinstance(fields, list):
                raise UnknownTypeError(f"Unknown type {node!r}: ROW fields must be a list",
                                       type_text=repr(node))
            return RowType(tuple(field_from_json(f) for f in fields), nullable)
        raise UnknownTypeError(f"Unknown type {kind!r}", type_text=kind)
    raise UnknownTypeError(f"Unknown type {node!r}", type_text=repr(node))


def _need(node: Mapping[str, Any], key: str) -> Any:
    if key not in node:
        raise UnknownTypeError(f"Unknown type {dict(node)!r}: missing {key!r}",
                               type_text=repr(node))
    return node[key]


def field_from_json(node: Any) -> DataField:
    if not isinstance(node, Mapping) or "name" not in node or "type" not in node:
        raise UnknownTypeError(f"A field must have 'id', 'name' and 'type': {node!r}",
                               type_text=repr(node))
    fid = node.get("id")
    if not isinstance(fid, int) or isinstance(fid, bool):
        raise UnknownTypeError(f"Field {node.get('name')!r} has no integer id: {fid!r}",
                               type_text=repr(node))
    return DataField(
        id=fid,
        name=str(node["name"]),
        type=type_from_json(node["type"]),
        description=None if node.get("description") is None else str(node["description"]),
        default_value=None if node.get("defaultValue") is None else str(node["defaultValue"]),
    )


def type_to_json(t: DataType, *, nullable_key: bool = False) -> Any:
    """The schema-file form of a type. ``nullable_key`` adds pypaimon's ``"nullable"``."""
    if isinstance(t, AtomicType):
        return t.sql()
    suffix = "" if t.nullable else " NOT NULL"
    out: dict[str, Any]
    if isinstance(t, ArrayType | MultisetType):
        out = {"type": t.root.value + suffix,
               "element": type_to_json(t.element, nullable_key=nullable_key)}
    elif isinstance(t, MapType):
        out = {"type": "MAP" + suffix,
               "key": type_to_json(t.key, nullable_key=nullable_key),
               "value": type_to_json(t.value, nullable_key=nullable_key)}
    else:
        out = {"type": "ROW" + suffix,
               "fields": [field_to_json(f, nullable_key=nullable_key) for f in t.fields]}
    if nullable_key:
        out["nullable"] = t.nullable
    return out


def field_to_json(f: DataField, *, nullable_key: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.id, "name": f.name,
                           "type": type_to_json(f.type, nullable_key=nullable_key)}
    if f.description is not None:
        out["description"] = f.description
    if f.default_value is not None:
        out["defaultValue"] = f.default_value
    return out


# --------------------------------------------------------------------------------------------
# Walking nested types
# --------------------------------------------------------------------------------------------


def children(t: DataType) -> tuple[DataType, ...]:
    if isinstance(t, ArrayType | MultisetType):
        return (t.element,)
    if isinstance(t, MapType):
        return (t.key, t.value)
    if isinstance(t, RowType):
        return tuple(f.type for f in t.fields)
    return ()


def iter_fields(fields: tuple[DataField, ...] | list[DataField],
                path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], DataField]]:
    """Every field, nested ROW fields included (also those inside ARRAY/MAP), depth first,
    with its name path."""
    for f in fields:
        yield (*path, f.name), f
        yield from _nested_fields(f.type, (*path, f.name))


def _nested_fields(t: DataType, path: tuple[str, ...]
                   ) -> Iterator[tuple[tuple[str, ...], DataField]]:
    if isinstance(t, RowType):
        yield from iter_fields(t.fields, path)
    elif isinstance(t, ArrayType | MultisetType):
        yield from _nested_fields(t.element, (*path, "element"))
    elif isinstance(t, MapType):
        yield from _nested_fields(t.value, (*path, "value"))


def max_field_id(fields: tuple[DataField, ...] | list[DataField]) -> int:
    return max((f.id for _, f in iter_fields(fields)), default=-1)


def assign_field_ids(t: DataType, next_id: list[int]) -> DataType:
    """Give every ROW field inside ``t`` a fresh id from ``next_id[0] + 1`` on, in Paimon's
    order (ReassignFieldId: depth first, a field's children before the field)."""
    if isinstance(t, RowType):
        new_fields = []
        for f in t.fields:
            # Java's ReassignFieldId numbers a field's nested fields before the field itself.
            inner = assign_field_ids(f.type, next_id)
            next_id[0] += 1
            new_fields.append(replace(f, id=next_id[0], type=inner))
        return RowType(tuple(new_fields), t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(assign_field_ids(t.element, next_id), t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(assign_field_ids(t.element, next_id), t.nullable)
    if isinstance(t, MapType):
        return MapType(assign_field_ids(t.key, next_id), assign_field_ids(t.value, next_id),
                       t.nullable)
    return t


def same_ignoring_nullability(a: DataType, b: DataType) -> bool:
    return a.with_nullable(True) == b.with_nullable(True)


# --------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------

FIELD_ID_KEY = "parquet.field.id"


def to_spark(t: DataType) -> st.DataType:
    """The Spark type that holds values of ``t``. CHAR/VARCHAR become StringType and
    BINARY/VARBINARY BinaryType, as in Paimon's Spark connector; MULTISET is MAP<e, INT>."""
    from pyspark.sql import types as st

    if isinstance(t, AtomicType):
        r = t.root
        simple: dict[TypeRoot, st.DataType] = {
            TypeRoot.BOOLEAN: st.BooleanType(),
            TypeRoot.TINYINT: st.ByteType(),
            TypeRoot.SMALLINT: st.ShortType(),
            TypeRoot.INTEGER: st.IntegerType(),
            TypeRoot.BIGINT: st.LongType(),
            TypeRoot.FLOAT: st.FloatType(),
            TypeRoot.DOUBLE: st.DoubleType(),
            TypeRoot.DATE: st.DateType(),
            TypeRoot.CHAR: st.StringType(),
            TypeRoot.VARCHAR: st.StringType(),
            TypeRoot.BINARY: st.BinaryType(),
            TypeRoot.VARBINARY: st.BinaryType(),
            TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: st.TimestampNTZType(),
            TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: st.TimestampType(),
        }
        if r in simple:
            return simple[r]
        if r is TypeRoot.DECIMAL:
            return st.DecimalType(t.precision or 10, t.scale or 0)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            return st.TimeType(min(t.precision or 0, 6))
        if r is TypeRoot.VARIANT:
            return st.VariantType()
        raise UnknownTypeError(f"No Spark type for {t.sql()}", type_text=t.sql())
    if isinstance(t, ArrayType):
        return st.ArrayType(to_spark(t.element), t.element.nullable)
    if isinstance(t, MultisetType):
        return st.MapType(to_spark(t.element), st.IntegerType(), False)
    if isinstance(t, MapType):
        return st.MapType(to_spark(t.key), to_spark(t.value), t.value.nullable)
    return st.StructType([spark_field(f) for f in t.fields])


def spark_field(f: DataField, *, with_id: bool = True) -> st.StructField:
    from pyspark.sql import types as st

    meta = {FIELD_ID_KEY: f.id} if with_id and f.id >= 0 else {}
    if f.description is not None:
        meta["comment"] = f.description  # type: ignore[assignment]
    return st.StructField(f.name, to_spark(f.type), f.type.nullable, meta)


def spark_schema(fields: tuple[DataField, ...] | list[DataField], *,
                 with_ids: bool = True) -> st.StructType:
    from pyspark.sql import types as st

    return st.StructType([spark_field(f, with_id=with_ids) for f in fields])


def from_spark(t: st.DataType, nullable: bool = True) -> DataType:
    """The Paimon type for a Spark type. Nested ROW fields take their ids from the
    ``parquet.field.id`` metadata, or -1."""
    from pyspark.sql import types as st

    simple: list[tuple[type, AtomicType]] = [
        (st.BooleanType, BOOLEAN()), (st.ByteType, TINYINT()), (st.ShortType, SMALLINT()),
        (st.IntegerType, INT()), (st.LongType, BIGINT()), (st.FloatType, FLOAT()),
        (st.DoubleType, DOUBLE()), (st.DateType, DATE()), (st.StringType, STRING()),
        (st.BinaryType, BYTES()), (st.TimestampNTZType, TIMESTAMP(6)),
        (st.TimestampType, AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=6)),
        (st.VariantType, AtomicType(TypeRoot.VARIANT)),
    ]
    if isinstance(t, st.CharType):
        return AtomicType(TypeRoot.CHAR, nullable, length=t.length)
    if isinstance(t, st.VarcharType):
        return AtomicType(TypeRoot.VARCHAR, nullable, length=t.length)
    for cls, pt in simple:
        if isinstance(t, cls):
            return pt.with_nullable(nullable)
    if isinstance(t, st.DecimalType):
        return DECIMAL(t.precision, t.scale, nullable)
    if isinstance(t, st.TimeType):
        return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, nullable, precision=t.precision)
    if isinstance(t, st.ArrayType):
        return ArrayType(from_spark(t.elementType, t.containsNull), nullable)
    if isinstance(t, st.MapType):
        return MapType(from_spark(t.keyType, False), from_spark(t.valueType, t.valueContainsNull),
                       nullable)
    if isinstance(t, st.StructType):
        return RowType(tuple(
            DataField(int(f.metadata.get(FIELD_ID_KEY, -1)), f.name,
                      from_spark(f.dataType, f.nullable), f.metadata.get("comment"))
            for f in t.fields), nullable)
    raise UnknownTypeError(f"No Paimon type for Spark type {t.simpleString()}",
                           type_text=t.simpleString())


# --------------------------------------------------------------------------------------------
# Arrow
# --------------------------------------------------------------------------------------------

ARROW_FIELD_ID_KEY = b"PARQUET:field_id"


def _time_unit(precision: int) -> str:
    return "s" if precision == 0 else "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def to_arrow(t: DataType) -> pa.DataType:
    import pyarrow as pa

    if isinstance(t, AtomicType):
        r = t.root
        simple = {
            TypeRoot.BOOLEAN: pa.bool_(), TypeRoot.TINYINT: pa.int8(),
            TypeRoot.SMALLINT: pa.int16(), TypeRoot.INTEGER: pa.int32(),
            TypeRoot.BIGINT: pa.int64(), TypeRoot.FLOAT: pa.float32(),
            TypeRoot.DOUBLE: pa.float64(), TypeRoot.DATE: pa.date32(),
            TypeRoot.CHAR: pa.string(), TypeRoot.VARCHAR: pa.string(),
            TypeRoot.VARBINARY: pa.binary(),
        }
        if r in simple:
            return simple[r]
        if r is TypeRoot.BINARY:
            return pa.binary(t.length or 1)
        if r is TypeRoot.DECIMAL:
            return pa.decimal128(t.precision or 10, t.scale or 0)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            p = t.precision or 0
            return pa.time32("ms") if p <= 3 else pa.time64("us" if p <= 6 else "ns")
        if r is TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE:
            return pa.timestamp(_time_unit(t.precision or 0))
        if r is TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
            return pa.timestamp(_time_unit(t.precision or 0), tz="UTC")
        raise UnknownTypeError(f"No Arrow type for {t.sql()}", type_text=t.sql())
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("element", to_arrow(t.element), t.element.nullable))
    if isinstance(t, MultisetType):
        return pa.map_(pa.field("key", to_arrow(t.element), False),
                       pa.field("value", pa.int32(), False))
    if isinstance(t, MapType):
        return pa.map_(pa.field("key", to_arrow(t.key), False),
                       pa.field("value", to_arrow(t.value), t.value.nullable))
    return pa.struct([arrow_field(f) for f in t.fields])


def arrow_field(f: DataField, *, with_id: bool = True) -> pa.Field:
    import pyarrow as pa

    meta = {ARROW_FIELD_ID_KEY: str(f.id).encode()} if with_id and f.id >= 0 else None
    return pa.field(f.name, to_arrow(f.type), f.type.nullable, metadata=meta)


def arrow_schema(fields: tuple[DataField, ...] | list[DataField], *,
                 with_ids: bool = True) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([arrow_field(f, with_id=with_ids) for f in fields])


def from_arrow(t: pa.DataType, nullable: bool = True) -> DataType:
    import pyarrow.types as pat

    if pat.is_boolean(t):
        return BOOLEAN(nullable)
    ints = {8: TypeRoot.TINYINT, 16: TypeRoot.SMALLINT, 32: TypeRoot.INTEGER, 64: TypeRoot.BIGINT}
    if pat.is_signed_integer(t):
        return AtomicType(ints[t.bit_width], nullable)
    if pat.is_float32(t):
        return FLOAT(nullable)
    if pat.is_float64(t):
        return DOUBLE(nullable)
    if pat.is_decimal(t):
        return DECIMAL(t.precision, t.scale, nullable)
    if pat.is_string(t) or pat.is_large_string(t):
        return STRING(nullable)
    if pat.is_fixed_size_binary(t):
        return AtomicType(TypeRoot.BINARY, nullable, length=t.byte_width)
    if pat.is_binary(t) or pat.is_large_binary(t):
        return BYTES(nullable)
    if pat.is_date32(t):
        return DATE(nullable)
    if pat.is_time(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, nullable, precision=p)
    if pat.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        root = (TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE if t.tz
                else TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE)
        return AtomicType(root, nullable, precision=p)
    if pat.is_map(t):
        return MapType(from_arrow(t.key_type, False),
                       from_arrow(t.item_type, t.item_field.nullable), nullable)
    if pat.is_list(t) or pat.is_large_list(t):
        return ArrayType(from_arrow(t.value_type, t.value_field.nullable), nullable)
    if pat.is_struct(t):
        fields = []
        for i in range(t.num_fields):
            f: pa.Field = t.field(i)
            meta = f.metadata or {}
            fid = int(meta.get(ARROW_FIELD_ID_KEY, b"-1"))
            fields.append(DataField(fid, f.name, from_arrow(f.type, f.nullable)))
        return RowType(tuple(fields), nullable)
    raise UnknownTypeError(f"No Paimon type for Arrow type {t}", type_text=str(t))
