"""Which of a snapshot's delete files apply to which data file, and what they delete
(spec §"Scan Planning", §"Position Delete Files", §"Equality Delete Files", puffin
§"deletion-vector-v1"; what the fixture's files hold: docs/iceberg-read-facts.md).

A delete file applies to a data file of the same partition (spec id and values) when:

- **deletion vector** (v3, a Puffin blob): it names the data file
  (``referenced_data_file``) and its data sequence number is >= the data file's. When a
  vector applies, the position delete files for that data file are ignored;
- **position delete file**: it names the data file or no single file (``referenced_data_file``,
  else equal lower/upper bounds on ``file_path``, else any file of the partition), its
  data sequence number is >= the data file's, and only its rows whose ``file_path`` is the
  data file's count;
- **equality delete file**: its data sequence number is *greater* than the data file's,
  in the data file's partition, or in every partition when it was written with an
  unpartitioned spec.

Sequence numbers are always the entries' data sequence numbers (a rewrite keeps them);
paths are compared as the metadata writes them.

    >>> blob = bytes.fromhex("00000022" "d1d33964" "0100000000000000" "00000000" "3a300000"
    ...                      "01000000" "00000000" "10000000" "0100" "eebd85f4")
    >>> parse_deletion_vector(blob, "x.puffin").tolist()
    [1]
"""

from __future__ import annotations

import functools
import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.codecs.roaring import RoaringError, read_bitmap64
from schemalab.engine.plan import IgnoredDelete, IgnoreReason, PositionDeletes
from schemalab.errors import CorruptFileError, SchemaLabError
from schemalab.iceberg.manifests import IcebergManifestEntry

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt

    from schemalab.iceberg.listing import IcebergDataFile, IcebergSource

#: the reserved field ids of a position delete file's columns
FILE_PATH_ID = 2147483546
POS_ID = 2147483545
#: the magic of a deletion-vector-v1 blob (Java writes the int little-endian)
DV_MAGIC = bytes.fromhex("d1d33964")


def scope(e: IcebergManifestEntry) -> str:
    """The partition a file belongs to, as text two files share when in the same one."""
    return json.dumps([e.spec_id, sorted((k, repr(v)) for k, v in e.partition.items())])


def is_deletion_vector(e: IcebergManifestEntry) -> bool:
    return e.content == 1 and e.file_format == "puffin"


def referenced_file(e: IcebergManifestEntry) -> str | None:
    """The one data file a position delete file (or vector) names, if it names one: its
    ``referenced_data_file``, else equal lower and upper bounds on ``file_path`` (as Java's
    ContentFileUtil.referencedDataFile)."""
    if e.referenced_data_file:
        return e.referenced_data_file
    lo, hi = e.lower_bounds.get(FILE_PATH_ID), e.upper_bounds.get(FILE_PATH_ID)
    if lo is not None and lo == hi:
        return lo.decode("utf-8", "replace")
    return None


