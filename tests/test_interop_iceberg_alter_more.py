"""Java Iceberg 1.12 judges the rest of issue 24's ALTERs and transforms on tables schemalab
writes:

1. nested ``FIRST`` / ``AFTER`` and ``SET`` / ``DROP DEFAULT``: Java, given the same
   statements as ``UpdateSchema`` calls (``moveFirst``, ``moveAfter``,
   ``updateColumnDefault``, ``addColumn(.., default)``), writes the same schemas, field ids
   and defaults, and refuses what schemalab refuses with the same message;
2. Java's ``HadoopCatalog`` reads such a table at every snapshot equal to schemalab's read;
3. ``bucket`` / ``truncate`` of strings, binary and decimals and ``hours`` / ``days`` of both
   timestamp types: for every data file, the partition tuple in our manifest equals Java's
   ``PartitionKey`` of each row the file holds (the key Java's writers route a row by), and
   our partition directories are Java's ``partitionToPath``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.java_iceberg import JavaIceberg
from test_iceberg_bytes_transforms import PARTS, SINGLE, write_table
from test_iceberg_defaults_moves import DEFAULTS, MOVES, NESTED
from test_interop_iceberg_write import START, _facts, _java_start_schema
from test_interop_java_iceberg import comparable

import schemalab as sl
from schemalab.errors import SchemaLabError

pytestmark = pytest.mark.spark


#: START's partitioning, as Java is given it
PARTITIONING = [["bucket", "a", 8], ["day", "dt", None], ["truncate", "s.y", 4]]
#: (schemalab statement, Java's UpdateSchema calls for it), on START
MOVES_SAME = [
    ("ALTER TABLE t ALTER COLUMN s.y FIRST", [["first", "s.y"]]),
    ("ALTER TABLE t ALTER COLUMN s.y AFTER x", [["after", "s.y", "s.x"]]),
    ("ALTER TABLE t ADD COLUMN s.w INT FIRST", [["add", "s", "w", "int", None],
                                                ["first", "s.w"]]),
    ("ALTER TABLE t ADD COLUMN s.v STRING AFTER s.w", [["add", "s", "v", "string", None],
                                                       ["after", "s.v", "s.w"]]),
    ("ALTER TABLE t ALTER COLUMN s.x AFTER s.v", [["after", "s.x", "s.v"]]),
    ("ALTER TABLE t ALTER COLUMN m.k FIRST", [["first", "m.k"]]),
]
#: v3 only: write defaults
DEFAULTS_SAME = [
    ("ALTER TABLE t ALTER COLUMN f SET DEFAULT 1.5", [["default", "f", 1.5]]),
    ("ALTER TABLE t ALTER COLUMN s.y SET DEFAULT 'why'", [["default", "s.y", "why"]]),
    ("ALTER TABLE t ALTER COLUMN dt SET DEFAULT '2024-01-02'",
     [["default", "dt", "2024-01-02"]]),
    ("ALTER TABLE t ALTER COLUMN d SET DEFAULT 3.25", [["default", "d", "3.25"]]),
    ("ALTER TABLE t ADD COLUMN e BIGINT DEFAULT 7", [["add_default", None, "e", "long", 7]]),
    ("ALTER TABLE t ALTER COLUMN e SET DEFAULT 8", [["default", "e", 8]]),
    ("ALTER TABLE t ALTER COLUMN f DROP DEFAULT", [["default", "f", None]]),
    ("ALTER TABLE t ALTER COLUMN e SET DEFAULT 8", [["default", "e", 8]]),
]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_moves_and_defaults_the_same(version: int, tmp_path: Path,
                                          java_iceberg: JavaIceberg) -> None:
    same = MOVES_SAME + (DEFAULTS_SAME if version == 3 else [])
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql(START.format(v=version))
    for statement, _ in same:
        wh.sql(statement)
    theirs = java_iceberg.java_ddl(
        tmp_path / "java", "default.t", _java_start_schema(),
        partitioning=PARTITIONING, properties={"format-version": str(version)},
        statements=[ops for _, ops in same])
    assert theirs["errors"] == [None] * len(same)
    assert _facts(wh.table("t").metadata_file) == _facts(theirs["metadata_file"])


#: (statement, Java's calls, format version): both refuse, with Java's message
REFUSED = [
    ("ALTER TABLE t ALTER COLUMN s.x AFTER f", [["after", "s.x", "s.f"]], 2),
    ("ALTER TABLE t ALTER COLUMN s.x AFTER m.k", [["after", "s.x", "m.k"]], 2),
    ("ALTER TABLE t ALTER COLUMN s.x AFTER x", [["after", "s.x", "s.x"]], 2),
    ("ALTER TABLE t ALTER COLUMN s.q FIRST", [["first", "s.q"]], 2),
    ("ALTER TABLE t ALTER COLUMN f AFTER s.y", [["after", "f", "s.y"]], 2),
    ("ALTER TABLE t ADD COLUMN s.k INT AFTER m.k",
     [["add", "s", "k", "int", None], ["after", "s.k", "m.k"]], 2),
    ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 'zz'", [["default", "a", "zz"]], 3),
    ("ALTER TABLE t ALTER COLUMN nope SET DEFAULT 1", [["default", "nope", 1]], 3),
    ("ALTER TABLE t ADD COLUMN e INT DEFAULT 7", [["add_default", None, "e", "int", 7]], 2),
]


@pytest.mark.parametrize(("statement", "ops", "version"), REFUSED)
def test_java_refuses_the_same(statement: str, ops: list[Any], version: int, tmp_path: Path,
                               java_iceberg: JavaIceberg) -> None:
    theirs = java_iceberg.java_ddl(tmp_path / "java", "default.t", _java_start_schema(),
                           properties={"format-version": str(version)}, statements=[ops])
    error = theirs["errors"][0]
    assert error is not None, f"Java accepted {statement}"
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql(START.format(v=version))
    with pytest.raises(SchemaLabError) as e:
        wh.sql(statement)
    assert error in str(e.value)


def test_write_default_before_v3(tmp_path: Path, java_iceberg: JavaIceberg) -> None:
    """``updateColumnDefault`` on a v2 table: what Java does, schemalab does (a write
    default alone is not checked by Java's ``Schema.checkCompatibility``, which looks at
    initial defaults)."""
    theirs = java_iceberg.java_ddl(tmp_path / "java", "default.t", _java_start_schema(),
                           partitioning=PARTITIONING, properties={"format-version": "2"},
                           statements=[[["default", "a", 5]]])
    wh = sl.Warehouse(tmp_path / "ours", format="iceberg")
    wh.sql(START.format(v=2))
    if theirs["errors"][0] is None:
        wh.sql("ALTER TABLE t ALTER COLUMN a SET DEFAULT 5")
        assert _facts(wh.table("t").metadata_file) == _facts(theirs["metadata_file"])
    else:
        with pytest.raises(SchemaLabError) as e:
            wh.sql("ALTER TABLE t ALTER COLUMN a SET DEFAULT 5")
        assert theirs["errors"][0] in str(e.value)


def _java_reads_like_us(java_iceberg: JavaIceberg, warehouse: Path, t: Any) -> None:
    t.refresh()
    for snap in [None, *(s.snapshot_id for s in t.snapshots)]:
        theirs = java_iceberg.catalog_read(warehouse, "default.t", snap)
        columns, _, rows = canonical_frame(t.read(snapshot_id=snap))
        assert columns == theirs["columns"], snap
        assert comparable(rows) == comparable(theirs["rows"]), (
            f"{snap}\n ours: {rows}\n java: {theirs['rows']}")


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_moves_and_defaults(version: int, tmp_path: Path, spark: Any,
                                       java_iceberg: JavaIceberg) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(NESTED.format(v=version))
    wh.sql("INSERT INTO t VALUES (1, named_struct('x', 1, 'y', 'one', 'z', 10), "
           "named_struct('q', 5), map('k1', named_struct('k', 1, 'j', 2)), 'c1')")
    for statement, _ in MOVES:
        wh.sql(statement)
    wh.sql("INSERT INTO t (a, s, c) VALUES (2, named_struct('z', 20, 'w', 21, 'y', 'two', "
           "'x', 2, 'v', 7L), 'c2')")
    _java_reads_like_us(java_iceberg, tmp_path, wh.table("t"))
    if version == 3:
        other = tmp_path / "defaults"
        wh = sl.Warehouse(other, spark=spark, format="iceberg")
        wh.sql(DEFAULTS)
        _java_reads_like_us(java_iceberg, other, wh.table("t"))


def _our_dirs(t: Any) -> dict[str, str]:
    """Each data file's partition directory (under data/), by file name."""
    out = {}
    for f in t.data_files():
        rel = f.path.split("/data/", 1)[1]
        out[rel.rsplit("/", 1)[-1]] = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return out


