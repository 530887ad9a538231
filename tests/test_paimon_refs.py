"""Paimon tags and branches: refs and reads of tables schemalab's procedures and pypaimon 2.1
write, tag-kept expired snapshots, refusals that write nothing, hostile names, races."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from oracles import pypaimon_write

import schemalab as sl
from schemalab.errors import SchemaLabError


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture()
def wh(tmp_path: Path, spark: Any) -> sl.Warehouse:
    w = sl.Warehouse(tmp_path, spark=spark)
    w.sql("""CREATE TABLE t (id INT, a STRING);
             INSERT INTO t VALUES (1, 'x');
             CALL sys.create_tag(table => 't', tag => 'v1', snapshot => 1);
             ALTER TABLE t ADD COLUMN b INT;
             INSERT INTO t VALUES (2, 'y', 5);
             CALL sys.create_tag(table => 't', tag => 'v2', time_retained => '1 d');
             CALL sys.create_branch(table => 't', branch => 'dev', tag => 'v1');
             ALTER TABLE `t$branch_dev` ADD COLUMN c DOUBLE;
             INSERT INTO `t$branch_dev` VALUES (3, 'z', 1.5)""")
    return w


def test_refs_and_reads_bind_as_paimon(wh: sl.Warehouse) -> None:
    t = wh.table("t")
    assert [(r.name, r.kind, r.snapshot_id, r.schema_id) for r in t.refs] == [
        ("main", "branch", 2, 1), ("dev", "branch", 2, 1), ("v1", "tag", 1, 0),
        ("v2", "tag", 2, 1)]
    assert t.refs[3].properties["tagTimeRetained"] == "PT24H"
    assert _rows(t.read(ref="v1")) == [(1, "x")]            # the tag's snapshot's schema
    assert _rows(t.read(ref="dev")) == [(1, "x", None), (3, "z", 1.5)]  # the branch's
    assert _rows(wh.sql("SELECT * FROM `t$branch_dev`")) == [(1, "x", None), (3, "z", 1.5)]
    first = t.explain_read(ref="v1").text().splitlines()[0]
    assert "tag v1: the schema of its snapshot 1 (schema 0) binds, as Paimon reads a tag" \
        in first
    assert "branch dev: its current schema binds (schema 1, the branch's own)" in \
        t.explain_read(ref="dev").text().splitlines()[0]
    b = t.branch("dev")
    assert b.name == "default.t$branch_dev"
    assert [s.id for s in b.schemas] == [0, 1] and [s.id for s in b.snapshots] == [1, 2]
    assert [f.name for f in b.schema.fields] == ["id", "a", "c"]
    assert [f.name for f in t.schema.fields] == ["id", "a", "b"]   # main is untouched
    assert b.history().schemas[-1].id == 1
    # the branch's directory opened directly is that branch of the table
    direct = sl.open_table(Path(t.path) / "branch" / "branch-dev", spark=wh.spark)
    assert direct.name.endswith("t$branch_dev") and _rows(direct.read()) == _rows(b.read())


def test_tag_files_are_javas_layout(wh: sl.Warehouse) -> None:
    t = wh.table("t")
    plain = (Path(t.path) / "tag" / "tag-v1").read_text()
    assert plain == (Path(t.path) / "snapshot" / "snapshot-1").read_text()
    kept = (Path(t.path) / "tag" / "tag-v2").read_text()
    snap = (Path(t.path) / "snapshot" / "snapshot-2").read_text()
    assert kept.startswith(snap[:-2] + ',\n  "tagCreateTime" : [ ')
    assert kept.endswith('],\n  "tagTimeRetained" : 86400.000000000\n}')
    assert list(json.loads(kept))[-2:] == ["tagCreateTime", "tagTimeRetained"]


def test_expired_snapshot_kept_by_a_tag_is_read(wh: sl.Warehouse) -> None:
    wh.sql("INSERT INTO t VALUES (4, 'w', 6)")
    r = wh.sql("CALL sys.expire_snapshots(table => 't', retain_max => 1, retain_min => 1, "
               "older_than => '2999-01-01 00:00:00')").collect()
    assert r[0][0] == 2
    t = wh.table("t")
    assert [s.id for s in t.snapshots] == [3]
    assert _rows(t.read(snapshot_id=1)) == [(1, "x")] == _rows(t.read(ref="v1"))
    assert _rows(t.read(ref="v2")) == [(1, "x", None), (2, "y", 5)]
    assert _rows(wh.sql("SELECT * FROM `t$branch_dev`")) == [(1, "x", None), (3, "z", 1.5)]
    with pytest.raises(SchemaLabError, match=r"kept by tags: \[1, 2\]") as e:
        t.read(snapshot_id=7)
    assert e.value.rule == "snapshot-must-exist"
    # deleting the tag of an expired snapshot frees the files only it used
    before = set(_files(Path(t.path)))
    wh.sql("CALL sys.delete_tag(table => 't', tag => 'v2')")
    assert _rows(t.read()) == [(1, "x", None), (2, "y", 5), (4, "w", 6)]
    assert _rows(t.read(ref="v1")) == [(1, "x")]
    assert len(set(_files(Path(t.path))) - before) == 0


def test_rollback_and_fast_forward(wh: sl.Warehouse) -> None:
    with pytest.raises(SchemaLabError) as e:
        wh.sql("CALL sys.fast_forward(table => 't', branch => 'dev')")
    assert e.value.rule == "fast-forward-needs-descendant"
    r = wh.sql("CALL sys.rollback(table => 't', version => 'v1')").collect()
    assert tuple(r[0]) == (2, 1)
    t = wh.table("t")
    assert [x.name for x in t.refs] == ["main", "dev", "v1"]
    assert _rows(t.read()) == [(1, "x", None)]
    wh.sql("CALL sys.fast_forward(table => 't', branch => 'dev')")
    t = wh.table("t")
    assert [f.name for f in t.schema.fields] == ["id", "a", "c"]
    assert _rows(t.read()) == [(1, "x", None), (3, "z", 1.5)]
    wh.sql("CALL sys.rollback(table => 't', snapshot => 1)")
    assert _rows(wh.table("t").read()) == [(1, "x", None)]  # the schema stays, as Java


def test_procedures_refuse_and_write_nothing(wh: sl.Warehouse) -> None:
    root = Path(wh.table("t").path)
    before = _files(root)
    cases = {
        "CALL sys.create_tag(table => 't', tag => 'v1')": "tag-must-be-new",
        "CALL sys.create_tag(table => 't', tag => 'v9', snapshot => 9)": "snapshot-must-exist",
        "CALL sys.create_branch(table => 't', branch => 'dev')": "branch-must-be-new",
        "CALL sys.create_branch(table => 't', branch => 'main')": "main-branch-is-fixed",
        "CALL sys.create_branch(table => 't', branch => '123')": "valid-ref-name",
        "CALL sys.create_branch(table => 't', branch => 'b', tag => 'nope')": "ref-must-exist",
        "CALL sys.delete_branch(table => 't', branch => 'main')": "main-branch-is-fixed",
        "CALL sys.delete_branch(table => 't', branch => 'nope')": "ref-must-exist",
        "CALL sys.fast_forward(table => 't', branch => 'main')": "main-branch-is-fixed",
        "CALL sys.fast_forward(table => 't', branch => 'dev')": "fast-forward-needs-descendant",
        "CALL sys.rollback(table => 't', version => '9')": "snapshot-must-exist",
        "CALL sys.rollback(table => 't', snapshot => 1, tag => 'v1')": "procedure-arguments",
        "CALL sys.expire_snapshots(table => 't', retain_max => 1)": "procedure-arguments",
        "CALL sys.create_tag(table => 't', tag => 'v3', bogus => 1)": "procedure-arguments",
        "CALL sys.create_tag(table => 't', tag => 'v3', time_retained => 'soon')":
            "procedure-arguments",
    }
    for sql, rule in cases.items():
        with pytest.raises(SchemaLabError) as e:
            wh.sql(sql)
        assert e.value.rule == rule, sql
        assert _files(root) == before, sql
    msg = str(pytest.raises(SchemaLabError, wh.sql,
                            "CALL sys.create_tag(table => 't', tag => 'v1')").value)
    assert "Tag 'v1' already exists." in msg


@pytest.mark.parametrize("name", ["../x", "a/b", "x$y", "", " ", "x" * 10_000, ".hidden",
                                  "a\nb"])
def test_hostile_names_are_refused_before_any_path(wh: sl.Warehouse, name: str) -> None:
    root = Path(wh.table("t").path)
    before = _files(root)
    for sql in (f"CALL sys.create_tag(table => 't', tag => {json.dumps(name)})",
                f"CALL sys.create_branch(table => 't', branch => {json.dumps(name)})"):
        with pytest.raises(SchemaLabError) as e:
            wh.sql(sql.replace('"', "'") if "'" not in name else sql)
        assert e.value.rule in ("valid-ref-name", "procedure-arguments", "sql-syntax")
    with pytest.raises(SchemaLabError) as e:
        wh.table("t").read(ref=name)
    assert e.value.rule in ("ref-must-exist", "valid-ref-name")
    assert _files(root) == before


def test_planted_hostile_names_are_listed_escaped_never_followed(wh: sl.Warehouse) -> None:
    t = wh.table("t")
    tag_dir = Path(t.path) / "tag"
    snap = (tag_dir / "tag-v1").read_bytes()
    for bad in ("tag-a$b", "tag-.x", "tag-", "tag-a\nb", "tag-" + "y" * 240):
        (tag_dir / bad).write_bytes(snap)
    (Path(t.path) / "branch" / "branch-q$r").mkdir()
    refused = [r for r in wh.table("t").refs if "refused" in r.properties]
    names = sorted(r.name for r in refused)
    assert "'a\\nb'" in names and "'a$b'" in names and "'.x'" in names and "''" in names
    assert all(r.snapshot_id is None for r in refused) and len(refused) == 6
    assert any(n.endswith("...'") for n in names)          # cut, not 240 characters
    with pytest.raises(SchemaLabError) as e:
        t.read(ref="a$b")
    assert e.value.rule == "ref-must-exist"
    assert "tag v1" in str(e.value) and "branch dev" in str(e.value)


def test_racing_create_tag_one_wins(wh: sl.Warehouse) -> None:
    results: list[str] = []

    def go(i: int) -> None:
        try:
            sl.Warehouse(wh.path, spark=wh.spark).sql(
                f"CALL sys.create_tag(table => 't', tag => 'race', snapshot => {1 + i % 2})")
            results.append("won")
        except SchemaLabError as e:
            results.append(e.rule or "")

    threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == ["tag-must-be-new"] * 7 + ["won"]
    assert [r.name for r in wh.table("t").refs].count("race") == 1


def test_racing_create_branch_one_wins(wh: sl.Warehouse) -> None:
    results: list[str] = []

    def go() -> None:
        try:
            sl.Warehouse(wh.path, spark=wh.spark).sql(
                "CALL sys.create_branch(table => 't', branch => 'r', tag => 'v1')")
            results.append("won")
        except SchemaLabError as e:
            results.append(e.rule or "")

    threads = [threading.Thread(target=go) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results.count("won") == 1 and set(results) == {"won", "branch-must-be-new"}


def test_checkpoint_restores_tags_branches_and_fast_forward(wh: sl.Warehouse) -> None:
    root = Path(wh.table("t").path)
    token = wh.checkpoint()
    before = _files(root)
    wh.sql("""CALL sys.rollback(table => 't', version => 'v1');
              CALL sys.fast_forward(table => 't', branch => 'dev');
              CALL sys.create_tag(table => 't', tag => 'after');
              CALL sys.delete_branch(table => 't', branch => 'dev')""")
    assert _files(root) != before
    wh.restore(token)
    assert _files(root) == before
    assert _rows(wh.table("t").read(ref="dev")) == [(1, "x", None), (3, "z", 1.5)]


def _pypaimon_table(root: Path) -> Any:
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("d", True)
    cat.create_table("d.t", Schema.from_pyarrow_schema(
        pa.schema([("id", pa.int32()), ("a", pa.string())])), False)

    def write(name: str, ids: list[int], a: list[str]) -> None:
        t = cat.get_table(name)
        pypaimon_write.append(t, pa.table({"id": pa.array(ids, pa.int32()), "a": a}))

    write("d.t", [1], ["x"])
    cat.create_tag("d.t", "v1", snapshot_id=1)
    write("d.t", [2], ["y"])
    cat.create_tag("d.t", "daily", time_retained="1 h")
    cat.create_branch("d.t", "dev", tag_name="v1")
    write("d.t$branch_dev", [3], ["z"])
    return cat


def _pypaimon_read(cat: Any, name: str, options: dict[str, str] | None = None
                   ) -> list[tuple[Any, ...]]:
    t = cat.get_table(name)
    if options:
        t = t.copy(options)
    rb = t.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


def test_pypaimon_refs_and_reads(tmp_path: Path, spark: Any) -> None:
    cat = _pypaimon_table(tmp_path)
    t = sl.open_table(tmp_path / "d.db" / "t", spark=spark)
    refs = {(r.name, r.kind): r for r in t.refs}
    assert set(refs) == {("main", "branch"), ("dev", "branch"), ("v1", "tag"),
                         ("daily", "tag")}
    assert refs["v1", "tag"].snapshot_id == 1 and refs["daily", "tag"].snapshot_id == 2
    assert refs["daily", "tag"].properties["tagTimeRetained"] == "PT1H"
    assert sorted(cat.list_branches("d.t")) == ["dev"]
    assert _rows(t.read(ref="dev")) == _pypaimon_read(cat, "d.t$branch_dev")
    assert _rows(t.read(ref="v1")) == _pypaimon_read(cat, "d.t", {"scan.tag-name": "v1"})
    assert _rows(t.read()) == _pypaimon_read(cat, "d.t")
    # our procedures on pypaimon's table, read back by pypaimon
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CALL sys.create_tag(table => 'd.t', tag => 'ours', snapshot => 2)")
    assert _pypaimon_read(cat, "d.t", {"scan.tag-name": "ours"}) == [(1, "x"), (2, "y")]
    wh.sql("CALL sys.create_branch(table => 'd.t', branch => 'b2', tag => 'ours')")
    wh.sql("INSERT INTO d.`t$branch_b2` VALUES (5, 'q')")
    assert _pypaimon_read(cat, "d.t$branch_b2") == [(1, "x"), (2, "y"), (5, "q")]
    assert os.path.isdir(tmp_path / "d.db" / "t" / "branch" / "branch-b2" / "snapshot")


def test_version_as_of(wh: sl.Warehouse) -> None:
    assert _rows(wh.sql("SELECT * FROM t VERSION AS OF 'v1'")) == [(1, "x")]
    assert _rows(wh.sql("SELECT * FROM t VERSION AS OF 1")) == [(1, "x")]
    assert _rows(wh.sql("SELECT id FROM t VERSION AS OF 'v2' WHERE b = 5")) == [(2,)]
    both = wh.sql("SELECT o.id, n.b FROM t VERSION AS OF 1 o JOIN t n ON o.id = n.id")
    assert _rows(both) == [(1, None)]
    with pytest.raises(SchemaLabError) as e:
        wh.sql("SELECT * FROM t VERSION AS OF 'nope'")
    assert e.value.rule == "ref-must-exist" and "tag v1" in str(e.value)


def test_cli_sql_runs_the_procedures(wh: sl.Warehouse) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "schemalab.cli", "sql", wh.path, "-e",
                        "CALL sys.create_tag(table => 't', tag => 'cli', snapshot => 1); "
                        "CALL sys.delete_branch(table => 't', branch => 'dev')"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert [(x.name, x.kind) for x in wh.table("t").refs] == [
        ("main", "branch"), ("cli", "tag"), ("v1", "tag"), ("v2", "tag")]


def test_stepper_back_undoes_procedures(wh: sl.Warehouse) -> None:
    pytest.importorskip("ipywidgets")
    from schemalab.widgets import AlterStepper

    root = Path(wh.table("t").path)
    before = _files(root)
    stepper = AlterStepper(wh, "CALL sys.create_tag(table => 't', tag => 's1'); "
                               "CALL sys.rollback(table => 't', version => 'v1'); "
                               "CALL sys.fast_forward(table => 't', branch => 'dev')")
    while stepper.step():
        assert stepper.last_error is None, stepper.last_error
    assert [f.name for f in wh.table("t").schema.fields] == ["id", "a", "c"]
    while stepper.back():
        pass
    assert _files(root) == before
