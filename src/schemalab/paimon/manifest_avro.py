"""The Avro writer schemas of Paimon's manifests and manifest lists.

pypaimon 2.1.0 and Java Paimon write the same fields with the same types,
unions and defaults, but name the records differently (pypaimon: ``ManifestEntry``,
``DataFileMeta``, ``record_KEY_STATS``; Java's AvroSchemaConverter:
``org.apache.paimon.avro.generated.record``, ``…record__FILE``, ``…record__FILE__KEY_STATS``),
and pypaimon's manifest list has two fields Java's lacks (``_TOTAL_BUCKETS``,
``_EXTRA_FILES``). Avro readers match fields by name, so both read each other's files.
:func:`write_manifest` / :func:`write_manifest_list` write pypaimon's schema by default
(``flavor="pypaimon"``, byte for byte the schema of pypaimon 2.1.0's files; tests/test_manifest.py
compares them) or Java's
(``flavor="java"``). Readers accept any variant: fields are looked up by name, and fields
older writers lacked take their defaults.
"""

from __future__ import annotations

from typing import Any

from schemalab.paimon.manifest import Flavor

_JAVA_RECORD = "org.apache.paimon.avro.generated.record"


def _nullable(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    # Java's AvroSchemaConverter: nullable fields are ["null", T] with default null.
    return {"name": name, "type": _nullable(avro_type), "default": None}


def _stats_schema(name: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            _opt("_NULL_COUNTS", {"type": "array", "items": ["null", "long"]}),
        ],
    }


def _data_file_schema(flavor: Flavor) -> dict[str, Any]:
    java = flavor == "java"
    stats_name = (_JAVA_RECORD + "__FILE_" if java else "record") + "_{}_STATS"
    return {
        "type": "record",
        "name": _JAVA_RECORD + "__FILE" if java else "DataFileMeta",
        "fields": [
            {"name": "_FILE_NAME", "type": "string"},
            {"name": "_FILE_SIZE", "type": "long"},
            {"name": "_ROW_COUNT", "type": "long"},
            {"name": "_MIN_KEY", "type": "bytes"},
            {"name": "_MAX_KEY", "type": "bytes"},
            {"name": "_KEY_STATS", "type": _stats_schema(stats_name.format("KEY"))},
            {"name": "_VALUE_STATS", "type": _stats_schema(stats_name.format("VALUE"))},
            {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
            {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
            {"name": "_SCHEMA_ID", "type": "long"},
            {"name": "_LEVEL", "type": "int"},
            {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
            _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
            _opt("_DELETE_ROW_COUNT", "long"),
            _opt("_EMBEDDED_FILE_INDEX", "bytes"),
            _opt("_FILE_SOURCE", "int"),  # TINYINT in Paimon; Avro has no byte type
            _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
            _opt("_EXTERNAL_PATH", "string"),
            _opt("_FIRST_ROW_ID", "long"),
            _opt("_WRITE_COLS", {"type": "array", "items": "string"}),
            _opt("_WRITE_COLS_SEQUENCES", {"type": "array", "items": "long"}),
        ],
    }


def manifest_entry_schema(flavor: Flavor = "pypaimon") -> dict[str, Any]:
    """The Avro writer schema of manifest files."""
    return {
        "type": "record",
        "name": _JAVA_RECORD if flavor == "java" else "ManifestEntry",
        "fields": [
            {"name": "_VERSION", "type": "int"},
            {"name": "_KIND", "type": "int"},
            {"name": "_PARTITION", "type": "bytes"},
            {"name": "_BUCKET", "type": "int"},
            {"name": "_TOTAL_BUCKETS", "type": "int"},
            {"name": "_FILE", "type": _data_file_schema(flavor)},
        ],
    }


def manifest_file_meta_schema(flavor: Flavor = "pypaimon") -> dict[str, Any]:
    """The Avro writer schema of manifest-list files."""
    java = flavor == "java"
    fields: list[dict[str, Any]] = [
        {"name": "_VERSION", "type": "int"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_NUM_ADDED_FILES", "type": "long"},
        {"name": "_NUM_DELETED_FILES", "type": "long"},
        {"name": "_PARTITION_STATS", "type": _stats_schema(
            _JAVA_RECORD + "__PARTITION_STATS" if java else "record_PARTITION_STATS")},
        {"name": "_SCHEMA_ID", "type": "long"},
        _opt("_MIN_BUCKET", "int"),
        _opt("_MAX_BUCKET", "int"),
        _opt("_MIN_LEVEL", "int"),
        _opt("_MAX_LEVEL", "int"),
        _opt("_MIN_ROW_ID", "long"),
        _opt("_MAX_ROW_ID", "long"),
    ]
    if not java:
        fields += [_opt("_TOTAL_BUCKETS", "int"),
                   _opt("_EXTRA_FILES", {"type": "array", "items": "string"})]
    return {"type": "record", "name": _JAVA_RECORD if java else "ManifestFileMeta",
            "fields": fields}
