"""Partial-update and aggregation merged by Spark's built-in aggregates
(``engine/merge/grouped.py``): where no version retracts and the versions merge in sequence
order, each field's aggregate must give exactly what folding the key's versions oldest
first gives — NULLs kept or passed over as the function says, a key updated in three files,
keys written once — and every other case must still fold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.engine.merge.aggregation import aggregation_fold
from schemalab.engine.merge.function import fold_merge
from schemalab.engine.merge.keyed_read import (
    _kept,
    merge_input,
    merge_read,
    merged,
    plans_of,
)
from schemalab.engine.merge.partial_update import partial_update_fold
from schemalab.engine.merge.records import versions

pytestmark = pytest.mark.spark

# three commits sharing keys: key 1 in all three, 2 in the first two, 3 and 4 once each
_COMMITS = """
    INSERT INTO t VALUES (1, 'a1', 10, 1.0), (2, NULL, 20, NULL), (3, 'a3', NULL, 3.0);
    INSERT INTO t VALUES (1, NULL, 11, NULL), (2, 'b2', NULL, 2.5), (4, NULL, NULL, NULL);
    INSERT INTO t VALUES (1, 'c1', NULL, 0.5)"""


def _table(wh: sl.Warehouse, engine: str, options: str = "") -> Any:
    wh.sql(f"CREATE TABLE t (id INT NOT NULL, v STRING, n INT, d DOUBLE, "
           f"PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '1', "
           f"'merge-engine' = '{engine}'{options});" + _COMMITS)
    return wh.table("t")


def _rows(df: Any) -> dict[int, tuple[Any, ...]]:
    return {r[0]: tuple(r[1:]) for r in df.collect()}


def _folded(plan: Any, spark: Any, system: bool = False) -> dict[int, tuple[Any, ...]]:
    """Every version of every key folded the array way (the oracle); ``system``: with the
    result's sequence number and row kind (which a compaction writes)."""
    m = merge_input(plan)
    fold = partial_update_fold(m) if m.opts.engine == "partial-update" else aggregation_fold(m)
    df = _kept(fold_merge(versions(plan, spark), m, fold))
    return _rows(df if system else df.select(*m.names))


@pytest.mark.parametrize(("engine", "options", "expected"), [
    ("partial-update", "", {1: ("c1", 11, 0.5), 2: ("b2", 20, 2.5), 3: ("a3", None, 3.0),
                            4: (None, None, None)}),
    ("aggregation", "", {1: ("c1", 11, 0.5), 2: ("b2", 20, 2.5), 3: ("a3", None, 3.0),
                         4: (None, None, None)}),
    ("aggregation", ", 'fields.v.aggregate-function' = 'last_value', "
                    "'fields.n.aggregate-function' = 'first_value', "
                    "'fields.d.aggregate-function' = 'first_non_null_value'",
     {1: ("c1", 10, 1.0), 2: ("b2", 20, 2.5), 3: ("a3", None, 3.0), 4: (None, None, None)}),
    ("aggregation", ", 'fields.v.aggregate-function' = 'max', "
                    "'fields.n.aggregate-function' = 'min', "
                    "'fields.d.aggregate-function' = 'max'",
     {1: ("c1", 10, 1.0), 2: ("b2", 20, 2.5), 3: ("a3", None, 3.0), 4: (None, None, None)}),
])
def test_built_in_aggregates_merge_as_the_fold(spark: Any, tmp_path: Path, engine: str,
                                               options: str, expected: dict[int, Any]) -> None:
    t = _table(sl.Warehouse(tmp_path, spark=spark), engine, options)
    plan = t.read_plan()
    m = merge_input(plan)
    assert m.inserts_only
    # every file shares key 1 with the others: no base, every row merged
    assert [p.strategy for p in plans_of(plan, m.opts)] == ["full"]
    df = t.read()
    text = df._jdf.queryExecution().executedPlan().toString()
    assert "collect_list" not in text and "array_sort" not in text, text
    assert _rows(df) == expected
    assert _rows(merge_read(plan, spark, how="shuffle")) == expected
    assert _folded(plan, spark) == expected
    # the result's sequence number and row kind too (a compaction writes them)
    assert _rows(merged(plan, spark)) == _folded(plan, spark, system=True)


@pytest.mark.parametrize(("engine", "options", "change"), [
    ("partial-update", ", 'partial-update.remove-record-on-delete' = 'true'",
     "DELETE FROM t WHERE id = 2"),                          # a -D version
    ("aggregation", ", 'fields.n.aggregate-function' = 'sum'", ""),   # order-dependent
    ("partial-update", ", 'sequence.field' = 'n'", ""),      # not in sequence number order
])
def test_retractions_and_other_functions_still_fold(spark: Any, tmp_path: Path, engine: str,
                                                    options: str, change: str) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    _table(wh, engine, options)
    if change:
        wh.sql(change)
    t = wh.table("t")
    plan = t.read_plan()
    df = t.read()
    text = df._jdf.queryExecution().executedPlan().toString()
    assert "array_sort" in text or "collect_list" in text, text
    assert _rows(df) == _folded(plan, spark)
