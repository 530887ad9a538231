"""Issue 25, the merge read's planning on the driver (``engine/merge/keyset.py``): a pair
bucket's base keys taken from the manifests where they are a dense range, and the keys read
of a data file kept (a data file never changes) — each read still equal to every version of
every key merged the plain way (``how="shuffle"``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.engine.merge import keyset
from schemalab.engine.merge.keyed_read import merge_input, merge_read, plans_of


def _rows(df: Any) -> dict[int, tuple[Any, ...]]:
    return {r[0]: tuple(r[1:]) for r in df.collect()}


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The data files whose keys :func:`keyset.key_values` reads from now on."""
    read: list[str] = []
    real = keyset.read_file

    def counted(f: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(f.path)
        return real(f, *args, **kwargs)

    monkeypatch.setattr(keyset, "read_file", counted)
    monkeypatch.setattr(keyset, "_CACHE", keyset._KeyCache(keyset.CACHED_KEYS))
    return read


@pytest.mark.parametrize(("base", "dense"), [
    ("(1, 'a1', 1), (2, 'a2', NULL), (3, NULL, 3), (4, 'a4', 4)", True),
    # keys 1, 2, 4, 5: four rows over five keys, so the base's keys are read (3 is not held)
    ("(1, 'a1', 1), (2, 'a2', NULL), (4, 'a4', 4), (5, NULL, 5)", False),
])
def test_a_dense_base_is_not_read_on_the_driver(spark: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, base: str,
                                                dense: bool) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql(f"""
        CREATE TABLE p (id BIGINT NOT NULL, a STRING, b INT, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO p VALUES {base};
        INSERT INTO p VALUES (2, NULL, 20), (3, 'x3', NULL), (9, 'x9', 9)""")
    t = wh.table("p")
    plan = t.read_plan()
    [p] = plans_of(plan, merge_input(plan).opts)
    assert p.strategy == "pair"
    assert (keyset.dense_keys(["id"], p.base, plan) is not None) is dense
    read = _counting_reads(monkeypatch)
    got = _rows(t.read())
    assert sorted(read) == sorted(f.path for f in (*p.rest, *(() if dense else p.base)))
    assert got == _rows(merge_read(plan, spark, how="shuffle"))
    # read again: every file's keys are kept, none is read twice
    read.clear()
    assert _rows(t.read()) == got and read == []


def test_a_dense_range_needs_one_integer_key_and_a_key_range_per_file(
        spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("""
        CREATE TABLE s (k STRING NOT NULL, v INT, PRIMARY KEY (k) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO s VALUES ('a', 1), ('b', 2);
        CREATE TABLE n (id INT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)
          TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'partial-update');
        INSERT INTO n VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)""")
    plan = wh.table("s").read_plan()
    assert keyset.dense_keys(["k"], list(plan.files), plan) is None
    plan = wh.table("n").read_plan()
    files = list(plan.files)
    # the two buckets' files together hold every key from 1 to 5
    assert keyset.dense_keys(["id"], files, plan) == keyset.KeyRange("id", 1, 5)
    assert len({f.bucket for f in files}) == 2
    unknown = [dataclasses.replace(files[0], key_range=None), *files[1:]]
    assert keyset.dense_keys(["id"], unknown, plan) is None


def test_the_key_cache_drops_the_least_recently_used_past_its_limit() -> None:
    import numpy as np

    cache = keyset._KeyCache(10)
    cache.put(("a",), np.arange(4, dtype=np.int64))
    cache.put(("b",), np.arange(4, dtype=np.int64))
    assert cache.get(("a",)) is not None  # a is now the most recently used
    cache.put(("c",), np.arange(4, dtype=np.int64))
    assert cache.get(("b",)) is None and cache.size == 8
    assert list(cache.get(("c",))) == [0, 1, 2, 3]  # type: ignore[arg-type]
    cache.put(("d",), np.arange(11, dtype=np.int64))  # more than the whole cache: not kept
    assert cache.get(("d",)) is None and cache.size == 8
    with pytest.raises(ValueError):  # kept keys are read-only: no caller changes them
        cache.get(("a",))[0] = 5  # type: ignore[index]
