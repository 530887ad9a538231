"""Paimon's index files: the index manifest a snapshot names, deletion-vector index files
and the dynamic-bucket hash index (measured layouts: docs/java-paimon-facts.md).

A snapshot's ``indexManifest`` (``manifest/index-manifest-<uuid>-<n>``, Avro) lists the
table's live index files, each for one partition and bucket under ``index/``:

- ``DELETION_VECTORS``: the deleted rows of data files of that bucket. The entry's
  ``_DELETIONS_VECTORS_RANGES`` gives, per data file name, where its vector lies in the
  index file: the offset of a big-endian int32 size, which precedes the vector's bytes and
  a big-endian CRC32 of them. The file starts with a version byte (1). A vector is an int32
  magic (1581511376) and a ``RoaringBitmap32`` of the deleted 0-based row positions.
- ``HASH``: a dynamic-bucket table's key hashes of that bucket (int32 each), which tell a
  writer which bucket a key lives in; a reader does not need them.

    >>> blob = bytes.fromhex("01" "00000018" "5e43f2d0" "3a300000" "01000000" "00000100"
    ...                      "10000000" "0100" "0300" "da2d59d3")
    >>> parse_deletion_vector(blob, 1, 24, "index-0").tolist()
    [1, 3]
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.codecs.roaring import RoaringError, read_bitmap32
from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.paimon.manifest import FileKind
from schemalab.paimon.snapshot import Snapshot

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt

DELETION_VECTORS = "DELETION_VECTORS"
HASH = "HASH"
INDEX_DIR = "index"
#: the first byte of a deletion-vector index file Paimon 1.0 writes (Java VERSION_ID_V1)
DV_FILE_VERSION = 1
#: BitmapDeletionVector.MAGIC_NUMBER: a 32-bit Roaring bitmap follows
BITMAP32_MAGIC = 1581511376


@dataclass(frozen=True)
class DeletionVectorRange:
    """Where one data file's deletion vector lies in an index file."""

    data_file: str
    #: the offset of the vector's int32 size in the index file
    offset: int
    #: the vector's size (magic + bitmap)
    length: int
    #: how many rows it deletes, where the writer recorded it (Paimon >= 1.1)
    cardinality: int | None = None


@dataclass(frozen=True)
class IndexFileEntry:
    """One entry of an index manifest."""

    kind: FileKind
    partition: bytes
    bucket: int
    index_type: str
    file_name: str
    file_size: int
    #: DELETION_VECTORS: data files covered; HASH: keys
    row_count: int
    ranges: tuple[DeletionVectorRange, ...] = ()

    @property
    def identifier(self) -> tuple[bytes, int, str, str]:
        return (self.partition, self.bucket, self.index_type, self.file_name)


@dataclass(frozen=True)
class DeletionFile:
    """A data file's deletion vector: in which index file, where."""

    index_file: str
    offset: int
    length: int
    cardinality: int | None = None

    def positions(self) -> npt.NDArray[np.int64]:
        return read_deletion_vector(self.index_file, self.offset, self.length)


def read_index_manifest(path: str) -> list[IndexFileEntry]:
    """The entries of an index manifest file, in file order."""
    out = []
    for i, r in enumerate(fileio.read_avro(path).records):
        where = f"index entry {i}"
        version = _field(r, path, where, "_VERSION", int)
        if version != 1:
            raise UnsupportedVersionError(path, f"{where}: index manifest _VERSION {version} "
                                                "is not supported (only 1)")
        kind = _field(r, path, where, "_KIND", int)
        if kind not in (FileKind.ADD, FileKind.DELETE):
            raise CorruptFileError(path, f"{where}: _KIND {kind} is neither 0 (ADD) nor "
                                         "1 (DELETE)")
        ranges = []
        for j, rng in enumerate(r.get("_DELETIONS_VECTORS_RANGES") or ()):
            if rng is None:
                continue
            w = f"{where} range {j}"
            card = rng.get("_CARDINALITY", rng.get("f3"))
            ranges.append(DeletionVectorRange(
                _field(rng, path, w, "f0", str), _field(rng, path, w, "f1", int),
                _field(rng, path, w, "f2", int), card if isinstance(card, int) else None))
        out.append(IndexFileEntry(
            FileKind(kind), _field(r, path, where, "_PARTITION", bytes),
            _field(r, path, where, "_BUCKET", int), _field(r, path, where, "_INDEX_TYPE", str),
            _field(r, path, where, "_FILE_NAME", str), _field(r, path, where, "_FILE_SIZE", int),
            _field(r, path, where, "_ROW_COUNT", int), tuple(ranges)))
    return out


