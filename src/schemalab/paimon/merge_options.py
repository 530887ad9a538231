"""How a primary-key table merges the rows of one key: its merge options, read once, checked
with Paimon's own rules and messages (``CoreOptions``, ``SchemaValidation``, the merge
functions' factories of Paimon 1.0).

    >>> from schemalab.schema.table_schema import TableSchema
    >>> from schemalab.types import parse_type
    >>> from schemalab.types.model import DataField
    >>> s = TableSchema(0, (DataField(0, "id", parse_type("INT NOT NULL")),
    ...                     DataField(1, "n", parse_type("BIGINT"))), 1, primary_keys=("id",),
    ...                 options={"merge-engine": "aggregation",
    ...                          "fields.n.aggregate-function": "sum"})
    >>> m = merge_options(s, "t")
    >>> m.engine, m.aggregate_of("n").function, m.aggregate_of("id").function
    ('aggregation', 'sum', 'primary-key')
"""

from __future__ import annotations

from schemalab.engine.merge.options import (
    AGGREGATION,
    DEDUPLICATE,
    ENGINES,
    FIRST_ROW,
    PARTIAL_UPDATE,
    FieldAggregate,
    MergeOptions,
    SequenceGroup,
)
from schemalab.errors import SchemaLabError
from schemalab.schema.table_schema import TableSchema
from schemalab.types.model import TypeRoot

FIELDS_PREFIX = "fields."
SEQUENCE_GROUP = ".sequence-group"
DEFAULT_AGGREGATE = "fields.default-aggregate-function"
#: Java's IGNORE_DELETE and its fallback keys, in the order Options looks them up
IGNORE_DELETE_KEYS = ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                      "partial-update.ignore-delete")

_NUMERIC = {TypeRoot.TINYINT, TypeRoot.SMALLINT, TypeRoot.INTEGER, TypeRoot.BIGINT,
            TypeRoot.FLOAT, TypeRoot.DOUBLE, TypeRoot.DECIMAL}
_STRING = {TypeRoot.CHAR, TypeRoot.VARCHAR}
_COMPARABLE = _NUMERIC | _STRING | {
    TypeRoot.DATE, TypeRoot.TIME_WITHOUT_TIME_ZONE, TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE}
#: the aggregate functions schemalab merges with, and the type roots each accepts (None: any)
AGGREGATE_FUNCTIONS: dict[str, frozenset[TypeRoot] | None] = {
    "sum": frozenset(_NUMERIC), "product": frozenset(_NUMERIC),
    "max": frozenset(_COMPARABLE), "min": frozenset(_COMPARABLE),
    "last_value": None, "last_non_null_value": None, "first_value": None,
    "first_non_null_value": None, "listagg": frozenset(_STRING),
    "bool_and": frozenset({TypeRoot.BOOLEAN}), "bool_or": frozenset({TypeRoot.BOOLEAN}),
    "primary-key": None,
}
#: Paimon's other names for the same functions
_ALIASES = {"first_not_null_value": "first_non_null_value"}
#: Paimon functions schemalab does not merge (yet): collections, sketches, bitmaps
_NOT_MERGED = ("collect", "merge_map", "merge_map_with_keytime", "nested_update",
               "nested_partial_update", "hll_sketch", "theta_sketch", "rbm32", "rbm64")


def _bool(opts: dict[str, str], key: str, table: str) -> bool:
    value = opts.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise SchemaLabError(f"Table {table}: option '{key}' must be 'true' or 'false', not "
                             f"'{opts[key]}'.", table=table, rule="merge-options")
    return value == "true"


def _error(table: str, message: str, column: str | None = None,
           rule: str = "merge-options") -> SchemaLabError:
    return SchemaLabError(f"Table {table}: {message}", table=table, column=column, rule=rule)


def merge_options(schema: TableSchema, table: str) -> MergeOptions:
    """The merge options of ``schema`` (its effective options), checked as Paimon checks them
    when it creates the merge function; a table Paimon could not read is refused with
    Paimon's message."""
    opts = schema.effective_options()
    names = schema.field_names
    engine = opts.get("merge-engine", DEDUPLICATE).strip().lower()
    if engine not in ENGINES:
        raise _error(table, f"unknown merge-engine '{engine}' (Paimon's are "
                            f"{', '.join(ENGINES)}).", rule="merge-engine")
    ignore_delete = any(_bool(opts, k, table) for k in IGNORE_DELETE_KEYS if k in opts)
    sequence_fields = tuple(s.strip() for s in opts.get("sequence.field", "").split(",")
                            if s.strip())
    for s in sequence_fields:
        if s not in names:
            raise _error(table, f"Sequence field: '{s}' can not be found in table schema.",
                         column=s, rule="sequence.field")
        if sequence_fields.count(s) > 1:
            raise _error(table, f"Sequence field '{s}' is defined repeatedly.", column=s,
                         rule="sequence.field")
        if f"fields.{s}.aggregate-function" in opts:
            raise _error(table, f"Should not define aggregation on sequence field: '{s}'.",
                         column=s, rule="sequence.field")
    if sequence_fields and engine == FIRST_ROW:
        raise _error(table, "Do not support use sequence field on FIRST_ROW merge engine.",
                     rule="sequence.field")
    order = opts.get("sequence.field.sort-order", "ascending").strip().lower()
    if order not in ("ascending", "descending"):
        raise _error(table, f"'sequence.field.sort-order' must be ascending or descending, "
                            f"not '{order}'.", rule="sequence.field")
    rowkind = opts.get("rowkind.field")
    if rowkind is not None and rowkind not in names:
        raise _error(table, f"Rowkind field: '{rowkind}' can not be found in table schema.",
                     column=rowkind, rule="rowkind.field")
    groups = _sequence_groups(opts, names, table)
    aggregates = _aggregates(schema, opts, engine, groups, sequence_fields, table)
    remove = _bool(opts, "partial-update.remove-record-on-delete", table)
    remove_groups = tuple(s.strip() for s in opts.get(
        "partial-update.remove-record-on-sequence-group", "").split(",") if s.strip())
    if engine == PARTIAL_UPDATE:
        if remove and ignore_delete:
            raise _error(table, "ignore-delete and partial-update.remove-record-on-delete have "
                                "conflicting behavior so should not be enabled at the same "
                                "time.")
        if remove and groups:
            raise _error(table, "sequence group and partial-update.remove-record-on-delete "
                                "have conflicting behavior so should not be enabled at the "
                                "same time.")
        grouped_sequence_fields = {s for g in groups for s in g.sequence_fields}
        if remove_groups and not set(remove_groups) <= grouped_sequence_fields:
            raise _error(table, f"field '{','.join(remove_groups)}' defined in "
                                "'partial-update.remove-record-on-sequence-group' option must "
                                "be part of sequence groups")
    return MergeOptions(
        engine=engine, ignore_delete=ignore_delete, sequence_fields=sequence_fields,
        sequence_ascending=order == "ascending", remove_record_on_delete=remove,
        sequence_groups=groups if engine == PARTIAL_UPDATE else (),
        remove_record_on_sequence_group=remove_groups, aggregates=aggregates,
        aggregation_remove_record_on_delete=_bool(
            opts, "aggregation.remove-record-on-delete", table),
        rowkind_field=rowkind)


