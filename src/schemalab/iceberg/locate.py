"""Finding an Iceberg table's current metadata file without a catalog."""


from __future__ import annotations

import os
import re

from schemalab import fileio
from schemalab.errors import (
    CorruptFileError,
    SchemaLabError,
    TableNotFoundError,
)
from schemalab.iceberg.metadata import load_json

_NUMBERED = re.compile(r"^(\d+)-.+\.metadata\.json(?:\.gz)?$")
_VERSIONED = re.compile(r"^v(\d+)(?:\.[A-Za-z0-9]+)?\.metadata\.json(?:\.gz)?$")


def metadata_version(name: str) -> int | None:
    """The version number in a metadata file name (``00003-<uuid>.metadata.json``,
    ``v3.metadata.json``, ``v3.gz.metadata.json``, ``v3.metadata.json.gz``)::

        >>> metadata_version("00012-0a26.metadata.json"), metadata_version("v7.gz.metadata.json")
        (12, 7)
    """
    m = _NUMBERED.match(name) or _VERSIONED.match(name)
    return int(m.group(1)) if m else None


def find_current_metadata(table_dir: str) -> str:
    """The current metadata file of the table at ``table_dir``.

    ``metadata/version-hint.text`` (Hadoop tables) names version N; as Java's
    HadoopTableOperations does, newer versions N+1, N+2... that exist are taken too (a writer
    that died between writing vN+1 and updating the hint). Without a hint, the highest
    number wins; two files with the same number (a lost commit race leaves one behind) are
    told apart by their ``last-updated-ms``. Without a catalog this is the best guess: open a
    metadata file directly to pin an exact version."""
    mdir = os.path.join(table_dir, "metadata")
    hint = os.path.join(mdir, "version-hint.text")
    # the hint is read before metadata/ is listed: a writer creates v<N> before the hint
    # names it, so the listing then holds what the hint names. Listed first, a commit
    # landing in between made a hint that named a file the listing had not seen.
    try:
        text: str | None = fileio.read_bytes(hint).decode("utf-8", "replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        text = None
    names = fileio.list_names(mdir)
    if not names:
        raise TableNotFoundError(f"{table_dir} is not an Iceberg table directory (no "
                                 "metadata/ inside)", rule="table-must-exist")
    by_version: dict[int, list[str]] = {}
    for n in names:
        ver = metadata_version(n)
        if ver is not None:
            by_version.setdefault(ver, []).append(n)
    if text is not None:
        if not text.isdigit():
            raise CorruptFileError(hint, f"must hold a version number, not {text[:40]!r}")
        ver = int(text)
        if ver not in by_version:
            raise CorruptFileError(hint, f"points to version {ver}, but metadata/ has no "
                                         f"v{ver}.metadata.json (or {ver:05d}-*.metadata.json)")
        while ver + 1 in by_version:
            ver += 1
        return os.path.join(mdir, _pick(mdir, by_version[ver]))
    if not by_version:
        raise TableNotFoundError(f"{table_dir} is not an Iceberg table directory (no "
                                 "*.metadata.json in metadata/)", rule="table-must-exist")
    return os.path.join(mdir, _pick(mdir, by_version[max(by_version)]))


def _pick(mdir: str, names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    # vN beats NNNNN-<uuid> (a Hadoop table's own file); otherwise the newest by content
    plain = [n for n in names if n.startswith("v")]
    if len(plain) == 1:
        return plain[0]

    def updated(n: str) -> tuple[int, str]:
        try:
            data = load_json(os.path.join(mdir, n))
            return int(data.get("last-updated-ms", 0)), n
        except (SchemaLabError, AttributeError, TypeError, ValueError):
            return -1, n

    return max(names, key=updated)


def is_iceberg_table(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an Iceberg table directory (``metadata/`` holding
    ``*.metadata.json``) or an Iceberg metadata file. Cheap: lists one directory."""
    p = fileio.normalize(path)
    if p.endswith((".metadata.json", ".metadata.json.gz")):
        return fileio.is_file(p)
    return any(metadata_version(n) is not None
               for n in fileio.list_names(os.path.join(p, "metadata")))