@dataclass(frozen=True)
class DeleteIndex:
    """A snapshot's live delete files, ready to be matched to its data files."""

    table: IcebergSource
    vectors: dict[str, list[IcebergDataFile]]
    #: position delete files by the data file they name ("" = any file of their partition)
    positions: dict[str, list[IcebergDataFile]]
    equality: tuple[IcebergDataFile, ...]

    @staticmethod
    def of(table: IcebergSource, deletes: Sequence[IcebergDataFile]) -> DeleteIndex:
        vectors: dict[str, list[IcebergDataFile]] = {}
        positions: dict[str, list[IcebergDataFile]] = {}
        equality = []
        for d in deletes:
            e = d.entry
            if e.content == 2:
                if not e.equality_ids:
                    raise CorruptFileError(d.path, "is an equality delete file without "
                                                   "equality_ids", table=table.name)
                equality.append(d)
            elif is_deletion_vector(e):
                target = referenced_file(e)
                if target is None:
                    raise CorruptFileError(d.path, "holds a deletion vector that names no data "
                                                   "file", table=table.name)
                vectors.setdefault(target, []).append(d)
            else:
                positions.setdefault(referenced_file(e) or "", []).append(d)
        return DeleteIndex(table, vectors, positions, tuple(equality))

    def position_deletes(self, df: IcebergDataFile) -> tuple[PositionDeletes, ...]:
        """The deletes by position of data file ``df``."""
        seq = _seq(df.entry)
        part = scope(df.entry)
        vectors = [v for v in self.vectors.get(df.entry.file_path, ())
                   if _seq(v.entry) >= seq and scope(v.entry) == part]
        if len(vectors) > 1:
            raise SchemaLabError(
                f"Table {self.table.name}: data file {df.entry.file_path} has "
                f"{len(vectors)} deletion vectors ({', '.join(v.uri for v in vectors)}); the "
                "spec allows one per data file, so the read is refused.",
                table=self.table.name, rule="iceberg-deletion-vectors")
        if vectors:
            (v,) = vectors
            e = v.entry
            return (PositionDeletes(
                "deletion vector", v.path, e.record_count, _seq(e),
                functools.partial(_vector_positions, v.path, e.content_offset,
                                  e.content_size, e.record_count, self.table.name)),)
        out = []
        for d in (*self.positions.get(df.entry.file_path, ()), *self.positions.get("", ())):
            if _seq(d.entry) >= seq and scope(d.entry) == part:
                out.append(PositionDeletes(
                    "position delete file", d.path, None, _seq(d.entry),
                    functools.partial(file_positions, d.path, d.entry.file_format,
                                      df.entry.file_path)))
        return tuple(out)

    def ignored(self, data: Sequence[IcebergDataFile]) -> list[IgnoredDelete]:
        """The delete files that name one data file and delete nothing of it in this read,
        and the equality delete files no data file is old enough for: the rows they seem
        to delete are present, and explanations say why."""
        by_path = {d.entry.file_path: d for d in data}
        out = []
        for target, group in (*self.vectors.items(), *self.positions.items()):
            if not target:
                continue
            df = by_path.get(target)
            for d in group:
                kind = "deletion vector" if is_deletion_vector(d.entry) else \
                    "position delete file"
                seq = _seq(d.entry)
                reason: IgnoreReason
                if df is None:
                    reason = "not-live"
                elif _seq(df.entry) > seq:
                    reason = "newer-data"
                elif kind == "position delete file" and any(
                        _seq(v.entry) >= _seq(df.entry) for v in self.vectors.get(target, ())):
                    reason = "deletion-vector"
                else:
                    continue
                out.append(IgnoredDelete(kind, d.path, seq, reason, target,
                                         None if df is None else _seq(df.entry)))
        applying = {e.path for e in self.equality_for(data)}
        out.extend(IgnoredDelete("equality delete file", e.path, _seq(e.entry), "no-older-data")
                   for e in self.equality if e.path not in applying)
        return out

    def equality_for(self, data: Sequence[IcebergDataFile]) -> list[IcebergDataFile]:
        """The equality delete files that apply to at least one of ``data``."""
        parts = {scope(d.entry) for d in data}
        low = min((_seq(d.entry) for d in data), default=None)
        return [e for e in self.equality if low is not None and _seq(e.entry) > low
                and (equality_scope(self.table, e.entry) is None
                     or scope(e.entry) in parts)]


def equality_scope(table: IcebergSource, e: IcebergManifestEntry) -> str | None:
    """An equality delete's scope: its partition, or None (every partition) when its spec is
    unpartitioned."""
    spec = table.metadata.spec(e.spec_id)
    return None if spec is None or not spec.fields else scope(e)


def _seq(e: IcebergManifestEntry) -> int:
    return 0 if e.sequence_number is None else int(e.sequence_number)


def _vector_positions(path: str, offset: int | None, size: int | None, cardinality: int,
                      table: str) -> npt.NDArray[np.int64]:
    if offset is None or size is None:
        raise CorruptFileError(path, "deletion vector entry has no content_offset / "
                                     "content_size_in_bytes", table=table)
    data = _read_range(path, offset, size)
    positions = parse_deletion_vector(data, path)
    if len(positions) != cardinality:
        raise CorruptFileError(path, f"deletion vector at {offset} holds {len(positions)} "
                                     f"positions, its manifest entry says {cardinality}",
                               table=table)
    return positions


