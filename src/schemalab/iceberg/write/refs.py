"""Branches and tags of an Iceberg table schemalab writes, as Iceberg's Spark SQL extensions
make them: ``CreateOrReplaceBranchExec`` / ``CreateOrReplaceTagExec`` / ``DropBranchExec`` /
``DropTagExec`` calling ``ManageSnapshots`` (``UpdateSnapshotReferencesOperation``,
``SnapshotRef``'s builder checks, ``TableMetadata.Builder.setRef``), one commit each.

A ref is written into ``refs`` as ``SnapshotRefParser`` writes it: ``snapshot-id``, ``type``,
then ``min-snapshots-to-keep``, ``max-snapshot-age-ms``, ``max-ref-age-ms`` where set.
Refusals carry Iceberg's message, then the table (and for an unknown ref the refs it has);
nothing is written on a refusal, and a statement that changes nothing (``IF NOT EXISTS`` of
a ref that exists, a replace to the same snapshot) writes no metadata file, as Java's
transaction commits nothing then.

    >>> d = {"format-version": 2, "current-snapshot-id": 7, "snapshots": [
    ...     {"snapshot-id": 7, "timestamp-ms": 1}], "refs": {}}
    >>> from schemalab.sql.statements import IcebergRefStatement, TableName
    >>> s = IcebergRefStatement(TableName(None, "t"), "create", "tag", "v1", create=True,
    ...                         max_ref_age_ms=3600000)
    >>> apply_ref(d, s, "default.t")
    >>> d["refs"]
    {'main': {'snapshot-id': 7, 'type': 'branch'}, 'v1': {'snapshot-id': 7, 'type': 'tag', \
'max-ref-age-ms': 3600000}}
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from schemalab.errors import NotFoundError, SchemaLabError
from schemalab.iceberg.write import avro
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.tablemeta import add_snapshot, new_snapshot_id, now_ms
from schemalab.refs import MAIN, check_ref_name
from schemalab.sql.statements import IcebergRefStatement

T = TypeVar("T", bound=Any)

#: SnapshotRefParser's keys after snapshot-id and type, in its order
RETENTION_KEYS = ("min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms")
#: the totals SnapshotProducer carries from a parent (all 0 without one)
_TOTALS = ("total-records", "total-files-size", "total-data-files", "total-delete-files",
           "total-position-deletes", "total-equality-deletes")


def _fail(message: str, table: str, *, rule: str) -> SchemaLabError:
    cls = NotFoundError if rule == "ref-must-exist" else SchemaLabError
    return cls(f"{message} (table {table})", table=table, rule=rule)


def _ref_json(snapshot_id: int, kind: str, props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"snapshot-id": snapshot_id, "type": kind}
    out.update((k, props[k]) for k in RETENTION_KEYS if props.get(k) is not None)
    return out


def _refs(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The metadata's refs; a table with a current snapshot and no refs (v1) has ``main``
    at it, as Java's parser gives it."""
    refs = d.setdefault("refs", {})
    cur = d.get("current-snapshot-id")
    if MAIN not in refs and isinstance(cur, int) and cur != -1:
        refs[MAIN] = {"snapshot-id": cur, "type": "branch"}
    return refs


def _have(refs: dict[str, dict[str, Any]]) -> str:
    return ", ".join(f"{r.get('type', 'branch')} {n}" for n, r in sorted(refs.items())) or "none"


def apply_ref(d: dict[str, Any], stmt: IcebergRefStatement, table: str,
              empty_branch: Callable[[dict[str, Any], str], None] | None = None) -> None:
    """Apply one ref statement to metadata ``d`` in place (see the module). A branch created
    on a table without snapshots gets an empty snapshot (``createBranch(name)``'s fast
    append), written by ``empty_branch(d, name)``."""
    check_ref_name(stmt.ref, "tag" if stmt.kind == "tag" else "branch", table=table)
    refs = _refs(d)
    before = copy.deepcopy(refs)
    if stmt.action == "drop":
        _drop(refs, stmt, table)
    else:
        cur = d.get("current-snapshot-id")
        sid = stmt.snapshot_id if stmt.snapshot_id is not None else \
            (cur if isinstance(cur, int) and cur != -1 else None)
        done = (_branch if stmt.kind == "branch" else _tag)(refs, stmt, sid, table, d,
                                                            empty_branch)
        if done:
            _retention(refs[stmt.ref], stmt, table)
    _set_refs(d, before, refs, table)


def _exists(refs: dict[str, Any], stmt: IcebergRefStatement, table: str) -> SchemaLabError:
    rule = "branch-must-be-new" if stmt.kind == "branch" else "tag-must-be-new"
    return _fail(f"Ref {stmt.ref} already exists", table, rule=rule)


