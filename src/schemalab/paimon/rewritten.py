"""Rewritten histories: a data file whose own columns do not match the schema file that now
carries its schema id.

Java Paimon's fast-forward copies *every* schema file of the branch over main's (and deletes
main's from the fork's schema on), and pypaimon 2.1's copies the branch's snapshots but not
its schemas; a schema rollback that deletes newer schema files lets the next ALTER write a
new file under an old id. Any of them can leave a data file (kept by an older snapshot or a
tag) under a schema id whose file on disk now describes other columns. Field ids cannot
tell: both lineages numbered their new columns alike (``b`` on main and ``c`` on the branch
are both field 2), so reading such a file by either schema would put one column's values
under another's name. Java reads it by the schema file and does exactly that; schemalab
refuses the read, naming the file, and ``inspect``, ``t.history().warnings()`` and the
history view say which files and snapshots are affected.

The check is the one the read pays anyway: the file's footer (cached per file), its
top-level column names against the schema's field names (a data-evolution file's against the
columns it says it holds), less Paimon's system columns (``_KEY_*``, ``_SEQUENCE_NUMBER``,
``_VALUE_KIND``, row tracking's). One writer writes all its files under one schema, so one
footer is read per writer (the ``data-<uuid>-`` of the file name) and schema id, every
file of the group only when that one does not match.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from schemalab import fileio
from schemalab.engine.footer import file_fields
from schemalab.engine.plan import DataFile
from schemalab.errors import CorruptFileError, SchemaLabError
from schemalab.history.model import HistoryWarning
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.listing import BucketDirs, ManifestReader, replay
from schemalab.paimon.manifest import FileKind, ManifestEntry
from schemalab.paimon.plan import file_format
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.paimon.snapshot import Snapshot
from schemalab.refs import MAIN
from schemalab.schema.table_schema import TableSchema

_SYSTEM = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_ROW_ID"})
RULE = "file-schema-rewritten"
#: ``data-<uuid>-<n>.<ext>``: the files one writer wrote share the part before ``-<n>``
_WRITER = re.compile(r"^(.*)-\d+(\.[^.]*)?$")


@dataclass(frozen=True)
class Mismatch:
    """A data file whose columns are not those of the schema file its schema id names."""

    file: DataFile
    file_columns: tuple[str, ...]
    schema_columns: tuple[str, ...]


def _own_columns(f: DataFile) -> tuple[str, ...]:
    return tuple(x.name for x in file_fields(f.path, f.format)
                 if x.name not in _SYSTEM and not x.name.startswith("_KEY_"))


def _matches(f: DataFile, mine: tuple[str, ...], schema: TableSchema) -> bool:
    names = tuple(x.name for x in schema.fields)
    if f.write_cols is None:
        return mine == names
    # data evolution: the file holds some of the schema's columns, and says which; a
    # row-tracking compaction lists the _ROW_ID / _SEQUENCE_NUMBER it stores too (as Java's)
    said = tuple(c for c in f.write_cols if c not in _SYSTEM)
    return mine == said and set(said) <= set(names)


def _writer(f: DataFile) -> tuple[int, str, str]:
    name = os.path.basename(f.path)
    m = _WRITER.match(name)
    return f.schema_id, os.path.dirname(f.path), m.group(1) if m else name


def mismatches(files: Iterable[DataFile], schema_at: Callable[[int], TableSchema]
               ) -> list[Mismatch]:
    """Each of ``files`` whose columns are not its schema's: one footer per writer and
    schema id (see the module docstring), all of the group's when that one differs. A file
    whose footer cannot be read is left to the read, which names it."""
    groups: dict[tuple[int, str, str], list[DataFile]] = {}
    for f in files:
        groups.setdefault(_writer(f), []).append(f)
    out: list[Mismatch] = []
    for group in groups.values():
        schema = schema_at(group[0].schema_id)
        checked = []
        for f in group:
            try:
                mine = _own_columns(f)
            except CorruptFileError:
                continue
            checked.append((f, mine))
            if len(checked) == 1 and _matches(f, mine, schema):
                break
        out += [Mismatch(f, mine, tuple(x.name for x in schema.fields))
                for f, mine in checked if not _matches(f, mine, schema)]
    return out


def _fields(s: TableSchema) -> list[tuple[int, str, str]]:
    return [(f.id, f.name, str(f.type)) for f in s.fields]


def cause(table_path: str, meta_path: str, schema_id: int, file_columns: Sequence[str]
          ) -> str:
    """Why schema ``schema_id`` of the branch at ``meta_path`` no longer describes a file
    holding ``file_columns``, from what the other branches hold under that id."""
    here = SchemaManager(meta_path).get(schema_id)
    me = _branch_name(table_path, meta_path)
    others = [MAIN] if meta_path != table_path else []
    others += [b for b in paimon_refs.list_branches(table_path).valid if b != me]
    for b in others:
        try:
            theirs = SchemaManager(paimon_refs.branch_path(table_path, b)).get(schema_id)
        except SchemaLabError:
            continue
        if tuple(f.name for f in theirs.fields) == tuple(file_columns):
            return (f"{me}'s snapshots were copied from branch {b} without {b}'s schemas, "
                    "as pypaimon 2.1's fast-forward copies them")
        if b != MAIN and _fields(theirs) == _fields(here):
            return (f"{me} was fast-forwarded from branch {b}, whose schema files replaced "
                    f"{me}'s")
    return (f"schema {schema_id} was replaced after the file was written: a fast-forward "
            "from a branch since deleted, or a rollback and a new ALTER")


def _branch_name(table_path: str, meta_path: str) -> str:
    if os.path.normpath(meta_path) == os.path.normpath(table_path):
        return MAIN
    return os.path.basename(meta_path).removeprefix(paimon_refs.BRANCH_PREFIX)


def describe(m: Mismatch, why: str) -> str:
    shown = ", ".join(f"`{c}`" for c in m.file_columns)
    disk = ", ".join(f"`{c}`" for c in m.schema_columns)
    return (f"file {os.path.basename(m.file.path)} was written under a "
            f"different schema {m.file.schema_id} than the one on disk ({why}): it holds "
            f"{shown}, schema {m.file.schema_id} on disk has {disk}")


def check_files(table: str, table_path: str, files: Sequence[DataFile],
                schema_at: Callable[[int], TableSchema], meta_path: str | None = None) -> None:
    """Refuse (rule ``file-schema-rewritten``) when a file's columns are not those of the
    schema file its schema id names."""
    bad = mismatches(files, schema_at) if files else []
    if not bad:
        return
    m = bad[0]
    more = f" (and {len(bad) - 1} more file(s))" if len(bad) > 1 else ""
    why = cause(fileio.normalize(table_path), meta_path or table_path, m.file.schema_id,
                m.file_columns)
    raise SchemaLabError(
        f"Table {table}: {describe(m, why)}{more}. Reading the file by this schema would put one "
        "column's values under another's name.", table=table, rule="file-schema-rewritten")


def _follows(snap: Snapshot, prev: Snapshot, reader: ManifestReader) -> bool:
    """Whether ``snap``'s base list is exactly ``prev``'s manifests, so its live files are
    ``prev``'s plus its delta: not so after a fast-forward put another lineage's snapshot
    next to main's, nor after manifests were merged (then the base list is replayed)."""
    if snap.id != prev.id + 1:
        return False
    names = [m.file_name for m in reader.metas(snap.base_manifest_list)]
    before = [m.file_name for lst in (prev.base_manifest_list, prev.delta_manifest_list)
              for m in reader.metas(lst)]
    return names == before


