"""The merge read's ``superseded`` buckets (``engine/merge/superseded.py``): files overlapping
in many runs, read with each row whose key a newer (deduplicate) or older (first-row) run
holds dropped as deletion vectors drop rows — equal to every version of every key merged the
plain way (``how="shuffle"``) and to the rows written, with no exchange, sort, join or
aggregate in the plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import schemalab as sl
from schemalab.engine.merge import superseded as sup
from schemalab.engine.merge.keyed_read import merge_input, merge_read, plans_of
from schemalab.engine.merge.runs import bucket_plans, limit_broadcast, ordered_runs, supersede
from schemalab.engine.plan import DataFile, PositionDeletes, ReadPlan

# keys at 64-bit word edges and either side of zero, spread over two buckets
KEYS = [-129, -128, -65, -64, -63, -1, 0, 1, 62, 63, 64, 65, 127, 128, 129, 1000, 4097]


def _reference(commits: list[dict[int, tuple[Any, ...]]], engine: str
               ) -> dict[int, tuple[Any, ...]]:
    out: dict[int, tuple[Any, ...]] = {}
    for rows in commits:
        for k, v in rows.items():
            if engine == "deduplicate" or k not in out:
                out[k] = v
    return out


def _write(wh: Any, name: str, key_type: str = "BIGINT", keys: list[int] = KEYS,
           options: str = "", *, nulls: bool = True, add_column: bool = False
           ) -> list[dict[int, tuple[Any, ...]]]:
    """Five commits, each over most of ``keys`` (so every file overlaps every other), a
    RENAME and an INT -> BIGINT widening after the second, NULLs among the values (none
    without ``nulls``); ``add_column``: a column ``x`` added after the third, so the older
    files hold NULLs for it, and set in the later commits. The rows each commit wrote, by
    key, as the final schema reads them (``x`` left out)."""
    wh.sql(f"CREATE TABLE {name} (k {key_type} NOT NULL, v STRING, n INT, "
           f"PRIMARY KEY (k) NOT ENFORCED) TBLPROPERTIES ('bucket' = '2'{options})")
    commits = []
    for c in range(5):
        rows = {k: (None if nulls and (i + c) % 4 == 0 else f"c{c}k{k}",
                    None if nulls and (i + c) % 5 == 0 else c * 100_000 + i)
                for i, k in enumerate(keys) if (i + c) % 3 != 0}
        x = ", 'x'" if add_column and c >= 3 else ""
        values = ", ".join(f"({k}, {'NULL' if v is None else repr(v)}, "
                           f"{'NULL' if n is None else n}{x})" for k, (v, n) in rows.items())
        wh.sql(f"INSERT INTO {name} VALUES {values}")
        commits.append(rows)
        if c == 1:
            wh.sql(f"ALTER TABLE {name} RENAME COLUMN v TO w; "
                   f"ALTER TABLE {name} ALTER COLUMN n TYPE BIGINT")
        if c == 2 and add_column:
            wh.sql(f"ALTER TABLE {name} ADD COLUMN x STRING")
    return commits


def _as(plan: ReadPlan, engine: str) -> ReadPlan:
    """The plan read by ``engine`` (a first-row table's batch read takes its compacted files
    only, so overlapping level-0 files of a first-row read are a deduplicate table's, read
    as first-row — what its compaction merges)."""
    assert plan.merge is not None
    return dataclasses.replace(plan, merge=dataclasses.replace(plan.merge, engine=engine))


def _sorted(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _expected(ref: dict[int, tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(((k, *v) for k, v in ref.items()), key=repr)


def _assert_merged_without_exchange(df: Any) -> None:
    text = df._jdf.queryExecution().executedPlan().toString()
    for node in ("Exchange", "Sort", "Join", "Aggregate", "Window"):
        assert node not in text, text


@pytest.mark.parametrize("engine", ["deduplicate", "first-row"])
def test_overlapping_runs_read_each_key_s_winning_version_only(spark: Any, tmp_path: Path,
                                                               engine: str,
                                                               tested_by: str) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    commits = _write(wh, "t")
    plan = _as(wh.table("t").read_plan(), engine)
    assert {p.strategy for p in plans_of(plan, merge_input(plan).opts)} == {"superseded"}
    df = merge_read(plan, spark)
    assert df.columns == ["k", "w", "n"] and dict(df.dtypes)["n"] == "bigint"
    _assert_merged_without_exchange(df)
    # the JVM's filter finds each row's file itself and tests its key: no file size or row
    # position read
    text = df._jdf.queryExecution().executedPlan().toString()
    assert ("file_size" in text) == (tested_by == "expressions"), text
    assert ("_tmp_metadata_row_index" in text) == (tested_by == "expressions"), text
    got = _sorted(df)
    # a superseded row that leaked would be a second row of its key
    assert len({r[0] for r in got}) == len(got)
    assert got == _expected(_reference(commits, engine))
    assert got == _sorted(merge_read(plan, spark, how="shuffle"))
    # a query of two columns reads no other (the walk needs no column of the rows)
    narrow = merge_read(plan, spark).select("k", "n")
    assert sorted(narrow.collect()) == sorted(merge_read(plan, spark, how="shuffle")
                                              .select("k", "n").collect())
    if engine == "deduplicate":
        assert _sorted(wh.table("t").read()) == got


def test_deletion_vectors_beside_superseded_rows(spark: Any, tmp_path: Path,
                                                 tested_by: str) -> None:
    """A row a deletion vector deletes is no version: it supersedes nothing (the older
    version of its key is read), and a deleted row that a newer one supersedes anyway is
    dropped once."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    commits = _write(wh, "t")
    plan = wh.table("t").read_plan()
    files = sorted(plan.files, key=lambda f: (f.bucket, f.max_sequence_number))
    newest = {f.bucket: f for f in files}  # each bucket's newest file
    dv: dict[str, list[int]] = {}
    for f in files:  # the first two and the last row of each file (keys are sorted)
        dv[f.path] = sorted({0, 1, f.row_count - 1})
    deleted = plan.map_files(lambda f: dataclasses.replace(f, deletes=(PositionDeletes(
        "deletion vector", f.path + ".dv", len(dv[f.path]),
        load=lambda p=dv[f.path]: np.array(p, np.int64)),)))
    for engine in ("deduplicate", "first-row"):
        p = _as(deleted, engine)
        assert {b.strategy for b in plans_of(p, merge_input(p).opts)} == {"superseded"}
        df = merge_read(p, spark)
        _assert_merged_without_exchange(df)
        # by key, a deleted row is no version: the scan needs no row position for it
        text = df._jdf.queryExecution().executedPlan().toString()
        assert ("_tmp_metadata_row_index" in text) == (tested_by == "expressions"), text
        got = _sorted(df)
        assert len({r[0] for r in got}) == len(got)
        assert got == _sorted(merge_read(p, spark, how="shuffle")), engine
    # the rows the vectors delete: gone from the newest file, so an older version is read
    keys = {k for f in newest.values() for k in _keys_of(plan, f, dv[f.path])}
    older = _reference(commits[:-1], "deduplicate")
    merged = {r[0]: r[1:] for r in _sorted(merge_read(deleted, spark))}
    for k in keys:
        if k in older and not any(k in _keys_of(plan, f, dv[f.path]) for f in files
                                  if f.path != newest[f.bucket].path):
            assert merged.get(k) != _reference(commits, "deduplicate")[k], k


