"""Compaction, as Paimon's full compaction: files rewritten in today's schema.

* Primary-key tables: every bucket with more than one file, a file below the top level or a
  file of an older schema is merged — each key's versions by the table's merge engine,
  deletes applied — into one sorted run at the top level (``num-levels`` - 1; level 5 by
  default). Each row keeps the sequence number of its merged version, so later writes still
  merge after it.
* Append tables: per partition (and bucket), the files smaller than ``target-file-size`` or
  of an older schema, when there are two of them or one of an older schema, are rewritten
  into one file; with ``order_strategy => 'order'`` (unaware-bucket tables) every file is
  rewritten, sorted by ``order_by``.

The new files are committed as a COMPACT snapshot: DELETE entries for the old files and ADD
entries for the new ones (``_FILE_SOURCE`` COMPACT). Another commit may land meanwhile: one
that only adds files is fine (the compacted rows keep their sequence numbers, the new files
stay newer), but if any file read is no longer live when the compaction commits (another
compaction or an overwrite replaced it), the compaction removes its files and starts again
from the new snapshot, up to ``attempts`` times, then gives up with nothing visible.

    >>> print(compact(target, live, schema_of))                    # doctest: +SKIP
    default.t: compacted 6 files into 2 in snapshot 7 (2 buckets)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio, progress
from schemalab.engine.execute import execute
from schemalab.engine.merge.keyed_read import merged
from schemalab.engine.plan import DataFile, ReadPlan, plan_read
from schemalab.engine.row_merge import ROW_ID
from schemalab.engine.spark_reader import quote
from schemalab.errors import CommitConflictError, SchemaLabError
from schemalab.paimon import commit as commits
from schemalab.paimon.bucket import bucket_keys
from schemalab.paimon.features import (
    check_writable_features,
    data_evolution_enabled,
    row_tracking_enabled,
)
from schemalab.paimon.listing import ManifestReader, live_files
from schemalab.paimon.manifest import FileKind, FileSource, ManifestEntry
from schemalab.paimon.primary_key import check_readable, check_writable, trimmed_primary_keys
from schemalab.paimon.snapshot import Snapshot, SnapshotManager
from schemalab.paimon.write import compact_rows
from schemalab.paimon.write import files as write
from schemalab.paimon.write import keyed as pk_write
from schemalab.paimon.write.bucket_column import bucket_column
from schemalab.paimon.write.files import WriteTarget
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import cast_mode

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

#: the live files of a snapshot: each manifest entry with the file as a read plans it
LiveFiles = Callable[[Snapshot | None], list[tuple[ManifestEntry, DataFile]]]

ORDER_STRATEGIES = ("none", "order", "zorder", "hilbert")
DEFAULT_ATTEMPTS = 5
_APPEND_TARGET_FILE_SIZE = 256 * 1024 * 1024
_SIZE_UNITS = {"b": 1, "kb": 1024, "k": 1024, "mb": 1024**2, "m": 1024**2, "gb": 1024**3,
               "g": 1024**3}


@dataclass(frozen=True)
class CompactionResult:
    """What a compaction did: the COMPACT snapshot (None when there was nothing to
    compact), and how many files and buckets it rewrote."""

    table: str
    snapshot: Snapshot | None
    files_before: int = 0
    files_after: int = 0
    buckets: int = 0
    attempts: int = 1

    def text(self) -> str:
        if self.snapshot is None:
            return f"{self.table}: nothing to compact"
        return (f"{self.table}: compacted {self.files_before} files into {self.files_after} "
                f"in snapshot {self.snapshot.id} ({self.buckets} bucket"
                f"{'s' if self.buckets != 1 else ''})")

    def __str__(self) -> str:
        return self.text()


def max_level(schema: TableSchema, table: str) -> int:
    """The top level of the LSM tree: ``num-levels`` - 1; Paimon's default is
    ``num-sorted-run.compaction-trigger`` (5) + 1 levels."""
    trigger = schema.int_option("num-sorted-run.compaction-trigger", 5, table)
    return schema.int_option("num-levels", trigger + 1, table) - 1


def parse_partitions(text: str | None, schema: TableSchema, table: str
                     ) -> list[dict[str, str]] | None:
    """Paimon's ``partitions`` argument, ``'p1=0,p2=0;p1=0,p2=1'``: one spec per ``;``."""
    if text is None or not text.strip():
        return None
    specs = []
    for part in text.split(";"):
        spec: dict[str, str] = {}
        for item in part.split(","):
            if "=" not in item:
                raise SchemaLabError(f"Table {table}: partitions '{text}' is not of the form "
                                     "'p1=v1,p2=v2;p1=v3,p2=v4'.", table=table,
                                     rule="compact-partitions")
            k, v = item.split("=", 1)
            k, v = k.strip(), v.strip().strip("'\"")
            if k not in schema.partition_keys:
                raise SchemaLabError(f"Table {table}: {k} is not a partition key "
                                     f"({', '.join(schema.partition_keys) or 'none'}).",
                                     table=table, column=k, rule="compact-partitions")
            spec[k] = v
        specs.append(spec)
    return specs


