"""What planning needs from a data file's footer, read once per file.

Data files never change once written, so a file's Arrow schema is cached by path: planning
asks whether a file carries Parquet field ids, which ids and names it holds at any depth,
and how it stores TIME and TIMESTAMP(9) columns, and each answer comes from one read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
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


#: where ORC files written by Iceberg keep a column's field id (a type attribute)
ORC_ICEBERG_ID = b"iceberg.id"


@functools.lru_cache(maxsize=4096)
def orc_schema(path: str) -> pa.Schema:
    """The Arrow schema of the ORC file at ``path`` (type attributes as field metadata)."""
    import pyarrow.orc as orc

    try:
        return orc.ORCFile(fileio.open_input(path)).schema
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (listed as a live data file in the "
                                     "table's manifests)") from None
    except Exception as e:  # noqa: BLE001 - the ORC reader raises several kinds
        raise CorruptFileError(path, f"unreadable ORC footer ({type(e).__name__}: {e})") from None


@functools.lru_cache(maxsize=4096)
def avro_schema(path: str) -> object:
    """The writer schema (JSON) in the header of the Avro data file at ``path`` (the header
    only is read, not the file's blocks)."""
    import fastavro

    try:
        src = fileio.open_input(path)
        f = open(src, "rb") if isinstance(src, str) else src  # noqa: SIM115 - closed below
        try:
            return fastavro.reader(f).writer_schema
        finally:
            f.close()
    except FileNotFoundError:
        raise CorruptFileError(path, "does not exist (listed as a live data file in the "
                                     "table's manifests)") from None
    except Exception as e:  # noqa: BLE001 - fastavro and the codecs raise many kinds
        raise CorruptFileError(path, f"unreadable Avro header ({type(e).__name__}: {e})") from None


@dataclass(frozen=True)
class FileField:
    """A field of a data file as its footer names it: its Iceberg field id if it carries
    one, and its children (a struct's fields; a list's element or a map's value struct)."""

    name: str
    field_id: int | None
    children: tuple[FileField, ...] = ()


def file_fields(path: str, fmt: str) -> tuple[FileField, ...]:
    """The top-level fields of a Parquet, ORC or Avro data file, with their ids (Parquet
    ``PARQUET:field_id``, ORC ``iceberg.id``, Avro ``field-id``) and nested struct fields."""
    if fmt == "avro":
        return _avro_fields(avro_schema(path))
    schema = orc_schema(path) if fmt == "orc" else parquet_schema(path)
    key = ORC_ICEBERG_ID if fmt == "orc" else ARROW_FIELD_ID
    return tuple(_arrow_field(f, key) for f in schema)


def _arrow_field(f: pa.Field, key: bytes) -> FileField:
    import pyarrow as pa

    raw = (f.metadata or {}).get(key)
    t = f.type
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        t = t.item_type if pa.types.is_map(t) else t.value_type
    kids = tuple(_arrow_field(t.field(i), key) for i in range(t.num_fields)) \
        if pa.types.is_struct(t) else ()
    return FileField(f.name, None if raw is None else int(raw), kids)


def _avro_fields(schema: object) -> tuple[FileField, ...]:
    rec = _avro_unwrap(schema)
    if not isinstance(rec, dict) or rec.get("type") != "record":
        return ()
    out = []
    for f in rec.get("fields", ()):
        t = _avro_unwrap(f.get("type"))
        while isinstance(t, dict) and t.get("type") in ("array", "map"):
            t = _avro_unwrap(t.get("items") if t["type"] == "array" else t.get("values"))
            if isinstance(t, dict) and t.get("type") == "record" and \
                    [x.get("name") for x in t.get("fields", ())] == ["key", "value"]:
                # Iceberg's map with non-string keys: an array of key/value records
                t = _avro_unwrap(t["fields"][1].get("type"))
        fid = f.get("field-id")
        out.append(FileField(str(f["name"]), fid if isinstance(fid, int) else None,
                             _avro_fields(t)))
    return tuple(out)


def _avro_unwrap(t: object) -> object:
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        return rest[0] if len(rest) == 1 else t
    return t


def field_ids(fields: tuple[FileField, ...]) -> dict[int, str]:
    """Field id → file name of every field that carries an id, at any depth."""
    out: dict[int, str] = {}
    for f in fields:
        if f.field_id is not None:
            out[f.field_id] = f.name
        out.update(field_ids(f.children))
    return out
