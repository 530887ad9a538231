"""Deletion vectors as Iceberg v3 writes them: a 64-bit Roaring bitmap of a data file's
deleted row positions (:func:`bitmap64`, the portable serialization
:func:`schemalab.codecs.roaring.read_bitmap64` reads), framed as a ``deletion-vector-v1``
blob (:func:`dv_blob`: a big-endian length of magic + vector, the magic ``D1 D3 39 64``, the
vector, a big-endian CRC-32 of magic + vector), and stored in a Puffin file
(:func:`write_puffin`: ``PFA1``, the blobs, then the footer ``PFA1`` + JSON + its length +
flags + ``PFA1``), one blob per data file, as Java's ``BaseDVFileWriter`` writes them.

    >>> import numpy as np
    >>> from schemalab.iceberg.deletes import parse_deletion_vector
    >>> parse_deletion_vector(dv_blob(np.array([1, 5, 70000, 2**33])), "x").tolist()
    [1, 5, 70000, 8589934592]
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.codecs.roaring import (
    ARRAY_MAX,
    BITMAP_BYTES,
    NO_OFFSET_THRESHOLD,
    SERIAL_COOKIE,
    SERIAL_COOKIE_NO_RUNCONTAINER,
)
from schemalab.iceberg.deletes import DV_MAGIC, POS_ID

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt

PUFFIN_MAGIC = b"PFA1"
DV_BLOB_TYPE = "deletion-vector-v1"
#: what the Puffin footer's ``created-by`` says
CREATED_BY = "schemalab (Iceberg deletion vectors)"


def _container(low: npt.NDArray[np.int64]) -> tuple[bytes, bool]:
    """One container of sorted 16-bit values: the smallest of array, bitmap and runs (as
    Roaring's ``runOptimize`` chooses before Java serializes a deletion vector); (bytes,
    is a run container)."""
    import numpy as np

    starts = np.flatnonzero(np.r_[True, low[1:] != low[:-1] + 1])
    ends = np.r_[starts[1:], len(low)] - 1
    run_size = 2 + 4 * len(starts)
    plain_size = 2 * len(low) if len(low) <= ARRAY_MAX else BITMAP_BYTES
    if run_size < plain_size:
        pairs = np.empty(2 * len(starts), "<u2")
        pairs[0::2] = low[starts]
        pairs[1::2] = low[ends] - low[starts]
        return struct.pack("<H", len(starts)) + pairs.tobytes(), True
    if len(low) <= ARRAY_MAX:
        return low.astype("<u2").tobytes(), False
    bits = np.zeros(1 << 16, np.uint8)
    bits[low] = 1
    return np.packbits(bits, bitorder="little").tobytes(), False


def bitmap32(values: npt.NDArray[np.int64]) -> bytes:
    """Sorted unique 32-bit values as a portable 32-bit Roaring bitmap."""
    import numpy as np

    keys = values >> 16
    bounds = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1], True]) if len(values) else \
        np.zeros(1, np.int64)
    parts = [_container(values[b:e] & 0xFFFF) for b, e in zip(bounds[:-1], bounds[1:],
                                                               strict=True)]
    n = len(parts)
    runs = any(r for _, r in parts)
    header = bytearray()
    if runs:
        header += struct.pack("<I", SERIAL_COOKIE | ((n - 1) << 16))
        flags = bytearray((n + 7) // 8)
        for i, (_, r) in enumerate(parts):
            if r:
                flags[i // 8] |= 1 << (i % 8)
        header += flags
    else:
        header += struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, n)
    for (b, e) in zip(bounds[:-1], bounds[1:], strict=True):
        header += struct.pack("<HH", int(keys[b]), int(e - b - 1))
    if not runs or n >= NO_OFFSET_THRESHOLD:
        offset = len(header) + 4 * n
        for body, _ in parts:
            header += struct.pack("<I", offset)
            offset += len(body)
    return bytes(header) + b"".join(body for body, _ in parts)


def bitmap64(positions: npt.NDArray[np.int64]) -> bytes:
    """Sorted unique row positions as a 64-bit Roaring bitmap in Iceberg's portable form: a
    little-endian uint64 count of 32-bit bitmaps, then each one's key and bitmap. Like Java's
    ``RoaringPositionBitmap`` it writes every key from 0 to the highest (empty bitmaps for
    the keys no position uses)."""
    import numpy as np

    pos = np.asarray(positions, dtype=np.int64)
    if not len(pos):
        return struct.pack("<Q", 0)
    high = pos >> 32
    count = int(high[-1]) + 1
    out = [struct.pack("<Q", count)]
    for key in range(count):
        part = pos[high == key] & 0xFFFFFFFF
        out.append(struct.pack("<I", key))
        out.append(bitmap32(part) if len(part) else
                   struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, 0))
    return b"".join(out)


def dv_blob(positions: npt.NDArray[np.int64]) -> bytes:
    """A ``deletion-vector-v1`` blob of the sorted unique ``positions``."""
    body = DV_MAGIC + bitmap64(positions)
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


@dataclass(frozen=True)
class BlobSpan:
    """Where one data file's vector lies in the Puffin file."""

    referenced_data_file: str
    offset: int
    length: int
    cardinality: int


def write_puffin(path: str, vectors: Sequence[tuple[str, npt.NDArray[np.int64]]]
                 ) -> tuple[int, list[BlobSpan]]:
    """Write a Puffin file of one deletion vector per (data file URI, positions); its size
    and each blob's span. The file is created only if absent (its name is fresh)."""
    out = bytearray(PUFFIN_MAGIC)
    spans: list[BlobSpan] = []
    blobs = []
    for data_file, positions in vectors:
        blob = dv_blob(positions)
        spans.append(BlobSpan(data_file, len(out), len(blob), len(positions)))
        blobs.append({"type": DV_BLOB_TYPE, "fields": [POS_ID], "snapshot-id": -1,
                      "sequence-number": -1, "offset": len(out), "length": len(blob),
                      "properties": {"referenced-data-file": data_file,
                                     "cardinality": str(len(positions))}})
        out += blob
    footer = json.dumps({"blobs": blobs, "properties": {"created-by": CREATED_BY}},
                        separators=(",", ":")).encode("utf-8")
    out += PUFFIN_MAGIC + footer + struct.pack("<I", len(footer)) + b"\0\0\0\0" + PUFFIN_MAGIC
    if not fileio.write_new(path, bytes(out)):
        raise FileExistsError(path)
    return len(out), spans
