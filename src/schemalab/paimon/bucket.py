"""Paimon's fixed-bucket assignment: which ``bucket-N`` a row goes to.

As Java Paimon's ``DefaultBucketFunction``: the bucket-key fields form a BinaryRow; its hash is
MurmurHash3 (32-bit, seed 42) over the row's bytes read as little-endian 4-byte words; the
bucket is ``abs(hash % numBuckets)`` with Java's truncating remainder. pypaimon and Java
Paimon look for a key only in that bucket, so this must match them bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemalab.paimon.binaryrow import encode_row
from schemalab.types.model import DataType

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF
SEED = 42


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def murmur_words(data: bytes, seed: int = SEED) -> int:
    """Paimon's ``MurmurHashUtils.hashBytesByWords`` as a signed 32-bit int; ``len(data)``
    must be a multiple of 4 (BinaryRows are whole 8-byte words)."""
    if len(data) % 4:
        raise ValueError("hashBytesByWords needs a multiple of 4 bytes")
    h = seed
    for i in range(0, len(data), 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * _C1) & _MASK
        k = _rotl(k, 15)
        k = (k * _C2) & _MASK
        h ^= k
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & _MASK
    h = _fmix(h ^ len(data))
    return h - (1 << 32) if h & 0x80000000 else h


def row_hash(values: Sequence[Any], types: Sequence[DataType]) -> int:
    """``BinaryRow.hashCode()`` of the row made of ``values``."""
    return murmur_words(encode_row(values, types)[4:])


def bucket_of(values: Sequence[Any], types: Sequence[DataType], num_buckets: int) -> int:
    if num_buckets <= 0:
        raise ValueError(f"a fixed bucket count must be positive, not {num_buckets}")
    # Java's Math.abs(h % n) equals abs(h) % n for every int h, Integer.MIN_VALUE included.
    return abs(row_hash(values, types)) % num_buckets


def bucket_keys(schema_options: dict[str, str], primary_keys: Sequence[str],
                partition_keys: Sequence[str]) -> list[str]:
    """The bucket key: option ``bucket-key``, else the primary key without partition fields."""
    explicit = schema_options.get("bucket-key")
    if explicit:
        return [c.strip() for c in explicit.split(",") if c.strip()]
    return [k for k in primary_keys if k not in partition_keys]