Key = tuple[bytes, int, str]


def _key(e: ManifestEntry) -> Key:
    return e.partition, e.bucket, e.file.file_name


def _candidates(snapshots: Sequence[Snapshot], reader: ManifestReader) -> dict[Key, ManifestEntry]:
    """Every file the snapshots hold, cheaply: what each snapshot's delta list adds, and the
    whole of the first's, the last's and any snapshot's after a gap in the ids (their base
    lists replayed): a file is added by a snapshot's delta or was live before the first."""
    out: dict[Key, ManifestEntry] = {}
    for i, snap in enumerate(snapshots):
        delta = reader.read_list("delta", snap.delta_manifest_list)
        if i in (0, len(snapshots) - 1) or snap.id != snapshots[i - 1].id + 1:
            base = reader.read_list("base", snap.base_manifest_list)
            entries = [e for e in replay([base, delta]) if e.kind == FileKind.ADD]
        else:
            entries = [e for m in delta.manifests for e in m.entries if e.kind == FileKind.ADD]
        for e in entries:
            out.setdefault(_key(e), e)
    return out


def _holders(snapshots: Sequence[Snapshot], reader: ManifestReader, wanted: set[Key]
             ) -> dict[Key, list[int]]:
    """The snapshots each of ``wanted`` is live in, exactly: a snapshot's live files are the
    previous one's plus its delta only when it continues it (:func:`_follows`), else its
    base list is replayed. Run only for a history that has something to warn about."""
    live: set[Key] = set()
    out: dict[Key, list[int]] = {}
    prev: Snapshot | None = None
    for snap in snapshots:
        delta = reader.read_list("delta", snap.delta_manifest_list)
        if prev is not None and _follows(snap, prev, reader):
            for e in (e for m in delta.manifests for e in m.entries):
                if e.kind == FileKind.ADD:
                    live.add(_key(e))
                else:
                    live.discard(_key(e))
        else:
            base = reader.read_list("base", snap.base_manifest_list)
            live = {_key(e) for e in replay([base, delta]) if e.kind == FileKind.ADD}
        for key in live & wanted:
            out.setdefault(key, []).append(snap.id)
        prev = snap
    return out


