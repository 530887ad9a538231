"""The delete files a DELETE writes, as Iceberg's Spark merge-on-read writes them with
``write.delete.granularity = file`` (Spark's default):

- **format v2**: one Parquet *position delete file* per data file, beside it in its partition
  directory (``...-deletes.parquet``): columns ``file_path`` (string, field id 2147483546)
  and ``pos`` (long, field id 2147483545), required, sorted by position; its manifest entry
  has ``content = 1``, column sizes, and the lower and upper bounds of both columns (equal
  ``file_path`` bounds name the one data file, which is how Java marks a file-scoped delete
  file; ``referenced_data_file`` stays unset, as Java leaves it for Parquet);
- **format v3**: one Puffin file (``data/...-deletes.puffin``) holding a deletion vector per
  data file; each vector is its own manifest entry (``file_format = PUFFIN``,
  ``referenced_data_file``, ``content_offset``, ``content_size_in_bytes``, ``record_count``
  = its cardinality).
"""

from __future__ import annotations

import io
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.iceberg.deletes import FILE_PATH_ID, POS_ID
from schemalab.iceberg.write import avro
from schemalab.iceberg.write.datafiles import local_path
from schemalab.iceberg.write.produce import NewDeleteFile
from schemalab.iceberg.write.puffin import write_puffin

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt


def _position_table(data_file: str, positions: npt.NDArray[np.int64]) -> Any:
    import pyarrow as pa

    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False,
                 metadata={b"PARQUET:field_id": str(FILE_PATH_ID).encode()}),
        pa.field("pos", pa.int64(), nullable=False,
                 metadata={b"PARQUET:field_id": str(POS_ID).encode()})])
    return pa.table({"file_path": pa.array([data_file] * len(positions), pa.string()),
                     "pos": pa.array(positions, pa.int64())}, schema=schema)


def _parquet_bytes(table: Any, codec: str) -> tuple[bytes, Any]:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf, compression=codec, write_statistics=True)
    data = buf.getvalue()
    return data, pq.ParquetFile(io.BytesIO(data)).metadata


def _column_sizes(meta: Any) -> dict[int, int]:
    sizes = {FILE_PATH_ID: 0, POS_ID: 0}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for i, fid in enumerate((FILE_PATH_ID, POS_ID)):
            sizes[fid] += group.column(i).total_compressed_size
    return sizes


def _split_offsets(meta: Any) -> list[int]:
    out = []
    for rg in range(meta.num_row_groups):
        col = meta.row_group(rg).column(0)
        starts = [x for x in (col.dictionary_page_offset, col.data_page_offset)
                  if x is not None and x > 0]
        out.append(min(starts))
    return out


def delete_file_name(index: int, run: uuid.UUID, ext: str) -> str:
    """Named as Spark's ``OutputFileFactory`` names a task's delete files."""
    return f"{index:05d}-0-{run}-00001-deletes.{ext}"


def write_position_delete_file(table_path: str, location: str, data_file: str,
                               positions: npt.NDArray[np.int64], partition: Mapping[int, Any],
                               spec_id: int, name: str, codec: str = "zstd"
                               ) -> tuple[str, NewDeleteFile]:
    """One v2 position delete file of ``positions`` of ``data_file`` (its URI), written next
    to it; (local path, the new file's manifest record)."""
    loc = location.rstrip("/")
    directory = data_file.rsplit("/", 1)[0] if data_file.startswith(loc + "/data") else \
        f"{loc}/data"
    uri = f"{directory}/{name}"
    path = local_path(table_path, location, uri)
    data, meta = _parquet_bytes(_position_table(data_file, positions), codec)
    fileio.makedirs(os.path.dirname(path))
    if not fileio.write_new(path, data):
        raise FileExistsError(path)
    encoded = data_file.encode("utf-8")
    record = avro.DataFileRecord(
        uri, len(positions), len(data), dict(partition), column_sizes=_column_sizes(meta),
        lower_bounds={FILE_PATH_ID: encoded, POS_ID: int(positions[0]).to_bytes(8, "little")},
        upper_bounds={FILE_PATH_ID: encoded, POS_ID: int(positions[-1]).to_bytes(8, "little")},
        split_offsets=_split_offsets(meta), content=1)
    return path, NewDeleteFile(record, spec_id, len(data))


def write_deletion_vectors(table_path: str, location: str, name: str,
                           vectors: Sequence[tuple[str, npt.NDArray[np.int64],
                                                   Mapping[int, Any], int]]
                           ) -> tuple[str, list[NewDeleteFile]]:
    """One Puffin file of a deletion vector per (data file URI, positions, partition, spec
    id); (local path, a manifest record per vector)."""
    uri = f"{location.rstrip('/')}/data/{name}"
    path = local_path(table_path, location, uri)
    fileio.makedirs(os.path.dirname(path))
    size, spans = write_puffin(path, [(v[0], v[1]) for v in vectors])
    out = []
    for (_, _, partition, spec_id), span in zip(vectors, spans, strict=True):
        record = avro.DataFileRecord(
            uri, span.cardinality, size, dict(partition), content=1, file_format="PUFFIN",
            referenced_data_file=span.referenced_data_file, content_offset=span.offset,
            content_size=span.length)
        out.append(NewDeleteFile(record, spec_id, span.length))
    return path, out
