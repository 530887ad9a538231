"""Commits through a catalog, without one (fast, default suite): the REST spec's updates and
requirements schemalab derives from a change to a table's metadata, checked by applying them
with pyiceberg's own ``update_table_metadata`` (what its SQL catalog commits) to the metadata
schemalab's writer made; the Hadoop commit's refusal of a catalog's table; the Explorer's
partial-history banner. Against real catalogs: tests/test_catalogs.py (make test-catalogs)."""

from __future__ import annotations

import copy
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from schemalab import catalogs
from schemalab.catalog_commit import metadata_updates, pyiceberg_models
from schemalab.errors import SchemaLabError
from schemalab.iceberg.metadata import load_json
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.alter import apply_alter
from schemalab.iceberg.write.table import create_iceberg_table
from schemalab.iceberg.write.tablemeta import add_snapshot, new_snapshot_id
from schemalab.schema.changes import ColumnSpec
from schemalab.sql import parse_statements
from schemalab.types import parse_type

FIXTURES = Path(__file__).parent / "fixtures" / "iceberg-java-1.10"


def _table(tmp_path: Path, **kw: Any) -> tuple[str, dict[str, Any]]:
    path = str(tmp_path / "db" / "t")
    create_iceberg_table(path, "db.t", [ColumnSpec("id", parse_type("BIGINT")),
                                        ColumnSpec("name", parse_type("STRING"))], **kw)
    return path, load_json(str(tmp_path / "db" / "t" / "metadata" / "v1.metadata.json"))


def _apply(base: dict[str, Any], reqs: list[dict[str, Any]],
           ups: list[dict[str, Any]]) -> Any:
    """``ups`` applied by pyiceberg to ``base``, after checking ``reqs`` hold on it."""
    from pyiceberg.table.metadata import TableMetadataUtil
    from pyiceberg.table.update import update_table_metadata

    meta = TableMetadataUtil.parse_obj(base)
    requirements, updates = pyiceberg_models(reqs, ups, "db.t")
    for r in requirements:
        r.validate(meta)
    return update_table_metadata(meta, updates)


def _alter(d: dict[str, Any], sql: str) -> dict[str, Any]:
    new = copy.deepcopy(d)
    (stmt,) = parse_statements(sql)
    apply_alter(new, stmt.changes, "db.t")  # type: ignore[attr-defined]
    return new


def test_an_alter_is_add_schema_and_set_current_schema(tmp_path: Path) -> None:
    _, base = _table(tmp_path)
    new = _alter(base, "ALTER TABLE t ADD COLUMN score INT")
    reqs, ups = metadata_updates(base, new, "db.t")
    assert [u["action"] for u in ups] == ["add-schema", "set-current-schema"]
    assert ups[1]["schema-id"] == -1  # the one just added, whatever id a catalog gives it
    assert {r["type"]: r for r in reqs} == {
        "assert-table-uuid": {"type": "assert-table-uuid", "uuid": base["table-uuid"]},
        "assert-current-schema-id": {"type": "assert-current-schema-id",
                                     "current-schema-id": 0},
        "assert-last-assigned-field-id": {"type": "assert-last-assigned-field-id",
                                          "last-assigned-field-id": 2}}
    after = _apply(base, reqs, ups)
    assert after.current_schema_id == 1 and after.last_column_id == 3
    theirs = json.loads(after.schema().model_dump_json(by_alias=True))
    assert theirs["fields"] == new["schemas"][1]["fields"] and theirs["schema-id"] == 1
    # the same updates on a table another writer altered since: a requirement fails
    from pyiceberg.exceptions import CommitFailedException

    moved = _alter(new, "ALTER TABLE t ADD COLUMN other STRING")
    with pytest.raises(CommitFailedException, match="current schema id has changed"):
        _apply(moved, reqs, ups)


