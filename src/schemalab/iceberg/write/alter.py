"""ALTER TABLE on an Iceberg table with Iceberg's rules and messages (Java's
``SchemaUpdate`` and ``TypeUtil.isPromotionAllowed``): new columns get ids above
``last-column-id``, a changed schema becomes a new schema (or an equal earlier one is
reused, as Java does), and one statement is one commit.

Promotions: ``int → long``, ``float → double``, ``decimal(P, S) → decimal(P', S)`` with
``P' >= P``, in every format version, as Java Iceberg 1.12 allows them; everything else is
refused with Java's "Cannot change column type: c: int -> string". The v3 spec adds
``date → timestamp`` / ``timestamp_ns``, but Java 1.12 refuses that ALTER and cannot read a
table that has it (its generic reader returns the old files' dates as dates, its Spark reader
fails with a ClassCastException): schemalab refuses it too, so every table it writes reads in
the newest Java engine. Tables others promoted that way are still read
(:mod:`schemalab.iceberg.manifests`, :mod:`schemalab.iceberg.spark_values`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from schemalab.errors import SchemaChangeError
from schemalab.iceberg.metadata import IcebergSchema, TableMetadata
from schemalab.iceberg.types import (
    IcebergPrimitiveType,
    iceberg_type_text,
    parse_fields,
    parse_iceberg_type,
)
from schemalab.iceberg.write.schema_json import FieldIds, iceberg_type_of, schema_json, type_json
from schemalab.iceberg.write.sort_order import java_field_text
from schemalab.iceberg.write.tablemeta import set_current_schema
from schemalab.schema.changes import (
    AddColumn,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnDefault,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)


def default_json(literal: str, t: Any, column: str, update: SchemaUpdate,
                 what: str = "initial") -> Any:
    """``DEFAULT <literal>`` as the spec's JSON single-value form for type ``t`` (format v3
    only, as Java's ``Schema.checkCompatibility`` says). ``what``: ``"initial"`` (ADD
    COLUMN's default, initial and write default at once) or ``"write"`` (SET DEFAULT; Java
    1.12 takes a write default alone in v1 and v2 too: its check looks at initial defaults)."""
    text = literal.strip()
    unquoted = text[1:-1].replace("''", "'") if text[:1] == "'" and text[-1:] == "'" else text
    if update.version < 3 and what == "initial":
        raise update.fail(f"Invalid schema for v{update.version}:\n- Invalid {what} default "
                          f"for {column}: non-null default ({unquoted}) is not supported "
                          "until v3", column, "iceberg-column-default")
    kind = t.kind if isinstance(t, IcebergPrimitiveType) else "nested"
    try:
        if kind in ("int", "long"):
            return int(unquoted)
        if kind in ("float", "double"):
            return float(unquoted)
        if kind == "boolean" and unquoted.lower() in ("true", "false"):
            return unquoted.lower() == "true"
        if kind == "decimal":
            from decimal import Decimal

            return str(Decimal(unquoted).quantize(Decimal(1).scaleb(-(t.scale or 0))))
        if kind == "string":
            return unquoted
        if kind == "date":
            import datetime as dt

            return dt.date.fromisoformat(unquoted).isoformat()
        if kind in ("timestamp", "timestamptz"):
            import datetime as dt

            value = dt.datetime.fromisoformat(unquoted)
            return value.isoformat(timespec="microseconds") + ("+00:00" if kind ==
                                                                 "timestamptz" else "")
    except ValueError:
        pass
    shown = f'"{unquoted}"' if unquoted != text else text  # Java's StringLiteral quotes
    raise update.fail(f"Cannot cast default value to {iceberg_type_text(t)}: {shown} "
                      f"(column {column})", column, "iceberg-column-default")


def promotion_allowed(old: Any, new: Any, version: int) -> bool:
    """Iceberg's type promotions as Java 1.12's ``TypeUtil.isPromotionAllowed`` allows them
    (the spec's, without v3's ``date → timestamp``: see the module docstring). ``version``
    is the table's format version."""
    if not isinstance(old, IcebergPrimitiveType) or not isinstance(new, IcebergPrimitiveType):
        return False
    if old.name == new.name:
        return True
    pairs = {("int", "long"), ("float", "double")}
    if (old.kind, new.kind) in pairs:
        return True
    return (old.kind == new.kind == "decimal" and old.scale == new.scale
            and (new.precision or 0) >= (old.precision or 0))


