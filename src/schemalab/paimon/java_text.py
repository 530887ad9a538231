"""Values as Java Paimon prints them: ``toString()`` of its internal objects, and the
STRING cast of each type. Partition directory names are made of these texts, so a reader
finds a writer's files only when both print a value alike.

    >>> java_double(1e20), java_double(0.1), java_double(-0.0), java_double(100.0)
    ('1.0E20', '0.1', '-0.0', '100.0')
    >>> java_float(0.10000000149011612)   # the FLOAT 0.1, held by Python as a double
    '0.1'
    >>> import datetime as dt
    >>> java_local_date_time(dt.datetime(2024, 1, 5, 10, 11, 12, 345000))
    '2024-01-05T10:11:12.345'
    >>> java_local_date_time(dt.datetime(2024, 1, 5))
    '2024-01-05T00:00'
    >>> java_is_whitespace_only(" \\t"), java_is_whitespace_only("\\u00a0")
    (True, False)
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import unicodedata

_EPOCH_DATE = dt.date(1970, 1, 1)


def _digits(shortest: str, exact: decimal.Decimal) -> tuple[str, int]:
    """The digits Java prints for a positive number whose shortest round-trip text is
    ``shortest`` and exact value ``exact``, and the power of ten of the first digit:
    ``"1.5e-05"`` → ``("15", -5)``. Where one digit would do, Java takes the two-digit
    decimal nearest the exact value (``Double.MIN_VALUE`` is ``4.9E-324``, not ``5E-324``)."""
    _, digits, exponent = decimal.Decimal(shortest).normalize().as_tuple()
    assert isinstance(exponent, int)
    if len(digits) == 1:
        e = exponent
        _, digits, exponent = exact.quantize(decimal.Decimal(1).scaleb(e - 1),
                                             decimal.ROUND_HALF_EVEN).normalize().as_tuple()
        assert isinstance(exponent, int)
    ds = "".join(map(str, digits))
    return ds, exponent + len(ds) - 1


def _java_floating(shortest: str, exact: decimal.Decimal, negative: bool) -> str:
    """``Double.toString``'s layout of a finite, positive number's digits: plain between
    10^-3 and 10^7, else ``d.dddE<n>``; at least one fraction digit."""
    ds, e = _digits(shortest, exact)
    if -3 <= e < 7:
        if e >= 0:
            whole = ds[: e + 1].ljust(e + 1, "0")
            fraction = ds[e + 1:] or "0"
        else:
            whole, fraction = "0", "0" * (-e - 1) + ds
        out = f"{whole}.{fraction}"
    else:
        out = f"{ds[0]}.{ds[1:] or '0'}E{e}"
    return "-" + out if negative else out


def java_double(x: float) -> str:
    """``Double.toString(x)``, from the shortest digits that read back as ``x`` (what Java
    prints from JDK 19 on; older JDKs print more digits for a few rare values)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _java_floating(repr(abs(x)), decimal.Decimal(abs(x)), x < 0)


def java_float(x: float) -> str:
    """``Float.toString`` of the FLOAT (single precision) nearest ``x``."""
    import numpy as np

    f = np.float32(x)
    if math.isnan(f) or math.isinf(f) or f == 0:
        return java_double(float(f))
    return _java_floating(np.format_float_scientific(abs(f), unique=True),
                          decimal.Decimal(float(abs(f))), bool(f < 0))


def java_local_time(t: dt.time | dt.datetime, nanos: int | None = None) -> str:
    """``LocalTime.toString``: ``HH:mm``, then ``:ss`` unless seconds and fraction are 0,
    then the fraction in groups of 3 digits (3, 6 or 9) as needed."""
    nano = t.microsecond * 1000 if nanos is None else nanos
    out = f"{t.hour:02d}:{t.minute:02d}"
    if t.second or nano:
        out += f":{t.second:02d}"
        if nano % 1_000_000 == 0 and nano:
            out += f".{nano // 1_000_000:03d}"
        elif nano % 1000 == 0 and nano:
            out += f".{nano // 1000:06d}"
        elif nano:
            out += f".{nano:09d}"
    return out


def java_local_date_time(ts: dt.datetime, nanos: int | None = None) -> str:
    """``LocalDateTime.toString`` (Paimon's ``Timestamp.toString``) of a naive wall time;
    ``nanos`` overrides the nano-of-second (Python keeps microseconds only)."""
    # LocalDate.toString is ISO yyyy-MM-dd for the years Python has (1..9999)
    return f"{ts.date().isoformat()}T{java_local_time(ts, nanos)}"


def java_epoch_days(d: dt.date) -> int:
    """A DATE as Paimon holds it: days since 1970-01-01."""
    return (d - _EPOCH_DATE).days


def java_millis_of_day(t: dt.time) -> int:
    """A TIME as Paimon holds it: milliseconds of the day."""
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + t.microsecond // 1000


def java_plain_decimal(value: decimal.Decimal, scale: int | None = None) -> str:
    """``BigDecimal.toPlainString`` of a DECIMAL of the given scale: no exponent, the
    scale's digits kept (``12.30``)."""
    if scale is not None:
        value = value.quantize(decimal.Decimal(1).scaleb(-scale))
    return format(value, "f")


def java_is_whitespace(c: str) -> bool:
    """``Character.isWhitespace``: Unicode space, line and paragraph separators except the
    no-break ones, and the ASCII controls TAB, LF, VT, FF, CR and FS..US."""
    if c in "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f":
        return True
    return unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\u00a0\u2007\u202f"


def java_is_whitespace_only(text: str) -> bool:
    """Paimon's ``StringUtils.isNullOrWhitespaceOnly`` for a non-null string."""
    return all(java_is_whitespace(c) for c in text)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units, 32-bit), as an unsigned int.

        >>> java_string_hash("a"), java_string_hash("bucket")
        (97, 2916764138)
    """
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(keys: list[str]) -> list[str]:
    """The order a ``java.util.HashMap`` of String keys, filled in ``keys``' order with the
    default capacity, iterates them: by bucket (the spread hash's low bits of a table grown
    to hold them at load factor 0.75), insertion order within a bucket. Java Paimon reads a
    schema's options into such a map, so its ``$options`` and ``$schemas`` list them so.

        >>> java_hash_map_order(["metadata.stats-mode", "file.format"])
        ['file.format', 'metadata.stats-mode']
    """
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]
