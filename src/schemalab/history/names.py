"""What a table's history knows about a name that is not a column today, for error messages:
"`amount` was renamed to `amount_cents` in schema 10", "`c` was dropped in schema 4", and
close names for a typo.

    >>> from schemalab.history.lineage import compute_lineage, with_events
    >>> from schemalab.history.versions import FieldInfo, SchemaVersion
    >>> vs = with_events([SchemaVersion(0, 1, (FieldInfo(1, "amount", "INT"),
    ...                                        FieldInfo(2, "note", "STRING"))),
    ...                   SchemaVersion(1, 2, (FieldInfo(1, "amount_cents", "INT"),))])
    >>> lineage = compute_lineage(vs, precomputed=True)
    >>> name_history(lineage, "amount")
    '`amount` was renamed to `amount_cents` in schema 1 (field 1; today `amount_cents`)'
    >>> name_history(lineage, "note")
    '`note` was dropped in schema 1 (field 2)'
    >>> close_names("amout_cents", ["amount_cents", "id"])
    '`amount_cents`'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from schemalab.errors import SqlError
from schemalab.history.versions import FieldLineage


def close_names(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """The candidates closest to ``name`` (a typo, other letter case), as "`a`, `b`", or
    ""."""
    pool = list(dict.fromkeys(candidates))
    same_case = [c for c in pool if c.lower() == name.lower() and c != name]
    near = difflib.get_close_matches(name, pool, n=n, cutoff=0.6)
    if not near:
        near = [c for c in pool if c.lower().startswith(name.lower())][:n]
    found = list(dict.fromkeys(same_case + near))[:n]
    return ", ".join(f"`{c}`" for c in found)


def _held(lin: FieldLineage, name: str) -> bool:
    return any(f.full_name == name for _, f in lin.states)


def name_history(lineage: Sequence[FieldLineage], name: str) -> str | None:
    """What became of every field that was once called ``name`` (a dotted path for a nested
    field), newest field first; None when no field ever was."""
    parts = []
    for lin in sorted((x for x in lineage if _held(x, name)), key=lambda x: -x.field_id):
        steps = []
        held = False
        for ev in lin.events:
            if ev.kind == "added" and ev.name == name:
                held = True
            elif ev.kind == "renamed" and ev.old_name == name:
                held = True
                steps.append(f"renamed to `{ev.name}` in schema {ev.schema_id}")
            elif ev.kind == "renamed" and held and steps:
                steps.append(f"then to `{ev.name}` in schema {ev.schema_id}")
            elif ev.kind == "dropped" and (held or ev.name == name):
                steps.append(f"dropped in schema {ev.schema_id}")
        if not steps:
            continue
        today = lin.states[-1][1].full_name
        tail = f"field {lin.field_id}" + (f"; today `{today}`" if lin.alive else "")
        parts.append(f"`{name}` was " + ", ".join(steps) + f" ({tail})")
    return "; ".join(parts) if parts else None


def unknown_name_hint(lineage: Sequence[FieldLineage], name: str, current: Sequence[str]
                      ) -> str:
    """A sentence to add to "column X does not exist": what the history knows of ``name``,
    else the current names closest to it, else ""."""
    known = name_history(lineage, name)
    if known:
        return known[0].upper() + known[1:] + "."
    near = close_names(name, current)
    return f"Did you mean {near}?" if near else ""


def unresolved_column(e: Exception, tables: Sequence[Any]) -> SqlError | None:
    """Spark's "cannot resolve column" with what ``tables``' histories know of the name
    (renamed, dropped), or None to let Spark's own error stand."""
    m = re.search(r"UNRESOLVED_COLUMN[^\]]*\] A column[^`]*`([^`]+)`", str(e))
    if m is None:
        return None
    column = m.group(1)
    for t in tables:
        known = name_history(t.history().lineage, column)
        if known:
            return SqlError(f"Cannot resolve column `{column}` (Spark's UNRESOLVED_COLUMN): "
                            f"in {t.name}, {known}.", table=t.name, column=column,
                            rule="column-must-exist")
    return None
