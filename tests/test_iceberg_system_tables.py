"""Iceberg's metadata tables (``t.snapshots``, ``t.files``, ...) from schemalab, against the
engines' own, on tables Java Iceberg 1.10.2 wrote (``fixtures/iceberg-java-1.10/``).

Oracles:

- **Java Iceberg 1.12.0's own metadata tables** (``MetadataTableUtils`` + the scan's
  ``DataTask`` rows, what Spark shows), recorded for all 38 tables by
  ``tests/oracles/record_iceberg_system_tables.py``: schemalab must equal them exactly,
  types with nullability and values, with no known difference.
- **Java Iceberg's Spark metadata tables, as the fixture recorded them** (Iceberg 1.10.2 on
  Spark 3.5): ``.snapshots`` (id, parent, operation, summary), ``.history`` (snapshot id,
  is_current_ancestor) and ``.files`` (content, path, format, records, spec id, partition)
  at every snapshot, ``.all_manifests`` (the manifests table of every snapshot).
- **pyiceberg 0.12's ``table.inspect``**, which mirrors the Spark tables' columns. Where
  pyiceberg departs from Java's ``SnapshotsTable``, ``BaseFilesTable``, ... (read in
  apache/iceberg), the column is listed in :data:`PYICEBERG_KNOWN` with the reason, and
  schemalab follows Java.

:func:`iceberg_system_oracle.compare_system_table` takes any :class:`OracleTable`, so a live
Java oracle can be pointed at the same comparison.

Run: ``.venv/bin/python -m pytest -q tests/test_iceberg_system_tables.py``
"""

from __future__ import annotations

import gzip
import json
import tarfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_value
from iceberg_system_oracle import (
    Known,
    OracleTable,
    compare_system_table,
    pyiceberg_oracle,
)

import schemalab as sl
from schemalab.iceberg.system_tables import (
    SYSTEM_TABLES,
    SystemTableData,
    partition_type,
    system_table_data,
)

FIXTURE = Path(__file__).parent / "fixtures" / "iceberg-java-1.10"
TARBALL = FIXTURE / "iceberg-java-1.10.2-tables.tar.gz"
EXPECTED = FIXTURE / "expected"

#: table kinds: schema evolution, partition evolution (5 specs), merge-on-read deletes,
#: branch + tag + rollback, v3 deletion vectors and row lineage, equality deletes, a v1
#: table whose partition source was dropped, a v1 → v2 upgrade, stats files
TABLES = ["t01_add_columns", "t08_partition_evolution", "t12_mor_delete_update_merge",
          "t20_branch_tag_rollback", "t14_v3_deletion_vectors", "t25_equality_deletes",
          "t16_v1_table", "t36_v1_upgraded_to_v2", "t41_table_and_partition_stats"]

_TS = "Java's TimestampType.withZone() is Spark's timestamp; pyiceberg uses a zone-less one"
_INT8 = "Java's content is an int (IntegerType); pyiceberg uses int8"
_V3 = "Java's DataFile has v3's row lineage and DV fields; pyiceberg 0.12 leaves them out"

#: where pyiceberg 0.12 differs from Java Iceberg's Spark metadata tables
PYICEBERG_KNOWN: dict[str, dict[str, Known]] = {
    "snapshots": {
        "committed_at": Known("type", _TS),
        "manifest_list": Known("type", "optional in Java (a v1 snapshot may list its "
                                       "manifests inline); required in pyiceberg"),
        "summary": Known("type", "Java's summary map has required values "
                                 "(MapType.ofRequired); pyiceberg's are nullable"),
    },
    "history": {"made_current_at": Known("type", _TS)},
    "metadata_log_entries": {"timestamp": Known("type", _TS)},
    "refs": {},
    "manifests": {
        "content": Known("type", _INT8),
        "partition_summaries": Known("type", "Java's list has required elements "
                                             "(ListType.ofRequired); pyiceberg's are nullable"),
    },
    "partitions": {
        "last_updated_at": Known("type", _TS),
        "spec_id": Known("values", "Java takes the spec of the newest file's snapshot, "
                                   "pyiceberg the first file's"),
        "partition": Known("values", "Java projects every file's partition onto the union "
                                     "of all specs by field id (PartitionUtil.coercePartition); "
                                     "pyiceberg fills it by name and keys partitions by name"),
    },
}
_FILES_KNOWN = {
    "content": Known("type", _INT8),
    "first_row_id": Known("missing", _V3),
    "referenced_data_file": Known("missing", _V3),
    "content_offset": Known("missing", _V3),
    "content_size_in_bytes": Known("missing", _V3),
    "readable_metrics": Known("type", "Java lists every primitive field, nested ones too, "
                                      "sorted by name (MetricsUtil.readableMetricsSchema); "
                                      "pyiceberg the top-level columns in schema order "
                                      "(compared field by field in "
                                      "test_readable_metrics_match_pyiceberg)",
                              values_differ=True),
    "partition": Known("values", "pyiceberg fills the partition by field name from each "
                                 "file's spec; Java projects it by field id"),
    "spec_id": Known("type", "optional in Java's DataFile (field 141); required in pyiceberg"),
    **{col: Known("type", "Java's maps and lists have required values and elements "
                          "(MapType.ofRequired, ListType.ofRequired); pyiceberg's are nullable")
       for col in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                   "lower_bounds", "upper_bounds", "split_offsets", "equality_ids")},
}
for _name in ("files", "data_files", "delete_files"):
    PYICEBERG_KNOWN[_name] = _FILES_KNOWN


