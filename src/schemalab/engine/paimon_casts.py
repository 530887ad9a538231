"""Java Paimon's casts (``org.apache.paimon.casting``), as Spark column expressions.

When a column's type was changed, Java Paimon reads its old values through
``CastExecutors.resolve(fileType, tableType)``. Where Spark's own ``cast`` gives another
value, the rule is written out here, with the Java class it comes from; everything else is
Spark's cast, which agrees with Java's there (measured: tests/test_interop_java_paimon.py).
What each rule does to values is said in words by :func:`schemalab.types.casts.java_cast_rule`
(the explanations and docs/compatibility.md use those words).

A rule gives three columns: the ``value`` Java reads; ``changed``, the rows whose value
Java's cast does not keep (it wraps, saturates, cuts a string, or reads NULL for a value
that does not fit: the FLIP-226 modes ``explicit`` and ``explicit-null`` fail or read NULL
there); and ``fails``, the rows Java's read fails on (an unparsable string), with Java's
exception for the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from schemalab.types.model import TIMESTAMP_ROOTS, AtomicType, DataType, Family, TypeRoot
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

R = TypeRoot
#: integer types by their width in bits
INT_BITS = {R.TINYINT: 8, R.SMALLINT: 16, R.INTEGER: 32, R.BIGINT: 64}
_EPOCH_NTZ = "1970-01-01 00:00:00"


@dataclass(frozen=True)
class JavaCast:
    value: Column
    changed: Column | None = None
    fails: Column | None = None
    #: Java's exception for ``fails``, e.g. "NumberFormatException"
    failure: str = ""


def java_cast(col: Column, source: DataType, target: DataType) -> JavaCast | None:
    """``col`` (values of ``source``) as Java Paimon reads them as ``target``, or None where
    Spark's cast gives Java's values."""
    if not (isinstance(source, AtomicType) and isinstance(target, AtomicType)):
        return None
    s, t = source.root, target.root
    if s in INT_BITS and t in INT_BITS and INT_BITS[t] < INT_BITS[s]:
        return _integer_narrowing(col, target)
    if s in (R.FLOAT, R.DOUBLE) and t in INT_BITS:
        return _floating_to_integer(col, target)
    if s is R.DECIMAL and t in INT_BITS:
        return _decimal_to_integer(col, source, target)
    if t is R.DECIMAL and s in (*INT_BITS, R.DECIMAL, R.FLOAT, R.DOUBLE):
        return _to_decimal(col, source, target)
    if _is_string(s) and t in INT_BITS:
        return _string_to_integer(col, target)
    if _is_string(s) and t in (R.FLOAT, R.DOUBLE):
        return _string_to_floating(col, target)
    if _is_string(s) and t is R.DECIMAL:
        return _string_to_decimal(col, target)
    if s in TIMESTAMP_ROOTS and t in TIMESTAMP_ROOTS:
        return JavaCast(truncate_timestamp(col.cast(to_spark(target)), target))
    if _is_string(s) and t in TIMESTAMP_ROOTS:
        parsed = col.try_cast(to_spark(target))
        return JavaCast(truncate_timestamp(parsed, target), fails=_unparsed(col, parsed),
                        failure="DateTimeException")
    if s in TIMESTAMP_ROOTS and t in (R.CHAR, R.VARCHAR):
        return JavaCast(_timestamp_text(col, source))
    if s in TIMESTAMP_ROOTS and t in (R.INTEGER, R.BIGINT):
        return JavaCast(_epoch_seconds(col, target))
    if s in (R.INTEGER, R.BIGINT) and t in TIMESTAMP_ROOTS:
        return JavaCast(_from_epoch_seconds(col, target))
    if s is R.TIME_WITHOUT_TIME_ZONE and t in TIMESTAMP_ROOTS:
        return JavaCast(_time_on_epoch_day(col, target))
    if t in (R.CHAR, R.VARCHAR) and (_is_string(s) or s is R.BOOLEAN
                                     or Family.NUMERIC in s.families):
        return _to_character_string(col.cast("string"), source, target)
    if t in (R.BINARY, R.VARBINARY) and (_is_string(s) or Family.BINARY_STRING in s.families):
        return _to_binary_string(col.cast("binary"), source, target)
    return None


def _is_string(root: TypeRoot) -> bool:
    return root in (R.CHAR, R.VARCHAR)


def _unparsed(col: Column, parsed: Column) -> Column:
    return col.isNotNull() & parsed.isNull()


def _lit(value: int) -> Column:
    from pyspark.sql import functions as F

    return F.lit(value)


def wrap(x: Column, bits: int) -> Column:
    """A BIGINT column narrowed as Java narrows a ``long`` to ``bits``: the low bits kept,
    read as two's complement (5000000000 as INT is 705032704)."""
    from pyspark.sql import functions as F

    if bits >= 64:
        return x
    m = F.pmod(x, _lit(2 ** bits))
    return F.when(m >= 2 ** (bits - 1), m - _lit(2 ** bits)).otherwise(m)


