"""The Iceberg side of :class:`schemalab.Warehouse`'s statements: CREATE TABLE of an Iceberg
table (Hadoop-catalog layout), Iceberg's ALTER extensions (partition fields, identifier
fields, branches and tags, write order), DESCRIBE and INSERT messages, and the ref
selectors of Iceberg's SparkCatalog (``t.branch_dev``, ``t.tag_v1``)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import SqlError, TableExistsError
from schemalab.iceberg.types import iceberg_type_text
from schemalab.iceberg.write import WritableIcebergTable, create_iceberg_table, hadoop
from schemalab.iceberg.write.refs import (
    apply_ref,
    commit_if_changed,
    dry_empty_branch,
    empty_append,
    select,
)
from schemalab.iceberg.write.sort_order import set_write_order
from schemalab.paimon import paths
from schemalab.paimon.tag_sql import create_or_replace_tag, tag_statement
from schemalab.sql import (
    CreateTable,
    DeleteFrom,
    IcebergAlter,
    IcebergRefStatement,
    IcebergWriteOrder,
    Insert,
    PaimonTagStatement,
    TableName,
    Update,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from schemalab.sql import TableName
    from schemalab.table import Table


def create_iceberg(warehouse: str, db: str, table: str, stmt: CreateTable, existed: bool,
                   spark: SparkSession | None) -> str:
    """CREATE TABLE of an Iceberg table (``USING iceberg``, or an Iceberg warehouse)."""
    if existed:
        if stmt.if_not_exists:
            return f"Table {db}.{table} already exists."
        raise TableExistsError(f"Table {db}.{table} already exists.", table=f"{db}.{table}",
                               rule="table-must-be-new")
    if stmt.primary_keys:
        raise SqlError(f"Table {db}.{table}: PRIMARY KEY is Paimon's; an Iceberg table names "
                       "its identifier fields with ALTER TABLE .. SET IDENTIFIER FIELDS",
                       table=f"{db}.{table}", rule="unsupported-sql")
    parts = stmt.transforms or tuple(("identity", k) for k in stmt.partition_keys)
    t = create_iceberg_table(hadoop.table_dir(warehouse, db, table), f"{db}.{table}",
                             stmt.columns, partitioning=parts, properties=dict(stmt.options),
                             comment=stmt.comment, spark=spark)
    return f"Created {t.name} (Iceberg v{t.format_version}, schema 0)."


def iceberg_alter(t: Table | WritableIcebergTable, stmt: IcebergAlter) -> str:
    """Iceberg's SQL extensions: partition evolution, identifier fields."""
    if not isinstance(t, WritableIcebergTable):
        what = "PARTITION FIELD" if stmt.partitioning else "IDENTIFIER FIELDS"
        raise SqlError(f"ALTER TABLE .. {stmt.action} {what} is Iceberg's; {t.name} is a "
                       "Paimon table (its partition keys are fixed at CREATE, its primary key "
                       "is the table option 'primary-key')", table=t.name,
                       rule="unsupported-sql")
    return t.evolve(stmt.action, stmt.transforms, stmt.alias, stmt.fields)


def describe_rows(t: WritableIcebergTable) -> list[tuple[Any, ...]]:
    """DESCRIBE's rows: name, Iceberg's type text, comment, field id."""
    return [(f.name, iceberg_type_text(f.type), f.doc, f.id) for f in t.schema.fields]


def insert_message(t: WritableIcebergTable, df: DataFrame, stmt: Insert) -> str:
    s = t.insert(df, columns=stmt.columns, by_position=True, overwrite=stmt.overwrite)
    added = 0 if s is None else int(s.summary.get("added-records", 0))
    at = "" if s is None else f" as snapshot {s.snapshot_id}"
    return f"Inserted {added} rows into {t.name}{at}."


# ---- refs and write order (Iceberg's Spark SQL extensions) ---------------------------------

