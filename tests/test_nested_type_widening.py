"""ALTER COLUMN c TYPE on a whole ARRAY / MAP type (issue 21, item 3).

Decided by Java Paimon 2.0 (release-2.0.0, as master): ``CastExecutors`` has no ARRAY→ARRAY
or MAP→MAP rule, so ``SchemaManager`` refuses the change given as one; Paimon's catalog ALTER
(``FlinkCatalog`` ``MODIFY``, CDC schema evolution) splits it first
(``NestedSchemaUtils.generateNestedColumnUpdates``) into one change per value inside —
``c.element``, ``c.value`` (a map key may not change) — each judged by ``SchemaManager``. So
``ALTER COLUMN c TYPE ARRAY<BIGINT>`` on ``ARRAY<INT>`` is accepted and gives the schema
``ALTER COLUMN c.element TYPE BIGINT`` gives; the read casts old files' elements and map
values as Java 2.0's ``CastedArray``/``CastedMap`` do (each element by its ``CastExecutors``
rule: a BIGINT narrowed to INT wraps). Before the fix schemalab refused it ("CastExecutors
has no cast").

Java Paimon 1.0 refuses the change (the nested paths came in 1.2) and cannot read a table
after it: "Only support column type evolution in atomic data type." (it reads the snapshots
written before, in their own schema).

Test hook for other oracles: :data:`NESTED_TYPE_CHANGES` is the case list; for an oracle that
reads evolved ARRAY/MAP columns (Java Paimon 2.x) parametrize
:func:`assert_oracle_reads_like_schemalab` over its accepted cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from oracles.compare import java_read, ours
from oracles.java_paimon import JavaPaimon, JavaPaimonError

import schemalab as sl
from schemalab.errors import SchemaChangeError

pytest_plugins = ["oracles.fixtures"]
pytestmark = pytest.mark.spark


@dataclass(frozen=True)
class NestedTypeChange:
    """``CREATE TABLE t (id INT, c <old>)``, a row ``(1, <before>)``, then
    ``ALTER TABLE t ALTER COLUMN c TYPE <new>``."""

    id: str
    old: str
    new: str
    before: str
    #: the old row's ``c`` read after the change (canonical form); None where refused
    read_before: Any = None
    #: the same change made per value: (path, type) for ``ALTER COLUMN <path> TYPE <type>``
    path_form: tuple[str, str] | None = None
    #: a row ``(2, <after>)`` written after the change, and how it reads
    after: str | None = None
    read_after: Any = None
    #: a regex of schemalab's (Paimon's) refusal; None where accepted
    refused: str | None = None


NESTED_TYPE_CHANGES = [
    NestedTypeChange("array-int-bigint", "ARRAY<INT>", "ARRAY<BIGINT>", "array(1, 2147483647)",
                     [1, 2147483647], ("c.element", "BIGINT"),
                     "array(5000000000, NULL)", [5000000000, None]),
    NestedTypeChange("map-value-int-bigint", "MAP<STRING, INT>", "MAP<STRING, BIGINT>",
                     "map('k', 2147483647)", {"map": [["k", 2147483647]]}, ("c.value", "BIGINT"),
                     "map('b', 5000000000)", {"map": [["b", 5000000000]]}),
    NestedTypeChange("map-of-arrays", "MAP<STRING, ARRAY<INT>>", "MAP<STRING, ARRAY<BIGINT>>",
                     "map('k', array(7, NULL))", {"map": [["k", [7, None]]]},
                     ("c.value.element", "BIGINT")),
    NestedTypeChange("array-of-arrays", "ARRAY<ARRAY<SMALLINT>>", "ARRAY<ARRAY<INT>>",
                     "array(array(1), NULL)", [[1], None], ("c.element.element", "INT")),
    # explicit casts, element by element as Java's CastExecutors casts a value
    NestedTypeChange("array-bigint-int-wraps", "ARRAY<BIGINT>", "ARRAY<INT>",
                     "array(5000000000, 3)", [705032704, 3], ("c.element", "INT")),
    NestedTypeChange("array-string-int-parses", "ARRAY<STRING>", "ARRAY<INT>",
                     "array('12', '1.5')", [12, 1], ("c.element", "INT")),
    # refused, with Paimon's messages
    NestedTypeChange("map-key", "MAP<STRING, INT>", "MAP<INT, INT>", "map('k', 1)",
                     refused=r"Cannot update key type of column c from STRING type to INT type"),
    NestedTypeChange("array-to-atomic", "ARRAY<INT>", "INT", "array(1)",
                     refused=r"Column c can only be updated to array type, and cannot be "
                             r"updated to INT type"),
    NestedTypeChange("element-without-cast", "ARRAY<INT>", "ARRAY<BINARY>", "array(1)",
                     refused=r"Column type c\[INT\] cannot be converted to BYTES without "
                             r"losing information"),
    NestedTypeChange("element-to-not-null", "ARRAY<INT>", "ARRAY<INT NOT NULL>", "array(1)",
                     refused=r"from nullable to non nullable for c\.element"),
]
ACCEPTED = [c for c in NESTED_TYPE_CHANGES if c.refused is None]


def _ids(cases: list[NestedTypeChange]) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in cases]


def schemalab_table(w: Path, spark: Any, case: NestedTypeChange, *,
                    whole: bool = True) -> sl.Warehouse:
    """The case's table written and altered by schemalab (``whole``: the change as one type;
    otherwise at ``path_form``), with the row after the change if the case has one."""
    wh = sl.Warehouse(w, spark=spark)
    wh.sql(f"CREATE TABLE t (id INT, c {case.old})")
    wh.sql(f"INSERT INTO t VALUES (1, {case.before})")
    if whole:
        wh.sql(f"ALTER TABLE t ALTER COLUMN c TYPE {case.new}")
    else:
        assert case.path_form is not None
        wh.sql(f"ALTER TABLE t ALTER COLUMN {case.path_form[0]} TYPE {case.path_form[1]}")
    if case.after is not None:
        wh.sql(f"INSERT INTO t VALUES (2, {case.after})")
    return wh


def expected_rows(case: NestedTypeChange) -> list[list[Any]]:
    rows = [[1, case.read_before]]
    return rows + ([[2, case.read_after]] if case.after is not None else [])


def assert_oracle_reads_like_schemalab(java: JavaPaimon, w: Path, spark: Any,
                                       case: NestedTypeChange) -> None:
    """The hook for an oracle that reads evolved ARRAY/MAP columns (Java Paimon 2.x): it
    reads schemalab's table equal to schemalab and to the case, at the latest snapshot and
    at the one written before the change."""
    schemalab_table(w, spark, case)
    assert java_read(java, w, "t")["rows"] == ours(w, "t", None, spark)["rows"] \
        == expected_rows(case)
    assert java_read(java, w, "t", 1) == ours(w, "t", 1, spark)


@pytest.mark.parametrize("case", _ids(ACCEPTED))
def test_whole_type_change_made_per_value(tmp_path: Path, spark: Any,
                                          case: NestedTypeChange) -> None:
    wh = schemalab_table(tmp_path / "whole", spark, case)
    by_path = schemalab_table(tmp_path / "path", spark, case, whole=False)
    assert wh.table("t").schema.fields == by_path.table("t").schema.fields
    assert ours(tmp_path / "whole", "t", None, spark)["rows"] == expected_rows(case)
    # the snapshot written before the change still reads in its own schema
    assert ours(tmp_path / "whole", "t", 1, spark)["columns"] == ["id", "c"]


@pytest.mark.parametrize("case", _ids([c for c in NESTED_TYPE_CHANGES if c.refused]))
def test_whole_type_change_refused(tmp_path: Path, spark: Any, case: NestedTypeChange) -> None:
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql(f"CREATE TABLE t (id INT, c {case.old})")
    with pytest.raises(SchemaChangeError, match=case.refused) as err:
        wh.sql(f"ALTER TABLE t ALTER COLUMN c TYPE {case.new}")
    assert err.value.rule in ("type-change", "nullable-to-not-null")
    assert err.value.column is not None and err.value.column.startswith("c")
    assert [s.id for s in wh.table("t").schemas] == [0]  # nothing committed


def test_explicit_element_change_refused_in_implicit_mode(tmp_path: Path, spark: Any) -> None:
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("CREATE TABLE t (id INT, c ARRAY<BIGINT>) TBLPROPERTIES ('cast.mode' = 'implicit')")
    with pytest.raises(SchemaChangeError, match=r"c\[BIGINT\] cannot be converted to INT.*"
                                                r"cast.mode = implicit"):
        wh.sql("ALTER TABLE t ALTER COLUMN c TYPE ARRAY<INT>")


@pytest.mark.parametrize("case", _ids(ACCEPTED))
def test_java_1_0_reads_only_the_snapshot_before(java_paimon: JavaPaimon, tmp_path: Path,
                                                 spark: Any, case: NestedTypeChange) -> None:
    """Java Paimon 1.0 cannot read an ARRAY/MAP whose values changed type (newer Paimon's
    CastedArray/CastedMap path): docs/compatibility.md §4. Should a 1.0 build read it, this
    fails and the docs need changing."""
    w = tmp_path / "wh"
    schemalab_table(w, spark, case)
    assert java_read(java_paimon, w, "t", 1) == ours(w, "t", 1, spark)
    with pytest.raises(JavaPaimonError,
                       match="Only support column type evolution in atomic data type"):
        java_read(java_paimon, w, "t")