def _null_bounds_as_java(summaries: Any) -> Any:
    """pyiceberg leaves a missing partition summary bound NULL; Java writes what
    ``Transform.toHumanString`` makes of NULL, the string ``"null"``."""
    if summaries is None:
        return None
    return [{"struct": [[k, "null" if v is None and k.endswith("_bound") else v]
                        for k, v in s["struct"]]} for s in summaries]


#: pyiceberg's spellings of values Java spells otherwise, rewritten before comparing
PYICEBERG_VALUES = {"partition_summaries": _null_bounds_as_java}


def pyiceberg_known(system: str, partitioned: bool) -> dict[str, Known]:
    """:data:`PYICEBERG_KNOWN` for one table: of an unpartitioned table Java leaves the
    ``partition`` column out (BaseFilesTable, PartitionsTable: and ``spec_id``), pyiceberg
    keeps an empty struct in the files tables."""
    known = dict(PYICEBERG_KNOWN[system])
    if not partitioned and system in ("files", "data_files", "delete_files"):
        known["partition"] = Known("extra", "Java drops the partition column of an "
                                            "unpartitioned table; pyiceberg keeps an empty struct")
    return known


@cache
def expected(name: str) -> dict[str, Any]:
    return json.loads((EXPECTED / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iceberg-java-1.10-system")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data")
    return root / "db"


@pytest.fixture(scope="module")
def open_table(db: Path, spark: Any) -> Callable[[str], Any]:
    return cache(lambda name: sl.open_table(db / name))


def _written_db(name: str) -> str:
    """The directory the table was written under (its metadata names files there)."""
    return str(Path(expected(name)["written_at"]).parent)


# ---- against pyiceberg ----------------------------------------------------------------------


#: tables whose files and partitions pyiceberg cannot build (nor Java's Spark: the fixture
#: recorded an error for t16's ``.files`` at every snapshot): a v1 table whose identity
#: partition source ``p`` was dropped
PYICEBERG_FAILS = {("t16_v1_table", s): "Could not find field with id: 3"
                   for s in ("files", "data_files", "delete_files", "partitions")}


@pytest.mark.parametrize("system", SYSTEM_TABLES)
@pytest.mark.parametrize("name", TABLES)
def test_matches_pyiceberg(name: str, system: str, open_table: Callable[[str], Any],
                           db: Path) -> None:
    t = open_table(name)
    fails = PYICEBERG_FAILS.get((name, system))
    if fails is not None:
        with pytest.raises(ValueError, match=fails):
            pyiceberg_oracle(t.metadata_file, system, remap_from=_written_db(name),
                             remap_to=str(db))
        # schemalab answers as Java means to: the union partition type without the field
        # whose source is gone (Partitioning.partitionType keeps "active" fields only)
        part = t.system_table(system).schema["partition"].dataType
        assert [f.name for f in part.fields] == ["id_bucket_2"]
        return
    oracle = pyiceberg_oracle(t.metadata_file, system, remap_from=_written_db(name),
                              remap_to=str(db))
    partitioned = bool(partition_type(t))
    problems = compare_system_table(t.system_table(system), oracle, table_dir=name,
                                    known=pyiceberg_known(system, partitioned),
                                    oracle_values=PYICEBERG_VALUES)
    assert not problems, f"{name}.{system}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", [n for n in TABLES if (n, "files") not in PYICEBERG_FAILS])
