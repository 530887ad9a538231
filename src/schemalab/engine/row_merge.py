"""Row tracking and data evolution on read: files merged column by column by row id, and the
row-tracking system columns ``_ROW_ID`` and ``_SEQUENCE_NUMBER``.

A data-evolution table (Paimon's ``data-evolution.enabled``) answers an UPDATE of some
columns with a file holding *only those columns* for the row-id range of the rows' file
(``_FIRST_ROW_ID`` and ``_WRITE_COLS`` in its manifest entry). A read puts the files of one
row-id range together and takes each column from the newest file that holds it, row by row
in file order — Java Paimon 2.0's ``DataEvolutionSplitRead``:

- files whose row-id ranges overlap form a group (``mergeRangesAndSort``); every data file of
  a group must cover the same range (else the table is refused, as Java refuses it);
- the group's files are ordered by their max sequence number, newest first (ties keep the
  manifest's order); for each field id of the read, the first file whose own schema,
  projected to its written columns, has that id supplies the column — evolved from that
  file's schema like any file (rename, widening) — and a field no file has reads NULL;
- ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` come from the newest file: the stored value when the
  file holds one, else ``_FIRST_ROW_ID`` + the row's position and the file's max sequence
  number (``DataFileRecordReader``'s fallback); a file without a first row id has no row ids.

On Spark the rows of a group's files are matched by their row id: each file is read with
its rows' positions (``_metadata.row_index`` of Spark's Parquet reader), a row's id is its
file's first row id plus its position, and one aggregation by row id keeps each column's
value from the file that supplies it (no Python UDF, no join per file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from schemalab.engine.plan import DataFile, ReadPlan, RowIdGroup, RowMerge
from schemalab.errors import SchemaLabError, UnsupportedFeatureError
from schemalab.schema import TableSchema
from schemalab.types.model import TypeRoot

ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
SYSTEM_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)
#: internal columns of a read with row ids (see schemalab.engine.scan)
ROW_INDEX_COL = "__sl_row_index"
ROW_FILE_COL = "__sl_row_file"
STORED_ROW_ID = "__sl_stored_row_id"
STORED_SEQ = "__sl_stored_seq"
RID_COL = "__sl_rid"
RANK_COL = "__sl_rank"
FLAG_PREFIX = "__sl_has_"


def file_columns(f: DataFile, schema: TableSchema) -> TableSchema:
    """A file's schema projected to the columns it holds (``write_cols``, by name in its
    own schema: Java's ``TableSchema.project(writeCols)``)."""
    if f.write_cols is None:
        return schema
    by_name = {sf.name: sf for sf in schema.fields}
    return replace(schema, fields=tuple(by_name[n] for n in f.write_cols if n in by_name))


def row_id_groups(table: str, files: Sequence[DataFile]) -> list[list[DataFile]]:
    """Files grouped by overlapping row-id ranges, in range order; in a group the newest
    file (max sequence number) first, ties in the given order (Java's stable sort)."""
    missing = [f for f in files if f.first_row_id is None]
    if missing:
        raise UnsupportedFeatureError(
            f"Read of {table} refused: data file {missing[0].path.rsplit('/', 1)[-1]} has no "
            "first row id, which a data-evolution table needs to merge its files by row id.",
            table=table, feature="data evolution", option="data-evolution.enabled")
    order = sorted(range(len(files)), key=lambda i: (
        files[i].first_row_id, files[i].first_row_id + files[i].row_count - 1))  # type: ignore[operator]
    groups: list[list[int]] = []
    end = -1
    for i in order:
        f = files[i]
        start = f.first_row_id or 0
        if groups and start <= end:
            groups[-1].append(i)
            end = max(end, start + f.row_count - 1)
        else:
            groups.append([i])
            end = start + f.row_count - 1
    return [sorted((files[i] for i in sorted(g)), key=lambda f: -f.max_sequence_number)
            for g in groups]


