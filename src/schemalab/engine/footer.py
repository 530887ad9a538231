"""What planning needs from a data file's footer, read once per file.

Data files never change once written, so a file's Arrow schema is cached by path: planning
asks whether a file carries Parquet field ids, which ids and names it holds at any depth,
and how it stores TIME and TIMESTAMP(9) columns, and each answer comes from one read.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.errors import CorruptFileError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

ARROW_FIELD_ID = b"PARQUET:field_id"


@functools.lru_cache(maxsize=4096)
def parquet_schema(path: str) -> pa.Schema:
    """The Arrow schema in the footer of the Parquet file at ``path``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(fileio.open_input(path))
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (listed as a live data file in the "
                                     "table's manifests)") from None
    except (OSError, pa.ArrowException) as e:
        raise CorruptFileError(path, f"unreadable Parquet footer ({e})") from None


@functools.lru_cache(maxsize=4096)
def parquet_int96_columns(path: str) -> frozenset[str]:
    """The top-level columns of the file stored as INT96 (Java Paimon's TIMESTAMP(7..9)),
    which pyarrow shows as nanosecond timestamps like INT64 ones."""
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(fileio.open_input(path)).schema
    return frozenset(schema.column(i).path.split(".")[0] for i in range(len(schema))
                     if schema.column(i).physical_type == "INT96")


def _field_id(f: pa.Field) -> int | None:
    meta = f.metadata or {}
    raw = meta.get(ARROW_FIELD_ID)
    return None if raw is None else int(raw)


def parquet_has_field_ids(path: str) -> bool:
    """Whether every top-level column of the file carries a field id (ours and Iceberg's
    do; Paimon's and pypaimon's do not)."""
    schema = parquet_schema(path)
    return bool(schema) and all(_field_id(f) is not None for f in schema)


@functools.lru_cache(maxsize=4096)
def parquet_fields_by_id(path: str) -> dict[int, pa.Field]:
    """Field id → Arrow field of every field of the file that carries an id, nested ones
    (struct fields, list elements, map keys and values) included."""
    import pyarrow as pa

    out: dict[int, pa.Field] = {}

    def visit(f: pa.Field) -> None:
        fid = _field_id(f)
        if fid is not None:
            out[fid] = f
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i))
        elif pa.types.is_map(t):
            visit(t.key_field)
            visit(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            visit(t.value_field)

    for f in parquet_schema(path):
        visit(f)
    return out


@functools.lru_cache(maxsize=4096)
def parquet_names(path: str) -> frozenset[str]:
    """The names of the file's columns at any depth."""
    import pyarrow as pa

    names: set[str] = set()

    def visit(t: pa.DataType) -> None:
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                names.add(t.field(i).name)
                visit(t.field(i).type)
        elif pa.types.is_map(t):
            visit(t.key_type)
            visit(t.item_type)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            visit(t.value_type)

    for f in parquet_schema(path):
        names.add(f.name)
        visit(f.type)
    return frozenset(names)
