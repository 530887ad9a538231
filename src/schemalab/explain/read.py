"""Why an evolved read returns what it does, column by column, for each group of files.

    >>> t.explain_read()                                       # doctest: +SKIP
    files written under schema 1 (2 files, 10 rows; read in one scan by field id)
      product  by id from column `product` (INT → BIGINT cast)
      note     NULL: field 7 `note` did not exist when these files were written (schema 1)
      (file column `score` ignored: field 5 was dropped in schema 3)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab import forms
from schemalab.engine.blob_join import BLOB_TEXT, blob_lines
from schemalab.engine.plan import ColumnRead, DataFile, IgnoredDelete, ReadPlan
from schemalab.engine.row_merge import merge_lines
from schemalab.errors import NotFoundError
from schemalab.explain.casts import FileRange, FileStats, cast_text
from schemalab.history.model import TableHistory
from schemalab.types.casts import CastMode
from schemalab.types.model import TypeRoot

#: how Iceberg's cast rules are named in explanations
ICEBERG_RULES = "Iceberg type promotion"

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.explain.key import KeyExplanation


@dataclass(frozen=True)
class ColumnExplanation:
    column: str
    field_id: int
    kind: str
    text: str


@dataclass(frozen=True)
class GroupExplanation:
    schema_id: int
    files: int
    rows: int
    #: read together with other schema versions' files in one Spark scan by field id
    by_id: bool
    columns: tuple[ColumnExplanation, ...]
    ignored: tuple[str, ...]

    @property
    def title(self) -> str:
        how = ("read in one scan by Parquet field id" if self.by_id
               else "read by the file's column names, then evolved")
        return (f"files written under schema {self.schema_id} ({self.files} file"
                f"{'s' if self.files != 1 else ''}, {self.rows} row"
                f"{'s' if self.rows != 1 else ''}; {how})")


@dataclass(frozen=True)
class DeleteExplanation:
    """Rows a delete file removes from one data file, or a live delete file that removes
    nothing of the read (``rows`` 0), or a data file the read leaves out."""

    #: the data file's name, None for a delete that applies to no file of the read
    data_file: str | None
    #: the delete file's name (None for a file left out)
    source: str | None
    kind: str
    #: how many rows it removes; None when decided row by row (equality deletes)
    rows: int | None
    text: str


@dataclass(frozen=True)
class ReadExplanation:
    table: str
    snapshot_id: int | None
    schema_id: int
    cast_mode: str
    groups: tuple[GroupExplanation, ...]
    #: primary-key tables: how the evolved rows of one key are merged
    merge: str | None = None
    #: ``explain_read(key=...)``: every version of that key and which one won
    key: KeyExplanation | None = None
    #: why rows are absent (deleted, or in files the read leaves out), or present despite
    #: a delete file
    deletes: tuple[DeleteExplanation, ...] = ()
    #: a read of a branch or tag: which schema binds and why
    binding: str | None = None

    @property
    def mode_text(self) -> str:
        """``cast.mode = explicit`` for a Paimon table; Iceberg's rule as it is."""
        if self.cast_mode in ("implicit", "explicit", "explicit-null"):
            return f"cast.mode = {self.cast_mode}"
        if self.cast_mode == CastMode.PAIMON.value:
            return "no cast.mode: Java Paimon's casts"
        return self.cast_mode

    def column(self, schema_id: int, column: str) -> ColumnExplanation:
        for g in self.groups:
            if g.schema_id == schema_id:
                for c in g.columns:
                    if c.column == column:
                        return c
        raise NotFoundError(f"Table {self.table}: no column {column!r} for files of schema "
                            f"{schema_id}", table=self.table, column=column,
                            rule="column-must-exist")

    def text(self) -> str:
        what = (f"no data yet (no snapshot); schema {self.schema_id}" if self.snapshot_id is None
                else f"read of snapshot {self.snapshot_id} in schema {self.schema_id}")
        head = f"{self.table}: {what} ({self.mode_text})"
        lines = [head] if self.binding is None else [f"{head}; {self.binding}"]
        if self.merge:
            lines.append(self.merge)
        if self.key is not None:
            lines.extend(self.key.text().splitlines())
        if self.deletes:
            lines.append("deletes")
            lines.extend(f"  {d.text}" for d in self.deletes)
        if not self.groups:
            return "\n".join(lines) + "\n  (no data files)"
        for g in self.groups:
            lines.append(g.title)
            width = max((len(c.column) for c in g.columns), default=0)
            lines.extend(f"  {c.column.ljust(width)}  {c.text}" for c in g.columns)
            lines.extend(f"  ({i})" for i in g.ignored)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return forms.html("read-explanation", self)


