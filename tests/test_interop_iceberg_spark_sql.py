"""Iceberg's own Spark SQL judges schemalab's Iceberg ALTERs (issue 24): the same SQL text,
on copies of one table schemalab wrote.

Iceberg 1.12.0's ``iceberg-spark-runtime-4.1_2.13`` with its SQL extensions, on a
``HadoopCatalog`` (``tests/oracles/iceberg_spark.py``: a worker in ``.venv-iceberg-spark``).
For every case of :data:`CASES` and every format version it names, the table schemalab
created (:data:`CREATE`, two inserts) is copied twice; schemalab runs the statements on one
copy (``sl.Warehouse(.., format="iceberg").sql``), Iceberg's Spark SQL on the other, and

- both accept or both refuse each statement;
- refused: schemalab's error carries Java's message (Spark wraps Iceberg's exceptions:
  ``SparkIllegalArgumentException`` around Iceberg's ``IllegalArgumentException``, and the
  like; the Java part is compared). Cases marked ``SPARK`` are refused by Spark's own
  analyzer or parser before any Iceberg code runs: Spark's message is no Java message to
  match, so only the refusal is compared, and the case says so;
- accepted: the metadata both wrote is the same (schemas with field ids, types, required,
  docs, defaults and identifier fields; ``last-column-id``, ``current-schema-id``, partition
  specs, ``last-partition-id``, sort orders, refs, properties, and how many metadata files
  the commits made), and Iceberg's Spark reads schemalab's table equal to schemalab's read.

Also: Spark reads every snapshot of tables schemalab wrote (``VERSION AS OF``), after
ALTERs, partition evolution, position deletes (v2), deletion vectors (v3) and a branch.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from iceberg_canonical import canonical_frame
from oracles.iceberg_spark import IcebergSpark, SparkError
from test_interop_java_iceberg import comparable

import schemalab as sl
from schemalab.errors import SchemaLabError

pytest_plugins = ["oracles.iceberg_spark"]
pytestmark = pytest.mark.spark

CREATE = """CREATE TABLE t (id INT NOT NULL, name STRING, s STRUCT<x: INT, y: STRING>,
  f FLOAT, dbl DOUBLE, d DECIMAL(9, 2), dt DATE, ts TIMESTAMP, tn TIMESTAMP_NTZ, l BIGINT,
  tags ARRAY<STRING>, m MAP<STRING, STRUCT<k: INT, j: STRING>>, b BINARY, p STRING, q INT NOT NULL)
  USING iceberg PARTITIONED BY (bucket(8, id), days(ts), truncate(4, name), p)
  TBLPROPERTIES ('format-version' = '{v}')"""
ROWS = ["""INSERT INTO t VALUES (1, 'alpha', named_struct('x', 1, 'y', 'why'), 1.5, 2.25,
  3.50, DATE'2024-05-06', TIMESTAMP'2024-01-02 03:04:05', TIMESTAMP_NTZ'2024-01-02 03:04:05',
  10, array('a', 'b'), map('k', named_struct('k', 5, 'j', 'jay')), X'0102', 'p1', 7),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 8)""",
        """INSERT INTO t VALUES (-3, 'gamma', named_struct('x', NULL, 'y', 'z'), -0.5, -1e10,
  -0.01, DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59', TIMESTAMP_NTZ'1900-01-01 00:00:00',
  -1, array(), map(), X'', 'p2', 9)"""]

OK, REFUSED, SPARK = "ok", "refused", "spark"


@dataclass(frozen=True)
class Case:
    """``statements`` run in order on both sides; the last is the one judged (the ones before
    it set the table up: both must accept them). ``expect``: OK, REFUSED (by Iceberg, with
    Java's message) or SPARK (by Spark's analyzer or parser, before Iceberg)."""

    statements: tuple[str, ...]
    expect: str
    versions: tuple[int, ...] = (2,)
    xfail: str | None = None


def case(statements: str | list[str], expect: str = OK, versions: tuple[int, ...] = (2,),
         xfail: str | None = None) -> Case:
    """``ALTER TABLE t <statement>`` each; a statement starting with ``.`` names a selector
    of ``t`` (``.branch_dev ADD COLUMN x INT``)."""
    stmts = (statements,) if isinstance(statements, str) else tuple(statements)
    return Case(tuple("ALTER TABLE t" + (s if s.startswith(".") else " " + s) for s in stmts),
                expect, versions, xfail)


ALL = (1, 2, 3)
NO_DEFAULTS = "Iceberg 1.12's Spark SQL sets no column defaults; schemalab does (v3)"
CASES: list[Case] = [
    # ---- adds -------------------------------------------------------------------------------
    case("ADD COLUMN c STRING", versions=ALL),
    case("ADD COLUMN c STRING FIRST"),
    case("ADD COLUMN c BIGINT AFTER name"),
    case("ADD COLUMN c INT COMMENT 'cee'"),
    case("ADD COLUMNS (c1 INT, c2 STRING COMMENT 'two')"),
    case("ADD COLUMN s.z BIGINT", versions=ALL),
    case("ADD COLUMN s.z BIGINT FIRST"),
    case("ADD COLUMN s.z BIGINT AFTER x"),
    case("ADD COLUMN m.value.z INT"),
    case("ADD COLUMN n STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>, e: MAP<STRING, DATE>>"),
    case("ADD COLUMN mm MAP<STRING, ARRAY<BIGINT>>"),
    case(["ADD COLUMN z INT", "DROP COLUMN z"]),  # schema 0 again: its id is reused
    case("ADD COLUMN name INT", SPARK),
    case("ADD COLUMN s.x INT", SPARK),
    case("ADD COLUMN nope.q INT", SPARK),
    case("ADD COLUMN id.q INT", SPARK),
    # Iceberg's Spark checks this itself (Spark3Util: "..cannot add required column: c")
    # before Java's UpdateSchema would ("..required column without a default value: c");
    # schemalab gives both (test_interop_iceberg_write checks UpdateSchema's)
    case("ADD COLUMN c INT NOT NULL", REFUSED, ALL),
    case("ADD COLUMN c INT AFTER nope", SPARK),
    case("ADD COLUMN s.z INT AFTER name", SPARK),
    # ---- drops ------------------------------------------------------------------------------
    case("DROP COLUMN dbl", versions=ALL),
    case("DROP COLUMN s.y"),
    case("DROP COLUMN s"),
    case("DROP COLUMN m.value.k"),
    case("DROP COLUMNS f, dbl"),
    case("DROP COLUMN nope", SPARK),
    case("DROP COLUMN IF EXISTS nope"),
    case(["SET IDENTIFIER FIELDS q", "DROP COLUMN q"], REFUSED),
    # a partition source: of the current spec, then of an older one only
    case("DROP COLUMN p", REFUSED, ALL),
    case("DROP COLUMN ts", REFUSED),
    case("DROP COLUMN id", REFUSED),
    case(["DROP PARTITION FIELD p", "DROP COLUMN p"], versions=ALL),
    case(["DROP PARTITION FIELD ts_day", "DROP COLUMN ts"]),
    # ---- renames ----------------------------------------------------------------------------
    case("RENAME COLUMN name TO nm", versions=ALL),
    case("RENAME COLUMN s.y TO why"),
    case("RENAME COLUMN m.value.k TO kk"),
    case("RENAME COLUMN p TO pp"),
    case("RENAME COLUMN ts TO happened"),
    case("RENAME COLUMN nope TO x", SPARK),
    case("RENAME COLUMN name TO id", SPARK),
    case("RENAME COLUMN s.x TO y", SPARK),
    # ---- types: what Iceberg promotes, and what it refuses ----------------------------------
    case("ALTER COLUMN id TYPE BIGINT", versions=ALL),
    case("ALTER COLUMN q TYPE BIGINT"),
    case("ALTER COLUMN f TYPE DOUBLE", versions=ALL),
    case("ALTER COLUMN d TYPE DECIMAL(12, 2)", versions=ALL),
    case("ALTER COLUMN s.x TYPE BIGINT"),
    case("ALTER COLUMN m.value.k TYPE BIGINT"),
    case("ALTER COLUMN l TYPE BIGINT", versions=ALL),  # no change: no commit either
    case("ALTER COLUMN id TYPE STRING", REFUSED, ALL),
    case("ALTER COLUMN id TYPE DOUBLE", REFUSED),
    case("ALTER COLUMN f TYPE DECIMAL(10, 2)", SPARK),
    case("ALTER COLUMN d TYPE DECIMAL(9, 3)", SPARK),
    case("ALTER COLUMN d TYPE DECIMAL(12, 3)", REFUSED),
    case("ALTER COLUMN d TYPE DECIMAL(8, 2)", SPARK),
    case("ALTER COLUMN d TYPE DOUBLE", SPARK),
    case("ALTER COLUMN dbl TYPE FLOAT", SPARK),
    case("ALTER COLUMN l TYPE INT", SPARK),
    case("ALTER COLUMN name TYPE BINARY", SPARK),
    case("ALTER COLUMN b TYPE STRING", REFUSED),
    # the v3 spec (and issue 24) promote date to timestamp; Java 1.12 refuses it and cannot
    # read a table that has it, so schemalab refuses it in v3 too
    case("ALTER COLUMN dt TYPE TIMESTAMP_NTZ", REFUSED, (2, 3)),
    case("ALTER COLUMN dt TYPE TIMESTAMP", REFUSED, (2, 3)),
    case("ALTER COLUMN ts TYPE TIMESTAMP_NTZ", REFUSED),
    case("ALTER COLUMN tn TYPE TIMESTAMP", REFUSED),
    case("ALTER COLUMN s TYPE STRUCT<x: BIGINT, y: STRING>", SPARK),
    case("ALTER COLUMN nope TYPE BIGINT", SPARK),
    # ---- nullability, comments, positions ---------------------------------------------------
    case("ALTER COLUMN id DROP NOT NULL", versions=ALL),
    case("ALTER COLUMN name DROP NOT NULL"),
    case("ALTER COLUMN name SET NOT NULL", SPARK, ALL),
    case("ALTER COLUMN s.x SET NOT NULL", SPARK),
    case("ALTER COLUMN name COMMENT 'the name'", versions=ALL),
    case("ALTER COLUMN s.x COMMENT 'ex'"),
    case(["ALTER COLUMN name COMMENT 'a'", "ALTER COLUMN name COMMENT 'b'"]),
    case("ALTER COLUMN l FIRST", versions=ALL),
    case("ALTER COLUMN l AFTER id"),
    case("ALTER COLUMN s.y FIRST"),
    case("ALTER COLUMN s.x AFTER y"),
    case("ALTER COLUMN m.value.k FIRST"),
    case("ALTER COLUMN l AFTER l", REFUSED),
    case("ALTER COLUMN l AFTER s.x", SPARK),  # Spark's parser: AFTER takes one name
    case("ALTER COLUMN l AFTER nope", SPARK),
    # ---- defaults (v3: initial-default and write-default) -----------------------------------
    # Iceberg 1.12's Spark refuses every DEFAULT ("setting default values in Spark is
    # currently unsupported"; SET/DROP DEFAULT: "Cannot apply unknown table change"), in
    # any format version; schemalab writes them as Java's UpdateSchema API does (judged
    # by Java's API in test_interop_iceberg_alter_more)
    case("ADD COLUMN c INT DEFAULT 7", versions=(3,), xfail=NO_DEFAULTS),
    case("ADD COLUMN c STRING DEFAULT 'abc' COMMENT 'with a default'", versions=(3,),
         xfail=NO_DEFAULTS),
    case("ADD COLUMN s.z BIGINT DEFAULT 5", versions=(3,), xfail=NO_DEFAULTS),
    case("ADD COLUMN c INT DEFAULT 7", REFUSED, (1, 2), xfail=NO_DEFAULTS),
    case("ALTER COLUMN name SET DEFAULT 'x'", versions=(3,), xfail=NO_DEFAULTS),
    case("ALTER COLUMN d SET DEFAULT 1.25", versions=(3,), xfail=NO_DEFAULTS),
    case("ALTER COLUMN name DROP DEFAULT", versions=(3,), xfail=NO_DEFAULTS),
    case("ALTER COLUMN nope SET DEFAULT 1", SPARK, (3,)),
    # ---- identifier fields ------------------------------------------------------------------
    case("SET IDENTIFIER FIELDS id", versions=ALL),
    case("SET IDENTIFIER FIELDS id, q"),
    case(["SET IDENTIFIER FIELDS id, q", "SET IDENTIFIER FIELDS q"]),
    case(["SET IDENTIFIER FIELDS id, q", "DROP IDENTIFIER FIELDS id"]),
    case("SET IDENTIFIER FIELDS name", REFUSED),
    case("SET IDENTIFIER FIELDS nope", REFUSED),
    case("SET IDENTIFIER FIELDS s.x", REFUSED),
    case("DROP IDENTIFIER FIELDS id", REFUSED),
    # ---- partition fields -------------------------------------------------------------------
    case("ADD PARTITION FIELD dt", versions=ALL),
    case("ADD PARTITION FIELD bucket(4, l)", versions=ALL),
    case("ADD PARTITION FIELD truncate(2, name) AS nm2"),
    case("ADD PARTITION FIELD years(dt)"),
    case("ADD PARTITION FIELD months(dt)"),
    case("ADD PARTITION FIELD days(dt)"),
    case("ADD PARTITION FIELD hours(tn)"),
    case("ADD PARTITION FIELD s.x"),
    case("ADD PARTITION FIELD truncate(10, d)"),
    case("ADD PARTITION FIELD hours(ts)"),  # beside days(ts): redundant only within one
    case("ADD PARTITION FIELD nope AS x", REFUSED),
    case("ADD PARTITION FIELD p", REFUSED),
    case("ADD PARTITION FIELD bucket(8, id)", REFUSED),
    case("ADD PARTITION FIELD nope", REFUSED),
    case("ADD PARTITION FIELD hours(dt)", REFUSED),
    case("ADD PARTITION FIELD bucket(4, f)", REFUSED),
    case("ADD PARTITION FIELD dt AS p", REFUSED),
    case("DROP PARTITION FIELD p", versions=ALL),
    case("DROP PARTITION FIELD bucket(8, id)", versions=ALL),
    case("DROP PARTITION FIELD ts_day"),
    case("DROP PARTITION FIELD days(ts)"),
    case("DROP PARTITION FIELD nope", REFUSED),
    case("DROP PARTITION FIELD months(ts)", REFUSED),
    case("REPLACE PARTITION FIELD ts_day WITH hours(ts)", versions=ALL),
    case("REPLACE PARTITION FIELD p WITH bucket(4, p)"),
    case("REPLACE PARTITION FIELD name_trunc WITH truncate(8, name) AS nm8"),
    case("REPLACE PARTITION FIELD nope WITH dt", REFUSED),
    case(["DROP PARTITION FIELD p", "ADD PARTITION FIELD p"], versions=ALL),
    case(["ADD PARTITION FIELD dt", "DROP PARTITION FIELD dt"], versions=(1, 2)),
    # ---- write order ------------------------------------------------------------------------
    case("WRITE ORDERED BY id", versions=ALL),
    case("WRITE ORDERED BY id DESC NULLS FIRST, name"),
    case("WRITE ORDERED BY bucket(4, id), days(ts) DESC"),
    case("WRITE LOCALLY ORDERED BY l"),
    case("WRITE DISTRIBUTED BY PARTITION"),
    case("WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY name NULLS LAST"),
    case(["WRITE ORDERED BY id", "WRITE UNORDERED"]),
    case("WRITE ORDERED BY nope", REFUSED),
    # ---- branches and tags ------------------------------------------------------------------
    case("CREATE BRANCH dev", versions=ALL),
    case("CREATE TAG v1", versions=ALL),
    case("CREATE BRANCH dev RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS"),
    case("CREATE TAG v1 RETAIN 30 DAYS"),
    case("CREATE BRANCH dev AS OF VERSION {first}"),
    case("CREATE TAG v0 AS OF VERSION {first}"),
    case(["CREATE BRANCH dev", "CREATE BRANCH IF NOT EXISTS dev AS OF VERSION {first}"]),
    case(["CREATE BRANCH dev AS OF VERSION {first}", "CREATE OR REPLACE BRANCH dev"]),
    case(["CREATE TAG v1 AS OF VERSION {first}", "REPLACE TAG v1 RETAIN 1 DAYS"]),
    case(["CREATE BRANCH dev", "DROP BRANCH dev"]),
    case(["CREATE TAG v1", "DROP TAG v1"]),
    case("DROP BRANCH IF EXISTS nope"),
    case("CREATE BRANCH main", REFUSED),
    case(["CREATE BRANCH dev", "CREATE BRANCH dev"], REFUSED),
    case(["CREATE TAG v1", "CREATE TAG v1"], REFUSED),
    case(["CREATE TAG v1", "CREATE BRANCH v1"], REFUSED),
    case("CREATE TAG v1 AS OF VERSION 12345", REFUSED),
    case("REPLACE BRANCH nope", REFUSED),
    case("DROP BRANCH nope", REFUSED),
    case("DROP BRANCH main", REFUSED),
    case("DROP TAG nope", REFUSED),
    case(["CREATE TAG v1", "DROP BRANCH v1"], REFUSED),
    # an ALTER of a branch or tag selector: Spark finds no such table (the catalog alters
    # tables, not refs; the schema is shared by every branch)
    case(["CREATE BRANCH dev", ".branch_dev ADD COLUMN x INT"], SPARK, ALL),
    case(["CREATE BRANCH dev", ".branch_dev RENAME COLUMN id TO k"], SPARK),
    case(["CREATE BRANCH dev", ".branch_dev SET TBLPROPERTIES ('a' = 'b')"], SPARK),
    case(["CREATE TAG v1", ".tag_v1 ALTER COLUMN q TYPE BIGINT"], SPARK),
]


def _id(c: Case, v: int) -> str:
    return f"v{v}-" + " | ".join(s.removeprefix("ALTER TABLE t").strip() for s in c.statements)


PARAMS = [pytest.param(c, v, id=_id(c, v),
                       marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
          for c in CASES for v in c.versions]


def metadata_facts(warehouse: Path) -> dict[str, Any]:
    """The current metadata's facts both writers must agree on."""
    mdir = warehouse / "default" / "t" / "metadata"
    version = int((mdir / "version-hint.text").read_text().strip())
    d = json.loads((mdir / f"v{version}.metadata.json").read_text())
    keys = ("format-version", "last-column-id", "current-schema-id", "schemas", "schema",
            "partition-specs", "partition-spec", "default-spec-id", "last-partition-id",
            "sort-orders", "default-sort-order-id", "refs", "current-snapshot-id",
            "properties")
    return {"metadata-version": version, **{k: d.get(k) for k in keys}}