def test_an_append_is_add_snapshot_and_set_snapshot_ref(tmp_path: Path) -> None:
    _, base = _table(tmp_path)
    first, second = new_snapshot_id(), new_snapshot_id()

    def snap(sid: int, seq: int, parent: int | None) -> dict[str, Any]:
        s = {"sequence-number": seq, "snapshot-id": sid, "timestamp-ms": 1_700_000_000_000 + seq,
             "summary": {"operation": "append"}, "manifest-list": f"file:///x/snap-{sid}.avro",
             "schema-id": 0}
        return s if parent is None else {**s, "parent-snapshot-id": parent}

    one = copy.deepcopy(base)
    add_snapshot(one, snap(first, 1, None))
    reqs, ups = metadata_updates(base, one, "db.t")
    assert [u["action"] for u in ups] == ["add-snapshot", "set-snapshot-ref"]
    assert {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None} in reqs
    assert _apply(base, reqs, ups).current_snapshot_id == first
    two = copy.deepcopy(one)
    add_snapshot(two, snap(second, 2, first))
    reqs, ups = metadata_updates(one, two, "db.t")
    assert {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": first} in reqs
    after = _apply(one, reqs, ups)
    assert after.current_snapshot_id == second and after.last_sequence_number == 2
    # a race: another writer's snapshot is main's head now, so this append is refused
    from pyiceberg.exceptions import CommitFailedException

    with pytest.raises(CommitFailedException, match="has changed"):
        _apply(two, *metadata_updates(one, two, "db.t"))


def test_partition_evolution_and_properties(tmp_path: Path) -> None:
    from schemalab.iceberg.write.evolve_spec import apply_iceberg_alter

    _, base = _table(tmp_path, properties={"a": "1", "b": "2"})
    new = copy.deepcopy(base)
    apply_iceberg_alter(new, "ADD", [("bucket[4]", "id")], None, (), "db.t")
    new["properties"] = {**{k: v for k, v in new["properties"].items() if k != "a"}, "c": "3"}
    reqs, ups = metadata_updates(base, new, "db.t")
    assert [u["action"] for u in ups] == ["add-spec", "set-default-spec", "set-properties",
                                          "remove-properties"]
    assert {r["type"] for r in reqs} == {"assert-table-uuid", "assert-default-spec-id",
                                         "assert-last-assigned-partition-id"}
    after = _apply(base, reqs, ups)
    assert after.default_spec_id == 1 and after.last_partition_id == 1000
    assert [f.name for f in after.spec().fields] == [
        f["name"] for f in new["partition-specs"][1]["fields"]]
    assert after.properties == new["properties"]


def test_a_change_no_update_expresses_is_refused_naming_it(tmp_path: Path) -> None:
    _, base = _table(tmp_path)
    rewritten = copy.deepcopy(base)
    rewritten["schemas"][0]["fields"][0]["name"] = "renamed_in_place"
    with pytest.raises(SchemaLabError) as e:
        metadata_updates(base, rewritten, "db.t")
    assert e.value.rule == "catalog-commit-refused" and "db.t" in str(e.value)
    assert "immutable" in str(e.value)
    odd = {**base, "statistics": [{"snapshot-id": 1}]}
    with pytest.raises(SchemaLabError) as e:
        metadata_updates(base, odd, "db.t")
    assert "'statistics'" in str(e.value) and e.value.rule == "catalog-commit-refused"
    assert metadata_updates(base, copy.deepcopy(base), "db.t")[1] == []  # nothing to send


def test_the_hadoop_commit_refuses_a_catalogs_table(tmp_path: Path) -> None:
    """A table whose metadata a catalog names (00001-<uuid>.metadata.json): a v2 beside it
    would fork the table behind the catalog's back."""
    path, base = _table(tmp_path)
    mdir = Path(path) / "metadata"
    for f in mdir.iterdir():
        f.unlink()
    (mdir / "00001-1b2c.metadata.json").write_text(json.dumps(base))
    with pytest.raises(SchemaLabError) as e:
        commits.commit(path, "db.t", lambda d: d)
    assert e.value.rule == "commit-through-catalog" and "db.t" in str(e.value)
    assert sorted(p.name for p in mdir.iterdir()) == ["00001-1b2c.metadata.json"]


def _fixture_table(tmp_path: Path) -> Path:
    """A Java-written table with at least two snapshots on main's line."""
    with tarfile.open(FIXTURES / "iceberg-java-1.10.2-tables.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    for table in sorted((tmp_path / "db").iterdir()):
        metas = sorted((table / "metadata").glob("v*.metadata.json"),
                       key=lambda p: int(p.name[1:].split(".")[0]))
        doc = json.loads(metas[-1].read_text())
        if len(doc.get("snapshot-log", [])) >= 2 and len(doc.get("refs", {})) == 1:
            return metas[-1]
    raise AssertionError("no fixture table with two snapshots")


def test_explorer_and_text_say_a_catalogs_history_is_partial(tmp_path: Path) -> None:
    """What a REST catalog's snapshots=refs answer looks like (only main's head returned):
    every tab of the Explorer, its static HTML and text, and the CLI's text say so."""
    from schemalab.widgets import Explorer

    meta = _fixture_table(tmp_path)
    doc = json.loads(meta.read_text())
    head = doc["current-snapshot-id"]
    missing = tuple(sorted(s["snapshot-id"] for s in doc["snapshots"]
                           if s["snapshot-id"] != head))
    doc["snapshots"] = [s for s in doc["snapshots"] if s["snapshot-id"] == head]
    ref = catalogs.CatalogTableRef("lake", "db.t", str(meta), {}, (head,), missing, doc)
    t = catalogs.CatalogIcebergTable(ref)
    ex = Explorer(t, reads=False)
    assert len(ex.children) == len(ex.PAGES) == len(ex.pages)
    for page, view in zip(ex.children, ex.pages, strict=True):
        banner, shown = page.children
        assert shown is view
        assert "sl-partial" in banner.value and "Partial history" in banner.value
        assert str(missing[0]) in banner.value and "snapshots=refs" in banner.value
    bundle = ex._repr_mimebundle_()
    assert "sl-partial" in bundle["text/html"]
    assert "\nPARTIAL HISTORY: catalog lake returned 1 of" in bundle["text/plain"]
    from schemalab.render.history_text import history_text

    assert history_text(t.history()).splitlines()[1].startswith("PARTIAL HISTORY: catalog lake")
    # a whole history: no banner, the pages are the tabs themselves
    whole = Explorer(catalogs.CatalogIcebergTable(catalogs.CatalogTableRef(
        "lake", "db.t", str(meta), {}, (head, *missing))), reads=False)
    assert list(whole.children) == whole.pages
    assert "sl-partial" not in whole._repr_mimebundle_()["text/html"]
    shutil.rmtree(tmp_path / "db")
