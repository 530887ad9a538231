"""Which type changes are allowed, after Paimon's ``DataTypeCasts``, and how reads cast.

*Implicit* casts never lose information (INT → BIGINT, CHAR → VARCHAR, DATE ← TIMESTAMP is
Paimon's one lossy exception). *Explicit* casts are SQL ``CAST``s that may fail or lose
information on some values (BIGINT → INT, STRING → INT).

A table without the option ``cast.mode`` reads as Java Paimon reads it: its
``CastExecutors`` wrap, saturate, cut and parse as Java does (:func:`java_cast_rule` says
how, per change). FLIP-226's three modes are opt-in values of ``cast.mode``:

================= =========================================================================
``paimon``        (the default) Java Paimon's casts; a value Java cannot cast fails the read
``implicit``      only implicit type changes are accepted by ALTER (as Paimon's
                  ``disable-explicit-type-casting=true``); values read as ``paimon`` does
``explicit``      explicit changes too; a value the cast does not keep (one Java would wrap,
                  saturate, cut or read as NULL) fails the read
``explicit-null`` explicit changes too; such a value reads as NULL
================= =========================================================================

    >>> from schemalab.types import parse_type as t
    >>> cast_kind(t("INT"), t("BIGINT")), cast_kind(t("BIGINT"), t("INT"))
    ('implicit', 'explicit')
    >>> cast_kind(t("INT"), t("BYTES")) is None
    True
    >>> java_cast_rule(t("BIGINT"), t("INT")).effect
    'values outside INT wrap'
    >>> alters_values(t("VARCHAR(10)"), t("VARCHAR(3)")), alters_values(t("STRING"), t("STRING"))
    (True, False)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from schemalab.types.model import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    Family,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.visitor import PartnerVisitor, visit_with_partner

CAST_MODE_OPTION = "cast.mode"
DISABLE_EXPLICIT_OPTION = "disable-explicit-type-casting"

R = TypeRoot


class CastMode(enum.Enum):
    PAIMON = "paimon"
    IMPLICIT = "implicit"
    EXPLICIT = "explicit"
    EXPLICIT_NULL = "explicit-null"

    @property
    def allows_explicit(self) -> bool:
        return self is not CastMode.IMPLICIT

    @property
    def javas_values(self) -> bool:
        """Whether values are read as Java Paimon casts them (wrapped, saturated, cut)."""
        return self in (CastMode.PAIMON, CastMode.IMPLICIT)


def cast_mode(options: Mapping[str, str]) -> CastMode:
    """The table's read mode: Java Paimon's casts unless ``cast.mode`` says otherwise.
    ``disable-explicit-type-casting=true`` (Paimon's own option) means implicit only,
    whatever ``cast.mode`` says."""
    if str(options.get(DISABLE_EXPLICIT_OPTION, "false")).lower() == "true":
        return CastMode.IMPLICIT
    raw = options.get(CAST_MODE_OPTION, CastMode.PAIMON.value)
    try:
        return CastMode(str(raw).strip().lower())
    except ValueError:
        allowed = ", ".join(m.value for m in CastMode)
        raise ValueError(
            f"Option '{CAST_MODE_OPTION}' = '{raw}' is not one of: {allowed}") from None


def _roots(*families: Family) -> set[TypeRoot]:
    return {r for r in TypeRoot if any(f in r.families for f in families)}


_TIMESTAMPS = {R.TIMESTAMP_WITHOUT_TIME_ZONE, R.TIMESTAMP_WITH_LOCAL_TIME_ZONE}
_INTEGER_TARGET_EXPLICIT = (_roots(Family.NUMERIC, Family.CHARACTER_STRING) | {R.BOOLEAN}
                            | _TIMESTAMPS)

# target root -> (implicit sources, explicit sources); every root is implicit from itself.
_RULES: dict[TypeRoot, tuple[set[TypeRoot], set[TypeRoot]]] = {
    R.CHAR: ({R.CHAR}, _roots(Family.PREDEFINED, Family.CONSTRUCTED)),
    R.VARCHAR: (_roots(Family.CHARACTER_STRING), _roots(Family.PREDEFINED, Family.CONSTRUCTED)),
    R.BOOLEAN: ({R.BOOLEAN}, _roots(Family.CHARACTER_STRING, Family.INTEGER_NUMERIC)),
    R.BINARY: ({R.BINARY}, _roots(Family.CHARACTER_STRING) | {R.VARBINARY}),
    R.VARBINARY: (_roots(Family.BINARY_STRING), _roots(Family.CHARACTER_STRING) | {R.BINARY}),
    R.DECIMAL: (_roots(Family.NUMERIC),
                _roots(Family.CHARACTER_STRING) | {R.BOOLEAN} | _TIMESTAMPS),
    R.TINYINT: ({R.TINYINT}, _INTEGER_TARGET_EXPLICIT),
    R.SMALLINT: ({R.TINYINT, R.SMALLINT}, _INTEGER_TARGET_EXPLICIT),
    R.INTEGER: ({R.TINYINT, R.SMALLINT, R.INTEGER}, _INTEGER_TARGET_EXPLICIT),
    R.BIGINT: ({R.TINYINT, R.SMALLINT, R.INTEGER, R.BIGINT}, _INTEGER_TARGET_EXPLICIT),
    R.FLOAT: ({R.TINYINT, R.SMALLINT, R.INTEGER, R.BIGINT, R.FLOAT, R.DECIMAL},
              _INTEGER_TARGET_EXPLICIT),
    R.DOUBLE: (_roots(Family.NUMERIC),
               _roots(Family.CHARACTER_STRING) | {R.BOOLEAN} | _TIMESTAMPS),
    R.DATE: ({R.DATE, R.TIMESTAMP_WITHOUT_TIME_ZONE},
             _roots(Family.TIMESTAMP, Family.CHARACTER_STRING)),
    R.TIME_WITHOUT_TIME_ZONE: ({R.TIME_WITHOUT_TIME_ZONE, R.TIMESTAMP_WITHOUT_TIME_ZONE},
                               _roots(Family.TIME, Family.TIMESTAMP, Family.CHARACTER_STRING)),
    R.TIMESTAMP_WITHOUT_TIME_ZONE: (_TIMESTAMPS, _roots(Family.DATETIME, Family.CHARACTER_STRING,
                                                        Family.NUMERIC)),
    R.TIMESTAMP_WITH_LOCAL_TIME_ZONE: (_TIMESTAMPS, _roots(Family.DATETIME,
                                                           Family.CHARACTER_STRING,
                                                           Family.NUMERIC)),
}

CastKind = Literal["identity", "implicit", "explicit"]


def cast_kind(source: DataType, target: DataType) -> CastKind | None:
    """How ``source`` values become ``target`` values: ``"identity"`` (same type but for
    nullability), ``"implicit"``, ``"explicit"``, or ``None`` when Paimon allows no cast.

    Nested types: ARRAY/MULTISET/MAP cast element-wise, ROW field by field matched by id
    (names may differ; a field only on one side is an add or a drop, not a cast)."""
    if source.with_nullable(True) == target.with_nullable(True):
        return "identity"
    return visit_with_partner(target, source, _FINE)


class _CastKinds(PartnerVisitor["CastKind | None"]):
    """The cast kind of a target type from its partner in the source, the weakest over the
    nested values; ``by_root`` judges atomic values by Paimon's root-only table."""

    def __init__(self, by_root: bool) -> None:
        self.by_root = by_root

    def atomic(self, t: AtomicType, partner: DataType | None) -> CastKind | None:
        if isinstance(partner, AtomicType):
            return _root_kind(partner, t) if self.by_root else _atomic_kind(partner, t)
        if partner is not None and t.root in (R.CHAR, R.VARCHAR):
            # CHAR/VARCHAR are explicitly castable from constructed types (their string form)
            return "explicit"
        return None

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, CastKind | None]]
            ) -> CastKind | None:
        if partner is None:
            return None
        result: CastKind | None = "identity"
        for _, pf, kind in fields:
            if pf is not None:
                result = _weakest(result, kind)
        return result

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: CastKind | None) -> CastKind | None:
        return None if partner is None else element

    def map(self, t: MapType, partner: MapType | None, key: CastKind | None,
            value: CastKind | None) -> CastKind | None:
        return None if partner is None else _weakest(key, value)


