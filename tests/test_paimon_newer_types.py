"""Paimon 1.4+ types. VECTOR columns (``VECTOR<FLOAT, 3>``): tables pypaimon 2.1 writes in
Parquet, ORC and Avro read equal to pypaimon's own read at every snapshot (an added column
between the writes), as ``ARRAY<element>``, as Paimon's Spark shows them; the schema JSON
node kept as Java writes it; writes and vector-store files refused by name. Java Paimon 2.0
judges its own VECTOR tables in tests/test_interop_paimon_blob.py. VARIANT in ORC files
(which pypaimon 2.1 writes and no engine reads) is refused by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import schemalab as sl
from schemalab.errors import UnknownTypeError, UnsupportedFeatureError
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


def test_vector_writes_and_vector_store_files_are_refused(tmp_path: Path, spark: Any) -> None:
    path = build_vector_table(tmp_path / "wh", "parquet")
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    with pytest.raises(UnsupportedFeatureError, match="column emb is a VECTOR") as e:
        wh.sql("INSERT INTO vec VALUES (4, array(1.0F, 2.0F, 3.0F), 't4')")
    assert (e.value.feature, e.value.column) == ("VECTOR columns", "emb")
    assert len(sl.open_table(path, spark=spark).snapshots) == 2
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