@dataclass
class Outcome:
    ours: list[str | None] = field(default_factory=list)  # schemalab's error per statement
    theirs: list[SparkError | None] = field(default_factory=list)
    ours_facts: dict[str, Any] | None = None
    theirs_facts: dict[str, Any] | None = None
    ours_read: tuple[list[str], list[str]] | None = None
    spark_read: dict[str, Any] | None = None


def _schemalab(wh: Any, statement: str) -> str | None:
    try:
        wh.sql(statement)
    except SchemaLabError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a crash is a finding, reported by the case
        return f"CRASH {type(exc).__name__}: {exc}"
    return None


def _base(root: Path, version: int, spark: Any) -> tuple[Path, dict[str, int]]:
    base = root / f"base-v{version}"
    wh = sl.Warehouse(base, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=version))
    for rows in ROWS:
        wh.sql(rows)
    first = wh.table("t").snapshots[0].snapshot_id
    return base, {"first": first}


def _run_version(root: Path, version: int, spark: Any,
                 iceberg_spark: IcebergSpark) -> dict[str, Outcome]:
    """Every case of ``version``: schemalab and Spark on copies of one base table."""
    base, names = _base(root, version, spark)
    todo = [c for c in CASES if version in c.versions]
    outcomes: dict[str, Outcome] = {}
    jobs = []
    for i, c in enumerate(todo):
        statements = [s.format(**names) for s in c.statements]
        ours, theirs = root / f"v{version}-{i}-ours", root / f"v{version}-{i}-spark"
        shutil.copytree(base, ours)
        shutil.copytree(base, theirs)
        wh = sl.Warehouse(ours, spark=spark, format="iceberg")
        outcomes[_id(c, version)] = Outcome(ours=[_schemalab(wh, s) for s in statements])
        jobs.append((theirs, statements))
    answers = iceberg_spark.run_many(jobs)
    # Reads: one per distinct (current schema, current snapshot); every copy holds the
    # same data files, so cases that leave both equal (partition fields, sort orders,
    # refs, docs) read alike and share one read of each side.
    reads: dict[str, tuple[Path, list[Outcome]]] = {}
    for (c, (theirs, _)), answer in zip(zip(todo, jobs, strict=True), answers, strict=True):
        out = outcomes[_id(c, version)]
        out.theirs = answer
        if out.ours[-1] is None and answer[-1] is None:
            ours = theirs.with_name(theirs.name.replace("-spark", "-ours"))
            out.ours_facts, out.theirs_facts = metadata_facts(ours), metadata_facts(theirs)
            reads.setdefault(_read_key(out.ours_facts), (ours, []))[1].append(out)
    spark_reads = iceberg_spark.read_many([(ours, "default.t", None)
                                           for ours, _ in reads.values()], check=False)
    for (ours, group), got in zip(reads.values(), spark_reads, strict=True):
        columns, _, rows = canonical_frame(
            sl.Warehouse(ours, spark=spark, format="iceberg").table("t").read())
        for out in group:
            out.ours_read, out.spark_read = (columns, rows), got
    return outcomes