def _in_partitions(f: DataFile, schema: TableSchema, specs: list[dict[str, str]] | None
                   ) -> bool:
    if specs is None:
        return True
    values = {k: _text(v) for k, v in zip(schema.partition_keys, f.partition, strict=False)}
    return any(all(values.get(k) == v for k, v in spec.items()) for spec in specs)


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def compact(target: WriteTarget, live: LiveFiles, schema_of: Callable[[int], TableSchema], *,
            partitions: str | None = None, order_strategy: str | None = None,
            order_by: Sequence[str] = (), attempts: int = DEFAULT_ATTEMPTS,
            reader: ManifestReader | None = None) -> CompactionResult:
    """Compact the table (or branch: ``target.meta_path``) at ``target`` (its latest
    snapshot) in ``target.schema``; the check
    that what it read is still live reads manifests through ``reader`` (the table object's,
    which read them already)."""
    schema, table = target.schema, target.name
    fileio.check_writable(target.path)
    check_writable_features(schema, table, "COMPACT")
    strategy = (order_strategy or "none").strip().lower()
    _check_arguments(schema, table, strategy, order_by)
    specs = parse_partitions(partitions, schema, table)
    if data_evolution_enabled(schema):
        return _compact_row_ranges(target, live, schema_of, specs, attempts, reader)
    if schema.primary_keys:
        check_writable(schema, table)  # fixed buckets: rows are bucketed again on write
    try:
        mode = cast_mode(schema.effective_options())
    except ValueError as e:
        raise SchemaLabError(f"Table {table}: {e}", table=table, rule="cast-mode") from None
    for attempt in range(1, attempts + 1):
        snap = SnapshotManager(target.meta_path or target.path, table).latest()
        every = live(snap)
        pairs = [(e, f) for e, f in every if _in_partitions(f, schema, specs)]
        vectors = _check_deletion_vectors(every, pairs, table)
        chosen = _choose(pairs, schema, strategy, table)
        if not chosen:
            return CompactionResult(table, None, attempts=attempt)
        _check_bucket_keys(schema, table, [f for _, f in chosen], schema_of)
        plan = plan_read(table, schema, [f for _, f in chosen], lambda f: schema_of(f.schema_id),
                         mode, snapshot_id=None if snap is None else snap.id,
                         merge=check_readable(schema, table)
                         if schema.primary_keys else None)
        gone = [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
                for e, _ in chosen]
        files: list[write.WrittenFile] = []
        try:
            # Ctrl-C here (Spark cancels its jobs; the staging directory goes) or in the
            # commit below deletes what was written: nothing of an interrupted compaction
            # is committed or left behind
            with progress.task(f"compacting {table}", len(chosen), "files") as done:
                files, added = _rewrite(target, plan, strategy, order_by)
                done.advance(len(chosen))
            # Every file with a deletion vector is rewritten without its deleted rows, so
            # the vectors go: the snapshot keeps no index manifest (no hash index either:
            # dynamic-bucket tables are not compacted here)
            new = commits.commit(target.path, table, schema, gone + added, kind="COMPACT",
                                 replaces=_still_live(target.path, gone, table, reader),
                                 keep_index=not vectors, reader=reader,
                                 meta_path=target.meta_path, committer=target.committer)
        except BaseException as e:
            if getattr(e, "rule", None) != commits.UNKNOWN_OUTCOME:  # it may have landed
                for f in files:  # nothing references them
                    fileio.delete(f.path)
            if _lost_race(e) and attempt < attempts:
                continue
            raise
        buckets = {(e.partition, e.bucket) for e, _ in chosen}
        return CompactionResult(table, new, len(chosen), len(added), len(buckets), attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _lost_race(e: BaseException) -> bool:
    """Whether a compaction's commit lost to another writer's (it is tried again)."""
    return isinstance(e, CommitConflictError) and e.rule == "compaction-conflict"


def _compact_row_ranges(target: WriteTarget, live: LiveFiles,
                        schema_of: Callable[[int], TableSchema],
                        specs: list[dict[str, str]] | None, attempts: int,
                        reader: ManifestReader | None) -> CompactionResult:
    """A data-evolution table's compaction (:mod:`~schemalab.paimon.write.compact_rows`):
    the files of consecutive row-id ranges rewritten into one file each, row ids kept."""
    schema, table = target.schema, target.name
    for attempt in range(1, attempts + 1):
        # a branch's own snapshot/ (target.meta_path), as the other compaction reads it
        snap = SnapshotManager(target.meta_path or target.path, table).latest()
        pairs = [(e, f) for e, f in live(snap) if _in_partitions(f, schema, specs)]
        tasks = compact_rows.plan_tasks(pairs, schema, table, _target_file_size(schema))
        if not tasks:
            return CompactionResult(table, None, attempts=attempt)
        gone = [d for t in tasks for d in compact_rows.deletes(t)]
        files: list[write.WrittenFile] = []
        try:
            added: list[ManifestEntry] = []
            with progress.task(f"compacting {table}", len(gone), "files") as done:
                for t in tasks:
                    f, e = compact_rows.rewrite_task(target, t, snap, schema_of, target.spark)
                    files.append(f)
                    added.append(e)
                    done.advance(len(t.pairs))
            new = commits.commit(target.path, table, schema, gone + added, kind="COMPACT",
                                 replaces=_still_live(target.path, gone, table, reader),
                                 reader=reader, meta_path=target.meta_path,
                                 committer=target.committer)
        except BaseException as e:
            if getattr(e, "rule", None) != commits.UNKNOWN_OUTCOME:  # it may have landed
                for f in files:  # nothing references them
                    fileio.delete(f.path)
            if _lost_race(e) and attempt < attempts:
                continue
            raise
        buckets = len({t.pairs[0][0].partition for t in tasks})  # bucket 0 of each partition
        return CompactionResult(table, new, len(gone), len(added), buckets, attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _check_arguments(schema: TableSchema, table: str, strategy: str,
                     order_by: Sequence[str]) -> None:
    if strategy not in ORDER_STRATEGIES:
        raise SchemaLabError(f"Table {table}: order_strategy '{strategy}' is not one of "
                             f"{', '.join(ORDER_STRATEGIES)}.", table=table,
                             rule="compact-order")
    if strategy == "none":
        if order_by:
            raise SchemaLabError(f"Table {table}: order_strategy \"none\" cannot work with "
                                 "order_by columns.", table=table, rule="compact-order")
        return
    if data_evolution_enabled(schema):
        raise SchemaLabError(f"Table {table}: order_strategy '{strategy}' would reorder the "
                             "rows of a data-evolution table, whose row ids are their "
                             "positions; it compacts by row-id range only.", table=table,
                             rule="compact-order")
    if schema.primary_keys or schema.int_option("bucket", -1, table) != -1:
        raise SchemaLabError(f"Table {table}: Spark compact with sort_type {strategy} only "
                             "support unaware-bucket append-only table yet.", table=table,
                             rule="compact-order")
    if strategy != "order":
        raise SchemaLabError(f"Table {table}: order_strategy '{strategy}' (a space-filling "
                             "curve) is not implemented by schemalab; use 'order'.",
                             table=table, rule="compact-order")
    if not order_by:
        raise SchemaLabError(f"Table {table}: order_strategy 'order' needs order_by columns.",
                             table=table, rule="compact-order")
    for c in order_by:
        if schema.field(c) is None:
            raise SchemaLabError(f"Table {table} has no column {c} to order by.", table=table,
                                 column=c, rule="compact-order")
        if c in schema.partition_keys:
            raise SchemaLabError(
                f"Table {table}: order_by should not contain partition cols, because it is "
                f"meaningless (column {c}).", table=table, column=c, rule="compact-order")


def _check_deletion_vectors(every: list[tuple[ManifestEntry, DataFile]],
                            chosen: list[tuple[ManifestEntry, DataFile]], table: str) -> bool:
    """Whether live files carry deletion vectors; if so, the compaction must cover them all
    (it applies them and drops the index manifest that holds them)."""
    with_dv = {f.path for _, f in every if f.deletes}
    left = with_dv - {f.path for _, f in chosen}
    if left:
        raise SchemaLabError(
            f"Table {table}: {len(left)} file(s) outside the partitions to compact carry "
            "deletion vectors; schemalab compacts a deletion-vector table only as a whole "
            "(it applies every vector and drops the index file). Leave out 'partitions'.",
            table=table, rule="compact-deletion-vectors")
    return bool(with_dv)


def _choose(pairs: list[tuple[ManifestEntry, DataFile]], schema: TableSchema, strategy: str,
            table: str) -> list[tuple[ManifestEntry, DataFile]]:
    """The files to rewrite (see the module's docstring)."""
    groups: dict[tuple[object, ...], list[tuple[ManifestEntry, DataFile]]] = {}
    for e, f in pairs:
        key = (f.partition, f.bucket) if (schema.primary_keys or strategy == "none") \
            else (f.partition,)
        groups.setdefault(key, []).append((e, f))
    out: list[tuple[ManifestEntry, DataFile]] = []
    if schema.primary_keys:
        top = max_level(schema, table)
        for g in groups.values():
            if len(g) > 1 or any(f.level != top or f.schema_id != schema.id or f.deletes
                                 for _, f in g):
                out.extend(g)
        return out
    if strategy != "none":
        return pairs if len(pairs) > 0 else []
    target_size = _target_file_size(schema)
    for g in groups.values():
        small = [(e, f) for e, f in g
                 if f.file_size < target_size or f.schema_id != schema.id or f.deletes]
        if len(small) > 1 or any(f.schema_id != schema.id or f.deletes for _, f in small):
            out.extend(small)
    return out


def _target_file_size(schema: TableSchema) -> int:
    text = schema.effective_options().get("target-file-size")
    if text is None:
        return _APPEND_TARGET_FILE_SIZE
    t = text.strip().lower().replace(" ", "")
    for unit in sorted(_SIZE_UNITS, key=len, reverse=True):
        if t.endswith(unit) and t[: -len(unit)].isdigit():
            return int(t[: -len(unit)]) * _SIZE_UNITS[unit]
    return int(t) if t.isdigit() else _APPEND_TARGET_FILE_SIZE


def _check_bucket_keys(schema: TableSchema, table: str, files: list[DataFile],
                       schema_of: Callable[[int], TableSchema]) -> None:
    """The rewritten rows' buckets are computed again from today's key types: refuse a table
    whose bucket key was retyped (Paimon 1.0 refuses that ALTER; an older build took it)."""
    keys = bucket_keys(schema.effective_options(), schema.primary_keys, schema.partition_keys)
    if schema.int_option("bucket", -1, table) <= 0 or not keys:
        return
    for f in files:
        old = schema_of(f.schema_id)
        for k in keys:
            now = schema.field(k)
            then = next((x for x in old.fields if now is not None and x.id == now.id), None)
            if now is not None and then is not None and \
                    then.type.with_nullable(True) != now.type.with_nullable(True):
                raise SchemaLabError(
                    f"Table {table}: bucket key column {k} was {then.type.sql()} in schema "
                    f"{old.id} and is {now.type.sql()} now, so its rows would hash to other "
                    "buckets; schemalab does not compact such a table.", table=table,
                    column=k, rule="compact-bucket-key")


def _rewrite(target: WriteTarget, plan: ReadPlan, strategy: str, order_by: Sequence[str]
             ) -> tuple[list[write.WrittenFile], list[ManifestEntry]]:
    """Write the new files; their ADD entries say COMPACT (and the top level)."""
    schema = target.schema
    spark = target.spark
    if schema.primary_keys:
        rows = merged(plan, spark, batch=False)
        if rows is None:
            return [], []
        files, entries = pk_write.write_key_values(
            target, rows, trimmed_primary_keys(schema, target.name))
        level = max_level(schema, target.name)
    else:
        tracked = row_tracking_enabled(schema)  # rows keep their ids in columns of their own
        df: DataFrame = compact_rows.tracked_rows(plan, spark) if tracked \
            else execute(plan, spark)
        sort_by = [quote(c) for c in order_by] or ([quote(ROW_ID)] if tracked else [])
        files = write.write_files(spark, df, target.path, schema, table=target.name,
                                  bucket_column=bucket_column(schema, target.name),
                                  sort_by=sort_by)
        entries = [write.data_file_entry(f, schema) for f in files]
        try:
            entries = [compact_rows.tracked_entry(f, e, schema, target.name)
                       for f, e in zip(files, entries, strict=True)] if tracked else entries
        except BaseException:
            for f in files:
                fileio.delete(f.path)
            raise
        level = 0
    return files, [dataclasses.replace(e, file=dataclasses.replace(
        e.file, level=level, file_source=int(FileSource.COMPACT))) for e in entries]


def _still_live(table_path: str, gone: list[ManifestEntry], table: str,
                reader: ManifestReader | None = None
                ) -> Callable[[Snapshot | None], list[ManifestEntry]]:
    """A ``replaces`` callback: refuse the commit if a file this compaction read is no longer
    live in the snapshot it would build on."""
    wanted = {e.identifier for e in gone}

    def check(snap: Snapshot | None) -> list[ManifestEntry]:
        present = {e.identifier for e in
                   ([] if snap is None else live_files(table_path, snap, reader))}
        missing = wanted - present
        if missing:
            name = sorted(m.file_name for m in missing)[0]
            raise CommitConflictError(
                f"Table {table}: snapshot {snap.id if snap else '?'} no longer holds "
                f"{name} (another compaction or an overwrite replaced it), so this "
                "compaction is stale; nothing of it is visible.", table=table,
                rule="compaction-conflict")
        return []

    return check
