"""``SELECT .. FROM t TIMESTAMP AS OF <expression>`` on Paimon and Iceberg tables (issue 24).

One warehouse holds a Paimon table ``p`` and an Iceberg table ``i``, each written in three
commits with an ALTER between the first two. The queries name times built from the commits'
own ``timeMillis`` / snapshot-log ``timestamp-ms``: exactly at a commit, a millisecond before
and after it, as a literal in the session time zone, as seconds since the epoch, as an
expression. The Java engines judge the same choices in
``tests/test_interop_time_travel_timestamp.py``.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError

pytestmark = pytest.mark.spark

ROWS = {0: [(1, "x")], 1: [(1, "x", None), (2, "y", 20)],
        2: [(1, "x", None), (2, "y", 20), (3, "z", 30)]}


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> sl.Warehouse:
    wh = sl.Warehouse(str(tmp_path_factory.mktemp("time-travel") / "wh"), spark=spark)
    for name, using in (("p", "paimon"), ("i", "iceberg")):
        wh.sql(f"CREATE TABLE {name} (id INT, a STRING) USING {using};"
               f"INSERT INTO {name} VALUES (1, 'x'); ALTER TABLE {name} ADD COLUMN b INT;"
               f"INSERT INTO {name} VALUES (2, 'y', 20); INSERT INTO {name} VALUES (3, 'z', 30)")
    return wh


def commits(wh: sl.Warehouse, name: str) -> list[tuple[int, int]]:
    """(snapshot id, commit time in epoch millis), oldest first: Paimon's snapshot files,
    Iceberg's snapshot log."""
    t = wh.table(name)
    if name == "p":
        return [(s.id, s.time_millis) for s in t.snapshots]
    return [(sid, ms) for sid, ms in t.metadata.snapshot_log]


def literal(spark: Any, millis: int) -> str:
    """``millis`` as a TIMESTAMP string in the session time zone."""
    zone = ZoneInfo(spark.conf.get("spark.sql.session.timeZone"))
    when = dt.datetime.fromtimestamp(millis / 1000, zone)
    return "'" + when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "'"


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def reads(wh: sl.Warehouse, name: str, times: dict[str, str]) -> dict[str, list[Any]]:
    """``name`` read as of each of ``times`` (label → Spark expression), in one query: per
    label the rows as (column, value) lists, in the read's column order."""
    one = "to_json(struct(*), map('ignoreNullFields', 'false'))"
    sql = " UNION ALL ".join(f"SELECT '{label}' AS k, {one} AS j FROM {name} "
                             f"TIMESTAMP AS OF {expression}"
                             for label, expression in times.items())
    out: dict[str, list[Any]] = {label: [] for label in times}
    for k, j in wh.sql(sql).collect():
        out[k].append(list(json.loads(j).items()))
    return {k: sorted(v, key=repr) for k, v in out.items()}


def expected(n: int) -> list[Any]:
    """Commit ``n``'s rows as ``reads`` has them: its own schema (no b before the ALTER)."""
    columns = ["id", "a"] if n == 0 else ["id", "a", "b"]
    return sorted((list(zip(columns, r, strict=True)) for r in ROWS[n]), key=repr)


def test_at_before_and_after_each_commit(wh: sl.Warehouse, spark: Any) -> None:
    for name in ("p", "i"):
        log = commits(wh, name)
        assert len(log) == 3
        assert all(b[1] - a[1] > 1 for a, b in zip(log, log[1:], strict=False)), log
        want = {}
        for n, (_sid, ms) in enumerate(log):
            for at, expect in ((ms, n), (ms + 1, n), (ms - 1, n - 1)):
                if expect >= 0:
                    want[str(at)] = expect
                    assert _id(wh, name, at) == log[expect][0], (name, at)
        got = reads(wh, name, {at: literal(spark, int(at)) for at in want})
        assert got == {at: expected(n) for at, n in want.items()}, name


def _id(wh: sl.Warehouse, name: str, millis: int) -> int:
    t = wh.table(name)
    return t.snapshot_id_of(t.snapshot_as_of(millis))


