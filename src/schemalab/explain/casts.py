"""How one retyped column is read, in words: the cast behaviour under the table's cast mode,
and, from the manifest's min/max statistics of the files, how many files hold values that a
narrowing cast will change, which no engine says before the read.

    >>> from schemalab.types import parse_type as t
    >>> from schemalab.types.casts import CastMode
    >>> cast_text(t("BIGINT"), t("INT"), CastMode.PAIMON,
    ...           [(1, 5000000000), (-3, 7), (0, 2**40)])
    "BIGINT → INT, Java Paimon's explicit cast: values outside INT wrap (2 of 3 files have \
a max above 2147483647 per their stats)"
    >>> cast_text(t("INT"), t("BIGINT"), CastMode.EXPLICIT, [(1, 2)])
    'INT → BIGINT, implicit cast under cast.mode = explicit'
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Protocol

from schemalab.types.casts import CastMode, cast_kind, java_cast_rule
from schemalab.types.model import AtomicType, DataType, TypeRoot

R = TypeRoot
_INT_BITS = {R.TINYINT: 8, R.SMALLINT: 16, R.INTEGER: 32, R.BIGINT: 64}
_NUMBERS = (*_INT_BITS, R.FLOAT, R.DOUBLE, R.DECIMAL)

#: a file's (min, max) of one column, None where the manifest has no stats for it
FileRange = tuple[Any, Any] | None


def target_range(source: DataType, target: DataType) -> tuple[Any, Any] | None:
    """The values of ``source`` a cast to ``target`` keeps, as (lowest, highest) in the
    source's own numbers, for the numeric narrowings whose stats can tell; else None.

        >>> from schemalab.types import parse_type as t
        >>> target_range(t("DOUBLE"), t("SMALLINT"))
        (-32768, 32767)
        >>> target_range(t("DECIMAL(10, 2)"), t("DECIMAL(5, 2)"))
        (Decimal('-999.99'), Decimal('999.99'))
        >>> target_range(t("INT"), t("BIGINT")) is None
        True
    """
    if not (isinstance(source, AtomicType) and isinstance(target, AtomicType)):
        return None
    s, t = source.root, target.root
    if s not in _NUMBERS:
        return None
    if t in _INT_BITS:
        bits = _INT_BITS[t]
        if s in _INT_BITS and _INT_BITS[s] <= bits:
            return None
        if s is R.DECIMAL and (source.precision or 10) - (source.scale or 0) < len(
                str(2 ** (bits - 1))):
            return None
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if t is R.DECIMAL:
        p, sc = target.precision or 10, target.scale or 0
        if s is R.DECIMAL and (source.precision or 10) - (source.scale or 0) <= p - sc \
                and (source.scale or 0) <= sc:
            return None
        if s in _INT_BITS and len(str(2 ** (_INT_BITS[s] - 1))) <= p - sc:
            return None
        top = Decimal(10) ** (p - sc) - Decimal(1).scaleb(-sc)
        return -top, top
    return None


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def stats_note(source: DataType, target: DataType, ranges: Sequence[FileRange]) -> str | None:
    """How many files' min/max stats show values outside what the cast keeps, e.g.
    "2 of 3 files have a max above 2147483647 per their stats"; None when the cast keeps
    every value of ``source`` or there are no files."""
    bounds = target_range(source, target)
    if bounds is None or not ranges:
        return None
    lo, hi = bounds
    known = [r for r in ranges if r is not None and r[0] is not None and r[1] is not None]
    n = len(ranges)
    above = sum(1 for r in known if r[1] > hi)
    below = sum(1 for r in known if r[0] < lo)
    parts = []
    if above:
        parts.append(f"{above} of {n} {_plural(n, 'file', 'files')} "
                     f"{_plural(above, 'has', 'have')} a max above {hi}")
    if below:
        parts.append(f"{below} of {n} {_plural(n, 'file', 'files')} "
                     f"{_plural(below, 'has', 'have')} a min below {lo}")
    if parts:
        text = "; ".join(parts) + " per their stats"
    elif known:
        text = (f"no file's stats show a value outside {lo}..{hi}" if len(known) == n else
                f"the stats of {len(known)} of {n} files show no value outside {lo}..{hi}")
    else:
        return f"no stats in the manifest for {n} {_plural(n, 'file', 'files')}"
    missing = n - len(known)
    if parts and missing:
        text += f"; {missing} {_plural(missing, 'file has', 'files have')} no stats"
    return text


def cast_text(source: DataType, target: DataType, mode: CastMode,
              ranges: Sequence[FileRange] = ()) -> str:
    """``source → target``, the rule that reads it under ``mode``, what it does to the
    values that do not fit, and what the files' stats say about such values."""
    head = f"{source.sql()} → {target.sql()}"
    kind = cast_kind(source, target) or "no"
    rule = java_cast_rule(source, target)
    effect = rule.effect if rule is not None else None
    if mode.javas_values:
        text = f"{head}, Java Paimon's {kind} cast"
        if effect:
            text += f": {effect}"
    else:
        text = f"{head}, {kind} cast under cast.mode = {mode.value}"
        if effect:
            does = ("fails the read" if mode is CastMode.EXPLICIT else "reads as NULL")
            text += (f": a value Java Paimon's cast would not keep {does} (Java: {effect})")
    note = stats_note(source, target, ranges)
    if note:
        text += f" ({note})"
    return text


class FileStats(Protocol):
    """Each live data file's (min, max) per field id, from the statistics its format keeps
    (Paimon: the manifest entry's value stats, :class:`schemalab.paimon.plan.ManifestStats`)."""

    def range(self, file_name: str, field_id: int) -> FileRange: ...
