"""Paimon schema files (``schema/schema-N``): the :class:`TableSchema` value and its JSON.

Our own files are written byte for byte as Java Paimon writes them (Jackson's default pretty
printer: ``"key" : value``, inline arrays, no null ``comment``). We read that layout,
pypaimon's (``json.dumps(indent=2)``, ``"comment": null``, ``"nullable"`` inside nested
types) and old versions (no ``version`` = 1, implying ``bucket=1``; version <= 2 implies
``file.format=orc``). Keys we do not know are kept and written back.

    >>> s = TableSchema.from_json('{"id": 0, "fields": [{"id": 0, "name": "a", "type": "INT"}],'
    ...     ' "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [], "options": {}}')
    >>> s.version, s.effective_options()
    (1, {'bucket': '1', 'file.format': 'orc'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from schemalab import forms
from schemalab.errors import (
    CorruptFileError,
    NotFoundError,
    SchemaLabError,
    UnknownTypeError,
    UnsupportedVersionError,
)
from schemalab.schema.jackson import Layout, jackson_pretty, load_object
from schemalab.types.model import DataField, DataType
from schemalab.types.parse import field_from_json, field_to_json
from schemalab.types.visitor import iter_fields

CURRENT_VERSION = 3
PAIMON_07_VERSION = 1
PAIMON_08_VERSION = 2

_KNOWN_KEYS = ("version", "id", "fields", "highestFieldId", "partitionKeys", "primaryKeys",
               "options", "comment", "timeMillis")


@dataclass(frozen=True)
class TableSchema:
    """One schema version of a table. ``options`` are exactly the file's; see
    :meth:`effective_options` for what an old file implies."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = CURRENT_VERSION
    #: keys of the file we do not interpret, written back unchanged
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: which writer's layout the file used; our own files are "java"
    layout: Layout = "java"

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "partition_keys", tuple(self.partition_keys))
        object.__setattr__(self, "primary_keys", tuple(self.primary_keys))
        object.__setattr__(self, "options", dict(self.options))
        object.__setattr__(self, "extra", dict(self.extra))

    # ---- reading it ------------------------------------------------------------------------

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.id} {f.name} {f.type.sql()}" for f in self.fields[:8])
        more = f", … {len(self.fields) - 8} more" if len(self.fields) > 8 else ""
        keys = "".join(f", {k}={list(v)}" for k, v in (("partition_keys", self.partition_keys),
                                                       ("primary_keys", self.primary_keys))
                       if v)
        return f"TableSchema(id={self.id}, fields=[{shown}{more}]{keys})"

    def __str__(self) -> str:
        """The schema as ``DESCRIBE`` shows it, with field ids and nested fields indented."""
        lines = [f"schema {self.id}: {len(self.fields)} columns, highest field id "
                 f"{self.highest_field_id}"]
        for path, f in iter_fields(self.fields):
            name = "  " * (len(path) - 1) + f.name
            notes = [n for n, on in (("primary key", f.name in self.primary_keys),
                                     ("partition key", f.name in self.partition_keys))
                     if on and len(path) == 1]
            if f.description:
                notes.append(f"comment: {f.description}")
            lines.append(f"  {f.id:>4}  {name:<24} {f.type.sql()}"
                         + (f"  ({'; '.join(notes)})" if notes else ""))
        if self.options:
            lines.append("  options: " + ", ".join(f"{k} = {v}"
                                                   for k, v in sorted(self.options.items())))
        return "\n".join(lines)

    # ---- lookups --------------------------------------------------------------------------

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def field_by_id(self, field_id: int) -> DataField | None:
        """Top-level or nested field with this id."""
        for _, f in iter_fields(self.fields):
            if f.id == field_id:
                return f
        return None

    def effective_options(self) -> dict[str, str]:
        """Options with what an old schema version implies, as Java's deserializer adds them."""
        opts = dict(self.options)
        if self.version <= PAIMON_07_VERSION and "bucket" not in opts:
            opts["bucket"] = "1"
        if self.version <= PAIMON_08_VERSION and "file.format" not in opts:
            opts["file.format"] = "orc"
        return opts

    def int_option(self, key: str, default: int, table: str) -> int:
        """Option ``key`` (of :meth:`effective_options`) as an integer; a value that is not one
        (a schema another writer made) is an error naming the table and the option."""
        raw = self.effective_options().get(key)
        if raw is None:
            return default
        try:
            return int(raw)
        except ValueError:
            raise SchemaLabError(f"Table {table}: option '{key}' must be an integer, not "
                                 f"'{raw}'", table=table, rule="option-value") from None

    def with_changes(self, **kwargs: Any) -> TableSchema:
        return replace(self, **kwargs)

    def type_of(self, name: str) -> DataType:
        """The type of top-level column ``name`` (:class:`NotFoundError`, a KeyError, if there
        is none)."""
        f = self.field(name)
        if f is None:
            raise NotFoundError(f"schema {self.id} has no column {name!r}", column=name,
                                rule="column-must-exist")
        return f.type

    # ---- JSON ----------------------------------------------------------------------------

    def to_dict(self, layout: Layout | None = None) -> dict[str, Any]:
        layout = layout or self.layout
        python = layout == "python"
        out: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [field_to_json(f, nullable_key=python) for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
        }
        if self.comment is not None or python:
            out["comment"] = self.comment
        out["timeMillis"] = self.time_millis
        out.update(self.extra)
        return out

    def to_json(self, layout: Layout | None = None) -> str:
        """The file's text. ``layout`` defaults to the layout the schema was read in."""
        layout = layout or self.layout
        data = self.to_dict(layout)
        if layout == "python":
            return json.dumps(data, indent=2, ensure_ascii=False)
        return jackson_pretty(data)

    @staticmethod
    def from_json(text: str | bytes, *, path: str = "<schema>") -> TableSchema:
        """Parse a schema file. Raises :class:`CorruptFileError` naming ``path`` and the
        problem for anything that is not a readable Paimon schema."""
        data, layout = load_object(text, path=path, what="a schema file")
        return TableSchema.from_dict(data, path=path, layout=layout)

    @staticmethod
    def from_dict(data: Mapping[str, Any], *, path: str = "<schema>",
                  layout: Layout = "java") -> TableSchema:
        version = data.get("version", PAIMON_07_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise CorruptFileError(path, f"'version' must be an integer, not {version!r}")
        if version > CURRENT_VERSION or version < 1:
            raise UnsupportedVersionError(
                path, f"schema format version {version} is not supported "
                f"(schemalab reads versions 1 to {CURRENT_VERSION})")
        for key in ("id", "fields", "highestFieldId"):
            if key not in data:
                raise CorruptFileError(path, f"missing required key {key!r}")
        sid, hid = data["id"], data["highestFieldId"]
        if not isinstance(sid, int) or isinstance(sid, bool) or sid < 0:
            raise CorruptFileError(path, f"'id' must be a non-negative integer, not {sid!r}")
        if not isinstance(hid, int) or isinstance(hid, bool):
            raise CorruptFileError(path, f"'highestFieldId' must be an integer, not {hid!r}")
        if not isinstance(data["fields"], list):
            raise CorruptFileError(path, "'fields' must be a list")
        for f in data["fields"]:
            if isinstance(f, dict) and "name" in f and not isinstance(f["name"], str):
                raise CorruptFileError(path, f"field name must be a string, not {f['name']!r}")
        try:
            fields = tuple(field_from_json(f) for f in data["fields"])
        except UnknownTypeError as e:
            if e.rule == "unsupported-type":  # a real Paimon type, not a damaged file
                raise UnknownTypeError(f"{path}: {e.message}", type_text=e.type_text,
                                       rule=e.rule) from None
            raise CorruptFileError(path, e.message) from None
        except RecursionError:
            raise CorruptFileError(path, "a field type is nested too deeply") from None
        _check_fields(fields, hid, path)
        options = data.get("options", {})
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise CorruptFileError(path, "'options' must be an object")
        keys: dict[str, list[str]] = {}
        for key in ("partitionKeys", "primaryKeys"):
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
                raise CorruptFileError(path, f"{key!r} must be a list of column names")
            keys[key] = value
            names = {f.name for f in fields}
            missing = [k for k in value if k not in names]
            if missing:
                raise CorruptFileError(path, f"{key!r} names {missing[0]!r}, which is not a "
                                       "column of the schema")
        comment = data.get("comment")
        time_millis = data.get("timeMillis", 0)
        if not isinstance(time_millis, int) or isinstance(time_millis, bool):
            raise CorruptFileError(path, f"'timeMillis' must be an integer, not {time_millis!r}")
        return TableSchema(
            id=sid,
            fields=fields,
            highest_field_id=hid,
            partition_keys=tuple(keys["partitionKeys"]),
            primary_keys=tuple(keys["primaryKeys"]),
            options={str(k): _option_text(v) for k, v in options.items()},
            comment=None if comment is None else str(comment),
            time_millis=time_millis,
            version=version,
            extra={k: v for k, v in data.items() if k not in _KNOWN_KEYS},
            layout=layout,
        )

    def _repr_html_(self) -> str:
        return forms.html("schema", self)


def _check_fields(fields: tuple[DataField, ...], highest_field_id: int, path: str) -> None:
    """What a reader relies on: unique top-level names, unique field ids (nested too), and
    no id above ``highestFieldId`` (the next ADD COLUMN would reuse it)."""
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            raise CorruptFileError(path, f"two columns are named {f.name!r}")
        seen.add(f.name)
    ids: dict[int, str] = {}
    for _, f in iter_fields(fields):
        if f.id in ids:
            raise CorruptFileError(path, f"field id {f.id} is used by both {ids[f.id]!r} and "
                                   f"{f.name!r}")
        ids[f.id] = f.name
    top = max(ids, default=-1)
    if top > highest_field_id:
        raise CorruptFileError(path, f"'highestFieldId' is {highest_field_id}, but field "
                               f"{ids[top]!r} has id {top}")


def _option_text(value: Any) -> str:
    # Java reads option values with JsonNode.asText(): numbers and booleans become text.
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)

