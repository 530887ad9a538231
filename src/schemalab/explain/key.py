"""Which row of a primary-key table won: every version of one key and the merge's choice."""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.engine.keyed import RETRACT, ROW_KINDS
from schemalab.engine.merge.keyed_read import merge_read
from schemalab.engine.merge.options import (
    AGGREGATION,
    DEDUPLICATE,
    FIRST_ROW,
    PARTIAL_UPDATE,
    FieldAggregate,
)
from schemalab.engine.merge.records import versions
from schemalab.engine.plan import ReadPlan
from schemalab.engine.scan import FILE_COL, KIND_COL, SEQ_COL, quote
from schemalab.errors import SchemaLabError
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class KeyVersion:
    """One row of a key in one file, evolved to the schema read."""

    file: str
    schema_id: int
    bucket: int
    level: int
    sequence_number: int
    value_kind: int
    values: dict[str, Any]

    @property
    def kind_text(self) -> str:
        return ROW_KINDS.get(self.value_kind, str(self.value_kind))


@dataclass(frozen=True)
class KeyExplanation:
    """Every version of one key in the files read, newest first, what the table's merge
    engine made of them (``result``: the row the read returns for the key, None when it
    returns none) and why."""

    table: str
    key: dict[str, Any]
    versions: tuple[KeyVersion, ...]
    engine: str = DEDUPLICATE
    result: dict[str, Any] | None = None
    #: partial-update and aggregation: field → how it merges (for the reason)
    field_rules: tuple[tuple[str, str], ...] = ()

    @property
    def winner(self) -> KeyVersion | None:
        """The version the read returns as it is: the newest (deduplicate), the oldest
        insert (first-row); for partial-update and aggregation the newest, whose sequence
        number the merged row keeps."""
        if not self.versions:
            return None
        if self.engine == FIRST_ROW:
            inserts = [v for v in self.versions if v.value_kind not in RETRACT]
            return inserts[-1] if inserts else self.versions[-1]
        return self.versions[0]

    @property
    def deleted(self) -> bool:
        w = self.winner
        if self.engine in (PARTIAL_UPDATE, AGGREGATION):
            return w is not None and self.result is None
        return w is not None and w.value_kind in RETRACT

    def sources(self) -> dict[str, int | None]:
        """partial-update: each value field of the result → the sequence number of the newest
        version that holds that value (None: no version does, e.g. NULL everywhere)."""
        if self.result is None:
            return {}
        out: dict[str, int | None] = {}
        for name, value in self.result.items():
            if name in self.key:
                continue
            out[name] = next((v.sequence_number for v in self.versions
                              if v.value_kind not in RETRACT and v.values.get(name) is not None
                              and v.values.get(name) == value), None)
        return out

    @property
    def reason(self) -> str:
        key = ", ".join(f"{k}={v!r}" for k, v in self.key.items())
        w = self.winner
        if w is None:
            return f"key ({key}) is in no file read"
        n = len(self.versions)
        where = (f"file {os.path.basename(w.file)} (schema {w.schema_id}, bucket {w.bucket}, "
                 f"level {w.level})")
        if self.engine in (PARTIAL_UPDATE, AGGREGATION) and n > 1:
            if self.result is None:
                return (f"key ({key}): its {n} versions merge ({self.engine} merge engine) "
                        "into no row: the key is deleted")
            if self.engine == PARTIAL_UPDATE:
                parts = [f"{f} from seq {s}" if s is not None else f"{f} NULL in every version"
                         for f, s in self.sources().items()]
                return (f"key ({key}) is merged from {n} versions (partial-update merge "
                        "engine: each field takes its newest non-NULL value): "
                        + ", ".join(parts))
            rules = ", ".join(f"{f} by {r}" for f, r in self.field_rules)
            return (f"key ({key}) is merged from {n} versions (aggregation merge engine): "
                    f"{rules}")
        if n == 1:
            why = f"the only version of key ({key})"
        elif self.engine == FIRST_ROW:
            why = (f"the first version (lowest _SEQUENCE_NUMBER {w.sequence_number}) of {n} "
                   f"versions of key ({key}) (first-row merge engine: later versions are "
                   "ignored)")
        else:
            why = (f"highest _SEQUENCE_NUMBER {w.sequence_number} of {n} versions of key "
                   f"({key}) (deduplicate merge engine)")
        if w.value_kind in RETRACT:
            return f"{where} wins as {why}; it is a {w.kind_text} record, so the key is deleted"
        return f"{where} wins as {why}"

    def text(self) -> str:
        lines = [self.reason]
        for v in self.versions:
            mark = "*" if v is self.winner else " "
            lines.append(f" {mark} seq {v.sequence_number:>4} {v.kind_text} "
                         f"{os.path.basename(v.file)} (schema {v.schema_id}, level {v.level}): "
                         + ", ".join(f"{k}={x!r}" for k, x in v.values.items()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def explain_key(plan: ReadPlan, spark: SparkSession, key: Mapping[str, Any] | Sequence[Any]
                ) -> KeyExplanation:
    """Every version of ``key`` (a mapping of primary-key column → value in the schema read,
    or the values in primary-key order) in the plan's files, newest first."""
    from pyspark.sql import functions as F

    target = plan.target
    pk = list(target.primary_keys)
    opts = plan.merge
    if not pk or opts is None:
        raise SchemaLabError(f"Table {plan.table} has no primary key: every row is read, none "
                             "wins over another.", table=plan.table, rule="primary-key")
    if isinstance(key, Mapping):
        unknown = [k for k in key if k not in pk]
        missing = [k for k in pk if k not in key]
        if unknown or missing:
            raise SchemaLabError(
                f"Table {plan.table}: a key gives a value for each primary-key column "
                f"({', '.join(pk)}); got {', '.join(map(str, key))}", table=plan.table,
                rule="primary-key")
        wanted = {k: key[k] for k in pk}
    else:
        values = list(key) if isinstance(key, list | tuple) else [key]
        if len(values) != len(pk):
            raise SchemaLabError(f"Table {plan.table}: the primary key is ({', '.join(pk)}); "
                                 f"got {len(values)} values", table=plan.table,
                                 rule="primary-key")
        wanted = dict(zip(pk, values, strict=True))
    rules = tuple((f.name, _function(opts.aggregate_of(f.name))) for f in target.fields
                  if f.name not in pk) if opts.engine == AGGREGATION else ()
    if not any(g.files for g in plan.groups):
        return KeyExplanation(plan.table, wanted, (), opts.engine, None, rules)
    df = versions(plan, spark, with_file=True)
    if df is None:
        return KeyExplanation(plan.table, wanted, (), opts.engine, None, rules)
    cond = functools.reduce(operator.and_, [
        F.col(quote(k)) == F.lit(v).cast(to_spark(target.type_of(k)))
        for k, v in wanted.items()])
    rows = df.where(cond).collect()
    by_path = {_norm_path(f.path): f for f in plan.files}
    out = []
    names = target.field_names
    for r in rows:
        d = r.asDict()
        path = _norm_path(d[FILE_COL])
        meta = by_path.get(path)
        out.append(KeyVersion(path, meta.schema_id if meta else -1, meta.bucket if meta else -1,
                              meta.level if meta else -1, int(d[SEQ_COL]), int(d[KIND_COL]),
                              {n: d[n] for n in names}))
    out.sort(key=lambda v: v.sequence_number, reverse=True)
    result = None
    if out and plan.merges:
        found = merge_read(plan, spark).where(cond).collect()
        result = found[0].asDict() if found else None
    return KeyExplanation(plan.table, wanted, tuple(out), opts.engine, result, rules)


def _function(a: FieldAggregate | None) -> str:
    return "last_non_null_value" if a is None else a.function  # Paimon's default


def _norm_path(p: str) -> str:
    from urllib.parse import unquote, urlparse

    if p.startswith("file:"):
        p = unquote(urlparse(p).path)
    return os.path.normpath(p)
