"""Write order of an Iceberg table schemalab writes, as Iceberg's Spark SQL extension
``ALTER TABLE t WRITE ..`` sets it (``SetWriteDistributionAndOrderingExec``): one transaction
that replaces the sort order (``ReplaceSortOrder``, bound case-insensitively to the current
schema, as Spark's default ``spark.sql.caseSensitive=false``) and, unless the statement is
``LOCALLY ORDERED BY``, sets ``write.distribution-mode`` (``hash`` for ``DISTRIBUTED BY
PARTITION``, ``range`` for ``ORDERED BY``, ``none`` for ``UNORDERED``).

Sort order ids as ``TableMetadata.Builder`` assigns them: the unsorted order is always 0, an
order equal to an earlier one gets its id back, a new one the highest id + 1 (at least 1).
An INSERT then sorts the rows of each data file by the table's order (after the partition
values, as Iceberg's Spark writer requires) and records the order's id in ``sort_order_id``
of each data file's manifest entry (:func:`output_sort`).

    >>> from schemalab.iceberg.metadata import IcebergSchema
    >>> from schemalab.iceberg.write.tablemeta import new_table_metadata
    >>> from schemalab.iceberg.write.schema_json import fresh_fields
    >>> from schemalab.schema.changes import ColumnSpec
    >>> from schemalab.types.model import BIGINT
    >>> fields, last = fresh_fields([ColumnSpec("id", BIGINT())], table="db.t",
    ...                             version=2)
    >>> d = new_table_metadata("/wh/db/t", IcebergSchema(0, fields), last, [], 2, {})
    >>> set_write_order(d, (("identity", "ID", "desc", "nulls-last"),), "range", "db.t")
    >>> d["sort-orders"][1], d["default-sort-order-id"], d["properties"][DISTRIBUTION_MODE]
    ({'order-id': 1, 'fields': [{'transform': 'identity', 'source-id': 1, 'direction': \
'desc', 'null-order': 'nulls-last'}]}, 1, 'range')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schemalab.errors import SchemaChangeError
from schemalab.iceberg.metadata import IcebergSchema, PartitionField, parse_table_metadata
from schemalab.iceberg.types import (
    IcebergListType,
    IcebergMapType,
    IcebergPrimitiveType,
    IcebergStructType,
    iceberg_type_text,
)
from schemalab.iceberg.write.distribution import DISTRIBUTION_MODE
from schemalab.iceberg.write.partitioning import check_transform, partition_column

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column


def _fail(message: str, table: str, column: str | None = None,
          rule: str = "iceberg-write-order") -> SchemaChangeError:
    return SchemaChangeError(f"{message} (table {table})", table=table, column=column,
                             rule=rule)


def java_type_text(t: Any) -> str:
    """A type as Java's ``Type.toString`` prints it in binding errors: a struct's fields
    as ``<id>: <name>: optional|required <type>`` (and `` (<doc>)``)."""
    if isinstance(t, IcebergListType):
        return f"list<{java_type_text(t.element)}>"
    if isinstance(t, IcebergMapType):
        return f"map<{java_type_text(t.key)}, {java_type_text(t.value)}>"
    if isinstance(t, IcebergStructType | IcebergSchema):
        return "struct<" + ", ".join(java_field_text(f) for f in t.fields) + ">"
    return iceberg_type_text(t)


def java_field_text(f: Any) -> str:
    """A field as Java's ``NestedField.toString`` prints it: ``15: q: required int``."""
    return (f"{f.id}: {f.name}: {'required' if f.required else 'optional'} "
            f"{java_type_text(f.type)}" + (f" ({f.doc})" if f.doc else ""))


def sort_fields(schema: IcebergSchema, order: Sequence[tuple[str, str, str, str]],
                table: str) -> list[dict[str, Any]]:
    """(transform, column, direction, null order) terms bound to ``schema`` as
    ``SortOrder.Builder`` binds them, in ``SortOrderParser``'s JSON form."""
    by_name: dict[str, int] = {}
    for known in schema.index:
        name = schema.full_name(known)
        if name is not None:
            by_name.setdefault(name.lower(), known)
    out = []
    for transform, column, direction, nulls in order:
        fid = by_name.get(column.lower())
        if fid is None:
            raise _fail(f"Cannot find field '{column}' in struct: {java_type_text(schema)}",
                        table, column)
        src = schema.find(fid)
        assert src is not None
        if not isinstance(src.type, IcebergPrimitiveType):
            raise _fail(f"Cannot sort by non-primitive source field: "
                        f"{java_type_text(src.type)}", table, column)
        try:
            check_transform(transform, src.type, table, column)
        except Exception as e:  # Iceberg's wording, this statement's rule
            raise _fail(f"Cannot bind: {transform} cannot transform "
                        f"{iceberg_type_text(src.type)} values from '{column}'", table,
                        column) from e
        out.append({"transform": transform, "source-id": fid, "direction": direction,
                    "null-order": nulls})
    return out


def set_write_order(d: dict[str, Any], order: Sequence[tuple[str, str, str, str]],
                    distribution_mode: str | None, table: str) -> None:
    """Apply ``ALTER TABLE .. WRITE`` to metadata ``d`` in place."""
    m = parse_table_metadata(d, table)
    fields = sort_fields(m.schema(), order, table)
    orders = d.setdefault("sort-orders", [{"order-id": 0, "fields": []}])
    if not fields:
        order_id = 0
    else:
        order_id = next((o["order-id"] for o in orders if o["fields"] == fields), None) or \
            max([0, *(o["order-id"] for o in orders)]) + 1
        if all(o["order-id"] != order_id for o in orders):
            orders.append({"order-id": order_id, "fields": fields})
    if all(o["order-id"] != 0 for o in orders) and order_id == 0:
        orders.insert(0, {"order-id": 0, "fields": []})
    d["default-sort-order-id"] = order_id
    if distribution_mode is not None:
        d.setdefault("properties", {})[DISTRIBUTION_MODE] = distribution_mode


def output_sort(schema: IcebergSchema, fields: Sequence[Any], column: Any,
                table: str) -> list[Column]:
    """Spark sort expressions for the table's sort order ``fields`` (``SortField``\\ s),
    each term computed as its transform computes it (``column(name)`` gives the source
    column), with the order's direction and null order."""
    out = []
    for sf in fields:
        name = schema.full_name(sf.source_ids[0])
        if name is None:  # the column was dropped since: Iceberg keeps sorting by the rest
            continue
        src = column(name)
        if sf.transform != "identity":
            pf = PartitionField(0, (sf.source_ids[0],), name, sf.transform)
            src = partition_column(pf, schema, src, table).column
        asc = sf.direction == "asc"
        first = sf.null_order == "nulls-first"
        out.append((src.asc_nulls_first() if first else src.asc_nulls_last()) if asc else
                   (src.desc_nulls_first() if first else src.desc_nulls_last()))
    return out