def test_readable_metrics_match_pyiceberg(name: str, open_table: Callable[[str], Any],
                                          db: Path) -> None:
    """``readable_metrics`` of every live file, for the top-level columns pyiceberg lists:
    sizes, counts and decoded bounds equal (schemalab also lists nested fields, as Java)."""
    t = open_table(name)
    oracle = pyiceberg_oracle(t.metadata_file, "files", remap_from=_written_db(name),
                              remap_to=str(db))
    theirs = {r[oracle.columns.index("file_path")]: r[oracle.columns.index("readable_metrics")]
              for r in oracle.rows}
    data = system_table_data(t, "files")
    rm_type = data.schema["readable_metrics"].dataType
    compared = 0
    for r in data.rows:
        ours = canonical_value(r[data.columns.index("readable_metrics")], rm_type)["struct"]
        for column, metrics in theirs[r[1]]["struct"]:
            assert [column, metrics] in ours, (r[1], column, metrics, dict(ours).get(column))
            compared += 1
    assert compared >= len(data.rows) * len(t.schema.fields)


# ---- against Java Iceberg 1.12.0's own metadata tables ----------------------------------------

JAVA_1_12 = FIXTURE / "system-tables-iceberg-1.12.0.json.gz"


@cache
def java_1_12() -> dict[str, Any]:
    """Java Iceberg 1.12.0's metadata tables of every fixture table, recorded by
    ``tests/oracles/record_iceberg_system_tables.py`` (schema JSON + canonical rows)."""
    return json.loads(gzip.decompress(JAVA_1_12.read_bytes()))


@pytest.mark.parametrize("system", SYSTEM_TABLES)
@pytest.mark.parametrize("name", sorted(p.stem for p in EXPECTED.glob("*.json")))
def test_matches_java_iceberg_1_12(name: str, system: str,
                                  open_table: Callable[[str], Any]) -> None:
    """Every column (Spark type and nullability as TypeToSparkType makes them) and every
    value of Java Iceberg 1.12.0's metadata table, for all 38 fixture tables, no known
    differences."""
    java = java_1_12()[f"{name}.{system}"]
    assert "error" not in java, java
    oracle = OracleTable.from_iceberg("Java Iceberg 1.12.0", java["schema"], java["rows"])
    t = open_table(name)
    problems = compare_system_table(system_table_data(t, system), oracle, table_dir=name)
    assert not problems, f"{name}.{system}:\n  " + "\n  ".join(problems)


# ---- against Java Iceberg 1.10.2's Spark tables, as the fixture recorded them ---------------

ALL_TABLES = sorted(p.stem for p in EXPECTED.glob("*.json"))


def _canon(data: SystemTableData, row: tuple[Any, ...], column: str) -> Any:
    field = data.schema[column]
    return canonical_value(row[data.columns.index(column)], field.dataType)


@pytest.mark.parametrize("name", ALL_TABLES)
def test_snapshots_and_history_match_java(name: str, open_table: Callable[[str], Any]) -> None:
    """``t.snapshots`` (id, parent, operation, summary) and ``t.history`` (snapshot id,
    is_current_ancestor, in log order) equal what Java Iceberg's Spark tables returned."""
    t, exp = open_table(name), expected(name)
    snaps = system_table_data(t, "snapshots")
    ours = sorted(([r[1], r[2], r[3], r[5]] for r in snaps.rows), key=lambda r: r[0])
    java = sorted(([s["id"], s["parent"], s["operation"], s["summary"]]
                   for s in exp["snapshots"]), key=lambda r: r[0])
    assert ours == java
    history = system_table_data(t, "history")
    assert [[r[1], r[3]] for r in history.rows] == exp["history"]


def _java_files(name: str) -> list[tuple[str, str]]:
    return [(name, sid) for sid, files in expected(name)["files"].items()
            if isinstance(files, list)]


@pytest.mark.parametrize(("name", "snapshot"),
                         [p for n in ALL_TABLES for p in _java_files(n)])