#: the identifiers Iceberg's SparkCatalog reads as a selector of table ``t``: ``t.branch_dev``
_SELECTOR = re.compile(r"^(branch|tag|snapshot_id)_(.+)$", re.S)


def _iceberg_only(t: Any, stmt: Any, what: str) -> WritableIcebergTable:
    if not isinstance(t, WritableIcebergTable):
        raise SqlError(f"ALTER TABLE .. {what} is Iceberg's; {t.name} is a Paimon table (its "
                       "tags and branches: CALL sys.create_tag / sys.create_branch)",
                       table=t.name, rule="unsupported-sql")
    return t


def iceberg_ref(t: Table | WritableIcebergTable, stmt: IcebergRefStatement) -> str:
    """``ALTER TABLE t CREATE|REPLACE|DROP BRANCH|TAG ..`` as one commit (none when nothing
    changes); the statement's message. A Paimon table takes ``CREATE``/``REPLACE TAG``, as
    Paimon's Spark extensions spell them too (:mod:`schemalab.paimon.tag_sql`)."""
    what = f"{'DROP' if stmt.action == 'drop' else 'CREATE'} {stmt.kind.upper()}"
    if not isinstance(t, WritableIcebergTable) and stmt.kind == "tag":
        if stmt.action == "drop":
            raise SqlError(f"ALTER TABLE .. DROP TAG is Iceberg's; {t.name} is a Paimon table: "
                           f"ALTER TABLE {t.name} DELETE TAG {stmt.ref} deletes its tag",
                           table=t.name, rule="unsupported-sql")
        return create_or_replace_tag(t, stmt)
    table = _iceberg_only(t, stmt, what)
    root = table._root

    def change(d: dict[str, Any], dry: bool) -> dict[str, Any]:
        apply_ref(d, stmt, root.name, dry_empty_branch if dry else empty_append(root.path))
        return d

    changed = commit_if_changed(table.commit_target, root.name, change)
    table.refresh()
    if not changed:
        return f"{root.name}: {stmt.kind} {stmt.ref} unchanged (no commit)."
    if stmt.action == "drop":
        return f"Dropped {stmt.kind} {stmt.ref} of {root.name} (metadata v{table._version()})."
    ref = table._root.metadata.refs.get(stmt.ref, {})
    return (f"{'Replaced' if stmt.replace else 'Created'} {stmt.kind} {stmt.ref} of "
            f"{root.name} at snapshot {ref.get('snapshot-id')} "
            f"(metadata v{table._version()}).")


def paimon_tags(t: Table | WritableIcebergTable, stmt: PaimonTagStatement
                ) -> tuple[str, list[tuple[Any, ...]]]:
    """Paimon's ``DELETE TAG``, ``RENAME TAG`` and ``SHOW TAGS``; Iceberg's Spark SQL has none
    of them, and names what it has instead."""
    if isinstance(t, WritableIcebergTable):
        instead = {"delete": f"ALTER TABLE {t.name} DROP TAG {stmt.tag}",
                   "rename": "no RENAME TAG: drop the tag and create it again at its snapshot",
                   "show": f"SELECT * FROM {t.name}.refs lists its branches and tags"}
        what = "SHOW TAGS" if stmt.action == "show" else f"ALTER TABLE .. {stmt.action.upper()} TAG"
        raise SqlError(f"{what} is Paimon's; {t.name} is an Iceberg table: "
                       f"{instead[stmt.action]}", table=t.name, rule="unsupported-sql")
    return tag_statement(t, stmt)