def _branch(refs: dict[str, Any], stmt: IcebergRefStatement, sid: int | None, table: str,
            d: dict[str, Any], empty_branch: Any) -> bool:
    """CreateOrReplaceBranchExec: False when there is nothing to do (IF NOT EXISTS)."""
    exists = stmt.ref in refs
    if stmt.replace and not (stmt.create and not exists):
        if sid is None:
            raise _fail(f"Cannot complete replace branch operation on {table}, main has no "
                        "snapshot", table, rule="iceberg-ref-snapshot")
        ref = _get(refs, stmt.ref, "branch", "Branch", table)
        refs[stmt.ref] = {**ref, "snapshot-id": sid}
        return True
    if exists and stmt.if_not_exists and not stmt.replace:
        return False
    if exists:
        raise _exists(refs, stmt, table)
    if sid is None:  # ManageSnapshots.createBranch(name): an empty snapshot on the branch
        if empty_branch is None:
            raise _fail(f"Cannot create branch {stmt.ref}: the table has no snapshot", table,
                        rule="iceberg-ref-snapshot")
        empty_branch(d, stmt.ref)
        return True
    refs[stmt.ref] = {"snapshot-id": sid, "type": "branch"}
    return True


def _tag(refs: dict[str, Any], stmt: IcebergRefStatement, sid: int | None, table: str,
         d: dict[str, Any], empty_branch: Any) -> bool:
    """CreateOrReplaceTagExec."""
    if sid is None:
        raise _fail(f"Cannot complete create or replace tag operation on {table}, main has "
                    "no snapshot", table, rule="iceberg-ref-snapshot")
    exists = stmt.ref in refs
    if stmt.replace and not (stmt.create and not exists):
        ref = _get(refs, stmt.ref, "tag", "Tag", table)
        refs[stmt.ref] = {**ref, "snapshot-id": sid}
        return True
    if exists and stmt.if_not_exists:
        return False
    if exists:
        raise _exists(refs, stmt, table)
    refs[stmt.ref] = {"snapshot-id": sid, "type": "tag"}
    return True


def _get(refs: dict[str, Any], name: str, kind: str, word: str, table: str) -> dict[str, Any]:
    ref = refs.get(name)
    if ref is None:
        raise _fail(f"{word} does not exist: {name}; refs: {_have(refs)}", table,
                    rule="ref-must-exist")
    if ref.get("type", "branch") != kind:
        other = "tag" if kind == "branch" else "branch"
        raise _fail(f"Ref {name} is a {other} not a {kind}", table, rule="iceberg-ref-kind")
    return dict(ref)


def _retention(ref: dict[str, Any], stmt: IcebergRefStatement, table: str) -> None:
    """``setMinSnapshotsToKeep``, ``setMaxSnapshotAgeMs``, ``setMaxRefAgeMs`` in the Exec's
    order, each checked as ``SnapshotRef.Builder`` checks it."""
    tag = ref.get("type") == "tag"
    checks = (("min-snapshots-to-keep", stmt.min_snapshots_to_keep, "minSnapshotsToKeep",
               "Min snapshots to keep must be greater than 0"),
              ("max-snapshot-age-ms", stmt.max_snapshot_age_ms, "maxSnapshotAgeMs",
               "Max snapshot age must be greater than 0 ms"),
              ("max-ref-age-ms", stmt.max_ref_age_ms, None,
               "Max reference age must be greater than 0"))
    for key, value, java_name, positive in checks:
        if value is None:
            continue
        if tag and java_name:
            raise _fail(f"Tags do not support setting {java_name}", table,
                        rule="iceberg-ref-retention")
        if value <= 0:
            raise _fail(positive, table, rule="iceberg-ref-retention")
        ref[key] = value


def _drop(refs: dict[str, Any], stmt: IcebergRefStatement, table: str) -> None:
    """DropBranchExec / DropTagExec: removeBranch / removeTag unless IF EXISTS finds none."""
    if stmt.ref not in refs and stmt.if_exists:
        return
    if stmt.kind == "branch" and stmt.ref == MAIN:
        raise _fail("Cannot remove main branch", table, rule="main-branch-is-fixed")
    _get(refs, stmt.ref, stmt.kind, "Branch" if stmt.kind == "branch" else "Tag", table)
    del refs[stmt.ref]


def _set_refs(d: dict[str, Any], before: dict[str, Any], refs: dict[str, Any],
              table: str) -> None:
    """``TableMetadata.Builder.setRef`` for every ref that changed: its snapshot must be
    in the table; ``main`` moves the current snapshot and logs it."""
    snapshots = {s["snapshot-id"] for s in d.get("snapshots", [])}
    for name, ref in refs.items():
        ref = _ref_json(ref["snapshot-id"], ref.get("type", "branch"), ref)
        refs[name] = ref
        if before.get(name) == ref:
            continue
        if ref["snapshot-id"] not in snapshots:
            raise _fail(f"Cannot set {name} to unknown snapshot: {ref['snapshot-id']}", table,
                        rule="iceberg-ref-snapshot")
        if name == MAIN and d.get("current-snapshot-id") != ref["snapshot-id"]:
            d["current-snapshot-id"] = ref["snapshot-id"]
            d.setdefault("snapshot-log", []).append({"timestamp-ms": now_ms(),
                                                     "snapshot-id": ref["snapshot-id"]})
    if MAIN in before and MAIN not in refs:  # TableMetadata.Builder.removeRef(main)
        d["current-snapshot-id"] = -1


