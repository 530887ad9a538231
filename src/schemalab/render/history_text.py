"""A table's history as plain text: ``print(t.history())`` and ``schemalab inspect``.

Each snapshot shows what its commit changed (files added and removed) and its live-file
count, not every file again, so the text grows with the number of snapshots, not with
snapshots × files. Filters narrow it: one field's life (by name, any name it ever had, or by
id), one snapshot (with its live files), or everything since a time.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError
from schemalab.history.names import close_names

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.history.model import TableHistory
    from schemalab.history.snapshots import FileNode
    from schemalab.history.versions import FieldLineage


@dataclass(frozen=True)
class HistoryFilter:
    """What to show of a history. ``field``: a name (any it ever had) or an id; ``snapshot``:
    one snapshot id; ``since``: epoch milliseconds (UTC)."""

    field: str | None = None
    snapshot: int | None = None
    since: int | None = None

    def fields(self, h: TableHistory) -> list[FieldLineage]:
        """The lineages ``field`` selects (all when it is None); an error naming the table and
        close names when it selects none."""
        if self.field is None:
            return list(h.lineage)
        key = self.field.strip()
        if key.isdigit():
            found = [lin for lin in h.lineage if lin.field_id == int(key)]
        else:
            found = [lin for lin in h.lineage
                     if any(f.full_name == key or f.name == key for _, f in lin.states)]
        if not found:
            names = sorted({f.full_name for lin in h.lineage for _, f in lin.states})
            hint = close_names(key, names)
            raise SchemaLabError(
                f"Table {h.name} never had a field {key!r}"
                + (f"; did you mean {hint}?" if hint else
                   f" (its fields are ids 0..{max((lin.field_id for lin in h.lineage), default=0)}"
                   f")"), table=h.name, column=key, rule="field-must-exist")
        return found


def parse_since(text: str) -> int:
    """``--since``: a date (``2024-05-01``), a date and time (``2024-05-01 12:30``, ``T``
    or a space, seconds optional) in UTC, or epoch milliseconds.

        >>> parse_since("2024-05-01"), parse_since("1714565400000")
        (1714521600000, 1714565400000)
    """
    t = text.strip()
    if re.fullmatch(r"\d{10,}", t):
        return int(t)
    try:
        when = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise SchemaLabError(
            f"--since {text!r} is not a time: give a date (2024-05-01), a date and time "
            "(2024-05-01 12:30, UTC) or epoch milliseconds", rule="since-time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def time_text(millis: int | None) -> str:
    if millis is None or millis <= 0:
        return "no time recorded"
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def rows_text(n: int | None) -> str:
    return "? rows" if n is None else f"{n:,} row{'' if n == 1 else 's'}"


def history_text(h: TableHistory, flt: HistoryFilter | None = None) -> str:
    """The history of ``h`` as text, narrowed by ``flt``."""
    flt = flt or HistoryFilter()
    lineages = flt.fields(h)
    field_ids = {lin.field_id for lin in lineages}
    out = [f"{h.name} ({h.format}) at {h.location}", "", "Schema versions:"]
    if h.partial:
        out[1:1] = [f"PARTIAL HISTORY: {h.partial}"]
    shown = 0
    for v in h.schemas:
        if flt.since is not None and (v.time_millis or 0) < flt.since:
            continue
        events = [ev for ev in v.events if flt.field is None or ev.field_id in field_ids]
        if flt.field is not None and not events:
            continue
        changes = "; ".join(ev.describe() for ev in events) or "(options only)"

        if v.id == h.schemas[0].id and flt.field is None:
            changes = f"created with {len(v.top_level)} columns"
        out.append(f"  schema {v.id}: {changes}  ({time_text(v.time_millis)})")
        if flt.field is None:
            out.append(f"      columns: {', '.join(f.name for f in v.top_level)}")
        shown += 1
    if not shown:
        out.append("  (none)")
    for v in h.other_versions:
        out.append(f"  {v.kind} {v.id}: {v.label}")
    out += ["", "Field lineage (by field id):"]
    for lin in lineages:
        flags = ""
        if lin.name_reused_from:
            flags += f"  [name reused from field {', '.join(map(str, lin.name_reused_from))}]"
        if lin.swapped_with:
            flags += f"  [swapped with field {', '.join(map(str, lin.swapped_with))}]"
        kinds = ", ".join(f"{ev.kind}@{ev.schema_id}" for ev in lin.events)
        out.append(f"  field {lin.field_id}: {' → '.join(lin.names)}  ({kinds}){flags}")
    out.extend(refs_lines(h))
    out.extend(warning_lines(h))
    out += ["", "Snapshots:"]
    out.extend(_snapshot_lines(h, flt))
    return "\n".join(out)


def refs_lines(h: TableHistory) -> list[str]:
    """The "Refs:" section: each branch and tag with its snapshot and the schema a read of
    it binds, each branch's fork from main, and the snapshots no branch reaches."""
    if not h.refs:
        return []
    out = ["", "Refs:"]
    for r in h.refs:
        retention = ", ".join(f"{k}={v}" for k, v in r.properties.items())
        fork = h.forks.get(r.name)
        out.append(f"  {r.kind} {r.name}: snapshot {r.snapshot_id}, reads in schema "
                   f"{r.schema_id}" + (f" ({retention})" if retention else "")
                   + (f"; {fork}" if fork is not None else ""))
    for sid, mark in h.marks.items():
        out.append(f"  snapshot {sid}: {mark}")
    return out


