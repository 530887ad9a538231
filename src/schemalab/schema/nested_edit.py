"""Editing nested columns: a change's path (``a.b.c``) followed through ROW fields and the
elements, keys and values of ARRAY, MAP and MULTISET types to the fields it names, and the
field list there rebuilt with the change made. Used by :func:`schemalab.schema.apply.apply_changes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from schemalab.errors import SchemaChangeError
from schemalab.schema.changes import (
    AddColumn,
    ChangeContext,
    Move,
    path_text,
)
from schemalab.types.model import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)


def index_of(fields: tuple[DataField, ...], name: str) -> int:
    for i, f in enumerate(fields):
        if f.name == name:
            return i
    return -1


def edit_container(ctx: ChangeContext, fields: tuple[DataField, ...], path: tuple[str, ...],
                    edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]
                    ) -> tuple[DataField, ...]:
    """Apply ``edit`` to the field list that holds ``path[-1]`` (top level, or the fields of a
    ROW reached through ``path[:-1]``, passing ARRAY ``element`` / MAP ``value`` steps)."""
    return _edit_rows(ctx, fields, path, 0, edit)


def _edit_rows(ctx: ChangeContext, fields: tuple[DataField, ...], path: tuple[str, ...], depth: int,
               edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]
               ) -> tuple[DataField, ...]:
    if depth == len(path) - 1:
        return edit(fields, path[depth])
    idx = index_of(fields, path[depth])
    if idx < 0:
        raise ctx.not_exists(path_text(path[:depth + 1]))
    f = fields[idx]
    new_type = _edit_inside(ctx, f.type, path, depth + 1, edit)
    return fields[:idx] + (replace(f, type=new_type),) + fields[idx + 1:]


def _edit_inside(ctx: ChangeContext, t: DataType, path: tuple[str, ...], depth: int,
                 edit: Callable[[tuple[DataField, ...], str], tuple[DataField, ...]]) -> DataType:
    if isinstance(t, RowType):
        return RowType(_edit_rows(ctx, t.fields, path, depth, edit), t.nullable)
    if depth < len(path) - 1:
        step = path[depth]
        if isinstance(t, ArrayType) and step == "element":
            return ArrayType(_edit_inside(ctx, t.element, path, depth + 1, edit), t.nullable)
        if isinstance(t, MultisetType) and step == "element":
            return MultisetType(_edit_inside(ctx, t.element, path, depth + 1, edit), t.nullable)
        if isinstance(t, MapType) and step == "value":
            return MapType(t.key, _edit_inside(ctx, t.value, path, depth + 1, edit), t.nullable)
    raise ctx.not_exists(path_text(path))


def edit_field(ctx: ChangeContext, fields: tuple[DataField, ...], path: tuple[str, ...],
                edit: Callable[[DataField, tuple[str, ...]], DataField]) -> tuple[DataField, ...]:
    """Apply ``edit(field, sub)`` to the field named by ``path``. A path may end in
    ``element``/``value`` steps into an ARRAY or MAP (``sub``), as Paimon's nested updates do
    for ``ARRAY<INT> → ARRAY<BIGINT>``."""
    for split in range(len(path), 0, -1):
        head, sub = path[:split], path[split:]
        if sub and not all(s in ("element", "value") for s in sub):
            continue
        try:
            def one(fs: tuple[DataField, ...], name: str,
                    s: tuple[str, ...] = sub) -> tuple[DataField, ...]:
                return _edit_one(ctx, fs, name, path, s, edit)

            return edit_container(ctx, fields, head, one)
        except _NoSuchStep:
            continue
        except SchemaChangeError as e:
            # ("tags", "element") is not a ROW path; try it as a step into the ARRAY.
            if e.rule != "column-must-exist" or split == 1:
                raise
    raise ctx.not_exists(path_text(path))


class _NoSuchStep(Exception):
    pass


def _edit_one(ctx: ChangeContext, fs: tuple[DataField, ...], name: str, path: tuple[str, ...],
              sub: tuple[str, ...], edit: Callable[[DataField, tuple[str, ...]], DataField]
              ) -> tuple[DataField, ...]:
    idx = index_of(fs, name)
    if idx < 0:
        if sub:
            raise _NoSuchStep()
        raise ctx.not_exists(path_text(path))
    if sub and not _has_sub(fs[idx].type, sub):
        raise _NoSuchStep()
    return fs[:idx] + (edit(fs[idx], sub),) + fs[idx + 1:]


def _has_sub(t: DataType, sub: tuple[str, ...]) -> bool:
    for step in sub:
        if isinstance(t, ArrayType | MultisetType) and step == "element":
            t = t.element
        elif isinstance(t, MapType) and step == "value":
            t = t.value
        else:
            return False
    return True


def type_at(t: DataType, sub: tuple[str, ...]) -> DataType:
    for step in sub:
        t = t.element if step == "element" else t.value  # type: ignore[union-attr]
    return t


def replace_at(t: DataType, sub: tuple[str, ...], new: DataType) -> DataType:
    if not sub:
        return new
    if isinstance(t, ArrayType):
        return ArrayType(replace_at(t.element, sub[1:], new), t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(replace_at(t.element, sub[1:], new), t.nullable)
    assert isinstance(t, MapType)
    return MapType(t.key, replace_at(t.value, sub[1:], new), t.nullable)


def insert_field(ctx: ChangeContext, fs: tuple[DataField, ...], new: DataField, change: AddColumn,
            partition_keys: tuple[str, ...], add_before_partition: bool) -> tuple[DataField, ...]:
    if index_of(fs, new.name) >= 0:
        raise ctx.already_exists(path_text(change.path))
    move = change.move
    items = list(fs)
    if move is None or move.kind == "LAST":
        if move is None and add_before_partition and partition_keys and len(change.path) == 1:
            at = next((i for i, f in enumerate(items) if f.name in partition_keys), len(items))
            items.insert(at, new)
        else:
            items.append(new)
    elif move.kind == "FIRST":
        items.insert(0, new)
    else:
        ref = index_of(fs, move.reference or "")
        if ref < 0:
            # Java names the reference bare; the error's column still has the full path.
            err = ctx.not_exists(move.reference or "")
            err.column = path_text((*change.path[:-1], move.reference or ""))
            raise err
        items.insert(ref + 1 if move.kind == "AFTER" else ref, new)
    return tuple(items)


def apply_move(ctx: ChangeContext, fields: tuple[DataField, ...], move: Move
               ) -> tuple[DataField, ...]:
    items = list(fields)
    at = index_of(fields, move.field_name)
    if at < 0:
        raise ctx.fail(f"Field name not found: {move.field_name}", column=move.field_name,
                       rule="column-must-exist")
    if move.kind in ("FIRST", "LAST"):
        target = 0 if move.kind == "FIRST" else len(items) - 1
        if target == at:
            raise ctx.fail(f"Cannot move itself for column {move.field_name}",
                           column=move.field_name, rule="move-needs-another-column")
    else:
        ref = index_of(fields, move.reference or "")
        if ref < 0:
            raise ctx.fail(f"Reference field name not found: {move.reference}",
                           column=move.reference, rule="column-must-exist")
        if ref == at:
            raise ctx.fail(f"Cannot move itself for column {move.field_name}",
                           column=move.field_name, rule="move-needs-another-column")
        target = ref
        if move.kind == "AFTER" and at > ref:
            target += 1
        if move.kind == "BEFORE" and at < ref:
            target -= 1
        target = min(target, len(items) - 1)
    f = items.pop(at)
    items.insert(target, f)
    return tuple(items)