def empty_append(table_path: str) -> Callable[[dict[str, Any], str], None]:
    """``newFastAppend().toBranch(name)`` with no files: a snapshot whose manifest list is
    empty, summary as ``SnapshotSummary`` has it for nothing added."""
    def add(d: dict[str, Any], branch: str) -> None:
        version = int(d.get("format-version", 2))
        sid = new_snapshot_id()
        seq = int(d.get("last-sequence-number", 0)) + 1 if version >= 2 else 0
        first_row_id = int(d.get("next-row-id", 0)) if version >= 3 else None
        name = f"snap-{sid}-1-{uuid.uuid4()}.avro"
        avro.write_manifest_list(os.path.join(table_path, "metadata", name), version=version,
                                 snapshot_id=sid, parent_id=None, sequence_number=seq,
                                 manifests=[], first_row_id=first_row_id)
        snap: dict[str, Any] = {}
        if version >= 2:
            snap["sequence-number"] = seq
        snap["snapshot-id"] = sid
        snap["timestamp-ms"] = now_ms()
        snap["summary"] = {"operation": "append", "changed-partition-count": "0",
                           **{k: "0" for k in _TOTALS}}
        snap["manifest-list"] = f"{str(d['location']).rstrip('/')}/metadata/{name}"
        snap["schema-id"] = d.get("current-schema-id", 0)
        if version >= 3:
            snap["first-row-id"] = first_row_id
            snap["added-rows"] = 0
        add_snapshot(d, snap, branch)
    return add


def commit_if_changed(where: str | commits.CommitTarget, table: str,
                      change: Callable[[dict[str, Any], bool], dict[str, Any]]) -> bool:
    """Commit ``change`` to ``where`` (a table path, or a commit target) unless it leaves the
    current metadata as it is (then no file is written, as Java's transaction commits
    nothing). ``change(d, dry)`` is first tried on a copy with ``dry`` True (it must write no
    file then). True when a commit was made."""
    target = commits.target_of(where, table)
    _, base = target.current()
    _refs(base)  # a v1 table's implicit main is no change
    if change(copy.deepcopy(base), True) == base:
        return False
    commits.commit(target, table, lambda d: change(d, False))
    return True


def dry_empty_branch(d: dict[str, Any], branch: str) -> None:
    """:func:`empty_append`'s change without its manifest list (for a dry run)."""
    sid = new_snapshot_id()
    d.setdefault("snapshots", []).append({"snapshot-id": sid, "timestamp-ms": now_ms()})
    d.setdefault("refs", {})[branch] = {"snapshot-id": sid, "type": "branch"}


# ---- Spark's identifiers for refs: t.branch_dev, t.tag_v1, t.snapshot_id_N ---------------


def select(root: T, selector: str, value: str) -> T:
    """The table ``root`` as Iceberg's ``SparkCatalog`` loads ``root.<selector>_<value>``
    (Iceberg 1.12, Spark 4.1): ``branch`` → the branch (its head, the table's current
    schema; it must exist); ``tag`` → Spark's ``VERSION AS OF '<value>'`` (a number: that
    snapshot; a tag: its snapshot in the snapshot's schema; a branch: the branch);
    ``snapshot_id`` → that snapshot in its schema. A tag or snapshot selection is read-only
    (``selected`` is set on it)."""
    md = root.metadata
    if selector == "branch":
        ref = md.refs.get(value)
        if value != MAIN and ref is None:
            raise _fail(f"Cannot use branch (does not exist): {value}", root.name,
                        rule="ref-must-exist")
        if ref is None or str(ref.get("type", "branch")) == "branch":
            return root.branch(value)  # type: ignore[no-any-return]
        # a tag named as a branch: Spark reads its snapshot in the table's schema; a write
        # is refused when it targets it (SnapshotProducer.targetBranch)
        view = copy.copy(root)
        view.metadata = dataclasses.replace(md, current_snapshot_id=int(ref["snapshot-id"]))
        view.name = f"{root.name}.branch_{value}"
        view.branch_name = value
        view._root_table = root
        return view
    sid: int | None = None
    if selector == "snapshot_id" or _is_long(value):
        sid = int(value)
    else:
        ref = md.refs.get(value)
        if ref is None:
            raise _fail(f"Cannot find matching snapshot ID or reference name for version "
                        f"{value}; refs: {_have(dict(md.refs))}", root.name, rule="ref-must-exist")
        if str(ref.get("type", "branch")) == "branch":
            return root.branch(value)  # type: ignore[no-any-return]
        sid = int(ref["snapshot-id"])
    snap = root.snapshot(sid)
    view = copy.copy(root)
    view.metadata = dataclasses.replace(md, current_snapshot_id=sid,
                                        current_schema_id=root.snapshot_schema_id(snap))
    view.name = f"{root.name}.{selector}_{value}"
    view.selected = (selector, value)
    view._root_table = root
    return view


def _is_long(text: str) -> bool:
    """Guava's ``Longs.tryParse`` succeeds (what Spark's time travel takes for an id)."""
    return re.fullmatch(r"-?[0-9]+", text) is not None and \
        -(1 << 63) <= int(text) < (1 << 63)
