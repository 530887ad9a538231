"""Iceberg tables: Iceberg's own metadata fixtures, and tables pyiceberg writes, read back.

The metadata fixtures (``fixtures/iceberg-metadata/``) are Apache Iceberg's parser test
files: the valid ones must open, the invalid ones must be refused with a message that says
what is wrong. The pyiceberg tables are checked against pyiceberg itself: lineage, snapshot
trees against ``table.inspect``, and Spark reads against ``table.scan().to_arrow()``.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.history.lineage import compute_lineage
from schemalab.iceberg.history import iceberg_history
from schemalab.iceberg.locate import is_iceberg_table, metadata_version
from schemalab.iceberg.manifests import decode_bound
from schemalab.iceberg.table import IcebergTable
from schemalab.iceberg.types import iceberg_type_text, parse_iceberg_type, to_paimon

FIXTURES = Path(__file__).parent / "fixtures" / "iceberg-metadata"

VALID = ["TableMetadataV1Valid.json", "TableMetadataV2Valid.json",
         "TableMetadataV2ValidMinimal.json", "TableMetadataV3ValidMinimal.json",
         "TableMetadataStatisticsFiles.json", "TableMetadataPartitionStatisticsFiles.json"]

VIEW = "this is Iceberg VIEW metadata, not a table"
INVALID: dict[str, tuple[type[Exception], str]] = {
    "TableMetadataUnsupportedVersion.json":
        (UnsupportedVersionError, "format-version 42 is not supported (1-3)"),
    "TableMetadataV1MissingSchemaType.json":
        (CorruptFileError, 'schema: missing "type": "struct" (a schema is a struct type)'),
    "TableMetadataV2CurrentSchemaNotFound.json":
        (CorruptFileError, "current-schema-id 2 is not among the schemas"),
    "TableMetadataV2MissingLastPartitionId.json":
        (CorruptFileError, "missing 'last-partition-id' (required in v2)"),
    "TableMetadataV2MissingPartitionSpecs.json":
        (CorruptFileError, "missing 'partition-specs' (required in v2)"),
    "TableMetadataV2MissingSchemas.json":
        (CorruptFileError, "missing 'schemas' (required in v2)"),
    "TableMetadataV2MissingSortOrder.json":
        (CorruptFileError, "missing 'sort-orders' (required in v2)"),
    "ValidViewMetadata.json": (CorruptFileError, VIEW),
    "ViewMetadataInvalidCurrentSchema.json": (CorruptFileError, VIEW),
    "ViewMetadataInvalidCurrentVersion.json": (CorruptFileError, VIEW),
    "ViewMetadataMissingCurrentVersion.json": (CorruptFileError, VIEW),
    "ViewMetadataMissingLocation.json": (CorruptFileError, VIEW),
    "ViewMetadataMultipleSQLsForDialect.json": (CorruptFileError, VIEW),
}


def test_every_fixture_is_classified() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.json")) == sorted([*VALID, *INVALID])


# --------------------------------------------------------------------------------------------
# Metadata fixtures
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VALID)
def test_valid_fixture_loads(name: str) -> None:
    t = IcebergTable(FIXTURES / name)
    h = iceberg_history(t)
    assert h.format == "iceberg"
    assert [v.id for v in h.schemas] == sorted(s.schema_id for s in t.metadata.schemas)
    assert h.current_schema_id == t.schema.schema_id
    assert {v.kind for v in h.other_versions} == {"partition-spec", "sort-order"}
    assert len(h.snapshots) == len(t.snapshots)
    assert all(lin.events[0].kind == "added" for lin in h.lineage)
    # The manifest lists live on s3://: trees are empty, with the reason, not an error.
    doc = h.to_json()
    assert doc["format"] == "iceberg" and len(doc["snapshots"]) == len(h.snapshots)
    for s in h.snapshots:
        assert "not on this machine" in h.tree(s.id).summary["tree_error"]


def test_v2_valid_fixture_details() -> None:
    t = IcebergTable(FIXTURES / "TableMetadataV2Valid.json")
    h = t.history()
    assert t.format_version == 2 and t.schema.schema_id == 1
    assert h.schema(1).primary_keys == ("x", "y")  # identifier-field-ids
    labels = {(v.kind, v.id): v.label for v in h.other_versions}
    assert labels[("partition-spec", 0)] == "x"
    assert labels[("sort-order", 3)] == "y ASC NULLS FIRST, bucket(4, z) DESC NULLS LAST"
    assert labels[("sort-order", 0)] == "unsorted"
    first, second = h.snapshots
    assert second.parent_id == first.id and second.schema_id == 1
    # The first snapshot records no schema-id: like Java, fall back to the current schema.
    assert first.schema_id == 1
    assert [e.kind for e in h.lineage_of(2).events] == ["added"]
    assert h.schema(1).events[0].describe() == "added `y` long"


def test_v1_and_v3_fixture_details() -> None:
    v1 = IcebergTable(FIXTURES / "TableMetadataV1Valid.json")
    assert v1.current_snapshot is None  # current-snapshot-id -1
    assert v1.metadata.specs[0].fields[0].field_id == 1000  # v1: assigned from 1000
    assert v1.metadata.last_sequence_number == 0  # Appendix E default
    v3 = IcebergTable(FIXTURES / "TableMetadataV3ValidMinimal.json")
    assert v3.format_version == 3 and v3.metadata.next_row_id == 0
    x = v3.schema.find(1)
    assert x is not None and x.initial_default == 1 and x.write_default == 1
    assert v3.schema.to_paimon().fields[0].type.sql() == "BIGINT NOT NULL"


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_fixture_refused(name: str) -> None:
    exc, what = INVALID[name]
    with pytest.raises(exc) as info:
        IcebergTable(FIXTURES / name)
    assert info.value.what == what  # type: ignore[attr-defined]
    assert str(FIXTURES / name) in str(info.value)


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _fixture(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return doc


def test_unsupported_version_in_a_table_directory(tmp_path: Path) -> None:
    doc = _fixture("TableMetadataV2ValidMinimal.json") | {"format-version": 4}
    _write(tmp_path / "t" / "metadata" / "00000-abc.metadata.json", doc)
    with pytest.raises(UnsupportedVersionError) as info:
        IcebergTable(tmp_path / "t")
    assert info.value.what == "format-version 4 is not supported (1-3)"


@pytest.mark.parametrize(("change", "what"), [
    (lambda d: d["schemas"][0]["fields"].append(
        {"id": 4, "name": "v", "required": False, "type": "variant"}),
     "type 'variant' of field 'v' needs format v3 (this is v2)"),
    (lambda d: d["schemas"][0]["fields"].append(
        {"id": 4, "name": "w", "required": False, "type": "varchar"}),
     "unknown type 'varchar' of field 'w'"),
    (lambda d: d["schemas"][0]["fields"][0].pop("required"),
     "field #0: missing 'required'"),
    (lambda d: d.update({"default-spec-id": 7}),
     "default-spec-id 7 is not among the partition-specs"),
    (lambda d: d.update({"current-snapshot-id": 12}),
     "current-snapshot-id 12 is not among the snapshots"),
    (lambda d: d.pop("table-uuid"), "missing 'table-uuid' (required in v2)"),
    (lambda d: d.update({"snapshot-log": [{"snapshot-id": "x", "timestamp-ms": 1}]}),
     "malformed table metadata (ValueError: invalid literal for int() with base 10: 'x')"),
    (lambda d: d.update({"snapshots": [{"snapshot-id": 5, "timestamp-ms": 1,
                                        "sequence-number": 1, "summary": {}}]}),
     "snapshot 5: missing 'manifest-list' (required in v2)"),
])
def test_spec_rules(tmp_path: Path, change: Any, what: str) -> None:
    doc = _fixture("TableMetadataV2ValidMinimal.json")
    change(doc)
    with pytest.raises(CorruptFileError) as info:
        IcebergTable(_write(tmp_path / "v1.metadata.json", doc))
    assert info.value.what == what


def test_upgraded_snapshots_read_with_the_spec_defaults(tmp_path: Path) -> None:
    """A snapshot made before a v1 → v2 (or v2 → v3) upgrade keeps the fields of its old
    version: no ``sequence-number`` (defaults to 0, spec Appendix E), no ``first-row-id`` /
    ``added-rows`` (null, "Row Lineage for Upgraded Tables")."""
    doc = _fixture("TableMetadataV3ValidMinimal.json")
    doc["snapshots"] = [{"snapshot-id": 5, "timestamp-ms": 1, "manifest-list": "x.avro",
                         "summary": {"operation": "append"}},
                        {"snapshot-id": 6, "parent-snapshot-id": 5, "timestamp-ms": 2,
                         "sequence-number": 1, "manifest-list": "y.avro", "first-row-id": 0,
                         "added-rows": 3, "summary": {"operation": "append"}}]
    t = IcebergTable(_write(tmp_path / "v1.metadata.json", doc))
    old, new = t.snapshots
    assert (old.sequence_number, old.first_row_id, old.added_rows) == (0, None, None)
    assert (new.sequence_number, new.first_row_id, new.added_rows) == (1, 0, 3)


def test_v3_requires_next_row_id(tmp_path: Path) -> None:
    doc = _fixture("TableMetadataV3ValidMinimal.json")
    del doc["next-row-id"]
    with pytest.raises(CorruptFileError, match=r"missing 'next-row-id' \(required in v3\)"):
        IcebergTable(_write(tmp_path / "v1.metadata.json", doc))


def test_compressed_metadata_and_current_file(tmp_path: Path) -> None:
    import zstandard

    raw = (FIXTURES / "TableMetadataV2Valid.json").read_bytes()
    mdir = tmp_path / "t" / "metadata"
    mdir.mkdir(parents=True)
    (mdir / "00000-a.metadata.json").write_bytes(
        (FIXTURES / "TableMetadataV2ValidMinimal.json").read_bytes())
    (mdir / "00001-b.gz.metadata.json").write_bytes(gzip.compress(raw))
    (mdir / "00002-c.zstd.metadata.json").write_bytes(zstandard.ZstdCompressor().compress(raw))
    assert IcebergTable(mdir / "00001-b.gz.metadata.json").schema.schema_id == 1
    t = IcebergTable(tmp_path / "t")  # the highest number: the zstd one
    assert t.metadata_file.endswith("00002-c.zstd.metadata.json") and t.schema.schema_id == 1
    assert IcebergTable(mdir).path == str(tmp_path / "t")  # metadata/ itself also opens
    assert is_iceberg_table(tmp_path / "t") and not is_iceberg_table(tmp_path)


def test_version_hint(tmp_path: Path) -> None:
    mdir = tmp_path / "t" / "metadata"
    mdir.mkdir(parents=True)
    minimal = (FIXTURES / "TableMetadataV2ValidMinimal.json").read_bytes()
    for v in (1, 2, 5):
        (mdir / f"v{v}.metadata.json").write_bytes(minimal)
    (mdir / "version-hint.text").write_text("1\n")
    # v2 follows v1 (a writer that died before updating the hint), as Java reads it; the
    # gap before v5 stops the search, so the highest number does not win.
    assert IcebergTable(tmp_path / "t").metadata_file.endswith("v2.metadata.json")
    (mdir / "version-hint.text").write_text("3")
    with pytest.raises(CorruptFileError, match="points to version 3, but metadata/ has no "
                                               r"v3\.metadata\.json"):
        IcebergTable(tmp_path / "t")
    assert metadata_version("00017-b7459f9d.metadata.json") == 17
    assert metadata_version("v3.metadata.json.gz") == 3 and metadata_version("x.json") is None


def test_pyiceberg_rejects_valid_statistics_fixture() -> None:
    """The reason this module parses metadata itself (pyiceberg 0.12.0)."""
    from pyiceberg.table.metadata import TableMetadataUtil

    text = (FIXTURES / "TableMetadataStatisticsFiles.json").read_text()
    from pyiceberg.exceptions import ValidationError

    with pytest.raises(ValidationError, match="apache-datasketches-theta-v1"):
        TableMetadataUtil.parse_raw(text)


# --------------------------------------------------------------------------------------------
# Types and bounds
# --------------------------------------------------------------------------------------------


def test_doctests() -> None:
    import doctest

    import schemalab.iceberg

    assert doctest.testmod(schemalab.iceberg).failed == 0


def test_types() -> None:
    t = parse_iceberg_type({"type": "map", "key-id": 4, "key": "string", "value-id": 5,
                    "value-required": False,
                    "value": {"type": "struct", "fields": [
                        {"id": 6, "name": "d", "required": True, "type": "decimal(9,2)"},
                        {"id": 7, "name": "f", "required": False, "type": "fixed[16]"}]}})
    assert iceberg_type_text(t) == "map<string, struct<d: decimal(9, 2), f: fixed[16]>>"
    assert to_paimon(t).sql() == "MAP<STRING NOT NULL, ROW<`d` DECIMAL(9, 2) NOT NULL, " \
                                 "`f` BINARY(16)>>"
    assert iceberg_type_text(parse_iceberg_type("timestamptz_ns")) == "timestamptz_ns"
    assert to_paimon(parse_iceberg_type("unknown")) is None
    assert str(parse_iceberg_type("geometry(srid:4326)", version=3)) == "geometry(srid:4326)"


def test_read_plan_per_file_type() -> None:
    """How the engine reads an Iceberg file column: in one scan by field id where Spark's
    reader widens the file's type to the target (Iceberg's promotions), else by name in the
    file's type, cast afterwards."""
    from schemalab.engine.plan import DataFile, plan_read
    from schemalab.engine.scan import _id_read_type
    from schemalab.schema import TableSchema
    from schemalab.types import DataField
    from schemalab.types.casts import CastMode

    def planned(target: str, file_type: str) -> tuple[bool, str]:
        tt, ft = (to_paimon(parse_iceberg_type(x, version=3)) for x in (target, file_type))
        assert tt is not None and ft is not None
        target_schema = TableSchema(1, (DataField(7, "c", tt),), 7)
        source = TableSchema(0, (DataField(7, "c", ft),), 7)
        plan = plan_read("db.t", target_schema, [DataFile("/x.parquet", 0, 1)],
                         lambda f: source, CastMode.EXPLICIT, has_field_ids=lambda f: True)
        (group,) = plan.groups
        return group.by_id, group.columns[0].kind

    assert planned("long", "int") == (True, "widened")
    assert planned("double", "float") == (True, "widened")
    assert planned("decimal(18, 2)", "decimal(9, 2)") == (True, "widened")
    assert planned("timestamp", "date") == (True, "widened")  # v3 promotion
    assert planned("int", "long") == (False, "cast")  # narrowed: read long, cast
    assert planned("string", "string") == (True, "same")
    nested = to_paimon(parse_iceberg_type({"type": "list", "element-id": 8,
                                           "element-required": False, "element": {
                                               "type": "struct", "fields": [
                                                   {"id": 9, "name": "a", "required": False,
                                                    "type": "long"}]}}))
    assert nested is not None
    assert _id_read_type(nested).simpleString() == "array<struct<_sl_f9:bigint>>"


