"""Why a column (of some rows) reads as it does: ``t.why("c", where="id = 7")``.

The answer comes from the same read plan as :meth:`explain_read` and from running it: the
rows the question covers are counted per group of files (by the schema the files were written
under), with their NULLs and most common values, next to how the column is read from those
files and what the field's history says (renames, a drop, a name used by another field
before). A NULL is explained as the plan makes it: a field the files do not have, a value
that does not convert under ``cast.mode = explicit-null``, or a NULL the file itself holds.

    >>> print(t.why("c", where="a = 'a1'"))                  # doctest: +SKIP
    default.T: why `c` reads as it does (snapshot 2, schema 2, ...; rows where a = 'a1')
    field 3 `c`: added in schema 2.
    The name `c` belonged to field 2 before (added in schema 0, dropped in schema 1); ...
    1 row, 1 NULL
      files written under schema 0 (1 file): 1 row, 1 NULL; values NULL ×1
        NULL: field 3 `c` did not exist when these files were written (schema 0)
        these files' own `c` column is field 2, which was dropped in schema 1: ...
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import forms
from schemalab.engine.blob_join import blob_lines, is_blob
from schemalab.engine.plan import ColumnRead, ReadPlan
from schemalab.engine.row_merge import merge_lines
from schemalab.errors import SchemaLabError
from schemalab.explain.read import ColumnExplanation, explain
from schemalab.explain.values import value_text
from schemalab.history.model import TableHistory
from schemalab.history.names import unknown_name_hint
from schemalab.history.versions import FieldLineage
from schemalab.types.model import AtomicType, DataField, RowType

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: the most common values shown per group of files
TOP_VALUES = 3
_VALUE = "__sl_why_value"
_SCHEMA = "__sl_why_schema"


@dataclass(frozen=True)
class WhyGroup:
    """The rows the question covers that come from files of one schema version."""

    schema_id: int
    files: int
    rows: int
    nulls: int
    #: the most common values with their counts, as text (NULL included)
    values: tuple[tuple[str, int], ...]
    #: how the column is read from these files (the explanation's text) and its kind
    text: str
    kind: str
    #: what else explains a NULL here (values that do not convert), or ""
    note: str = ""

    @property
    def title(self) -> str:
        return (f"files written under schema {self.schema_id} ({self.files} file"
                f"{'s' if self.files != 1 else ''}): {self.rows} row"
                f"{'s' if self.rows != 1 else ''}, {self.nulls} NULL")


@dataclass(frozen=True)
class WhyAnswer:
    """Why ``column`` reads as it does in a read of ``snapshot_id`` (in schema
    ``schema_id``), for the rows ``where`` selects (all rows when None)."""

    table: str
    column: str
    field_id: int
    snapshot_id: int | None
    schema_id: int
    mode_text: str
    where: str | None
    #: the field's life and the other fields that had its name, in sentences
    history: tuple[str, ...]
    groups: tuple[WhyGroup, ...]
    merge: str | None = None
    #: rows (of those ``where`` selects) that deletes removed, or kept despite a delete
    #: file, and why: one sentence per data file (empty for a read without deletes)
    deletes: tuple[str, ...] = ()
    #: how many of the rows in the data files that ``where`` selects the deletes removed
    deleted: int = 0
    #: a read of a branch or tag: which schema binds and why
    binding: str | None = None

    @property
    def rows(self) -> int:
        return sum(g.rows for g in self.groups)

    @property
    def nulls(self) -> int:
        return sum(g.nulls for g in self.groups)

    def headline(self) -> str:
        snap = "no snapshot yet" if self.snapshot_id is None else f"snapshot {self.snapshot_id}"
        rows = f"; rows where {self.where}" if self.where else ""
        head = (f"{self.table}: why `{self.column}` reads as it does ({snap}, schema "
                f"{self.schema_id}, {self.mode_text}{rows})")
        return head if self.binding is None else f"{head}; {self.binding}"

    def text(self) -> str:
        lines = [self.headline(), *self.history]
        if self.merge:
            lines.append(self.merge)
        if not self.groups:
            lines.append("No rows: " + (self.no_rows_text() + "."))
        else:
            lines.append(f"{self.rows} row{'s' if self.rows != 1 else ''}, {self.nulls} NULL")
        for g in self.groups:
            lines.append(f"  {g.title}" + (f"; values {_values(g.values)}" if g.values else ""))
            lines.append(f"    {g.text}")
            if g.note:
                lines.append(f"    {g.note}")
        if self.deletes:
            lines.append(self.deletes_title())
            lines.extend("  " + d.replace("\n", "\n  ") for d in self.deletes)
        return "\n".join(lines)

    def no_rows_text(self) -> str:
        if self.deleted:
            return (f"the data files hold {self.deleted} such row"
                    f"{'s' if self.deleted != 1 else ''}, and deletes removed "
                    f"{'them' if self.deleted != 1 else 'it'}")
        return "no row matches the condition" if self.where else "the table has no data files"

    def deletes_title(self) -> str:
        rows = f"row{'s' if self.deleted != 1 else ''}"
        of = f" where {self.where}" if self.where else ""
        return f"deletes: {self.deleted} {rows}{of} removed from the data files"

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return forms.html("why", self)


def _values(values: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{v} ×{n}" for v, n in values)


def why(plan: ReadPlan, history: TableHistory, spark: SparkSession, column: str,
        where: str | None = None) -> WhyAnswer:
    """The answer for ``column`` (a top-level column, or a nested field as ``a.b``) of the
    read ``plan`` describes, over the rows ``where`` (a Spark SQL condition on the columns
    read) selects."""
    top, path = _resolve(plan, history, column)
    ex = explain(plan, history)
    lin = next((x for x in history.lineage if x.field_id == _field_id(top, path)), None)
    story = _story(history, lin, column)
    counts = _counts(plan, spark, column, where) if plan.files else {}
    by_schema: dict[int, list[Any]] = {}
    for g in plan.groups:
        for f in g.files:
            by_schema.setdefault(f.schema_id, []).append(f)
    groups = []
    fid = _field_id(top, path)
    for sid, (rows, nulls, values) in sorted(counts.items()):
        c = _explained(ex.groups, sid, top.name)
        text = c.text if c is not None else "not read from these files"
        if path and c is not None and c.kind not in ("null", "constant"):
            text = _nested_text(plan, sid, fid, column) or f"its column `{top.name}`: {text}"
        note = _ignored_note(ex.groups, sid, column)
        read = _column_read(plan, sid, top.name)
        if nulls and read is not None and read.kind == "cast" and not path:
            note = _cast_note(plan, spark, read, by_schema.get(sid, [])) or note
        groups.append(WhyGroup(sid, len(by_schema.get(sid, [])), rows, nulls, values, text,
                               c.kind if c is not None else "null", note))
    deleted, deletes = _deletes(plan, ex.deletes, spark, where) if _has_deletes(plan) \
        else (0, [])
    merge = ex.merge
    if plan.row_merge is not None and plan.row_merge.groups:
        merge = "\n".join(merge_lines(plan, top.id))
    if plan.blobs and is_blob(top.type):
        merge = "\n".join([*merge_lines(plan, top.id), *blob_lines(plan, top.id)])
    return WhyAnswer(plan.table, column, fid, plan.snapshot_id, plan.target.id,
                     ex.mode_text, where, tuple(story), tuple(groups), merge=merge,
                     deletes=tuple(deletes), deleted=deleted, binding=ex.binding)


def _n_rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"


def _has_deletes(plan: ReadPlan) -> bool:
    return bool(plan.equality_deletes or plan.skipped or plan.ignored_deletes
                or any(f.deletes for f in plan.files))


def _without_deletes(plan: ReadPlan) -> ReadPlan:
    """The same read with no delete applied: every row its data files hold."""
    return dataclasses.replace(plan.map_files(lambda f: dataclasses.replace(f, deletes=())),
                               equality_deletes=())


def _per_file(plan: ReadPlan, spark: SparkSession, where: str | None) -> dict[str, int]:
    """Rows (that ``where`` selects) per data file's name."""
    from schemalab.engine.scan import FILE_COL

    if not plan.files:
        return {}
    df = _filtered(plan, _rows(plan, spark), where)
    return {_base(r[0]): int(r[1]) for r in df.groupBy(FILE_COL).count().collect()}