_FINE = _CastKinds(by_root=False)
_BY_ROOT = _CastKinds(by_root=True)


def _atomic_kind(source: AtomicType, target: AtomicType) -> CastKind | None:
    if source.with_nullable(True) == target.with_nullable(True):
        return "identity"
    rule = _RULES.get(target.root)
    if rule is None:  # VARIANT: only from itself
        return "implicit" if source.root is target.root else None
    implicit, explicit = rule
    if source.root in implicit or source.root is target.root:
        return "implicit" if _fits(source, target) else "explicit"
    if source.root in explicit:
        return "explicit"
    return None


def _root_kind(source: AtomicType, target: AtomicType) -> CastKind | None:
    if source.with_nullable(True) == target.with_nullable(True):
        return "identity"
    rule = _RULES.get(target.root)
    if source.root is target.root or (rule is not None and source.root in rule[0]):
        return "implicit"
    if rule is not None and source.root in rule[1]:
        return "explicit"
    return None


def _weakest(a: CastKind | None, b: CastKind | None) -> CastKind | None:
    order = {"identity": 0, "implicit": 1, "explicit": 2}
    if a is None or b is None:
        return None
    return a if order[a] >= order[b] else b


def _fits(source: AtomicType, target: AtomicType) -> bool:
    """Same-root or implicit-family casts that would still lose information (shorter
    strings, narrower decimals) are explicit. Paimon's rule table is by root only; this
    refinement is what the read path needs to pick ``cast`` vs a plain widening."""
    if source.root is target.root:
        if source.root in (R.CHAR, R.VARCHAR, R.BINARY, R.VARBINARY):
            return (target.length or 0) >= (source.length or 0)
        if source.root is R.DECIMAL:
            return _decimal_fits(source.precision or 10, source.scale or 0,
                                 target.precision or 10, target.scale or 0)
        if source.root in (R.TIME_WITHOUT_TIME_ZONE, R.TIMESTAMP_WITHOUT_TIME_ZONE,
                           R.TIMESTAMP_WITH_LOCAL_TIME_ZONE):
            return (target.precision or 0) >= (source.precision or 0)
        return True
    if target.root is R.DECIMAL:
        digits = {R.TINYINT: 3, R.SMALLINT: 5, R.INTEGER: 10, R.BIGINT: 19}.get(source.root)
        if digits is not None:
            return _decimal_fits(digits, 0, target.precision or 10, target.scale or 0)
        if source.root is R.DECIMAL:
            return _decimal_fits(source.precision or 10, source.scale or 0,
                                 target.precision or 10, target.scale or 0)
        return False  # FLOAT/DOUBLE → DECIMAL can overflow or round
    if source.root in _TIMESTAMPS and target.root in _TIMESTAMPS:
        return (target.precision or 0) >= (source.precision or 0)
    if source.root in (R.CHAR, R.VARCHAR) and target.root in (R.CHAR, R.VARCHAR):
        return (target.length or 0) >= (source.length or 0)
    if source.root in (R.BINARY, R.VARBINARY) and target.root in (R.BINARY, R.VARBINARY):
        return (target.length or 0) >= (source.length or 0)
    return True


