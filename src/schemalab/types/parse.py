"""Paimon type strings and the JSON form of types in schema files.

Atomic types are SQL-like strings (``"BIGINT NOT NULL"``, ``"DECIMAL(10, 2)"``); nested types
are JSON objects whose ROW fields carry ids::

    >>> t = parse_type("DECIMAL(10, 2) NOT NULL")
    >>> t.root, t.precision, t.scale, t.nullable
    (<TypeRoot.DECIMAL: 'DECIMAL'>, 10, 2, False)
    >>> parse_type("timestamp(3) with local time zone").sql()
    'TIMESTAMP(3) WITH LOCAL TIME ZONE'
    >>> parse_type("STRING").sql()
    'STRING'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from schemalab.errors import UnknownTypeError
from schemalab.types.model import (
    BYTES,
    DECIMAL,
    DOUBLE,
    MAX_LENGTH,
    STRING,
    VECTOR_ELEMENTS,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
    VectorType,
)
from schemalab.types.visitor import TypeVisitor, visit

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


#: Paimon types newer than schemalab's support, with the release and what they hold: refused
#: by name, never taken for a typo
#: type names that take no parameters
_SIMPLE = {
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
    "BLOB": TypeRoot.BLOB,
}

#: Paimon types schemalab refuses by name (rule unsupported-type): none since BLOB and VECTOR
_NEWER_TYPES: dict[str, str] = {}


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
        if w in _SIMPLE:
            return AtomicType(_SIMPLE[w])
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
            return self._decimal()
        if w in ("TIME", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"):
            return self._time(w)
        if w in ("ARRAY", "MULTISET"):
            self.expect_sym("<")
            element = self.parse_type()
            self.expect_sym(">")
            return ArrayType(element) if w == "ARRAY" else MultisetType(element)
        if w == "VECTOR":  # VECTOR<FLOAT, 3>
            self.expect_sym("<")
            element = self.parse_type()
            self.expect_sym(",")
            length = self.number()
            self.expect_sym(">")
            return self._vector(element, length)
        if w == "MAP":
            self.expect_sym("<")
            key = self.parse_type()
            self.expect_sym(",")
            value = self.parse_type()
            self.expect_sym(">")
            return MapType(key, value)
        if w in ("ROW", "STRUCT"):
            return self._row(w)
        if w in _NEWER_TYPES:
            raise UnknownTypeError(
                f"Unsupported type {self.text!r}: {w} is a {_NEWER_TYPES[w]} that "
                "schemalab does not read or write yet", type_text=self.text,
                rule="unsupported-type")
        raise self._error(f"{word!r} is not a Paimon type")

    def _vector(self, element: DataType, length: int) -> DataType:
        return vector_type(element, length, True, self.text)

    def _decimal(self) -> DataType:
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

    def _time(self, w: str) -> DataType:
        """TIME, TIMESTAMP (WITH LOCAL TIME ZONE), TIMESTAMP_NTZ, TIMESTAMP_LTZ (``w``)."""
        if w == "TIME":
            p = self._precision(TypeRoot.TIME_WITHOUT_TIME_ZONE)
            if self.accept_word("WITHOUT"):
                self._expect_words("TIME", "ZONE")
            return AtomicType(TypeRoot.TIME_WITHOUT_TIME_ZONE, precision=p)
        if w == "TIMESTAMP_LTZ":
            p = self._precision(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)
            return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=p)
        p = self._precision(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE)
        if w == "TIMESTAMP" and self.accept_word("WITH"):
            self._expect_words("LOCAL", "TIME", "ZONE")
            return AtomicType(TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE, precision=p)
        if w == "TIMESTAMP" and self.accept_word("WITHOUT"):
            self._expect_words("TIME", "ZONE")
        return AtomicType(TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, precision=p)

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
        if head == "VECTOR":  # {"type": "VECTOR", "element": "FLOAT", "length": 3}
            length = _need(node, "length")
            if not isinstance(length, int) or isinstance(length, bool):
                raise UnknownTypeError(f"Unknown type {dict(node)!r}: VECTOR length must be "
                                       "an integer", type_text=repr(node))
            return vector_type(type_from_json(_need(node, "element")), length, nullable,
                               repr(dict(node)))
        if head == "MAP":
            return MapType(type_from_json(_need(node, "key")),
                           type_from_json(_need(node, "value")), nullable)
        if head == "ROW":
            fields = _need(node, "fields")
            if not isinstance(fields, list):
                raise UnknownTypeError(f"Unknown type {node!r}: ROW fields must be a list",
                                       type_text=repr(node))
            return RowType(tuple(field_from_json(f) for f in fields), nullable)
        if head in _NEWER_TYPES:  # pypaimon writes VECTOR as {"type": "VECTOR", ...}
            raise UnknownTypeError(
                f"Unsupported type {dict(node)!r}: {head} is a {_NEWER_TYPES[head]} that "
                "schemalab does not read or write yet", type_text=kind, rule="unsupported-type")
        raise UnknownTypeError(f"Unknown type {kind!r}", type_text=kind)
    raise UnknownTypeError(f"Unknown type {node!r}", type_text=repr(node))


def vector_type(element: DataType, length: int, nullable: bool, text: str) -> VectorType:
    """``VECTOR<element, length>``, checked as Java's VectorType checks it."""
    if not isinstance(element, AtomicType) or element.root not in VECTOR_ELEMENTS:
        raise UnknownTypeError(f"Unknown type {text!r}: a VECTOR's element must be BOOLEAN, "
                               f"TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE, not "
                               f"{element.sql()}", type_text=text)
    if length < 1:
        raise UnknownTypeError(f"Unknown type {text!r}: a VECTOR's length must be at least 1",
                               type_text=text)
    return VectorType(element, nullable, length=length)


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
    return visit(t, _ToJson(nullable_key))


class _ToJson(TypeVisitor[Any]):
    def __init__(self, nullable_key: bool) -> None:
        self.nullable_key = nullable_key

    def _node(self, t: DataType, head: str, **parts: Any) -> dict[str, Any]:
        out = {"type": head + ("" if t.nullable else " NOT NULL"), **parts}
        if self.nullable_key:
            out["nullable"] = t.nullable
        return out

    def atomic(self, t: AtomicType) -> Any:
        return t.sql()

    def field(self, f: DataField, result: Any) -> Any:
        return _field_json(f, result)

    def row(self, t: RowType, fields: list[Any]) -> Any:
        return self._node(t, "ROW", fields=fields)

    def array(self, t: ArrayType, element: Any) -> Any:
        if isinstance(t, VectorType):
            return self._node(t, "VECTOR", element=element, length=t.length)
        return self._node(t, "ARRAY", element=element)

    def multiset(self, t: MultisetType, element: Any) -> Any:
        return self._node(t, "MULTISET", element=element)

    def map(self, t: MapType, key: Any, value: Any) -> Any:
        return self._node(t, "MAP", key=key, value=value)


def field_to_json(f: DataField, *, nullable_key: bool = False) -> dict[str, Any]:
    """A field as schema files write it: id, name, type, then description and default."""
    return _field_json(f, type_to_json(f.type, nullable_key=nullable_key))


def _field_json(f: DataField, type_json: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.id, "name": f.name, "type": type_json}
    if f.description is not None:
        out["description"] = f.description
    if f.default_value is not None:
        out["defaultValue"] = f.default_value
    return out


