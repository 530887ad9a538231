"""Paimon's tags and branches on disk, as Java Paimon 2.0 lays them out.

    <table>/tag/tag-<name>                      a snapshot's JSON (+ tagCreateTime, tagTimeRetained)
    <table>/branch/branch-<name>/schema/        the branch's own schema files
    <table>/branch/branch-<name>/snapshot/      its own snapshots (and LATEST, EARLIEST)
    <table>/branch/branch-<name>/tag/           its own tags

A branch shares the table's ``manifest/``, ``index/`` and data directories (Java's
``FileStorePathFactory`` roots them at the table path; only ``SnapshotManager``,
``SchemaManager`` and ``TagManager`` take the branch). A tag file is Java's ``Tag``: the
snapshot's fields in ``Snapshot``'s order, then ``tagCreateTime`` (a LocalDateTime as
Jackson's JavaTimeModule writes it, ``[ y, m, d, h, min, s, nanos ]``) and
``tagTimeRetained`` (a Duration in seconds, ``86400.000000000``) — both only when the tag has
a retention; a tag without one is the snapshot's JSON alone (``TagManager.createOrReplaceTag``).

Names read from disk are checked with :func:`schemalab.refs.check_ref_name` before any path
is built from them; one that fails is listed escaped (:func:`shown_name`) and never read.

    >>> tag_suffix(dt.datetime(2026, 1, 2, 3, 4, 0), 86400)
    ',\\n  "tagCreateTime" : [ 2026, 1, 2, 3, 4 ],\\n  "tagTimeRetained" : 86400.000000000\\n}'
    >>> shown_name("a\\nb$"), java_duration(5400.5)
    ("'a\\\\nb$'", 'PT1H30M0.5S')
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from typing import TYPE_CHECKING, Any, Protocol

from schemalab import fileio
from schemalab.errors import CorruptFileError, InvalidIdentifierError
from schemalab.format import SchemaChoice, unknown_ref
from schemalab.paimon.snapshot import Snapshot
from schemalab.refs import MAIN, Ref, RefKind, check_ref_name

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.paimon.schema_manager import SchemaManager
    from schemalab.paimon.snapshot import SnapshotManager
    from schemalab.schema.table_schema import TableSchema

TAG_PREFIX = "tag-"
BRANCH_PREFIX = "branch-"
TAG_DIR = "tag"
BRANCH_DIR = "branch"
#: Paimon's table-name suffix for a branch: ``t$branch_dev``
BRANCH_SUFFIX = "$branch_"


def branch_path(table_path: str, branch: str) -> str:
    """Where branch ``branch``'s schema/, snapshot/ and tag/ live (``main``: the table)."""
    if branch == MAIN:
        return table_path
    return os.path.join(table_path, BRANCH_DIR, BRANCH_PREFIX + check_ref_name(branch, "branch"))


def tag_path(meta_path: str, tag: str) -> str:
    return os.path.join(meta_path, TAG_DIR, TAG_PREFIX + check_ref_name(tag, "tag"))


def shown_name(name: str) -> str:
    """A name read from disk that is no valid ref name, escaped for listing (quoted, control
    characters and non-printables as escapes, cut at 80 characters)."""
    text = name if len(name) <= 80 else name[:77] + "..."
    return "'" + text.encode("unicode_escape").decode("ascii").replace("'", "\\'") + "'"


@dataclasses.dataclass(frozen=True)
class Listed:
    """The names a tag/ or branch/ directory holds: ``valid`` ones (sorted) and ``refused``
    ones (escaped, with why), which are never opened."""

    valid: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]


def _list(directory: str, prefix: str, kind: RefKind, *, dirs: bool) -> Listed:
    valid, refused = [], []
    for entry in sorted(fileio.list_names(directory)):
        if not entry.startswith(prefix):
            continue
        name = entry[len(prefix):]
        try:
            check_ref_name(name, kind)
        except InvalidIdentifierError as e:
            refused.append((shown_name(name), e.message))
            continue
        if dirs and not fileio.is_dir(os.path.join(directory, entry)):
            continue
        valid.append(name)
    return Listed(tuple(valid), tuple(refused))


def list_tags(meta_path: str) -> Listed:
    """The tags of the table or branch whose metadata lives at ``meta_path``."""
    return _list(os.path.join(meta_path, TAG_DIR), TAG_PREFIX, "tag", dirs=False)


def list_branches(table_path: str) -> Listed:
    """The branches of the table at ``table_path`` (directories ``branch/branch-<name>``)."""
    return _list(os.path.join(table_path, BRANCH_DIR), BRANCH_PREFIX, "branch", dirs=True)


