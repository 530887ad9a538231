"""Iceberg refs on the Java-written fixture t20 (Spark + Iceberg 1.10.2: tag ``tag1`` and
branch ``br1`` at snapshot 2, a write on the branch, then main evolved (ADD d, RENAME a) and was
rolled back to snapshot 2 and written again): ``t.refs`` equals the metadata's refs, every
ref's read equals what Iceberg read (the fixture's recorded reads; the branch in the table's
current schema), the history is a graph, and ``inspect`` shows it. The same against Java
Iceberg 1.12 on tables its own API writes: ``tests/test_interop_iceberg_refs.py``."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from test_iceberg_java_fixtures import TARBALL, expected

import schemalab as sl
from schemalab import cli
from schemalab.errors import CorruptFileError, NotFoundError
from schemalab.history.graph import lineage_across

T20 = "t20_branch_tag_rollback"


@pytest.fixture(scope="module")
def t20(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iceberg-refs-fixture")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data",
                       members=[m for m in tar.getmembers() if f"/{T20}/" in f"/{m.name}"])
    return root / "db" / T20


def _raw_refs(path: Path) -> dict[str, Any]:
    t = sl.open_table(path)
    return dict(json.loads(Path(t.metadata_file).read_text())["refs"])


def test_refs_are_the_metadatas(t20: Path) -> None:
    t = sl.open_table(t20)
    raw = _raw_refs(t20)
    assert [r.name for r in t.refs] == ["main", "br1", "tag1"]
    for r in t.refs:
        assert (r.kind, r.snapshot_id) == (raw[r.name]["type"], raw[r.name]["snapshot-id"])
    s2 = expected(T20)["labels"]["s2"]
    refs = {r.name: r for r in t.refs}
    assert refs["tag1"].snapshot_id == s2 and refs["tag1"].schema_id == 1
    assert refs["br1"].schema_id == refs["main"].schema_id == t.metadata.current_schema_id == 3


def _rows(df: Any) -> tuple[list[str], list[str]]:
    columns, _, rows = canonical_frame(df)
    return columns, sorted(rows)


def test_tag_and_main_read_as_iceberg_did(t20: Path, spark: Any) -> None:
    t = sl.open_table(t20)
    reads = expected(T20)["reads"]
    s2 = str(expected(T20)["labels"]["s2"])
    assert _rows(t.read(ref="tag1")) == (reads[s2]["columns"], sorted(reads[s2]["rows"]))
    assert _rows(t.read(ref="main")) == (reads["current"]["columns"],
                                         sorted(reads["current"]["rows"]))


def test_branch_reads_its_head_in_the_tables_current_schema(t20: Path, spark: Any) -> None:
    t = sl.open_table(t20)
    head = str(next(r.snapshot_id for r in t.refs if r.name == "br1"))
    then = expected(T20)["reads"][head]  # the head in its own schema: id, a, b
    assert then["columns"] == ["id", "a", "b"]
    columns, rows = _rows(t.read(ref="br1"))
    assert columns == ["id", "a_renamed", "b", "d"]  # today's names, today's column d
    assert rows == sorted(json.dumps([*json.loads(r), None]) for r in then["rows"])
    assert t.branch("br1").read().collect() == t.read(ref="br1").collect()
    first = t.explain_read(ref="br1").text().splitlines()[0]
    assert first.endswith("branch br1: the table's current schema 3 binds, as Iceberg reads a "
                          "branch")


def test_history_is_a_graph(t20: Path) -> None:
    t = sl.open_table(t20)
    labels = expected(T20)["labels"]
    s2, s5 = labels["s2"], labels["s5"]
    h = t.history()
    assert set(h.branches) == {"main", "br1"}
    main_ids = [s.id for s in h.branch("main").snapshots]
    br1_ids = [s.id for s in h.branch("br1").snapshots]
    assert main_ids[:2] == br1_ids[:2] and main_ids[1] == s2 and len(br1_ids) == 3
    assert h.forks["br1"].snapshot_id == s2 and h.forks["br1"].tags == ("tag1",)
    rolled = {sid for sid, m in h.marks.items() if m == "rolled back"}
    assert s5 in rolled and len(rolled) == 2  # the rename's snapshot and its parent
    assert [sid for sid, _ in h.snapshot_log].count(s2) == 2  # current again after rollback
    # every field has the same lineage on both branches (Iceberg's schemas are the table's)
    across = lineage_across(h)
    assert across and not any(x.diverged for x in across)
    with pytest.raises(NotFoundError):
        h.branch("tag1")


def test_inspect_shows_refs(t20: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["inspect", str(t20), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["refs"]] == ["main", "br1", "tag1"]
    assert list(doc["branches"]) == ["br1"]
    assert len(doc["branches"]["br1"]["snapshots"]) == 3
    assert {"schemas", "snapshots", "lineage"} == set(doc["branches"]["br1"])
    assert cli.main(["inspect", str(t20)]) == 0
    text = capsys.readouterr().out
    assert "Refs:" in text and "  tag tag1: snapshot " in text
    assert "forked from main at snapshot" in text and "rolled back" in text
    assert sum("[branch br1]" in ln for ln in text.splitlines()) == 1
    assert cli.main(["inspect", str(t20), "--ref", "br1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["snapshots"]) == 3
    assert cli.main(["inspect", str(t20), "--ref", "tag1"]) == 0
    text = capsys.readouterr().out
    assert sum(ln.startswith("  snapshot ") and "live" in ln for ln in text.splitlines()) == 1
    assert cli.main(["inspect", str(t20), "--ref", "nope"]) != 0
    assert "has no branch or tag 'nope'" in capsys.readouterr().err


def test_tables_without_refs_have_main(tmp_path: Path) -> None:
    """Metadata without ``refs`` (v1, and v2 files that predate refs): ``main`` at the
    current snapshot; no snapshot at all: ``main`` without one."""
    fixtures = Path(__file__).parent / "fixtures" / "iceberg-metadata"
    v2 = sl.open_table(fixtures / "TableMetadataV2Valid.json")
    assert [(r.name, r.kind, r.snapshot_id, r.schema_id) for r in v2.refs] == [
        ("main", "branch", 3055729675574597004, v2.metadata.current_schema_id)]
    v1 = sl.open_table(fixtures / "TableMetadataV1Valid.json")
    assert [(r.name, r.snapshot_id) for r in v1.refs] == [("main", None)]
    assert v1.history().refs[0].name == "main"


def test_a_ref_to_a_missing_snapshot_is_refused(t20: Path, tmp_path: Path) -> None:
    t = sl.open_table(t20)
    doc = json.loads(Path(t.metadata_file).read_text())
    doc["refs"]["gone"] = {"snapshot-id": 1234, "type": "tag"}
    bad = tmp_path / "v99.metadata.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(CorruptFileError) as e:
        sl.open_table(bad)
    assert "ref 'gone' names snapshot 1234" in str(e.value) and e.value.rule == "corrupt-file"