def _read_key(facts: dict[str, Any]) -> str:
    """What a read of the current snapshot depends on: its schema (without docs) and the
    snapshot."""
    schema = next(s for s in facts["schemas"] or [facts["schema"]]
                  if s.get("schema-id", 0) == facts["current-schema-id"])

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items()
                    if k not in ("doc", "schema-id", "identifier-field-ids")}
        return [strip(v) for v in node] if isinstance(node, list) else node

    return json.dumps([strip(schema["fields"]), facts["current-snapshot-id"]], sort_keys=True)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory, spark: Any,
             iceberg_spark: IcebergSpark) -> Callable[[int], dict[str, Outcome]]:
    """Each format version's outcomes, computed once (one Spark round trip per table)."""
    done: dict[int, dict[str, Outcome] | Exception] = {}

    def of(version: int) -> dict[str, Outcome]:
        if version not in done:
            try:
                done[version] = _run_version(
                    tmp_path_factory.mktemp(f"spark-sql-v{version}"), version, spark,
                    iceberg_spark)
            except Exception as exc:  # noqa: BLE001 - every case of it fails with it, once
                done[version] = exc
        got = done[version]
        if isinstance(got, Exception):
            raise got
        return got

    return of


@pytest.mark.parametrize(("c", "version"), PARAMS)
def test_spark_sql_agrees(c: Case, version: int,
                          outcomes: Callable[[int], dict[str, Outcome]]) -> None:
    out = outcomes(version)[_id(c, version)]
    *setup, last = c.statements
    for i, statement in enumerate(setup):
        assert out.ours[i] is None and out.theirs[i] is None, (
            f"setup {statement}: schemalab {out.ours[i]!r}, Spark {out.theirs[i]}")
    ours, theirs = out.ours[-1], out.theirs[-1]
    if c.expect == OK:
        assert ours is None and theirs is None, (
            f"{last}: schemalab {ours!r}, Spark {theirs}")
        assert out.ours_facts == out.theirs_facts, _diff(out.ours_facts, out.theirs_facts)
        assert out.ours_read is not None and out.spark_read is not None
        assert "error" not in out.spark_read, f"Spark cannot read it: {out.spark_read}"
        assert out.ours_read[0] == out.spark_read["columns"]
        assert comparable(out.ours_read[1]) == comparable(out.spark_read["rows"])
        return
    assert theirs is not None, f"Iceberg's Spark accepted {last}"
    assert ours is not None, f"schemalab accepted {last}; Spark: {theirs}"
    assert not ours.startswith("CRASH"), ours
    if c.expect == SPARK:
        assert theirs.by_spark, f"{last}: Iceberg refused it, not Spark: {theirs}"
        return
    assert not theirs.by_spark, f"{last}: Spark's analyzer refused it: {theirs}"
    assert theirs.java_part in ours, (
        f"{last}:\n schemalab: {ours}\n Java:      {theirs.java_part}\n ({theirs})")