def column_text(c: ColumnRead, schema_id: int, dropped_in: int | None = None,
                read_schema_id: int | None = None, mode: CastMode | None = None,
                ranges: Sequence[FileRange] = ()) -> str:
    """``mode``: the Paimon table's cast mode (None for Iceberg's promotions), ``ranges``:
    the files' (min, max) of the source column, to warn about values a cast changes.
    ``dropped_in``: the schema that dropped the target field, if any; ``read_schema_id``:
    the schema the read uses. A read in an *older* schema than the files' (time travel
    through ``schema=``) can ask for a field those files lack because it was dropped before
    they were written ("did not exist" would suggest it never had), and sees renames
    backwards (the file's name is the newer one, so "renamed since" would be wrong)."""
    t, s = c.target, c.source
    if c.constant is not None:
        value = "NULL" if c.constant.value is None else repr(c.constant.value)
        if c.constant.origin == "partition":
            return (f"{value}: the file's identity-partition value (field {t.id} `{t.name}` "
                    "is not stored in these files)")
        return (f"{value}: the initial default of field {t.id} `{t.name}`, which did not "
                f"exist when these files were written (schema {schema_id})")
    if s is None:
        if t.type.root is TypeRoot.NULL:
            return f"NULL: field {t.id} `{t.name}` has Iceberg's unknown type (always NULL)"
        if dropped_in is not None and dropped_in <= schema_id:
            return (f"NULL: field {t.id} `{t.name}` was dropped in schema {dropped_in}, "
                    f"before these files were written (schema {schema_id})")
        return (f"NULL: field {t.id} `{t.name}` did not exist when these files were written "
                f"(schema {schema_id})")
    src = f"`{s.name}`"
    if c.kind == "same":
        return f"by id from column {src}"
    if c.kind == "renamed":
        if read_schema_id is not None and read_schema_id < schema_id:
            return f"by id from column {src} (called `{t.name}` in schema {read_schema_id})"
        return f"by id from column {src} (renamed to `{t.name}` since)"
    if c.kind == "widened":
        return f"by id from column {src} ({s.type.sql()} → {t.type.sql()} cast, widened on read)"
    if c.kind == "cast" and mode is not None:
        return f"by id from column {src} ({cast_text(s.type, t.type, mode, ranges)})"
    if c.kind == "cast":
        return f"by id from column {src} ({s.type.sql()} → {t.type.sql()} {c.cast} cast)"
    defaults = ""
    if c.defaults:
        defaults = "; nested " + ", ".join(f"field {fid} reads its default {d.value!r}"
                                           for fid, d in c.defaults)
    return (f"by id from column {src}, its nested fields matched by id "
            f"({s.type.sql()} → {t.type.sql()}{defaults})")


#: a column a merged file of a data-evolution table does not supply
MERGED_ELSEWHERE = ("not from these files: merged by row id, these rows take it from another "
                    "file of their row-id range (see the data-evolution lines)")


def explain(plan: ReadPlan, history: TableHistory | None = None,
            stats: FileStats | None = None) -> ReadExplanation:
    """``stats``: the manifest's min/max per file (Paimon), for the warnings of cast columns."""
    dropped_in: dict[int, int] = {}
    added_in: dict[int, int] = {}
    if history is not None:
        for lin in history.lineage:
            for ev in lin.events:
                if ev.kind == "dropped":
                    dropped_in[lin.field_id] = ev.schema_id
                elif ev.kind == "added":
                    added_in[lin.field_id] = ev.schema_id
    target_id = plan.target.id

    def ignored_text(fid: int) -> str:
        # a file column the read does not use: dropped since, or (reading an older schema)
        # added after the schema read
        if fid in dropped_in and dropped_in[fid] <= target_id:
            return f"was dropped in schema {dropped_in[fid]}"
        if fid in added_in and added_in[fid] > target_id:
            return f"was added in schema {added_in[fid]}, after the schema read ({target_id})"
        if fid in dropped_in:
            return f"was dropped in schema {dropped_in[fid]}"
        return "is not in the schema read"

    mode = None if plan.format == "iceberg" else plan.cast_mode

    def ranges_of(files: list[DataFile], c: ColumnRead) -> list[FileRange]:
        if stats is None or c.kind != "cast" or c.source is None:
            return []
        fid = c.source.id
        return [stats.range(os.path.basename(f.path), fid) for f in files]

    groups = []
    blob_ids = {f.field_id for f in plan.blobs}
    for g in plan.groups:
        for sid, cols in sorted(g.columns_by_schema.items()):
            files = [f for f in g.files if f.schema_id == sid]
            ignored = tuple(f"file column `{f.name}` ignored: field {f.id} {ignored_text(f.id)}"
                            for s, f in g.ignored if s == sid)
            merged = plan.row_merge is not None and bool(files) \
                and all(f.path in plan.row_merge.merged for f in files)
            groups.append(GroupExplanation(
                sid, len(files), sum(f.row_count for f in files), g.by_id,
                tuple(ColumnExplanation(c.target.name, c.target.id, c.kind,
                                        BLOB_TEXT if c.target.id in blob_ids else
                                        MERGED_ELSEWHERE if merged and c.kind == "null" else
                                        column_text(c, sid, dropped_in.get(c.target.id),
                                                    target_id, mode,
                                                    ranges_of(files, c)))
                      for c in cols),
                ignored))
    groups.sort(key=lambda x: x.schema_id)
    rules = ICEBERG_RULES if plan.format == "iceberg" else plan.cast_mode.value
    return ReadExplanation(plan.table, plan.snapshot_id, plan.target.id, rules,
                           tuple(groups), merge=merge_text(plan),
                           deletes=tuple(delete_explanations(plan)), binding=plan.binding)


