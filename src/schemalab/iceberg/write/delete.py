"""``DELETE FROM t [WHERE cond]`` on an Iceberg table schemalab writes, as Iceberg's Spark
writes it with ``write.delete.mode = merge-on-read``:

1. **Which rows.** The evolved read of the current snapshot (today's schema, the deletes
   already there applied) is scanned with each row's file and position (Spark's
   ``_metadata.file_name`` / ``_metadata.row_index``, one scan per set of files whose names
   are unique) and filtered by ``cond`` on Spark; only (file, position) pairs reach the
   driver.
2. **Whole files.** Where Spark's ``SparkTable.canDeleteWhere`` finds a metadata-only
   delete (Java's ``DeleteFiles``, operation ``delete``), the files are dropped instead: no
   WHERE (every file, and every delete file, as ``deleteFromRowFilter(true)``); a condition
   on identity partition columns alone (the files of the partitions it selects, their delete
   files too, as the row filter drops them, and files emptied earlier); any other condition
   when every touched file loses all its rows and had no deletes before (what Java's strict
   metrics evaluator can prove at best). Their manifests are written again with the files
   DELETED; their deletion vectors go too.
3. **Rows.** Otherwise, per touched data file, the new positions merged with its
   file-scoped deletes (its deletion vector, or position delete files naming only it), as
   Spark's ``PreviousDeleteLoader`` does: v2 writes a position delete file per data file,
   v3 one Puffin file of deletion vectors; the delete files they replace are removed in the
   same commit (Java's ``RowDelta.removeDeletes``; operation ``delete``).

Format v1 has no delete files: only whole-file deletes are possible there.

A commit that finds the table changed retries on what changed (another INSERT: both
commits stay). When a file this DELETE touches was removed, or got a new delete, since the
rows were found, the statement starts over on the new snapshot; its own files are removed.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.engine.deletes import file_name, unique_name_scans
from schemalab.engine.row_merge import ROW_FILE_COL, ROW_INDEX_COL
from schemalab.engine.scan import read_group
from schemalab.errors import CommitConflictError, SqlError
from schemalab.iceberg.deletes import DeleteIndex, referenced_file, scope
from schemalab.iceberg.listing import IcebergDataFile
from schemalab.iceberg.manifests import IcebergManifestEntry, IcebergManifestFile
from schemalab.iceberg.metadata import IcebergSnapshot
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.deletefiles import (
    delete_file_name,
    write_deletion_vectors,
    write_position_delete_file,
)
from schemalab.iceberg.write.produce import (
    Change,
    NewDeleteFile,
    commit_to,
    file_key,
    partition_key,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import DataFrame

    from schemalab.iceberg.write.table import WritableIcebergTable

#: how often a DELETE starts over when a concurrent commit changed the files it touches
ATTEMPTS = 5
_SCAN = "__sl_scan"
#: a condition's selection of the scanned rows: (frame with the table's columns) → rows
Select = Callable[["DataFrame"], "DataFrame"]


class StaleDelete(CommitConflictError):
    """A concurrent commit changed a file this DELETE touches: find the rows again."""


@dataclass(frozen=True)
class Touched:
    """One data file the DELETE touches."""

    file: IcebergDataFile
    #: the rows this DELETE removes (sorted, none deleted before)
    new: npt.NDArray[np.int64]
    #: every deleted row of the file after it: ``new`` and its file-scoped deletes
    merged: npt.NDArray[np.int64]
    #: the file-scoped delete files it replaces
    replaced: tuple[IcebergDataFile, ...]
    #: no row of the file is left after it
    emptied: bool
    #: rows of it were deleted before
    had_deletes: bool


def _scan_frames(t: WritableIcebergTable) -> tuple[list[DataFrame],
                                                   dict[tuple[int, str], str]]:
    """Frames of the current read with each row's scan, file name and position; the data
    file URI of each (scan, file name)."""
    from pyspark.sql import functions as F

    plan = t.read_plan()
    uri_of = {f.path: f.uri for f in t.data_files()}
    frames, where = [], {}
    scan = 0
    for g in plan.groups:
        for files in unique_name_scans(g.files):
            df = read_group(plan, replace(g, files=tuple(files)), t.spark, row_ids=True)
            names = [f.name for f in plan.target.fields]
            frames.append(df.select(*[F.col(f"`{n}`") for n in names],
                                    F.lit(scan).alias(_SCAN), ROW_FILE_COL, ROW_INDEX_COL))
            where.update({(scan, file_name(f)): uri_of[f.path] for f in files})
            scan += 1
    return frames, where


def scanned_rows(t: WritableIcebergTable) -> tuple[DataFrame | None,
                                                  dict[tuple[int, str], str]]:
    """The current read with each row's scan, file name and position (None: no file)."""
    frames, uri_of = _scan_frames(t)
    if not frames:
        return None, uri_of
    return functools.reduce(lambda a, b: a.union(b), frames), uri_of