def _field(r: Mapping[str, Any], path: str, where: str, name: str, kind: type) -> Any:
    value = r.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CorruptFileError(path, f"{where}: {name} is "
                                     f"{'missing' if value is None else type(value).__name__}, "
                                     f"not {kind.__name__}")
    return value


def index_files(table_path: str, snapshot: Snapshot) -> list[IndexFileEntry]:
    """The live index files of ``snapshot``: its index manifest's ADD entries that no
    DELETE entry of the same file cancels (Java writes the whole live set each time)."""
    if not snapshot.index_manifest:
        return []
    entries = read_index_manifest(os.path.join(table_path, "manifest",
                                               snapshot.index_manifest))
    live: dict[tuple[bytes, int, str, str], IndexFileEntry] = {}
    for e in entries:
        if e.kind is FileKind.ADD:
            live[e.identifier] = e
        else:
            live.pop(e.identifier, None)
    return list(live.values())


def index_file_path(table_path: str, e: IndexFileEntry) -> str:
    return os.path.join(table_path, INDEX_DIR, e.file_name)


def deletion_files(table_path: str, entries: Sequence[IndexFileEntry]
                   ) -> dict[tuple[bytes, int, str], DeletionFile]:
    """(partition, bucket, data file name) → its deletion vector, for the deletion-vector
    index files among ``entries`` (as Java's SnapshotReaderImpl.getDeletionFiles)."""
    out: dict[tuple[bytes, int, str], DeletionFile] = {}
    for e in entries:
        if e.index_type != DELETION_VECTORS:
            continue
        path = index_file_path(table_path, e)
        for r in e.ranges:
            out[(e.partition, e.bucket, r.data_file)] = DeletionFile(path, r.offset, r.length,
                                                                     r.cardinality)
    return out


def read_deletion_vector(path: str, offset: int, length: int) -> npt.NDArray[np.int64]:
    """The deleted row positions of the vector at ``offset`` of the index file ``path``."""
    try:
        data = fileio.read_bytes(path)
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (named by the snapshot's index "
                                     "manifest)") from None
    return parse_deletion_vector(data, offset, length, path)


def parse_deletion_vector(data: bytes, offset: int, length: int, path: str
                          ) -> npt.NDArray[np.int64]:
    """The positions of the vector at ``offset`` of an index file's bytes ``data``, checked
    as Java's DeletionVectorsIndexFile checks them (version, size, CRC, magic)."""
    if not data or data[0] != DV_FILE_VERSION:
        version = data[0] if data else None
        raise UnsupportedVersionError(path, f"deletion-vector index file version {version} is "
                                            f"not supported (only {DV_FILE_VERSION})")
    end = offset + 4 + length + 4
    if offset < 1 or length < 4 or end > len(data):
        raise CorruptFileError(path, f"deletion vector at {offset} (+{length} bytes) lies "
                                     f"outside the file's {len(data)} bytes")
    (size,) = struct.unpack_from(">i", data, offset)
    if size != length:
        raise CorruptFileError(path, f"deletion vector at {offset} has size {size}, its "
                                     f"index manifest says {length}")
    dv = data[offset + 4:offset + 4 + length]
    (crc,) = struct.unpack_from(">I", data, offset + 4 + length)
    if crc != zlib.crc32(dv):
        raise CorruptFileError(path, f"deletion vector at {offset}: CRC32 mismatch")
    (magic,) = struct.unpack_from(">i", dv, 0)
    if magic != BITMAP32_MAGIC:
        raise UnsupportedVersionError(path, f"deletion vector at {offset} has magic {magic}; "
                                            f"only Paimon's 32-bit bitmaps ({BITMAP32_MAGIC}) "
                                            "are supported")
    try:
        return read_bitmap32(dv[4:])
    except RoaringError as e:
        raise CorruptFileError(path, f"deletion vector at {offset}: {e}") from None