def _sequence_groups(opts: dict[str, str], names: list[str], table: str
                     ) -> tuple[SequenceGroup, ...]:
    out: list[SequenceGroup] = []
    owner: dict[str, str] = {}
    for key, value in sorted(opts.items()):
        if not (key.startswith(FIELDS_PREFIX) and key.endswith(SEQUENCE_GROUP)):
            continue
        seq = tuple(key[len(FIELDS_PREFIX):-len(SEQUENCE_GROUP)].split(","))
        for s in seq:
            if s not in names:
                raise _error(table, f"The sequence field group: {s} can not be found in table "
                                    "schema.", column=s, rule="sequence-group")
        members = tuple(v.strip() for v in value.split(",") if v.strip())
        for m in members:
            if m not in names:
                raise _error(table, f"Field {m} can not be found in table schema.", column=m,
                             rule="sequence-group")
            if m in owner:
                raise _error(table, f"Field {m} is defined repeatedly by multiple groups: "
                                    f"{key}", column=m, rule="sequence-group")
            owner[m] = key
        out.append(SequenceGroup(seq, members))
    return tuple(out)


def _aggregates(schema: TableSchema, opts: dict[str, str], engine: str,
                groups: tuple[SequenceGroup, ...], sequence_fields: tuple[str, ...],
                table: str) -> dict[str, FieldAggregate]:
    """Each field's aggregate function, as Paimon 1.0's factories choose it: for the
    aggregation engine a sequence field keeps its last non-null value, a key field its
    value, any other field its ``fields.<f>.aggregate-function``, else
    ``fields.default-aggregate-function``, else ``last_non_null_value``; for partial-update
    only fields given a function (which then need a sequence group)."""
    if engine not in (AGGREGATION, PARTIAL_UPDATE):
        return {}
    default = opts.get(DEFAULT_AGGREGATE)
    grouped_sequence = {s for g in groups for s in g.sequence_fields}
    out: dict[str, FieldAggregate] = {}
    for f in schema.fields:
        name = f.name
        given = opts.get(f"fields.{name}.aggregate-function")
        if engine == AGGREGATION:
            if name in sequence_fields:
                function = "last_non_null_value"
            elif name in schema.primary_keys:
                function = "primary-key"
            else:
                function = given or default or "last_non_null_value"
        else:
            if name in schema.primary_keys or name in grouped_sequence:
                continue
            chosen = given or default
            if chosen is None:
                continue
            function = chosen
            if not groups:
                raise _error(table, "Must use sequence group for aggregation functions.",
                             column=name, rule="aggregate-function")
        function = _ALIASES.get(function.strip().lower(), function.strip().lower())
        _check_function(function, f.type.root, name, table)
        out[name] = FieldAggregate(
            function, _bool(opts, f"fields.{name}.ignore-retract", table),
            opts.get(f"fields.{name}.list-agg-delimiter", ","))
    return out


def _check_function(function: str, root: TypeRoot, column: str, table: str) -> None:
    if function == "count":
        raise _error(table, f"field `{column}` uses aggregate function 'count', which Paimon "
                            "removed in 0.9 because a key written once is never passed to it "
                            "(apache/paimon#3932); Paimon 0.9 and later refuse the table "
                            "(\"Use unsupported aggregation: count\"). Count with 'sum' over a "
                            "column of 1s.", column=column, rule="aggregate-function")
    if function in _NOT_MERGED:
        raise _error(table, f"field `{column}` uses aggregate function '{function}', which "
                            "schemalab does not merge. Read this table with Paimon.",
                     column=column, rule="aggregate-function")
    if function not in AGGREGATE_FUNCTIONS:
        raise _error(table, f"Use unsupported aggregation: {function} or spell aggregate "
                            f"function incorrectly! (field `{column}`)", column=column,
                     rule="aggregate-function")
    roots = AGGREGATE_FUNCTIONS[function]
    if roots is not None and root not in roots:
        raise _error(table, f"Data type for {function} column must be one of "
                            f"{sorted(r.name for r in roots)} but was '{root.name}' (field "
                            f"`{column}`).", column=column, rule="aggregate-function")
