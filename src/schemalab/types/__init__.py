"""Paimon's data types: the type model, its text and JSON forms, and one visitor over nested
types. Mappings to Spark and Arrow live in :mod:`schemalab.types.spark` and
:mod:`schemalab.types.arrow`, cast rules in :mod:`schemalab.types.casts`.
"""

from schemalab.types.model import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAX_LENGTH,
    SMALLINT,
    STRING,
    TIMESTAMP,
    TIMESTAMP_ROOTS,
    TINYINT,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    Family,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
    quote_identifier,
)
from schemalab.types.parse import (
    field_from_json,
    field_to_json,
    parse_type,
    type_from_json,
    type_to_json,
)
from schemalab.types.visitor import iter_fields

__all__ = [
    "BIGINT", "BOOLEAN", "BYTES", "DATE", "DECIMAL", "DOUBLE", "FLOAT", "INT", "MAX_LENGTH",
    "SMALLINT", "STRING", "TIMESTAMP", "TIMESTAMP_ROOTS", "TINYINT", "ArrayType", "AtomicType",
    "DataField", "DataType", "Family", "MapType", "MultisetType", "RowType", "TypeRoot",
    "field_from_json", "field_to_json", "iter_fields", "parse_type", "quote_identifier",
    "type_from_json", "type_to_json",
]