def test_decode_bounds() -> None:
    assert decode_bound(bytes.fromhex("0100000000000000"), parse_iceberg_type("long")) == 1
    assert decode_bound(bytes.fromhex("0000c03f"), parse_iceberg_type("double")) == 1.5  # was float
    assert decode_bound(bytes.fromhex("0088e571df0d0600"), parse_iceberg_type("timestamp")) \
        == dt.datetime(2024, 1, 1, 10, 0)
    assert decode_bound(bytes.fromhex("ff7f"), parse_iceberg_type("decimal(9, 3)")) == \
        Decimal("-0.129")
    assert decode_bound(b"\x0b\x4d\x00\x00", parse_iceberg_type("date")) == dt.date(2024, 1, 1)
    assert decode_bound(b"\x01", parse_iceberg_type("boolean")) is True


# --------------------------------------------------------------------------------------------
# Tables written by pyiceberg
# --------------------------------------------------------------------------------------------


def _rows(table: Any, records: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    return pa.Table.from_pylist(records, schema=table.schema().as_arrow())


def _catalog(root: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("test", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One pyiceberg warehouse, written once: `demo.orders` goes through renames (one back
    to an old name), drop and re-add of a name (with the same and with another type),
    int→long / float→double / decimal widening, nested renames and adds, a partition spec
    evolution, a delete, and an add-then-drop that reuses a schema id. `demo.parts` is
    identity-partitioned, `demo.narrow` narrowed, `demo.collide` has a column named like
    the read's synthetic columns."""
    from pyiceberg.expressions import EqualTo
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform
    from pyiceberg.types import (
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        ListType,
        LongType,
        MapType,
        NestedField,
        StringType,
        StructType,
        TimestampType,
    )

    root = tmp_path_factory.mktemp("iceberg")
    cat = _catalog(root)
    cat.create_namespace("demo")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "qty", IntegerType()),
        NestedField(4, "price", FloatType()),
        NestedField(5, "amount", DecimalType(9, 2)),
        NestedField(6, "category", StringType()),
        NestedField(7, "ts", TimestampType()),
        NestedField(8, "address", StructType(NestedField(9, "city", StringType()),
                                             NestedField(10, "zip", IntegerType()))),
        NestedField(11, "tags", ListType(12, StringType())),
        NestedField(13, "attrs", MapType(14, StringType(), 15, IntegerType())),
    )
    t = cat.create_table("demo.orders", schema=schema)
    t.append(_rows(t, [
        dict(id=1, name="apple", qty=3, price=1.5, amount=Decimal("2.50"), category="fruit",
             ts=dt.datetime(2024, 1, 1, 10), address=dict(city="Oslo", zip=1), tags=["a"],
             attrs={"k": 1}),
        dict(id=2, name="kale", qty=1, price=2.25, amount=Decimal("1.00"), category="veg",
             ts=dt.datetime(2024, 1, 2, 10), address=None, tags=None, attrs=None)]))
    with t.update_schema() as u:
        u.rename_column("name", "product")
        u.rename_column("address.city", "town")
        u.add_column(("address", "country"), StringType())
        u.update_column("qty", LongType())
        u.update_column("price", DoubleType())
        u.update_column("amount", DecimalType(18, 2))
        u.update_column("address.zip", LongType())
    t.append(_rows(t, [
        dict(id=3, product="pear", qty=2**40, price=3.0, amount=Decimal("1234567890.12"),
             category="fruit", ts=dt.datetime(2024, 2, 1),
             address=dict(town="Rome", zip=5, country="IT"), tags=["x", "y"], attrs={})]))
    with t.update_schema() as u:
        u.delete_column("category")
    with t.update_schema() as u:
        u.add_column("category", StringType())
    with t.update_schema() as u:
        u.rename_column("product", "name")
    with t.update_spec() as s:
        s.add_identity("category")
    t.append(_rows(t, [
        dict(id=4, name="plum", qty=7, price=0.5, amount=Decimal("3.00"), category="fruit",
             ts=dt.datetime(2024, 3, 1), address=dict(town="Bern", zip=3000, country="CH"),
             tags=[], attrs={"z": 9})]))
    t.append(_rows(t, [
        dict(id=5, name="leek", qty=8, price=0.75, amount=Decimal("4.00"), category="veg",
             ts=dt.datetime(2024, 3, 2), address=None, tags=None, attrs=None)]))
    t.delete(EqualTo("category", "veg"))
    # `qty` re-added as a string: old files have a `qty` column of another type, the case
    # that breaks Spark's vectorized reader unless the scan requests synthetic names
    with t.update_schema() as u:
        u.delete_column("qty")
    with t.update_schema() as u:
        u.add_column("qty", StringType())
    t.append(_rows(t, [
        dict(id=6, name="fig", qty="many", price=9.5, amount=Decimal("0.10"),
             category="fruit", ts=dt.datetime(2024, 4, 1), address=None, tags=["f"],
             attrs=None)]))
    with t.update_schema() as u:
        u.add_column("tmp", StringType())
    with t.update_schema() as u:
        u.delete_column("tmp")  # back to the previous schema id
    with t.update_spec() as s:  # metadata only: appending would need pyiceberg-core
        s.add_field("ts", DayTransform(), "ts_day")
        s.add_field("id", BucketTransform(16), "id_bucket")

    parts = cat.create_table("demo.parts", schema=Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType())))
    with parts.update_spec() as s:
        s.add_identity("cat")
    parts.append(_rows(parts, [dict(id=1, cat="a"), dict(id=2, cat="a")]))
    parts.append(_rows(parts, [dict(id=3, cat="b")]))

    narrow = cat.create_table("demo.narrow", schema=Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "qty", LongType())))
    narrow.append(_rows(narrow, [dict(id=1, qty=7), dict(id=2, qty=None)]))
    with narrow.update_schema(allow_incompatible_changes=True) as u:
        u.update_column("qty", IntegerType())
    cat.create_table("demo.empty", schema=Schema(NestedField(1, "id", LongType())))
    collide = cat.create_table("demo.collide", schema=Schema(
        NestedField(1, "_sl_f2", StringType()), NestedField(2, "n", LongType())))
    collide.append(_rows(collide, [{"_sl_f2": "s", "n": 5}]))
    yield root


