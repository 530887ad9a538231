"""Partition directory names as Java Paimon writes them, and tables that earlier schemalab
versions wrote under their own names (tests/fixtures/schemalab-legacy/).

The names themselves are checked against Java Paimon in test_interop_java_paimon.py
(``test_ours_partition_dir_names_are_javas``: our directories equal Java's for every
partition type); here they are pinned as text, with the rules Java's sources give.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tarfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from oracles.canonical import canonical_rows

import schemalab as sl
from schemalab.paimon.java_text import java_double, java_float, java_is_whitespace_only
from schemalab.paimon.orphans import find_orphans
from schemalab.paimon.paths import (
    PartitionNaming,
    escape_path_name,
    legacy_partition_path,
    partition_path,
)
from schemalab.types import parse_type

LEGACY = Path(__file__).parent / "fixtures" / "schemalab-legacy"


@pytest.mark.parametrize(("ptype", "value", "java", "cast_to_string"), [
    ("DATE", dt.date(2024, 1, 5), "19727", "2024-01-05"),
    ("DATE", dt.date(1969, 12, 31), "-1", "1969-12-31"),
    ("TIMESTAMP(3)", dt.datetime(2024, 1, 5, 10, 11, 12, 345000),
     "2024-01-05T10%3A11%3A12.345", "2024-01-05 10%3A11%3A12.345"),
    ("TIMESTAMP(3)", dt.datetime(2024, 1, 5), "2024-01-05T00%3A00",
     "2024-01-05 00%3A00%3A00.000"),
    ("TIMESTAMP(6)", dt.datetime(2024, 1, 5, 10, 11, 12, 345678),
     "2024-01-05T10%3A11%3A12.345678", "2024-01-05 10%3A11%3A12.345678"),
    ("TIMESTAMP(6)", dt.datetime(2024, 1, 5, 10, 11, 12), "2024-01-05T10%3A11%3A12",
     "2024-01-05 10%3A11%3A12.000000"),
    ("TIMESTAMP(0)", dt.datetime(2024, 1, 5, 10, 11), "2024-01-05T10%3A11",
     "2024-01-05 10%3A11%3A00"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE",
     dt.datetime(2024, 1, 5, 11, 11, 12, 345000, tzinfo=dt.timezone(dt.timedelta(hours=1))),
     "2024-01-05T10%3A11%3A12.345", "2024-01-05 10%3A11%3A12.345"),
    ("TIME(3)", dt.time(10, 11, 12, 345000), "36672345", "10%3A11%3A12.345"),
    ("FLOAT", 0.10000000149011612, "0.1", "0.1"),
    ("FLOAT", float("nan"), "NaN", "NaN"),
    ("DOUBLE", 1e20, "1.0E20", "1.0E20"),
    ("DOUBLE", -0.0, "-0.0", "-0.0"),
    ("DOUBLE", 1234567.0, "1234567.0", "1234567.0"),
    ("DOUBLE", 0.001, "0.001", "0.001"),
    ("DOUBLE", 0.0001, "1.0E-4", "1.0E-4"),
    ("DECIMAL(10, 2)", Decimal("12.3"), "12.30", "12.30"),
    ("DECIMAL(20, 2)", Decimal("-0.5"), "-0.50", "-0.50"),
    ("BOOLEAN", True, "true", "true"),
    ("BIGINT", 5000000000, "5000000000", "5000000000"),
    ("STRING", "a b/ü€", "a b%2Fü€", "a b%2Fü€"),
    ("STRING", "", "__DEFAULT_PARTITION__", "__DEFAULT_PARTITION__"),
    ("STRING", " \t\u2003", "__DEFAULT_PARTITION__", "__DEFAULT_PARTITION__"),
    ("STRING", "\u00a0", "\u00a0", "\u00a0"),  # a no-break space is no whitespace in Java
    ("INT", None, "__DEFAULT_PARTITION__", "__DEFAULT_PARTITION__"),
])
def test_partition_names_are_javas(ptype: str, value: Any, java: str,
                                   cast_to_string: str) -> None:
    t = parse_type(ptype)
    assert partition_path([("p", t, value)]) == f"p={java}"
    # partition.legacy-name = false (Paimon >= 1.0): the value cast to STRING
    assert partition_path([("p", t, value)], PartitionNaming(legacy_name=False)) \
        == f"p={cast_to_string}"


def test_partition_default_name_option() -> None:
    naming = PartitionNaming.of({"partition.default-name": "NONE"})
    assert partition_path([("p", parse_type("STRING"), "")], naming) == "p=NONE"
    assert PartitionNaming.of({"partition.legacy-name": "false"}).legacy_name is False
    assert PartitionNaming.of({}) == PartitionNaming()


def test_escaped_characters_are_javas() -> None:
    # PartitionPathUtils.CHAR_TO_ESCAPE: 0x00-0x1F, " # % ' * / : = ? \ 0x7F { } [ ] ^
    escaped = "".join(chr(c) for c in range(0x80) if escape_path_name(chr(c)) != chr(c))
    assert escaped == ("".join(chr(c) for c in range(0x20)) + "\"#%'*/:=?[\\]^{}\x7f")
    assert escape_path_name("a:b") == "a%3Ab" and escape_path_name("\n") == "%0A"


@pytest.mark.parametrize(("value", "text"), [
    (1.0, "1.0"), (0.1, "0.1"), (1e7, "1.0E7"), (9999999.0, "9999999.0"), (1.5e-5, "1.5E-5"),
    (-2.5e-300, "-2.5E-300"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
    (123456789012345.67, "1.2345678901234567E14"), (5e-324, "4.9E-324"),
])
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (1.100000023841858, "1.1"), (3.4028234663852886e38, "3.4028235E38"), (1e-3, "0.001"),
    (16777216.0, "1.6777216E7"), (-0.5, "-0.5"),
])
def test_java_float_to_string(value: float, text: str) -> None:
    assert java_float(value) == text


def test_java_whitespace() -> None:
    assert java_is_whitespace_only("") and java_is_whitespace_only("\x1c\u2028")
    assert not java_is_whitespace_only("\u2007") and not java_is_whitespace_only(" x")


def test_legacy_names_are_what_schemalab_wrote() -> None:
    names = {d.name for d in _tar_dirs()}
    items = [("dt", parse_type("DATE"), dt.date(2024, 1, 5)),
             ("s", parse_type("STRING"), "")]
    assert legacy_partition_path(items[:1]) == "dt=2024-01-05" and "dt=2024-01-05" in names
    assert legacy_partition_path(items[1:]) == "s=" and "s=" in names


def _tar_dirs() -> list[Path]:
    with tarfile.open(LEGACY / "schemalab-0.1-partition-names.tar.gz") as tar:
        return [Path(m.name) for m in tar.getmembers() if m.isdir()]


@pytest.fixture()
def legacy_wh(tmp_path: Path) -> Path:
    with tarfile.open(LEGACY / "schemalab-0.1-partition-names.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "wh"


def test_legacy_tables_read_at_every_snapshot(legacy_wh: Path, spark: Any) -> None:
    expected = json.loads((LEGACY / "expected.json").read_text())
    wh = sl.Warehouse(legacy_wh, spark=spark)
    for name, by_snapshot in expected.items():
        t = wh.table(name)
        assert [str(s.id) for s in t.snapshots] == list(by_snapshot)
        for sid, rows in by_snapshot.items():
            assert canonical_rows(t.read(snapshot_id=int(sid))) == rows, (name, sid)


def test_legacy_table_written_on(legacy_wh: Path, spark: Any) -> None:
    """New files go under Java's names, old ones stay where they are, in one partition; the
    history shows every file where it is and no file is taken for an orphan."""
    wh = sl.Warehouse(legacy_wh, spark=spark)
    before = canonical_rows(wh.table("blanks").read())
    wh.sql("INSERT INTO blanks VALUES (5, '', DATE '2024-01-05'), (6, 'x', DATE '2024-01-06')")
    t = wh.table("blanks")
    assert canonical_rows(t.read()) == sorted(
        [*before, [5, "", "DATE:2024-01-05"], [6, "x", "DATE:2024-01-06"]])
    table = legacy_wh / "default.db" / "blanks"
    assert (table / "s=" / "dt=2024-01-05").is_dir()  # the old file's directory
    # '' is __DEFAULT_PARTITION__ now, beside the legacy file of a NULL s (same directory)
    assert len(list((table / "s=__DEFAULT_PARTITION__" / "dt=19727" / "bucket-0").iterdir())) == 1
    assert (table / "s=__DEFAULT_PARTITION__" / "dt=2024-01-05").is_dir()
    assert len(list((table / "s=x" / "dt=19728" / "bucket-0").iterdir())) == 1
    history = t.history()
    files = [f for s in history.snapshots for f in history.tree(s.id).live_files]
    assert files and all((table / f.path).is_file() for f in files)
    orphans, referenced = find_orphans(str(table), older_than_seconds=0)
    assert orphans == [] and referenced > 0


def test_missing_file_is_reported_where_java_looks(legacy_wh: Path, spark: Any) -> None:
    """A file missing from both places is reported at Java's path, not the legacy one."""
    table = legacy_wh / "default.db" / "dates"
    shutil.rmtree(table / "dt=1969-12-31")
    with pytest.raises(sl.SchemaLabError, match="dt=-1/bucket-0"):
        sl.open_table(str(table), spark).read().collect()