def iceberg_write_order(t: Table | WritableIcebergTable, stmt: IcebergWriteOrder) -> str:
    """``ALTER TABLE t WRITE ..``: the table's sort order and distribution mode."""
    table = _iceberg_only(t, stmt, "WRITE ORDERED BY")
    root = table._root

    def change(d: dict[str, Any], dry: bool) -> dict[str, Any]:
        set_write_order(d, stmt.order, stmt.distribution_mode, root.name)
        return d

    changed = commit_if_changed(table.commit_target, root.name, change)
    table.refresh()
    m = table.metadata
    return (f"{root.name}: sort order {m.default_sort_order_id}, distribution mode "
            f"{m.properties.get('write.distribution-mode', 'default')}"
            + (f" (metadata v{table._version()})." if changed else " (unchanged, no commit)."))


def iceberg_selection(warehouse: str, name: str | TableName,
                      spark: SparkSession | None) -> WritableIcebergTable | None:
    """``t.branch_dev``, ``db.t.branch_dev``, ``t.tag_v1``, ``t.snapshot_id_N`` naming an
    Iceberg table of the warehouse, as Iceberg's SparkCatalog loads them: when no table
    has that very name, the part before the selector names the table (unqualified: in
    ``default``). None when the name is no such selector (or no name: ``resolve`` refuses
    it)."""
    if not isinstance(name, (str, TableName)):
        return None
    if isinstance(name, str):
        if "." not in name:
            return None
        db, _, rest = name.rpartition(".") if name.count(".") == 1 else name.partition(".")
        name = TableName(db or None, rest)
    base, dot, last = name.table.rpartition(".")
    m = _SELECTOR.match(last)
    if m is None or (not dot and name.database is None):
        return None
    db, table = (name.database or paths.DEFAULT_DATABASE, base) if dot else \
        (paths.DEFAULT_DATABASE, name.database or "")
    if not dot and (hadoop.is_table(warehouse, name.database or "", last) or fileio.is_dir(
            os.path.join(paths.table_dir(warehouse, name.database or "", last), "schema"))):
        return None  # a table of that very name
    paths.check_name(db, "database")
    paths.check_name(table, "table")
    if not hadoop.is_table(warehouse, db, table):
        return None
    root = WritableIcebergTable(hadoop.table_dir(warehouse, db, table), f"{db}.{table}",
                                spark=spark)
    return select(root, m.group(1), m.group(2))


def refuse_selector(warehouse: str, name: str | TableName, what: str) -> None:
    """DROP TABLE / RENAME of ``t.branch_dev`` (a ref of table ``t``, not a table): refused,
    naming the statement that does it to the ref."""
    ref = iceberg_selection(warehouse, name, None)
    if ref is not None:
        root = ref._root
        raise SqlError(f"{what} {name if isinstance(name, str) else name.sql()}: it names "
                       f"{ref.name.removeprefix(root.name + '.')} of Iceberg table "
                       f"{root.name}, not a table; use ALTER TABLE {root.name} DROP BRANCH|TAG "
                       "for a ref", table=root.name, rule="unsupported-sql")


def delete_message(run_query: Callable[[str, Sequence[TableName]], DataFrame],
                   t: WritableIcebergTable, stmt: DeleteFrom) -> str:
    """DELETE FROM an Iceberg table (:mod:`schemalab.iceberg.write.delete`); the condition
    runs through the warehouse's ``run_query``, so its subqueries may read our tables. Its
    columns may be qualified as Spark resolves them (``t.c``, ``db.t.c``); a condition
    Spark folds to FALSE or NULL deletes nothing and commits nothing
    (``SparkTable.deleteWhere``), one it folds to TRUE deletes every row."""
    from schemalab.iceberg.write.delete import delete_rows
    from schemalab.sql.qualified import unqualify
    from schemalab.sql.queries import view_name

    where = stmt.where
    if where is not None and not stmt.where_tables:
        folded = _constant(t, where)
        if folded is not None and not folded:
            return f"Deleted 0 rows from {t.name} (the condition is always false; no commit)."
        if folded:
            where = None
    if where is not None:
        db, _, table = t.name.partition(".")
        where = unqualify(where, db, table)

    def matching(rows: DataFrame) -> DataFrame:
        view = view_name("__sl_delete", t.name)
        rows.createOrReplaceTempView(view)
        alias = "`" + stmt.name.table.replace("`", "``") + "`"
        return run_query(f"SELECT * FROM {view} AS {alias} WHERE {where}",
                         stmt.where_tables)

    snap, n = delete_rows(t, None if where is None else matching,
                          row_level=bool(stmt.where_tables))
    return f"Deleted {n} rows from {t.name} as snapshot {snap.snapshot_id}."