def _base(path: str) -> str:
    return os.path.basename(_norm(path))


def _deletes(plan: ReadPlan, explained: Any, spark: SparkSession, where: str | None
             ) -> tuple[int, list[str]]:
    """How many rows ``where`` selects in the data files the deletes removed, and per data
    file why its rows were removed or kept (the explanation's sentences)."""
    before = _per_file(_without_deletes(plan), spark, where)
    after = _per_file(plan, spark, where)
    by_file: dict[str | None, list[Any]] = {}
    for d in explained:
        by_file.setdefault(d.data_file, []).append(d)
    out = []
    total = 0
    for f in plan.files:
        name = os.path.basename(f.path)
        gone = before.get(name, 0) - after.get(name, 0)
        total += gone
        why_gone = [d.text for d in by_file.get(name, []) if d.rows != 0]
        kept = [d.text for d in by_file.get(name, []) if d.rows == 0]
        if gone:
            out.append(f"{name}: {gone} of {_n_rows(before[name])} removed\n"
                       + "\n".join(f"  {t}" for t in why_gone or ["by a delete"]))
        if after.get(name) and kept:
            out.append(f"{name}: {_n_rows(after[name])} kept\n"
                       + "\n".join(f"  {t}" for t in kept))
    out += [d.text for d in explained if d.kind == "not read" or d.data_file is None]
    return total, out


