"""Every table Java Iceberg 1.10.2 wrote, read at every snapshot, against Iceberg's own reads.

``fixtures/iceberg-java-1.10/`` holds 38 tables written by Spark 3.5 + Iceberg 1.10.2 and,
per table, ``expected/<name>.json``: the recipe, the ``.snapshots`` / ``.files`` metadata
tables and what ``SELECT * FROM t [VERSION AS OF id]`` returned for ``"current"`` and every
snapshot id (branches, rolled-back and staged snapshots included). See the fixture README
for the canonical value format, which ``iceberg_canonical`` reproduces from Spark rows.

For each read the table is opened with ``sl.open_table`` and read with ``t.read()`` (or
``t.read(snapshot_id=...)``); its columns, Spark ``simpleString()`` types and canonical rows
must equal Iceberg's. Following the README:

- a read that Iceberg's Spark reader could not do (t16) carries ``error`` and an ``oracle``
  (IcebergGenerics) with columns and rows and no types: compare with the oracle;
- a read with ``spec_consistent.rows`` (a struct whose old fields were all dropped) accepts
  either Iceberg's rows or those.

No type-string normalisation is needed: for every type these tables hold (primitives incl.
``timestamp_ntz``, decimals, nested structs/maps/arrays), Spark 4's ``simpleString()`` equals
Spark 3.5's.

What schemalab does not read yet is listed in :data:`XFAIL` (table → read label → reason);
each such read is ``xfail(strict=True)``, so an entry must be deleted once the feature lands.
A refusal must also *say* the expected thing (:data:`REFUSAL`), so a read that starts failing
for another reason is reported as a failure, not hidden behind the xfail.

One case no fixture table holds (a nested ``initial-default``) is built from t06 by editing its
metadata and checked against the spec's rule (:data:`SPEC_XFAIL`).

Run: ``.venv/bin/python -m pytest -q tests/test_iceberg_java_fixtures.py``
"""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame

import schemalab as sl

FIXTURE = Path(__file__).parent / "fixtures" / "iceberg-java-1.10"
TARBALL = FIXTURE / "iceberg-java-1.10.2-tables.tar.gz"
EXPECTED = FIXTURE / "expected"

# --------------------------------------------------------------------------------------------
# What schemalab cannot read yet. Each reason is a category of issue 12; the lead deletes
# entries as features land (a strict xfail that passes fails the run). Position, equality and
# v3 deletion-vector deletes, ORC and Avro data files, name mapping and format upgrades all
# read equal now: nothing is left.
# --------------------------------------------------------------------------------------------

#: reason → what schemalab's refusal (a SchemaLabError) must say today
REFUSAL: dict[str, str] = {}

#: reasons that are wrong answers (no error), not refusals; none today
WRONG_ANSWER: frozenset[str] = frozenset()

#: table → read label ("current", a snapshot id, or "history" for the metadata test) → reason
XFAIL: dict[str, dict[str, str]] = {}

#: cases the Java fixture does not hold, built from one of its tables by editing metadata and
#: checked against the spec's rule (not against Iceberg); name → reason. These are silently
#: wrong answers, not refusals.
SPEC_XFAIL: dict[str, str] = {}

# --------------------------------------------------------------------------------------------
# The expected answers
# --------------------------------------------------------------------------------------------


@cache
def expected(name: str) -> dict[str, Any]:
    return json.loads((EXPECTED / f"{name}.json").read_text())


TABLES = sorted(p.stem for p in EXPECTED.glob("*.json"))
READS = [(name, label) for name in TABLES for label in expected(name)["reads"]]


def _param(name: str, label: str) -> Any:
    reason = XFAIL.get(name, {}).get(label)
    marks = []
    if reason is not None:
        # A refusal must be a SchemaLabError, a known wrong answer an AssertionError (rows
        # differ); anything else fails the test.
        raises = sl.SchemaLabError if reason in REFUSAL else AssertionError
        marks.append(pytest.mark.xfail(strict=True, reason=reason, raises=raises))
    return pytest.param(name, label, marks=marks, id=f"{name}-{label}")