def _constant(t: WritableIcebergTable, where: str) -> bool | None:
    """The condition's value when Spark folds it to a constant (it names no column): True,
    False (FALSE or NULL); None when it depends on the rows."""
    try:
        df = t.spark.sql(f"SELECT CAST(({where}) AS BOOLEAN) AS c")
    except Exception:  # noqa: BLE001 - it names a column (or is wrong: the DELETE says so)
        return None
    try:  # rand() > 2 is no constant Spark folds (a classic session's plan says so)
        if not df._jdf.queryExecution().analyzed().deterministic():
            return None
    except AttributeError:  # Spark Connect: no JVM plan at hand
        pass
    return bool(df.collect()[0][0])


def update_message(run_query: Callable[[str, Sequence[TableName]], DataFrame],
                   t: Table | WritableIcebergTable, stmt: Update) -> str:
    """UPDATE of an Iceberg table (:mod:`schemalab.iceberg.write.update`): the condition and
    the new values run through the warehouse's ``run_query`` (their subqueries may read our
    tables), with columns qualified as in DELETE."""
    from schemalab.iceberg.write.update import update_rows
    from schemalab.sql.qualified import unqualify
    from schemalab.sql.queries import view_name

    if not isinstance(t, WritableIcebergTable):
        raise SqlError(f"UPDATE {t.name}: schemalab updates Iceberg tables; {t.name} is a "
                       "Paimon table (DELETE FROM the rows and INSERT their new values)",
                       table=t.name, rule="unsupported-statement")
    db, _, table = t.name.partition(".")
    known = {f.name.lower() for f in t.schema.fields}
    for column, _ in stmt.assignments:
        if column.lower() not in known:
            raise SqlError(f"UPDATE {t.name}: no column {column} to SET (columns: "
                           f"{', '.join(f.name for f in t.schema.fields)})", table=t.name,
                           column=column, rule="column-must-exist")
    sets = {c.lower(): unqualify(e, db, table) for c, e in stmt.assignments}
    if len(sets) < len(stmt.assignments):  # Spark's "Multiple assignments for 'c'"
        twice = next(c for i, (c, _) in enumerate(stmt.assignments)
                     if c.lower() in {x.lower() for x, _ in stmt.assignments[:i]})
        raise SqlError(f"UPDATE {t.name}: multiple assignments for '{twice}'", table=t.name,
                       column=twice, rule="unsupported-sql")
    where = None if stmt.where is None else unqualify(stmt.where, db, table)
    alias = "`" + stmt.name.table.replace("`", "``") + "`"

    def matching(rows: DataFrame) -> DataFrame:
        view = view_name("__sl_update", t.name)
        rows.createOrReplaceTempView(view)
        return run_query(f"SELECT * FROM {view} AS {alias}"
                         + ("" if where is None else f" WHERE {where}"), stmt.tables)

    def assign(matched: DataFrame) -> DataFrame:
        view = view_name("__sl_updated", t.name)
        matched.createOrReplaceTempView(view)
        cols = [f"({sets[f.name.lower()]}) AS `{f.name}`" if f.name.lower() in sets
                else f"{alias}.`{f.name}`" for f in t.schema.fields]
        return run_query(f"SELECT {', '.join(cols)} FROM {view} AS {alias}", stmt.tables)

    snap, n = update_rows(t, matching, assign)
    return f"Updated {n} rows of {t.name} as snapshot {snap.snapshot_id}."