def _resolve(plan: ReadPlan, history: TableHistory, column: str) -> tuple[DataField, list[str]]:
    """The top-level field and the nested path below it; an error that says what the history
    knows when the read has no such column."""
    parts = column.split(".")
    top = next((f for f in plan.target.fields if f.name == parts[0]), None)
    node: DataField | None = top
    for p in parts[1:]:
        row = node.type if node is not None else None
        node = (next((f for f in row.fields if f.name == p), None)
                if isinstance(row, RowType) else None)
    if top is None or node is None:
        names = [f.name for f in plan.target.fields]
        hint = unknown_name_hint(history.lineage, column, names)
        listed = (f" Its columns: {', '.join(names)}." if len(names) <= 12 else
                  " (t.schema lists its columns.)")
        raise SchemaLabError(
            f"Table {plan.table}: the read (schema {plan.target.id}) has no column "
            f"`{column}`. {hint}".rstrip() + listed, table=plan.table, column=column,
            rule="column-must-exist")
    return top, parts[1:]


def _field_id(top: DataField, path: list[str]) -> int:
    node = top
    for p in path:
        assert isinstance(node.type, RowType)
        node = next(f for f in node.type.fields if f.name == p)
    return node.id


def _story(h: TableHistory, lin: FieldLineage | None, column: str) -> list[str]:
    """The field's life in a sentence, and the other fields that were called ``column``."""
    if lin is None:
        return []
    steps = []
    for ev in lin.events:
        if ev.kind == "added":
            steps.append(f"added in schema {ev.schema_id}" + (
                f" as `{ev.name}`" if ev.name != column else ""))
        elif ev.kind == "renamed":
            steps.append(f"renamed `{ev.old_name}` → `{ev.name}` in schema {ev.schema_id}")
        elif ev.kind in ("retyped", "nullability_changed"):
            steps.append(f"{ev.old_type} → {ev.type} in schema {ev.schema_id}")
        elif ev.kind == "default_changed":
            steps.append(f"default {ev.type} for writes after schema {ev.schema_id}, not "
                         "for older rows" if ev.type else
                         f"default dropped in schema {ev.schema_id}")
    out = [f"field {lin.field_id} `{column}`: " + ("; ".join(steps) or "unchanged") + "."]
    for other in lin.name_reused_from:
        o = next((x for x in h.lineage if x.field_id == other), None)
        if o is None:
            continue
        life = ", ".join(f"{ev.kind} in schema {ev.schema_id}" for ev in o.events
                         if ev.kind in ("added", "renamed", "dropped"))
        shared = next((n for n in o.names if n in lin.names), column)
        out.append(f"The name `{shared}` belonged to field {other} before ({life}); files are "
                   f"matched by id, so field {other}'s values never appear in `{column}`.")
    return out


