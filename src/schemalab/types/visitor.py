"""One walk over nested types, used by everything that visits ROW/ARRAY/MAP/MULTISET.

A :class:`TypeVisitor` computes a value bottom-up: :func:`visit` hands each method the
results of its children. :class:`TypeTransform` is the visitor that rebuilds the type, so a
transformation overrides only what it changes. :class:`PartnerVisitor` walks a type together
with its *partner* in another schema version, matching ROW fields by id (an id the partner
lacks has partner ``None``): the shape of every evolve-by-id computation.

    >>> from schemalab.types.parse import parse_type
    >>> t = parse_type("ROW<a INT, b ARRAY<ROW<c STRING>>>")
    >>> [".".join(p) for p, _ in iter_fields(t.fields)]
    ['a', 'b', 'b.element.c']
    >>> contains_row(parse_type("MAP<STRING, ARRAY<INT>>"))
    False
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Generic, TypeVar

from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)

T = TypeVar("T")


class TypeVisitor(Generic[T]):
    """Bottom-up computation over a type. ``field`` wraps each ROW field's result (its
    type's result by default); ``multiset`` defaults to ``array``'s rule."""

    def atomic(self, t: AtomicType) -> T:
        raise NotImplementedError

    def row(self, t: RowType, fields: list[T]) -> T:
        raise NotImplementedError

    def field(self, f: DataField, result: T) -> T:
        return result

    def array(self, t: ArrayType, element: T) -> T:
        raise NotImplementedError

    def multiset(self, t: MultisetType, element: T) -> T:
        return self.array(ArrayType(t.element, t.nullable), element)

    def map(self, t: MapType, key: T, value: T) -> T:
        raise NotImplementedError


def visit(t: DataType, visitor: TypeVisitor[T]) -> T:
    """Run ``visitor`` over ``t``, children first."""
    if isinstance(t, AtomicType):
        return visitor.atomic(t)
    if isinstance(t, RowType):
        return visitor.row(t, [visitor.field(f, visit(f.type, visitor)) for f in t.fields])
    if isinstance(t, ArrayType):
        return visitor.array(t, visit(t.element, visitor))
    if isinstance(t, MultisetType):
        return visitor.multiset(t, visit(t.element, visitor))
    return visitor.map(t, visit(t.key, visitor), visit(t.value, visitor))


class TypeTransform(TypeVisitor[Any]):
    """Rebuilds the type it visits; override a method to change that part of it. A ROW
    field is rebuilt by ``row_field`` right after its own type, in field order."""

    def atomic(self, t: AtomicType) -> DataType:
        return t

    def field(self, f: DataField, result: Any) -> DataField:
        return self.row_field(f, result)

    def row(self, t: RowType, fields: list[Any]) -> DataType:
        return RowType(tuple(fields), t.nullable)

    def row_field(self, f: DataField, new_type: DataType) -> DataField:
        return f if f.type is new_type else replace(f, type=new_type)

    def array(self, t: ArrayType, element: DataType) -> DataType:
        return t if element is t.element else replace(t, element=element)

    def multiset(self, t: MultisetType, element: DataType) -> DataType:
        return t if element is t.element else MultisetType(element, t.nullable)

    def map(self, t: MapType, key: DataType, value: DataType) -> DataType:
        return t if key is t.key and value is t.value else MapType(key, value, t.nullable)


class PartnerVisitor(Generic[T]):
    """Bottom-up computation over ``t`` walked beside ``partner``, the same column in another
    schema version. ROW fields pair up by id; a field the partner lacks, or a partner of
    another shape, has partner ``None`` below that point."""

    def atomic(self, t: AtomicType, partner: DataType | None) -> T:
        raise NotImplementedError

    def row(self, t: RowType, partner: RowType | None,
            fields: list[tuple[DataField, DataField | None, T]]) -> T:
        raise NotImplementedError

    def array(self, t: ArrayType | MultisetType, partner: ArrayType | MultisetType | None,
              element: T) -> T:
        raise NotImplementedError

    def map(self, t: MapType, partner: MapType | None, key: T, value: T) -> T:
        raise NotImplementedError


def visit_with_partner(t: DataType, partner: DataType | None, visitor: PartnerVisitor[T]) -> T:
    """Run ``visitor`` over ``t`` and its partner type, children first."""
    if isinstance(t, AtomicType):
        return visitor.atomic(t, partner)
    if isinstance(t, RowType):
        p_row = partner if isinstance(partner, RowType) else None
        by_id = {f.id: f for f in p_row.fields} if p_row is not None else {}
        results = []
        for f in t.fields:
            pf = by_id.get(f.id)
            results.append((f, pf, visit_with_partner(f.type, None if pf is None else pf.type,
                                                      visitor)))
        return visitor.row(t, p_row, results)
    if isinstance(t, ArrayType | MultisetType):
        p_arr = partner if isinstance(partner, type(t)) else None
        return visitor.array(t, p_arr, visit_with_partner(
            t.element, None if p_arr is None else p_arr.element, visitor))
    p_map = partner if isinstance(partner, MapType) else None
    return visitor.map(t, p_map,
                       visit_with_partner(t.key, None if p_map is None else p_map.key, visitor),
                       visit_with_partner(t.value, None if p_map is None else p_map.value,
                                          visitor))


# --------------------------------------------------------------------------------------------
# Walks everyone needs
# --------------------------------------------------------------------------------------------


def iter_fields(fields: Sequence[DataField], path: tuple[str, ...] = ()
                ) -> Iterator[tuple[tuple[str, ...], DataField]]:
    """Every field, nested ROW fields included (also those inside ARRAY/MAP, whose steps are
    named ``element`` and ``value``), depth first, with its name path."""
    for f in fields:
        here = (*path, f.name)
        yield here, f
        t, sub = f.type, here
        while isinstance(t, ArrayType | MultisetType | MapType):
            if isinstance(t, MapType):
                t, sub = t.value, (*sub, "value")
            else:
                t, sub = t.element, (*sub, "element")
        if isinstance(t, RowType):
            yield from iter_fields(t.fields, sub)


def row_inside(t: DataType) -> RowType | None:
    """The ROW a column holds directly or as the element/value of its ARRAY/MAP nesting."""
    while isinstance(t, ArrayType | MultisetType | MapType):
        t = t.value if isinstance(t, MapType) else t.element
    return t if isinstance(t, RowType) else None


class _ContainsRow(TypeVisitor[bool]):
    def atomic(self, t: AtomicType) -> bool:
        return False

    def row(self, t: RowType, fields: list[bool]) -> bool:
        return True

    def array(self, t: ArrayType, element: bool) -> bool:
        return element

    def map(self, t: MapType, key: bool, value: bool) -> bool:
        return key or value


def contains(t: DataType, match: Callable[[DataType], bool]) -> bool:
    """Whether ``t`` or a type anywhere inside it (a ROW's fields, an ARRAY's, MULTISET's or
    VECTOR's element, a MAP's key and value) is one ``match`` takes."""
    if match(t):
        return True
    if isinstance(t, RowType):
        return any(contains(f.type, match) for f in t.fields)
    if isinstance(t, MapType):
        return contains(t.key, match) or contains(t.value, match)
    return isinstance(t, ArrayType | MultisetType) and contains(t.element, match)


def contains_row(t: DataType) -> bool:
    """Whether a ROW sits anywhere inside ``t`` (its fields are then matched by id)."""
    return visit(t, _ContainsRow())


class _AssignIds(TypeTransform):
    def __init__(self, last_id: int) -> None:
        self.last_id = last_id

    def row_field(self, f: DataField, new_type: DataType) -> DataField:
        # Java's ReassignFieldId numbers a field's nested fields before the field itself,
        # and the fields of a ROW in order: the order row_field is called in.
        self.last_id += 1
        return replace(f, id=self.last_id, type=new_type)


def assign_field_ids(t: DataType, last_id: int) -> tuple[DataType, int]:
    """``t`` with every ROW field inside it numbered from ``last_id + 1`` on, in Paimon's
    order (depth first, children before their field), and the last id used.

        >>> from schemalab.types.parse import parse_type
        >>> t, last = assign_field_ids(parse_type("ROW<a INT, b ROW<c INT>>"), 4)
        >>> [(f.id, f.name) for _, f in iter_fields(t.fields)], last
        ([(5, 'a'), (7, 'b'), (6, 'c')], 7)
    """
    walk = _AssignIds(last_id)
    return visit(t, walk), walk.last_id


class _StripIds(TypeTransform):
    def row_field(self, f: DataField, new_type: DataType) -> DataField:
        return replace(f, id=-1, type=new_type, description=None)


def strip_ids(t: DataType) -> DataType:
    """``t`` with every nested field's id and comment cleared: its shape alone."""
    return visit(t, _StripIds())