def _keys_of(plan: ReadPlan, f: DataFile, positions: list[int]) -> set[int]:
    from schemalab.engine.merge.keyset import key_values

    values = key_values(["k"], [dataclasses.replace(f, deletes=())], plan)
    assert values is not None
    return {int(values[p]) for p in positions}


def test_keys_too_wide_for_a_seen_array_are_sorted(spark: Any, tmp_path: Path,
                                                   monkeypatch: Any) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    wide = [-2**62, -5, 0, 64, 2**40, 2**62]
    commits = _write(wh, "t", keys=wide)
    plan = wh.table("t").read_plan()
    calls: list[int] = []
    walk = sup._sorted_walk
    monkeypatch.setattr(sup, "_sorted_walk", lambda *a: calls.append(1) or walk(*a))
    df = merge_read(plan, spark)
    assert calls  # the span is 2**63 wide: sorted
    _assert_merged_without_exchange(df)
    assert _sorted(df) == _expected(_reference(commits, "deduplicate"))


def test_partitioned_tables_walk_each_bucket_by_its_own_key(
        spark: Any, tmp_path: Path, tested_by: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both partitions hold keys 0-11: by key, their buckets' winning runs are two arrays
    (domains), each bucket's rows tested against its own."""
    domains: list[int] = []
    winning_runs = sup._winning_runs

    def counted(*a: Any) -> Any:
        found = winning_runs(*a)
        domains.append(len(found[0]))
        return found

    monkeypatch.setattr(sup, "_winning_runs", counted)
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE p (dt STRING NOT NULL, k INT NOT NULL, v STRING, "
           "PRIMARY KEY (dt, k) NOT ENFORCED) PARTITIONED BY (dt) "
           "TBLPROPERTIES ('bucket' = '1')")
    for c in range(3):
        wh.sql("INSERT INTO p VALUES " + ", ".join(
            f"('{d}', {k}, 'c{c}{d}{k}')" for d in ("x", "y") for k in range(c, 12)))
    plan = wh.table("p").read_plan()
    assert {b.strategy for b in plans_of(plan, merge_input(plan).opts)} == {"superseded"}
    df = wh.table("p").read()
    _assert_merged_without_exchange(df)
    assert sorted(map(tuple, df.collect())) == sorted(
        (d, k, f"c{min(k, 2)}{d}{k}") for d in ("x", "y") for k in range(12))
    assert domains == ([2] if tested_by == "jvm" else [])


def test_past_the_key_filter_s_bound_positions_are_tested(
        spark: Any, tmp_path: Path, tested_by: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Winning runs past ``WINNER_BYTES`` (a byte per key of the span, on the driver) are
    not built: the JVM's filter tests the superseded rows' positions instead, with the same
    rows."""
    from schemalab.engine import kept_rows, session_cache

    wh = sl.Warehouse(tmp_path, spark=spark)
    commits = _write(wh, "t")
    monkeypatch.setattr(sup, "WINNER_BYTES", 100)  # KEYS span 4,227 keys
    session_cache.clear(spark)
    df = wh.table("t").read()
    text = df._jdf.queryExecution().executedPlan().toString()
    assert "_tmp_metadata_row_index" in text, text
    assert (kept_rows.FILTER_NAME + ".test(" in text) == (tested_by == "jvm"), text
    assert ("file_size" in text) == (tested_by == "expressions"), text
    assert _sorted(df) == _expected(_reference(commits, "deduplicate"))


def test_the_key_filter_refuses_a_key_the_driver_did_not_read(spark: Any,
                                                              tmp_path: Path) -> None:
    """A file holding a key outside the keys the driver read in it changed under the read:
    refused naming the table, never read as some other key's version."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from schemalab.engine import kept_rows

    for name, ks in (("f.parquet", [1, 2, 3]), ("g.parquet", [2, 7]), ("h.parquet", [1, None])):
        pq.write_table(pa.table({"k": pa.array(ks, pa.int64())}), tmp_path / name)
    keep = kept_rows.key_filter(spark, [
        ("f.parquet", np.array([1, 2, 3]), np.array([True, False, True])),
        ("g.parquet", np.array([2, 4]), np.array([True, True])),
        ("h.parquet", np.array([1, 2]), np.array([True, True]))], F.col("k"), "db.t")
    assert keep is not None
    f = spark.read.parquet(str(tmp_path / "f.parquet"))
    assert sorted(r.k for r in f.where(keep).collect()) == [1, 3]
    g = spark.read.parquet(str(tmp_path / "g.parquet"))
    with pytest.raises(Exception, match="Reading db.t: .*g.parquet holds key 7, which the "
                                        "driver did not read in it"):
        g.where(keep).collect()
    h = spark.read.parquet(str(tmp_path / "h.parquet"))
    with pytest.raises(Exception, match=r"Reading db.t: a row has no key \(NULL\)"):
        h.where(keep).collect()


@pytest.mark.parametrize("kept", [
    [True, False, True, True, False, False, True, True],    # more kept: the dropped listed
    [False, False, True, False, False, False, True, False],  # fewer kept: those listed
    [True] * 8, [False] * 8])
def test_the_key_filter_keeps_exactly_the_kept_keys(spark: Any, tmp_path: Path,
                                                    kept: list[bool]) -> None:
    """Whichever of a file's kept and dropped keys are sent, each row is kept exactly where
    its key is: read whole, in splits (a row group each, one task each), and with its first
    row groups skipped by a filter on their statistics (the cursor then starts past
    them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from schemalab.engine import kept_rows

    keys = np.array([-9, -3, 0, 5, 6, 40, 41, 2**31 - 10])  # the widest span an INT holds
    path = str(tmp_path / "f.parquet")
    pq.write_table(pa.table({"k": pa.array(keys)}), path, row_group_size=1)
    keep = kept_rows.key_filter(spark, [("f.parquet", keys, np.array(kept))], F.col("k"),
                                "db.t")
    assert keep is not None
    want = sorted(int(k) for k, w in zip(keys, kept, strict=True) if w)
    assert sorted(r.k for r in spark.read.parquet(path).where(keep).collect()) == want
    assert sorted(r.k for r in spark.read.parquet(path).where((F.col("k") > 5) & keep)
                  .collect()) == [k for k in want if k > 5]
    size = (tmp_path / "f.parquet").stat().st_size
    old = {k: spark.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes",
                                          "spark.sql.files.openCostInBytes")}
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(size // 8))
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        split = spark.read.parquet(path)
        assert split.rdd.getNumPartitions() > 2
        assert sorted(r.k for r in split.where(keep).collect()) == want
    finally:
        for k, v in old.items():
            spark.conf.set(k, v)
    with pytest.raises(ValueError, match="the keys of g.parquet span more than 2147483648"):
        kept_rows.key_filter(spark, [("g.parquet", np.array([-10, 2**31 - 10]), np.array(
            [True, True]))], F.col("k"), "db.t")


def test_the_key_filter_s_cursor_finds_keys_read_in_any_order(spark: Any) -> None:
    """Spark reads a file's rows in order, but where a task read a file's keys going down
    (its splits in another order), each is still tested against its own: the cursor finds
    its place again."""
    from schemalab.engine import jvm_udfs, kept_rows

    if not kept_rows.available(spark):
        pytest.skip("no JVM filter in this session")
    base = 2**32  # keys past an INT
    keys = base + np.array([0, 3, 5, 8, 13, 21])
    kept = np.array([True, False, True, True, False, True])
    payload = b"".join([jvm_udfs.text("db.t"), *kept_rows._key_payload(
        "db.t", [("f.parquet", keys, kept)])])
    test = jvm_udfs.instance(spark, jvm_udfs.udf_class(spark, "KeptRows"), payload)
    holder = spark.sparkContext._jvm.org.apache.spark.rdd.InputFileBlockHolder
    holder.set("file:/w/f.parquet", 0, 0)
    try:
        order = [8, 13, 0, 3, 21, 5, 13, 8, 0]
        got = [test.test(base + k) for k in order]  # type: ignore[attr-defined]
    finally:
        holder.unset()
    of = dict(zip((keys - base).tolist(), kept.tolist(), strict=True))
    assert got == [of[k] for k in order]


@pytest.mark.parametrize(("key_type", "options", "dml"), [
    ("STRING", "", ""),                                       # not an integer key
    ("BIGINT", ", 'sequence.field' = 'n'", ""),               # versions ordered by a field
    ("BIGINT", "", "DELETE FROM t WHERE k = 64"),             # a -D record
])
def test_what_the_walk_cannot_decide_is_merged(spark: Any, tmp_path: Path, key_type: str,
                                               options: str, dml: str) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark)
    keys = KEYS if key_type != "STRING" else [f"'{k}'" for k in KEYS]  # type: ignore[misc]
    _write(wh, "t", key_type, keys, options)
    if dml:
        wh.sql(dml)
    plan = wh.table("t").read_plan()
    plans = plans_of(plan, merge_input(plan).opts)
    # a DELETE writes its -D record to the key's bucket only
    assert not [p for p in plans if p.strategy == "superseded"
                and (not dml or any(f.delete_row_count for f in p.files))]
    assert [p.strategy for p in plans].count("superseded") == (1 if dml else 0)
    assert _sorted(wh.table("t").read()) == _sorted(merge_read(plan, spark, how="shuffle"))


def _file(name: str, lo: int, hi: int, rows: int = 10) -> DataFile:
    return DataFile(name, 0, rows, min_sequence_number=lo, max_sequence_number=hi,
                    key_range=((0,), (99,)), delete_row_count=0)


def test_superseded_needs_runs_ordered_by_sequence_number_and_a_row_budget() -> None:
    files = [_file(f"f{i}", i * 10, i * 10 + 9) for i in range(4)]
    plans = limit_broadcast(bucket_plans(files, "first-row", sequence_fields=()))
    assert [p.strategy for p in plans] == ["full"]
    assert [p.strategy for p in supersede(plans, "first-row", eligible=True)] == ["superseded"]
    assert [p.strategy for p in supersede(plans, "first-row", eligible=False)] == ["full"]
    assert [p.strategy for p in supersede(plans, "first-row", eligible=True,
                                          max_rows=39)] == ["full"]
    assert [p.strategy for p in supersede(plans, "partial-update", eligible=True)] == ["full"]
    # a file whose versions interleave with another's: which is newer is per row
    mixed = [*files, _file("g", 15, 35)]
    assert not ordered_runs(bucket_plans(mixed, "first-row", sequence_fields=())[0].runs)
    plans = bucket_plans(mixed, "first-row", sequence_fields=())
    assert [p.strategy for p in supersede(plans, "first-row", eligible=True)] == ["full"]
    # -U/-D rows (or a count not recorded) need the merge function
    plans = bucket_plans([*files[:3], dataclasses.replace(files[3], delete_row_count=None)],
                         "first-row", sequence_fields=())
    assert [p.strategy for p in supersede(plans, "first-row", eligible=True)] == ["full"]


def _walk_by_dict(keys: list[np.ndarray], deleted: list[np.ndarray | None]) -> list[list[int]]:
    seen: set[int] = set()
    out = []
    for k, d in zip(keys, deleted, strict=True):
        dead = set() if d is None else set(d.tolist())
        lost = [p for p, v in enumerate(k.tolist()) if p not in dead and v in seen]
        seen |= {v for p, v in enumerate(k.tolist()) if p not in dead}
        out.append(lost)
    return out


@pytest.mark.parametrize("span", [1 << 27, 0])  # a seen array; a sort (no span fits)
def test_the_walk_finds_each_superseded_position(monkeypatch: Any, span: int) -> None:
    monkeypatch.setattr(sup, "MAX_SPAN", span)
    rng = np.random.default_rng(25)
    for _ in range(20):
        files = int(rng.integers(1, 8))
        keys = [rng.choice(np.arange(-200, 200), size=int(rng.integers(0, 150)), replace=False)
                .astype(np.int64) for _ in range(files)]
        deleted = [None if rng.random() < 0.5 or not len(k) else
                   np.unique(rng.integers(0, len(k), size=5)).astype(np.int64) for k in keys]
        got = sup.superseded_positions(keys, deleted)
        assert got is not None
        assert [g.tolist() for g in got] == _walk_by_dict(keys, deleted)
    # a key twice among one file's live rows: no walk decides which version wins
    twice = [np.array([1, 2], np.int64), np.array([5, 3, 5], np.int64)]
    assert sup.superseded_positions(twice, [None, None]) is None
    # ... unless one of them is deleted, or a newer file supersedes both
    assert [p.tolist() for p in sup.superseded_positions(  # type: ignore[union-attr]
        twice, [None, np.array([0], np.int64)])] == [[], []]
    assert [p.tolist() for p in sup.superseded_positions(  # type: ignore[union-attr]
        [np.array([5], np.int64), twice[1]], [None, None])] == [[], [0, 2]]


@pytest.mark.parametrize("options", [
    ", 'merge-engine' = 'partial-update'",
    ", 'merge-engine' = 'aggregation'",
    ", 'merge-engine' = 'aggregation', 'fields.n.aggregate-function' = 'last_value', "
    "'fields.w.aggregate-function' = 'last_non_null_value'",
])
def test_partial_update_and_aggregation_without_nulls_read_each_key_s_newest_version(
        spark: Any, tmp_path: Path, options: str, tested_by: str) -> None:
    """Where the manifests count no NULL in any file, partial-update's merge and
    aggregation's last_non_null_value / last_value give each key's newest version: the
    buckets are read as deduplicate's superseded ones (no exchange, no aggregate), with the
    fold's own result: the newest sequence number, kind +I."""
    from pyspark.sql import functions as F

    from schemalab.engine.merge.keyed_read import merged
    from schemalab.engine.merge.records import KIND_COL

    wh = sl.Warehouse(tmp_path, spark=spark)
    _write(wh, "t", options=options, nulls=False)
    plan = wh.table("t").read_plan()
    assert all(f.non_null for f in plan.files)
    assert sup.newest_wins(plan, merge_input(plan).opts)
    assert {p.strategy for p in plans_of(plan, merge_input(plan).opts)} == {"superseded"}
    df = merge_read(plan, spark)
    _assert_merged_without_exchange(df)
    got = _sorted(df)
    assert got == _sorted(merge_read(plan, spark, how="shuffle"))
    assert got == _sorted(merge_read(_as(plan, "deduplicate"), spark))
    kinds = merged(plan, spark)
    assert kinds is not None and kinds.where(F.col(KIND_COL) != 0).count() == 0


@pytest.mark.parametrize(("options", "nulls", "add_column"), [
    (", 'merge-engine' = 'partial-update'", True, False),
    (", 'merge-engine' = 'partial-update'", False, True),
    (", 'merge-engine' = 'aggregation'", True, False),
    (", 'merge-engine' = 'aggregation', 'fields.n.aggregate-function' = 'sum'", False, False),
])
def test_a_null_or_another_function_keeps_the_merge(spark: Any, tmp_path: Path, options: str,
                                                    nulls: bool, add_column: bool) -> None:
    """A NULL in some file (written, or a column added after the file was) or a function
    other than the newest value's: the versions are merged."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    _write(wh, "t", options=options, nulls=nulls, add_column=add_column)
    plan = wh.table("t").read_plan()
    assert not sup.newest_wins(plan, merge_input(plan).opts)
    assert "superseded" not in {p.strategy for p in plans_of(plan, merge_input(plan).opts)}
    got = _sorted(merge_read(plan, spark))
    assert got == _sorted(merge_read(plan, spark, how="shuffle"))
    if nulls:
        # the merge is not the newest version: an older non-NULL value shows through
        assert got != _sorted(merge_read(_as(plan, "deduplicate"), spark))


def test_newest_wins_needs_the_null_counts_of_every_file(spark: Any, tmp_path: Path) -> None:
    """A file whose statistics are not recorded (as a writer without them leaves it), a
    sequence group or a cast that may make a NULL keeps the merge."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    _write(wh, "t", options=", 'merge-engine' = 'partial-update'", nulls=False)
    plan = wh.table("t").read_plan()
    opts = merge_input(plan).opts
    assert sup.newest_wins(plan, opts)
    unknown = dataclasses.replace(plan, groups=tuple(dataclasses.replace(g, files=tuple(
        dataclasses.replace(f, non_null=None) if i == 0 else f for i, f in enumerate(g.files)))
        for g in plan.groups))
    assert not sup.newest_wins(unknown, opts)
    from schemalab.engine.merge.options import SequenceGroup

    grouped = dataclasses.replace(opts, sequence_groups=(SequenceGroup(("n",), ("w",)),))
    assert not sup.newest_wins(plan, grouped)


@pytest.mark.parametrize(("source", "target", "never_null"), [
    ("INT", "BIGINT", True), ("FLOAT", "DOUBLE", True), ("INT", "DOUBLE", True),
    ("DECIMAL(5, 2)", "DECIMAL(10, 2)", True), ("INT", "DECIMAL(12, 2)", True),
    ("VARCHAR(5)", "VARCHAR(10)", True), ("TIMESTAMP(3)", "TIMESTAMP(6)", True),
    ("CHAR(3)", "VARCHAR(5)", True), ("DATE", "TIMESTAMP(3)", False),
    ("BIGINT", "INT", False), ("VARCHAR(5)", "INT", False), ("STRING", "INT", False),
    ("DECIMAL(10, 2)", "DECIMAL(5, 2)", False), ("DOUBLE", "FLOAT", False),
    ("VARCHAR(10)", "VARCHAR(5)", False), ("TIMESTAMP(6)", "TIMESTAMP(3)", False),
])
def test_which_casts_keep_a_value_non_null(source: str, target: str, never_null: bool) -> None:
    """A file's column read as the table's type keeps its non-NULL values non-NULL where
    the cast is one Paimon makes implicitly and that fits (a widening); an explicit cast
    (a narrowing, a string parsed) may fail, and the read makes that value NULL."""
    from schemalab.types import parse_type

    assert sup._never_null(parse_type(source), parse_type(target)) is never_null


def test_newest_wins_through_implicit_casts(spark: Any, tmp_path: Path) -> None:
    """Issue 25: files written before ``n`` became a DOUBLE and ``v`` a longer VARCHAR are
    read by the newest-version path (their values cannot become NULL), and it reads what
    the merge of every version reads."""
    wh = sl.Warehouse(tmp_path, spark=spark)
    wh.sql("CREATE TABLE t (k BIGINT NOT NULL, v VARCHAR(8), n INT, PRIMARY KEY (k) NOT "
           "ENFORCED) TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'partial-update')")
    for c in range(3):
        if c == 2:
            wh.sql("ALTER TABLE t ALTER COLUMN n TYPE DOUBLE; "
                   "ALTER TABLE t ALTER COLUMN v TYPE VARCHAR(20)")
        wh.sql("INSERT INTO t VALUES " + ", ".join(
            f"({k}, 'c{c}k{k}', {c * 1000 + k})" for k in KEYS if (k + c) % 3 != 0))
    plan = wh.table("t").read_plan()
    opts = merge_input(plan).opts
    assert sup.newest_wins(plan, opts)
    assert {p.strategy for p in plans_of(plan, opts)} == {"superseded"}
    got = _sorted(merge_read(plan, spark))
    assert got == _sorted(merge_read(plan, spark, how="shuffle"))
    assert {type(r[2]) for r in got} == {float}