@dataclasses.dataclass(frozen=True)
class Tag:
    """One tag file: the snapshot it keeps, and what Java's ``Tag`` adds to it."""

    name: str
    snapshot: Snapshot
    create_time: dt.datetime | None = None
    time_retained: float | None = None  # seconds

    def properties(self) -> dict[str, Any]:
        """What Paimon stores with the tag, under its own keys (absent ones left out)."""
        out: dict[str, Any] = {}
        if self.create_time is not None:
            out["tagCreateTime"] = self.create_time.isoformat()
        if self.time_retained is not None:
            out["tagTimeRetained"] = java_duration(self.time_retained)
        return out


def read_tag(meta_path: str, name: str, *, table: str | None = None) -> Tag:
    """Tag ``name`` (checked first); FileNotFoundError when there is none."""
    path = tag_path(meta_path, name)
    raw = fileio.read_bytes(path)
    snap = Snapshot.from_json(raw, path=path)
    extra = dict(snap.extra)
    try:
        created = local_date_time(extra.pop("tagCreateTime", None))
        retained_raw = extra.pop("tagTimeRetained", None)
        retained = None if retained_raw is None else float(retained_raw)
    except (TypeError, ValueError) as e:
        raise CorruptFileError(path, str(e), table=table) from None
    return Tag(name, dataclasses.replace(snap, extra=extra), created, retained)