def _table(root: Path, name: str) -> IcebergTable:
    return IcebergTable(root / "wh" / "demo" / name)


def _by_name(h: Any, name: str) -> list[Any]:
    return [lin for lin in h.lineage if name in lin.names]


def test_lineage(warehouse: Path) -> None:
    t = _table(warehouse, "orders")
    h = t.history()
    lin = {lin.field_id: lin for lin in h.lineage}
    name = t.schema.fields[1]
    assert name.name == "name" and lin[name.id].names == ["name", "product", "name"]
    assert [e.kind for e in lin[name.id].events] == ["added", "renamed", "renamed"]
    # drop and re-add of `category`: a new id, flagged as a reuse of the old name
    old, new = _by_name(h, "category")
    assert new.field_id > old.field_id and not old.alive and new.alive
    assert new.name_reused_from == (old.field_id,)
    # nested rename and add
    town = next(x for x in h.lineage if x.names == ["address.city", "address.town"])
    assert [e.kind for e in town.events] == ["added", "renamed"]
    assert any(x.names == ["address.country"] for x in h.lineage)
    old_qty, new_qty = _by_name(h, "qty")
    assert new_qty.events[0].type == "string" and old_qty.events[-1].kind == "dropped"
    retyped = {e.name: (e.old_type, e.type) for x in h.lineage for e in x.events
               if e.kind == "retyped"}
    assert retyped == {"qty": ("int", "long"), "price": ("float", "double"),
                       "amount": ("decimal(9, 2)", "decimal(18, 2)"),
                       "address.zip": ("int", "long")}
    # list elements and map keys/values are fields with ids and paths
    paths = {f.full_name: f.type for f in h.schema(t.schema.schema_id).fields}
    assert paths["tags"] == "list<string>" and paths["tags.element"] == "string"
    assert paths["attrs.key"] == "string" and paths["address"] == "struct"
    # add-then-drop of `tmp` returned the table to an existing schema id
    assert h.current_schema_id < max(v.id for v in h.schemas)
    (tmp,) = _by_name(h, "tmp")
    assert [e.kind for e in tmp.events] == ["added", "dropped"] and not tmp.alive
    assert tmp.events[-1].schema_id == h.current_schema_id
    # compute_lineage over the versions alone (id order) agrees on everything else
    plain = {x.field_id: x for x in compute_lineage(h.schemas)}
    for fid, x in plain.items():
        if fid != tmp.field_id:
            assert (x.names, x.events) == (lin[fid].names, lin[fid].events)
    assert plain[tmp.field_id].alive  # id order alone misses the return
    times = [v.time_millis for v in h.schemas]
    assert None not in times and times == sorted(times)


