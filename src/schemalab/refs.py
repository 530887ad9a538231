"""Refs: the branches and tags of a table, for both formats.

A :class:`Ref` is what ``t.refs`` lists: Paimon's ``tag/tag-<name>`` files and
``branch/branch-<name>`` directories (with ``main`` as a branch), Iceberg's ``refs`` map. What
the engine stores with a ref beyond its snapshot (a tag's create time and retention,
Iceberg's ``max-ref-age-ms``, ...) is kept in ``properties`` under the engine's own keys.

:func:`check_ref_name` refuses a name before any path is built from it.

>>> Ref("v1", "tag", 2, 1).to_json()
{'name': 'v1', 'kind': 'tag', 'snapshot_id': 2, 'schema_id': 1}
>>> check_ref_name("../x", "tag", table="default.t")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
schemalab.errors.InvalidIdentifierError: Invalid tag name '../x' for table default.t: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from schemalab.errors import InvalidIdentifierError

RefKind = Literal["branch", "tag"]
MAIN = "main"
#: Longest ref name accepted, in UTF-8 bytes (a file or directory name must hold the
#: ``branch-``/``tag-`` prefix too).
MAX_REF_NAME_BYTES = 200


@dataclass(frozen=True)
class Ref:
    """One branch or tag. ``snapshot_id`` is ``None`` for a branch without snapshots;
    ``schema_id`` is the schema a read of the ref binds by default."""

    name: str
    kind: RefKind
    snapshot_id: int | None
    schema_id: int | None
    properties: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``inspect --json`` shape: name, kind, snapshot_id, schema_id."""
        return {"name": self.name, "kind": self.kind, "snapshot_id": self.snapshot_id,
                "schema_id": self.schema_id}


def check_ref_name(name: object, kind: RefKind, *, table: str | None = None) -> str:
    """Refuse a branch or tag name that is empty, too long, or could name a path other than
    its own (separators, ``.``/``..``, a leading ``.``, ``$`` which Paimon's table names
    use for system tables and branches, control characters). Returns the name."""
    where = f" for table {table}" if table else ""
    if not isinstance(name, str) or name.strip() == "":
        raise InvalidIdentifierError(f"A {kind} name{where} cannot be empty or blank.",
                                     table=table, rule="valid-ref-name")
    bad = None
    if "/" in name or "\\" in name:
        bad = "contains a path separator"
    elif name in (".", ".."):
        bad = "is a relative path"
    elif name.startswith("."):
        bad = "starts with '.'"
    elif "$" in name:
        bad = "contains '$', which names system tables and branches in Paimon"
    elif any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        bad = "contains a control character"
    elif len(name.encode("utf-8")) > MAX_REF_NAME_BYTES:
        bad = f"is longer than {MAX_REF_NAME_BYTES} bytes"
    if bad:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise InvalidIdentifierError(f"Invalid {kind} name {shown!r}{where}: it {bad}.",
                                     table=table, rule="valid-ref-name")
    return name