def matched_positions(t: WritableIcebergTable, rows: DataFrame, uri_of: dict[tuple[int, str],
                                                                           str],
                      select: Select, what: str = "DELETE FROM"
                      ) -> dict[str, npt.NDArray[np.int64]]:
    """Data file URI → the sorted positions of its rows ``select`` keeps (``what``: the
    statement, for its errors)."""
    import numpy as np

    try:
        picked = select(rows).select(_SCAN, ROW_FILE_COL, ROW_INDEX_COL).toArrow()
    except SqlError:
        raise
    except Exception as e:
        raise column_error(t, e, what) or e from None
    scans = picked.column(_SCAN).to_numpy()
    names = picked.column(ROW_FILE_COL).to_pylist()
    pos = picked.column(ROW_INDEX_COL).to_numpy().astype(np.int64)
    by_file: dict[str, list[int]] = {}
    for i, (s, n) in enumerate(zip(scans.tolist(), names, strict=True)):
        by_file.setdefault(uri_of[(int(s), str(n))], []).append(i)
    return {uri: np.unique(pos[np.asarray(idx)]) for uri, idx in by_file.items()}


def partition_specs(t: WritableIcebergTable, rows: DataFrame, select: Select) -> set[int]:
    """The specs on whose identity partition columns alone the condition can be evaluated
    (Spark's ``ExpressionUtil.selectsPartitions``, per spec): there it selects whole
    partitions, and Java's row filter drops their delete files too."""
    out = set()
    for spec in t.metadata.specs:
        names = [t.schema.full_name(pf.source_ids[0]) for pf in spec.fields
                 if pf.transform == "identity" and t.schema.find(pf.source_ids[0])
                 in t.schema.fields]
        if not names:
            continue
        try:
            select(rows.select(*[f"`{n}`" for n in names if n])).schema  # noqa: B018
        except Exception:  # noqa: BLE001 - it names another column: not a partition filter
            continue
        out.add(spec.spec_id)
    return out


def emptied_in_partitions(t: WritableIcebergTable, snap: IcebergSnapshot, rows: DataFrame,
                          select: Select, specs: set[int], matched: set[str]) -> list[str]:
    """Data files of the ``specs`` whose rows were all deleted before and whose partition
    the condition selects: Java's row filter drops them too (they hold no row to scan)."""
    import numpy as np

    data, deletes = t.live_files(snap.snapshot_id)
    index = DeleteIndex.of(t, deletes)
    out: list[str] = []
    for spec in t.metadata.specs:
        if spec.spec_id not in specs:
            continue
        fields = [(pf.field_id, t.schema.full_name(pf.source_ids[0])) for pf in spec.fields
                  if pf.transform == "identity" and t.schema.find(pf.source_ids[0])
                  in t.schema.fields]
        empty = []
        for d in data:
            if d.entry.spec_id != spec.spec_id or d.uri in matched:
                continue
            loads = [p.load() for p in index.position_deletes(d)]
            if loads and len(functools.reduce(np.union1d, loads)) >= d.entry.record_count:
                empty.append(d)
        if not empty:
            continue
        from pyspark.sql import types as st

        schema = st.StructType([st.StructField(_SCAN, st.LongType()), *rows.select(
            *[f"`{n}`" for _, n in fields]).schema.fields])
        values = [(i, *(d.entry.partition.get(fid) for fid, _ in fields))
                  for i, d in enumerate(empty)]
        picked = select(t.spark.createDataFrame(values, schema)).select(_SCAN).collect()
        out.extend(empty[int(r[0])].uri for r in picked)
    return out


def column_error(t: WritableIcebergTable, e: Exception, what: str) -> SqlError | None:
    m = re.search(r"UNRESOLVED_COLUMN[^\]]*\] A column[^`]*((?:`[^`]*`\.)*`[^`]*`)", str(e))
    if m is None:
        return None
    parts = re.findall(r"`([^`]*)`", m.group(1))
    columns = [f.name for f in t.schema.fields]
    if len(parts) > 1:  # a qualifier naming no table of the statement, or no struct field
        db, _, table = t.name.partition(".")
        c = parts[-1] if parts[-1] in columns else columns[0]
        return SqlError(f"{what} {t.name}: cannot resolve {m.group(1)} (Spark's "
                        f"UNRESOLVED_COLUMN): a column of the table is named as {c}, "
                        f"{table}.{c} or {db}.{table}.{c}, a struct field as {c}.<field> "
                        f"(columns: {', '.join(columns)})", table=t.name,
                        column=".".join(parts), rule="column-must-exist")
    from schemalab.history.names import unresolved_column

    known = unresolved_column(e, [t])
    if known is not None:
        return known
    column = parts[0]
    return SqlError(f"{what} {t.name}: no column `{column}` (columns: "
                    f"{', '.join(columns)})", table=t.name, column=column,
                    rule="column-must-exist")