def test_partition_specs_and_sort_orders(warehouse: Path) -> None:
    h = _table(warehouse, "orders").history()
    specs = [(v.id, v.label, v.options["default"]) for v in h.other_versions
             if v.kind == "partition-spec"]
    assert specs == [(0, "unpartitioned", "false"), (1, "category", "false"),
                     (2, "category, day(ts), bucket(16, id)", "true")]
    orders = [v.label for v in h.other_versions if v.kind == "sort-order"]
    assert orders == ["unsorted"]
    times = [v.time_millis for v in h.other_versions if v.kind == "partition-spec"]
    assert None not in times and times == sorted(times)


def test_snapshot_trees_match_pyiceberg_inspect(warehouse: Path) -> None:
    from schemalab.fileio import normalize as _local_path

    pt = _catalog(warehouse).load_table("demo.orders")
    t = _table(warehouse, "orders")
    h = t.history()
    assert [s.id for s in h.snapshots] == [s.snapshot_id for s in pt.snapshots()]
    kinds = []
    for s in h.snapshots:
        node = h.tree(s.id)
        files = pt.inspect.files(snapshot_id=s.id).to_pylist()
        expected = sorted((_local_path(f["file_path"]), f["record_count"]) for f in files)
        got = sorted((str(Path(t.path) / f.path), f.row_count) for f in node.live_files)
        assert got == expected
        assert s.record_count == sum(n for _, n in got)
        kinds.extend(f.kind for m in node.lists[0].manifests for f in m.files)
    assert {"ADDED", "DELETED"} <= set(kinds)
    node = h.tree(h.snapshots[-1].id)
    expected_m = sorted((Path(_local_path(m["path"])).name, m["added_data_files_count"],
                         m["existing_data_files_count"], m["deleted_data_files_count"])
                        for m in pt.inspect.manifests().to_pylist())
    got_m = sorted((Path(m.name).name, m.added, sum(f.kind == "EXISTING" for f in m.files),
                    m.deleted) for m in node.lists[0].manifests)
    assert got_m == expected_m
    # bounds decode under today's names, with the width they were written in (qty was int)
    first = next(f for f in h.tree(h.snapshots[0].id).live_files)
    assert first.stats["qty (dropped)"][:2] == (1, 3)
    assert first.stats["name"][:2] == ("apple", "kale")
    assert first.stats["category (dropped)"][:2] == ("fruit", "veg")
    assert first.stats["amount"][:2] == (Decimal("1.00"), Decimal("2.50"))


