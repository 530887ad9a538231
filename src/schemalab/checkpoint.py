"""Checkpoints of a warehouse: where its files stood, and the exact way back there.

Paimon and Iceberg keep a table's history in files that are written once and never changed:
schema files (``schema/schema-N``), snapshots (``snapshot/snapshot-N``), manifest lists,
manifests, data files, Iceberg's ``vN.metadata.json``. Only the hint files (``LATEST``,
``EARLIEST``, Iceberg's ``version-hint.text``) are replaced in place. So a checkpoint copies
no data: it is the warehouse's listing (every file's path and size, every directory) and
the hint files' contents.

Most statements only add files. Those that remove some (DROP TABLE; a local RENAME TABLE
moves them) remove them through :mod:`schemalab.fileio`, which first tells the warehouse's
keeper: a file that a live checkpoint still lists is kept before it goes — hard-linked on
local disk (no bytes copied when the temporary directory is on the same disk), read into a
local temporary directory from an object store. A file no checkpoint lists goes without a
copy. A kept file is known by its path and its *generation*, which every removal or
replacement of the path advances, so a file dropped and created again under the same name
(``DROP TABLE T; CREATE TABLE T``) is told apart from the one a checkpoint saw.

:meth:`Keeper.restore` lists the warehouse once and first checks that it can restore
exactly (every file the checkpoint lists is there unchanged or kept; nothing is touched
otherwise). Then it removes the files created since (schema files first: a table created
since disappears before its data), brings back the files removed or replaced since (data
first, schema files last: a dropped table reappears only whole), writes the hint files back
and removes directories created since. The warehouse then lists exactly as it did, byte for
byte.

A checkpoint is a plain value that stays valid while something refers to it: keepers hold
checkpoints weakly, and copies that no live checkpoint needs are let go at the next one.
Changes made behind schemalab's back (another process deleting a file) cannot be undone; a
restore that meets one says which file and changes nothing.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

from schemalab import fileio
from schemalab.errors import SchemaLabError

#: files the formats replace in place; a checkpoint keeps their contents
HINT_NAMES = frozenset({"LATEST", "EARLIEST", "version-hint.text"})


class CheckpointError(SchemaLabError):
    """A checkpoint that cannot be restored exactly (or not on this warehouse)."""


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """What a warehouse held at one moment: ``files`` maps each file's path (relative to
    ``root``) to its size and generation, ``hints`` holds the hint files' bytes, ``dirs``
    the directories."""

    root: str
    files: Mapping[str, tuple[int, int]]
    hints: Mapping[str, bytes]
    dirs: frozenset[str]
    serial: int = 0

    def __repr__(self) -> str:
        return (f"Checkpoint({self.root!r}, #{self.serial}: {len(self.files)} files, "
                f"{len(self.hints)} hints)")

    @functools.cached_property
    def parents(self) -> frozenset[str]:
        """Every directory that holds a listed file, at any depth ("" for the root)."""
        out = {""}
        for r in self.files:
            parts = r.split("/")[:-1]  # a marker "a/b/" holds a/b itself
            out.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return frozenset(out)


def is_hint(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1] in HINT_NAMES


def _rank(rel: str) -> int:
    """How soon a reader notices the file: 0 schema files (a table exists when it has one),
    1 snapshots and table metadata, 2 manifests, 3 data and anything else."""
    parts = rel.split("/")
    if "schema" in parts[:-1]:
        return 0
    if "snapshot" in parts[:-1] or parts[-1].endswith(".metadata.json"):
        return 1
    if "manifest" in parts[:-1] or "metadata" in parts[:-1]:
        return 2
    return 3


class _Files:
    """A warehouse's files as a restore sees them, for one kind of store. Paths are relative
    to ``root``; on S3 a key ending in ``/`` (a directory marker, which pyarrow writes when
    it deletes the last file of a directory) is a file of its own, so that the keys listed
    after a restore are exactly those listed before."""

    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, rel: str) -> str:
        return self.root if rel in ("", ".") else f"{self.root}/{rel}"

    def listing(self) -> tuple[dict[str, int], set[str]]:
        """Every file (path relative to the root, and size) and every directory; on an
        object store one recursive listing (a request per 1,000 keys)."""
        from pyarrow import fs as pafs

        files: dict[str, int] = {}
        dirs: set[str] = set()
        fs, p = fileio.filesystem(self.root)
        root = p.rstrip("/") + "/"
        for i in fs.get_file_info(pafs.FileSelector(p, recursive=True, allow_not_found=True)):
            rel = i.path[len(root):] if i.path.startswith(root) else i.path
            if i.type == pafs.FileType.Directory:
                dirs.add(rel.rstrip("/"))
            else:
                files[rel] = int(i.size)
        return files, dirs

    def read(self, rel: str) -> bytes:
        return fileio.read_bytes(self.path(rel))

    def delete(self, rels: list[str]) -> None:
        """Remove ``rels`` in this order (the caller told the keeper already)."""
        fs, p = fileio.filesystem(self.root)
        for rel in rels:
            with contextlib.suppress(FileNotFoundError):
                fs.delete_file(f"{p}/{rel}")

    def put(self, rel: str, data: bytes) -> None:
        fileio.write_replace(self.path(rel), data)


class _LocalFiles(_Files):
    def listing(self) -> tuple[dict[str, int], set[str]]:
        files: dict[str, int] = {}
        dirs: set[str] = set()
        for d, subdirs, names in os.walk(self.root):
            rel = os.path.relpath(d, self.root)
            dirs.update(os.path.normpath(os.path.join(rel, n)) for n in subdirs)
            for n in names:
                with contextlib.suppress(FileNotFoundError):
                    files[os.path.normpath(os.path.join(rel, n))] = \
                        os.path.getsize(os.path.join(d, n))
        return files, dirs

    def delete(self, rels: list[str]) -> None:
        for rel in rels:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path(rel))


class _S3Files(_Files):
    """S3 through boto3: listing shows directory markers, a batch delete removes up to 1,000
    keys in one request and leaves no marker behind (pyarrow's delete writes one)."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.bucket, _, key = root.split("://", 1)[1].partition("/")
        self.prefix = key.rstrip("/") + "/" if key else ""
        fileio.check_writable(root)  # boto3, or an error saying to install it
        self.client = fileio.s3_client(root)

    def listing(self) -> tuple[dict[str, int], set[str]]:
        files: dict[str, int] = {}
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            for o in page.get("Contents", []):
                rel = o["Key"][len(self.prefix):]
                files[rel or "/"] = int(o["Size"])  # "/": the root's own marker
        return files, set()

    def _key(self, rel: str) -> str:
        return self.prefix if rel == "/" else self.prefix + rel

    def read(self, rel: str) -> bytes:
        if rel.endswith("/"):
            return b""  # a directory marker
        return fileio.read_bytes(self.path(rel))

    def delete(self, rels: list[str]) -> None:
        for start in range(0, len(rels), 1000):
            batch = [{"Key": self._key(r)} for r in rels[start:start + 1000]]
            self.client.delete_objects(Bucket=self.bucket,
                                       Delete={"Objects": batch, "Quiet": True})

    def put(self, rel: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._key(rel), Body=data)


def _files_of(root: str) -> _Files:
    if fileio.is_local(root):
        return _LocalFiles(root)
    return _S3Files(root) if fileio.scheme(root) == "s3" else _Files(root)


class Keeper:
    """Checkpoints of the warehouse at ``root`` and the copies of files they still need."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files = _files_of(root)
        self._gen: dict[str, int] = {}
        self._saved: dict[tuple[str, int], str] = {}
        self._tokens: weakref.WeakSet[Checkpoint] = weakref.WeakSet()
        self._dir: str | None = None
        self._lock = threading.RLock()
        self._counter = itertools.count(1)

    # ---- taking one ---------------------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """The warehouse as it is now: one listing and a read of each hint file."""
        files, dirs = self.files.listing()
        hints = [r for r in files if is_hint(r)]
        fetched = fileio.prefetch([self.files.path(r) for r in hints])
        with self._lock:
            token = Checkpoint(
                self.root,
                {r: (n, self._gen.get(r, 0)) for r, n in files.items() if not is_hint(r)},
                {r: fetched[self.files.path(r)] for r in hints if self.files.path(r) in fetched},
                frozenset(dirs), next(self._counter))
            self._tokens.add(token)
            self._let_go()
        return token

    def _let_go(self) -> None:
        """Drop the copies no live checkpoint needs any more."""
        needed = {(r, g) for t in self._tokens for r, (_, g) in t.files.items()}
        for key in [k for k in self._saved if k not in needed]:
            path = self._saved.pop(key)
            if path not in self._saved.values():
                with contextlib.suppress(OSError):
                    os.unlink(path)

    # ---- keeping what a checkpoint still needs -------------------------------------------

    def _rel(self, path: str) -> str | None:
        path = os.path.abspath(path) if fileio.is_local(path) else fileio.normalize(path)
        if path == self.root:
            return ""
        return path[len(self.root) + 1:] if path.startswith(self.root + "/") else None

    def before_change(self, path: str) -> None:
        """``path`` (a file or a directory below the root) is about to be removed or
        replaced: keep every file below it that a live checkpoint lists as it is now."""
        rel = self._rel(path)
        if rel is None:
            return
        with self._lock:
            self._before_change(rel)

    def _before_change(self, rel: str) -> None:
        tokens = list(self._tokens)
        if not tokens:
            return
        going = {rel for t in tokens if t.files.get(rel, (0, -1))[1] == self._gen.get(rel, 0)}
        folder = rel.rstrip("/")
        if not going and any(folder in t.parents for t in tokens):  # a directory
            prefix = folder + "/" if folder else ""
            going = {r for t in tokens for r, (_, g) in t.files.items()
                     if r.startswith(prefix) and g == self._gen.get(r, 0)}
        for r in sorted(going):
            self._keep(r)
        for r in going:
            self._gen[r] = next(self._counter)

    def _keep(self, rel: str) -> None:
        key = (rel, self._gen.get(rel, 0))
        if key in self._saved:
            return
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="schemalab-checkpoint-")
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        dest = os.path.join(self._dir, str(next(self._counter)))
        src = self.files.path(rel)
        if fileio.is_local(src):
            try:
                os.link(src, dest)  # no bytes copied: the name goes, the file stays
            except OSError:
                shutil.copyfile(src, dest)
        else:
            with open(dest, "wb") as fh:
                fh.write(self.files.read(rel))
        self._saved[key] = dest

    # ---- going back ---------------------------------------------------------------------

    def restore(self, token: Checkpoint) -> None:
        """Make the warehouse list and read exactly as at ``token``."""
        if token.root != self.root:
            raise CheckpointError(f"Checkpoint of {token.root} cannot restore {self.root}.",
                                  rule="checkpoint-of-this-warehouse")
        with self._lock:
            files, _ = self.files.listing()
            back = self._to_bring_back(token, files)
            gone = [r for r in files if r in back or (
                r not in token.hints if is_hint(r) else r not in token.files)]
            gone.sort(key=lambda r: (_rank(r), r))
            for r in gone:
                self._before_change(r)
            self.files.delete(gone)
            for r in sorted(back, key=lambda r: (-_rank(r), r)):
                self._bring_back(r, token.files[r][1])
            self._write_hints(token, files)
            if fileio.is_local(self.root):
                self._fix_dirs(token)

    def _to_bring_back(self, token: Checkpoint, files: Mapping[str, int]) -> set[str]:
        """The files to write from kept copies; CheckpointError, before anything changed, for
        a file the checkpoint lists that is neither there as it was nor kept."""
        back = set()
        for r, (size, gen) in token.files.items():
            if self._gen.get(r, 0) == gen:
                if files.get(r) == size:
                    continue
                what = "is gone" if r not in files else f"is {files[r]} bytes, not {size}"
                raise CheckpointError(
                    f"Cannot restore {self.root} exactly: {r} {what}, changed outside "
                    "schemalab since the checkpoint; nothing was restored.",
                    rule="checkpoint-restorable")
            if (r, gen) not in self._saved:
                raise CheckpointError(
                    f"Cannot restore {self.root} exactly: no copy of {r} as it was at the "
                    "checkpoint; nothing was restored.", rule="checkpoint-restorable")
            back.add(r)
        return back

    def _bring_back(self, rel: str, gen: int) -> None:
        saved = self._saved[(rel, gen)]
        path = self.files.path(rel)
        if fileio.is_local(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            try:
                os.link(saved, path)
            except OSError:
                shutil.copyfile(saved, path)
        else:
            with open(saved, "rb") as fh:
                self.files.put(rel, fh.read())
        # the path holds generation ``gen``'s bytes again, under a generation of its own
        now = next(self._counter)
        self._gen[rel] = now
        self._saved[(rel, now)] = saved

    def _write_hints(self, token: Checkpoint, files: Mapping[str, int]) -> None:
        now = fileio.prefetch([self.files.path(r) for r in token.hints if r in files])
        for r, data in sorted(token.hints.items()):
            if now.get(self.files.path(r)) != data:
                self.files.put(r, data)

    def _fix_dirs(self, token: Checkpoint) -> None:
        """On local disk: directories created since go (deepest first, each only when empty:
        the files below them are gone already), empty ones the checkpoint had come back."""
        _, dirs = self.files.listing()
        for d in sorted(dirs - token.dirs, key=lambda d: -d.count("/")):
            with contextlib.suppress(OSError):
                os.rmdir(self.files.path(d))
        for d in token.dirs - dirs:
            os.makedirs(self.files.path(d), exist_ok=True)


_keepers: dict[str, Keeper] = {}
_keepers_lock = threading.Lock()


def _guard(path: str) -> None:
    for keeper in list(_keepers.values()):
        keeper.before_change(path)


def keeper(root: str) -> Keeper:
    """The one keeper of the warehouse at ``root`` (normalized, as ``Warehouse.path``)."""
    with _keepers_lock:
        k = _keepers.get(root)
        if k is None:
            k = _keepers[root] = Keeper(root)
            if _guard not in fileio.change_guards:
                fileio.change_guards.append(_guard)
        return k
