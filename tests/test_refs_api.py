"""The format-neutral ref surface (schemalab.format, schemalab.refs): ``ref=`` on reads,
explanations and why; ``main`` on every table; unknown names listing the refs there are."""

from __future__ import annotations

import pytest

import schemalab as sl
from schemalab.errors import InvalidIdentifierError, NotFoundError, SchemaLabError
from schemalab.refs import check_ref_name


@pytest.fixture()
def table(spark, tmp_path):  # type: ignore[no-untyped-def]
    wh = sl.Warehouse(str(tmp_path / "wh"), spark=spark)
    wh.sql("CREATE TABLE t (id INT, a STRING)")
    wh.sql("INSERT INTO t VALUES (1, 'x')")
    wh.sql("ALTER TABLE t ADD COLUMN b INT")
    wh.sql("INSERT INTO t VALUES (2, 'y', 7)")
    return wh.table("t")


def test_main_is_a_branch_at_the_current_snapshot(table) -> None:  # type: ignore[no-untyped-def]
    main = table.refs[0]
    assert (main.name, main.kind) == ("main", "branch")
    assert main.snapshot_id == table.snapshots[-1].id
    assert main.schema_id == table.schema.id
    assert table.branch("main") is table


def test_read_of_main_equals_the_current_read(table) -> None:  # type: ignore[no-untyped-def]
    rows = sorted(tuple(r) for r in table.read(ref="main").collect())
    assert rows == sorted(tuple(r) for r in table.read().collect()) == [(1, "x", None),
                                                                        (2, "y", 7)]
    ex = table.explain_read(ref="main")
    assert ex.text().splitlines()[0].endswith("; branch main: its current schema binds")
    assert table.why("b", ref="main").binding == "branch main: its current schema binds"


def test_unknown_ref_lists_the_refs(table) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFoundError) as e:
        table.read(ref="v1")
    assert e.value.rule == "ref-must-exist"
    assert "'v1'" in str(e.value) and "branch main" in str(e.value)
    with pytest.raises(NotFoundError):
        table.branch("dev")


def test_snapshot_and_ref_together_are_refused(table) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SchemaLabError) as e:
        table.read(1, ref="main")
    assert e.value.rule == "one-read-target"


@pytest.mark.parametrize("name", ["", " ", "../x", "a/b", "a\\b", "..", ".hidden", "t$x",
                                  "a\nb", "x" * 10_000])
def test_hostile_ref_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidIdentifierError) as e:
        check_ref_name(name, "branch", table="default.t")
    assert e.value.rule == "valid-ref-name"
    assert len(str(e.value)) < 300
