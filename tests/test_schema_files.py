"""schema/schema-N files: Java's layout byte for byte, pypaimon's layout, old versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.schema.jackson import jackson_pretty, jackson_string
from schemalab.schema.table_schema import TableSchema


def fixture_schema_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("schema-*") if p.parent.name == "schema")


SEED_EXAMPLE = """{
  "version" : 3,
  "id" : 0,
  "fields" : [ {
    "id" : 0,
    "name" : "order_id",
    "type" : "BIGINT NOT NULL"
  }, {
    "id" : 1,
    "name" : "order_name",
    "type" : "STRING"
  }, {
    "id" : 2,
    "name" : "order_user_id",
    "type" : "BIGINT"
  }, {
    "id" : 3,
    "name" : "order_shop_id",
    "type" : "BIGINT"
  } ],
  "highestFieldId" : 3,
  "partitionKeys" : [ ],
  "primaryKeys" : [ "order_id" ],
  "options" : {
    "bucket" : "5"
  },
  "comment" : "",
  "timeMillis" : 1720496663041
}"""


def test_paimon_spec_example_round_trips_byte_for_byte() -> None:
    s = TableSchema.from_json(SEED_EXAMPLE)
    assert s.layout == "java"
    assert s.primary_keys == ("order_id",)
    assert s.options == {"bucket": "5"}
    assert s.to_json() == SEED_EXAMPLE


def test_every_pypaimon_fixture_schema_round_trips(pypaimon_warehouses: Path) -> None:
    files = fixture_schema_files(pypaimon_warehouses)
    assert len(files) >= 12
    for path in files:
        raw = path.read_text()
        s = TableSchema.from_json(raw, path=str(path))
        assert s.layout == "python"
        assert s.to_json() == raw, path
        # and the same schema in Java's layout reads back equal
        assert TableSchema.from_json(s.to_json("java")).with_changes(layout="python") == s


def test_nested_pypaimon_schema_reads_ids(pypaimon_warehouses: Path) -> None:
    s = TableSchema.from_json((pypaimon_warehouses / "wh6/n.db/t/schema/schema-1").read_text())
    assert s.field_by_id(6) is not None and s.field_by_id(6).name == "country"  # type: ignore[union-attr]
    assert s.highest_field_id == 6
    java = s.to_json("java")
    assert '"nullable"' not in java and '"comment"' not in java
    assert '"type" : {\n      "type" : "ROW",' in java


def test_version_1_implies_bucket_1_and_orc() -> None:
    raw = json.dumps({"id": 0, "fields": [{"id": 0, "name": "a", "type": "INT"}],
                      "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [],
                      "options": {}})
    s = TableSchema.from_json(raw)
    assert s.version == 1
    assert s.effective_options() == {"bucket": "1", "file.format": "orc"}
    assert s.options == {}
    assert s.time_millis == 0


def test_version_2_implies_orc_only_when_absent() -> None:
    base = {"version": 2, "id": 3, "fields": [{"id": 0, "name": "a", "type": "INT"}],
            "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [], "timeMillis": 5}
    assert TableSchema.from_json(json.dumps({**base, "options": {}})).effective_options() == {
        "file.format": "orc"}
    assert TableSchema.from_json(json.dumps(
        {**base, "options": {"file.format": "parquet"}})).effective_options() == {
        "file.format": "parquet"}


def test_unknown_keys_and_options_survive_a_rewrite() -> None:
    future = '"timeMillis" : 1720496663041,\n  "futureKey" : {\n    "x" : [ 1, 2 ]\n  }'
    raw = SEED_EXAMPLE.replace('"timeMillis" : 1720496663041', future)
    raw = raw.replace('"bucket" : "5"', '"bucket" : "5",\n    "some.unknown.option" : "v"')
    s = TableSchema.from_json(raw)
    assert s.extra == {"futureKey": {"x": [1, 2]}}
    assert s.to_json() == raw


def test_description_and_default_value_are_kept() -> None:
    raw = SEED_EXAMPLE.replace('"type" : "STRING"\n',
                               '"type" : "STRING",\n    "description" : "名前 \\"quoted\\"",\n'
                               '    "defaultValue" : "x"\n')
    s = TableSchema.from_json(raw)
    f = s.field("order_name")
    assert f is not None and f.description == '名前 "quoted"' and f.default_value == "x"
    assert s.to_json() == raw


@pytest.mark.parametrize(("text", "what"), [
    ("", "not valid JSON"),
    ('{"id": 0, "fields": [', "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"version": 3, "fields": [], "highestFieldId": 0}', "missing required key 'id'"),
    ('{"version": 3, "id": 0, "highestFieldId": 0}', "missing required key 'fields'"),
    ('{"version": 3, "id": 0, "fields": {}, "highestFieldId": 0}', "'fields' must be a list"),
    ('{"version": 3, "id": "x", "fields": [], "highestFieldId": 0}', "'id' must be"),
    ('{"version": 3, "id": 0, "fields": [{"id": 0, "name": "a", "type": "INTT"}], '
     '"highestFieldId": 0}', "Unknown type"),
    ('{"version": 3, "id": 0, "fields": [{"name": "a", "type": "INT"}], "highestFieldId": 0}',
     "no integer id"),
    ('{"version": 3, "id": 0, "fields": [], "highestFieldId": 0, "options": []}',
     "'options' must be an object"),
    ('{"version": 3, "id": 0, "fields": [], "highestFieldId": 0, "primaryKeys": "a"}',
     "'primaryKeys' must be a list"),
])
def test_malformed_schema_files_name_the_file_and_the_problem(text: str, what: str) -> None:
    with pytest.raises(CorruptFileError) as e:
        TableSchema.from_json(text, path="/wh/db.db/t/schema/schema-7")
    assert "/wh/db.db/t/schema/schema-7" in str(e.value)
    assert what in str(e.value)


def test_newer_format_version_is_refused() -> None:
    raw = SEED_EXAMPLE.replace('"version" : 3', '"version" : 4')
    with pytest.raises(UnsupportedVersionError) as e:
        TableSchema.from_json(raw, path="schema-0")
    assert "version 4 is not supported" in str(e.value)


def test_jackson_printer_shapes() -> None:
    assert jackson_pretty({}) == "{ }"
    assert jackson_pretty({"a": [], "b": {}}) == '{\n  "a" : [ ],\n  "b" : { }\n}'
    assert jackson_pretty([{"x": 1}, {"y": None}]) == '[ {\n  "x" : 1\n}, {\n  "y" : null\n} ]'
    assert jackson_string("a\u0001\n\"\\/é") == '"a\\u0001\\n\\"\\\\/é"'


@settings(max_examples=150, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=10))
def test_jackson_output_is_valid_json_of_the_same_value(value: object) -> None:
    assert json.loads(jackson_pretty(value)) == value