def _diff(ours: dict[str, Any] | None, theirs: dict[str, Any] | None) -> str:
    if ours is None or theirs is None:
        return f"ours {ours}, theirs {theirs}"
    keys = [k for k in sorted(set(ours) | set(theirs)) if ours.get(k) != theirs.get(k)]
    return "metadata differs:\n" + "\n".join(
        f" {k}:\n  schemalab: {json.dumps(ours.get(k), sort_keys=True)}\n"
        f"  Spark:     {json.dumps(theirs.get(k), sort_keys=True)}" for k in keys)


# ---- every snapshot, deletes --------------------------------------------------------------

def _assert_spark_reads_every_snapshot(iceberg_spark: IcebergSpark, warehouse: Path,
                                       t: Any, refs: tuple[str, ...] = ()) -> int:
    versions: list[int | str | None] = [None, *(s.snapshot_id for s in t.snapshots), *refs]
    theirs = iceberg_spark.read_many([(warehouse, "default.t", v) for v in versions])
    for v, got in zip(versions, theirs, strict=True):
        frame = (t.read(ref=v) if isinstance(v, str) else t.read(snapshot_id=v))
        columns, _, rows = canonical_frame(frame)
        assert columns == got["columns"], v
        assert comparable(rows) == comparable(got["rows"]), (
            f"at {v}\n schemalab: {rows}\n Spark:     {got['rows']}")
    return len(versions)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_spark_reads_every_snapshot(version: int, tmp_path: Path, spark: Any,
                                    iceberg_spark: IcebergSpark) -> None:
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql(CREATE.format(v=version))
    for rows in ROWS:
        wh.sql(rows)
    wh.sql("ALTER TABLE t ADD COLUMN s.z BIGINT AFTER x; ALTER TABLE t ALTER COLUMN id TYPE "
           "BIGINT; ALTER TABLE t RENAME COLUMN s.y TO yy; ALTER TABLE t DROP COLUMN b; "
           "ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH months(ts); "
           "ALTER TABLE t ADD COLUMN late STRING FIRST; ALTER TABLE t ADD PARTITION FIELD late")
    wh.sql("INSERT INTO t (late, id, name, s, ts, q) VALUES ('l', 10, 'after', "
           "named_struct('x', 3, 'z', 7L, 'yy', 'r'), TIMESTAMP'2024-03-04 05:06:07', 1)")
    wh.sql("ALTER TABLE t ALTER COLUMN f TYPE DOUBLE; ALTER TABLE t DROP PARTITION FIELD p")
    wh.sql("INSERT INTO t (id, q, f, p) VALUES (11, 2, 0.25, 'p3')")
    t = wh.table("t")
    assert _assert_spark_reads_every_snapshot(iceberg_spark, tmp_path, t) == 5


