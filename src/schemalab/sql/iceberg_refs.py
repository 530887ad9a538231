"""Iceberg's Spark SQL extensions for refs and write order, as its grammar
(``IcebergSqlExtensions.g4``, Iceberg 1.12) spells them:

- ``ALTER TABLE t [CREATE OR] REPLACE BRANCH b <branchOptions>`` and
  ``ALTER TABLE t CREATE BRANCH [IF NOT EXISTS] b <branchOptions>``, where branchOptions are
  ``[AS OF VERSION n] [RETAIN n DAYS|HOURS|MINUTES] [WITH SNAPSHOT RETENTION [n SNAPSHOTS]
  [n DAYS|HOURS|MINUTES]]`` (in that order);
- the same for ``TAG``, whose options stop after ``RETAIN``;
- ``ALTER TABLE t DROP BRANCH|TAG [IF EXISTS] name``;
- ``ALTER TABLE t WRITE [DISTRIBUTED BY PARTITION] [LOCALLY] ORDERED BY term [ASC|DESC]
  [NULLS FIRST|LAST], ...`` and ``WRITE UNORDERED``.

    >>> s = parse_iceberg_refs("ALTER TABLE db.t CREATE BRANCH IF NOT EXISTS dev "
    ...                        "AS OF VERSION 12 RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    >>> s.kind, s.ref, s.create, s.replace, s.if_not_exists, s.snapshot_id
    ('branch', 'dev', True, False, True, 12)
    >>> s.max_ref_age_ms, s.min_snapshots_to_keep, s.max_snapshot_age_ms
    (604800000, 2, None)
    >>> parse_iceberg_refs("ALTER TABLE t DROP TAG IF EXISTS `v1`").ref
    'v1'
    >>> w = parse_iceberg_refs("ALTER TABLE t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED "
    ...                        "BY id DESC, bucket(4, s.y) NULLS LAST")
    >>> w.distribution_mode, w.order
    ('hash', (('identity', 'id', 'desc', 'nulls-last'), ('bucket[4]', 's.y', 'asc', 'nulls-last')))
    >>> parse_iceberg_refs("ALTER TABLE t ADD COLUMN c INT") is None
    True
"""

from __future__ import annotations

import re

from schemalab.errors import SqlError
from schemalab.sql.iceberg_alter import transform_term
from schemalab.sql.statements import IcebergRefStatement, IcebergWriteOrder, TableName
from schemalab.sql.syntax import table_of_text, unquote

