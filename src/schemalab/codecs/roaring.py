"""Roaring bitmaps in their portable serialization, decoded into sorted row positions.

Deletion vectors are Roaring bitmaps of the deleted row positions of one data file: Paimon
writes a 32-bit ``RoaringBitmap32`` (``deletion-vectors.enabled``), Iceberg v3 (and Paimon's
``bitmap64`` mode) a 64-bit bitmap: a count, then per distinct high 32 bits a key and a
32-bit bitmap of the low bits. Both use the portable format of the RoaringBitmap
specification (github.com/RoaringBitmap/RoaringFormatSpec), all little-endian:

- a cookie: ``12346`` (no run containers) followed by a uint32 container count, or ``12347``
  in the low 16 bits with the count minus one in the high 16, followed by a bitset saying
  which containers are runs;
- per container its key (the high 16 bits) and cardinality minus one, as two uint16;
- the byte offsets of the containers (always for cookie 12346; for 12347 only with 4 or
  more containers);
- the containers: an *array* of sorted uint16 (cardinality <= 4096), a *bitmap* of 8 KiB,
  or *runs* (a uint16 count, then uint16 start and length-minus-one pairs).

The decoder is numpy-vectorised (a container is one ``frombuffer``, ``unpackbits`` or a
handful of ``arange``) and strict: every length must add up, keys must ascend, and a
container's values must match its declared cardinality, or :class:`RoaringError` says what
is wrong. It is checked against pyroaring (CRoaring) for every container kind in
``tests/test_deletes.py``; it is ours rather than pyroaring's so that deletion vectors need
no compiled dependency and come out as the numpy arrays the read needs.

    >>> import numpy as np
    >>> raw = bytes.fromhex("3a300000" "01000000" "00000100" "10000000" "0100" "0300")
    >>> read_bitmap32(raw).tolist()
    [1, 3]
    >>> read_bitmap32(raw + b"x")
    Traceback (most recent call last):
    ...
    schemalab.codecs.roaring.RoaringError: 1 byte(s) after the Roaring bitmap
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt

SERIAL_COOKIE_NO_RUNCONTAINER = 12346
SERIAL_COOKIE = 12347
#: with fewer containers than this, a run-container bitmap has no offset header
NO_OFFSET_THRESHOLD = 4
#: an array container holds at most this many values; more make a bitmap container
ARRAY_MAX = 4096
BITMAP_BYTES = 8192


class RoaringError(ValueError):
    """A serialized Roaring bitmap that does not follow the format."""


def read_bitmap32(data: bytes | memoryview, *, exact: bool = True
                  ) -> npt.NDArray[np.int64]:
    """The values of a 32-bit Roaring bitmap in portable serialization, sorted. With
    ``exact`` the bitmap must fill ``data``; else the bytes after it are ignored (use
    :func:`read_bitmap32_prefix` to learn how many it took)."""
    values, used = read_bitmap32_prefix(data)
    if exact and used != len(data):
        raise RoaringError(f"{len(data) - used} byte(s) after the Roaring bitmap")
    return values


def read_bitmap32_prefix(data: bytes | memoryview) -> tuple[npt.NDArray[np.int64], int]:
    """(values, bytes used) of the 32-bit Roaring bitmap at the start of ``data``."""
    import numpy as np

    buf = memoryview(data)
    n_bytes = len(buf)

    def need(end: int, what: str) -> None:
        if end > n_bytes:
            raise RoaringError(f"truncated: {what} needs {end} bytes, the bitmap has {n_bytes}")

    need(4, "the cookie")
    (cookie,) = struct.unpack_from("<I", buf, 0)
    pos = 4
    runs: npt.NDArray[np.bool_] | None = None
    if cookie == SERIAL_COOKIE_NO_RUNCONTAINER:
        need(8, "the container count")
        (count,) = struct.unpack_from("<I", buf, 4)
        pos = 8
        has_offsets = True
    elif cookie & 0xFFFF == SERIAL_COOKIE:
        count = (cookie >> 16) + 1
        run_bytes = (count + 7) // 8
        need(pos + run_bytes, "the run-container bitset")
        runs = np.unpackbits(np.frombuffer(buf[pos:pos + run_bytes], np.uint8),
                             bitorder="little")[:count].astype(bool)
        pos += run_bytes
        has_offsets = count >= NO_OFFSET_THRESHOLD
    else:
        raise RoaringError(f"unknown cookie {cookie & 0xFFFF} (expected "
                           f"{SERIAL_COOKIE_NO_RUNCONTAINER} or {SERIAL_COOKIE})")
    if count > 1 << 16:
        raise RoaringError(f"{count} containers (a 32-bit bitmap has at most 65536)")
    need(pos + 4 * count, "the container headers")
    header = np.frombuffer(buf[pos:pos + 4 * count], "<u2").reshape(count, 2)
    keys = header[:, 0].astype(np.int64)
    cards = header[:, 1].astype(np.int64) + 1
    pos += 4 * count
    if count and np.any(np.diff(keys) <= 0):
        raise RoaringError("container keys are not strictly ascending")
    if has_offsets:
        need(pos + 4 * count, "the container offsets")
        offsets = np.frombuffer(buf[pos:pos + 4 * count], "<u4").astype(np.int64)
        pos += 4 * count
    else:
        offsets = None
    parts: list[npt.NDArray[np.int64]] = []
    for i in range(count):
        if offsets is not None and offsets[i] != pos:
            raise RoaringError(f"container {i} is at byte {pos}, its offset says {offsets[i]}")
        card = int(cards[i])
        low, pos = _container(buf, pos, i, card, runs is not None and bool(runs[i]), need)
        if len(low) != card:
            raise RoaringError(f"container {i} holds {len(low)} values, its header says {card}")
        if len(low) > 1 and np.any(np.diff(low) <= 0):
            raise RoaringError(f"container {i}'s values are not strictly ascending")
        parts.append((int(keys[i]) << 16) | low)
    values = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return values, pos


def _container(buf: memoryview, pos: int, i: int, card: int, is_run: bool,
               need: Callable[[int, str], None]) -> tuple[npt.NDArray[np.int64], int]:
    """The low 16 bits of container ``i``'s values (a run, bitmap or array container at
    byte ``pos``) and the byte after it."""
    import numpy as np

    if is_run:
        need(pos + 2, f"container {i}'s run count")
        (n_runs,) = struct.unpack_from("<H", buf, pos)
        pos += 2
        need(pos + 4 * n_runs, f"container {i}'s runs")
        pairs = np.frombuffer(buf[pos:pos + 4 * n_runs], "<u2").reshape(n_runs, 2)
        pos += 4 * n_runs
        starts = pairs[:, 0].astype(np.int64)
        lengths = pairs[:, 1].astype(np.int64) + 1
        if np.any(starts + lengths > 1 << 16):
            raise RoaringError(f"container {i} has a run past 65535")
        total = int(lengths.sum())
        # each run start repeated over its length, plus 0..length-1 within the run
        low = np.repeat(starts, lengths) + (np.arange(total, dtype=np.int64)
                                            - np.repeat(np.cumsum(lengths) - lengths,
                                                        lengths))
    elif card > ARRAY_MAX:
        need(pos + BITMAP_BYTES, f"container {i}'s bitmap")
        bits = np.unpackbits(np.frombuffer(buf[pos:pos + BITMAP_BYTES], np.uint8),
                             bitorder="little")
        low = np.flatnonzero(bits).astype(np.int64)
        pos += BITMAP_BYTES
    else:
        need(pos + 2 * card, f"container {i}'s array")
        low = np.frombuffer(buf[pos:pos + 2 * card], "<u2").astype(np.int64)
        pos += 2 * card
    return low, pos


def read_bitmap64(data: bytes | memoryview) -> npt.NDArray[np.int64]:
    """The values of a 64-bit Roaring bitmap in the portable serialization Iceberg's
    ``deletion-vector-v1`` blob (and Paimon's ``bitmap64`` deletion vectors) use: a uint64
    count of 32-bit bitmaps, then each as a uint32 key (the high 32 bits, ascending and
    below 2^31 as Java reads it) and a 32-bit bitmap (:func:`read_bitmap32`).

        >>> read_bitmap64(bytes.fromhex("0100000000000000" "00000000"
        ...     "3a300000" "01000000" "00000000" "10000000" "0100")).tolist()
        [1]
    """
    import numpy as np

    buf = memoryview(data)
    if len(buf) < 8:
        raise RoaringError("truncated: a 64-bit bitmap starts with an 8-byte count")
    (count,) = struct.unpack_from("<Q", buf, 0)
    pos = 8
    parts = []
    last = -1
    for i in range(count):
        if pos + 4 > len(buf):
            raise RoaringError(f"truncated: bitmap {i} of {count} has no key")
        (key,) = struct.unpack_from("<I", buf, pos)
        if key <= last or key >= 1 << 31:
            raise RoaringError(f"bitmap key {key} is not ascending or not below 2^31")
        last = key
        values, used = read_bitmap32_prefix(buf[pos + 4:])
        parts.append((key << 32) | values)
        pos += 4 + used
    if pos != len(buf):
        raise RoaringError(f"{len(buf) - pos} byte(s) after the 64-bit Roaring bitmap")
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)
