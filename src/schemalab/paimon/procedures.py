"""Paimon's tag and branch procedures, as its Spark procedures name them and Java's
TagManager, FileSystemBranchManager, RollbackHelper and ExpireSnapshotsImpl lay out files:
``create_tag``, ``replace_tag``, ``rename_tag``, ``delete_tag``, ``create_branch``,
``delete_branch``, ``fast_forward``, ``rollback``, ``expire_snapshots``. ``t`` is the main
branch's table object.

Every refusal comes before anything is written and carries Java's message. Files are created
create-if-absent (two racing ``create_tag`` calls: one wins, the other is refused), and a
file replaced in place (a fast-forward's schema and snapshot files) is deleted and written
anew through :mod:`schemalab.fileio`, so a checkpoint restores it.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from schemalab import fileio
from schemalab.errors import NotFoundError, SchemaLabError
from schemalab.paimon import gc
from schemalab.paimon import refs as paimon_refs
from schemalab.paimon.snapshot import EARLIEST, LATEST, SNAPSHOT_PREFIX, Snapshot
from schemalab.refs import MAIN, check_ref_name

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.table import Table


def _refuse(t: Table, message: str, *, rule: str) -> SchemaLabError:
    return SchemaLabError(f"Table {t.name}: {message}", table=t.name, rule=rule)


def _main(t: Table, what: str) -> None:
    if t.branch_name != MAIN:
        raise _refuse(t, f"{what} runs on the table, not on branch {t.branch_name}",
                      rule="procedure-arguments")


def _tag_target(t: Table, tag: str, snapshot: int | None, time_retained: str | None,
                verb: str) -> tuple[Snapshot, int | None]:
    """The snapshot a tag is to name (default: the latest) and its retention in seconds,
    checked as Java checks them before ``verb``-ing tag ``tag``."""
    check_ref_name(tag, "tag", table=t.name)
    retained = None if time_retained is None else \
        paimon_refs.parse_retention(time_retained, table=t.name)
    if snapshot is not None:
        return t.snapshot(snapshot), retained  # from snapshot/ or a tag; refused when neither
    snap = t.latest_snapshot
    if snap is None:
        raise _refuse(t, f"Cannot {verb} tag because latest snapshot doesn't exist.",
                      rule="snapshot-must-exist")
    return snap, retained


def create_tag(t: Table, tag: str, snapshot: int | None = None,
               time_retained: str | None = None) -> Snapshot:
    """Tag ``snapshot`` (default: the latest) as ``tag``; with ``time_retained`` ('1 d')
    the tag records its create time and retention, as Java's ``Tag``."""
    snap, retained = _tag_target(t, tag, snapshot, time_retained, "create")
    path = paimon_refs.tag_path(t.meta_path, tag)
    fileio.makedirs(os.path.dirname(path))
    if fileio.exists(path) or not fileio.write_new(path,
                                                    paimon_refs.tag_json(snap, retained)):
        raise _refuse(t, f"Tag '{tag}' already exists.", rule="tag-must-be-new")
    return snap


def replace_tag(t: Table, tag: str, snapshot: int | None = None,
                time_retained: str | None = None) -> Snapshot:
    """Point existing tag ``tag`` at ``snapshot`` (default: the latest), as Java's
    ``replaceTag``: the snapshot is found first, then the tag must exist; its file is
    written anew (Java overwrites it)."""
    snap, retained = _tag_target(t, tag, snapshot, time_retained, "replace")
    path = paimon_refs.tag_path(t.meta_path, tag)
    if not fileio.exists(path):
        raise NotFoundError(f"Table {t.name}: Tag '{tag}' doesn't exist.", table=t.name,
                            rule="ref-must-exist")
    fileio.write_replace(path, paimon_refs.tag_json(snap, retained))
    return snap


def rename_tag(t: Table, tag: str, target: str) -> None:
    """Rename tag ``tag`` to ``target`` (Java's ``TagManager.renameTag``: the tag must exist
    and the new name must be free). The new file is created create-if-absent before the old
    one goes, so a racing rename to the same name loses cleanly."""
    check_ref_name(tag, "tag", table=t.name)
    check_ref_name(target, "tag", table=t.name)
    src = paimon_refs.tag_path(t.meta_path, tag)
    if not fileio.exists(src):
        raise NotFoundError(f"Table {t.name}: Tag '{tag}' doesn't exist.", table=t.name,
                            rule="ref-must-exist")
    dst = paimon_refs.tag_path(t.meta_path, target)
    if fileio.exists(dst) or not fileio.write_new(dst, fileio.read_bytes(src)):
        raise _refuse(t, f"Tag '{target}' already exists.", rule="tag-must-be-new")
    fileio.delete(src)