def _read_range(path: str, offset: int, size: int) -> bytes:
    try:
        data = fileio.read_bytes(path)
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (a live delete file of the snapshot)"
                               ) from None
    if offset < 0 or offset + size > len(data):
        raise CorruptFileError(path, f"blob at {offset} (+{size} bytes) lies outside the "
                                     f"file's {len(data)} bytes")
    return data[offset:offset + size]


def parse_deletion_vector(blob: bytes, path: str) -> npt.NDArray[np.int64]:
    """The positions of a ``deletion-vector-v1`` blob: a big-endian length of magic +
    vector, the magic, a 64-bit Roaring bitmap and a big-endian CRC-32 of magic + vector,
    checked as Java's BitmapPositionDeleteIndex.deserialize checks them."""
    if len(blob) < 12:
        raise CorruptFileError(path, f"deletion vector blob of {len(blob)} bytes is too short")
    (length,) = struct.unpack_from(">I", blob, 0)
    if length != len(blob) - 8:
        raise CorruptFileError(path, f"deletion vector blob says {length} bytes of vector, "
                                     f"it has {len(blob) - 8}")
    body = blob[4:4 + length]
    if body[:4] != DV_MAGIC:
        raise CorruptFileError(path, f"deletion vector blob has magic {body[:4].hex()}, not "
                                     f"{DV_MAGIC.hex()}")
    (crc,) = struct.unpack_from(">I", blob, 4 + length)
    if crc != zlib.crc32(body):
        raise CorruptFileError(path, "deletion vector blob: CRC-32 mismatch")
    try:
        return read_bitmap64(body[4:])
    except RoaringError as e:
        raise CorruptFileError(path, f"deletion vector blob: {e}") from None


@functools.lru_cache(maxsize=64)
def _position_file(path: str, fmt: str) -> dict[str, npt.NDArray[np.int64]]:
    """A position delete file's rows: data file path → sorted deleted positions."""
    import numpy as np
    import pyarrow as pa

    if fmt == "avro":
        records = fileio.read_avro(path).records
        table = pa.table({"file_path": [r.get("file_path") for r in records],
                          "pos": pa.array([r.get("pos") for r in records], pa.int64())})
    else:
        try:
            if fmt == "orc":
                import pyarrow.orc as orc

                table = orc.ORCFile(fileio.open_input(path)).read(columns=["file_path", "pos"])
            else:
                import pyarrow.parquet as pq

                table = pq.read_table(fileio.open_input(path), columns=["file_path", "pos"])
        except FileNotFoundError:
            raise CorruptFileError(path, "does not exist (a live delete file of the snapshot)"
                                   ) from None
        except (OSError, pa.ArrowException, KeyError) as e:
            raise CorruptFileError(path, f"is not a readable position delete file ({e})"
                                   ) from None
    if table["file_path"].null_count or table["pos"].null_count:
        raise CorruptFileError(path, "position delete file has NULL file_path or pos")
    import pyarrow.compute as pc

    paths = pc.dictionary_encode(table["file_path"]).combine_chunks()
    idx = paths.indices.to_numpy()
    pos = table["pos"].to_numpy().astype(np.int64)
    order = np.lexsort((pos, idx))
    idx, pos = idx[order], pos[order]
    bounds = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1], True])
    names = paths.dictionary.to_pylist()
    return {str(names[idx[b]]): pos[b:e] for b, e in zip(bounds[:-1], bounds[1:], strict=True)}


def file_positions(path: str, fmt: str, data_file: str) -> npt.NDArray[np.int64]:
    """The positions position delete file ``path`` deletes from ``data_file`` (its path as
    the metadata writes it), sorted; the file is read once for all its data files."""
    import numpy as np

    return _position_file(path, fmt).get(data_file, np.zeros(0, np.int64))
