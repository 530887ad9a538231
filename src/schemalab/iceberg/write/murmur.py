"""Iceberg's ``bucket[N]`` of strings, binary and decimals as Spark columns: Murmur3_x86_32
with seed 0 over the spec's bytes (UTF-8 for a string, the bytes themselves for binary, the
unscaled value's minimal big-endian two's-complement bytes for a decimal), built from Spark
SQL functions only, so executors need no Python at all.

Spark's ``hash`` is Murmur3_x86_32 too, but for a byte array whose length is not a multiple
of 4 it mixes each trailing byte as a block of its own, which standard Murmur3 does not. So
Spark hashes only the whole 4-byte blocks; its finalization (``fmix``) is undone (every step
of it is invertible modulo 2^32), the 1-3 trailing bytes are mixed as the standard does, and
``fmix`` is applied again with the full length. All 32-bit arithmetic runs on non-negative
BIGINTs: a product is taken in 16-bit halves, so nothing overflows (Spark's ANSI mode would
refuse an overflow). Each intermediate value is bound once (``let``), so the expression
stays linear in size.

The plain-Python :func:`murmur3_32` is the reference the Spark column is tested against::

    >>> murmur3_32("iceberg".encode())  # the spec's example: bucket hash of "iceberg"
    1210000089
    >>> decimal_bytes_of(Decimal("14.20"), 2).hex()  # the spec's example: 1420 → 0x058c
    '058c'
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Context, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

M32 = 0xFFFFFFFF
C1, C2 = 0xCC9E2D51, 0x1B873593
F1, F2 = 0x85EBCA6B, 0xC2B2AE35
#: an INT whose Spark ``hash`` (Murmur3, seed 42) is 0: ``hash(SEED_ZERO, b)`` hashes ``b``
#: with seed 0
SEED_ZERO = -1693959553


# ---- the reference, in Python ---------------------------------------------------------------


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & M32


def _fmix(h: int, length: int) -> int:
    h ^= length
    for shift, mult in ((16, F1), (13, F2)):
        h ^= h >> shift
        h = (h * mult) & M32
    return h ^ (h >> 16)


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Standard Murmur3_x86_32 (Guava's ``murmur3_32_fixed``, which Iceberg uses), signed."""
    h = seed & M32
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        k = _rotl(int.from_bytes(data[i:i + 4], "little") * C1 & M32, 15) * C2 & M32
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & M32
    tail = int.from_bytes(data[aligned:], "little")
    if tail or len(data) > aligned:
        h ^= _rotl(tail * C1 & M32, 15) * C2 & M32
    h = _fmix(h, len(data))
    return h - (1 << 32) if h & 0x80000000 else h


def decimal_bytes_of(value: Decimal, scale: int) -> bytes:
    """The unscaled value's minimal two's-complement big-endian bytes (Java's
    ``BigInteger.toByteArray``)."""
    unscaled = int(value.scaleb(scale, context=Context(prec=80)))  # exact past 28 digits
    return unscaled.to_bytes(max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1),
                             "big", signed=True)


# ---- the same in Spark columns --------------------------------------------------------------


def let(value: Column, body: Callable[[Column], Column]) -> Column:
    """``body(v)`` with ``v`` bound to ``value`` once (a one-element ``transform``)."""
    from pyspark.sql import functions as F

    return F.element_at(F.transform(F.array(value), body), 1)


def _lit(v: int) -> Column:
    from pyspark.sql import functions as F

    return F.lit(v).cast("bigint")


def _mul(a: Column, c: int) -> Column:
    """``a * c mod 2^32`` for ``0 <= a < 2^32``, in 16-bit halves (no BIGINT overflow)."""
    lo = a.bitwiseAND(_lit(0xFFFF))
    hi = _shr(a, 16)
    return (lo * _lit(c) + _shl((hi * _lit(c)).bitwiseAND(_lit(0xFFFF)), 16)) \
        .bitwiseAND(_lit(M32))


def _shr(a: Column, n: int) -> Column:
    from pyspark.sql import functions as F

    return F.shiftright(a, n)


def _shl(a: Column, n: int) -> Column:
    from pyspark.sql import functions as F

    return F.shiftleft(a, n)


def _xorshift(h: Column, n: int) -> Column:
    return h.bitwiseXOR(_shr(h, n))


def _steps(value: Column, *steps: Callable[[Column], Column]) -> Column:
    """``value`` through ``steps``, each step's input bound once."""
    out = value
    for step in steps:
        out = let(out, step)
    return out


def _fmix_col(h: Column, length: Column) -> Column:
    return _steps(h.bitwiseXOR(length), lambda x: _xorshift(x, 16), lambda x: _mul(x, F1),
                  lambda x: _xorshift(x, 13), lambda x: _mul(x, F2),
                  lambda x: _xorshift(x, 16))


def _unfmix_col(h: Column, length: Column) -> Column:
    """The inverse of ``fmix(h, length)``: Spark's hash of the aligned blocks, unfinished."""
    return _steps(h, lambda x: _xorshift(x, 16), lambda x: _mul(x, pow(F2, -1, 1 << 32)),
                  lambda x: x.bitwiseXOR(_shr(x, 13)).bitwiseXOR(_shr(x, 26)),
                  lambda x: _mul(x, pow(F1, -1, 1 << 32)), lambda x: _xorshift(x, 16),
                  lambda x: x.bitwiseXOR(length))


