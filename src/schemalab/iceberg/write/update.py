"""``UPDATE t SET c = expr, .. [WHERE cond]`` on an Iceberg table schemalab writes, as
Iceberg's Spark runs it with ``write.update.mode = merge-on-read``
(``SparkPositionDeltaWrite``, command UPDATE): the rows the condition matches are found as a
DELETE finds them (:mod:`schemalab.iceberg.write.delete`: each row's data file and
position), their new values are written as new data files of the default spec (the INSERT
path: casts, partitions, distribution, sort order), and one ``RowDelta`` commits both the
new data files and the position deletes of the old rows (format v2: a Parquet position
delete file per data file, merged with its file-scoped deletes; the delete files they
replace removed). The operation is ``overwrite``; an UPDATE that matches no row commits an
empty one, as Spark does.

Format v1 has no delete files (Iceberg's merge-on-read needs v2); format v3 keeps row lineage
(an updated row keeps its ``_row_id``), which schemalab's data files do not carry yet: both
are refused. A commit that finds a touched file removed or given new deletes starts over.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import CommitConflictError, SqlError
from schemalab.iceberg.write.datafiles import local_path
from schemalab.iceberg.write.delete import (
    ATTEMPTS,
    Select,
    Touched,
    column_error,
    commit_cleaning,
    commit_no_match,
    matched_positions,
    scanned_rows,
    touched_files,
    touched_validator,
    write_delete_files,
)
from schemalab.iceberg.write.produce import Change, file_key

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from schemalab.iceberg.metadata import IcebergSnapshot
    from schemalab.iceberg.write.table import WritableIcebergTable

#: the matched rows (the scan's columns) → the same rows with their new values, in the
#: table's columns
Assign = Callable[["DataFrame"], "DataFrame"]


def _check_version(t: WritableIcebergTable) -> None:
    if t.format_version == 2:
        return
    why = ("format v1 has no delete files; Iceberg's merge-on-read UPDATE needs v2 "
           "(ALTER TABLE .. SET TBLPROPERTIES ('format-version' = '2'))"
           if t.format_version < 2 else
           "format v3 keeps each updated row's _row_id (row lineage), which schemalab's data "
           "files do not carry yet; DELETE the rows and INSERT their new values")
    raise SqlError(f"UPDATE {t.name}: {why}", table=t.name, rule="iceberg-update-format")


def _change(t: WritableIcebergTable, new_rows: DataFrame, touched: Sequence[Touched],
            written: list[str], validate: Callable[[Any], None]) -> Change:
    """The UPDATE's commit: the updated rows as new data files and the old rows' positions
    in delete files (each written file listed in ``written`` as it lands)."""
    files, spec, _, _ = t.write_files(new_rows, by_position=True)
    written.extend(local_path(t.path, t.location, f.path) for f in files)
    return Change("overwrite", added_data=files, data_spec_id=spec.spec_id,
                  added_deletes=write_delete_files(t, touched, written),
                  removed={file_key(d.entry) for x in touched for d in x.replaced},
                  validate=validate)


def update_rows(t: WritableIcebergTable, select: Select, assign: Assign
                ) -> tuple[IcebergSnapshot, int]:
    """UPDATE: the rows ``select`` keeps of today's read get the values ``assign`` gives
    them, in one commit; (the new snapshot, how many rows)."""
    t.check_main_write("UPDATE")
    _check_version(t)
    fileio.check_writable(t.path)
    for _ in range(ATTEMPTS):
        t.refresh()
        snap = t.current_snapshot
        rows, uri_of = (None, {}) if snap is None else scanned_rows(t)
        if snap is None or rows is None:
            return commit_no_match(t, True), 0
        matched = matched_positions(t, rows, uri_of, select, "UPDATE")
        touched = [x for x in touched_files(t, snap, matched) if len(x.new)]
        if not touched:
            return commit_no_match(t, True), 0
        count = sum(len(x.new) for x in touched)
        _, deletes = t.live_files(snap.snapshot_id)
        validate = touched_validator(touched, {file_key(d.entry) for d in deletes})
        try:
            new_rows = assign(select(rows))
        except SqlError:
            raise
        except Exception as e:  # a SET expression naming no column: say which
            raise column_error(t, e, "UPDATE") or e from None
        written: list[str] = []
        sid = commit_cleaning(t, written, functools.partial(
            _change, t, new_rows, touched, written, validate))
        if sid is None:
            continue
        t.refresh()
        return t.snapshot(sid), count
    raise CommitConflictError(f"UPDATE {t.name}: gave up after {ATTEMPTS} attempts, other "
                              "writers changed the files it updates every time",
                              table=t.name, rule="commit-conflict")