def _nested_text(plan: ReadPlan, schema_id: int, field_id: int, column: str) -> str:
    """How a nested field reads from files of ``schema_id``: by id from its path there, or
    NULL when those files' schema has no such field id."""
    from schemalab.types.visitor import iter_fields

    file_schema = plan.schemas.get(schema_id)
    if file_schema is None:
        return ""
    for p, f in iter_fields(file_schema.fields):
        if f.id == field_id:
            name = ".".join(p)
            how = "" if name == column else f" (called `{name}` in schema {schema_id})"
            return f"by id from nested field `{name}`{how}"
    return (f"NULL: field {field_id} `{column}` did not exist when these files were written "
            f"(schema {schema_id})")


def _ignored_note(groups: Any, schema_id: int, column: str) -> str:
    """The files' own column of that name, when it belongs to another field the read
    ignores (a name used again after a drop or a rename)."""
    for g in groups:
        if g.schema_id == schema_id:
            for text in g.ignored:
                m = re.match(rf"file column `{re.escape(column)}` ignored: field (\d+) (.*)$",
                             text)
                if m:
                    return (f"these files' own `{column}` column is field {m.group(1)}, which "
                            f"{m.group(2)}: the read ignores it")
    return ""


def _explained(groups: Any, schema_id: int, name: str) -> ColumnExplanation | None:
    """How the files of ``schema_id`` give column ``name`` (a data-evolution merge: the
    files that supply it, before those that leave it to another file)."""
    found = [c for g in groups if g.schema_id == schema_id for c in g.columns
             if c.column == name]
    return next((c for c in found if c.kind != "null"), found[0] if found else None)


def _column_read(plan: ReadPlan, schema_id: int, name: str) -> ColumnRead | None:
    for g in plan.groups:
        for c in g.columns_by_schema.get(schema_id, ()):
            if c.target.name == name:
                return c
    return None


def _norm(path: str) -> str:
    from urllib.parse import unquote, urlparse

    if path.startswith("file:"):
        path = unquote(urlparse(path).path)
    return os.path.normpath(path)