def warning_lines(h: TableHistory) -> list[str]:
    """The "Warnings:" section: what does not add up in the history (main's and each
    branch's), each with the snapshots it affects; nothing when all is well."""
    per = {"": h, **{n: b for n, b in h.branches.items() if n != "main"}}
    out: list[str] = []
    for name, b in per.items():
        for w in b.warnings():
            on = f"branch {name} " if name else ""
            ids = ", ".join(map(str, w.snapshot_ids))
            out.append(f"  {w.rule} ({on}snapshot{'s' if len(w.snapshot_ids) != 1 else ''} "
                       f"{ids}): {w.message}")
    return ["", "Warnings:", *out] if out else []


def _snapshot_lines(h: TableHistory, flt: HistoryFilter) -> list[str]:
    snaps = list(h.snapshots)
    if flt.snapshot is not None:
        snaps = [s for s in snaps if s.id == flt.snapshot]
        if not snaps:
            raise SchemaLabError(f"Table {h.name} has no snapshot {flt.snapshot}",
                                 table=h.name, rule="snapshot-must-exist")
    if flt.since is not None:
        snaps = [s for s in snaps if (s.time_millis or 0) >= flt.since]
    if not snaps:
        return ["  (none)"]
    out: list[str] = []
    changes = {c.snapshot_id: c for c in h.changes([s.id for s in snaps])}
    off_main = _off_main(h)
    warned = h.warning_marks()
    for s in snaps:
        c = changes[s.id]
        labels = [f"branch {n}" for n in off_main.get((s.id, s.time_millis), ())]
        labels += [f"tag {n}" for n in h.tags_at(s.id)]
        labels += [h.marks[s.id]] if s.id in h.marks else []
        labels += [warned[s.id]] if s.id in warned else []
        more = f" [{', '.join(labels)}]" if labels else ""
        op = s.summary.get("operation")
        kind = s.kind if op is None else f"{s.kind}, operation {op}"
        out.append(f"  snapshot {s.id} ({kind}, schema {s.schema_id}, "
                   f"{rows_text(s.record_count)}) {time_text(s.time_millis)}: "
                   f"+{len(c.added)} −{len(c.removed)} files, {c.live_files} live{more}")
        out.extend(f"    + {file_text(f)}" for f in c.added)
        out.extend(f"    − {file_text(f)}" for f in c.removed)
        if flt.snapshot is not None:
            if s.record_count_text:
                out.append(f"    rows counted as {s.record_count_text}")
            live = h.tree(s.id).live_files
            out.append(f"    live files ({len(live)}):")
            out.extend(f"      {file_text(f)}" for f in live)
    return out


def _off_main(h: TableHistory) -> dict[tuple[int, int | None], list[str]]:
    """(snapshot id, commit time) → the branches other than main that hold it, for snapshots
    main does not (an Iceberg table's one snapshot list holds every branch's; a Paimon
    branch numbers its own snapshots, so an id alone may name another snapshot on main)."""
    if "main" not in h.branches:
        return {}
    on_main = {(s.id, s.time_millis) for s in h.branches["main"].snapshots}
    out: dict[tuple[int, int | None], list[str]] = {}
    for name, b in h.branches.items():
        for s in b.snapshots:
            if name != "main" and (s.id, s.time_millis) not in on_main:
                out.setdefault((s.id, s.time_millis), []).append(name)
    return out


def file_text(f: FileNode) -> str:
    part = ",".join(f"{k}={v}" for k, v in f.partition.items())
    where = f" [{part}]" if part else ""
    bucket = "" if f.bucket is None else f" bucket {f.bucket}"
    keys = ""
    if f.min_key is not None and f.max_key is not None:  # its place in the LSM tree
        keys = (f" level {f.level} keys {_key_text(f.min_key)}..{_key_text(f.max_key)} seq "
                f"{f.min_sequence_number}..{f.max_sequence_number}")
    content = f.kind.split(" ", 1)[1] if " " in f.kind else ""  # delete/index files
    what = f"{content}: " if content else ""
    rows = rows_text(f.row_count)
    if content == "deletion vectors":
        rows = f"for {f.row_count} data file{'s' if f.row_count != 1 else ''}"
    elif content:
        rows = f"{f.row_count} delete row{'s' if f.row_count != 1 else ''}"
    extra = f" (deletes rows of {f.target})" if f.target else ""
    if f.deleted_rows:
        extra += f", {f.deleted_rows} deleted by a deletion vector in {f.deleted_by}"
    return f"{what}{f.path}{where}{bucket} schema {f.schema_id} {rows}{keys}{extra}"


def _key_text(key: Sequence[Any]) -> str:
    return "(" + ", ".join(map(str, key)) + ")"