def delete_tag(t: Table, tags: str) -> list[str]:
    """Delete the tags named (comma-separated, as the procedure takes them); a name that is
    no tag is skipped, as Java does. When the tagged snapshot has expired, the files only it
    used go too. Returns the tags deleted."""
    names = [n.strip() for n in tags.split(",")]
    for n in names:
        check_ref_name(n, "tag", table=t.name)
    deleted = []
    for name in names:
        try:
            tag = paimon_refs.read_tag(t.meta_path, name, table=t.name)
        except FileNotFoundError:
            continue
        fileio.delete(paimon_refs.tag_path(t.meta_path, name))
        deleted.append(name)
        if tag.snapshot.id not in t.snapshot_manager.list_ids():
            gc.delete_unused(t.path, gc.files_of(t.path, [tag.snapshot], t.schema_manager))
    return deleted


def _check_new_branch(t: Table, branch: str) -> None:
    if branch == MAIN:
        raise _refuse(t, "Branch name 'main' is the default branch and cannot be used.",
                      rule="main-branch-is-fixed")
    check_ref_name(branch, "branch", table=t.name)
    if branch.isdigit():
        raise _refuse(t, f"Branch name cannot be pure numeric string but is '{branch}'.",
                      rule="valid-ref-name")
    if paimon_refs.branch_exists(t.path, branch):
        raise _refuse(t, f"Branch name '{branch}' already exists.", rule="branch-must-be-new")


def create_branch(t: Table, branch: str, tag: str | None = None) -> None:
    """Branch ``branch`` from tag ``tag`` (its tag, snapshot and schemas up to the
    snapshot's copied into the branch) or, without a tag, empty (today's schemas only), as
    Java's FileSystemBranchManager. The branch's schema-0, written create-if-absent, is the
    claim: of two racing calls one creates the branch."""
    _main(t, "create_branch")
    _check_new_branch(t, branch)
    snap = None
    if tag is not None:
        check_ref_name(tag, "tag", table=t.name)
        try:
            snap = paimon_refs.read_tag(t.meta_path, tag, table=t.name).snapshot
        except FileNotFoundError:
            raise NotFoundError(f"Table {t.name}: Tag '{tag}' doesn't exist.", table=t.name,
                                rule="ref-must-exist") from None
    upto = t.schema.id if snap is None else snap.schema_id
    dest = paimon_refs.branch_path(t.path, branch)
    ids = [i for i in t.schema_manager.list_ids() if i <= upto]
    for n, i in enumerate(ids):
        data = fileio.read_bytes(t.schema_manager.path(i))
        target = os.path.join(dest, "schema", os.path.basename(t.schema_manager.path(i)))
        fileio.makedirs(os.path.dirname(target))
        if not fileio.write_new(target, data) and n == 0:
            raise _refuse(t, f"Branch name '{branch}' already exists.", rule="branch-must-be-new")
    if snap is not None and tag is not None:
        _copy_new(paimon_refs.tag_path(t.meta_path, tag), paimon_refs.tag_path(dest, tag))
        src = t.snapshot_manager.path(snap.id)
        target = os.path.join(dest, "snapshot", f"{SNAPSHOT_PREFIX}{snap.id}")
        if fileio.exists(src):
            _copy_new(src, target)
        else:  # expired, kept by the tag: written from the tag, as Java does
            fileio.makedirs(os.path.dirname(target))
            fileio.write_new(target, paimon_refs.tag_json(snap, None))


def _copy_new(src: str, dst: str) -> None:
    fileio.makedirs(os.path.dirname(dst))
    fileio.write_new(dst, fileio.read_bytes(src))


def _copy_over(src: str, dst: str) -> None:
    """Replace ``dst`` by ``src``'s bytes: deleted (a checkpoint keeps it) and written anew."""
    data = fileio.read_bytes(src)
    fileio.makedirs(os.path.dirname(dst))
    if fileio.exists(dst):
        if fileio.read_bytes(dst) == data:
            return
        fileio.delete(dst)
    fileio.write_new(dst, data)


def delete_branch(t: Table, branches: str) -> list[str]:
    """Delete the branches named (comma-separated). Java refuses a name that is no branch;
    ``main`` is no branch to delete."""
    _main(t, "delete_branch")
    names = [n.strip() for n in branches.split(",")]
    for name in names:
        if name == MAIN:
            raise _refuse(t, "Branch name 'main' doesn't exist: the main branch is the table "
                          "and cannot be deleted.", rule="main-branch-is-fixed")
        check_ref_name(name, "branch", table=t.name)
        if not paimon_refs.branch_exists(t.path, name):
            raise NotFoundError(f"Table {t.name}: Branch name '{name}' doesn't exist.",
                                table=t.name, rule="ref-must-exist")
    for name in names:
        fileio.delete_dir(paimon_refs.branch_path(t.path, name))
    return names


