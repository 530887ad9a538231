"""No repeated I/O (issue 20), counted on the real files: ``fileio.read_bytes`` and
``fileio.list_names`` are wrapped with counters (every manifest, schema and snapshot read
and every directory listing goes through them), nothing is mocked.

A table object reads each manifest list and manifest once; it lists its schema directory
once per public call (a statement of the warehouse's own uses the listing that found the
table), sees its own commits without listing, and other writers' schemas from its next
public call; ``Warehouse.run_query`` opens each table it reads once.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab import fileio
from schemalab.schema import AddColumn
from schemalab.types import INT


class IO:
    def __init__(self) -> None:
        self.reads: Counter[str] = Counter()
        self.listings: Counter[str] = Counter()

    def clear(self) -> None:
        self.reads.clear()
        self.listings.clear()

    def manifests(self) -> Counter[str]:
        """Reads of manifest lists and manifests."""
        return Counter({p: n for p, n in self.reads.items() if "/manifest/" in p})


@pytest.fixture()
def io(monkeypatch: pytest.MonkeyPatch) -> IO:
    counts = IO()
    read, list_names = fileio.read_bytes, fileio.list_names

    def counted_read(path: str) -> bytes:
        counts.reads[path] += 1
        return read(path)

    def counted_list(directory: str) -> list[str]:
        counts.listings[directory] += 1
        return list_names(directory)

    monkeypatch.setattr(fileio, "read_bytes", counted_read)
    monkeypatch.setattr(fileio, "list_names", counted_list)
    return counts


@pytest.fixture()
def wh(spark: Any, tmp_path: Path) -> sl.Warehouse:
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("""CREATE TABLE T (id INT, name STRING) PARTITIONED BY (name);
              INSERT INTO T VALUES (1, 'a'), (2, 'b');
              ALTER TABLE T ADD COLUMN qty INT;
              INSERT INTO T VALUES (3, 'a', 30);
              INSERT INTO T VALUES (4, 'c', 40)""")
    return wh


def test_explain_read_reads_each_manifest_once(wh: sl.Warehouse, io: IO) -> None:
    t = wh.table("T")
    io.clear()
    t.explain_read()
    first = io.manifests()
    # the latest snapshot's base and delta lists, and the manifests they name
    assert len(first) >= 4 and set(first.values()) == {1}, first
    io.clear()
    t.explain_read()
    t.read_plan()
    t.history().tree(3)
    assert not io.manifests(), "read again by the same table object"


def test_compact_reads_each_manifest_once(wh: sl.Warehouse, io: IO) -> None:
    t = wh.table("T")
    io.clear()
    result = t.compact()
    assert result.snapshot is not None
    manifests = Counter({p: n for p, n in io.manifests().items()
                         if not os.path.basename(p).startswith("manifest-list-")})
    assert len(manifests) >= 3 and set(manifests.values()) == {1}, manifests


def test_inserts_reuse_the_manifests_their_table_object_read(wh: sl.Warehouse, io: IO) -> None:
    # INSERT OVERWRITE lists the live files it replaces; a primary-key INSERT the highest
    # sequence number per bucket and (at the commit) the files another writer added since:
    # the manifests the table object has read are not read again.
    t = wh.table("T")
    t.read_plan()
    io.clear()
    t.insert([(5, "a", 50)], overwrite=True)
    assert not io.manifests(), "the overwrite read manifests its table object had read"
    wh.sql("CREATE TABLE K (id INT, v INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2');"
           "INSERT INTO K VALUES (1, 1), (2, 2)")
    k = wh.table("K")
    k.read_plan()
    io.clear()
    k.insert([(1, 10)])
    k.insert([(2, 20)])
    twice = {p: n for p, n in io.manifests().items() if n > 1}
    assert not twice, twice
    assert sorted(tuple(r) for r in k.read().collect()) == [(1, 10), (2, 20)]


def test_schema_directory_listed_once_per_public_call(wh: sl.Warehouse, io: IO) -> None:
    schema_dir = os.path.join(wh.table_path("T"), "schema")
    io.clear()
    t = wh.table("T")
    assert io.listings[schema_dir] == 1
    # the first call lists again: an ALTER may have come between opening and using it
    t.read_plan()
    assert io.listings[schema_dir] == 2
    t.explain_read()
    assert io.listings[schema_dir] == 3
    assert t.schema.id == 1 and io.listings[schema_dir] == 4
    assert [s.id for s in t.schemas] == [0, 1] and io.listings[schema_dir] == 5
    # another writer's schema shows from the next public call on
    sl.open_table(t.path).alter(AddColumn(("other",), INT()))
    assert t.schema.id == 2
    # an ALTER lists once (its commit adds its own schema to the listing), and reads no
    # schema file this object read before
    io.clear()
    new = t.alter(AddColumn(("mine",), INT()))
    assert new.id == 3 and io.listings[schema_dir] == 1
    assert t.schema.id == 3 and io.listings[schema_dir] == 2
    assert not [p for p in io.reads if "/schema/" in p]


def test_a_table_opened_before_an_alter_reads_the_new_schema(wh: sl.Warehouse) -> None:
    """Found by notebook 03: a table object opened, then an ALTER through SQL (another table
    object), then the first call of the first object: it must see the new schema."""
    t = wh.table("T")
    wh.sql("ALTER TABLE T ADD COLUMN late INT")
    assert "late" in t.read_plan().target.field_names


def test_run_query_opens_each_table_once(wh: sl.Warehouse, io: IO) -> None:
    schema_dir = os.path.join(wh.table_path("T"), "schema")
    io.clear()
    rows = wh.sql("SELECT id FROM T WHERE qty IS NULL ORDER BY id").collect()
    assert [r.id for r in rows] == [1, 2]
    assert io.listings[schema_dir] == 1
    assert set(Counter(p for p in io.reads.elements() if "/schema/" in p).values()) == {1}