def _decimal_fits(p1: int, s1: int, p2: int, s2: int) -> bool:
    return s2 >= s1 and (p2 - s2) >= (p1 - s1)


def paimon_cast_kind(source: DataType, target: DataType) -> CastKind | None:
    """Paimon's own rule table, by type root only: a same-root change (DECIMAL(10, 2) →
    DECIMAL(8, 2), VARCHAR(10) → VARCHAR(5)) counts as implicit there, even though reading
    it can lose information; :func:`cast_kind` is the finer view the read path uses. Nested
    values are judged element by element."""
    if source.with_nullable(True) == target.with_nullable(True):
        return "identity"
    return visit_with_partner(target, source, _BY_ROOT)


def supports_cast(source: DataType, target: DataType, allow_explicit: bool) -> bool:
    """Paimon's ``DataTypeCasts.supportsCast``: may a column of ``source`` be changed to
    ``target``? A nullable source may become NOT NULL only when explicit casts are allowed."""
    if source.nullable and not target.nullable and not allow_explicit:
        return False
    kind = paimon_cast_kind(source, target)
    if kind is None:
        return False
    return kind != "explicit" or allow_explicit



class _AltersValues(PartnerVisitor[bool]):
    def atomic(self, t: AtomicType, partner: DataType | None) -> bool:
        return isinstance(partner, AtomicType) and _same_form_altered(partner, t)

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, bool]]) -> bool:
        return any(x for _, _, x in fields)

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: bool) -> bool:
        return element

    def map(self, t: MapType, partner: MapType | None, key: bool, value: bool) -> bool:
        return key or value


def _same_form_altered(source: AtomicType, target: AtomicType) -> bool:
    if source.with_nullable(True) == target.with_nullable(True):
        return False
    strings, binaries = (R.CHAR, R.VARCHAR), (R.BINARY, R.VARBINARY)
    for family, padded in ((strings, R.CHAR), (binaries, R.BINARY)):
        if source.root in family and target.root in family:
            # cut to a shorter length; a CHAR/BINARY pads to its length
            return target.root is padded or (target.length or 0) < (source.length or 0)
    if source.root is target.root and source.root in _TIMESTAMPS:
        return (target.precision or 0) < (source.precision or 0)
    return False


