"""Paimon's Spark SQL extensions for tags that Iceberg's grammar lacks, as
``PaimonSqlExtensions.g4`` (Paimon 2.0) spells them:

- ``ALTER TABLE t DELETE TAG [IF EXISTS] name``;
- ``ALTER TABLE t RENAME TAG name TO new_name``;
- ``SHOW TAGS t``.

``ALTER TABLE t [CREATE OR] REPLACE TAG ..`` and ``CREATE TAG [IF NOT EXISTS] name [AS OF
VERSION n] [RETAIN n DAYS|HOURS|MINUTES]`` read the same in both grammars:
:mod:`schemalab.sql.iceberg_refs` parses them for either format.

    >>> parse_paimon_tags("ALTER TABLE db.t DELETE TAG IF EXISTS `v1`")
    PaimonTagStatement(name=TableName(database='db', table='t'), action='delete', tag='v1', \
target='', if_exists=True, text='ALTER TABLE db.t DELETE TAG IF EXISTS `v1`')
    >>> parse_paimon_tags("ALTER TABLE t RENAME TAG v1 TO v2").target
    'v2'
    >>> parse_paimon_tags("SHOW TAGS t").action
    'show'
    >>> parse_paimon_tags("ALTER TABLE t ADD COLUMN c INT") is None
    True
"""

from __future__ import annotations

import re

from schemalab.errors import SqlError
from schemalab.sql.statements import PaimonTagStatement
from schemalab.sql.syntax import NAME_PART, table_of_text, unquote

_NAME = rf"(?P<name>{NAME_PART}(?:\.{NAME_PART})?)"
_ALTER = re.compile(rf"^\s*ALTER\s+TABLE\s+{_NAME}\s+(?P<verb>DELETE|RENAME)\s+TAG\b"
                    r"(?P<rest>.*?)\s*;?\s*$", re.I | re.S)
_SHOW = re.compile(r"^\s*SHOW\s+TAGS\b\s*(?P<name>.*?)\s*;?\s*$", re.I | re.S)
_TABLE = re.compile(rf"^{_NAME}$", re.S)
_DELETE = re.compile(rf"^\s*(?P<if>IF\s+EXISTS\s+)?(?P<tag>{NAME_PART})$", re.I | re.S)
_RENAME = re.compile(rf"^\s*(?P<tag>{NAME_PART})\s+TO\s+(?P<target>{NAME_PART})$", re.I | re.S)


def _syntax(text: str, expected: str) -> SqlError:
    return SqlError(f"Cannot parse {text.strip()!r}: expected {expected} (Paimon's Spark SQL "
                    "extensions)", rule="sql-syntax")


def parse_paimon_tags(text: str) -> PaimonTagStatement | None:
    """The statement, or None when ``text`` is none of these."""
    show = _SHOW.match(text)
    if show is not None:
        if _TABLE.match(show.group("name")) is None:
            raise _syntax(text, "SHOW TAGS <table>")
        return PaimonTagStatement(table_of_text(show.group("name")), "show", text=text)
    m = _ALTER.match(text)
    if m is None:
        return None
    name = table_of_text(m.group("name"))
    if m.group("verb").upper() == "DELETE":
        d = _DELETE.match(m.group("rest"))
        if d is None:
            raise _syntax(text, "DELETE TAG [IF EXISTS] <tag>")
        return PaimonTagStatement(name, "delete", unquote(d.group("tag")),
                                  if_exists=d.group("if") is not None, text=text)
    r = _RENAME.match(m.group("rest"))
    if r is None:
        raise _syntax(text, "RENAME TAG <tag> TO <new tag>")
    return PaimonTagStatement(name, "rename", unquote(r.group("tag")),
                              unquote(r.group("target")), text=text)