def test_files_match_java(name: str, snapshot: str, open_table: Callable[[str], Any]) -> None:
    """``t.files`` as of every snapshot: content, path, format, record count, spec id and
    the partition (projected onto all specs' fields) equal Java's ``.files``."""
    t = open_table(name)
    data = system_table_data(t, "files", int(snapshot))
    has_partition = "partition" in data.columns
    ours = sorted(json.dumps({
        "content": r[0], "path": t.relpath(r[1]), "format": r[2],
        "records": r[data.columns.index("record_count")], "spec_id": r[3],
        "partition": _canon(data, r, "partition") if has_partition else None},
        sort_keys=True) for r in data.rows)
    java = sorted(json.dumps(f, sort_keys=True) for f in expected(name)["files"][snapshot])
    assert ours == java


_MANIFEST_COLS = ["path", "content", "partition_spec_id", "added_snapshot_id",
                  *[f"{w}_{k}_files_count" for k in ("data", "delete")
                    for w in ("added", "existing", "deleted")]]


@pytest.mark.parametrize("name", ALL_TABLES)
def test_manifests_match_java(name: str, open_table: Callable[[str], Any]) -> None:
    """``t.manifests`` as of every snapshot equals that snapshot's rows of Java's
    ``.all_manifests`` (which is the manifests table of each snapshot)."""
    t = open_table(name)
    ours = []
    for snap in t.snapshots:
        data = system_table_data(t, "manifests", snap.snapshot_id)
        for r in data.rows:
            row = dict(zip(data.columns, r, strict=True))
            row["path"] = t.relpath(row["path"])
            ours.append(json.dumps({**{c: row[c] for c in _MANIFEST_COLS},
                                    "reference_snapshot_id": snap.snapshot_id},
                                   sort_keys=True))
    java = [json.dumps(m, sort_keys=True) for m in expected(name)["manifests"]]
    assert sorted(ours) == sorted(java)


# ---- names, time travel, empty tables, bad input --------------------------------------------


def test_names_as_the_engines_spell_them(open_table: Callable[[str], Any]) -> None:
    """``$snapshots`` (the ``t$snapshots`` spelling) and any case name the same table."""
    t = open_table("t20_branch_tag_rollback")
    want = system_table_data(t, "refs")
    for spelling in ("$refs", "REFS", " refs "):
        assert system_table_data(t, spelling).rows == want.rows
    assert sorted((r[0], r[1]) for r in want.rows) == [
        ("br1", "BRANCH"), ("main", "BRANCH"), ("tag1", "TAG")]


def test_unknown_system_table_is_refused(open_table: Callable[[str], Any]) -> None:
    t = open_table("t01_add_columns")
    with pytest.raises(sl.SchemaLabError) as e:
        t.system_table("snapshot")
    assert e.value.rule == "unknown-system-table"
    assert e.value.table == t.name
    for name in SYSTEM_TABLES:  # the message lists what exists
        assert name in str(e.value)
    with pytest.raises(sl.SchemaLabError, match="all_entries") as e:
        t.system_table("$all_entries")
    assert e.value.rule == "unknown-system-table"


def test_time_travel_only_where_the_table_has_a_snapshot(
        open_table: Callable[[str], Any]) -> None:
    t = open_table("t12_mor_delete_update_merge")
    first = t.snapshots[0].snapshot_id
    with pytest.raises(sl.SchemaLabError) as e:
        t.system_table("history", snapshot_id=first)
    assert e.value.rule == "system-table-time-travel"
    with pytest.raises(sl.SchemaLabError) as e:
        t.system_table("files", snapshot_id=12345)
    assert e.value.rule == "snapshot-must-exist"
    # the first snapshot had data files only; the first DELETE (merge-on-read) added
    # position deletes
    assert {r[0] for r in system_table_data(t, "files", first).rows} == {0}
    assert system_table_data(t, "delete_files", first).rows == []
    delete = next(int(sid) for sid, files in expected(t.name)["files"].items()
                  if any(f["content"] == 1 for f in files))
    assert {r[0] for r in system_table_data(t, "delete_files", delete).rows} == {1}
    assert {r[0] for r in system_table_data(t, "data_files", delete).rows} == {0}