def _bounds(bits: int) -> tuple[int, int]:
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def _integer_narrowing(col: Column, target: AtomicType) -> JavaCast:
    """NumericPrimitiveCastRule: ``Number.intValue()`` etc. keep the low bits."""
    bits = INT_BITS[target.root]
    lo, hi = _bounds(bits)
    x = col.cast("bigint")
    return JavaCast(wrap(x, bits).cast(to_spark(target)), changed=(x < lo) | (x > hi))


def _floating_to_integer(col: Column, target: AtomicType) -> JavaCast:
    """NumericPrimitiveCastRule on a float/double: Java's ``(int) d`` and ``(long) d`` cut
    the fraction, saturate at the type's bounds and read NaN as 0; ``shortValue()`` and
    ``byteValue()`` are ``(short) (int) d``: saturated at INT's bounds, then wrapped."""
    from pyspark.sql import functions as F

    bits = INT_BITS[target.root]
    x = col.cast("double")
    if bits == 64:
        lo, hi = _bounds(64)
        # 2^63 is the double just above Long.MAX_VALUE: >= it saturates
        value = (F.when(F.isnan(x), _lit(0)).when(x >= 9.223372036854775807e18, _lit(hi))
                 .when(x <= -9.223372036854775808e18, _lit(lo)).otherwise(x.cast("bigint")))
    else:
        lo, hi = _bounds(32)
        int_value = (F.when(F.isnan(x), _lit(0)).when(x >= float(hi), _lit(hi))
                     .when(x <= float(lo), _lit(lo)).otherwise(x.cast("bigint")))
        value = wrap(int_value.cast("bigint"), bits)
    lo_t, hi_t = _bounds(bits)
    changed = F.isnan(x) | (x >= float(hi_t) + 1) | (x <= float(lo_t) - 1)
    return JavaCast(value.cast(to_spark(target)), changed=changed)


def _decimal_to_integer(col: Column, source: AtomicType, target: AtomicType) -> JavaCast:
    """DecimalToNumericPrimitiveCastRule: ``(int) DecimalUtils.castToIntegral(d)``: the
    fraction cut (rounding down), the long's low bits, then narrowed (wraps)."""
    from pyspark.sql import functions as F

    whole = F.when(col >= 0, F.floor(col)).otherwise(F.ceil(col))
    digits = (source.precision or 10) - (source.scale or 0)
    if digits <= 18:
        as_long = whole.cast("bigint")
    else:  # BigDecimal.longValue(): the low 64 bits of a wider value
        m = F.pmod(whole.cast("decimal(38, 0)"), F.lit(Decimal(2 ** 64)))
        as_long = F.when(m >= Decimal(2 ** 63), m - F.lit(Decimal(2 ** 64))).otherwise(m) \
            .cast("bigint")
    bits = INT_BITS[target.root]
    lo, hi = _bounds(bits)
    return JavaCast(wrap(as_long, bits).cast(to_spark(target)),
                    changed=(whole < lo) | (whole > hi))


def _to_decimal(col: Column, source: AtomicType, target: AtomicType) -> JavaCast:
    """DecimalToDecimalCastRule, NumericPrimitiveToDecimalCastRule: rounded half up to the
    scale; a value that does not fit the precision reads as NULL (``Decimal.fromBigDecimal``);
    a NaN or infinite double fails (``BigDecimal.valueOf``)."""
    from pyspark.sql import functions as F

    value = col.try_cast(to_spark(target))
    fails = None
    if source.root in (R.FLOAT, R.DOUBLE):
        fails = F.isnan(col) | (F.abs(col) == float("inf"))
    changed = col.isNotNull() & value.isNull()
    return JavaCast(value, changed=changed, fails=fails, failure="NumberFormatException")


