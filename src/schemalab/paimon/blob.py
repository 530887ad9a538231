"""Paimon's BLOB columns (Paimon 1.4+ / 2.0 ``BLOB`` type, ``blob-field`` option of a
data-evolution table): their values are not in the Parquet/ORC/Avro data files but in
separate ``.blob`` files, joined to the rows by row id on read.

**Where they are.** A commit that writes rows writes, beside each data file, one or more
``data-<uuid>-<n>.blob`` files per BLOB column: manifest entries of their own, with the
same ``_FIRST_ROW_ID`` range as the rows they belong to (a large column rolls into several
files that cover the range one after the other), ``_WRITE_COLS`` naming the one BLOB column
(by its name in the file's schema) and the data file's sequence numbers. An UPDATE of the
column writes new ``.blob`` files with a higher max sequence number.

**The file** (Java Paimon 2.0's ``BlobFormatWriter``; all integers little-endian): the
records one after the other, each ``magic`` (int 1481511375) + the value's bytes + the
record's length (long: 4 + bytes + 8 + 4) + a CRC32 (int) of everything before it in the
record; then the index, the record lengths one per row, delta + ZigZag + varint coded
(``DeltaVarintCompressor``), where -1 is a NULL value and -2 a placeholder (no record); then
the index's length (int) and the version byte (1).

**The read** (Java's ``DataEvolutionSplitRead`` and ``BlobFallbackRecordReader``): the files
of one column are grouped by max sequence number, newest first; a row takes its value from
the newest group whose file at that row id holds a value or a NULL (a placeholder, or no
file of the group covering the row, falls back to the next group); no group: NULL. A batch
read returns the bytes (``Blob.fromData``) and Paimon's Spark integration shows a BLOB as
Spark's BINARY with those bytes — unless ``blob-as-descriptor`` is set, when Spark gets a
serialized ``BlobDescriptor`` instead, which schemalab refuses by name, as it refuses the
fields Paimon keeps inline as descriptors (``blob-descriptor-field``, ``blob-view-field``).

    >>> _varints(bytes([0x26, 0x03]))  # ZigZag: 19, then -2
    [19, -2]
    >>> decode_lengths(bytes([0x26, 0x03, 0x23]))  # records of 19 and 17 bytes, then NULL
    [19, 17, -1]
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.engine.blob_join import is_blob, with_blobs
from schemalab.engine.plan import PLACEHOLDER, BlobFile
from schemalab.errors import CorruptFileError, UnsupportedFeatureError
from schemalab.types.model import DataType
from schemalab.types.visitor import contains

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.engine.plan import ReadPlan
    from schemalab.paimon.manifest import ManifestEntry
    from schemalab.schema.table_schema import TableSchema

MAGIC = 1481511375
VERSION = 1
NULL_LENGTH = -1
PLACEHOLDER_LENGTH = -2
#: options whose BLOB fields schemalab does not read (their values are descriptors)
_DESCRIPTOR_OPTIONS = ("blob-as-descriptor", "blob-descriptor-field",
                       "blob.stored-descriptor-fields", "blob-view-field")


def is_blob_file(file_name: str) -> bool:
    return file_name.endswith(".blob")


def _varints(data: bytes) -> list[int]:
    """ZigZag varints, as ``DeltaVarintCompressor`` writes them."""
    out: list[int] = []
    value = shift = 0
    for b in data:
        value |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
            if shift > 63:
                raise ValueError("varint overflow")
            continue
        out.append((value >> 1) ^ -(value & 1))
        value = shift = 0
    if shift:
        raise ValueError("index ends inside a varint")
    return out


def decode_lengths(index: bytes) -> list[int]:
    """The record lengths of a ``.blob`` file's index (deltas summed)."""
    out: list[int] = []
    for d in _varints(index):
        out.append(d if not out else out[-1] + d)
    return out


def read_blob_file(path: str, table: str, column: str) -> list[object]:
    """Each row's value of one ``.blob`` file: its bytes, None (NULL) or
    :data:`PLACEHOLDER`. Every record's magic, length and CRC32 are checked."""
    data = fileio.read_bytes(path)
    name = path.rsplit("/", 1)[-1]

    def corrupt(why: str) -> CorruptFileError:
        return CorruptFileError(
            path, f"BLOB file {name} (column {column} of {table}) is not a Paimon .blob file "
            f"as Java Paimon 2.0 writes it: {why}", table=table)

    if len(data) < 5 or data[-1] != VERSION:
        raise corrupt(f"its last byte (the version) is {data[-1] if data else 'missing'}, "
                      f"not {VERSION}")
    (index_len,) = struct.unpack_from("<i", data, len(data) - 5)
    end = len(data) - 5 - index_len
    if index_len < 0 or end < 0:
        raise corrupt(f"its index length {index_len} does not fit the file's {len(data)} bytes")
    try:
        lengths = decode_lengths(data[end:len(data) - 5])
    except ValueError as e:
        raise corrupt(f"its index cannot be decoded ({e})") from None
    out: list[object] = []
    pos = 0
    for i, n in enumerate(lengths):
        if n == NULL_LENGTH:
            out.append(None)
            continue
        if n == PLACEHOLDER_LENGTH:
            out.append(PLACEHOLDER)
            continue
        if n < 16 or pos + n > end:
            raise corrupt(f"record {i} has length {n} at offset {pos}, past the records' end "
                          f"{end}")
        record = data[pos:pos + n]
        magic, = struct.unpack_from("<i", record, 0)
        stored_len, crc = struct.unpack_from("<qI", record, n - 12)
        if magic != MAGIC or stored_len != n:
            raise corrupt(f"record {i} at offset {pos} has magic {magic} and length "
                          f"{stored_len} (expected {MAGIC} and {n})")
        if zlib.crc32(record[:n - 4]) != crc:
            raise corrupt(f"record {i} at offset {pos} fails its CRC32 check")
        out.append(record[4:n - 12])
        pos += n
    return out


