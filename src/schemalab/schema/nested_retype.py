"""A whole ARRAY / MULTISET / MAP type change made at the values inside, as Paimon's catalog
ALTER makes it.

Paimon (1.2 and later, 2.0 included) has no ``CastExecutors`` rule from one ARRAY or MAP
type to another, so ``SchemaManager`` given ``arr`` ARRAY<INT> → ARRAY<BIGINT> as one change
refuses it. Its catalog ALTER (``FlinkCatalog`` ``MODIFY``, CDC schema evolution) first
splits such a change with ``NestedSchemaUtils.generateNestedColumnUpdates`` into one change
per value inside: the element is ``arr.element``, a map's value ``m.value`` (its key may
not change), and each of those is judged on its own by ``SchemaManager`` (``supportsCast``
and a ``CastExecutors`` rule), with every nullability change checked as such. The schema
that results is the one ``ALTER COLUMN arr.element TYPE BIGINT`` gives.

    >>> from schemalab.types import parse_type as t
    >>> def leaf(s, n, path): return n
    >>> def fail(message, column): return ValueError(message)
    >>> retype_inside(t("MAP<STRING, ARRAY<INT>>"), t("MAP<STRING, ARRAY<BIGINT>>"), "m",
    ...               leaf=leaf, nullability=lambda s, n, p: None, fail=fail).sql()
    'MAP<STRING, ARRAY<BIGINT>>'
"""

from __future__ import annotations

from collections.abc import Callable

from schemalab.types.model import ArrayType, DataType, MapType, MultisetType

#: a leaf type change as ``SchemaManager`` judges it: (old, new, path) → the new type
Leaf = Callable[[DataType, DataType, str], DataType]
#: a container's nullability change, checked: (old, new, path)
Nullability = Callable[[DataType, DataType, str], None]
#: an error for (message, path)
Fail = Callable[[str, str], Exception]


def is_container(t: DataType) -> bool:
    """An ARRAY, MULTISET or MAP: the types whose changes are split into their values."""
    return isinstance(t, ArrayType | MultisetType | MapType)


def retype_inside(source: DataType, target: DataType, column: str, *, leaf: Leaf,
                  nullability: Nullability, fail: Fail) -> DataType:
    """``source`` changed to ``target`` one value at a time (the module's docstring);
    ``column`` is the path of ``source``. Paimon's messages where the split itself fails."""
    if isinstance(source, ArrayType | MultisetType):
        kind = "array" if isinstance(source, ArrayType) else "multiset"
        if type(target) is not type(source):
            raise fail(f"Column {column} can only be updated to {kind} type, and cannot be "
                       f"updated to {target.sql()} type", column)
        assert isinstance(target, ArrayType | MultisetType)
        element = retype_inside(source.element, target.element, f"{column}.element",
                                leaf=leaf, nullability=nullability, fail=fail)
        nullability(source, target, column)
        return type(source)(element, target.nullable)
    if isinstance(source, MapType):
        if not isinstance(target, MapType):
            raise fail(f"Column {column} can only be updated to map type, and cannot be "
                       f"updated to {target.sql()} type", column)
        if source.key.with_nullable(True) != target.key.with_nullable(True):
            raise fail(f"Cannot update key type of column {column} from "
                       f"{source.key.with_nullable(True).sql()} type to "
                       f"{target.key.with_nullable(True).sql()} type", column)
        value = retype_inside(source.value, target.value, f"{column}.value", leaf=leaf,
                              nullability=nullability, fail=fail)
        nullability(source, target, column)
        return MapType(source.key, value, target.nullable)
    return leaf(source, target, column)