def touched_files(t: WritableIcebergTable, snap: IcebergSnapshot,
             matched: dict[str, npt.NDArray[np.int64]]) -> list[Touched]:
    import numpy as np

    data, deletes = t.live_files(snap.snapshot_id)
    index = DeleteIndex.of(t, deletes)
    by_uri = {d.uri: d for d in data}
    out = []
    for uri, new in sorted(matched.items()):
        df = by_uri[uri]
        scoped = [d for d in deletes if d.entry.content == 1
                  and referenced_file(d.entry) == uri and scope(d.entry) == scope(df.entry)
                  and (d.entry.sequence_number or 0) >= (df.entry.sequence_number or 0)]
        paths = {d.path for d in scoped}
        loaded = [(p.source in paths, p.load()) for p in index.position_deletes(df)]
        gone = functools.reduce(np.union1d, [p for _, p in loaded], np.zeros(0, np.int64))
        new = np.setdiff1d(new, gone).astype(np.int64)  # (no WHERE: every position)
        merged = functools.reduce(np.union1d, [p for own, p in loaded if own], new)
        emptied = len(np.union1d(gone, new)) >= df.entry.record_count
        out.append(Touched(df, new, merged.astype(np.int64), tuple(scoped), emptied,
                            len(gone) > 0))
    return out


def touched_validator(touched: Sequence[Touched], seen: set[tuple[str, int | None]]
               ) -> Callable[[list[tuple[IcebergManifestFile, IcebergManifestEntry]]], None]:
    """Refuses a commit attempt whose parent lost a touched data file, or has a delete file
    naming one that this DELETE did not see."""
    uris = {x.file.uri for x in touched}

    def check(live: list[tuple[IcebergManifestFile, IcebergManifestEntry]]) -> None:
        present = {e.file_path for _, e in live if e.content == 0}
        if not uris <= present:
            raise StaleDelete("a data file this DELETE touches was removed meanwhile",
                         rule="commit-conflict")
        for _, e in live:
            if e.content != 0 and referenced_file(e) in uris and file_key(e) not in seen:
                raise StaleDelete("a delete file for a data file this DELETE touches was added "
                             "meanwhile", rule="commit-conflict")
    return check


def write_delete_files(t: WritableIcebergTable, touched: Sequence[Touched],
                   written: list[str]) -> list[NewDeleteFile]:
    run = uuid.uuid4()
    codec = t.metadata.properties.get("write.delete.parquet.compression-codec") or \
        t.metadata.properties.get("write.parquet.compression-codec", "zstd")
    if t.format_version >= 3:
        name = delete_file_name(0, run, "puffin")
        path, files = write_deletion_vectors(t.path, t.location, name, [
            (x.file.uri, x.merged, x.file.entry.partition, x.file.entry.spec_id)
            for x in touched])
        written.append(path)
        return files
    out = []
    for i, x in enumerate(touched):
        path, f = write_position_delete_file(
            t.path, t.location, x.file.uri, x.merged, x.file.entry.partition,
            x.file.entry.spec_id, delete_file_name(i, run, "parquet"), codec.lower())
        written.append(path)
        out.append(f)
    return out


def _whole(x: Touched, partition_only: set[int] | None) -> bool:
    """Whether Spark would drop the file (``SparkTable.canDeleteWhere``): without WHERE
    always; a condition on identity partition columns when it empties the file; any other
    condition when it matches every row of a file no delete touched before (what strict
    metrics can prove at best)."""
    if partition_only is None:
        return True
    if x.file.entry.spec_id in partition_only:
        return x.emptied
    return x.emptied and not x.had_deletes