def _norm(v: Any) -> Any:
    """Arrow's to_pylist and Spark's Row side by side: structs as tuples, maps as sorted
    (key, value) tuples, lists as tuples."""
    if hasattr(v, "asDict"):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(_norm(x) for x in v.values())
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # an Arrow map
            return tuple(sorted((_norm(a), _norm(b)) for a, b in v))
        return tuple(_norm(x) for x in v)
    return v


def _spark_rows(df: Any) -> list[tuple[Any, ...]]:
    def norm(v: Any) -> Any:
        if hasattr(v, "asDict"):
            return tuple(norm(x) for x in v)
        if isinstance(v, dict):  # a Spark map
            return tuple(sorted((norm(a), norm(b)) for a, b in v.items()))
        if isinstance(v, list):
            return tuple(norm(x) for x in v)
        return v

    return sorted((norm(r) for r in df.collect()), key=repr)


def _arrow_rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((_norm(r) for r in table.to_pylist()), key=repr)


def test_reads_match_pyiceberg(warehouse: Path, spark: Any) -> None:
    pt = _catalog(warehouse).load_table("demo.orders")
    t = _table(warehouse, "orders")
    expected = pt.scan().to_arrow()
    df = t.read()
    assert df.columns == expected.column_names
    assert _spark_rows(df) == _arrow_rows(expected)
    for s in t.snapshots:  # time travel: each snapshot in its own schema
        exp = pt.scan(snapshot_id=s.snapshot_id).to_arrow()
        got = t.read(snapshot_id=s.snapshot_id)
        assert got.columns == exp.column_names, s.snapshot_id
        assert _spark_rows(got) == _arrow_rows(exp), s.snapshot_id
    # One scan for all files: valid promotions are widened by Spark's reader itself.
    (group,) = t.read_plan().groups
    assert len(group.files) == 4 and group.by_id
    assert not any(c.kind == "cast" for cols in group.columns_by_schema.values() for c in cols)