def test_empty_table(open_table: Callable[[str], Any]) -> None:
    """A table without a snapshot: no rows but its metadata log; Java's columns all the
    same."""
    t = open_table("t34_empty_table")
    for name in SYSTEM_TABLES:
        rows = t.system_table(name).collect()
        assert (len(rows) > 0) == (name == "metadata_log_entries"), name
    assert partition_type(t) == []  # unpartitioned: Java leaves partition and spec_id out
    assert t.system_table("partitions").columns == [
        "record_count", "file_count", "total_data_file_size_in_bytes",
        "position_delete_record_count", "position_delete_file_count",
        "equality_delete_record_count", "equality_delete_file_count", "last_updated_at",
        "last_updated_snapshot_id"]
    assert "partition" not in t.system_table("files").columns


def test_v3_row_lineage_and_deletion_vectors(open_table: Callable[[str], Any]) -> None:
    """t14 (v3): data files get the first row ids Java's ManifestReader assigns, deletion
    vectors are position deletes in Puffin with their referenced file, offset and size."""
    t = open_table("t14_v3_deletion_vectors")
    snap = t.snapshots[1]  # after the first DELETE: one deletion vector
    data = system_table_data(t, "files", snap.snapshot_id)
    rows = [dict(zip(data.columns, r, strict=True)) for r in data.rows]
    dv = [r for r in rows if r["content"] == 1]
    assert len(dv) == 1 and dv[0]["file_format"] == "PUFFIN"
    assert dv[0]["referenced_data_file"] in {r["file_path"] for r in rows if r["content"] == 0}
    assert dv[0]["content_offset"] is not None and dv[0]["content_size_in_bytes"] > 0
    assert dv[0]["first_row_id"] is None
    firsts = sorted((r["first_row_id"], r["record_count"]) for r in rows if r["content"] == 0)
    assert firsts[0][0] == 0 and all(
        b[0] == a[0] + a[1] for a, b in zip(firsts, firsts[1:], strict=False)), firsts


def test_comparison_finds_a_difference(open_table: Callable[[str], Any]) -> None:
    """The comparison helper is not blind: an oracle that differs in one value, one type or
    has a known difference that is gone is reported."""
    t = open_table("t08_partition_evolution")
    df = t.system_table("partitions")
    good = OracleTable.from_spark("same", df.schema, [tuple(r) for r in df.collect()])
    assert compare_system_table(df, good, table_dir="t08_partition_evolution") == []
    bad_rows = [list(r) for r in good.rows]
    bad_rows[0][2] += 1  # record_count
    bad = OracleTable("altered", good.columns, good.types, good.fields, bad_rows)
    problems = compare_system_table(df, bad, table_dir="t08_partition_evolution")
    assert any(p.startswith("record_count:") for p in problems), problems
    retyped = OracleTable("retyped", good.columns, ["bigint", *good.types[1:]], None, good.rows)
    assert any(p.startswith("partition: type") for p in compare_system_table(
        df, retyped, table_dir="t08_partition_evolution"))
    gone = compare_system_table(df, good, table_dir="t08_partition_evolution",
                                known={"spec_id": Known("type", "no longer")})
    assert gone == ["spec_id: known type difference (no longer) is gone"]


def test_a_column_spark_cannot_hold_is_refused_by_name(db: Path, tmp_path: Path) -> None:
    """Iceberg's Spark integration cannot show a ``time`` column (TypeToSparkType: "Spark does
    not support time fields"), so ``files`` (whose readable_metrics has a bound of the
    column's type) is refused naming the table, the column and the feature; the tables
    without the column's values still work. No fixture table has one (Spark cannot write
    it): t01 is copied and a ``time`` column added to its current schema."""
    import shutil

    dst = tmp_path / "t01_with_time"
    shutil.copytree(db / "t01_add_columns", dst)
    meta = max((dst / "metadata").glob("v*.metadata.json"),
               key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(meta.read_text())
    current = next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])
    md["last-column-id"] += 1
    current["fields"].append({"id": md["last-column-id"], "name": "at", "required": False,
                              "type": "time"})
    meta.write_text(json.dumps(md))
    t = sl.open_table(dst)
    for name in ("files", "data_files", "delete_files"):
        with pytest.raises(sl.SchemaLabError, match="time") as e:
            system_table_data(t, name)
        assert e.value.rule == "unsupported-feature"
        assert (e.value.table, e.value.column) == (t.name, "at")
    assert len(system_table_data(t, "snapshots").rows) == len(t.snapshots)
    assert system_table_data(t, "partitions").rows
