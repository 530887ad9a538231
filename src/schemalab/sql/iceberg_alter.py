"""Iceberg's Spark SQL extensions for ALTER TABLE: partition evolution and identifier fields.

    >>> s = parse_iceberg_alter("ALTER TABLE db.t ADD PARTITION FIELD bucket(16, id) AS shard")
    >>> s.name, s.action, s.transforms, s.alias
    (TableName(database='db', table='t'), 'ADD', (('bucket[16]', 'id'),), 'shard')
    >>> r = parse_iceberg_alter("ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH hours(ts)")
    >>> r.transforms
    (('ts_day', ''), ('hour', 'ts'))
    >>> parse_iceberg_alter("ALTER TABLE t SET IDENTIFIER FIELDS id, s.k").fields
    ('id', 's.k')
    >>> parse_iceberg_alter("ALTER TABLE t ADD COLUMN c INT") is None
    True
"""

from __future__ import annotations

import re

from schemalab.errors import SqlError
from schemalab.sql.statements import IcebergAlter
from schemalab.sql.syntax import table_of_text, unquote

_HEAD = re.compile(r"^\s*ALTER\s+TABLE\s+(?P<name>(?:`[^`]+`|[\w$]+)(?:\.(?:`[^`]+`|[\w$]+))?)"
                   r"\s+(?P<action>ADD|DROP|REPLACE|SET)\s+(?P<what>PARTITION\s+FIELD|"
                   r"IDENTIFIER\s+FIELDS)\s+(?P<rest>.*?)\s*;?\s*$", re.I | re.S)
_TERM = re.compile(r"^\s*(?:(?P<fn>\w+)\s*\(\s*(?P<args>[^)]*)\)|(?P<col>[\w.`]+))\s*$", re.S)
_TIME = {"years": "year", "months": "month", "days": "day", "hours": "hour", "year": "year",
         "month": "month", "day": "day", "hour": "hour", "date_hour": "hour", "date": "day"}


def transform_term(term: str, text: str) -> tuple[str, str]:
    """``bucket(16, id)`` → ``("bucket[16]", "id")``; a bare name → ``("identity", name)``."""
    m = _TERM.match(term)
    if m is None:
        raise SqlError(f"Cannot parse the partition transform {term.strip()!r} in {text.strip()}",
                       rule="sql-syntax")
    if m.group("col"):
        return "identity", ".".join(unquote(p) for p in m.group("col").split("."))
    fn = m.group("fn").lower()
    args = [a.strip() for a in m.group("args").split(",")]
    if fn in ("bucket", "truncate") and len(args) == 2:
        width, col = (args[0], args[1]) if args[0].isdigit() else (args[1], args[0])
        if width.isdigit():
            return f"{fn}[{int(width)}]", unquote(col)
    if fn in _TIME and len(args) == 1:
        return _TIME[fn], unquote(args[0])
    raise SqlError(f"Unsupported partition transform {term.strip()} in {text.strip()}: "
                   "write a column, bucket(n, c), truncate(w, c), years(c), months(c), "
                   "days(c) or hours(c)", rule="unsupported-sql")


def parse_iceberg_alter(text: str) -> IcebergAlter | None:
    """The statement, or None when ``text`` is not one of these ALTERs."""
    m = _HEAD.match(text)
    if m is None:
        return None
    name, action = table_of_text(m.group("name")), m.group("action").upper()
    what, rest = m.group("what").upper(), m.group("rest")
    if what.startswith("IDENTIFIER"):
        if action not in ("SET", "DROP"):
            return None
        fields = tuple(".".join(unquote(p) for p in f.strip().split("."))
                       for f in rest.split(",") if f.strip())
        return IcebergAlter(name, action, fields=fields, text=text)
    if action == "SET":
        return None
    alias = None
    am = re.match(r"^(?P<body>.*?)\s+AS\s+(?P<alias>`[^`]+`|\w+)$", rest, re.I | re.S)
    if am is not None and action != "DROP":
        rest, alias = am.group("body"), unquote(am.group("alias"))
    if action == "REPLACE":
        parts = re.split(r"\s+WITH\s+", rest, maxsplit=1, flags=re.I)
        if len(parts) != 2:
            raise SqlError(f"REPLACE PARTITION FIELD needs WITH: {text.strip()}",
                           rule="sql-syntax")
        old = transform_term(parts[0], text)
        old = (old[1], "") if old[0] == "identity" else old
        return IcebergAlter(name, action, (old, transform_term(parts[1], text)), alias,
                            text=text)
    term = transform_term(rest, text)
    if action == "DROP" and term[0] == "identity":
        term = (term[1], "")  # a partition field's name (or an identity column's)
    return IcebergAlter(name, action, (term,), alias, text=text)