def _assert_java_partitions(java_iceberg: JavaIceberg, warehouse: Path, t: Any) -> int:
    checked = java_iceberg.partition_check(warehouse, "default.t")
    dirs = _our_dirs(t)
    for path, f in checked.items():
        assert f["rows"], path
        assert set(f["rows"]) == {f["manifest"]}, (path, f)
        assert dirs[path.rsplit("/", 1)[-1]] == f["manifest"], path
    return len(checked)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_partition_keys_equal_our_manifests(version: int, tmp_path: Path, spark: Any,
                                                 java_iceberg: JavaIceberg) -> None:
    """All byte transforms at once (and hours/days of both timestamp types): every file's
    tuple is Java's PartitionKey of each of its rows; Java reads the table like us."""
    wh = write_table(tmp_path, spark, PARTS, version)
    t = wh.table("t")
    assert _assert_java_partitions(java_iceberg, tmp_path, t) == 6
    _java_reads_like_us(java_iceberg, tmp_path, t)


def test_java_partition_keys_each_transform(tmp_path: Path, spark: Any,
                                            java_iceberg: JavaIceberg) -> None:
    for i, parts in enumerate(SINGLE):
        wh = write_table(tmp_path / str(i), spark, parts)
        assert _assert_java_partitions(java_iceberg, tmp_path / str(i), wh.table("t")) >= 3, parts