def test_numbers_are_seconds_and_expressions_fold(wh: sl.Warehouse) -> None:
    for name in ("p", "i"):
        log = commits(wh, name)
        ms = log[1][1]
        utc = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        got = reads(wh, name, {
            # decimal seconds: exactly that millisecond; whole seconds after the last commit
            "decimal": f"{ms // 1000}.{ms % 1000:03d}",
            "whole": str(log[2][1] // 1000 + 1),
            "interval": f"timestamp_millis({ms}) - INTERVAL 1 MILLISECOND",
            "now": "current_timestamp()",
            "zoned": f"'{utc[:-3]}Z'",  # a literal with its own zone
        })
        assert got == {"decimal": expected(1), "whole": expected(2), "interval": expected(0),
                       "now": expected(2), "zoned": expected(1)}, name
        # Spark's synonym, at the second after commit 1: commit 2 too if it came by then
        second = ms // 1000 + 1
        rows = wh.sql(f"SELECT * FROM {name} FOR SYSTEM_TIME AS OF {second}")
        assert rows.count() == len(ROWS[2 if log[2][1] <= second * 1000 else 1])


def test_the_session_time_zone_reads_a_bare_literal(wh: sl.Warehouse, spark: Any) -> None:
    ms = commits(wh, "p")[1][1]
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
        text = literal(spark, ms)
        assert rows(wh.sql(f"SELECT * FROM p TIMESTAMP AS OF {text}")) == ROWS[1]
        # the same wall-clock time in Tokyo was some 17 hours earlier: before the table
        spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
        wall = dt.datetime.strptime(text.strip("'"), "%Y-%m-%d %H:%M:%S.%f")
        tokyo = round(wall.replace(tzinfo=ZoneInfo("Asia/Tokyo")).timestamp() * 1000)
        with pytest.raises(SchemaLabError, match=f"timestamp \\[{tokyo}\\]"):
            wh.sql(f"SELECT * FROM p TIMESTAMP AS OF {text}")
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_before_the_first_snapshot_the_engines_message(wh: sl.Warehouse, spark: Any) -> None:
    first = commits(wh, "p")[0][1]
    with pytest.raises(SchemaLabError) as e:
        wh.sql(f"SELECT * FROM p TIMESTAMP AS OF {literal(spark, first - 1)}")
    assert e.value.rule == "snapshot-as-of-time" and e.value.table == "default.p"
    assert (f"There is currently no snapshot earlier than or equal to timestamp "
            f"[{first - 1}], the earliest snapshot's timestamp is [{first}]") in str(e.value)
    first = commits(wh, "i")[0][1]
    iso = dt.datetime.fromtimestamp((first - 1) / 1000, dt.UTC).isoformat(
        timespec="milliseconds")
    if (first - 1) % 1000 == 0:  # Java's Instant.toString shows no .000
        iso = iso.replace(".000", "")
    with pytest.raises(SchemaLabError) as e:
        wh.sql(f"SELECT * FROM i TIMESTAMP AS OF {literal(spark, first - 1)}")
    assert e.value.rule == "snapshot-as-of-time" and e.value.table == "default.i"
    assert f"Cannot find a snapshot older than {iso}" in str(e.value)
    with pytest.raises(SchemaLabError, match="Cannot find a snapshot older than") as e:
        wh.sql("SELECT * FROM i TIMESTAMP AS OF date_sub(current_date(), 1)")


def test_a_table_without_snapshots(wh: sl.Warehouse) -> None:
    wh.sql("CREATE TABLE e (id INT) USING paimon; CREATE TABLE ie (id INT) USING iceberg")
    with pytest.raises(SchemaLabError, match=r"the earliest snapshot's timestamp is \[null\]"):
        wh.sql("SELECT * FROM e TIMESTAMP AS OF current_timestamp()")
    with pytest.raises(SchemaLabError, match="Cannot find a snapshot older than"):
        wh.sql("SELECT * FROM ie TIMESTAMP AS OF current_timestamp()")


@pytest.mark.parametrize(("expression", "why"), [
    ("rand()", "not deterministic"),
    ("id", "cannot evaluate"),  # a column: nothing to resolve it against
    ("(SELECT max(id) FROM p)", "a subquery"),
    ("max(1)", "an aggregate function"),
    ("'not a time'", "no valid timestamp"),
    ("true", "cannot evaluate"),  # no ANSI cast from BOOLEAN
])
def test_non_constant_timestamps_are_refused(wh: sl.Warehouse, expression: str,
                                             why: str) -> None:
    for name in ("p", "i"):
        with pytest.raises(SchemaLabError, match=why) as e:
            wh.sql(f"SELECT * FROM {name} TIMESTAMP AS OF {expression}")
        assert e.value.rule == "time-travel-timestamp"
        assert e.value.table == f"default.{name}" and f"default.{name}" in str(e.value)


def test_join_of_two_time_travelled_reads(wh: sl.Warehouse, spark: Any) -> None:
    p, i = commits(wh, "p"), commits(wh, "i")
    df = wh.sql(f"SELECT a.id, a.a, b.b FROM p TIMESTAMP AS OF {literal(spark, p[0][1])} a "
                f"FULL JOIN i TIMESTAMP AS OF {literal(spark, i[1][1])} AS b ON a.id = b.id")
    assert rows(df) == [(1, "x", None), (None, None, 20)]
    # one table twice, at two times, beside its current read
    df = wh.sql(f"SELECT count(*) FROM p TIMESTAMP AS OF {literal(spark, p[0][1])} x "
                f"JOIN p FOR SYSTEM_TIME AS OF {literal(spark, p[1][1])} y ON x.id = y.id "
                "JOIN p ON p.id = y.id")
    assert df.collect()[0][0] == 1


def test_version_as_of_still_reads_a_snapshot(wh: sl.Warehouse) -> None:
    for name in ("p", "i"):
        log = commits(wh, name)
        assert rows(wh.sql(f"SELECT * FROM {name} VERSION AS OF {log[0][0]}")) == ROWS[0]
        assert rows(wh.sql(f"SELECT * FROM {name} FOR SYSTEM_VERSION AS OF {log[1][0]}")) \
            == ROWS[1]


def test_an_iceberg_branch_is_no_time_travel_target(wh: sl.Warehouse) -> None:
    wh.sql("ALTER TABLE i CREATE BRANCH dev")
    with pytest.raises(SchemaLabError, match="time-travel based on both") as e:
        wh.sql("SELECT * FROM i.branch_dev TIMESTAMP AS OF current_timestamp()")
    assert e.value.rule == "one-read-target" and e.value.table == "default.i"