def _change(t: WritableIcebergTable, snap: IcebergSnapshot, touched: Sequence[Touched],
            written: list[str], partition_only: set[int] | None, row_level: bool) -> Change:
    _, deletes = t.live_files(snap.snapshot_id)
    seen = {file_key(d.entry) for d in deletes}
    validate = touched_validator(touched, seen)
    if not (row_level and t.format_version >= 2) and \
            all(_whole(x, partition_only) for x in touched):
        parts = None if partition_only is None else \
            {partition_key(x.file.entry) for x in touched
             if x.file.entry.spec_id in partition_only}

        def drop(e: IcebergManifestEntry, gone: list[IcebergManifestEntry]) -> bool:
            return parts is None or partition_key(e) in parts  # Java's row filter on them

        return Change("delete", removed={file_key(x.file.entry) for x in touched},
                      drop_deletes=drop, validate=validate)
    if t.format_version < 2:
        raise SqlError(f"DELETE FROM {t.name}: the table is Iceberg format v1, which has no "
                       "delete files, and the condition deletes only some rows of "
                       f"{sum(not x.emptied for x in touched)} data file(s); a v1 table can "
                       "drop whole files only (upgrade it: ALTER TABLE .. SET TBLPROPERTIES "
                       "('format-version' = '2'))", table=t.name,
                       rule="iceberg-delete-needs-delete-files")
    return Change("delete", added_deletes=write_delete_files(t, touched, written),
                  removed={file_key(d.entry) for x in touched for d in x.replaced},
                  validate=validate)


def commit_no_match(t: WritableIcebergTable, row_level: bool) -> IcebergSnapshot:
    """A DELETE whose condition matched no row still commits, as Iceberg's Spark does: the
    metadata delete (``SparkTable.deleteWhere``: a ``DeleteFiles`` removing nothing,
    operation ``delete``), or, for a condition Spark cannot push down (a subquery), the
    merge-on-read ``RowDelta`` of ``SparkPositionDeltaWrite`` with no delete file
    (operation ``overwrite``)."""
    op = "overwrite" if row_level and t.format_version >= 2 else "delete"
    sid = commit_to(t, Change(op))
    t.refresh()
    return t.snapshot(sid)


def delete_rows(t: WritableIcebergTable, select: Select | None, *, row_level: bool = False
                ) -> tuple[IcebergSnapshot, int]:
    """DELETE FROM: the rows ``select`` keeps of today's read (None: every row) are deleted
    in one commit; (the new snapshot, how many rows). ``row_level``: Spark cannot push the
    condition down (it has a subquery), so it takes the merge-on-read path even where
    whole files match. A DELETE that matches nothing commits an empty snapshot
    (:func:`commit_no_match`)."""
    import numpy as np

    t.check_main_write("DELETE")
    fileio.check_writable(t.path)
    for _ in range(ATTEMPTS):
        t.refresh()
        snap = t.current_snapshot
        if snap is None:
            return commit_no_match(t, row_level), 0
        partition_only: set[int] | None = None
        if select is None:
            matched = {d.uri: np.arange(d.entry.record_count, dtype=np.int64)
                       for d in t.data_files()}
        else:
            rows, uri_of = scanned_rows(t)
            matched = {} if rows is None else matched_positions(t, rows, uri_of, select)
            partition_only = set() if rows is None else partition_specs(t, rows, select)
            if partition_only:
                assert rows is not None
                for uri in emptied_in_partitions(t, snap, rows, select, partition_only,
                                                 set(matched)):
                    matched[uri] = np.zeros(0, np.int64)
        # files this DELETE empties, and files already empty its row filter drops
        touched = [x for x in touched_files(t, snap, matched) if len(x.new) or x.emptied]
        if not touched:
            return commit_no_match(t, row_level), 0
        count = sum(len(x.new) for x in touched)
        written: list[str] = []
        sid = commit_cleaning(t, written, functools.partial(
            _change, t, snap, touched, written, partition_only, row_level))
        if sid is None:
            continue
        t.refresh()
        return t.snapshot(sid), count
    raise CommitConflictError(f"DELETE FROM {t.name}: gave up after {ATTEMPTS} attempts, "
                              "other writers changed the files it deletes from every time",
                              table=t.name, rule="commit-conflict")


def commit_cleaning(t: WritableIcebergTable, written: list[str],
                    build: Callable[[], Change]) -> int | None:
    """Commit the change ``build`` makes (it lists the files it writes in ``written``): the
    new snapshot's id, or None when a concurrent commit changed a file it touches (find the
    rows again). A failed commit removes ``written``, unless it may have landed."""
    try:
        return commit_to(t, build())
    except StaleDelete:
        remove_files(written)
        return None
    except BaseException as e:
        if getattr(e, "rule", None) != commits.UNKNOWN_OUTCOME:  # it may have landed
            remove_files(written)
        raise


def remove_files(paths: Sequence[str]) -> None:
    for p in paths:
        fileio.delete(p)
