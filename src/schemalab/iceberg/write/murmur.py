"""Iceberg's ``bucket[N]`` of strings, binary and decimals as Spark columns: Murmur3_x86_32
with seed 0 over the spec's bytes (UTF-8 for a string, the bytes themselves for binary, the
unscaled value's minimal big-endian two's-complement bytes for a decimal), built from Spark
SQL functions only, so executors need no Python at all.

Spark's ``hash`` is Murmur3_x86_32 too, but for a byte array whose length is not a multiple
of 4 it mixes each trailing byte as a block of its own, which standard Murmur3 does not. So
Spark hashes only the whole 4-byte blocks; its finalization (``fmix``) is undone (every step
of it is invertible modulo 2^32), the 1-3 trailing bytes are mixed as the standard does, and
``fmix`` is applied again with the full length. All 32-bit arithmetic runs on non-negative
BIGINTs: a product takes the constant as a signed 32-bit value, so ``|x * c| < 2^63`` never
overflows (Spark's ANSI mode would refuse an overflow) and its low 32 bits are the product
modulo 2^32. Each intermediate value is bound once, so the expression stays linear in size.

A binding is a :data:`Let`. :func:`let` binds inside one self-contained column (a one-element
``transform``): right anywhere, but Spark interprets lambdas row by row (no code generation).
:class:`Steps` binds each value to a named column of the frame instead: applied with
:meth:`Steps.apply`, every step is a projection that whole-stage code generation compiles
(Spark's ``CollapseProject`` keeps a non-trivial value that is used more than once in a
projection of its own), some 20× faster on strings.

The plain-Python :func:`murmur3_32` is the reference the Spark column is tested against::

    >>> murmur3_32("iceberg".encode())  # the spec's example: bucket hash of "iceberg"
    1210000089
    >>> decimal_bytes_of(Decimal("14.20"), 2).hex()  # the spec's example: 1420 → 0x058c
    '058c'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import Context, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

#: a binding: ``bind(value, body)`` is ``body(v)`` with ``v`` standing for ``value``
Let = Callable[["Column", Callable[["Column"], "Column"]], "Column"]

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


class Steps:
    """Bindings as named columns of a frame: ``let(value, body)`` records ``value`` as the
    next column (``<prefix><i>``) and gives ``body`` a reference to it; :meth:`apply` adds
    the recorded columns to a frame in order, :attr:`names` drops them again."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.columns: list[tuple[str, Column]] = []

    def let(self, value: Column, body: Callable[[Column], Column]) -> Column:
        from pyspark.sql import functions as F

        name = f"{self.prefix}{len(self.columns)}"
        self.columns.append((name, value))
        return body(F.col(name))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def apply(self, df: DataFrame) -> DataFrame:
        return add_columns(df, self.columns)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def add_columns(df: DataFrame, columns: Sequence[tuple[str, Column]]) -> DataFrame:
    """``df`` with ``columns`` added, where a column may use the ones before it: one
    ``withColumns`` per layer of columns that use none of each other. Spark analyses the
    whole plan again for every call, so a ``withColumn`` per column costs the driver time
    quadratic in their number (204 steps: 20 s; in layers: a few calls)."""
    layer: dict[str, int] = {}
    layers: list[dict[str, Column]] = []
    for name, value in columns:
        used = [layer[n] for n in _NAME.findall(str(value)) if n in layer]
        at = 1 + max(used) if used else 0
        layer[name] = at
        if at == len(layers):
            layers.append({})
        layers[at][name] = value
    for group in layers:
        df = df.withColumns(group)
    return df


def _lit(v: int) -> Column:
    from pyspark.sql import functions as F

    return F.lit(v).cast("bigint")


def _mul(a: Column, c: int) -> Column:
    """``a * c mod 2^32`` for ``0 <= a < 2^32``: ``c`` taken as a signed 32-bit value keeps
    ``|a * c| < 2^63`` (no BIGINT overflow); the product's low 32 bits are the same."""
    signed = c - (1 << 32) if c >= 1 << 31 else c
    return (a * _lit(signed)).bitwiseAND(_lit(M32))


def _shr(a: Column, n: int) -> Column:
    from pyspark.sql import functions as F

    return F.shiftright(a, n)


def _shl(a: Column, n: int) -> Column:
    from pyspark.sql import functions as F

    return F.shiftleft(a, n)


def _xorshift(h: Column, n: int) -> Column:
    return h.bitwiseXOR(_shr(h, n))


def _steps(bind: Let, value: Column, *steps: Callable[[Column], Column]) -> Column:
    """``value`` through ``steps``, each step's input bound once."""
    out = value
    for step in steps:
        out = bind(out, step)
    return out


def _fmix_col(h: Column, length: Column, bind: Let) -> Column:
    """A product uses its input once: it needs no binding of its own."""
    return _steps(bind, h.bitwiseXOR(length), lambda x: _mul(_xorshift(x, 16), F1),
                  lambda x: _mul(_xorshift(x, 13), F2), lambda x: _xorshift(x, 16))


def _unfmix_col(h: Column, length: Column, bind: Let) -> Column:
    """The inverse of ``fmix(h, length)``: Spark's hash of the aligned blocks, unfinished."""
    return _steps(bind, h, lambda x: _mul(_xorshift(x, 16), pow(F2, -1, 1 << 32)),
                  lambda x: _mul(x.bitwiseXOR(_shr(x, 13)).bitwiseXOR(_shr(x, 26)),
                                 pow(F1, -1, 1 << 32)),
                  lambda x: _xorshift(x, 16).bitwiseXOR(length))


