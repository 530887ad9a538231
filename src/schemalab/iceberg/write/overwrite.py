"""``INSERT OVERWRITE t ...`` on an Iceberg table schemalab writes, as Iceberg's Spark
writes it, by Spark's ``spark.sql.sources.partitionOverwriteMode``:

- **static** (Spark's default; an INSERT without a PARTITION clause): every live data file
  is replaced, as ``OverwriteFiles.overwriteByRowFilter(true)`` (operation ``overwrite``;
  ``delete`` when the query gives no rows);
- **dynamic**: the partitions the rows go to (of the table's current spec) are replaced,
  as ``ReplacePartitions`` (operation ``overwrite``, summary ``replace-partitions=true``);
  no rows: nothing is committed, as Spark skips an empty dynamic overwrite. An
  unpartitioned table is replaced whole.

The delete files of the replaced partitions (static: all) go with them, as Java's
``dropPartition`` / ``deleteByRowFilter`` drop them, and delete files older than every live
data file are dropped (see :mod:`schemalab.iceberg.write.produce`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.iceberg.manifests import IcebergManifestEntry
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.datafiles import local_path
from schemalab.iceberg.write.produce import Change, commit_to, norm_value

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.iceberg.metadata import IcebergSnapshot

#: a :class:`~schemalab.iceberg.write.WritableIcebergTable` (not imported: it calls us)
WritableIcebergTable = Any

MODE = "spark.sql.sources.partitionOverwriteMode"


def _key(partition: Any) -> tuple[tuple[int, Any], ...]:
    return tuple(sorted((k, norm_value(v)) for k, v in partition.items()))


def overwrite_mode(t: WritableIcebergTable) -> str:
    """``static`` or ``dynamic``: the session's ``spark.sql.sources.partitionOverwriteMode``."""
    return str(t.spark.conf.get(MODE, "static") or "static").strip().lower()


def overwrite(t: WritableIcebergTable, data: Any, *, columns: Sequence[str] | None = None,
              by_position: bool = False) -> IcebergSnapshot | None:
    """INSERT OVERWRITE of ``data`` as one snapshot; None when nothing was committed."""
    dynamic = overwrite_mode(t) == "dynamic"
    files, spec, _, _ = t.write_files(data, columns=columns, by_position=by_position)
    extra: dict[str, str] = {}
    if dynamic:
        if not files:
            return None
        extra["replace-partitions"] = "true"
    if dynamic and spec.fields:
        parts = {_key(f.partition) for f in files}

        def replaced(e: IcebergManifestEntry, *_: Any) -> bool:
            return e.spec_id == spec.spec_id and _key(e.partition) in parts
    else:
        def replaced(e: IcebergManifestEntry, *_: Any) -> bool:
            return True
    if not files and not t.data_files():
        return None
    operation = "overwrite" if files or dynamic else "delete"
    change = Change(operation, added_data=files, data_spec_id=spec.spec_id,
                    remove_where=replaced, drop_deletes=replaced, extra_summary=extra)
    try:
        snapshot_id = commit_to(t, change)
    except BaseException as e:
        if getattr(e, "rule", None) != commits.UNKNOWN_OUTCOME:  # it may have landed
            for f in files:  # nothing references them
                fileio.delete(local_path(t.path, t.location, f.path))
        raise
    t.refresh()
    return t.snapshot(snapshot_id)