def _rows(plan: ReadPlan, spark: SparkSession, field_id: int | None = None) -> DataFrame:
    """The rows the read returns, each with the file it came from (a data-evolution merge:
    the file that supplied field ``field_id``). A primary-key table's
    rows are its deduplicate merge's winners (the version with the highest sequence number
    of each key, unless it retracts the key)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from schemalab.engine.keyed import RETRACT, merge_key_columns
    from schemalab.engine.scan import FILE_COL, KIND_COL, SEQ_COL, read_group
    from schemalab.engine.spark_reader import quote

    if plan.row_merge is not None:
        from schemalab.engine.row_merge_read import row_merge_read

        first = plan.target.fields[0].id if plan.target.fields else -1
        if plan.blobs:  # a BLOB's value joined by row id; the row's file: its first column's
            from schemalab.engine.blob_join import blob_read

            row_file = next((f.id for f in plan.target.fields if not is_blob(f.type)), first)
            return blob_read(plan, spark, lambda p, s: row_merge_read(p, s, row_file),
                             keep=[FILE_COL])
        return row_merge_read(plan, spark, first if field_id is None else field_id)
    if not plan.merges:
        frames = [read_group(plan, g, spark, with_file=True) for g in plan.groups if g.files]
        df = frames[0]
        for other in frames[1:]:
            df = df.union(other)
        return df
    from schemalab.engine.merge.options import DEDUPLICATE
    from schemalab.engine.merge.records import versions

    engine = plan.merge_engine
    if engine != DEDUPLICATE:
        # a merged row of these engines is assembled from several versions (or kept from the
        # first): no one file holds it, so counting per file schema would tell a wrong story
        raise SchemaLabError(
            f"Table {plan.table}: why() counts the rows of each file, and a merge-engine "
            f"'{engine}' row comes from several versions; explain_read(key=...) says what "
            "the merge made of one key", table=plan.table, rule="why-merge-engine")
    every = versions(plan, spark, with_file=True)
    assert every is not None  # plan.merges: there are files to read
    keys = [F.col(quote(k)) for k in merge_key_columns(plan.target)]
    latest = F.max(SEQ_COL).over(Window.partitionBy(*keys))
    return every.withColumn("__sl_max", latest).where(
        (F.col(SEQ_COL) == F.col("__sl_max")) & ~F.col(KIND_COL).isin(*RETRACT)).drop(
        "__sl_max", SEQ_COL, KIND_COL)


def _filtered(plan: ReadPlan, df: DataFrame, where: str | None) -> DataFrame:
    from pyspark.sql import functions as F

    if not where:
        return df
    try:
        return df.where(F.expr(where))
    except Exception as e:
        first = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        raise SchemaLabError(f"Table {plan.table}: the condition {where!r} does not work "
                             f"on this read: {first}", table=plan.table,
                             rule="where-condition") from None


def _counts(plan: ReadPlan, spark: SparkSession, column: str, where: str | None
            ) -> dict[int, tuple[int, int, tuple[tuple[str, int], ...]]]:
    """Per schema id of the files: rows, NULLs of ``column``, most common values."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from schemalab.engine.scan import FILE_COL
    from schemalab.engine.spark_reader import quote

    top = next((f for f in plan.target.fields if f.name == column.split(".")[0]), None)
    df = _filtered(plan, _rows(plan, spark, None if top is None else top.id), where)
    schema_of = {_norm(f.path): f.schema_id for f in plan.files}
    # the files as Spark names them (URIs), then each row's schema id through a small map
    uris = [r[0] for r in df.select(FILE_COL).distinct().collect()]
    pairs: list[Column] = []
    for uri in uris:
        pairs += [F.lit(uri), F.lit(schema_of.get(_norm(uri), -1))]
    parts = column.split(".")
    col = F.col(quote(parts[0]))
    for p in parts[1:]:
        col = col.getField(p)
    if not pairs:
        return {}
    tagged = df.select(F.create_map(*pairs)[F.col(FILE_COL)].alias(_SCHEMA), col.alias(_VALUE))
    counted = tagged.groupBy(_SCHEMA, F.col(_VALUE).cast("string").alias("v"),
                             F.col(_VALUE).isNull().alias("n")).count()
    rank = F.row_number().over(Window.partitionBy(_SCHEMA).orderBy(F.desc("count"), "v"))
    out: dict[int, tuple[int, int, tuple[tuple[str, int], ...]]] = {}
    tops: dict[int, list[tuple[str, int]]] = {}
    for r in counted.withColumn("rank", rank).collect():
        sid = -1 if r[_SCHEMA] is None else int(r[_SCHEMA])
        rows, nulls, _ = out.get(sid, (0, 0, ()))
        out[sid] = (rows + r["count"], nulls + (r["count"] if r["n"] else 0), ())
        if r["rank"] <= TOP_VALUES:
            tops.setdefault(sid, []).append(("NULL" if r["n"] else value_text(r["v"], 40),
                                             int(r["count"])))
    return {sid: (rows, nulls, tuple(tops.get(sid, ()))) for sid, (rows, nulls, _) in
            out.items()}


def _cast_note(plan: ReadPlan, spark: SparkSession, read: ColumnRead, files: list[Any]) -> str:
    """For a cast column whose read has NULLs: how many of the files' own values do not
    convert (``cast.mode = explicit-null`` reads those as NULL)."""
    from pyspark.sql import functions as F

    from schemalab.engine.spark_reader import literal_path, quote
    from schemalab.fileio import spark_uri
    from schemalab.types.spark import to_spark

    src, target = read.source, read.target
    if src is None or not files or not isinstance(src.type, AtomicType) \
            or not isinstance(target.type, AtomicType) or plan.cast_mode.value != "explicit-null":
        return ""
    try:
        raw = spark.read.parquet(*[literal_path(spark_uri(f.path)) for f in files]) \
            .select(F.col(quote(src.name)).alias("raw"))
        bad = raw.where(F.col("raw").isNotNull() & F.expr(
            f"try_cast(raw AS {to_spark(target.type).simpleString()})").isNull())
        n = bad.count()
        sample = [value_text(r["raw"], 30) for r in bad.limit(3).collect()]
    except Exception:  # a hint only: the answer stands without it
        return ""
    if not n:
        return "(the NULLs are NULL in the files themselves)"
    return (f"{n} value{'s' if n != 1 else ''} in these files do{'es' if n == 1 else ''} not "
            f"convert from {src.type.sql()} to {target.type.sql()} (e.g. "
            f"{', '.join(repr(s) for s in sample)}): cast.mode = explicit-null reads "
            f"{'them' if n != 1 else 'it'} as NULL")