@pytest.mark.parametrize("version", [2, 3])
def test_spark_reads_deletes(version: int, tmp_path: Path, spark: Any,
                             iceberg_spark: IcebergSpark) -> None:
    """Position delete files (v2) and deletion vectors (v3) as schemalab writes them, before
    and after ALTERs and partition evolution, on the main branch and a branch."""
    wh = sl.Warehouse(tmp_path, spark=spark, format="iceberg")
    wh.sql("CREATE TABLE t (id INT, name STRING, p STRING) PARTITIONED BY (p) "
           f"TBLPROPERTIES ('format-version' = '{version}')")
    wh.sql("INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a', 'x'), "
           "(2, 'b', 'x'), (5, 'e', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")
    wh.sql("DELETE FROM t WHERE id IN (1, 3)")
    wh.sql("ALTER TABLE t ADD COLUMN q BIGINT; ALTER TABLE t RENAME COLUMN name TO nm; "
           "ALTER TABLE t ALTER COLUMN id TYPE BIGINT; ALTER TABLE t ADD PARTITION FIELD "
           "bucket(2, id)")
    wh.sql("INSERT INTO t VALUES (6, 'f', 'x', 60), (7, 'g', 'z', 70), (8, 'h', 'x', 80)")
    wh.sql("ALTER TABLE t CREATE BRANCH dev")
    wh.sql("DELETE FROM t WHERE id = 2 OR q = 70")
    wh.sql("DELETE FROM t WHERE nm = 'd'")
    t = wh.table("t")
    assert _assert_spark_reads_every_snapshot(iceberg_spark, tmp_path, t, ("dev",)) == 7
    kinds = {d.entry.file_format for s in t.snapshots for d in t.delete_files(s.snapshot_id)}
    assert kinds == ({"puffin"} if version == 3 else {"parquet"})
