"""Atomic file writes on a local filesystem.

Paimon commits metadata with "create if absent": of two writers of ``schema-5`` exactly one
succeeds. Here the bytes go to a hidden temporary file in the same directory, are flushed to
disk, and are then hard-linked to the final name; ``link`` fails if the name exists, so a
reader sees either no file or the whole file, and a loser never overwrites the winner.
Temporary names start with ``.`` and end in ``.tmp``, so listings never see them.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator


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


def list_versions(directory: str, prefix: str) -> list[int]:
    """The ids N of files named ``<prefix>N`` in ``directory``, ascending."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)$")
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := pattern.match(n)))


def iter_files(root: str) -> Iterator[str]:
    for d, _, files in os.walk(root):
        for f in files:
            yield os.path.join(d, f)
