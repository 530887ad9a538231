"""The write path of a Paimon table: rows → data files (written by Spark) → a committed
snapshot. A failed commit removes its files: nothing references them.

Lower layers get a :class:`WriteTarget` — the table's directory, its name for messages,
the schema written and a SparkSession — never the ``Table`` facade.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.frames import to_frame
from schemalab.engine.keyed import DELETE
from schemalab.errors import CommitConflictError
from schemalab.paimon import commit as commits
from schemalab.paimon.commit import UNKNOWN_OUTCOME
from schemalab.paimon.features import check_writable_features
from schemalab.paimon.listing import live_files, partition_values
from schemalab.paimon.manifest import FileKind, ManifestEntry
from schemalab.paimon.primary_key import check_writable
from schemalab.paimon.snapshot import Snapshot
from schemalab.paimon.write import files as write
from schemalab.paimon.write import keyed as pk_write
from schemalab.paimon.write.bucket_column import bucket_column
from schemalab.paimon.write.files import WriteTarget

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame


def insert(target: WriteTarget, data: Any, *, columns: Any = None, by_position: bool = False,
           overwrite: bool = False) -> Snapshot | None:
    """Append (or, with ``overwrite``, replace the written partitions with) rows given as a
    Spark DataFrame, a pandas DataFrame or Python rows, cast to the target's schema."""
    schema = target.schema
    fileio.check_writable(target.path)  # before Spark starts
    check_writable_features(schema, target.name, "INSERT OVERWRITE" if overwrite else "INSERT")
    if schema.primary_keys:
        check_writable(schema, target.name)
    df = to_frame(target.spark, data, schema, target.name, columns=columns,
                        by_position=by_position)

    def write_once() -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
        if schema.primary_keys:
            return pk_write.write_entries(target, df)
        files = write.write_files(target.spark, df, target.path, schema, table=target.name,
                                  bucket_column=bucket_column(schema, target.name))
        return files, [write.data_file_entry(f, schema) for f in files]

    def replaces_for(files: list[write.WrittenFile]
                     ) -> Callable[[Snapshot | None], list[ManifestEntry]] | None:
        if not overwrite:
            return None
        partitions = {f.partition for f in files}

        def replaces(snap: Snapshot | None) -> list[ManifestEntry]:
            return _overwritten(target, snap, partitions)

        return replaces

    return _write_and_commit(target, write_once, replaces_for,
                             kind="OVERWRITE" if overwrite else "APPEND")


def delete_rows(target: WriteTarget, rows: DataFrame) -> Snapshot | None:
    """Delete records (``-D``) for ``rows`` (today's merged rows of a primary-key table,
    already filtered); no snapshot when there are none."""
    check_writable_features(target.schema, target.name, "DELETE")
    check_writable(target.schema, target.name)
    df = to_frame(target.spark, rows, target.schema, target.name)
    return _write_and_commit(target, lambda: pk_write.write_entries(target, df, kind=DELETE),
                             lambda files: None, kind="APPEND")


#: how often a primary-key write that lost the sequence-number race is written again
PK_WRITE_ATTEMPTS = 5


def _write_and_commit(
        target: WriteTarget,
        write_once: Callable[[], tuple[list[write.WrittenFile], list[ManifestEntry]]],
        replaces_for: Callable[[list[write.WrittenFile]],
                               Callable[[Snapshot | None], list[ManifestEntry]] | None],
        *, kind: str) -> Snapshot | None:
    """Write the data files, then commit them. A primary-key write whose rows were numbered
    before another commit to the same buckets (``sequence_guard``) is written again,
    numbered from the new latest snapshot, as an append commit that loses a race retries on
    the fresh snapshot."""
    schema = target.schema
    for attempt in range(1, PK_WRITE_ATTEMPTS + 1):
        files, entries = write_once()
        replaces = replaces_for(files)
        if schema.primary_keys:
            replaces = pk_write.sequence_guard(target.path, target.name, entries, replaces,
                                               reader=target.reader)
        try:
            return commits.commit(target.path, target.name, schema, entries, kind=kind,
                                  replaces=replaces, reader=target.reader,
                                  meta_path=target.meta_path, committer=target.committer)
        except CommitConflictError as e:
            _remove(files)
            if e.rule == "primary-key-sequence-conflict" and attempt < PK_WRITE_ATTEMPTS:
                continue
            raise
        except BaseException as e:
            # lost too many races, a corrupt snapshot, an interrupt, ...; but a catalog that
            # failed while committing may have committed: its files must stay
            if getattr(e, "rule", None) != UNKNOWN_OUTCOME:
                _remove(files)
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def _remove(files: list[write.WrittenFile]) -> None:
    for f in files:
        fileio.delete(f.path)


def _overwritten(target: WriteTarget, snap: Snapshot | None,
                 partitions: set[tuple[Any, ...]]) -> list[ManifestEntry]:
    """DELETE entries for the files of ``snap`` an INSERT OVERWRITE replaces: every file of
    the partitions it writes (all files of an unpartitioned table), as Spark's dynamic mode.
    The commit asks again for each attempt, against the snapshot that attempt builds on."""
    if snap is None:
        return []
    schema = target.schema
    return [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
            for e in live_files(target.path, snap, target.reader)
            if not schema.partition_keys or partition_values(e, schema) in partitions]