# Java's BinaryStringUtils.toInt/toLong: a sign, digits, and a fraction of digits that is cut
_JAVA_INTEGRAL = r"^[+-]?[0-9]*(\.[0-9]*)?$"


def _string_to_integer(col: Column, target: AtomicType) -> JavaCast:
    """StringToNumericPrimitiveCastRule → ``BinaryStringUtils.toInt``/``toLong``: digits
    with an optional sign, a fraction cut ('1.5' → 1, '-12.9' → -12); anything else (a
    space, an exponent, a value outside the type) fails the read."""
    from pyspark.sql import functions as F

    bits = INT_BITS[target.root]
    lo, hi = _bounds(bits)
    sign = F.regexp_extract(col, r"^([+-]?)", 1)
    digits = F.regexp_extract(col, r"^[+-]?0*([0-9]*)", 1)
    number = F.concat(sign, F.when(digits == "", F.lit("0")).otherwise(digits)) \
        .try_cast("decimal(20, 0)")
    well_formed = col.rlike(_JAVA_INTEGRAL) & ~col.isin("", "+", "-")
    fits = F.coalesce((F.length(digits) <= 19) & (number >= lo) & (number <= hi), F.lit(False))
    fails = col.isNotNull() & ~(well_formed & fits)
    return JavaCast(F.when(fails, F.lit(None)).otherwise(number).cast(to_spark(target)),
                    fails=fails, failure="NumberFormatException")


def _string_to_floating(col: Column, target: AtomicType) -> JavaCast:
    """StringToNumericPrimitiveCastRule → ``Double.parseDouble``/``Float.parseFloat``,
    which Spark's cast uses too; Spark also takes 'inf', 'nan' and any case, Java only
    'Infinity' and 'NaN'."""
    value = col.try_cast(to_spark(target))
    trimmed = col.cast("string")
    spark_only = (trimmed.rlike(r"(?i)^\s*[+-]?(inf|infinity|nan)\s*$")
                  & ~trimmed.rlike(r"^\s*[+-]?(Infinity|NaN)\s*$"))
    fails = col.isNotNull() & (value.isNull() | spark_only)
    return JavaCast(value, fails=fails, failure="NumberFormatException")


# java.math.BigDecimal(String): no spaces; digits, a point, an exponent
_JAVA_BIG_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _string_to_decimal(col: Column, target: AtomicType) -> JavaCast:
    """StringToDecimalCastRule: ``new BigDecimal(s)`` rounded half up to the scale; a value
    that does not fit reads as NULL; a string BigDecimal does not parse fails the read."""
    value = col.try_cast(to_spark(target))
    well_formed = col.rlike(_JAVA_BIG_DECIMAL)
    return JavaCast(value, changed=col.isNotNull() & well_formed & value.isNull(),
                    fails=col.isNotNull() & ~well_formed, failure="NumberFormatException")


def _micros(col: Column, root: TypeRoot) -> Column:
    """Microseconds since the epoch of a timestamp, in its own wall time for a TIMESTAMP."""
    from pyspark.sql import functions as F

    if root is R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return F.unix_micros(col)
    return F.timestamp_diff("MICROSECOND", F.lit(_EPOCH_NTZ).cast("timestamp_ntz"), col)


def _from_micros(micros: Column, t: AtomicType) -> Column:
    from pyspark.sql import functions as F

    if t.root is R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return F.timestamp_micros(micros)
    return F.timestamp_add("MICROSECOND", micros, F.lit(_EPOCH_NTZ).cast("timestamp_ntz"))