def test_old_snapshot_through_current_schema(warehouse: Path, spark: Any) -> None:
    t = _table(warehouse, "orders")
    first = t.snapshots[0].snapshot_id
    old = t.read(snapshot_id=first, schema="current")
    assert old.columns == [f.name for f in t.schema.fields]
    now = [r for r in _spark_rows(t.read()) if r[0] in (1, 2)]
    assert _spark_rows(old) == now
    # the re-added `category` is another field: NULL for rows written before it existed
    assert {r[-1] for r in now} == {None}


def test_identity_partition_value_fills_a_missing_column(warehouse: Path, spark: Any,
                                                         tmp_path: Path) -> None:
    """A data file without its identity partition column (as migrated Hive files are)
    reads the value from the manifest's partition tuple, as pyiceberg does."""
    import pyarrow.parquet as pq

    src = warehouse / "wh" / "demo" / "parts"
    copy = tmp_path / "parts"
    shutil.copytree(src, copy)
    rewritten = 0
    for f in (copy / "data").rglob("*.parquet"):
        size = f.stat().st_size
        table = pq.ParquetFile(f).read().drop_columns(["cat"])  # field ids stay
        # padded to the size the manifest records, which planning checks (as Java's reader
        # trusts it to find the footer)
        pad = 0
        for _ in range(3):
            with pq.ParquetWriter(f, table.schema) as w:
                w.write_table(table)
                w.add_key_value_metadata({"padding": "x" * pad})
            if f.stat().st_size == size:
                break
            pad += size - f.stat().st_size
        assert f.stat().st_size == size
        rewritten += 1
    assert rewritten == 2
    t = IcebergTable(copy)
    consts = [c.constant for g in t.read_plan().groups for c in g.columns if c.constant]
    assert [c.origin for c in consts] == ["partition", "partition"]
    assert sorted(c.value for c in consts) == ["a", "b"]
    assert all("identity-partition value" in c.text for g in t.explain_read().groups
               for c in g.columns if c.column == "cat")
    got = _spark_rows(t.read())
    assert got == [(1, "a"), (2, "a"), (3, "b")]
    pt = _catalog(warehouse).load_table("demo.parts")
    assert got == _arrow_rows(pt.scan().to_arrow())  # the original files, with `cat`