class _IdSignature(TypeVisitor[str]):
    def atomic(self, t: AtomicType) -> str:
        return ""

    def row(self, t: RowType, fields: list[str]) -> str:
        return "ROW<" + ",".join(fields) + ">"

    def field(self, f: DataField, result: str) -> str:
        return f"{f.id}{result}"

    def array(self, t: ArrayType, element: str) -> str:
        return f"ARRAY<{element}>"

    def multiset(self, t: MultisetType, element: str) -> str:
        return f"MULTISET<{element}>"

    def map(self, t: MapType, key: str, value: str) -> str:
        return f"MAP<{key},{value}>"


def id_signature(t: DataType) -> str:
    """The ids of the ROW fields nested in ``t``, in their nesting: two columns of one Spark
    type hold the same data only when their signatures are equal too (a nested field dropped
    and re-added under its old name and type has a new id)."""
    return visit(t, _IdSignature())


class _Names(TypeVisitor[set[str]]):
    def atomic(self, t: AtomicType) -> set[str]:
        return set()

    def row(self, t: RowType, fields: list[set[str]]) -> set[str]:
        out: set[str] = set()
        return out.union(*fields)

    def field(self, f: DataField, result: set[str]) -> set[str]:
        return result | {f.name}

    def array(self, t: ArrayType, element: set[str]) -> set[str]:
        return element

    def map(self, t: MapType, key: set[str], value: set[str]) -> set[str]:
        return key | value


def nested_names(fields: Sequence[DataField]) -> set[str]:
    """The names of ``fields`` and of every field nested inside them."""
    out: set[str] = set()
    names = _Names()
    for f in fields:
        out.add(f.name)
        found: set[str] = visit(f.type, names)
        out.update(found)
    return out
