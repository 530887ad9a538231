"""A Paimon-layout warehouse: databases, tables, and SQL over them.

    >>> import schemalab as sl, tempfile
    >>> wh = sl.Warehouse(tempfile.mkdtemp())
    >>> wh.sql("CREATE TABLE T (a STRING, b STRING); ALTER TABLE T ADD COLUMN c INT")
    >>> [f.name for f in wh.table("T").schema.fields]
    ['a', 'b', 'c']

Spark starts only when data is touched (INSERT, SELECT, reads): DDL runs in plain Python.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.checkpoint import Checkpoint, keeper
from schemalab.errors import (
    InvalidIdentifierError,
    SchemaLabError,
    SqlError,
    TableExistsError,
    TableNotFoundError,
    with_message,
)
from schemalab.history.names import close_names, unresolved_column
from schemalab.iceberg.write import WritableIcebergTable, hadoop
from schemalab.paimon import calls, paths
from schemalab.paimon.features import row_tracking_enabled as tracks_rows
from schemalab.paimon.refs import BRANCH_SUFFIX
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.schema.apply import new_table_schema
from schemalab.schema.changes import ColumnSpec
from schemalab.spark import configure_session, default_session
from schemalab.sql import (
    AlterTable,
    Call,
    CreateTable,
    DeleteFrom,
    DescribeTable,
    DropTable,
    IcebergAlter,
    IcebergRefStatement,
    IcebergWriteOrder,
    Insert,
    PaimonTagStatement,
    Query,
    RenameTable,
    ShowTables,
    Statement,
    TableName,
    Update,
    parse_statements,
    rewrite_tables,
)
from schemalab.sql.queries import AsOfTime, Versioned, versioned_tables, view_name
from schemalab.sql.split import partly_applied
from schemalab.sql.system_columns import hide_from_stars, named_system_columns
from schemalab.table import Table
from schemalab.time_travel import read_as_of
from schemalab.warehouse_iceberg import (
    create_iceberg,
    delete_message,
    describe_rows,
    iceberg_alter,
    iceberg_ref,
    iceberg_selection,
    iceberg_write_order,
    insert_message,
    paimon_tags,
    refuse_selector,
    update_message,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


#: the Warehouse subclass for a catalog that is no warehouse directory, registered by
#: :mod:`schemalab.catalog_warehouse`
FOR_CATALOGS: list[type[Warehouse]] = []


@dataclass
class StatementResult:
    """What one statement did: a message, and rows for statements that return some."""

    statement: str
    message: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] | None = None
    #: Spark DDL of ``rows`` (e.g. ``"name STRING, id INT"``), for turning them into a frame
    row_schema: str = ""
    dataframe: DataFrame | None = None


class Warehouse:
    """A warehouse: a local directory or an object-store URI (``s3://bucket/wh``). ``spark``
    may be a user's own session (local, a cluster, or Spark Connect); otherwise
    :func:`schemalab.local_spark` is started the first time data is touched. ``options`` are
    Paimon's catalog options for the store (``s3.endpoint``, ``s3.access-key``, ...); by
    default the standard environment configures it. ``catalog`` (a name or properties, see
    :mod:`schemalab.catalogs`) opens a catalog's tables instead of a path."""

    def __new__(cls, path: str | os.PathLike[str] | None = None,
                spark: SparkSession | None = None, options: dict[str, str] | None = None, *,
                catalog: str | dict[str, Any] | None = None,
                format: str = "paimon") -> Warehouse:
        # an Iceberg catalog or Paimon's REST catalog: the class schemalab.catalog_warehouse
        # registers (the package's Warehouse attribute imports it; it imports this module)
        if catalog is not None and cls is Warehouse:
            from schemalab.catalogs import catalog_config, is_paimon_filesystem

            if not is_paimon_filesystem(catalog_config(catalog)[1]):
                if not FOR_CATALOGS:
                    raise SchemaLabError("Warehouse(catalog=...) needs schemalab.catalog_"
                                         "warehouse imported (sl.Warehouse does it)",
                                         rule="catalog-config")
                return super().__new__(FOR_CATALOGS[0])
        return super().__new__(cls)

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 spark: SparkSession | None = None, options: dict[str, str] | None = None, *,
                 catalog: str | dict[str, Any] | None = None, format: str = "paimon") -> None:
        if format not in ("paimon", "iceberg"):
            raise SqlError(f"Warehouse format must be 'paimon' or 'iceberg', not {format!r}",
                           rule="unsupported-statement")
        #: the format CREATE TABLE makes when the statement says no USING
        self.format = format
        if catalog is not None:  # Paimon's filesystem catalog: its warehouse directory
            from schemalab.catalogs import paimon_warehouse

            path, found = paimon_warehouse(catalog)
            options = {**found, **(options or {})}
        if path is None:
            raise SchemaLabError("A Warehouse needs a path, or catalog=... (a name or "
                                 "properties)", rule="catalog-config")
        self.path = fileio.normalize(path)
        fileio.configure(self.path, options)
        fileio.makedirs(self.path)
        self._spark = spark
        if spark is not None:
            configure_session(spark)

    def __repr__(self) -> str:
        return f"Warehouse({self.path!r})"

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = default_session()
        return self._spark

    @property
    def spark_started(self) -> bool:
        return self._spark is not None

    # ---- checkpoints -----------------------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """A token of the warehouse as it is now: its files' names and sizes and its hint
        files' contents, no copy of any data (see :mod:`schemalab.checkpoint`)."""
        return keeper(self.path).checkpoint()

    def restore(self, token: Checkpoint) -> None:
        """Bring the warehouse back to ``token`` exactly: the same files listed, the same
        reads. Files created since go; files dropped since come back from what was kept
        of them when they went."""
        keeper(self.path).restore(token)

    # ---- catalog ---------------------------------------------------------------------------

    def resolve(self, name: str | TableName) -> tuple[str, str]:
        """``(database, table)`` for ``"t"``, ``"db.t"`` or a parsed name; unqualified names
        live in database ``default``. Use a :class:`TableName` (or backticks in SQL) for
        names that contain dots."""
        if isinstance(name, TableName):
            db, table = name.database or paths.DEFAULT_DATABASE, name.table
        elif not isinstance(name, str):
            raise InvalidIdentifierError(f"A table name is a string (or a TableName), not "
                                         f"{type(name).__name__}", rule="valid-identifier")
        elif "." in name:
            db, table = name.split(".", 1)
        else:
            db, table = paths.DEFAULT_DATABASE, name
        paths.check_name(db, "database")
        paths.check_name(table, "table")
        return db, table

    def table_path(self, name: str | TableName) -> str:
        db, table = self.resolve(name)
        return paths.table_dir(self.path, db, table)

    def table(self, name: str | TableName) -> Table | WritableIcebergTable:
        """Table ``name`` of this warehouse (``"t"``, ``"db.t"`` or a parsed name). Its first
        call lists the schema directory anew: an ALTER made in between, through another
        table object or another writer, is seen."""
        t = self._open_any(name)
        if isinstance(t, Table):
            t.schema_manager.refresh()
        return t

    def _open_any(self, name: str | TableName) -> Table | WritableIcebergTable:
        """A Paimon table, or an Iceberg table (Hadoop-catalog layout) of that name."""
        if (ref := iceberg_selection(self.path, name, self._spark)) is not None:
            return ref  # t.branch_dev, t.tag_v1: Iceberg's SparkCatalog selectors
        db, table = self.resolve(name)
        if hadoop.is_table(self.path, db, table):
            return WritableIcebergTable(hadoop.table_dir(self.path, db, table), f"{db}.{table}",
                                        spark=self._spark)
        return self._open(name)

    def _open(self, name: str | TableName) -> Table:
        """A table for a statement that uses it right away: the listing that found the table
        is kept for its first call (one listing per table per statement)."""
        db, table = self.resolve(name)
        base, sep, branch = table.partition(BRANCH_SUFFIX)
        # `t$branch_dev`: branch dev of table t, as Paimon names it (`t$branch_dev$files`
        # is a system table of that branch: no table, see _system_table)
        if sep and base and "$" not in branch:
            return self._open(TableName(db, base)).branch(branch)
        t = Table(paths.table_dir(self.path, db, table), f"{db}.{table}", warehouse=self)
        if not t.schema_manager.list_ids():
            near = close_names(f"{db}.{table}", self.list_tables())
            raise TableNotFoundError(f"Table {db}.{table} does not exist in {self.path}."
                                     + (f" Did you mean {near}?" if near else ""),
                                     table=f"{db}.{table}", rule="table-must-exist")
        return t

    def _open_or_none(self, name: TableName) -> Table | None:
        try:
            return self._open(name)
        except TableNotFoundError:
            return None

    def has_table(self, name: str | TableName) -> bool:
        try:
            self.table(name)
            return True
        except TableNotFoundError:
            return False

    def list_databases(self) -> list[str]:
        paimon = {n[:-3] for n in fileio.list_names(self.path)
                  if n.endswith(".db") and fileio.is_dir(os.path.join(self.path, n))}
        return sorted(paimon | set(hadoop.namespaces(self.path)))

    def list_tables(self, database: str | None = None) -> list[str]:
        """Qualified names ``db.table`` of every table (or of one database's tables)."""
        out = []
        for db in [database] if database else self.list_databases():
            d = paths.database_dir(self.path, db)
            for t in sorted(fileio.list_names(d)):
                if not t.startswith(".") and fileio.is_dir(os.path.join(d, t, "schema")):
                    out.append(f"{db}.{t}")
            out.extend(f"{db}.{t}" for t in hadoop.tables(self.path, db))
        return sorted(out)

    def create_table(self, name: str | TableName, columns: Sequence[ColumnSpec], *,
                     partition_keys: Sequence[str] = (), primary_keys: Sequence[str] = (),
                     options: dict[str, str] | None = None, comment: str | None = None,
                     if_not_exists: bool = False) -> Table:
        db, table = self.resolve(name)
        qualified = f"{db}.{table}"
        path = paths.table_dir(self.path, db, table)
        if self.has_table(name):
            if if_not_exists:
                return self._open(name)
            raise TableExistsError(f"Table {qualified} already exists.", table=qualified,
                                   rule="table-must-be-new")
        schema = new_table_schema(columns, partition_keys=partition_keys,
                                  primary_keys=primary_keys, options=options, comment=comment,
                                  table=qualified)
        if schema.primary_keys:
            from schemalab.paimon.primary_key import trimmed_primary_keys

            trimmed_primary_keys(schema, qualified)  # Paimon refuses such a table at CREATE
        SchemaManager(path, qualified).create(schema)
        return Table(path, qualified, warehouse=self)

    def drop_table(self, name: str | TableName, *, if_exists: bool = False) -> bool:
        refuse_selector(self.path, name, "DROP TABLE")  # t.branch_dev is no table
        db, table = self.resolve(name)
        if not self.has_table(name):
            if if_exists:
                return False
            raise TableNotFoundError(f"Table {db}.{table} does not exist.", table=f"{db}.{table}",
                                     rule="table-must-exist")
        path = paths.table_dir(self.path, db, table)
        if hadoop.is_table(self.path, db, table):
            path = hadoop.table_dir(self.path, db, table)
        if fileio.is_local(path):
            # Move aside first so no reader ever sees a half-deleted table.
            trash = os.path.join(os.path.dirname(path), f".dropped-{table}-{os.getpid()}")
            fileio.before_change(path)  # a checkpoint keeps what it lists before it goes
            os.rename(path, trash)
            fileio.delete_dir(trash)
        else:
            # no rename on object stores: the schema files go first, so the table is gone
            # for every reader before its data is
            fileio.delete_dir(os.path.join(path, "schema"))
            fileio.delete_dir(path)
        return True

    def rename_table(self, name: str | TableName, new_name: str | TableName) -> Table:
        refuse_selector(self.path, name, "ALTER TABLE .. RENAME")
        src = self.table(name)
        db, table = self.resolve(new_name)
        if self.has_table(new_name):
            raise TableExistsError(f"Table {db}.{table} already exists.", table=f"{db}.{table}",
                                   rule="table-must-be-new")
        dest = paths.table_dir(self.path, db, table)
        if not fileio.is_local(dest):
            raise SqlError(
                f"Cannot rename {src.name} on {fileio.scheme(dest)}://: an object store has no "
                "rename, so it would copy every file and be visible half-done. Create the new "
                "table and INSERT INTO it from the old one.", table=src.name,
                rule="rename-needs-local-disk")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        fileio.before_change(src.path)  # a checkpoint keeps what it lists before it goes
        os.rename(src.path, dest)
        return Table(dest, f"{db}.{table}", warehouse=self)

    # ---- SQL -------------------------------------------------------------------------------

    def sql(self, text: str) -> DataFrame | None:
        """Run one or more ``;``-separated statements; return the last one's result as a
        Spark DataFrame (None for statements that return no rows, such as ALTER)."""
        results = self.execute_sql(text)
        last = results[-1] if results else None
        if last is None:
            return None
        if last.dataframe is not None:
            return last.dataframe
        if last.rows is not None:
            return self.spark.createDataFrame(last.rows, last.row_schema)
        return None

    def execute_sql(self, text: str) -> list[StatementResult]:
        """Run every statement of ``text`` in order. When one fails, the error says which
        statements before it were applied (they stay applied: each is its own commit)."""
        statements = parse_statements(text)
        results: list[StatementResult] = []
        for number, stmt in enumerate(statements, start=1):
            try:
                results.append(self.execute(stmt))
            except SchemaLabError as e:
                if len(statements) == 1:
                    raise
                raise with_message(e, partly_applied(e.message, number, statements)) from e
        return results

    def execute(self, stmt: Statement) -> StatementResult:
        """Run one statement value."""
        handler = _HANDLERS.get(type(stmt))
        if handler is None:
            raise SqlError(f"Unsupported statement: {stmt.text}", rule="unsupported-statement")
        return handler(self, stmt)

    def _create(self, stmt: CreateTable) -> StatementResult:
        existed = self.has_table(stmt.name)
        if (stmt.using or self.format) == "iceberg":
            db, table = self.resolve(stmt.name)
            return StatementResult(stmt.text, create_iceberg(self.path, db, table, stmt, existed,
                                                             self._spark))
        if stmt.transforms:
            raise SqlError(f"Unsupported partition transform {stmt.transforms[0][0]} of "
                           f"{stmt.transforms[0][1]} in PARTITIONED BY: a Paimon table is "
                           "partitioned by plain top-level columns, e.g. PARTITIONED BY (dt)",
                           table=str(stmt.name), column=stmt.transforms[0][1],
                           rule="unsupported-sql")
        t = self.create_table(stmt.name, stmt.columns, partition_keys=stmt.partition_keys,
                              primary_keys=stmt.primary_keys, options=dict(stmt.options),
                              comment=stmt.comment, if_not_exists=stmt.if_not_exists)
        msg = f"Table {t.name} already exists." if existed else f"Created {t.name} (schema 0)."
        return StatementResult(stmt.text, msg)

    def _alter(self, stmt: AlterTable) -> StatementResult:
        ice = self._open_any(stmt.name)
        if isinstance(ice, WritableIcebergTable):
            return StatementResult(stmt.text, ice.alter_statement(stmt.changes))
        t = ice
        new = t.alter(*stmt.changes)
        return StatementResult(stmt.text, f"Altered {t.name}: schema {new.id}.")

    def _rename(self, stmt: RenameTable) -> StatementResult:
        t = self.rename_table(stmt.name, stmt.new_name)
        return StatementResult(stmt.text, f"Renamed to {t.name}.")

    def _drop(self, stmt: DropTable) -> StatementResult:
        dropped = self.drop_table(stmt.name, if_exists=stmt.if_exists)
        return StatementResult(stmt.text, "Dropped." if dropped else "No such table.")

    def _show(self, stmt: ShowTables) -> StatementResult:
        rows = [tuple(n.split(".", 1)) for n in self.list_tables(stmt.database)]
        return StatementResult(stmt.text, columns=["namespace", "tableName"], rows=rows,
                               row_schema="namespace STRING, tableName STRING")

    def _describe(self, stmt: DescribeTable) -> StatementResult:
        t = self._open_any(stmt.name)
        described: list[tuple[Any, ...]] = describe_rows(t) if isinstance(
            t, WritableIcebergTable) else [(f.name, f.type.sql(), f.description, f.id)
                                           for f in t.schema.fields]
        return StatementResult(
            stmt.text, columns=["col_name", "data_type", "comment", "field_id"],
            rows=described,
            row_schema="col_name STRING, data_type STRING, comment STRING, field_id INT")

    def _insert(self, stmt: Insert) -> StatementResult:
        t = self._open_any(stmt.name)
        df = self.run_query(stmt.query, stmt.query_tables)
        if isinstance(t, WritableIcebergTable):
            return StatementResult(stmt.text, insert_message(t, df, stmt))
        snap = t.insert(df, columns=stmt.columns, by_position=True, overwrite=stmt.overwrite)
        n = 0 if snap is None else snap.delta_record_count
        where = "" if snap is None else f" as snapshot {snap.id}"
        return StatementResult(stmt.text, f"Inserted {n} rows into {t.name}{where}.")

    def _delete(self, stmt: DeleteFrom) -> StatementResult:
        if isinstance(ice := self._open_any(stmt.name), WritableIcebergTable):
            return StatementResult(stmt.text, delete_message(self.run_query, ice, stmt))
        t = self._open(stmt.name)
        if stmt.where is not None and t.schema.primary_keys:
            # through run_query, so the condition's subqueries see our tables too
            query = f"SELECT * FROM {stmt.name.sql()} WHERE {stmt.where}"
            snap = t.delete_rows(self.run_query(query, (stmt.name, *stmt.where_tables)))
        else:
            snap = t.delete_where(stmt.where)
        return StatementResult(stmt.text, f"Deleted from {t.name}"
                               + ("" if snap is None else f" as snapshot {snap.id}") + ".")

    def _query(self, stmt: Query) -> StatementResult:
        df = self.run_query(stmt.sql, stmt.tables)
        return StatementResult(stmt.text, dataframe=df, columns=list(df.columns))

    def _call(self, stmt: Call) -> StatementResult:
        """Paimon's Spark procedures: ``sys.compact``, and the tag, branch, rollback and
        expire procedures (:mod:`schemalab.paimon.calls`)."""
        args = calls.arguments(stmt.procedure, stmt.arguments)
        done = calls.run(calls.procedure_name(stmt.procedure) or "compact",
                         self._open(args["table"]), args)
        return StatementResult(stmt.text, done.message, columns=done.columns,
                               rows=done.rows, row_schema=done.row_schema)

    def run_query(self, sql: str, tables: Sequence[TableName]) -> DataFrame:
        """Run Spark SQL in which our tables appear as their evolved reads (temp views);
        ``t VERSION AS OF 'tag'`` (or a snapshot id) reads that tag or snapshot, ``t TIMESTAMP
        AS OF ..`` the snapshot of that time."""
        mapping: dict[TableName | Versioned, str] = {}
        if "version" in sql.lower() or "time" in sql.lower():  # VERSION / TIMESTAMP AS OF
            for name, version in versioned_tables(sql):
                db, table = self.resolve(name)
                view = view_name(db, f"{table}\x00{version!r}")
                self._version_read(name, version).createOrReplaceTempView(view)
                mapping[(name, version)] = view
        # _ROW_ID / _SEQUENCE_NUMBER named (a._ROW_ID in a join): Paimon's metadata columns
        named, hidden = named_system_columns(sql), set[str]()
        for name in tables:
            db, table = self.resolve(name)
            try:
                # one table object per table: it reads each file once
                t = self._open_any(name)
                # the schema only where it decides (a row-tracking table among several):
                # t.schema is a public call of its own, which would list schema/ again
                cols = named.of(name, functools.partial(_tracks_rows, t))
                df = t.read(system_columns=cols) if cols and isinstance(t, Table) \
                    else t.read()
                hidden.update(cols)
            except TableNotFoundError:  # a system table ($row_tracking) has them as columns
                system = self._system_table(db, table)
                if system is None:
                    continue  # a Spark table or view of the user's; let Spark resolve it
                df = system
            view = view_name(db, table)
            df.createOrReplaceTempView(view)
            mapping[name] = view
        try:
            query = rewrite_tables(sql, mapping) if mapping else sql
            return self.spark.sql(hide_from_stars(query, tuple(sorted(hidden)))
                                  if hidden and mapping else query)
        except Exception as e:
            error = unresolved_column(e, [t for t in map(self._open_or_none, tables) if t])
            if error is None:
                raise
            raise error from None

    def _version_read(self, name: TableName, version: str | int | AsOfTime) -> DataFrame:
        """``VERSION AS OF``, as Paimon's and Iceberg's Spark time travel: a string names a
        tag or branch (digits with no such tag: a snapshot id), a number a snapshot id;
        ``TIMESTAMP AS OF``: :mod:`schemalab.time_travel`."""
        t = self._open_any(name)
        if isinstance(version, AsOfTime):
            return read_as_of(t, version, self.spark)
        if isinstance(version, str) and not (version.isdigit() and version not in
                                             {r.name for r in t.refs if r.kind == "tag"}):
            return t.read(ref=version)
        return t.read(snapshot_id=int(version))

    def _system_table(self, db: str, table: str) -> DataFrame | None:
        """``t$snapshots`` and the like: a system table of table ``t`` (Paimon's spelling,
        ``$`` before the system table's name; Iceberg's ``t.snapshots``, read as database
        ``t``, table ``snapshots``), or None when ``t`` is no table of ours."""
        base, sep, suffix = table.rpartition("$")
        try:
            if sep and base:
                return self._open_any(TableName(db, base)).system_table(suffix)
            t = self._open_any(TableName(None, db))
        except TableNotFoundError:
            return None
        return t.system_table(table) if isinstance(t, WritableIcebergTable) else None