def test_narrowed_column_is_read_in_file_type_and_cast(warehouse: Path, spark: Any) -> None:
    """pyiceberg's allow_incompatible_changes lets long → int through (and then cannot read
    the table); Spark's reader cannot narrow, so the file's long is read and cast."""
    t = _table(warehouse, "narrow")
    (group,) = t.read_plan().groups
    assert not group.by_id and [c.kind for c in group.columns] == ["same", "cast"]
    df = t.read()
    assert df.schema["qty"].dataType.simpleString() == "int"
    assert _spark_rows(df) == [(1, 7), (2, None)]


def test_moved_table(warehouse: Path, spark: Any, tmp_path: Path) -> None:
    """Paths in metadata are absolute URIs of the old place; a copy reads from its own."""
    moved = tmp_path / "else[where]" / "orders"  # Spark would glob `[...]`
    shutil.copytree(warehouse / "wh" / "demo" / "orders", moved)
    t = IcebergTable(moved)
    original = _table(warehouse, "orders")
    h, h0 = t.history(), original.history()
    assert [v.time_millis for v in h.schemas] == [v.time_millis for v in h0.schemas]
    last = h.snapshots[-1].id
    assert [f.path for f in h.tree(last).live_files] == \
        [f.path for f in h0.tree(last).live_files]
    assert all(f.path.startswith(str(moved)) for f in t.data_files())
    pt = _catalog(warehouse).load_table("demo.orders")
    assert _spark_rows(t.read()) == _arrow_rows(pt.scan().to_arrow())