def plan_row_merge(table: str, target: TableSchema, files: Sequence[DataFile],
                   schema_of: Callable[[DataFile], TableSchema]
                   ) -> tuple[RowMerge, Callable[[DataFile], TableSchema]]:
    """The row-id groups of ``files`` that need a merge, and each file's source schema for
    :func:`schemalab.engine.plan.plan_read`: a merged file's schema keeps only the fields it
    supplies (the others read NULL from it and are taken from another file)."""
    groups: list[RowIdGroup] = []
    sources: dict[str, TableSchema] = {}
    for g in row_id_groups(table, files):
        if len(g) == 1:
            continue
        first, count = g[0].first_row_id or 0, g[0].row_count
        for f in g:
            if f.first_row_id != first or f.row_count != count:
                raise SchemaLabError(
                    f"Table {table}: data files {file_label(g[0])} (row ids {first}..."
                    f"{first + count - 1}) and {file_label(f)} (row ids {f.first_row_id}..."
                    f"{(f.first_row_id or 0) + f.row_count - 1}) overlap without covering the "
                    "same row ids; Java Paimon refuses such a table too.", table=table,
                    rule="row-id-ranges")
            if f.deletes:
                raise UnsupportedFeatureError(
                    f"Read of {table} refused: data file {file_label(f)} has a deletion vector "
                    "and is merged with other files by row id; schemalab does not apply "
                    "deletion vectors to a data-evolution merge yet.", table=table,
                    feature="data evolution with deletion vectors",
                    option="deletion-vectors.enabled")
            if f.format != "parquet":
                raise UnsupportedFeatureError(
                    f"Read of {table} refused: data file {file_label(f)} is {f.format.upper()}; "
                    "schemalab merges files by row id in Parquet files only.", table=table,
                    feature="data evolution", option="file.format")
        projected = [file_columns(f, schema_of(f)) for f in g]
        suppliers: dict[int, int] = {}
        for i, s in enumerate(projected):
            for sf in s.fields:
                suppliers.setdefault(sf.id, i)
        target_ids = {t.id for t in target.fields}
        for i, (f, s) in enumerate(zip(g, projected, strict=True)):
            won = {fid for fid, j in suppliers.items() if j == i and fid in target_ids}
            sources[f.path] = replace(s, fields=tuple(sf for sf in s.fields if sf.id in won))
        groups.append(RowIdGroup(first, count, tuple(g), tuple(sorted(
            (fid, i) for fid, i in suppliers.items() if fid in target_ids))))
    cache: dict[tuple[int, tuple[int, ...]], TableSchema] = {}

    def source_of(f: DataFile) -> TableSchema:
        s = sources.get(f.path)
        if s is None:
            return schema_of(f)
        # plan_read caches by schema object: one object per distinct projection
        return cache.setdefault((s.id, tuple(sf.id for sf in s.fields)), s)

    return RowMerge(tuple(groups)), source_of


def file_label(f: DataFile) -> str:
    return f.path.rsplit("/", 1)[-1]


# ---- in words: explain_read and why ----------------------------------------------------------


def _what(f: DataFile, schema: TableSchema) -> str:
    """A file of a row-id group, in words: which columns it holds, when it was written."""
    cols = ", ".join(f"`{sf.name}`" for sf in file_columns(f, schema).fields)
    if f.write_cols is None:
        return f"the file of the rows {file_label(f)} (sequence number {f.max_sequence_number})"
    # a row-tracking commit gives a new file its snapshot's id as sequence number
    return (f"the update file of {cols} {file_label(f)}, written in snapshot "
            f"{f.max_sequence_number}")


def supplier_lines(plan: ReadPlan, group: RowIdGroup) -> list[str]:
    """For one merged row-id range, which file supplies each column of the read, and why
    that one: the newest file (max sequence number) that holds the column wins."""
    out = [f"rows {group.first_row_id}..{group.last_row_id} merged by row id from "
           f"{len(group.files)} files, newest first:"]
    for t in plan.target.fields:
        f = group.supplier(t.id)
        if f is None and t.type.root is TypeRoot.BLOB:
            out.append(f"  `{t.name}` from its .blob files, joined by row id (see the BLOB "
                       "lines)")
            continue
        if f is None:
            out.append(f"  `{t.name}` is NULL: no file of these rows holds field id {t.id}")
            continue
        schema = plan.schemas.get(f.schema_id) or plan.target
        older = [o for o in group.files if o is not f
                 and any(sf.id == t.id for sf in file_columns(o, plan.schemas.get(
                     o.schema_id) or plan.target).fields)]
        source = next(sf for sf in schema.fields if sf.id == t.id)
        named = "" if source.name == t.name else f" (written as `{source.name}`)"
        line = f"  `{t.name}` from {_what(f, schema)}{named}"
        if older:
            line += ", newer than " + ", ".join(
                f"{file_label(o)} (sequence number {o.max_sequence_number})" for o in older)
        out.append(line)
    return out


def merge_lines(plan: ReadPlan, field_id: int | None = None) -> list[str]:
    """Every merged row-id range of the plan, column by column (only field ``field_id``'s
    lines when given); empty when nothing is merged."""
    if plan.row_merge is None or not plan.row_merge.groups:
        return []
    out = ["data evolution: the files of one row-id range are merged by row id, each column "
           "from the newest file (highest sequence number) that holds it"]
    for g in plan.row_merge.groups:
        lines = supplier_lines(plan, g)
        if field_id is not None:
            names = {t.name for t in plan.target.fields if t.id == field_id}
            lines = lines[:1] + [ln for ln in lines[1:]
                                 if ln.strip().split(" ")[0].strip("`") in names]
        out.extend(lines)
    return out
