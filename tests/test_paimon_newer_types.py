"""Paimon 1.4+ types. VECTOR columns (``VECTOR<FLOAT, 3>``): tables pypaimon 2.1 writes in
Parquet, ORC and Avro read equal to pypaimon's own read at every snapshot (an added column
between the writes), as ``ARRAY<element>``, as Paimon's Spark shows them; the schema JSON
node kept as Java writes it; INSERTs (lengths checked as Java's writers check them) read
back equal; ORC tables, vector-store files and rewrites refused by name. Java Paimon 2.0
judges its own VECTOR tables in tests/test_interop_paimon_blob.py. VARIANT in ORC files
(which pypaimon 2.1 writes and no engine reads) is refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError, UnknownTypeError, UnsupportedFeatureError
from schemalab.paimon.plan import check_not_vector_store
from schemalab.types.model import VectorType
from schemalab.types.parse import parse_type, type_from_json, type_to_json


def _catalog(root: Path) -> Any:
    from pypaimon import CatalogFactory

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("default", True)
    return cat


def build_vector_table(root: Path, fmt: str) -> Path:
    """pypaimon 2.1: ``(id INT, emb VECTOR<FLOAT, 3>)`` in ``fmt``, two rows, an added column
    ``tag``, one more row."""
    from pypaimon import Schema
    from pypaimon.schema.data_types import AtomicType, DataField
    from pypaimon.schema.data_types import VectorType as PyVector
    from pypaimon.schema.schema_change import SchemaChange

    cat = _catalog(root)
    cat.create_table("default.vec", Schema(fields=[
        DataField(0, "id", AtomicType("INT")),
        DataField(1, "emb", PyVector(True, AtomicType("FLOAT"), 3))],
        options={"file.format": fmt}), False)

    def write(rows: dict[str, Any]) -> None:
        wb = cat.get_table("default.vec").new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.table(rows))
        c.commit(w.prepare_commit())
        w.close()

    vec = pa.list_(pa.float32(), 3)
    write({"id": pa.array([1, 2], pa.int32()),
           "emb": pa.array([[1.0, 2.0, 3.0], [4.0, 5.5, -1.0]], vec)})
    cat.alter_table("default.vec", [SchemaChange.add_column("tag", AtomicType("STRING"))])
    write({"id": pa.array([3], pa.int32()), "emb": pa.array([[0.25, 0.0, 9.0]], vec),
           "tag": ["t3"]})
    return root / "default.db" / "vec"


def _pypaimon_rows(path: Path, snapshot: int) -> list[tuple[Any, ...]]:
    t = _catalog(path.parent.parent).get_table("default.vec").copy(
        {"scan.snapshot-id": str(snapshot)})
    rb = t.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(tuple(tuple(v) if isinstance(v, list) else v for v in r.values())
                  for r in rows)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_vector_tables_pypaimon_wrote_read_equal(tmp_path: Path, fmt: str, spark: Any) -> None:
    path = build_vector_table(tmp_path / "wh", fmt)
    t = sl.open_table(path, spark=spark)
    emb = t.schema.field("emb")
    assert emb is not None and isinstance(emb.type, VectorType)
    assert emb.type.sql() == "VECTOR<FLOAT, 3>"
    for snap in t.snapshots:
        df = t.read(snapshot_id=snap.id)
        ours = sorted(tuple(tuple(v) if isinstance(v, list) else v for v in r)
                      for r in df.collect())
        assert ours == _pypaimon_rows(path, snap.id), (fmt, snap.id)
    # ARRAY<FLOAT>, as Paimon's Spark shows a VECTOR (its elements NOT NULL there; a Spark
    # read's nested nullability is the plan's, as for every column)
    assert t.read().schema["emb"].dataType.simpleString() == "array<float>"


def test_vector_type_text_and_json() -> None:
    """Java's SQL text and JSON node (``VectorType.serializeJson``) both ways."""
    t = parse_type("VECTOR<DOUBLE, 8> NOT NULL")
    assert isinstance(t, VectorType) and (t.length, t.nullable) == (8, False)
    assert t.sql() == "VECTOR<DOUBLE, 8> NOT NULL"
    node = {"type": "VECTOR", "element": "FLOAT", "length": 3}
    assert type_to_json(type_from_json(node)) == node
    assert type_to_json(type_from_json(node), nullable_key=True) == {**node, "nullable": True}
    assert type_from_json(node) != parse_type("ARRAY<FLOAT>")
    with pytest.raises(UnknownTypeError, match="element must be BOOLEAN"):
        parse_type("VECTOR<STRING, 3>")
    with pytest.raises(UnknownTypeError, match="length must be at least 1"):
        type_from_json({"type": "VECTOR", "element": "INT", "length": 0})