def alters_values(source: DataType, target: DataType) -> bool:
    """Whether Java Paimon changes values on a type change that keeps their form: a string
    cut to a shorter VARCHAR or padded to a CHAR, bytes cut or zero-padded to a BINARY, a
    TIMESTAMP cut to fewer fraction digits (nested values included)."""
    return visit_with_partner(target, source, _AltersValues())


@dataclass(frozen=True)
class JavaCastRule:
    """What Java Paimon's cast from one atomic type to another does: the rule in
    ``org.apache.paimon.casting`` and, in words, what it does to values that do not fit."""

    java_class: str
    effect: str | None = None


def _int_name(t: AtomicType) -> str:
    return t.sql().replace(" NOT NULL", "")


def java_cast_rule(source: DataType, target: DataType) -> JavaCastRule | None:
    """Java Paimon's cast rule for an atomic type change (None for nested types or when no
    rule exists), with its effect on values where it has one worth saying."""
    if not (isinstance(source, AtomicType) and isinstance(target, AtomicType)):
        return None
    s, t = source.root, target.root
    name = _int_name(target)
    numeric = Family.NUMERIC in s.families
    if s in _INT_BITS and t in _INT_BITS:
        if _INT_BITS[t] < _INT_BITS[s]:
            return JavaCastRule("NumericPrimitiveCastRule", f"values outside {name} wrap")
        return JavaCastRule("NumericPrimitiveCastRule")
    if s in (R.FLOAT, R.DOUBLE) and t in _INT_BITS:
        bound = "its bounds" if t in (R.INTEGER, R.BIGINT) else "INT's bounds, then wrap"
        return JavaCastRule("NumericPrimitiveCastRule",
                            f"the fraction is cut, values outside {name} saturate at {bound}, "
                            "NaN reads 0")
    if s is R.DOUBLE and t is R.FLOAT:
        return JavaCastRule("NumericPrimitiveCastRule", "values beyond FLOAT read as infinity")
    if s is R.DECIMAL and t in _INT_BITS:
        return JavaCastRule("DecimalToNumericPrimitiveCastRule",
                            f"the fraction is cut, values outside {name} wrap")
    if t is R.DECIMAL and (numeric or s is R.DECIMAL):
        java = "DecimalToDecimalCastRule" if s is R.DECIMAL else "NumericPrimitiveToDecimalCastRule"
        effect = f"rounded half up; values that do not fit {name} read as NULL"
        if s in (R.FLOAT, R.DOUBLE):
            effect += "; NaN and infinity fail the read"
        return JavaCastRule(java, effect if not _fits(source, target) else None)
    if s in (R.CHAR, R.VARCHAR):
        if t in _INT_BITS:
            return JavaCastRule("StringToNumericPrimitiveCastRule",
                                "strings are parsed as Java does: a fraction is cut ('1.5' "
                                f"reads 1); spaces, exponents or values outside {name} fail "
                                "the read")
        if t in (R.FLOAT, R.DOUBLE):
            return JavaCastRule("StringToNumericPrimitiveCastRule",
                                "strings are parsed by Java's Double.parseDouble; others fail "
                                "the read")
        if t is R.DECIMAL:
            return JavaCastRule("StringToDecimalCastRule",
                                "strings are parsed as Java's BigDecimal, rounded half up; "
                                f"values that do not fit {name} read as NULL, strings that "
                                "do not parse fail the read")
        if t in _TIMESTAMPS:
            return JavaCastRule("StringToTimestampCastRule",
                                f"strings are parsed, fraction digits beyond {target.precision} "
                                "are cut; strings that do not parse fail the read")
    if s in _TIMESTAMPS and t in _TIMESTAMPS:
        cut = (target.precision or 0) < (source.precision or 0)
        return JavaCastRule("TimestampToTimestampCastRule",
                            f"fraction digits beyond {target.precision} are cut" if cut else None)
    if t in (R.CHAR, R.VARCHAR) and (s in (R.CHAR, R.VARCHAR, R.BOOLEAN) or numeric):
        java = ("StringToStringCastRule" if s in (R.CHAR, R.VARCHAR) else
                "BooleanToStringCastRule" if s is R.BOOLEAN else "NumericToStringCastRule")
        effects = []
        if target.length != MAX_LENGTH and not (s in (R.CHAR, R.VARCHAR) and
                                                (source.length or 0) <= (target.length or 0)):
            effects.append(f"strings longer than {target.length} are cut")
        if t is R.CHAR:
            effects.append(f"shorter ones are padded with spaces to {target.length}")
        return JavaCastRule(java, ", ".join(effects) or None)
    if t in (R.BINARY, R.VARBINARY) and s in (R.BINARY, R.VARBINARY, R.CHAR, R.VARCHAR):
        java = ("BinaryToBinaryCastRule" if s in (R.BINARY, R.VARBINARY)
                else "StringToBinaryCastRule")
        effects = []
        if target.length != MAX_LENGTH and not (s in (R.BINARY, R.VARBINARY) and
                                                (source.length or 0) <= (target.length or 0)):
            effects.append(f"bytes beyond {target.length} are cut")
        if t is R.BINARY:
            effects.append(f"shorter values are padded with zero bytes to {target.length}")
        return JavaCastRule(java, ", ".join(effects) or None)
    return None