def _tracks_rows(t: Table | WritableIcebergTable) -> bool:
    return isinstance(t, Table) and tracks_rows(t.schema)


def _tags_result(stmt: PaimonTagStatement, message: str,
                 rows: list[tuple[Any, ...]]) -> StatementResult:
    if stmt.action != "show":  # Paimon's DELETE/RENAME TAG return no rows
        return StatementResult(stmt.text, message)
    return StatementResult(stmt.text, message, columns=["tag"], rows=rows,
                           row_schema="tag STRING")


#: the handler of each statement kind
_HANDLERS: dict[type, Callable[[Warehouse, Any], StatementResult]] = {
    CreateTable: Warehouse._create, AlterTable: Warehouse._alter,
    RenameTable: Warehouse._rename, DropTable: Warehouse._drop, ShowTables: Warehouse._show,
    DescribeTable: Warehouse._describe, Insert: Warehouse._insert,
    DeleteFrom: Warehouse._delete, Query: Warehouse._query, Call: Warehouse._call,
    Update: lambda wh, s: StatementResult(s.text, update_message(wh.run_query,
                                                                 wh._open_any(s.name), s)),
    IcebergAlter: lambda wh, stmt: StatementResult(stmt.text,
                                                   iceberg_alter(wh._open_any(stmt.name), stmt)),
    IcebergRefStatement: lambda wh, s: StatementResult(
        s.text, iceberg_ref(wh._open_any(s.name), s)),
    PaimonTagStatement: lambda wh, s: _tags_result(s, *paimon_tags(wh._open_any(s.name), s)),
    IcebergWriteOrder: lambda wh, s: StatementResult(
        s.text, iceberg_write_order(wh._open_any(s.name), s)),
}
