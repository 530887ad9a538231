"""Paimon's Spark SQL for tags, as Paimon 2.0's Spark extensions run it
(``CreateOrReplaceTagExec``, ``DeleteTagExec``, ``RenameTagExec``, ``ShowTagsExec``):

- ``ALTER TABLE t CREATE TAG [IF NOT EXISTS] v [AS OF VERSION n] [RETAIN n DAYS|HOURS|MINUTES]``:
  the snapshot (default: the latest) tagged; an existing tag is an error ("Tag v is
  exists.") unless ``IF NOT EXISTS``;
- ``ALTER TABLE t [CREATE OR] REPLACE TAG v ..``: an existing tag re-pointed, a missing one
  created (by a plain ``REPLACE`` too, as Java's exec does; the procedure
  ``sys.replace_tag`` refuses a missing tag);
- ``ALTER TABLE t DELETE TAG [IF EXISTS] v``: a tag that does not exist is skipped (Java
  only logs it, with or without ``IF EXISTS``);
- ``ALTER TABLE t RENAME TAG v TO w``; ``SHOW TAGS t`` (one ``tag`` column, sorted).

The files are written as the ``sys.*_tag`` procedures write them
(:mod:`schemalab.paimon.procedures`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaLabError
from schemalab.paimon import procedures as proc

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.sql import IcebergRefStatement, PaimonTagStatement
    from schemalab.table import Table


def _tag_names(t: Table) -> list[str]:
    return sorted(r.name for r in t.refs if r.kind == "tag")


def create_or_replace_tag(t: Table, stmt: IcebergRefStatement) -> str:
    """``CREATE``/``REPLACE TAG``; the statement's message."""
    exists = stmt.ref in _tag_names(t)
    retained = None if stmt.max_ref_age_ms is None else f"{stmt.max_ref_age_ms // 1000} s"
    if (stmt.create or stmt.replace) and not exists:
        snap = proc.create_tag(t, stmt.ref, stmt.snapshot_id, retained)
        return f"Created tag {stmt.ref} of {t.name} at snapshot {snap.id}."
    if stmt.replace:
        snap = proc.replace_tag(t, stmt.ref, stmt.snapshot_id, retained)
        return f"Replaced tag {stmt.ref} of {t.name}: now snapshot {snap.id}."
    if stmt.if_not_exists:
        return f"Tag {stmt.ref} of {t.name} exists; nothing created."
    raise SchemaLabError(f"Table {t.name}: Tag {stmt.ref} is exists.", table=t.name,
                         rule="tag-must-be-new")


def tag_statement(t: Table, stmt: PaimonTagStatement) -> tuple[str, list[tuple[Any, ...]]]:
    """``DELETE TAG``, ``RENAME TAG`` or ``SHOW TAGS``: the message and, for ``SHOW TAGS``,
    its rows (column ``tag``)."""
    if stmt.action == "show":
        names = _tag_names(t)
        return f"{t.name} has {len(names)} tag(s).", [(n,) for n in names]
    if stmt.action == "rename":
        proc.rename_tag(t, stmt.tag, stmt.target)
        return f"Renamed tag {stmt.tag} of {t.name} to {stmt.target}.", []
    gone = proc.delete_tag(t, stmt.tag)  # names checked there, missing ones skipped
    missing = [n for n in (n.strip() for n in stmt.tag.split(",")) if n not in gone]
    return (f"Deleted tag(s) {', '.join(gone) or 'none'} of {t.name}"
            + (f" ({', '.join(missing)}: no such tag)" if missing else "") + "."), []