def _known(name: str, label: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; if it is refused and the read is in XFAIL, the refusal must say what
    the XFAIL reason expects (else an AssertionError, which the xfail does not cover)."""
    try:
        return action()
    except sl.SchemaLabError as e:
        reason = XFAIL.get(name, {}).get(label)
        pattern = REFUSAL.get(reason or "")
        if pattern is not None:
            assert re.search(pattern, str(e)), (
                f"{name} {label}: expected a refusal for {reason!r} matching {pattern!r}, "
                f"got: {e}")
        raise


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def java_iceberg_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball unpacked once: ``<root>/db/<name>/``. Read-only use."""
    root = tmp_path_factory.mktemp("iceberg-java-1.10")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data")
    return root / "db"


@pytest.fixture(scope="session")
def open_table(java_iceberg_tables: Path) -> Callable[[str], Any]:
    """``sl.open_table`` of an unpacked table, once per table (t19 has 44 snapshots)."""
    return cache(lambda name: sl.open_table(java_iceberg_tables / name))


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


def test_fixture_is_complete() -> None:
    """38 tables, each with Iceberg's reads; every XFAIL entry names a real read."""
    assert len(TABLES) == 38
    assert len(READS) == 195
    assert TARBALL.is_file()
    with tarfile.open(TARBALL) as tar:
        names = {m.name.split("/")[1] for m in tar.getmembers() if m.name.count("/") >= 1}
    assert names == set(TABLES)
    for name, labels in XFAIL.items():
        assert name in TABLES, name
        for label, reason in labels.items():
            assert label == "history" or label in expected(name)["reads"], (name, label)
            assert reason in REFUSAL or reason in WRONG_ANSWER, reason


@pytest.mark.parametrize(("name", "label"), [_param(n, lab) for n, lab in READS])
def test_read_matches_iceberg(name: str, label: str, open_table: Callable[[str], Any],
                              spark: Any) -> None:
    exp = expected(name)["reads"][label]
    snapshot_id = None if label == "current" else int(label)

    def read() -> tuple[list[str], list[str], list[str]]:
        t = open_table(name)
        return canonical_frame(t.read(snapshot_id=snapshot_id))

    columns, types, rows = _known(name, label, read)
    if exp.get("error"):
        # Iceberg's Spark reader failed here (t16); IcebergGenerics' answer has no types
        assert "rows" not in exp and exp["oracle"]["error"] is None
        want = exp["oracle"]
        assert columns == want["columns"]
        assert rows == want["rows"]
        return
    assert columns == exp["columns"]
    assert types == exp["types"]
    accepted = [exp["rows"]]
    if "spec_consistent" in exp:
        accepted.append(exp["spec_consistent"]["rows"])
    assert rows in accepted, (
        f"{name} {label}: rows differ\n ours:    {rows}\n iceberg: {exp['rows']}"
        + (f"\n spec:    {exp['spec_consistent']['rows']}" if "spec_consistent" in exp else ""))


def _live_files(tree: Any) -> list[tuple[int, str, int]]:
    """(content, path, records) of every live file (data and delete) of a snapshot tree."""
    content = {"position deletes": 1, "deletion vector": 1, "equality deletes": 2}
    out = []
    for ml in tree.lists:
        for m in ml.manifests:
            for f in m.files:
                status, _, kind = f.kind.partition(" ")
                if status != "DELETED":
                    out.append((content.get(kind, 0), f.path, f.row_count))
    return sorted(out)


@pytest.mark.parametrize(("name", "label"), [_param(n, "history") for n in TABLES])
def test_snapshots_and_history_match_iceberg(name: str, label: str,
                                             open_table: Callable[[str], Any]) -> None:
    """Snapshot ids, parents, operations (``t.snapshots`` and ``t.history()``) and each
    snapshot's live files equal Iceberg's ``.snapshots`` and ``.files`` tables."""
    exp = expected(name)
    want = {s["id"]: (s["parent"], s["operation"]) for s in exp["snapshots"]}

    t = _known(name, label, lambda: open_table(name))
    assert {s.snapshot_id: (s.parent_id, s.operation) for s in t.snapshots} == want
    h = t.history()
    assert {s.id: (s.parent_id, s.kind) for s in h.snapshots} == want
    assert h.format == "iceberg"
    json.dumps(h.to_json())  # every snapshot's tree loads and serialises
    for sid, files in exp["files"].items():
        if not isinstance(files, list):
            continue  # Iceberg's own .files table failed for this snapshot (t16)
        want_files = sorted((f["content"], f["path"], f["records"]) for f in files)
        assert _live_files(h.tree(int(sid))) == want_files, sid
    # the `main` ref; an empty table's metadata says current-snapshot-id -1 (t34)
    main = [s.id for s in h.snapshots if "main" in s.summary.get("refs", "").split(", ")]
    cid = exp["current_snapshot_id"]
    assert main == ([] if cid in (None, -1) else [cid])


def test_nested_initial_default_spec(java_iceberg_tables: Path, tmp_path: Path,
                                     spark: Any) -> None:
    """A v3 ``initial-default`` on a *nested* field fills it for rows written before it was
    added (spec, "Default values"; "Column Projection"). No Java fixture table has one, so
    t06 (``s struct<x, y>``, then ``s.z`` added, ``s.x``/``s.y`` dropped, then rows with
    ``z``) is copied and its metadata edited: format v3 and ``s.z`` with
    ``initial-default``/``write-default`` 7. Row 1 was written with a non-null ``s`` before
    ``z`` existed, so it reads ``{z: 7}`` (schemalab read ``{z: NULL}``, silently, until
    Iceberg reads planned into the one engine, whose evolve applies nested defaults)."""
    import shutil

    src = java_iceberg_tables / "t06_struct_all_old_fields_dropped"
    dst = tmp_path / "nested_default"
    shutil.copytree(src, dst)
    meta = max((dst / "metadata").glob("v*.metadata.json"),
               key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(meta.read_text())
    md["format-version"] = 3
    next_row = 0
    for snap in md["snapshots"]:
        added = int(snap["summary"].get("added-records", 0))
        snap["first-row-id"], snap["added-rows"] = next_row, added
        next_row += added
    md["next-row-id"] = next_row
    current = next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])
    (z,) = next(f for f in current["fields"] if f["name"] == "s")["type"]["fields"]
    assert z["name"] == "z"
    z["initial-default"] = z["write-default"] = 7
    meta.write_text(json.dumps(md))

    _, _, rows = canonical_frame(sl.open_table(dst).read())
    assert rows == ['[1, {"struct": [["z", 7]]}]', "[2, null]", '[3, {"struct": [["z", 3]]}]',
                    "[4, null]"]


def test_canonicaliser_doctests() -> None:
    import doctest

    import iceberg_canonical

    assert doctest.testmod(iceberg_canonical).failed == 0
