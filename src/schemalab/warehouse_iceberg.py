"""The Iceberg side of :class:`schemalab.Warehouse`'s statements: CREATE TABLE of an Iceberg
table (Hadoop-catalog layout), Iceberg's ALTER extensions, DESCRIBE and INSERT messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from schemalab.errors import SqlError, TableExistsError
from schemalab.iceberg.types import iceberg_type_text
from schemalab.iceberg.write import WritableIcebergTable, create_iceberg_table, hadoop
from schemalab.sql import CreateTable, DeleteFrom, IcebergAlter, Insert

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


def delete_message(run_query: Callable[[str, Sequence[TableName]], DataFrame],
                   t: WritableIcebergTable, stmt: DeleteFrom) -> str:
    """DELETE FROM an Iceberg table (:mod:`schemalab.iceberg.write.delete`); the condition
    runs through the warehouse's ``run_query``, so its subqueries may read our tables."""
    from schemalab.iceberg.write.delete import delete_rows
    from schemalab.sql.queries import view_name

    def select(rows: DataFrame) -> DataFrame:
        view = view_name("__sl_delete", t.name)
        rows.createOrReplaceTempView(view)
        alias = "`" + stmt.name.table.replace("`", "``") + "`"
        return run_query(f"SELECT * FROM {view} AS {alias} WHERE {stmt.where}",
                         stmt.where_tables)

    snap, n = delete_rows(t, None if stmt.where is None else select)
    at = "" if snap is None else f" as snapshot {snap.snapshot_id}"
    return f"Deleted {n} rows from {t.name}{at}."