def _rotl15(x: Column) -> Column:
    return _shl(x, 15).bitwiseOR(_shr(x, 17)).bitwiseAND(_lit(M32))


def _mix_k1(k: Column) -> Column:
    rotl = _rotl15
    return _steps(k, lambda x: _mul(x, C1), rotl, lambda x: _mul(x, C2))


def _byte_at(hexed: Column, i: int) -> Column:
    """Byte ``i`` (0-based) of a hex string, 0 past its end."""
    from pyspark.sql import functions as F

    pair = F.substring(hexed, F.lit(2 * i + 1), F.lit(2))
    return F.coalesce(F.conv(F.nullif(pair, F.lit("")), 16, 10).cast("bigint"), _lit(0))


def murmur3_bytes(data: Column) -> Column:
    """Standard Murmur3_x86_32 (seed 0) of a BINARY column, as a signed INT."""
    from pyspark.sql import functions as F

    def body(b: Column) -> Column:
        n = F.length(b).cast("bigint")
        aligned = n - n % _lit(4)
        blocks = F.substring(b, F.lit(1), aligned.cast("int"))
        spark = F.hash(F.lit(SEED_ZERO).cast("int"), blocks)
        h1 = _unfmix_col(spark.cast("bigint").bitwiseAND(_lit(M32)), aligned)
        tail = F.hex(F.substring(b, (aligned + _lit(1)).cast("int"), F.lit(3)))
        k1 = _byte_at(tail, 0) + _shl(_byte_at(tail, 1), 8) + _shl(_byte_at(tail, 2), 16)
        h = _fmix_col(h1.bitwiseXOR(_mix_k1(k1)), n)
        return let(h, lambda x: F.when(x >= _lit(1 << 31), x - _lit(1 << 32)).otherwise(x))

    return let(data, body).cast("int")


D38 = "decimal(38,0)"


def decimal_unscaled(c: Column, scale: int) -> Column:
    """A DECIMAL(p, ``scale``) column's unscaled value as DECIMAL(38, 0), exactly for any
    precision up to 38: the integer part (toward zero) and ``v % 1`` each keep every digit
    and have the value's sign, where ``v * 10^scale`` or ``v - floor(v)`` would lose
    fraction digits to Spark's decimal precision rules at large precisions."""
    from pyspark.sql import functions as F

    if scale == 0:
        return c.cast(D38)
    power = F.lit(Decimal(10) ** scale)
    whole = F.when(c < F.lit(0), F.ceil(c)).otherwise(F.floor(c)).cast(D38)
    frac = ((c % F.lit(Decimal(1))) * power).cast(D38)
    return (whole * power.cast(D38) + frac).cast(D38)


def decimal_unscaled_bytes(c: Column, scale: int) -> Column:
    """A DECIMAL(p, ``scale``) column's unscaled value as its minimal two's-complement
    big-endian bytes (BINARY), for any precision up to 38."""
    from pyspark.sql import functions as F

    two64, two32 = F.lit(Decimal(2 ** 64)).cast(D38), F.lit(Decimal(2 ** 32)).cast(D38)

    def hex128(m: Column) -> Column:
        """32 hex digits of ``0 <= m < 2^127``: split by 2^64 and 2^32 with differences
        that stay within DECIMAL(38, 0)."""
        lo = F.pmod(m, two64)
        hi = ((m - lo) / two64).cast("bigint")
        lo_lo = F.pmod(lo, two32)
        lo_hi = ((lo - lo_lo) / two32).cast("bigint")
        return F.concat(F.lpad(F.hex(hi), 16, "0"), F.lpad(F.hex(lo_hi), 8, "0"),
                        F.lpad(F.hex(lo_lo.cast("bigint")), 8, "0"))

    def hexed(u: Column) -> Column:
        """Two's complement: a negative ``u`` is the bitwise NOT of ``-1 - u`` (a binary
        minus: Spark's unary minus rounds a decimal to 34 digits)."""
        negative = u < F.lit(0).cast(D38)
        m = F.when(negative, F.lit(-1).cast(D38) - u).otherwise(u).cast(D38)
        digits = let(m, hex128)
        return F.when(negative, F.translate(digits, "0123456789ABCDEF", "FEDCBA9876543210")) \
            .otherwise(digits)

    def minimal(h: Column) -> Column:
        return F.regexp_replace(F.regexp_replace(h, "^(00)*(?=[0-7])", ""),
                                "^(FF)*(?=[89A-F])", "")

    return F.unhex(_steps(decimal_unscaled(c, scale), hexed, minimal))


def truncate_decimal(c: Column, width: int, scale: int) -> Column:
    """The spec's ``v - (((v % W) + W) % W)`` on the unscaled value, as DECIMAL(38, 0)."""
    from pyspark.sql import functions as F

    return let(decimal_unscaled(c, scale),
               lambda u: (u - F.pmod(u, F.lit(Decimal(width)).cast(D38))).cast(D38))


def bucket_of_bytes(data: Column, n: int) -> Column:
    """Iceberg's ``bucket[n]`` of a BINARY column: ``(murmur3 & Integer.MAX_VALUE) % n``."""
    from pyspark.sql import functions as F

    h = murmur3_bytes(data).cast("bigint")
    return F.when(data.isNull(), F.lit(None)).otherwise(
        (h.bitwiseAND(_lit(0x7FFFFFFF)) % _lit(n)).cast("int"))