_HEAD = re.compile(r"^\s*ALTER\s+TABLE\s+(?P<name>(?:`(?:[^`]|``)+`|[\w$]+)"
                   r"(?:\.(?:`(?:[^`]|``)+`|[\w$]+)){0,2})\s+(?P<rest>(?:CREATE|REPLACE|DROP)\s+"
                   r"(?:OR\s+REPLACE\s+)?(?:BRANCH|TAG)\b.*?|WRITE\b.*?)\s*;?\s*$", re.I | re.S)
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|-?\d+(?:\.\d*)?|\w+(?:\.\w+)*|[(),.]|\S)", re.S)
_UNIT_MS = {"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000}


class _Tokens:
    def __init__(self, text: str, statement: str) -> None:
        self.items = [t for t in _TOKEN.findall(text) if t.strip()]
        self.i = 0
        self.statement = statement.strip()

    def peek(self, *words: str) -> bool:
        """The next tokens are ``words`` (keywords, case-insensitive)."""
        got = self.items[self.i:self.i + len(words)]
        return len(got) == len(words) and all(
            g.upper() == w for g, w in zip(got, words, strict=True))

    def take(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.take(*words):
            raise self.error(" ".join(words))

    def next(self, what: str) -> str:
        if self.i >= len(self.items):
            raise self.error(what)
        self.i += 1
        return self.items[self.i - 1]

    def done(self) -> bool:
        return self.i >= len(self.items)

    def error(self, expected: str) -> SqlError:
        at = self.items[self.i] if self.i < len(self.items) else "end of input"
        return SqlError(f"Cannot parse {self.statement!r}: expected {expected} at {at!r} "
                        "(Iceberg's Spark SQL extensions)", rule="sql-syntax")

    def integer(self, what: str) -> int:
        tok = self.next(what)
        if not re.fullmatch(r"-?\d+", tok):
            raise SqlError(f"Cannot parse {self.statement!r}: {what} must be a whole number, "
                           f"not {tok!r}", rule="sql-syntax")
        return int(tok)

    def identifier(self, what: str) -> str:
        tok = self.next(what)
        if tok.startswith("`"):
            return unquote(tok)
        if not re.fullmatch(r"\w+", tok) or tok.isdigit():
            raise self.error(what)
        return tok

    def duration_ms(self) -> int:
        n = self.integer("a number")
        unit = self.next("DAYS, HOURS or MINUTES").upper()
        if unit not in _UNIT_MS:
            raise self.error("DAYS, HOURS or MINUTES")
        return n * _UNIT_MS[unit]


def parse_iceberg_refs(text: str) -> IcebergRefStatement | IcebergWriteOrder | None:
    """The statement, or None when ``text`` is none of these ALTERs."""
    m = _HEAD.match(text)
    if m is None:
        return None
    name = table_of_text(m.group("name"))
    toks = _Tokens(m.group("rest"), text)
    if toks.take("WRITE"):
        return _write_order(name, toks, text)
    if toks.take("DROP"):
        kind = toks.next("BRANCH or TAG").lower()
        if_exists = toks.take("IF", "EXISTS")
        ref = toks.identifier(f"a {kind} name")
        if not toks.done():
            raise toks.error("end of statement")
        return IcebergRefStatement(name, "drop", kind, ref, if_exists=if_exists, text=text)
    create = toks.take("CREATE")
    replace = toks.take("OR", "REPLACE") if create else toks.take("REPLACE")
    kind = toks.next("BRANCH or TAG").lower()
    if_not_exists = create and not replace and toks.take("IF", "NOT", "EXISTS")
    ref = toks.identifier(f"a {kind} name")
    snapshot_id = toks.integer("a snapshot id") if toks.take("AS", "OF", "VERSION") else None
    ref_age = toks.duration_ms() if toks.take("RETAIN") else None
    keep = age = None
    if kind == "branch" and toks.take("WITH", "SNAPSHOT", "RETENTION"):
        if toks.i + 1 < len(toks.items) and toks.items[toks.i + 1].upper() == "SNAPSHOTS":
            keep = toks.integer("a number of snapshots")
            toks.expect("SNAPSHOTS")
        if not toks.done() or keep is None:
            age = toks.duration_ms()
    if not toks.done():
        raise toks.error("end of statement")
    return IcebergRefStatement(name, "create", kind, ref, create=create, replace=replace,
                               if_not_exists=if_not_exists, snapshot_id=snapshot_id,
                               max_ref_age_ms=ref_age, min_snapshots_to_keep=keep,
                               max_snapshot_age_ms=age, text=text)


def _write_order(name: TableName, toks: _Tokens, text: str) -> IcebergWriteOrder:
    """``writeSpec: (writeDistributionSpec | writeOrderingSpec)*``, each at most once, as
    Iceberg's ``IcebergSqlExtensionsAstBuilder`` reads it."""
    distributed = ordering = 0
    locally = unordered = False
    order: list[tuple[str, str, str, str]] = []
    while not toks.done():
        if toks.take("DISTRIBUTED", "BY", "PARTITION"):
            distributed += 1
        elif toks.take("UNORDERED"):
            ordering += 1
            unordered = True
        elif toks.peek("LOCALLY") or toks.peek("ORDERED"):
            ordering += 1
            locally = toks.take("LOCALLY")
            toks.expect("ORDERED", "BY")
            if toks.take("("):  # order: fields | '(' fields ')'
                order = _order_fields(toks, text)
                toks.expect(")")
            else:
                order = _order_fields(toks, text)
        else:
            raise toks.error("DISTRIBUTED BY PARTITION, [LOCALLY] ORDERED BY or UNORDERED")
    if distributed > 1:
        raise SqlError(f"ALTER TABLE contains more than one WRITE DISTRIBUTED BY clause: "
                       f"{text.strip()}", rule="sql-syntax")
    if ordering > 1:
        raise SqlError(f"ALTER TABLE contains more than one WRITE ORDERED BY clause: "
                       f"{text.strip()}", rule="sql-syntax")
    if not distributed and not ordering:
        raise SqlError("ALTER TABLE has no changes: missing both distribution and ordering "
                       f"clauses: {text.strip()}", rule="sql-syntax")
    mode = "hash" if distributed else "none" if unordered else None if locally else "range"
    return IcebergWriteOrder(name, tuple(order), mode, text)


def _order_fields(toks: _Tokens, text: str) -> list[tuple[str, str, str, str]]:
    out = []
    while True:
        term = toks.next("a column or transform")
        if toks.peek("("):
            depth = 0
            while True:
                tok = toks.next("')'")
                term += tok if tok in "()," else f" {tok}"
                depth += {"(": 1, ")": -1}.get(tok, 0)
                if depth == 0:
                    break
        transform, column = transform_term(term, text)
        direction = "desc" if toks.take("DESC") else "asc"
        if direction == "asc":
            toks.take("ASC")
        nulls = "nulls-first" if direction == "asc" else "nulls-last"
        if toks.take("NULLS"):
            word = toks.next("FIRST or LAST").upper()
            if word not in ("FIRST", "LAST"):
                raise toks.error("FIRST or LAST")
            nulls = f"nulls-{word.lower()}"
        out.append((transform, column, direction, nulls))
        if not toks.take(","):
            return out