def _rotl15(x: Column) -> Column:
    return _shl(x, 15).bitwiseOR(_shr(x, 17)).bitwiseAND(_lit(M32))


def _mix_k1(k: Column, bind: Let) -> Column:
    return bind(_mul(k, C1), lambda x: _mul(_rotl15(x), C2))


def _byte_at(hexed: Column, i: int) -> Column:
    """Byte ``i`` (0-based) of a hex string, 0 past its end."""
    from pyspark.sql import functions as F

    pair = F.substring(hexed, F.lit(2 * i + 1), F.lit(2))
    return F.coalesce(F.conv(F.nullif(pair, F.lit("")), 16, 10).cast("bigint"), _lit(0))


def murmur3_bytes(data: Column, bind: Let = let) -> Column:
    """Standard Murmur3_x86_32 (seed 0) of a BINARY column, as a signed INT."""
    return bind(data, lambda b: _murmur3_of(b, bind)).cast("int")


def _murmur3_of(b: Column, bind: Let) -> Column:
    """Murmur3 of ``b``, a bound (cheap) BINARY column, as a signed BIGINT."""
    from pyspark.sql import functions as F

    n = F.length(b).cast("bigint")
    aligned = n - n % _lit(4)
    blocks = F.substring(b, F.lit(1), aligned.cast("int"))
    spark = F.hash(F.lit(SEED_ZERO).cast("int"), blocks)
    h1 = _unfmix_col(spark.cast("bigint").bitwiseAND(_lit(M32)), aligned, bind)
    k1 = bind(F.hex(F.substring(b, (aligned + _lit(1)).cast("int"), F.lit(3))),
              lambda tail: _byte_at(tail, 0) + _shl(_byte_at(tail, 1), 8)
              + _shl(_byte_at(tail, 2), 16))
    h = _fmix_col(h1.bitwiseXOR(_mix_k1(k1, bind)), n, bind)
    return bind(h, lambda x: F.when(x >= _lit(1 << 31), x - _lit(1 << 32)).otherwise(x))


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


def decimal_unscaled_bytes(c: Column, scale: int, bind: Let = let,
                           precision: int = 38) -> Column:
    """A DECIMAL(``precision``, ``scale``) column's unscaled value as its minimal
    two's-complement big-endian bytes (BINARY), for any precision up to 38 (up to 18 the
    unscaled value is a BIGINT: a cheaper way)."""
    from pyspark.sql import functions as F

    if precision <= 18:
        return bind(_unscaled_long(c, scale), lambda u: _long_bytes(u, bind))

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
        digits = bind(m, hex128)
        return F.when(negative, F.translate(digits, "0123456789ABCDEF", "FEDCBA9876543210")) \
            .otherwise(digits)

    def minimal(h: Column) -> Column:
        return F.regexp_replace(F.regexp_replace(h, "^(00)*(?=[0-7])", ""),
                                "^(FF)*(?=[89A-F])", "")

    return F.unhex(_steps(bind, decimal_unscaled(c, scale), hexed, minimal))


def _unscaled_long(c: Column, scale: int) -> Column:
    """The unscaled value of a DECIMAL(p <= 18, ``scale``): ``c * 10^scale`` is exact (its
    type is DECIMAL(p + scale + 2, scale)) and an integer below 10^18."""
    from pyspark.sql import functions as F

    return (c * F.lit(Decimal(10) ** scale)).cast("bigint")


def _long_bytes(u: Column, bind: Let) -> Column:
    """A bound BIGINT's minimal two's-complement big-endian bytes (Java's ``BigInteger``):
    the last ``n`` of its 8 bytes, ``n`` the fewest whose sign bit still holds the sign."""
    from pyspark.sql import functions as F

    def digits(m: Column) -> Column:  # 2n: m is the magnitude the sign bit spares
        n = F.lit(16)
        for k in range(7, 0, -1):
            n = F.when(m < _lit(1 << (8 * k - 1)), F.lit(2 * k)).otherwise(n)
        return n

    hexed = F.lpad(F.hex(u), 16, "0")  # a negative BIGINT's hex is its two's complement
    return bind(digits(F.when(u < _lit(0), _lit(-1) - u).otherwise(u)),
                lambda n: F.unhex(F.substring(hexed, F.lit(17) - n, n)))


def truncate_decimal(c: Column, width: int, scale: int) -> Column:
    """The spec's ``v - (((v % W) + W) % W)`` on the unscaled value, as DECIMAL(38, 0)."""
    from pyspark.sql import functions as F

    return let(decimal_unscaled(c, scale),
               lambda u: (u - F.pmod(u, F.lit(Decimal(width)).cast(D38))).cast(D38))


def bucket_of_bytes(data: Column, n: int, bind: Let = let) -> Column:
    """Iceberg's ``bucket[n]`` of a BINARY column: ``(murmur3 & Integer.MAX_VALUE) % n``."""
    from pyspark.sql import functions as F

    def body(d: Column) -> Column:
        h = _murmur3_of(d, bind)
        return F.when(d.isNull(), F.lit(None)).otherwise(
            (h.bitwiseAND(_lit(0x7FFFFFFF)) % _lit(n)).cast("int"))

    return bind(data, body)
