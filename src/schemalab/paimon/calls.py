"""``CALL sys.<procedure>(...)`` for Paimon's compact, tag, branch, rollback and expire procedures
(arguments named or positional):
their argument names as Paimon's Spark procedures declare them, their result rows as those
procedures return them (see :mod:`schemalab.paimon.procedures` for what each does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.errors import SqlError
from schemalab.paimon import procedures as proc

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.table import Table

#: procedure → (required arguments, optional arguments), as Paimon 2.0's Spark procedures
#: (in the order Java declares them: positional arguments take these names in turn)
ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "create_tag": (("table", "tag"), ("snapshot", "time_retained")),
    "replace_tag": (("table", "tag"), ("snapshot", "time_retained")),
    "rename_tag": (("table", "tag", "target_tag"), ()),
    "delete_tag": (("table", "tag"), ()),
    "create_branch": (("table", "branch"), ("tag", "ignoreifexists")),
    "delete_branch": (("table", "branch"), ()),
    "fast_forward": (("table", "branch"), ()),
    "rollback": (("table",), ("version", "snapshot", "tag")),
    "expire_snapshots": (("table",), ("retain_max", "retain_min", "older_than",
                                      "max_deletes", "options")),
}
#: the arguments of ``sys.compact`` in Java's order (``where``, ``options``,
#: ``partition_idle_time`` and ``buckets`` are refused by name)
_COMPACT_ARGUMENTS = ("table", "partitions", "compact_strategy", "order_strategy", "order_by",
                      "where", "options", "partition_idle_time", "buckets")


@dataclass(frozen=True)
class CallResult:
    message: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    row_schema: str


def procedure_name(name: str) -> str | None:
    """``create_tag`` for ``sys.create_tag`` (or ``create_tag``), None for others."""
    short = name.lower().removeprefix("sys.")
    return short if short in ARGUMENTS else None


def arguments(procedure: str, given: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The arguments of ``CALL procedure(...)`` by lower-cased name, checked against what
    the procedure takes (``sys.compact`` or one of :data:`ARGUMENTS`). Positional
    arguments (no name) take the procedure's parameter names in order, as Paimon's
    ``PaimonProcedureResolver`` maps them; named and positional ones do not mix."""
    other = procedure_name(procedure)
    args = _by_name(procedure, other, given)
    if other is not None:
        check_arguments(other, args)
    elif procedure.lower() in ("sys.compact", "compact"):
        _check_compact(procedure, args)
    else:
        raise SqlError(f"Unsupported procedure: CALL {procedure}; schemalab runs "
                       "CALL sys.compact(table => 'db.t' [, partitions => 'p=1;p=2'] "
                       "[, order_strategy => 'order', order_by => 'a,b']) and sys."
                       + ", sys.".join(ARGUMENTS), table=args.get("table"),
                       rule="unsupported-statement")
    return args


def _by_name(procedure: str, other: str | None,
             given: Sequence[tuple[str, str]]) -> dict[str, str]:
    positional = [value for name, value in given if not name]
    if not positional:
        return {k.lower(): v for k, v in given}
    table = positional[0]
    if len(positional) != len(given):
        raise SqlError(f"CALL {procedure}: Cannot mix named and positional arguments.",
                       table=table, rule="procedure-arguments")
    if other is not None:
        order: tuple[str, ...] = ARGUMENTS[other][0] + ARGUMENTS[other][1]
    elif procedure.lower() in ("sys.compact", "compact"):
        order = _COMPACT_ARGUMENTS
    else:
        return {"table": table}  # the procedure is refused by name next
    if len(positional) > len(order):
        raise SqlError(f"CALL {procedure}: Too many arguments for procedure (it takes "
                       f"{', '.join(order)})", table=table, rule="procedure-arguments")
    return dict(zip(order, positional, strict=False))


def _check_compact(procedure: str, args: dict[str, str]) -> None:
    name = args.get("table")
    unknown = [k for k in args if k not in _COMPACT_ARGUMENTS]
    if unknown or name is None:
        what = f"unknown argument {unknown[0]}" if unknown else "no table argument"
        raise SqlError(f"CALL {procedure}: {what}; it takes table, partitions, "
                       "order_strategy, order_by, compact_strategy", table=name,
                       rule="compact-arguments")
    for unsupported in ("where", "options", "partition_idle_time", "buckets"):
        if args.get(unsupported):
            raise SqlError(f"CALL {procedure}: argument {unsupported} is not supported "
                           "by schemalab; select partitions with partitions => "
                           "'p1=v1,p2=v2;p1=v3'", table=name, rule="compact-arguments")
    strategy = (args.get("compact_strategy") or "full").lower()
    if strategy not in ("full", "minor"):
        raise SqlError(f"The compact strategy only supports 'full' or 'minor', but "
                       f"'{strategy}' is configured.", table=name, rule="compact-arguments")


