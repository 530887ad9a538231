"""Which row of a primary-key table won: every version of one key and the merge's choice."""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab.engine.merge.records import versions
from schemalab.engine.plan import ReadPlan
from schemalab.engine.scan import FILE_COL, KIND_COL, SEQ_COL, quote
from schemalab.errors import SchemaLabError
from schemalab.paimon.primary_key import RETRACT, ROW_KINDS
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
    """Every version of one key in the files read, newest first, and which one the
    deduplicate merge keeps."""

    table: str
    key: dict[str, Any]
    versions: tuple[KeyVersion, ...]

    @property
    def winner(self) -> KeyVersion | None:
        return self.versions[0] if self.versions else None

    @property
    def deleted(self) -> bool:
        w = self.winner
        return w is not None and w.value_kind in RETRACT

    @property
    def reason(self) -> str:
        key = ", ".join(f"{k}={v!r}" for k, v in self.key.items())
        w = self.winner
        if w is None:
            return f"key ({key}) is in no file read"
        n = len(self.versions)
        why = (f"the only version of key ({key})" if n == 1 else
               f"highest _SEQUENCE_NUMBER {w.sequence_number} of {n} versions of key ({key}) "
               "(deduplicate merge engine)")
        where = (f"file {os.path.basename(w.file)} (schema {w.schema_id}, bucket {w.bucket}, "
                 f"level {w.level})")
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
    if not pk:
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
    if not any(g.files for g in plan.groups):
        return KeyExplanation(plan.table, wanted, ())
    df = versions(plan, spark, with_file=True)
    if df is None:
        return KeyExplanation(plan.table, wanted, ())
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
    return KeyExplanation(plan.table, wanted, tuple(out))


def _norm_path(p: str) -> str:
    from urllib.parse import unquote, urlparse

    if p.startswith("file:"):
        p = unquote(urlparse(p).path)
    return os.path.normpath(p)