def local_date_time(value: Any) -> dt.datetime | None:
    """``tagCreateTime``: Jackson writes a LocalDateTime as [y, m, d, h, min(, s(, nanos))]
    (or an ISO text)."""
    if value is None:
        return None
    if isinstance(value, list) and 5 <= len(value) <= 7 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        y, mo, d, h, mi, sec, nanos = [*value, 0, 0][:7]
        return dt.datetime(y, mo, d, h, mi, sec, nanos // 1000)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    raise ValueError(f"tagCreateTime {value!r} is not a LocalDateTime")


def java_duration(value: Any) -> str | None:
    """``tagTimeRetained`` (seconds, as Jackson writes a Duration) as Java's
    ``Duration.toString()``: ``PT1H``, ``PT30M``, ``PT1.5S``."""
    if value is None:
        return None
    if isinstance(value, str) and value.startswith("P"):
        return value
    seconds = float(value)
    if seconds == 0:
        return "PT0S"
    whole = int(seconds)
    hours, rest = divmod(abs(whole), 3600)
    minutes, secs = divmod(rest, 60)
    frac = abs(seconds) - abs(whole)
    sign = "-" if seconds < 0 else ""
    out = "PT"
    if hours:
        out += f"{sign}{hours}H"
    if minutes:
        out += f"{sign}{minutes}M"
    if secs or frac:
        text = f"{secs + frac:.9f}".rstrip("0").rstrip(".")
        out += f"{sign}{text}S"
    return out


def tag_suffix(created: dt.datetime, retained_seconds: int) -> str:
    """The end of a tag file with a retention: Jackson's LocalDateTimeSerializer (seconds only
    when seconds or nanos are set, nanos only when set) and DurationSerializer (seconds with
    nine decimals)."""
    parts = [created.year, created.month, created.day, created.hour, created.minute]
    nanos = created.microsecond * 1000
    if created.second or nanos:
        parts.append(created.second)
    if nanos:
        parts.append(nanos)
    stamp = "[ " + ", ".join(str(p) for p in parts) + " ]"
    return (f',\n  "tagCreateTime" : {stamp},\n'
            f'  "tagTimeRetained" : {retained_seconds}.000000000\n}}')


def tag_json(snapshot: Snapshot, retained_seconds: int | None,
             created: dt.datetime | None = None) -> str:
    """A tag file's text, as Java's TagManager writes it: the snapshot re-serialized by
    Java's Snapshot (its own fields, in Java's order, nulls left out), and with a retention
    the create time and the retention after them."""
    plain = dataclasses.replace(snapshot, extra={}, explicit_nulls=(), layout="java",
                                log_offsets=None)
    text = plain.to_json("java")
    if retained_seconds is None:
        return text
    assert text.endswith("\n}")
    return text[:-2] + tag_suffix(created or dt.datetime.now(), retained_seconds)


def parse_retention(text: str, *, table: str) -> int:
    """``time_retained`` of ``create_tag`` (Paimon's TimeUtils.parseDuration: a number and a
    unit, ``1 d``, ``12h``, ``30 min``, ``5s``, ``100 ms``) in whole seconds."""
    units = {"d": 86400, "day": 86400, "days": 86400, "h": 3600, "hour": 3600,
             "hours": 3600, "min": 60, "m": 60, "minute": 60, "minutes": 60, "s": 1,
             "sec": 1, "secs": 1, "second": 1, "seconds": 1, "ms": 0.001, "milli": 0.001,
             "millis": 0.001, "millisecond": 0.001, "milliseconds": 0.001}
    raw = str(text).strip().lower()
    digits = len(raw) - len(raw.lstrip("0123456789"))
    number, unit = raw[:digits], raw[digits:].strip() or "ms"
    if not number or unit not in units:
        raise InvalidIdentifierError(
            f"time_retained {text!r} for table {table} is not a duration (a number and a "
            "unit: '1 d', '12 h', '30 min', '10 s')", table=table, rule="procedure-arguments")
    return int(int(number) * units[unit])



# ---- what a table's refs are, and what reading one reads ------------------------------------


class Table(Protocol):
    """What these functions ask of a Paimon table object (:class:`schemalab.table.Table`,
    which imports this module)."""

    name: str
    path: str
    meta_path: str
    branch_name: str
    schema_manager: SchemaManager
    snapshot_manager: SnapshotManager

    @property
    def latest_snapshot(self) -> Snapshot | None: ...

    @property
    def schema(self) -> TableSchema: ...

    def branch(self, name: str) -> Table: ...


def tags_of(t: Table) -> list[Tag]:
    """Every readable tag of table (or branch) ``t``, by name."""
    out = []
    for name in list_tags(t.meta_path).valid:
        try:
            out.append(read_tag(t.meta_path, name, table=t.name))
        except FileNotFoundError:
            continue  # deleted while we listed
    return out


def table_refs(t: Table) -> list[Ref]:
    """``t.refs``: the branch ``t`` reads (``main`` first on the table itself), its other
    branches, its tags; names on disk that are no valid ref name are listed escaped with
    why (``properties["refused"]``) and never read."""
    head = t.latest_snapshot
    schema = t.schema_manager.latest()
    out = [Ref(t.branch_name, "branch", None if head is None else head.id,
               None if schema is None else schema.id)]
    if t.branch_name == MAIN:
        branches = list_branches(t.path)
        for name in branches.valid:
            b = t.branch(name)
            bhead, bschema = b.latest_snapshot, b.schema_manager.latest()
            first = b.snapshot_manager.earliest_id()
            out.append(Ref(name, "branch", None if bhead is None else bhead.id,
                           None if bschema is None else bschema.id,
                           {} if first is None else {"earliest_snapshot_id": first}))
        out += [Ref(n, "branch", None, None, {"refused": why}) for n, why in branches.refused]
    for tag in tags_of(t):
        out.append(Ref(tag.name, "tag", tag.snapshot.id, tag.snapshot.schema_id,
                       tag.properties()))
    out += [Ref(n, "tag", None, None, {"refused": why})
            for n, why in list_tags(t.meta_path).refused]
    return out


#: (the branch to read instead of ``t``, or None; the snapshot; the schema that binds; why)
Resolved = tuple[str | None, Snapshot | None, SchemaChoice, str]


def resolve_ref(t: Table, ref: str) -> Resolved:
    """What ``t.read(ref=...)`` reads, binding as Paimon does: a tag's snapshot in that
    snapshot's schema; a branch head in the branch's current schema. A name that is both a
    tag and a branch reads the tag (Java's time travel looks for a tag first)."""
    if not isinstance(ref, str):
        raise unknown_ref(t.name, repr(ref), table_refs(t))
    if ref == t.branch_name:
        return None, t.latest_snapshot, "current", _branch_binds(t, ref)
    try:
        check_ref_name(ref, "tag", table=t.name)
    except InvalidIdentifierError:
        raise unknown_ref(t.name, ref, table_refs(t)) from None
    try:
        tag = read_tag(t.meta_path, ref, table=t.name)
    except FileNotFoundError:
        tag = None
    if tag is not None:
        snap = tag.snapshot
        return (None, snap, "snapshot", f"tag {ref}: the schema of its snapshot {snap.id} "
                f"(schema {snap.schema_id}) binds, as Paimon reads a tag")
    b = t.branch(ref)  # refuses a name that is no branch, listing the refs
    return ref, b.latest_snapshot, "current", _branch_binds(b, ref)


def _branch_binds(b: Table, ref: str) -> str:
    if ref == MAIN:
        return "branch main: its current schema binds"
    return (f"branch {ref}: its current schema binds (schema {b.schema.id}, the branch's own), "
            "as Paimon reads a branch head")


def tagged_snapshot(t: Table, snapshot_id: int) -> Snapshot | None:
    """The snapshot ``snapshot_id`` as a tag keeps it (after it expired from snapshot/)."""
    for tag in tags_of(t):
        if tag.snapshot.id == snapshot_id:
            return tag.snapshot
    return None


def branch_exists(table_path: str, name: str) -> bool:
    return fileio.is_dir(branch_path(table_path, name)) and bool(
        fileio.list_names(os.path.join(branch_path(table_path, name), "schema")))


def branch_of(path: str) -> tuple[str, str] | None:
    """(table path, branch name) when ``path`` is a branch directory
    ``<table>/branch/branch-<name>`` of a table, else None."""
    parent, base = os.path.split(path.rstrip("/"))
    table, d = os.path.split(parent)
    if d != BRANCH_DIR or not base.startswith(BRANCH_PREFIX):
        return None
    if not fileio.list_names(os.path.join(table, "schema")):
        return None
    return table, base[len(BRANCH_PREFIX):]
