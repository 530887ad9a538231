"""``t TIMESTAMP AS OF <expression>`` in a query, as the engines' Spark integrations read it.

Spark folds the expression to one TIMESTAMP in the session time zone (a number is seconds
since the epoch, as ``CAST(n AS TIMESTAMP)``) and hands the catalog microseconds
(``TimeTravelSpec.create``); the expression must be constant: no column, no subquery, no
aggregate, nothing non-deterministic. The catalog turns microseconds into milliseconds
(Java's long division) and picks a snapshot:

* Paimon (``SparkCatalog.loadTable(ident, timestamp)`` → ``scan.timestamp-millis`` →
  ``StaticFromTimestampStartingScanner``): the snapshot ``SnapshotManager
  .earlierOrEqualTimeMills`` finds (:meth:`schemalab.table.Table.snapshot_as_of`);
* Iceberg (``SparkCatalog.loadTable(ident, timestamp)`` → ``SnapshotUtil
  .snapshotIdAsOfTime``): the newest snapshot-log entry at or before that time
  (:meth:`schemalab.iceberg.table.IcebergTable.snapshot_as_of`).

Either way the read is that snapshot's, in that snapshot's schema (as ``VERSION AS OF`` an
id). Iceberg refuses a time travel of a branch or tag selection (``t.branch_dev``); Paimon
reads a branch (``t$branch_dev``) as of a time in the branch's own snapshots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from schemalab.errors import SqlError
from schemalab.sql.queries import AsOfTime

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["java_millis", "read_as_of", "timestamp_micros"]


# what Spark's time travel refuses and a SELECT of the expression alone would run: a
# subquery, an aggregate or window function (a column fails in that SELECT already)
_NOT_CONSTANT: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Query, "a subquery"),
    (exp.AggFunc, "an aggregate function"),
    (exp.Window, "a window function"),
)


def _refuse(table: str, as_of: AsOfTime, why: str) -> SqlError:
    return SqlError(f"Table {table}: TIMESTAMP AS OF {as_of.expression}: {why}; the "
                    "timestamp must be a constant expression Spark casts to TIMESTAMP (a "
                    "string such as '2026-11-28 04:40:00', seconds since the epoch, or "
                    "current_timestamp() - INTERVAL 1 HOUR)", table=table,
                    rule="time-travel-timestamp")


def timestamp_micros(spark: SparkSession, as_of: AsOfTime, table: str) -> int:
    """The time ``as_of`` names, in microseconds since the epoch, as Spark evaluates it for
    time travel: cast to TIMESTAMP in the session time zone; an expression Spark cannot fold
    to one timestamp is a SqlError naming ``table`` (rule ``time-travel-timestamp``)."""
    if as_of.tree is not None:
        for kind, what in _NOT_CONSTANT:
            node = as_of.tree.find(kind)
            if node is not None:
                raise _refuse(table, as_of,
                              f"{what} ({node.sql(dialect='spark')}) is no constant")
    # try_cast: Spark's own check (an ANSI cast must exist) and NULL for a value that
    # does not cast, as TimeTravelSpec's non-ANSI Cast
    sql = f"SELECT unix_micros(try_cast(({as_of.expression}) AS TIMESTAMP)) AS micros"
    try:
        df = spark.sql(sql)
        _check_plan(df, table, as_of)
        rows = df.collect()
    except SqlError:
        raise
    except Exception as e:  # noqa: BLE001 - Spark's analysis error, said in one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise _refuse(table, as_of, f"Spark cannot evaluate it as a TIMESTAMP ({first})") from None
    if len(rows) != 1 or rows[0][0] is None:
        raise _refuse(table, as_of, "it is no valid timestamp")
    return int(rows[0][0])


def _check_plan(df: DataFrame, table: str, as_of: AsOfTime) -> None:
    """One row computed from constants (a Project over no relation) and deterministic: what
    TimeTravelSpec asks (a classic session's plan says so; Spark Connect has none at hand)."""
    try:
        plan: Any = df._jdf.queryExecution().analyzed()
    except AttributeError:
        return
    if not plan.deterministic():
        raise _refuse(table, as_of, "it is not deterministic")
    child = plan.children().head() if plan.children().size() == 1 else None
    if plan.nodeName() != "Project" or child is None or child.nodeName() != "OneRowRelation":
        raise _refuse(table, as_of, f"it is no single constant value (Spark plans "
                      f"{plan.nodeName()})")


def java_millis(micros: int) -> int:
    """Microseconds to milliseconds as both catalogs do it (Java's ``micros / 1000`` and
    ``TimeUnit.MICROSECONDS.toMillis``: truncated toward zero)."""
    return micros // 1000 if micros >= 0 else -(-micros // 1000)


def read_as_of(t: Any, as_of: AsOfTime, spark: SparkSession) -> DataFrame:
    """Table ``t`` (Paimon or Iceberg) read ``TIMESTAMP AS OF`` ``as_of``: the snapshot its
    engine picks, in that snapshot's schema."""
    if getattr(t, "_root_table", None) is not None:  # an Iceberg branch or tag selection
        raise SqlError(f"Cannot do time-travel based on both table identifier and AS OF: "
                       f"{t.name} selects {t.name.removeprefix(t._root.name + '.')} of "
                       f"Iceberg table {t._root.name}; read {t._root.name} TIMESTAMP AS OF "
                       "..", table=t._root.name, rule="one-read-target")
    snap = t.snapshot_as_of(java_millis(timestamp_micros(spark, as_of, t.name)))
    return t.read(snapshot_id=t.snapshot_id_of(snap))  # type: ignore[no-any-return]