def contains_blob(t: DataType) -> bool:
    """A BLOB anywhere in ``t``."""
    return contains(t, is_blob)


def check_blob_options(schema: TableSchema, table: str) -> None:
    """Refuse the BLOB storages schemalab does not read: values kept as descriptors,
    ``ARRAY<BLOB>`` / ``MAP<X, BLOB>`` (their own .blob element layouts), and a primary-key
    table's BLOBs (Java's ``PrimaryKeyBlobExternalizer``); only a data-evolution table's
    top-level BLOB columns are read."""
    nested = [f.name for f in schema.fields if not is_blob(f.type) and contains_blob(f.type)]
    if nested:
        raise UnsupportedFeatureError(
            f"Read of {table} refused: column {nested[0]} holds BLOBs inside an ARRAY, MAP or "
            "ROW, which Paimon stores in .blob files of its own element layout; schemalab "
            "reads top-level BLOB columns only.", table=table, column=nested[0],
            feature="nested BLOB columns", option="blob-field")
    blobs = [f.name for f in schema.fields if is_blob(f.type)]
    if not blobs:
        return
    options = schema.effective_options()
    if schema.primary_keys or options.get("data-evolution.enabled", "").lower() != "true":
        raise UnsupportedFeatureError(
            f"Read of {table} refused: BLOB column {blobs[0]} in a "
            + ("primary-key table, whose BLOBs Paimon keeps as descriptors of managed files"
               if schema.primary_keys else "table without data evolution, which Java Paimon "
               "2.0 does not create") + "; schemalab reads the BLOBs of data-evolution "
            "tables ('data-evolution.enabled' = 'true').", table=table, column=blobs[0],
            feature="BLOB columns", option="primary-key" if schema.primary_keys
            else "data-evolution.enabled")
    for key in _DESCRIPTOR_OPTIONS:
        value = options.get(key)
        if value is None or value.strip().lower() in ("", "false"):
            continue
        raise UnsupportedFeatureError(
            f"Read of {table} refused: option '{key}' = '{value}' makes Paimon return (or "
            "store) BLOB values as serialized BlobDescriptors that name a file by its URI, "
            "not as their bytes; schemalab reads BLOB bytes from the table's .blob files only.",
            table=table, feature="BLOB descriptors", option=key)


def blob_files(entries: Iterable[ManifestEntry], table: str, file_path: Callable[
        [ManifestEntry, TableSchema], str], schema_at: Callable[[int], TableSchema]
               ) -> list[BlobFile]:
    """The live ``.blob`` files among ``entries``, each with the field id it holds."""
    out = []
    for e in entries:
        f = e.file
        if not is_blob_file(f.file_name):
            continue
        s = schema_at(f.schema_id)
        cols = list(f.write_cols or ())
        field = s.field(cols[0]) if len(cols) == 1 else None
        if field is None or f.first_row_id is None:
            raise CorruptFileError(
                f.file_name, f"the manifest entry of this BLOB file of {table} names the "
                f"columns {cols} and first row id {f.first_row_id}; a .blob file holds one "
                f"BLOB column of schema {s.id} for a range of row ids", table=table)
        path = file_path(e, s)
        out.append(BlobFile(path, f.file_name, field.id, field.name, f.first_row_id,
                            f.row_count, f.max_sequence_number, s.id, f.file_size,
                            load=functools.partial(read_blob_file, path, table, field.name)))
    return out


def attach_blobs(plan: ReadPlan, table_path: str, entries: Sequence[ManifestEntry],
                 schema_at: Callable[[int], TableSchema]) -> ReadPlan:
    """``plan`` with the live ``.blob`` files of its BLOB columns (unchanged without any)."""
    if not any(is_blob(f.type) for f in plan.target.fields):
        return plan
    from schemalab.paimon.listing import BucketDirs

    dirs = BucketDirs(table_path)
    return with_blobs(plan, blob_files(entries, plan.table, dirs.data_file_path, schema_at))
