"""Schema versions as the explorer sees them: fields (nested ones with dotted paths), the
events that changed them, and each field id's lineage. Values only; see
:mod:`schemalab.history.lineage` for how they are computed."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from schemalab import forms

EventKind = Literal["added", "renamed", "retyped", "nullability_changed", "commented",
                    "default_changed", "moved", "dropped"]
EVENT_KINDS: tuple[EventKind, ...] = ("added", "renamed", "retyped", "nullability_changed",
                                      "commented", "default_changed", "moved", "dropped")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a history is built: tens of thousands
    of small objects that all stay alive, whose collector passes freed nothing and made the
    cost grow faster than the history (bench/HISTORY_SCALE.md). Reference counting still
    frees everything that is dropped."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class FieldInfo:
    """A field in one schema version; nested fields have a dotted ``path`` and a parent."""

    id: int
    name: str
    type: str
    nullable: bool = True
    comment: str | None = None
    path: tuple[str, ...] = ()
    parent_id: int | None = None
    position: int = 0
    #: the default a writer puts in place of an omitted value (Paimon's defaultValue,
    #: Iceberg's write-default), as the format's metadata spells it
    default: str | None = None

    @property
    def full_name(self) -> str:
        return ".".join(self.path) if self.path else self.name

    def __repr__(self) -> str:
        return (f"FieldInfo({self.id}, {self.full_name!r}, {self.type!r}"
                f"{'' if self.nullable else ', NOT NULL'})")


@dataclass(frozen=True)
class FieldEvent:
    """What happened to one field in one schema version."""

    field_id: int
    schema_id: int
    kind: EventKind
    name: str
    type: str
    old_name: str | None = None
    old_type: str | None = None

    def __repr__(self) -> str:
        return f"FieldEvent(schema {self.schema_id}, field {self.field_id}: {self.describe()})"

    def describe(self) -> str:
        n = f"`{self.name}`"
        if self.kind == "added":
            return f"added {n} {self.type}"
        if self.kind == "renamed":
            return f"renamed `{self.old_name}` → {n}"
        if self.kind == "retyped":
            return f"{n}: {self.old_type} → {self.type}"
        if self.kind == "nullability_changed":
            return f"{n}: {self.old_type} → {self.type}"
        if self.kind == "commented":
            return f"{n}: comment changed"
        if self.kind == "default_changed":
            if not self.type:
                return f"{n}: default dropped (writes after this version leave it NULL)"
            return (f"{n}: default {self.type} for writes after this version (rows written "
                    "before keep their values)")
        if self.kind == "moved":
            return f"{n} moved"
        return f"dropped {n}"


@dataclass(frozen=True)
class SchemaVersion:
    """One schema version with the events that produced it (computed by field id)."""

    id: int
    time_millis: int | None
    fields: tuple[FieldInfo, ...]
    events: tuple[FieldEvent, ...] = ()
    #: "schema", or "partition-spec" / "sort-order" for Iceberg's other versioned things
    kind: str = "schema"
    label: str = ""
    options: dict[str, str] = field(default_factory=dict)
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()

    @property
    def top_level(self) -> tuple[FieldInfo, ...]:
        return tuple(f for f in self.fields if f.parent_id is None)

    def __repr__(self) -> str:
        what = "" if self.kind == "schema" else f"{self.kind} "
        return (f"SchemaVersion({what}{self.id}, {len(self.fields)} field"
                f"{'s' if len(self.fields) != 1 else ''}, {len(self.events)} change"
                f"{'s' if len(self.events) != 1 else ''})")

    def __str__(self) -> str:
        head = f"{self.kind} {self.id}" + (f": {self.label}" if self.label else "")
        lines = [head] + [f"  {ev.describe()}" for ev in self.events]
        lines += [f"  {f.id:>4}  {'  ' * len(f.path[:-1])}{f.name}  {f.type}"
                  f"{'' if f.nullable else ' NOT NULL'}" for f in self.fields]
        return "\n".join(lines)

    def by_id(self) -> dict[int, FieldInfo]:
        return {f.id: f for f in self.fields}

    def _repr_html_(self) -> str:
        return forms.html("schema-version", self)


@dataclass(frozen=True)
class FieldLineage:
    """A field id's life: its name/type in every version where it exists, and its events."""

    field_id: int
    states: tuple[tuple[int, FieldInfo], ...]
    events: tuple[FieldEvent, ...]
    #: ids of *other* fields that used one of this field's names before it
    name_reused_from: tuple[int, ...] = ()
    #: ids of fields this one swapped names with
    swapped_with: tuple[int, ...] = ()

    @property
    def names(self) -> list[str]:
        out: list[str] = []
        for _, f in self.states:
            if not out or out[-1] != f.full_name:
                out.append(f.full_name)
        return out

    @property
    def alive(self) -> bool:
        return not self.events or self.events[-1].kind != "dropped"

    def __repr__(self) -> str:
        return (f"FieldLineage(field {self.field_id}: {' → '.join(self.names)}; "
                + ", ".join(f"{ev.kind}@{ev.schema_id}" for ev in self.events) + ")")

    def __str__(self) -> str:
        lines = [f"field {self.field_id}: {' → '.join(self.names)}"
                 + ("" if self.alive else " (dropped)")]
        lines += [f"  schema {ev.schema_id}: {ev.describe()}" for ev in self.events]
        if self.name_reused_from:
            lines.append("  its name was used before by field "
                         + ", ".join(map(str, self.name_reused_from)))
        if self.swapped_with:
            lines.append("  swapped names with field " + ", ".join(map(str, self.swapped_with)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return forms.html("field-lineage", self)


@dataclass(frozen=True)
class SchemaDiff:
    old: int
    new: int
    events: tuple[FieldEvent, ...]

    def by_kind(self, kind: EventKind) -> list[FieldEvent]:
        return [e for e in self.events if e.kind == kind]

    def __str__(self) -> str:
        lines = [f"schema {self.old} → {self.new}: "
                 + (f"{len(self.events)} change{'s' if len(self.events) != 1 else ''}"
                    if self.events else "no field changes")]
        return "\n".join(lines + [f"  field {ev.field_id}: {ev.describe()}"
                                  for ev in self.events])