def fast_forward(t: Table, branch: str) -> None:
    """Make main what branch ``branch`` is, as Java's fastForward: main's snapshots, schemas
    and tags from the branch's earliest snapshot on are replaced by the branch's. Refused
    (schemalab's rule) when main's head is not in the branch's history: Java would drop
    main's snapshots since the fork and leave their files under schema ids the branch's
    schema files then describe."""
    _main(t, "fast_forward")
    if branch == MAIN:
        raise _refuse(t, "Branch name 'main' do not use in fast-forward.",
                      rule="main-branch-is-fixed")
    check_ref_name(branch, "branch", table=t.name)
    if not paimon_refs.branch_exists(t.path, branch):
        raise NotFoundError(f"Table {t.name}: Branch name '{branch}' doesn't exist.",
                            table=t.name, rule="ref-must-exist")
    b = t.branch(branch)
    first = b.snapshot_manager.earliest_id()
    if first is None:
        raise _refuse(t, f"Cannot fast forward branch {branch}, because it does not have "
                      "snapshot.", rule="fast-forward-needs-descendant")
    _check_descendant(t, b, first)
    fork_schema = b.snapshot_manager.get(first).schema_id
    for sid in b.schema_manager.list_ids():
        if sid >= fork_schema:
            _copy_over(b.schema_manager.path(sid), t.schema_manager.path(sid))
    for sid in t.schema_manager.list_ids():
        if sid >= fork_schema and sid not in b.schema_manager.list_ids():
            fileio.delete(t.schema_manager.path(sid))
    for name in paimon_refs.list_tags(t.meta_path).valid:
        if paimon_refs.read_tag(t.meta_path, name).snapshot.id >= first:
            fileio.delete(paimon_refs.tag_path(t.meta_path, name))
    for sid in b.snapshot_manager.list_ids():
        _copy_over(b.snapshot_manager.path(sid), t.snapshot_manager.path(sid))
    for hint in (LATEST, EARLIEST):
        src = os.path.join(b.snapshot_manager.directory, hint)
        if fileio.exists(src):
            fileio.write_replace(os.path.join(t.snapshot_manager.directory, hint),
                                 fileio.read_bytes(src))
    for name in paimon_refs.list_tags(b.meta_path).valid:
        _copy_over(paimon_refs.tag_path(b.meta_path, name),
                   paimon_refs.tag_path(t.meta_path, name))
    t.schema_manager.refresh()


def _check_descendant(t: Table, b: Table, first: int) -> None:
    head = t.snapshot_manager.latest_id()
    if head is None:
        return
    mine = t.snapshot_manager.get(head)
    theirs = b.snapshot_manager.get(head) if head in b.snapshot_manager.list_ids() else None
    same = theirs is not None and (theirs.base_manifest_list, theirs.delta_manifest_list) == \
        (mine.base_manifest_list, mine.delta_manifest_list)
    if not same:
        raise _refuse(t, f"Cannot fast forward branch {b.branch_name}: main's head snapshot "
                      f"{head} is not in its history (it forked at snapshot {first}); "
                      f"fast-forwarding would drop main's snapshots after {first} up to {head}.",
                      rule="fast-forward-needs-descendant")


def rollback(t: Table, version: str | None = None, snapshot: int | None = None,
             tag: str | None = None) -> tuple[int | None, int]:
    """Roll main back to a snapshot or a tag (``version``: digits name a snapshot, anything
    else a tag), as Java's rollbackTo: later snapshots and tags go with the files only they
    used; a tag's expired snapshot is written back from the tag. Returns (previous latest
    snapshot id, current snapshot id)."""
    _main(t, "rollback")
    given = [x for x in (version, snapshot, tag) if x is not None and str(x).strip() != ""]
    if len(given) != 1:
        raise _refuse(t, "only can set one of version/snapshot/tag in RollbackProcedure.",
                      rule="procedure-arguments")
    if version is not None:
        text = str(version).strip()
        snapshot, tag = (int(text), None) if text.isdigit() else (None, text)
    latest = t.snapshot_manager.latest_id()
    if latest is None:
        raise _refuse(t, "Latest snapshot is null, can not rollback.", rule="snapshot-must-exist")
    if tag is not None:
        check_ref_name(tag, "tag", table=t.name)
        try:
            target = paimon_refs.read_tag(t.meta_path, tag, table=t.name).snapshot
        except FileNotFoundError:
            raise NotFoundError(f"Table {t.name}: Tag '{tag}' doesn't exist.", table=t.name,
                                rule="ref-must-exist") from None
    else:
        assert snapshot is not None
        kept = None if snapshot in t.snapshot_manager.list_ids() else \
            paimon_refs.tagged_snapshot(t, int(snapshot))
        if snapshot not in t.snapshot_manager.list_ids() and kept is None:
            raise _refuse(t, f"Rollback snapshot '{snapshot}' doesn't exist.",
                          rule="snapshot-must-exist")
        target = kept or t.snapshot_manager.get(int(snapshot))
    _roll_back_to(t, target)
    return latest, target.id


