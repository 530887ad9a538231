"""The schema manager: create-if-absent commits and racing committers."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest

from schemalab.errors import CorruptFileError, SchemaLabError
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.schema.apply import new_table_schema
from schemalab.schema.changes import AddColumn, ColumnSpec, RenameColumn
from schemalab.types.parse import parse_type


def make_table(path: Path) -> SchemaManager:
    m = SchemaManager(str(path), table="db.t")
    m.create(new_table_schema([ColumnSpec("id", parse_type("INT"))], table="db.t"))
    return m


def test_list_latest_get(tmp_path: Path) -> None:
    m = make_table(tmp_path / "t")
    m.commit_changes([AddColumn(("a",), parse_type("STRING"))])
    m.commit_changes([RenameColumn(("a",), "b")])
    assert m.list_ids() == [0, 1, 2]
    assert m.latest().field_names == ["id", "b"]  # type: ignore[union-attr]
    assert SchemaManager(str(tmp_path / "t")).get(1).field_names == ["id", "a"]
    text = (tmp_path / "t/schema/schema-2").read_text()
    assert '"highestFieldId" : 1' in text


def test_commit_never_overwrites(tmp_path: Path) -> None:
    m = make_table(tmp_path / "t")
    s0 = m.get(0)
    before = (tmp_path / "t/schema/schema-0").read_bytes()
    assert m.commit(s0.with_changes(comment="other")) is False
    assert (tmp_path / "t/schema/schema-0").read_bytes() == before
    with pytest.raises(SchemaLabError, match="already exists"):
        m.create(s0)
    assert sorted(os.listdir(tmp_path / "t/schema")) == ["schema-0"]


def test_corrupt_schema_file_is_named(tmp_path: Path) -> None:
    make_table(tmp_path / "t")
    (tmp_path / "t/schema/schema-1").write_text('{"version" : 3, "id" : 1, "fie')
    with pytest.raises(CorruptFileError) as e:
        SchemaManager(str(tmp_path / "t")).latest()
    assert "schema-1" in str(e.value) and "not valid JSON" in str(e.value)


def test_schema_file_with_the_wrong_id(tmp_path: Path) -> None:
    m = make_table(tmp_path / "t")
    assert m.get(0).id == 0
    os.link(tmp_path / "t/schema/schema-0", tmp_path / "t/schema/schema-1")
    with pytest.raises(CorruptFileError, match="expected 1"):
        SchemaManager(str(tmp_path / "t")).get(1)
    assert m.get(0).id == 0


def _add_columns(path: str, prefix: str, n: int, barrier: mp.synchronize.Barrier) -> None:
    m = SchemaManager(path, table="db.t")
    barrier.wait()
    for i in range(n):
        m.commit_changes([AddColumn((f"{prefix}{i}",), parse_type("INT"))])


@pytest.mark.parametrize("writers", [2, 4])
def test_racing_processes_lose_nothing(tmp_path: Path, writers: int) -> None:
    path = str(tmp_path / "t")
    make_table(tmp_path / "t")
    per_writer = 15
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(writers)
    procs = [ctx.Process(target=_add_columns, args=(path, f"w{w}_", per_writer, barrier))
             for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    m = SchemaManager(path)
    total = writers * per_writer
    assert m.list_ids() == list(range(total + 1))
    latest = m.latest()
    assert latest is not None
    assert sorted(latest.field_names) == sorted(
        ["id"] + [f"w{w}_{i}" for w in range(writers) for i in range(per_writer)])
    # each version adds exactly one column with the next id: history is linear
    for sid in range(1, total + 1):
        assert m.get(sid).highest_field_id == sid
        assert len(m.get(sid).fields) == sid + 1
    assert not [n for n in os.listdir(tmp_path / "t/schema") if n.startswith(".")]
