"""Which type changes are allowed, after Paimon's ``DataTypeCasts``, and how reads cast.

*Implicit* casts never lose information (INT → BIGINT, CHAR → VARCHAR, DATE ← TIMESTAMP is
Paimon's one lossy exception). *Explicit* casts are SQL ``CAST``s that may fail or lose
information on some values (BIGINT → INT, STRING → INT).

FLIP-226 names three read modes, chosen here by the table option ``cast.mode``:

============== ============================================================================
``implicit``   only implicit type changes are accepted by ALTER (as Paimon's
               ``disable-explicit-type-casting=true``)
``explicit``   explicit changes too; a value that does not convert fails the read (default,
               Paimon's behaviour)
``explicit-null`` explicit changes too; a value that does not convert reads as NULL
============== ============================================================================

    >>> from schemalab.types import parse_type as t
    >>> cast_kind(t("INT"), t("BIGINT")), cast_kind(t("BIGINT"), t("INT"))
    ('implicit', 'explicit')
    >>> cast_kind(t("INT"), t("BYTES")) is None
    True
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Literal

from schemalab.types.model import (
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
    IMPLICIT = "implicit"
    EXPLICIT = "explicit"
    EXPLICIT_NULL = "explicit-null"

    @property
    def allows_explicit(self) -> bool:
        return self is not CastMode.IMPLICIT


def cast_mode(options: Mapping[str, str]) -> CastMode:
    """The table's read mode. ``disable-explicit-type-casting=true`` (Paimon's own option)
    means implicit only, whatever ``cast.mode`` says."""
    if str(options.get(DISABLE_EXPLICIT_OPTION, "false")).lower() == "true":
        return CastMode.IMPLICIT
    raw = options.get(CAST_MODE_OPTION, CastMode.EXPLICIT.value)
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