def _roll_back_to(t: Table, target: Snapshot) -> None:
    later = [i for i in t.snapshot_manager.list_ids() if i > target.id]
    dropped = [t.snapshot_manager.get(i) for i in later]
    later_tags = [n for n in paimon_refs.list_tags(t.meta_path).valid
                  if paimon_refs.read_tag(t.meta_path, n).snapshot.id > target.id]
    dropped += [paimon_refs.read_tag(t.meta_path, n).snapshot for n in later_tags]
    candidates = gc.files_of(t.path, dropped, t.schema_manager)
    path = t.snapshot_manager.path(target.id)
    if not fileio.exists(path):
        fileio.makedirs(os.path.dirname(path))
        fileio.write_new(path, paimon_refs.tag_json(target, None))
        fileio.write_replace(os.path.join(t.snapshot_manager.directory, EARLIEST),
                             str(target.id))
    fileio.write_replace(os.path.join(t.snapshot_manager.directory, LATEST), str(target.id))
    for i in sorted(later, reverse=True):
        fileio.delete(t.snapshot_manager.path(i))
    for n in later_tags:
        fileio.delete(paimon_refs.tag_path(t.meta_path, n))
    gc.delete_unused(t.path, candidates)


def expire_snapshots(t: Table, retain_max: int | None = None, retain_min: int | None = None,
                     older_than: str | None = None, max_deletes: int | None = None) -> int:
    """Expire main's oldest snapshots as Java's ExpireSnapshotsImpl: always beyond the newest
    ``retain_max`` (option ``snapshot.num-retained.max``), never within the newest
    ``retain_min`` (``snapshot.num-retained.min``, 10), in between those older than
    ``older_than`` (a 'yyyy-MM-dd HH:mm:ss' local time; default: now less
    ``snapshot.time-retained``, 1 h); at most ``max_deletes`` (``snapshot.expire.limit``,
    50). Files a kept snapshot, a tag
    or a branch uses stay. Returns the number of snapshots expired."""
    _main(t, "expire_snapshots")
    opts = t.options
    rmax = retain_max if retain_max is not None else \
        int(opts.get("snapshot.num-retained.max", 2**31 - 1))
    rmin = retain_min if retain_min is not None else \
        int(opts.get("snapshot.num-retained.min", 10))
    limit = max_deletes if max_deletes is not None else \
        int(opts.get("snapshot.expire.limit", 50))
    cutoff = _older_than_millis(t, older_than, opts)
    ids = t.snapshot_manager.list_ids()
    if not ids:
        return 0  # as Java: nothing to expire comes before the argument check
    if rmax < rmin or rmin < 1:
        raise _refuse(t, f"retainMax ({rmax}) must not be less than retainMin ({rmin}).",
                      rule="procedure-arguments")
    earliest, latest = ids[0], ids[-1]
    low = max(latest - rmax + 1, earliest)
    end = min(latest - rmin + 1, earliest + limit)
    stop = end
    for sid in range(low, end):
        # as Java: a snapshot expires only once the next one is older than the cutoff
        if sid + 1 in ids and cutoff <= t.snapshot_manager.get(sid + 1).time_millis:
            stop = sid
            break
    gone = [i for i in ids if i < stop]
    if not gone:
        return 0
    candidates = gc.files_of(t.path, [t.snapshot_manager.get(i) for i in gone],
                             t.schema_manager)
    fileio.write_replace(os.path.join(t.snapshot_manager.directory, EARLIEST), str(stop))
    for i in gone:
        fileio.delete(t.snapshot_manager.path(i))
    gc.delete_unused(t.path, candidates)
    return len(gone)


def _older_than_millis(t: Table, older_than: str | None, opts: dict[str, str]) -> int:
    import datetime as dt

    if older_than:
        try:
            when = dt.datetime.strptime(older_than.strip(), "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise _refuse(t, f"older_than {older_than!r} is not a 'yyyy-MM-dd HH:mm:ss' "
                          "time", rule="procedure-arguments") from None
        return int(when.timestamp() * 1000)
    retain = paimon_refs.parse_retention(opts.get("snapshot.time-retained", "1 h"),
                                         table=t.name)
    return int(time.time() * 1000) - retain * 1000
