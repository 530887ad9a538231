"""Paimon 1.1+ table features: what schemalab maintains (row ids of new files), and what it
refuses by name.

A table that another engine wrote may use a feature whose meaning lives outside the
schema and the data files' columns: row tracking (``_FIRST_ROW_ID`` per file,
``nextRowId`` per snapshot), data evolution (files holding a subset of the columns for a
range of row ids, merged on read), and default values (the ``fields.<f>.default-value``
option, which Java Paimon 1.0 applies to every NULL it reads and Java Paimon 2.0 ignores;
a ``defaultValue`` of a nested type in the schema JSON, which Paimon 1.2+ writes in place
of an omitted or NULL value — atomic ones schemalab writes too). Reading or
writing such a table as if the feature were absent returns wrong rows or leaves a table
that the engines cannot read, so each check here refuses *before* anything is read or
written, naming the feature and the option that enabled it. An INSERT into a row-tracking
table is maintained: its commit assigns the new files' first row ids as Java's does.

    >>> from schemalab.schema.table_schema import TableSchema
    >>> from schemalab.types.model import DataField, INT
    >>> s = TableSchema(0, (DataField(0, "a", INT()),), 0, options={"row-tracking.enabled": "true"})
    >>> try:
    ...     check_writable_features(s, "default.t", "DELETE")
    ... except UnsupportedFeatureError as e:
    ...     print(e.rule, "|", e.feature, "|", e.option)
    unsupported-feature | row tracking | row-tracking.enabled
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from schemalab.engine.blob_join import is_blob
from schemalab.errors import UnsupportedFeatureError
from schemalab.paimon.blob import contains_blob
from schemalab.paimon.manifest import FileKind, FileSource, ManifestEntry
from schemalab.types.model import (
    AtomicType,
    DataType,
    VectorType,
)
from schemalab.types.visitor import contains

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.schema.table_schema import TableSchema

ROW_TRACKING = "row-tracking.enabled"
DATA_EVOLUTION = "data-evolution.enabled"
_DEFAULT_VALUE_OPTION = re.compile(r"^fields\.(.+)\.default-value$")


def _enabled(schema: TableSchema, option: str) -> bool:
    return schema.effective_options().get(option, "false").strip().lower() == "true"


def check_readable_features(schema: TableSchema, table: str) -> None:
    """Refuse a read in ``schema`` that schemalab would get wrong."""
    for key, value in sorted(schema.effective_options().items()):
        m = _DEFAULT_VALUE_OPTION.match(key)
        if m:
            raise UnsupportedFeatureError(
                f"Read of {table} refused: option '{key}' = '{value}' gives column "
                f"{m.group(1)} a default value that Java Paimon 1.0 returns in place of every "
                "NULL it reads and Java Paimon 2.0 ignores; schemalab cannot tell which of "
                "the two this table's readers expect, so it returns neither silently.",
                table=table, column=m.group(1), feature="default value", option=key)


def data_evolution_enabled(schema: TableSchema) -> bool:
    """Data evolution is on: a read merges files of some columns by row id."""
    return _enabled(schema, DATA_EVOLUTION)


def row_tracking_enabled(schema: TableSchema) -> bool:
    """Row tracking is on (data evolution implies it)."""
    return _enabled(schema, ROW_TRACKING) or _enabled(schema, DATA_EVOLUTION)


def assign_row_ids(entries: Sequence[ManifestEntry], snapshot_id: int, first_row_id: int
                   ) -> tuple[list[ManifestEntry], int]:
    """Java Paimon's row-tracking commit (``RowTrackingCommitUtils``): each new file of the
    commit (an APPEND file with no first row id) takes the next row ids, in commit order, and
    its rows the snapshot id as their sequence number; the snapshot records the next free row
    id (``nextRowId``). Returns the entries and that id.

        >>> from schemalab.paimon.manifest import DataFileMeta, FileKind
        >>> f = DataFileMeta("a.parquet", 10, 4, file_source=0)
        >>> out, nxt = assign_row_ids([ManifestEntry(FileKind.ADD, b"", 0, 1, f)] * 2, 3, 4)
        >>> [(e.file.first_row_id, e.file.min_sequence_number) for e in out], nxt
        ([(4, 3), (8, 3)], 12)
    """
    out = []
    start = first_row_id
    for e in entries:
        f = e.file
        if e.kind == FileKind.ADD and f.file_source == FileSource.APPEND \
                and f.first_row_id is None:
            if f.min_sequence_number == 0:  # a new file: every row written by this snapshot
                f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
            elif f.max_sequence_number == 0:
                f = replace(f, max_sequence_number=snapshot_id)
            e = replace(e, file=replace(f, first_row_id=start))
            start += f.row_count
        out.append(e)
    return out, start


def check_writable_features(schema: TableSchema, table: str, operation: str) -> None:
    """Refuse ``operation`` (INSERT, DELETE, COMPACT, ...) on a table whose features a write
    by schemalab would not maintain. An INSERT into a row-tracking table is maintained: the
    commit assigns row ids as Java's does (:func:`assign_row_ids`); so is the compaction of
    an append table (:mod:`schemalab.paimon.write.compact_rows`)."""
    blobs = [f for f in schema.fields if contains_blob(f.type)]
    if blobs:
        what = "is a BLOB" if is_blob(blobs[0].type) else "holds BLOBs"
        raise UnsupportedFeatureError(
            f"{operation} into {table} refused: column {blobs[0].name} {what}, whose values "
            "Paimon keeps apart from the rows in .blob files (one per data file, joined by "
            "row id); schemalab reads them but does not write them yet. Nothing was written.",
            table=table, column=blobs[0].name, feature="BLOB columns",
            option="blob-field" if "blob-field" in schema.effective_options() else None)
    _check_vectors(schema, table, operation)
    appends = operation.startswith("INSERT") or operation.startswith("APPEND") \
        or operation.startswith("OVERWRITE")
    # a compaction keeps row ids (schemalab.paimon.write.compact_rows)
    appends = appends or (operation.startswith("COMPACT") and not schema.primary_keys)
    for option, feature, what in (
            (DATA_EVOLUTION, "data evolution",
             "its files carry row ids that UPDATEs refer to, which a rewrite must keep"),
            (ROW_TRACKING, "row tracking",
             "a rewritten file must keep each row's _ROW_ID and _SEQUENCE_NUMBER in its own "
             "columns")):
        if _enabled(schema, option) and not appends:
            raise UnsupportedFeatureError(
                f"{operation} into {table} refused: the table uses {feature} ('{option}' = "
                f"'true'), and {what}; schemalab does not write them yet, and the engines "
                "would read the table wrong after its commit. Nothing was written.",
                table=table, feature=feature, option=option)
    if operation != "INSERT":
        return
    for f in schema.fields:
        if f.default_value is not None and not isinstance(f.type, AtomicType):
            raise UnsupportedFeatureError(
                f"INSERT into {table} refused: column {f.name} has the default value "
                f"{f.default_value} (defaultValue in the schema, Paimon 1.2+), which Paimon "
                f"writes in place of an omitted or NULL value; schemalab applies defaults of "
                f"atomic types, not of {f.type.sql()} yet. Nothing was written.",
                table=table, column=f.name, feature="default value", option="defaultValue")


def _check_vectors(schema: TableSchema, table: str, operation: str) -> None:
    """VECTOR columns are written by INSERT (and its commit) where Java Paimon 2.0 keeps them
    in the data file, as a list of the element type (Java's ParquetSchemaConverter and
    AvroSchemaConverter treat a VECTOR as an ARRAY); each value's length and elements are
    checked as Java's writer checks them (:func:`schemalab.engine.frames.to_frame`). Refused
    by name: ORC tables (Java 2.0 creates none: "Unsupported type: VECTOR"), vector-store
    files (``vector.file.format``), and the rewrites (DELETE, COMPACT) schemalab does not
    do for VECTOR tables yet."""
    columns = [f for f in schema.fields if contains(f.type, _is_vector)]
    if not columns:
        return
    options = schema.effective_options()
    column = next((f for f in columns if not isinstance(f.type, VectorType)), columns[0])
    what = "is a VECTOR" if isinstance(column.type, VectorType) else "holds a VECTOR"
    where: tuple[str, str | None, str] | None = None
    if not isinstance(column.type, VectorType):
        where = ("VECTOR columns", None, "schemalab checks the length of a VECTOR column, "
                 "not of one inside a nested type")
    elif options.get("vector.file.format"):
        where = ("vector-store files", "vector.file.format",
                 f"Paimon keeps it apart from the rows, in '{options['vector.file.format']}' "
                 "vector-store files, which schemalab does not write")
    elif options.get("file.format", "parquet").strip().lower() == "orc":
        where = ("VECTOR columns", "file.format",
                 "the table's file format is ORC, in which Java Paimon 2.0 stores no VECTOR "
                 "('Unsupported type: VECTOR')")
    elif not operation.startswith(("INSERT", "APPEND", "OVERWRITE")):
        where = ("VECTOR columns", None,
                 f"schemalab writes VECTOR columns by INSERT only, not by "
                 f"{operation.split()[0]} yet")
    if where is not None:
        feature, option, why = where
        raise UnsupportedFeatureError(
            f"{operation} into {table} refused: column {column.name} {what}, and {why}. "
            "Nothing was written.", table=table, column=column.name, feature=feature,
            option=option)


def _is_vector(t: DataType) -> bool:
    return isinstance(t, VectorType)
