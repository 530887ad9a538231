"""Column default values (Paimon 1.2+'s ``defaultValue``): which texts a type accepts.

Java Paimon validates a default when it is set (``DefaultValueUtils.validateDefaultValue``):
the text, less one pair of enclosing quotes, must cast from STRING to the column's type by
its ``CastExecutors`` (``BinaryStringUtils`` parses numbers, booleans, dates and times).
Types with no cast from STRING (ARRAY, MAP, ROW, …) take no default.

    >>> from schemalab.types import parse_type as t
    >>> default_value_problem(t("INT"), " 7 "), default_value_problem(t("INT"), "1.5")
    (None, None)
    >>> default_value_problem(t("INT"), "'abc'")
    'Unsupported default value `abc` for type INT'
    >>> default_value_problem(t("BOOLEAN"), "yes"), default_value_problem(t("DATE"), "2024-1-5")
    (None, None)
    >>> default_value_problem(t("ARRAY<INT>"), "[1]")
    'Default value do not support the type of ARRAY<INT>'
"""

from __future__ import annotations

import decimal
import re

from schemalab.types.model import TIMESTAMP_ROOTS, AtomicType, DataType, TypeRoot

R = TypeRoot
_INT_BITS = {R.TINYINT: 8, R.SMALLINT: 16, R.INTEGER: 32, R.BIGINT: 64}
# BinaryStringUtils.toLong: an optional sign, digits, and an ignored fraction
_INTEGER = re.compile(r"^[+-]?\d+(\.\d*)?$")
_BOOLEANS = frozenset({"t", "true", "y", "yes", "1", "f", "false", "n", "no", "0"})
# Double.valueOf: Java's floating literal, with its optional d/f suffix
_FLOATING = re.compile(r"^[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[dDfF]?)$")
_DATE = re.compile(r"^\d{1,9}-\d{1,2}-\d{1,2}$")
_TIME = r"\d{1,2}:\d{1,2}(:\d{1,2}(\.\d{1,9})?)?"
_TIMESTAMP = re.compile(rf"^\d{{1,9}}-\d{{1,2}}-\d{{1,2}}([ T]{_TIME})?$")
_TIME_ONLY = re.compile(rf"^{_TIME}$")


def unquoted(text: str) -> str:
    """The text Java casts: one pair of enclosing single quotes removed."""
    return text[1:-1] if len(text) >= 2 and text[0] == "'" and text[-1] == "'" else text


def _accepts(t: AtomicType, text: str) -> bool:
    root = t.root
    s = text.strip()
    if root in _INT_BITS:
        if not _INTEGER.match(s):
            return False
        bits = _INT_BITS[root]
        return -(2 ** (bits - 1)) <= int(s.split(".")[0]) < 2 ** (bits - 1)
    if root is R.BOOLEAN:
        return s.lower() in _BOOLEANS
    if root in (R.FLOAT, R.DOUBLE):
        return bool(_FLOATING.match(s))
    if root is R.DECIMAL:
        try:
            decimal.Decimal(s)
        except decimal.InvalidOperation:
            return False
        return "_" not in s and s.lower() not in ("nan", "inf", "infinity", "-inf", "snan")
    if root is R.DATE:
        return bool(_DATE.match(s))
    if root is R.TIME_WITHOUT_TIME_ZONE:
        return bool(_TIME_ONLY.match(s))
    if root in TIMESTAMP_ROOTS:
        return bool(_TIMESTAMP.match(s))
    return True  # character and binary strings take any text


def default_value_problem(t: DataType, text: str) -> str | None:
    """Java Paimon's message refusing ``text`` as a default of type ``t``, or None."""
    if not isinstance(t, AtomicType) or t.root is R.VARIANT:
        return f"Default value do not support the type of {t.sql()}"
    value = unquoted(text)
    if not _accepts(t, value):
        return f"Unsupported default value `{value}` for type {t.sql()}"
    return None