def history_warnings(table: str, table_path: str, meta_path: str,
                     schemas: SchemaManager, snapshots: Sequence[Snapshot],
                     reader: ManifestReader) -> tuple[HistoryWarning, ...]:
    """One warning per file some snapshot of ``snapshots`` (a branch's, oldest first) holds
    whose columns are not those of its schema file, naming the snapshots it is live in.
    Reads each snapshot's delta manifest list (as ``inspect`` does anyway), the first's and
    the last's base lists, and one footer per writer and schema id; only when a file does
    not match are the snapshots it is live in worked out from every base list."""
    files: dict[Key, DataFile] = {}
    dirs = BucketDirs(table_path)
    for key, e in _candidates(snapshots, reader).items():
        s = schemas.get(e.file.schema_id)
        try:
            fmt = file_format(e.file.file_name, s)
        except SchemaLabError:
            continue  # a format schemalab does not read (the read names it)
        files[key] = DataFile(path=dirs.data_file_path(e, s), schema_id=s.id,
                              row_count=e.file.row_count, format=fmt,
                              write_cols=e.file.write_cols)
    bad = mismatches(files.values(), schemas.get)
    if not bad:
        return ()
    by_path = {f.path: k for k, f in files.items()}
    holders = _holders(snapshots, reader, {by_path[m.file.path] for m in bad})
    out = []
    causes: dict[tuple[int, tuple[str, ...]], str] = {}
    for m in bad:
        ck = (m.file.schema_id, m.file_columns)
        if ck not in causes:
            causes[ck] = cause(table_path, meta_path, *ck)
        held = tuple(holders.get(by_path[m.file.path], ()))
        if not held:
            continue  # added and removed between two snapshots of this list
        out.append(HistoryWarning(
            RULE, describe(m, causes[ck]), held, os.path.relpath(m.file.path, table_path),
            m.file.schema_id, m.file_columns, m.schema_columns))
    return tuple(sorted(out, key=lambda w: (w.snapshot_ids, w.path or "")))