def test_column_named_like_a_synthetic_column(warehouse: Path, spark: Any) -> None:
    t = _table(warehouse, "collide")
    from schemalab.engine.scan import id_scan_prefix

    plan = t.read_plan()
    assert id_scan_prefix(list(plan.schemas.values())) == "_sl_f_"
    assert _spark_rows(t.read()) == [("s", 5)]


def test_open_an_older_metadata_file(warehouse: Path) -> None:
    mdir = warehouse / "wh" / "demo" / "orders" / "metadata"
    oldest = min(mdir.glob("*.metadata.json"), key=lambda p: metadata_version(p.name) or 0)
    t = IcebergTable(oldest)
    assert t.path == str(mdir.parent) and t.schema.schema_id == 0 and not t.snapshots


def test_empty_table(warehouse: Path, spark: Any) -> None:
    t = _table(warehouse, "empty")
    assert t.current_snapshot is None and t.history().snapshots == ()
    df = t.read()
    assert df.columns == ["id"] and df.count() == 0


def test_explain_read(warehouse: Path) -> None:
    """The same explanation as a Paimon table's: files grouped by the schema they were
    written under, each column by id, NULLs and dropped columns said why."""
    t = _table(warehouse, "orders")
    ex = t.explain_read()
    text = ex.text()
    assert "Iceberg type promotion" in text and "cast.mode" not in text
    first = min(g.schema_id for g in ex.groups)
    # `name` was renamed to `product` and back: by id from the file's own column `name`
    assert ex.column(first, "name").text == "by id from column `name`"
    # qty was dropped and re-added as a string: the old files' qty is another field
    qty = ex.column(first, "qty")
    assert qty.kind == "null" and "did not exist when these files were written" in qty.text
    dropped = [i for g in ex.groups if g.schema_id == first for i in g.ignored]
    assert any(i.startswith("file column `qty` ignored") and "was dropped in schema" in i
               for i in dropped), dropped
    # int -> long widening of the first qty shows on the files between the two changes
    second = sorted(g.schema_id for g in ex.groups)[1]
    assert "widened" in ex.column(first, "price").text
    assert ex.column(second, "name").kind in ("same", "renamed")
    # time travel: the first snapshot read in its own schema has nothing to evolve
    old = t.explain_read(t.snapshots[0].snapshot_id)
    assert all(c.kind == "same" for g in old.groups for c in g.columns)
    assert "<script>" not in ex._repr_html_()
