"""Paimon snapshots (``snapshot/snapshot-N``) and the LATEST/EARLIEST hints.

A snapshot is a JSON file naming two manifest lists: ``baseManifestList`` (every file live
before this commit) and ``deltaManifestList`` (what this commit added and deleted). Reading
both and replaying their ADD/DELETE entries in order gives the table's data files at that
snapshot::

    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> table = tmp.name
    >>> sm = SnapshotManager(table)
    >>> sm.commit(Snapshot(id=1, schema_id=0, base_manifest_list="manifest-list-a-0",
    ...                    delta_manifest_list="manifest-list-a-1", commit_user="me",
    ...                    commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind="APPEND",
    ...                    time_millis=0, total_record_count=0, delta_record_count=0))
    True
    >>> sm.latest_id(), open(table + "/snapshot/LATEST").read()
    (1, '1')
    >>> tmp.cleanup()

JSON layouts. Java writes Jackson's pretty printer (``"key" : value``) in the order of
``Snapshot``'s ``@JsonCreator`` parameters, omitting null fields; pypaimon writes
``json.dumps(indent=2)`` in its dataclass order. :meth:`Snapshot.from_json` reads both and
remembers which one it saw (``layout``), so a file read and written back is byte-identical;
keys it does not know are kept in ``extra`` and written back at the end. New snapshots are
written in Java's layout.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from schemalab import fileio
from schemalab.errors import CorruptFileError, SchemaLabError, UnsupportedVersionError
from schemalab.schema.jackson import jackson_pretty, load_object

CURRENT_VERSION = 3
SNAPSHOT_PREFIX = "snapshot-"
LATEST = "LATEST"
EARLIEST = "EARLIEST"
#: ``commitIdentifier`` of batch commits (Java ``BatchWriteBuilder.COMMIT_IDENTIFIER``)
BATCH_COMMIT_IDENTIFIER = 2**63 - 1
COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")

Layout = Literal["java", "python"]

# (JSON key, attribute) in the order Jackson writes them: Snapshot.java's @JsonCreator
# parameters (SORT_CREATOR_PROPERTIES_FIRST). "logOffsets" was removed from Java in 2025
# (commit d7959fbb2e) and sat between timeMillis and totalRecordCount before.
_JAVA_ORDER: tuple[tuple[str, str], ...] = (
    ("version", "version"), ("uuid", "uuid"), ("id", "id"), ("schemaId", "schema_id"),
    ("baseManifestList", "base_manifest_list"),
    ("baseManifestListSize", "base_manifest_list_size"),
    ("deltaManifestList", "delta_manifest_list"),
    ("deltaManifestListSize", "delta_manifest_list_size"),
    ("changelogManifestList", "changelog_manifest_list"),
    ("changelogManifestListSize", "changelog_manifest_list_size"),
    ("indexManifest", "index_manifest"), ("commitUser", "commit_user"),
    ("writerVersion", "writer_version"), ("commitIdentifier", "commit_identifier"),
    ("commitKind", "commit_kind"), ("timeMillis", "time_millis"),
    ("logOffsets", "log_offsets"), ("totalRecordCount", "total_record_count"),
    ("deltaRecordCount", "delta_record_count"),
    ("changelogRecordCount", "changelog_record_count"), ("watermark", "watermark"),
    ("statistics", "statistics"), ("properties", "properties"), ("nextRowId", "next_row_id"),
    ("operation", "operation"),
)
_ATTR = dict(_JAVA_ORDER)
# pypaimon 2.1.0's dataclass order (pypaimon/snapshot/snapshot.py); it knows neither
# logOffsets nor operation, which we put after its fields.
_PYTHON_ORDER = ("version", "id", "schemaId", "baseManifestList", "deltaManifestList",
                 "totalRecordCount", "deltaRecordCount", "commitUser", "commitIdentifier",
                 "commitKind", "timeMillis", "baseManifestListSize", "deltaManifestListSize",
                 "changelogManifestList", "changelogManifestListSize", "indexManifest",
                 "changelogRecordCount", "watermark", "statistics", "nextRowId", "properties",
                 "uuid", "writerVersion", "logOffsets", "operation")
_REQUIRED = ("id", "schemaId", "baseManifestList", "deltaManifestList", "commitUser",
             "commitIdentifier", "commitKind", "timeMillis")
_INT_KEYS = ("version", "id", "schemaId", "baseManifestListSize", "deltaManifestListSize",
             "changelogManifestListSize", "commitIdentifier", "timeMillis", "totalRecordCount",
             "deltaRecordCount", "changelogRecordCount", "watermark", "nextRowId")
_STR_KEYS = ("uuid", "baseManifestList", "deltaManifestList", "changelogManifestList",
             "indexManifest", "commitUser", "writerVersion", "commitKind", "statistics",
             "operation")


@dataclass(frozen=True)
class Snapshot:
    """One snapshot file. ``version`` None means the file had no version (Paimon <= 0.2,
    read as version 1). ``explicit_nulls`` lists keys the file held as ``null`` (older Java
    wrote ``"changelogManifestList" : null``); they are written back the same way."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    total_record_count: int | None = None
    delta_record_count: int | None = None
    version: int | None = CURRENT_VERSION
    uuid: str | None = None
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    writer_version: str | None = None
    log_offsets: Mapping[str, int] | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: Mapping[str, str] | None = None
    next_row_id: int | None = None
    operation: str | None = None
    #: keys of the file we do not interpret, written back unchanged
    extra: Mapping[str, Any] = field(default_factory=dict)
    explicit_nulls: tuple[str, ...] = ()
    #: which writer's layout the file used; new snapshots are "java"
    layout: Layout = "java"

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", dict(self.extra))
        object.__setattr__(self, "explicit_nulls", tuple(self.explicit_nulls))
        for name in ("properties", "log_offsets"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, dict(value))

    @property
    def effective_version(self) -> int:
        return 1 if self.version is None else self.version

    def with_changes(self, **kwargs: Any) -> Snapshot:
        return replace(self, **kwargs)

    # ---- JSON ----------------------------------------------------------------------------

    def to_dict(self, layout: Layout | None = None) -> dict[str, Any]:
        """The JSON object in the key order of ``layout``; null fields omitted unless the
        file they came from spelled them out."""
        order = [k for k, _ in _JAVA_ORDER] if (layout or self.layout) == "java" \
            else list(_PYTHON_ORDER)
        out: dict[str, Any] = {}
        for key in order:
            value = getattr(self, _ATTR[key])
            if value is not None or key in self.explicit_nulls:
                out[key] = value
        out.update(self.extra)
        return out

    def to_json(self, layout: Layout | None = None) -> str:
        """The file's text, in the layout it was read in (``layout`` overrides)."""
        layout = layout or self.layout
        data = self.to_dict(layout)
        if layout == "python":
            return json.dumps(data, indent=2, ensure_ascii=False)
        return jackson_pretty(data)

    @staticmethod
    def from_json(text: str | bytes, *, path: str = "<snapshot>") -> Snapshot:
        """Parse a snapshot file. CorruptFileError for anything that is not a snapshot;
        UnsupportedVersionError for a ``version`` other than 1 to 3."""
        data, layout = load_object(text, path=path, what="a snapshot file")
        return Snapshot.from_dict(data, path=path, layout=layout)

    @staticmethod
    def from_dict(data: Mapping[str, Any], *, path: str = "<snapshot>",
                  layout: Layout = "java") -> Snapshot:
        version = data.get("version")
        if version is not None and (not _is_int(version) or not 1 <= version <= CURRENT_VERSION):
            raise UnsupportedVersionError(
                path, f"snapshot format version {version!r} is not supported "
                f"(schemalab reads versions 1 to {CURRENT_VERSION})")
        for key in _REQUIRED:
            if data.get(key) is None:
                raise CorruptFileError(path, f"missing required key {key!r}")
        for key in _INT_KEYS:
            if data.get(key) is not None and not _is_int(data[key]):
                raise CorruptFileError(path, f"{key!r} must be an integer, not {data[key]!r}")
        for key in _STR_KEYS:
            if data.get(key) is not None and not isinstance(data[key], str):
                raise CorruptFileError(path, f"{key!r} must be a string, not {data[key]!r}")
        if data["id"] < 1:
            raise CorruptFileError(path, f"snapshot id must be at least 1, not {data['id']}")
        props = data.get("properties")
        if props is not None and not (isinstance(props, dict)
                                      and all(isinstance(v, str) for v in props.values())):
            raise CorruptFileError(path, "'properties' must be an object of strings")
        offsets = data.get("logOffsets")
        if offsets is not None and not (isinstance(offsets, dict)
                                        and all(_is_int(v) for v in offsets.values())):
            raise CorruptFileError(path, "'logOffsets' must be an object of integers")
        kwargs: dict[str, Any] = {attr: data.get(key) for key, attr in _JAVA_ORDER}
        return Snapshot(
            **kwargs,
            extra={k: v for k, v in data.items() if k not in _ATTR},
            explicit_nulls=tuple(k for k, v in data.items() if v is None and k in _ATTR),
            layout=layout,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------------------------
# The snapshot directory
# --------------------------------------------------------------------------------------------


class SnapshotManager:
    """Snapshot files of one table under ``<table_path>/snapshot``. ``table`` names the table
    in errors."""

    def __init__(self, table_path: str, table: str | None = None) -> None:
        self.table_path = table_path
        self.table = table or os.path.basename(os.path.normpath(table_path))
        self.directory = os.path.join(table_path, "snapshot")
        self._cache: dict[int, Snapshot] = {}

    def path(self, snapshot_id: int) -> str:
        return os.path.join(self.directory, f"{SNAPSHOT_PREFIX}{snapshot_id}")

    def list_ids(self) -> list[int]:
        return fileio.list_versions(self.directory, SNAPSHOT_PREFIX)

    def has_snapshots(self) -> bool:
        return self.latest_id() is not None

    def get(self, snapshot_id: int) -> Snapshot:
        """Snapshot ``snapshot_id``; snapshot files never change once written."""
        cached = self._cache.get(snapshot_id)
        if cached is not None:
            return cached
        path = self.path(snapshot_id)
        try:
            raw = fileio.read_bytes(path)
        except FileNotFoundError:
            raise SchemaLabError(f"Snapshot {snapshot_id} of table {self.table} does not exist "
                                 f"({path})", table=self.table,
                                 rule="snapshot-must-exist") from None
        return self._load(snapshot_id, raw)

    def get_all(self, snapshot_ids: list[int]) -> list[Snapshot]:
        """Snapshots ``snapshot_ids``, the files not yet read fetched together (concurrently on
        an object store, where each read is a request)."""
        fetched = fileio.prefetch([self.path(i) for i in snapshot_ids if i not in self._cache])
        for i in snapshot_ids:
            raw = fetched.get(self.path(i))
            if raw is not None and i not in self._cache:
                self._load(i, raw)
        return [self.get(i) for i in snapshot_ids]

    def _load(self, snapshot_id: int, raw: bytes) -> Snapshot:
        path = self.path(snapshot_id)
        snapshot = Snapshot.from_json(raw, path=path)
        if snapshot.id != snapshot_id:
            raise CorruptFileError(path, f"file holds snapshot id {snapshot.id}, expected "
                                   f"{snapshot_id}", table=self.table)
        self._cache[snapshot_id] = snapshot
        return snapshot

    def _read_hint(self, name: str) -> int | None:
        try:
            text = fileio.read_bytes(os.path.join(self.directory, name)).decode("utf-8")
            return int(text.strip())
        except (OSError, UnicodeDecodeError, ValueError):
            return None  # a missing or garbled hint is only a missed shortcut

    def latest_id(self) -> int | None:
        """The newest snapshot id, as Java's ``HintFileUtils.findLatest``: trust LATEST when
        the snapshot after it does not exist, otherwise list the directory. Unlike Java we
        also check that the hinted snapshot itself exists."""
        hint = self._read_hint(LATEST)
        if (hint is not None and hint > 0 and fileio.exists(self.path(hint))
                and not fileio.exists(self.path(hint + 1))):
            return hint
        ids = self.list_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> int | None:
        """The oldest snapshot id: EARLIEST when that snapshot exists, else a listing."""
        hint = self._read_hint(EARLIEST)
        if hint is not None and hint > 0 and fileio.exists(self.path(hint)):
            return hint
        ids = self.list_ids()
        return ids[0] if ids else None

    def latest(self) -> Snapshot | None:
        sid = self.latest_id()
        return None if sid is None else self.get(sid)

    def earliest(self) -> Snapshot | None:
        sid = self.earliest_id()
        return None if sid is None else self.get(sid)

    def earlier_or_equal_time_millis(self, millis: int) -> Snapshot | None:
        """The snapshot a read as of ``millis`` (epoch milliseconds) starts from, as Java's
        ``SnapshotManager.earlierOrEqualTimeMills``: None when the earliest snapshot is
        younger, else a binary search over the ids from the earliest to the latest (the
        last one committed before ``millis``, or one committed at exactly ``millis``). Only
        the snapshot files count: not tags, not expired snapshots."""
        latest = self.latest_id()
        first = None if latest is None else self.earliest()
        if latest is None or first is None or first.time_millis > millis:
            return None
        low, found = first.id, None
        while low <= latest:
            mid = low + (latest - low) // 2
            snap = self.get(mid)
            if snap.time_millis > millis:
                latest = mid - 1
            elif snap.time_millis < millis:
                low, found = mid + 1, snap
            else:
                return snap
        return found

    def commit(self, snapshot: Snapshot) -> bool:
        """Write ``snapshot-<id>`` if no such file exists; True if this call wrote it.

        Then LATEST is replaced with the id (just the digits, no newline, as Java's
        ``HintFileUtils.commitHint`` and pypaimon write it), and EARLIEST too when this is the
        table's first snapshot and there is no EARLIEST yet (Java writes EARLIEST only when
        expiring; readers fall back to listing either way). Hints are shortcuts: failing to
        write one warns but does not undo the commit.
        """
        if not fileio.write_new(self.path(snapshot.id), snapshot.to_json()):
            return False
        self._cache[snapshot.id] = snapshot
        try:
            fileio.write_replace(os.path.join(self.directory, LATEST), str(snapshot.id))
            earliest = os.path.join(self.directory, EARLIEST)
            if not fileio.exists(earliest) and self.list_ids()[0] == snapshot.id:
                fileio.write_replace(earliest, str(snapshot.id))
        except OSError as e:
            warnings.warn(f"snapshot {snapshot.id} of {self.table} committed, but a hint "
                          f"file could not be written: {e}", stacklevel=2)
        return True