class SchemaUpdate:
    """Pending changes to one schema, on its JSON form."""

    def __init__(self, schema: IcebergSchema, last_column_id: int, version: int,
                 table: str) -> None:
        self.schema, self.version, self.table = schema, version, table
        self.fields: list[dict[str, Any]] = copy.deepcopy(schema_json(schema)["fields"])
        self.ids = FieldIds(last_column_id)
        self.identifiers = [n for i in schema.identifier_field_ids
                            if (n := schema.full_name(i)) is not None]

    def fail(self, message: str, column: str | None = None,
             rule: str = "iceberg-schema-update") -> SchemaChangeError:
        return SchemaChangeError(f"{message} (table {self.table})", table=self.table,
                                 column=column, rule=rule)

    # ---- finding fields ---------------------------------------------------------------------

    def _struct_of(self, f: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The fields a column's name path continues into (list elements and map values
        are looked through, as Java's ``findField`` does with ``element``/``value``)."""
        t = f["type"]
        if isinstance(t, dict) and t.get("type") == "struct":
            return list(t["fields"])
        return None

    def _walk(self, path: Sequence[str]) -> tuple[list[dict[str, Any]], int, int] | None:
        """(the field list holding the column a prefix of ``path`` names, its index there,
        how many parts that prefix has): the column, or the list or map whose
        ``element`` / ``value`` the rest of ``path`` names (Spark's field names for them,
        ``m.value.k``, as Java's ``findField`` indexes them)."""
        fields, depth = self.fields, 0
        while True:
            idx = next((i for i, f in enumerate(fields) if f["name"] == path[depth]), None)
            if idx is None:
                return None
            depth += 1
            named = depth
            if depth == len(path):
                return fields, idx, depth
            t = fields[idx]["type"]
            while isinstance(t, dict) and t.get("type") in ("list", "map"):
                step = "element" if t["type"] == "list" else "value"
                t = t[step]
                if path[depth] == step:  # named explicitly, as Spark does
                    depth += 1
                    if depth == len(path):
                        return fields, idx, named
            if not (isinstance(t, dict) and t.get("type") == "struct"):
                return None
            fields = t["fields"]

    def find(self, path: Sequence[str]) -> tuple[list[dict[str, Any]], int] | None:
        """(the field list holding the column at ``path``, its index there), or None (also
        for a list's element or a map's value itself, which is no column of a struct)."""
        hit = self._walk(path)
        if hit is None or hit[2] != len(path):
            return None
        return hit[0], hit[1]

    def _parent_type(self, parent: Sequence[str]) -> tuple[Any, Any] | None:
        """(the type a new column under ``parent`` goes into, before looking through a list
        or map; the field that holds it), or None when ``parent`` names nothing."""
        hit = self._walk(parent)
        if hit is None:
            return None
        pf = hit[0][hit[1]]
        t = pf["type"]
        for _ in range(len(parent) - hit[2]):  # parent ends in .element / .value
            t = t["element"] if t["type"] == "list" else t["value"]
        return t, pf

    def _field(self, path: Sequence[str], what: str) -> dict[str, Any]:
        hit = self.find(path)
        if hit is None:
            raise self.fail(f"Cannot {what} missing column: {'.'.join(path)}", ".".join(path))
        return hit[0][hit[1]]

    # ---- changes ----------------------------------------------------------------------------

    def apply(self, change: SchemaChange) -> None:
        handler = {AddColumn: self._add, DropColumn: self._drop, RenameColumn: self._rename,
                   UpdateColumnType: self._retype, UpdateColumnNullability: self._nullability,
                   UpdateColumnComment: self._comment, UpdateColumnDefault: self._default,
                   UpdateColumnPosition: self._position}.get(type(change))
        if handler is None:
            raise self.fail(f"schemalab does not apply {change.sql()} to Iceberg tables yet")
        handler(change)  # type: ignore[operator]

    def _add(self, c: AddColumn) -> None:
        name, parent = c.path[-1], c.path[:-1]
        full = ".".join(c.path)
        if parent:
            found = self._parent_type(parent)
            if found is None:
                raise self.fail(f"Cannot find parent struct: {'.'.join(parent)}", full)
            t, pf = found
            while isinstance(t, dict) and t.get("type") in ("list", "map"):
                t = t["element"] if t["type"] == "list" else t["value"]
            if not (isinstance(t, dict) and t.get("type") == "struct"):
                shown = iceberg_type_text(parse_iceberg_type(pf["type"], version=self.version))
                raise self.fail(f"Cannot add to non-struct column: {'.'.join(parent)}: {shown}",
                                full)
            siblings: list[dict[str, Any]] = t["fields"]
        else:
            siblings = self.fields
        if any(f["name"] == name for f in siblings):
            raise self.fail(f"Cannot add column, name already exists: "
                            f"{'.'.join(parent) + '.' if parent else ''}{name}", full)
        if not c.data_type.nullable and c.default is None:
            # Iceberg's Spark SQL (Spark3Util) words it first; its API (SchemaUpdate) second
            raise self.fail(f"Unsupported table change: Incompatible change: cannot add "
                            f"required column: {full} (Java's UpdateSchema: Incompatible "
                            f"change: cannot add required column without a default value: "
                            f"{full})", full)
        fid = self.ids.next()
        t = iceberg_type_of(c.data_type, self.ids, self.table, full, self.version)
        new: dict[str, Any] = {"id": fid, "name": name, "required": not c.data_type.nullable,
                               "type": type_json(t)}
        if c.comment is not None:
            new["doc"] = c.comment
        if c.default is not None:
            value = default_json(c.default, t, full, self)
            new["initial-default"] = new["write-default"] = value
        siblings.append(new)
        if c.move is not None:
            self._move(siblings, c.move, c.path)

    def _drop(self, c: DropColumn) -> None:
        full = ".".join(c.path)
        hit = self.find(c.path)
        if hit is None and c.if_exists:
            return  # Spark's analyzer leaves the column out: Iceberg never sees it
        if hit is None:
            raise self.fail(f"Cannot delete missing column: {full}", full)
        fields, idx = hit
        for ident in self.identifiers:
            if ident == full or ident.startswith(full + "."):
                shown = java_field_text(parse_fields({"fields": [fields[idx]]}, self.version,
                                                     "")[0])
                raise self.fail(f"Cannot delete identifier field {shown}. To force deletion, "
                                "also call setIdentifierFields to update identifier fields.",
                                full)
        del fields[idx]

    def _rename(self, c: RenameColumn) -> None:
        hit = self.find(c.path)
        full = ".".join(c.path)
        if hit is None:
            raise self.fail(f"Cannot rename missing column: {full}", full)
        fields, idx = hit
        other = next((i for i, f in enumerate(fields) if f["name"] == c.new_name and i != idx),
                     None)
        if other is not None:
            prefix = ".".join(c.path[:-1])
            first, second = sorted((idx, other))
            raise self.fail(f"Invalid schema: multiple fields for name "
                            f"{prefix + '.' if prefix else ''}{c.new_name}: "
                            f"{fields[first]['id']} and {fields[second]['id']}", full)
        fields[idx]["name"] = c.new_name
        if full in self.identifiers:
            renamed = ".".join((*c.path[:-1], c.new_name))
            self.identifiers = [renamed if n == full else n for n in self.identifiers]

    def _retype(self, c: UpdateColumnType) -> None:
        full = ".".join(c.path)
        f = self._field(c.path, "update")
        old = parse_iceberg_type(f["type"], version=self.version)
        new = iceberg_type_of(c.new_type, FieldIds(0), self.table, full, self.version)
        if not isinstance(old, IcebergPrimitiveType) or \
                not promotion_allowed(old, new, self.version):
            raise self.fail(f"Cannot change column type: {full}: {iceberg_type_text(old)} -> "
                            f"{iceberg_type_text(new)}", full)
        f["type"] = type_json(new)

    def _nullability(self, c: UpdateColumnNullability) -> None:
        full = ".".join(c.path)
        f = self._field(c.path, "update")
        if c.nullable or f["required"]:
            f["required"] = not c.nullable and f["required"]
            return
        raise self.fail(f"Cannot change column nullability: {full}: optional -> required",
                        full)

    def _comment(self, c: UpdateColumnComment) -> None:
        f = self._field(c.path, "update")
        if c.comment is None:
            f.pop("doc", None)
        else:
            f["doc"] = c.comment

    def _default(self, c: UpdateColumnDefault) -> None:
        """Java's ``updateColumnDefault``: only the write default changes; the initial
        default stays what ADD COLUMN fixed (the spec: it never changes). As in Java 1.12,
        any format version takes it."""
        full = ".".join(c.path)
        f = self._field(c.path, "update")
        if c.default is None:
            f.pop("write-default", None)
            return
        t = parse_iceberg_type(f["type"], version=self.version)
        if not isinstance(t, IcebergPrimitiveType):
            raise self.fail(f"Invalid default value for {iceberg_type_text(t)}: {c.default} "
                            "(must be null)", full, "iceberg-column-default")
        f["write-default"] = default_json(c.default, t, full, self, what="write")

    def _position(self, c: UpdateColumnPosition) -> None:
        full = ".".join(c.path)
        hit = self.find(c.path)
        if hit is None:
            raise self.fail(f"Cannot move missing column: {full}", full)
        self._move(hit[0], c.move, c.path)

    def _move(self, siblings: list[dict[str, Any]], move: Move, path: Sequence[str]) -> None:
        """Java's ``moveFirst`` / ``moveAfter`` / ``moveBefore`` on the field at ``path``
        (in ``siblings``): a field moves only within its own struct."""
        full, name = ".".join(path), path[-1]
        idx = next(i for i, f in enumerate(siblings) if f["name"] == name)
        if move.kind in ("FIRST", "LAST"):
            siblings.insert(0 if move.kind == "FIRST" else len(siblings), siblings.pop(idx))
            return
        parent = tuple(path[:-1]) if move.reference_parent is None else move.reference_parent
        ref_path = (*parent, move.reference or "")
        where = move.kind.lower()
        hit = self.find(ref_path)
        if hit is None:
            raise self.fail(f"Cannot move {full} {where} missing column: "
                            f"{'.'.join(ref_path)}", full)
        if hit[0][hit[1]] is siblings[idx]:
            raise self.fail(f"Cannot move {full} {where} itself", full)
        if hit[0] is not siblings:
            raise self.fail(f"Cannot move field {full} to a different struct", full)
        field = siblings.pop(idx)
        at = next(i for i, f in enumerate(siblings) if f["name"] == ref_path[-1])
        siblings.insert(at + 1 if move.kind == "AFTER" else at, field)

    # ---- result -----------------------------------------------------------------------------

    def result(self, schema_id: int) -> IcebergSchema:
        fields = parse_fields({"fields": self.fields}, self.version, "")
        probe = IcebergSchema(schema_id, fields)
        by_name = {probe.full_name(i): i for i in probe.index}
        ids = tuple(by_name[n] for n in self.identifiers if n in by_name)
        return IcebergSchema(schema_id, fields, ids)


def apply_alter(d: dict[str, Any], changes: Sequence[SchemaChange], table: str) -> int | None:
    """Apply one ALTER statement's ``changes`` to metadata ``d`` (in place); the new current
    schema id, or None when only properties changed."""
    from schemalab.iceberg.metadata import parse_table_metadata

    m = parse_table_metadata(d, table)
    schema = m.schema()
    update = SchemaUpdate(schema, m.last_column_id, m.format_version, table)
    touched = False
    props = d.setdefault("properties", {})
    for c in changes:
        if isinstance(c, SetOption):
            _set_property(d, props, c.key, c.value, table)
        elif isinstance(c, RemoveOption):
            props.pop(c.key, None)
        elif isinstance(c, UpdateComment):
            if c.comment is None:
                props.pop("comment", None)
            else:
                props["comment"] = c.comment
        else:
            update.apply(c)
            touched = True
    if not touched:
        return None
    new_id = max(s.schema_id for s in m.schemas) + 1
    new = update.result(new_id)
    if new.fields == schema.fields and new.identifier_field_ids == schema.identifier_field_ids:
        return schema.schema_id
    check_sources(m, schema, new, table)
    set_current_schema(d, new, update.ids.last)
    return int(d["current-schema-id"])


def check_sources(m: TableMetadata, old: IcebergSchema, new: IcebergSchema,
                  table: str) -> None:
    """What ``TableMetadata.Builder.build`` checks of a new current schema: every field of
    the default partition spec (but v1's ``void`` ones) and of the default sort order still
    has its source column (``PartitionSpec.checkCompatibility``,
    ``SortOrder.checkCompatibility``); Java's message, then the table and the column."""
    spec = m.spec(m.default_spec_id)
    order = next((o for o in m.sort_orders if o.order_id == m.default_sort_order_id), None)
    missing: list[tuple[str, int]] = [
        (f"partition field: {pf.field_id}: {pf.name}: {pf.transform}({pf.source_ids[0]})",
         pf.source_ids[0]) for pf in (spec.fields if spec else ())
        if pf.transform != "void" and new.find(pf.source_ids[0]) is None]
    missing += [(f"sort field: {sf.transform}({sf.source_ids[0]}) {sf.direction.upper()} "
                 f"{sf.null_order.upper().replace('-', ' ')}", sf.source_ids[0])
                for sf in (order.fields if order else ())
                if new.find(sf.source_ids[0]) is None]
    if missing:
        what, fid = missing[0]
        column = old.full_name(fid) or str(fid)
        where, advice = ("partition spec", "ALTER TABLE .. DROP PARTITION FIELD") \
            if what.startswith("partition") else \
            ("sort order", "ALTER TABLE .. WRITE UNORDERED, or ORDERED BY other columns,")
        raise SchemaChangeError(
            f"Cannot find source column for {what} (table {table}: column {column} is in its "
            f"current {where}; {advice} first)", table=table, column=column,
            rule="iceberg-source-column-in-use")


def _set_property(d: dict[str, Any], props: dict[str, Any], key: str, value: str,
                  table: str) -> None:
    if key != "format-version":
        props[key] = value
        return
    old = int(d["format-version"])
    if value.strip() not in ("1", "2", "3"):
        raise SchemaChangeError(f"Unsupported format version: v{value} (table {table})",
                                table=table, rule="iceberg-format-version")
    new = int(value)
    if new < old:
        raise SchemaChangeError(f"Cannot downgrade v{old} table to v{new} (table {table})",
                                table=table, rule="iceberg-format-version")
    d["format-version"] = new
    d.setdefault("last-sequence-number", 0)
    if new >= 3:
        d.setdefault("next-row-id", 0)