def merge_text(plan: ReadPlan) -> str | None:
    """How a primary-key table's rows are merged, how a data-evolution table's files are
    merged by row id, or None for an append table."""
    pk = plan.target.primary_keys
    if plan.blobs:
        return "\n".join([*merge_lines(plan), *blob_lines(plan)])
    if plan.row_merge is not None and plan.row_merge.groups:
        return "\n".join(merge_lines(plan))
    if plan.merge_engine is None:
        return None
    if plan.deletion_vectors:
        return (f"primary key ({', '.join(pk)}), deletion-vector mode: the files above level 0 "
                "hold one live row per key once their deletion vectors are applied, so they "
                "are read without a merge (and without -U/-D rows); level-0 files are not "
                "read until compaction moves them up")
    return (f"primary key ({', '.join(pk)}): each file group is evolved first, then the rows "
            "of a key are merged by Paimon's deduplicate engine: the highest _SEQUENCE_NUMBER "
            "wins, and a key whose winner is a delete (-D/-U) is gone")


def _name(path: str | None) -> str:
    return "" if path is None else os.path.basename(path.rstrip("/"))


def _seqs(delete_seq: int | None, data_seq: int | None, op: str) -> str:
    if delete_seq is None or data_seq is None:
        return ""
    return f" (sequence {delete_seq} {op} data sequence {data_seq})"


def delete_explanations(plan: ReadPlan) -> list[DeleteExplanation]:
    """Which rows each delete removes, which delete files remove nothing and why, and which
    files the read leaves out. Deletes by position are counted by decoding them."""
    out = []
    for f in plan.files:
        name = _name(f.path)
        for d in f.deletes:
            n = len(d.load())
            where = "deletion vector in" if d.kind == "deletion vector" else d.kind
            out.append(DeleteExplanation(
                name, _name(d.source), d.kind, n,
                f"{n} row{'s' if n != 1 else ''} of {name} removed by {where} "
                f"{_name(d.source)}{_seqs(d.sequence_number, f.data_sequence_number, '≥')}"))
    names = {f.id: f.name for f in (*plan.target.fields, *plan.extra)}
    for eq in plan.equality_deletes:
        cols = ", ".join(names.get(i, f"field {i}") for i in eq.field_ids)
        for f in plan.files:
            if eq.applies_to(f):
                out.append(DeleteExplanation(
                    _name(f.path), _name(eq.source), "equality delete file", None,
                    f"rows of {_name(f.path)} whose ({cols}) equal one of the {eq.row_count} "
                    f"rows of equality delete file {_name(eq.source)} removed"
                    f"{_seqs(eq.sequence_number, f.data_sequence_number, '>')}"))
        for f in plan.files:
            if (not eq.applies_to(f) and f.data_sequence_number is not None
                    and f.data_sequence_number >= eq.sequence_number
                    and (eq.scope is None or eq.scope == f.delete_scope)):
                out.append(DeleteExplanation(
                    _name(f.path), _name(eq.source), "equality delete file", 0,
                    f"rows of {_name(f.path)} are kept whatever their ({cols}): written after "
                    f"equality delete file {_name(eq.source)}"
                    f"{_seqs(eq.sequence_number, f.data_sequence_number, '≤')}"))
    for ig in plan.ignored_deletes:
        out.append(DeleteExplanation(ig.data_file and _name(ig.data_file), _name(ig.source),
                                     ig.kind, 0, _ignored_text(ig)))
    for f in plan.skipped:
        out.append(DeleteExplanation(
            _name(f.path), None, "not read", f.row_count,
            f"{f.row_count} row{'s' if f.row_count != 1 else ''} of {_name(f.path)} not read: "
            "a level-0 file of a deletion-vector table is visible once compaction moves it "
            "above level 0"))
    return out


def _ignored_text(ig: IgnoredDelete) -> str:
    what = f"{ig.kind} {_name(ig.source)}"
    target = _name(ig.data_file)
    if ig.reason == "not-live":
        return (f"{what} removes nothing: it names data file {target}, which is not live in "
                "this snapshot (rewritten or removed since)")
    if ig.reason == "newer-data":
        return (f"{what} removes nothing of {target}: the data file is newer"
                f"{_seqs(ig.sequence_number, ig.data_sequence_number, '<')}")
    if ig.reason == "deletion-vector":
        return (f"{what} is not applied to {target}: a deletion vector for that file "
                "supersedes it")
    return (f"{what} removes nothing: no data file read is older than it (sequence "
            f"{ig.sequence_number})")
