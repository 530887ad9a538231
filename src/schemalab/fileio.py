"""Atomic file writes on a local filesystem.

Paimon commits metadata with "create if absent": of two writers of ``schema-5`` exactly one
succeeds. Here the bytes go to a hidden temporary file in the same directory, are flushed to
disk, and are then hard-linked to the final name; ``link`` fails if the name exists, so a
reader sees either no file or the whole file, and a loser never overwrites the winner.
Temporary names start with ``.`` and end in ``.tmp``, so listings never see them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import uuid
from dataclasses import dataclass
from typing import Any


def _tmp_path(path: str) -> str:
    d, name = os.path.split(path)
    return os.path.join(d, f".{name}.{uuid.uuid4().hex}.tmp")


def _write_tmp(path: str, data: bytes) -> str:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = _tmp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_new(path: str, data: bytes | str) -> bool:
    """Create ``path`` with ``data`` atomically, only if it does not exist.
    Returns False (and leaves nothing behind) when another writer got there first."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = _write_tmp(path, payload)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write_replace(path: str, data: bytes | str) -> None:
    """Replace ``path`` atomically (for hint files such as ``LATEST``)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = _write_tmp(path, payload)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


AVRO_MAGIC = b"Obj\x01"


@dataclass(frozen=True)
class AvroFile:
    """An Avro container file: its writer schema, its metadata (decoded as text) and its
    records."""

    schema: Any
    metadata: dict[str, str]
    records: list[dict[str, Any]]


def read_avro(path: str, *, missing: str = "file does not exist") -> AvroFile:
    """Every record of the Avro container file at ``path`` (manifests of both formats);
    CorruptFileError naming the file for anything unreadable, ``missing`` when it is not
    there."""
    import fastavro

    from schemalab.errors import CorruptFileError

    try:
        data = read_bytes(path)
    except FileNotFoundError:
        raise CorruptFileError(path, missing) from None
    except OSError as e:
        raise CorruptFileError(path, f"cannot be read ({e})") from None
    if not data.startswith(AVRO_MAGIC):
        raise CorruptFileError(path, "not an Avro container file (no 'Obj\\x01' magic)")
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)
    except Exception as e:  # noqa: BLE001 - fastavro and the codecs raise many kinds
        raise CorruptFileError(path, f"unreadable Avro ({type(e).__name__}: {e})") from None
    if not all(isinstance(r, dict) for r in records):
        raise CorruptFileError(path, "Avro records are not records")
    meta = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
            for k, v in reader.metadata.items()}
    return AvroFile(reader.writer_schema, meta, records)  # type: ignore[arg-type]


PARQUET_MAGIC = b"PAR1"


def check_data_file(path: str, expected_size: int | None, *, table: str | None = None) -> None:
    """Refuse a data file a manifest names that is missing, of another size than the
    manifest recorded, or not Parquet (no ``PAR1`` at both ends): a clear error naming the
    file now, rather than a Spark stack trace when the read runs."""
    from schemalab.errors import CorruptFileError

    where = f" (table {table})" if table else ""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise CorruptFileError(path, f"data file does not exist, but a manifest of the "
                               f"snapshot names it{where}", table=table) from None
    if expected_size and size != expected_size:
        raise CorruptFileError(path, f"data file is {size} bytes, but its manifest entry "
                               f"says {expected_size}: truncated or overwritten{where}",
                               table=table)
    if not path.endswith(".parquet"):
        return  # ORC/Avro data files (Java Paimon) are left to their readers
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(max(0, size - 4))
            tail = fh.read(4)
    except OSError as e:
        raise CorruptFileError(path, f"data file cannot be read ({e}){where}",
                               table=table) from None
    if size < 12 or head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
        raise CorruptFileError(path, f"not a Parquet file (no 'PAR1' magic at both ends)"
                               f"{where}", table=table)


def list_versions(directory: str, prefix: str) -> list[int]:
    """The ids N of files named ``<prefix>N`` in ``directory``, ascending."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)$")
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := pattern.match(n)))
