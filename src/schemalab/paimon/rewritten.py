"""Rewritten histories: a data file whose own columns do not match the schema file that now
carries its schema id.

Java Paimon's fast-forward copies *every* schema file of the branch over main's (and deletes
main's from the fork's schema on), and pypaimon 2.1's copies the branch's snapshots but not
its schemas; either can leave a file of main's (kept by an older snapshot or a tag) under a
schema id whose file on disk now describes the branch's columns, or a branch's file under an
id whose file is main's. Field ids cannot tell: both lineages numbered their new columns
alike (``b`` on main and ``c`` on the branch are both field 2), so reading such a file by
either schema would put one column's values under another's name. Java reads it by the
schema file and does exactly that; schemalab refuses the read, naming the file.

The check is the one the read pays anyway: the file's footer (cached per file), its
top-level column names against the schema's field names, less Paimon's system columns
(``_KEY_*``, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, row tracking's). It runs for tables with
a ``branch/`` directory, the only ones a fast-forward can have rewritten.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from schemalab import fileio
from schemalab.engine.footer import file_fields
from schemalab.engine.plan import DataFile
from schemalab.errors import SchemaLabError
from schemalab.paimon.refs import BRANCH_DIR
from schemalab.schema.table_schema import TableSchema

_SYSTEM = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_ROW_ID"})


def _own_columns(f: DataFile) -> list[str]:
    return [x.name for x in file_fields(f.path, f.format)
            if x.name not in _SYSTEM and not x.name.startswith("_KEY_")]


def mismatches(files: Sequence[DataFile], schema_at: Callable[[int], TableSchema]
               ) -> list[tuple[DataFile, list[str], list[str]]]:
    """(file, its columns, its schema's columns) of each file whose columns are not its
    schema's."""
    out = []
    for f in files:
        mine = _own_columns(f)
        theirs = [x.name for x in schema_at(f.schema_id).fields]
        if mine != theirs:
            out.append((f, mine, theirs))
    return out


def check_files(table: str, table_path: str, files: Sequence[DataFile],
                schema_at: Callable[[int], TableSchema]) -> None:
    """Refuse (rule ``file-schema-rewritten``) when a file's columns are not those of the
    schema file its schema id names, on a table that has branches."""
    if not files or not fileio.list_names(os.path.join(table_path, BRANCH_DIR)):
        return
    bad = mismatches(files, schema_at)
    if not bad:
        return
    f, mine, theirs = bad[0]
    more = f" (and {len(bad) - 1} more file(s))" if len(bad) > 1 else ""
    shown = ", ".join(f"`{c}`" for c in mine)
    disk = ", ".join(f"`{c}`" for c in theirs)
    raise SchemaLabError(
        f"Table {table}: file {os.path.basename(f.path)} was written under a different schema "
        f"{f.schema_id} than the one on disk: it holds {shown}, schema {f.schema_id} on disk "
        f"has {disk}{more}. The history was rewritten (a fast-forward replaced main's schema "
        "files, or copied a branch's snapshots without its schemas); reading the file by "
        "this schema would put one column's values under another's name.",
        table=table, rule="file-schema-rewritten")