def truncate_timestamp(col: Column, t: AtomicType) -> Column:
    """A timestamp (already of ``t``'s root) cut to ``t``'s precision as Java Paimon 2.0's
    ``DateTimeUtils.truncate`` cuts it: milliseconds toward zero for precision < 3, the
    digits below the precision otherwise. (Paimon 1.0 cut only when the nano-of-second had
    more decimal digits than the precision, so it kept ``.000005`` at precision 4; 2.0 counts
    the significant digits and cuts it.)"""
    from pyspark.sql import functions as F

    p = 6 if t.precision is None else t.precision
    if p >= 6:
        return col
    micros = _micros(col, t.root)
    if p >= 3:
        unit = 10 ** (6 - p)
        cut = micros - F.pmod(micros, _lit(unit))
    else:
        # exact division: the micros of whole milliseconds, as DECIMAL
        millis = ((micros - F.pmod(micros, _lit(1000))).cast("decimal(20, 0)") / 1000) \
            .cast("bigint")
        cut = (millis - millis % _lit(10 ** (3 - p))) * 1000  # % is Java's remainder
    return _from_micros(cut, t)


def _timestamp_text(col: Column, source: AtomicType) -> Column:
    """TimestampToStringCastRule: every one of the precision's fraction digits, zeros too;
    Spark's cast drops a zero fraction. The session time zone (UTC in ``local_spark``)
    stands for Java's default zone."""
    from pyspark.sql import functions as F

    p = source.precision if source.precision is not None else 6
    pattern = "yyyy-MM-dd HH:mm:ss" + ("." + "S" * min(p, 9) if p else "")
    return F.date_format(col, pattern)


def _epoch_seconds(col: Column, target: AtomicType) -> Column:
    """TimestampToNumericPrimitiveCastRule: epoch seconds, the milliseconds divided by 1000
    toward zero; an INT keeps the long's low 32 bits. Spark refuses the cast."""
    from pyspark.sql import functions as F

    millis = F.floor(F.unix_micros(col.cast("timestamp")) / 1000)
    seconds = F.when(millis >= 0, F.floor(millis / 1000)).otherwise(F.ceil(millis / 1000))
    return wrap(seconds.cast("bigint"), INT_BITS[target.root]).cast(to_spark(target))


def _from_epoch_seconds(col: Column, target: AtomicType) -> Column:
    """NumericPrimitiveToTimestamp: an INT or BIGINT is seconds since the epoch, read as UTC
    wall time for a TIMESTAMP (Spark refuses INT → TIMESTAMP_NTZ) and as an instant for a
    TIMESTAMP WITH LOCAL TIME ZONE (Java's default zone: the session's, UTC in
    ``local_spark``)."""
    return _from_micros(col.cast("bigint") * _lit(1_000_000), target)


def _time_on_epoch_day(col: Column, target: AtomicType) -> Column:
    """TimeToTimestampCastRule: the time's milliseconds of the day as epoch milliseconds,
    i.e. that time on 1970-01-01 (Spark's cast puts it on today's date)."""
    from pyspark.sql import functions as F

    text = F.concat(F.lit("1970-01-01 "), col.cast("string"))
    return truncate_timestamp(text.cast(to_spark(target)), target)


def _to_character_string(text: Column, source: AtomicType, target: AtomicType) -> JavaCast:
    """StringToStringCastRule, NumericToStringCastRule, BooleanToStringCastRule →
    ``BinaryStringUtils.toCharacterString``: cut to the target's length; a CHAR is padded
    with spaces to it."""
    from pyspark.sql import functions as F

    n = target.length or 1
    too_long = F.char_length(text) > n
    value = F.when(too_long, F.substring(text, 1, n)).otherwise(text)
    if target.root is R.CHAR:
        value = F.rpad(value, n, " ")
    return JavaCast(value, changed=too_long)


def _to_binary_string(data: Column, source: AtomicType, target: AtomicType) -> JavaCast:
    """BinaryToBinaryCastRule, StringToBinaryCastRule → ``BinaryStringUtils.toBinaryString``:
    cut to the target's length; a BINARY is padded with zero bytes to it."""
    from pyspark.sql import functions as F

    n = target.length or 1
    too_long = F.length(data) > n
    if target.root is R.BINARY:
        value = F.substring(F.concat(data, F.lit(bytearray(n))), 1, n)
    else:
        value = F.when(too_long, F.substring(data, 1, n)).otherwise(data)
    return JavaCast(value, changed=too_long)