def _table_files(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
def test_vector_inserts_read_back_equal(tmp_path: Path, fmt: str, spark: Any) -> None:
    """INSERTs (SQL and Python rows) into the VECTOR table pypaimon 2.1 wrote, an added
    ``VECTOR<DOUBLE, 2>`` column (Java's SQL spelling and JSON node), one more INSERT:
    schemalab and pypaimon read every snapshot equal."""
    path = build_vector_table(tmp_path / "wh", fmt)
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("INSERT INTO vec VALUES (4, array(1.0F, 2.0F, 3.0F), 't4'), (5, NULL, 't5')")
    wh.sql("ALTER TABLE vec ADD COLUMN v2 VECTOR<DOUBLE, 2>")
    t = sl.open_table(path, spark=spark)
    t.insert([(6, [0.5, -1.5, 2.0], "t6", [1e300, -0.0])])
    wh.sql("INSERT INTO vec (id, v2) VALUES (7, array(3D, 4D))")
    t = sl.open_table(path, spark=spark)
    assert [f.type.sql() for f in t.schema.fields] == [
        "INT", "VECTOR<FLOAT, 3>", "STRING", "VECTOR<DOUBLE, 2>"]
    latest = json.loads(sorted((path / "schema").iterdir())[-1].read_text())
    assert latest["fields"][3]["type"] == {"type": "VECTOR", "element": "DOUBLE", "length": 2}
    assert len(t.snapshots) == 5
    for snap in t.snapshots:
        ours = sorted(tuple(tuple(v) if isinstance(v, list) else v for v in r)
                      for r in t.read(snapshot_id=snap.id).collect())
        assert ours == _pypaimon_rows(path, snap.id), (fmt, snap.id)
    assert _pypaimon_rows(path, 5)[-2:] == [
        (6, (0.5, -1.5, 2.0), "t6", (1e300, -0.0)), (7, None, None, (3.0, 4.0))]


def test_vector_values_of_the_wrong_shape_are_refused(tmp_path: Path, spark: Any) -> None:
    """A value of another length, or with a NULL element (Java's writers refuse both),
    fails the INSERT naming the table, the column, the value and its length; no file stays
    and no snapshot is made."""
    path = build_vector_table(tmp_path / "wh", "parquet")
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    before = _table_files(path)
    cases = [
        ("INSERT INTO vec VALUES (4, array(1.0F, 2.0F, 3.0F), 'ok'), "
         "(5, array(1.0F, 2.0F), 'short')", "vector-length",
         r"column emb is VECTOR<FLOAT, 3>, and a row gives it \[1.0, 2.0\], a value of 2 "
         r"elements; a VECTOR<FLOAT, 3> holds exactly 3"),
        ("INSERT INTO vec VALUES (4, array(1.0F, 2.0F, 3.0F, 4.0F), 'long')", "vector-length",
         "a value of 4 elements"),
        ("INSERT INTO vec VALUES (4, array(1.0F, NULL, 3.0F), 'hole')",
         "vector-element-not-null", "a value of 3 elements, one of them NULL"),
        ("INSERT INTO vec VALUES (4, array(), 'empty')", "vector-length",
         "a value of 0 elements")]
    for sql, rule, message in cases:
        with pytest.raises(SchemaLabError, match=message) as e:
            wh.sql(sql)
        assert (e.value.rule, e.value.table, e.value.column) == (rule, "default.vec", "emb")
        assert str(e.value).startswith("Table default.vec: column emb")
        assert _table_files(path) == before, sql
    with pytest.raises(SchemaLabError, match="a value of 1 elements") as e:
        sl.open_table(path, spark=spark).insert([(4, [1.0], "py")])
    assert e.value.rule == "vector-length"
    assert _table_files(path) == before
    assert len(sl.open_table(path, spark=spark).snapshots) == 2


def test_vector_writes_refused_by_name(tmp_path: Path, spark: Any) -> None:
    """What stays refused: an INSERT into an ORC table (Java 2.0 creates none with a
    VECTOR), a table keeping VECTORs in vector-store files (``vector.file.format``), a
    VECTOR nested in another type, a COMPACT and a DELETE (a primary-key table's INSERTs
    are written and merged); nothing is written."""
    orc = build_vector_table(tmp_path / "orc", "orc")
    with pytest.raises(UnsupportedFeatureError, match="format is ORC") as e:
        sl.Warehouse(tmp_path / "orc", spark=spark).sql(
            "INSERT INTO vec VALUES (4, array(1.0F, 2.0F, 3.0F), 't4')")
    assert (e.value.feature, e.value.column, e.value.option) == (
        "VECTOR columns", "emb", "file.format")
    assert len(sl.open_table(orc, spark=spark).snapshots) == 2
    wh = sl.Warehouse(tmp_path / "own", spark=spark)
    wh.sql("CREATE TABLE vs (id INT, emb VECTOR<FLOAT, 3>) "
           "TBLPROPERTIES ('vector.file.format' = 'lance')")
    wh.sql("CREATE TABLE nested (id INT, embs ARRAY<VECTOR<INT, 2>>)")
    wh.sql("CREATE TABLE keyed (id INT NOT NULL, emb VECTOR<INT, 2>, "
           "PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '1')")
    wh.sql("INSERT INTO keyed VALUES (1, array(1, 2)), (2, array(3, 4))")
    wh.sql("INSERT INTO keyed VALUES (1, array(5, 6))")
    assert [tuple(r) for r in wh.sql("SELECT * FROM keyed ORDER BY id").collect()] == [
        (1, [5, 6]), (2, [3, 4])]
    for sql, match, feature, column in (
            ("INSERT INTO vs VALUES (1, array(1.0F, 2.0F, 3.0F))", "'lance' vector-store",
             "vector-store files", "emb"),
            ("INSERT INTO nested VALUES (1, array(array(1, 2)))", "inside a nested type",
             "VECTOR columns", "embs"),
            ("CALL sys.compact(table => 'keyed')", "by INSERT only, not by COMPACT",
             "VECTOR columns", "emb"),
            ("DELETE FROM keyed WHERE id = 1", "not by DELETE", "VECTOR columns", "emb")):
        with pytest.raises(UnsupportedFeatureError, match=match) as e:
            wh.sql(sql)
        assert (e.value.feature, e.value.column) == (feature, column), sql
        assert "Nothing was written" in str(e.value)
    for name, snaps in (("vs", 0), ("nested", 0), ("keyed", 2)):
        assert len(wh.table(name).snapshots) == snaps, name
    with pytest.raises(UnsupportedFeatureError, match="vector-store file") as e:
        check_not_vector_store("data-1-0.vector.lance", ("emb",), "default.vec")
    assert (e.value.feature, e.value.option) == ("vector-store files", "vector.file.format")
    check_not_vector_store("data-1-0.parquet", None, "default.vec")


def test_variant_in_orc_pypaimon_wrote_is_refused_by_name(tmp_path: Path, spark: Any) -> None:
    """pypaimon 2.1 writes a VARIANT column of an ORC table as ``struct<value, metadata>``
    (and cannot read it back: "cannot cast nullable field to non-nullable field"); Java 2.0
    refuses to write one (tests/test_interop_paimon_blob.py). schemalab refuses the read
    naming the feature and the option; the same table in Parquet reads."""
    from pypaimon import Schema
    from pypaimon.data.generic_variant import GenericVariant
    from pypaimon.schema.data_types import AtomicType, DataField, PyarrowFieldParser

    for fmt in ("orc", "parquet"):
        root = tmp_path / fmt
        cat = _catalog(root)
        cat.create_table("default.vt", Schema(fields=[
            DataField(0, "id", AtomicType("INT")), DataField(1, "v", AtomicType("VARIANT"))],
            options={"file.format": fmt}), False)
        t = cat.get_table("default.vt")
        arrow_schema = PyarrowFieldParser.from_paimon_schema(t.table_schema.fields)
        g = GenericVariant.from_python({"a": 1})
        wb = t.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.table({"id": pa.array([1], pa.int32()), "v": pa.array(
            [{"value": g.value(), "metadata": g.metadata()}], arrow_schema.field("v").type)},
            schema=arrow_schema))
        c.commit(w.prepare_commit())
        ours = sl.open_table(root / "default.db" / "vt", spark=spark)
        if fmt == "parquet":
            assert [r["v"].toJson() for r in ours.read().collect()] == ['{"a":1}']
            continue
        with pytest.raises(UnsupportedFeatureError, match="VARIANT column v in ORC") as e:
            ours.read()
        assert (e.value.feature, e.value.option, e.value.column) == (
            "VARIANT in ORC files", "file.format", "v")