def check_arguments(procedure: str, args: dict[str, str]) -> None:
    required, optional = ARGUMENTS[procedure]
    table = args.get("table")
    unknown = [k for k in args if k not in required + optional]
    missing = [k for k in required if not args.get(k)]
    if unknown or missing:
        what = f"unknown argument {unknown[0]}" if unknown else f"no {missing[0]} argument"
        raise SqlError(f"CALL sys.{procedure}: {what}; it takes "
                       f"{', '.join(required + optional)}", table=table,
                       rule="procedure-arguments")
    if args.get("options"):
        raise SqlError(f"CALL sys.{procedure}: argument options is not supported by "
                       "schemalab", table=table, rule="procedure-arguments")


def _int(args: dict[str, str], name: str, table: Table) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise SqlError(f"CALL: argument {name} of table {table.name} must be a number, not "
                       f"{value!r}", table=table.name, rule="procedure-arguments") from None


def _ok(message: str) -> CallResult:
    return CallResult(message, ["result"], [(True,)], "result BOOLEAN")


def run(procedure: str, t: Table, args: dict[str, str]) -> CallResult:
    """Run ``procedure`` on table ``t`` (main) with ``args`` (lower-cased names)."""
    return _RUNNERS[procedure](t, args)


def _compact(t: Table, a: dict[str, str]) -> CallResult:
    result = t.compact(partitions=a.get("partitions"), order_strategy=a.get("order_strategy"),
                       order_by=a.get("order_by") or ())
    return CallResult(str(result), ["result"], [(True,)], "result BOOLEAN")


def _create_tag(t: Table, a: dict[str, str]) -> CallResult:
    snap = proc.create_tag(t, a["tag"], _int(a, "snapshot", t), a.get("time_retained"))
    return _ok(f"Created tag {a['tag']} of {t.name} at snapshot {snap.id}.")


def _replace_tag(t: Table, a: dict[str, str]) -> CallResult:
    snap = proc.replace_tag(t, a["tag"], _int(a, "snapshot", t), a.get("time_retained"))
    return _ok(f"Replaced tag {a['tag']} of {t.name}: now snapshot {snap.id}.")


def _rename_tag(t: Table, a: dict[str, str]) -> CallResult:
    proc.rename_tag(t, a["tag"], a["target_tag"])
    return _ok(f"Renamed tag {a['tag']} of {t.name} to {a['target_tag']}.")


def _delete_tag(t: Table, a: dict[str, str]) -> CallResult:
    gone = proc.delete_tag(t, a["tag"])
    return _ok(f"Deleted tag(s) {', '.join(gone) or 'none'} of {t.name}.")


def _create_branch(t: Table, a: dict[str, str]) -> CallResult:
    if (a.get("ignoreifexists") or "").lower() == "true" and \
            a["branch"] in {r.name for r in t.refs if r.kind == "branch"}:
        return _ok(f"Branch {a['branch']} of {t.name} exists.")
    proc.create_branch(t, a["branch"], a.get("tag"))
    frm = f" from tag {a['tag']}" if a.get("tag") else ""
    return _ok(f"Created branch {a['branch']} of {t.name}{frm}.")


def _delete_branch(t: Table, a: dict[str, str]) -> CallResult:
    return _ok(f"Deleted branch(es) {', '.join(proc.delete_branch(t, a['branch']))} of "
               f"{t.name}.")


def _fast_forward(t: Table, a: dict[str, str]) -> CallResult:
    proc.fast_forward(t, a["branch"])
    return _ok(f"Fast-forwarded {t.name} to branch {a['branch']}.")


def _rollback(t: Table, a: dict[str, str]) -> CallResult:
    before, now = proc.rollback(t, a.get("version"), _int(a, "snapshot", t), a.get("tag"))
    return CallResult(f"Rolled {t.name} back from snapshot {before} to {now}.",
                      ["previous_snapshot_id", "current_snapshot_id"], [(before, now)],
                      "previous_snapshot_id BIGINT, current_snapshot_id BIGINT")


def _expire(t: Table, a: dict[str, str]) -> CallResult:
    n = proc.expire_snapshots(t, _int(a, "retain_max", t), _int(a, "retain_min", t),
                              a.get("older_than"), _int(a, "max_deletes", t))
    return CallResult(f"Expired {n} snapshot(s) of {t.name}.", ["deleted_snapshots_count"],
                      [(n,)], "deleted_snapshots_count INT")


_RUNNERS: dict[str, Callable[[Table, dict[str, str]], CallResult]] = {
    "create_tag": _create_tag, "replace_tag": _replace_tag, "rename_tag": _rename_tag,
    "delete_tag": _delete_tag, "create_branch": _create_branch,
    "delete_branch": _delete_branch, "fast_forward": _fast_forward, "rollback": _rollback,
    "expire_snapshots": _expire, "compact": _compact,
}
