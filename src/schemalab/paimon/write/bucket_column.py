"""Each row's Paimon bucket as a Spark column, for fixed-bucket tables.

Paimon's bucket of a row is ``abs(hash % numBuckets)`` where ``hash`` is MurmurHash3 (seed
42) over the bytes of the BinaryRow of the bucket-key fields, read as 4-byte little-endian
words. Those bytes are built here with Spark's own functions — a hex string of the null bit
set, one 8-byte slot per field, and the variable part — and hashed with Spark's ``hash``,
which is the same MurmurHash3 with seed 42 and, on a byte string whose length is a multiple
of 4 (a BinaryRow's always is), the same word-wise hash. No Python runs on the executors, so
the write works on any cluster and over Spark Connect, and it matches
:func:`schemalab.paimon.bucket.bucket_of` bit for bit (tests/test_bucket.py checks both on
random keys of every supported type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemalab.engine.spark_reader import quote
from schemalab.errors import SchemaLabError
from schemalab.paimon.binaryrow import (
    HEADER_SIZE_IN_BITS,
    MAX_COMPACT_DECIMAL_PRECISION,
    MAX_COMPACT_TIMESTAMP_PRECISION,
    MAX_FIX_PART_DATA_SIZE,
    fixed_part_size,
    null_bits_size,
)
from schemalab.paimon.bucket import bucket_keys
from schemalab.schema import TableSchema
from schemalab.types.model import TIMESTAMP_ROOTS, AtomicType, DataType, TypeRoot

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

_FIXED_INTS = {TypeRoot.TINYINT: 1, TypeRoot.SMALLINT: 2, TypeRoot.INTEGER: 4,
               TypeRoot.BIGINT: 8, TypeRoot.DATE: 4, TypeRoot.BOOLEAN: 1}
_BYTES = (TypeRoot.CHAR, TypeRoot.VARCHAR, TypeRoot.BINARY, TypeRoot.VARBINARY)


def bucket_column(schema: TableSchema, table: str) -> Column | None:
    """A Spark column with each row's Paimon bucket for a fixed-bucket table; None when the
    table has no fixed buckets (``bucket`` = -1)."""
    n = schema.int_option("bucket", -1, table)
    if n == -1:
        return None
    if n <= 0:
        raise SchemaLabError(f"Table {table}: option 'bucket' must be -1 or positive, not {n}",
                             table=table, rule="bucket")
    keys = bucket_keys(schema.effective_options(), schema.primary_keys, schema.partition_keys)
    if not keys:
        raise SchemaLabError(
            f"Table {table} has {n} fixed buckets but no bucket key: set the table option "
            "'bucket-key' (or use 'bucket' = '-1').", table=table, rule="bucket-key")
    missing = [k for k in keys if schema.field(k) is None]
    if missing:
        raise SchemaLabError(f"Table {table}: bucket key column {missing[0]} does not exist",
                             table=table, column=missing[0], rule="bucket-key")
    return bucket_expr([quote(k) for k in keys], [schema.type_of(k) for k in keys], n, table,
                       keys)


def bucket_expr(columns: list[str], types: list[DataType], n: int, table: str = "",
                names: list[str] | None = None) -> Column:
    """``abs(hash(BinaryRow(columns)) % n)`` as a Spark column."""
    from pyspark.sql import functions as F

    names = names or columns
    for name, t in zip(names, types, strict=True):
        if not _supported(t):
            raise SchemaLabError(
                f"Table {table}: bucket key column {name} is {t.sql()}; schemalab computes "
                "Paimon's bucket on Spark for BOOLEAN, integer, DATE, DECIMAL(p <= 18), "
                "CHAR/VARCHAR/STRING, BINARY/BYTES and TIMESTAMP keys. Write this table with "
                "Paimon, or bucket it by another column.", table=table, column=name,
                rule="bucket-key-type")
    cols = [F.col(c) for c in columns]
    arity = len(types)
    fixed = fixed_part_size(arity)
    # the variable part's offset of each field: the fixed part, then every earlier field's
    # variable part (its length depends on the row: a string over 7 bytes has one)
    offset: Column = F.lit(fixed)
    slots: list[Column] = []
    tails: list[Column] = []
    for col, t in zip(cols, types, strict=True):
        assert isinstance(t, AtomicType)
        slot, tail = _field(col, t, offset)
        if _wide_timestamp(t):
            # Java keeps a NULL wide timestamp's 8 bytes and its offset (setNullAt)
            null_slot, null_tail = _le(offset.cast("long") * F.lit(1 << 32), 8), "0" * 16
        else:
            null_slot, null_tail = F.lit("0" * 16), ""
        slots.append(F.when(col.isNull(), null_slot).otherwise(slot))
        tail = F.when(col.isNull(), F.lit(null_tail)).otherwise(tail)
        tails.append(tail)
        offset = offset + F.length(tail) / 2
    row_hex = F.concat(_null_bits(cols, arity), *slots, *tails)
    return F.abs(F.hash(F.unhex(row_hex)) % F.lit(n))


def _supported(t: DataType) -> bool:
    if not isinstance(t, AtomicType):
        return False
    if t.root in _FIXED_INTS or t.root in _BYTES or t.root in TIMESTAMP_ROOTS:
        return True
    return t.root is TypeRoot.DECIMAL and (t.precision or 10) <= MAX_COMPACT_DECIMAL_PRECISION


def _wide_timestamp(t: AtomicType) -> bool:
    return t.root in TIMESTAMP_ROOTS and (
        t.precision if t.precision is not None else 6) > MAX_COMPACT_TIMESTAMP_PRECISION


def _le(value: Column, nbytes: int) -> Column:
    """The low ``nbytes`` bytes of a long as little-endian hex, padded to an 8-byte slot."""
    from pyspark.sql import functions as F

    masked = value if nbytes == 8 else value.bitwiseAND(F.lit((1 << (8 * nbytes)) - 1))
    be = F.lpad(F.hex(masked), 16, "0")  # hex() of a negative long is its two's complement
    return F.concat(*[F.substring(be, 15 - 2 * i, 2) for i in range(nbytes)],
                    F.lit("00" * (8 - nbytes)))


def _field(col: Column, t: AtomicType, offset: Column) -> tuple[Column, Column]:
    """The 8-byte slot (hex) of a non-null value, and its variable part (hex, maybe empty)."""
    from pyspark.sql import functions as F

    if t.root is TypeRoot.BOOLEAN:
        return _le(col.cast("long"), 1), F.lit("")
    if t.root is TypeRoot.DATE:
        return _le(F.unix_date(col).cast("long"), 4), F.lit("")
    if t.root in _FIXED_INTS:
        return _le(col.cast("long"), _FIXED_INTS[t.root]), F.lit("")
    if t.root is TypeRoot.DECIMAL:
        unscaled = (col * F.lit(10 ** (t.scale or 0))).cast("decimal(38,0)").cast("long")
        return _le(unscaled, 8), F.lit("")
    if t.root in TIMESTAMP_ROOTS:
        micros = _epoch_micros(col, t)
        millis = F.floor(micros / 1000).cast("long")
        if not _wide_timestamp(t):
            return _le(millis, 8), F.lit("")
        nanos = ((micros - millis * 1000) * 1000).cast("long")
        slot = _le(offset.cast("long") * F.lit(1 << 32) + nanos, 8)
        return slot, _le(millis, 8)
    # CHAR/VARCHAR/STRING (UTF-8) and BINARY/VARBINARY
    data = F.encode(col, "UTF-8") if t.root in (TypeRoot.CHAR, TypeRoot.VARCHAR) else col
    hexed = F.hex(data)
    n = F.length(hexed) / 2
    inline = F.concat(F.rpad(hexed, 14, "0"), F.lpad(F.hex(n.cast("long") + 0x80), 2, "0"))
    padded = F.rpad(hexed, (F.ceil(n / 8) * 16).cast("int"), "0")
    outline = _le(offset.cast("long") * F.lit(1 << 32) + n.cast("long"), 8)
    small = n <= MAX_FIX_PART_DATA_SIZE
    return (F.when(small, inline).otherwise(outline),
            F.when(small, F.lit("")).otherwise(padded))


def _epoch_micros(col: Column, t: AtomicType) -> Column:
    """Microseconds since the epoch of a timestamp's wall clock (TIMESTAMP) or instant
    (TIMESTAMP WITH LOCAL TIME ZONE), whatever the session's time zone."""
    from pyspark.sql import functions as F

    if t.root is TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return F.unix_micros(col)
    # The wall clock's parts: date and time of day of a TIMESTAMP_NTZ do not depend on the
    # session's time zone (differences and casts to TIMESTAMP would, across DST changes).
    seconds = F.date_part(F.lit("SECOND"), col)  # with the microseconds as a fraction
    return (F.unix_date(col.cast("date")).cast("long") * 86_400_000_000
            + F.hour(col).cast("long") * 3_600_000_000
            + F.minute(col).cast("long") * 60_000_000
            + (seconds * 1_000_000).cast("long"))


def _null_bits(cols: list[Column], arity: int) -> Column:
    """The header byte (row kind +I) and the null bit set, as hex, word by word."""
    from pyspark.sql import functions as F

    words = null_bits_size(arity) // 8
    out = []
    for w in range(words):
        word: Column = F.lit(0).cast("long")
        for i, col in enumerate(cols):
            bit = i + HEADER_SIZE_IN_BITS
            if bit // 64 == w:
                # bit 63 is the sign bit of a long: its value is -2**63
                value = 1 << (bit % 64) if bit % 64 < 63 else -(1 << 63)
                word = word + F.when(col.isNull(), F.lit(value)).otherwise(
                    F.lit(0)).cast("long")
        out.append(_le(word, 8))
    return F.concat(*out)