_INT_BITS = {R.TINYINT: 8, R.SMALLINT: 16, R.INTEGER: 32, R.BIGINT: 64}


_NUMERIC_PRIMITIVES = {R.TINYINT, R.SMALLINT, R.INTEGER, R.BIGINT, R.FLOAT, R.DOUBLE}
_STRINGS = {R.CHAR, R.VARCHAR}
_BINARIES = {R.BINARY, R.VARBINARY}
#: Paimon's CastExecutors rules: source roots → the target roots each has a rule for
_EXECUTORS: dict[TypeRoot, set[TypeRoot]] = {
    R.DECIMAL: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS},
    **{r: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS, R.BOOLEAN} for r in _INT_BITS},
    # NumericPrimitiveToTimestamp creates a cast for INT and BIGINT only
    R.INTEGER: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS, R.BOOLEAN, *_TIMESTAMPS},
    R.BIGINT: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS, R.BOOLEAN, *_TIMESTAMPS},
    R.FLOAT: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS},
    R.DOUBLE: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS},
    R.BOOLEAN: {R.DECIMAL, *_NUMERIC_PRIMITIVES, *_STRINGS},
    **{r: {*_STRINGS, R.BOOLEAN, R.DECIMAL, *_NUMERIC_PRIMITIVES, R.DATE,
           R.TIME_WITHOUT_TIME_ZONE, *_TIMESTAMPS, *_BINARIES, R.ARRAY, R.MAP, R.ROW}
       for r in _STRINGS},
    **{r: {*_TIMESTAMPS, R.DATE, R.TIME_WITHOUT_TIME_ZONE, R.BIGINT, R.INTEGER}
       for r in _TIMESTAMPS},
    R.DATE: set(_TIMESTAMPS),
    R.TIME_WITHOUT_TIME_ZONE: set(_TIMESTAMPS),
    **{r: {*_BINARIES, *_STRINGS} for r in _BINARIES},
    **{r: set(_STRINGS) for r in (R.ARRAY, R.MAP, R.ROW)},
}


def has_cast_executor(source: DataType, target: DataType) -> bool:
    """Whether Paimon's ``CastExecutors.resolve(source, target)`` finds a cast: SchemaManager
    refuses a type change without one, though ``DataTypeCasts`` allows it (TIMESTAMP →
    VARCHAR(10), TIMESTAMP → DOUBLE, ARRAY<INT> → ARRAY<BIGINT> as a whole, whose element is
    changed through ``a.element`` instead). The rules are Paimon 1.3's (master's): ARRAY, MAP
    and ROW to and from strings are newer than Java Paimon 1.0. A change of nullability only
    is no cast at all.

        >>> from schemalab.types import parse_type as t
        >>> has_cast_executor(t("TIMESTAMP(3)"), t("STRING"))
        True
        >>> has_cast_executor(t("TIMESTAMP(3)"), t("VARCHAR(30)"))
        False
    """
    if source.with_nullable(True) == target.with_nullable(True):
        return True
    s, t = source.root, target.root
    if s in (*_TIMESTAMPS, R.DATE, R.TIME_WITHOUT_TIME_ZONE) and t in _STRINGS:
        # TimestampToStringCastRule & co. are keyed by STRING itself, not by VARCHAR(n)
        return t is R.VARCHAR and getattr(target, "length", None) == MAX_LENGTH
    if s in (R.DECIMAL, R.FLOAT, R.DOUBLE, R.TINYINT, R.SMALLINT) and t in _TIMESTAMPS:
        return False  # NumericPrimitiveToTimestamp creates a cast for INT and BIGINT only
    return t in _EXECUTORS.get(s, set())
