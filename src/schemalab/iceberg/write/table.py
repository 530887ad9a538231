"""An Iceberg table schemalab writes: :class:`WritableIcebergTable` reads like any
:class:`~schemalab.iceberg.IcebergTable` and adds INSERT and ALTER, each one commit."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.errors import SchemaLabError, SqlError, TableNotFoundError
from schemalab.iceberg.metadata import (
    IcebergSchema,
    IcebergSnapshot,
    PartitionField,
    PartitionSpec,
)
from schemalab.iceberg.table import IcebergTable
from schemalab.iceberg.types import IcebergType
from schemalab.iceberg.write import commit as commits
from schemalab.iceberg.write.alter import apply_alter
from schemalab.iceberg.write.append import commit_append
from schemalab.iceberg.write.datafiles import (
    PartitionColumn,
    WrittenDataFile,
    local_path,
    write_data_files,
)
from schemalab.iceberg.write.distribution import session_mode, write_mode
from schemalab.iceberg.write.evolve_spec import apply_iceberg_alter
from schemalab.iceberg.write.partitioning import (
    check_transform,
    partition_column,
    path_text,
    result_type,
)
from schemalab.iceberg.write.refs import commit_if_changed
from schemalab.iceberg.write.refs import select as ref_select
from schemalab.iceberg.write.schema_json import fresh_fields
from schemalab.iceberg.write.sort_order import output_sort
from schemalab.iceberg.write.tablemeta import NO_PARTITION_ID, branch_head, new_table_metadata
from schemalab.refs import MAIN
from schemalab.schema.changes import ColumnSpec, SchemaChange

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, SparkSession

    from schemalab.schema.table_schema import TableSchema

FORMAT_VERSION = "format-version"
#: partition field names Java gives transforms: ``<column>_<suffix>``
_SUFFIX = {"truncate": "trunc", "void": "null"}


def _format_version(properties: dict[str, str], table: str) -> int:
    text = properties.pop(FORMAT_VERSION, "2")
    if text.strip() not in ("1", "2", "3"):
        raise SqlError(f"Table {table}: Unsupported format version: v{text} (Iceberg "
                       "supports format-version 1, 2 and 3)", table=table,
                       rule="iceberg-format-version")
    return int(text)


@dataclass(frozen=True)
class TableDefinition:
    """What CREATE TABLE defines, checked: the first schema, its last column id, the
    partition fields, the format version and the table properties."""

    schema: IcebergSchema
    last_column_id: int
    partition_fields: list[PartitionField]
    format_version: int
    properties: dict[str, str]


def table_definition(name: str, columns: Sequence[ColumnSpec], *,
                     partitioning: Sequence[tuple[str, str]] = (),
                     properties: dict[str, str] | None = None,
                     comment: str | None = None) -> TableDefinition:
    """Check and build a new table's definition (see :func:`create_iceberg_table`)."""
    props = dict(properties or {})
    version = _format_version(props, name)
    if comment is not None:
        props["comment"] = comment
    seen: set[str] = set()
    for c in columns:
        if c.name.lower() in seen:
            raise SqlError(f"Table {name}: column {c.name} is given twice", table=name,
                           column=c.name, rule="duplicate-column")
        seen.add(c.name.lower())
        if c.default is not None:
            raise SqlError(f"Table {name}: column {c.name} has a DEFAULT; Iceberg tables take "
                           "defaults in ALTER TABLE .. ADD COLUMN (format v3)", table=name,
                           column=c.name, rule="iceberg-column-default")
    fields, last = fresh_fields(columns, table=name, version=version)
    schema = IcebergSchema(0, fields)
    return TableDefinition(schema, last, _partition_fields(schema, partitioning, name),
                           version, props)


def create_iceberg_table(path: str, name: str, columns: Sequence[ColumnSpec], *,
                         partitioning: Sequence[tuple[str, str]] = (),
                         properties: dict[str, str] | None = None,
                         comment: str | None = None, location: str | None = None,
                         spark: SparkSession | None = None) -> WritableIcebergTable:
    """Create an Iceberg table at ``path`` (its ``metadata/v1.metadata.json``).
    ``partitioning``: (transform, column) pairs, e.g. ``("identity", "dt")``,
    ``("bucket[16]", "id")``, ``("day", "ts")``. ``properties`` may hold
    ``'format-version'`` (1, 2 or 3; default 2)."""
    t = table_definition(name, columns, partitioning=partitioning, properties=properties,
                         comment=comment)
    loc = location or fileio.normalize(path)
    d = new_table_metadata(loc, t.schema, t.last_column_id, t.partition_fields,
                           t.format_version, t.properties)
    commits.create(path, d, name)
    return WritableIcebergTable(path, name, spark=spark)


def _partition_fields(schema: IcebergSchema, partitioning: Sequence[tuple[str, str]],
                      table: str) -> list[PartitionField]:
    out: list[PartitionField] = []
    by_name = {schema.full_name(fid): fid for fid in schema.index}
    for transform, column in partitioning:
        fid = by_name.get(column)
        if fid is None:
            raise SqlError(f"Table {table}: cannot partition by {column}: no such column "
                           f"(columns: {', '.join(f.name for f in schema.fields)})",
                           table=table, column=column, rule="partition-keys-must-be-columns")
        src = schema.find(fid)
        assert src is not None
        check_transform(transform, src.type, table, column)
        base = transform.split("[")[0]
        name = column if transform == "identity" else \
            f"{column}_{_SUFFIX.get(base, base)}"
        new = PartitionField(NO_PARTITION_ID + 1 + len(out), (fid,), name, transform)
        dedup = "time" if base in _TIME else transform
        for p in out:
            if p.source_ids == new.source_ids and dedup == (
                    "time" if p.transform in _TIME else p.transform):
                raise SqlError(f"Cannot add redundant partition: {_shown(p)} conflicts with "
                               f"{_shown(new)} (table {table})", table=table, column=column,
                               rule="iceberg-partition-transform")
        if any(p.name == name for p in out):
            raise SqlError(f"Cannot use partition name more than once: {name} (table "
                           f"{table})", table=table, column=column,
                           rule="iceberg-partition-transform")
        out.append(new)
    return out


_TIME = ("year", "month", "day", "hour")


def _shown(f: PartitionField) -> str:
    """A partition field as Java's ``PartitionField.toString`` prints it."""
    return f"{f.field_id}: {f.name}: {f.transform}({f.source_ids[0]})"


class WritableIcebergTable(IcebergTable):
    """An Iceberg table in a schemalab warehouse: reads, plus INSERT and ALTER. Its commits
    go to :attr:`commit_target`: the Hadoop layout here, the catalog for a catalog's table
    (:class:`schemalab.catalogs.CatalogIcebergTable`)."""

    @property
    def commit_target(self) -> commits.CommitTarget:
        return commits.HadoopTarget(self.path, self.name)

    #: (selector, value), e.g. ("tag", "v1"), of a read-only selection (``t.tag_v1``,
    #: :func:`schemalab.iceberg.write.refs.select`)
    selected: tuple[str, str] | None = None

    def refresh(self) -> None:
        """Re-read the current metadata (after a commit, or another writer's); a branch or
        a selection stays what it was."""
        fresh = WritableIcebergTable(self.path, self._root.name, spark=self._spark)
        view = ref_select(fresh, "branch", self.branch_name) if self.branch_name else fresh
        if self.selected:
            view = ref_select(fresh, *self.selected)
        self.__dict__.clear()
        self.__dict__.update(view.__dict__)

    # ---- writing ------------------------------------------------------------------------

    def spec_fields(self, spec_id: int | None = None
                    ) -> list[tuple[PartitionField, str, IcebergType]]:
        """The partition fields of a spec (default: the table's) with their source column's
        name and their value type."""
        m = self.metadata
        spec = m.spec(m.default_spec_id if spec_id is None else spec_id)
        assert spec is not None
        out = []
        for pf in spec.fields:
            src = self.schema.find(pf.source_ids[0])
            if src is None and pf.transform == "void":  # v1: its source may be dropped since
                src = next((f for s in sorted(m.schemas, key=lambda s: -s.schema_id)
                            if (f := s.find(pf.source_ids[0])) is not None), None)
            if src is None:
                raise SchemaLabError(f"Table {self.name}: partition field {pf.name}'s source "
                                     "column was dropped", table=self.name,
                                     rule="iceberg-partition-transform")
            out.append((pf, self.schema.full_name(pf.source_ids[0]) or pf.name,
                        result_type(pf.transform, src.type)))
        return out

    def insert(self, data: Any, *, columns: Sequence[str] | None = None,
               by_position: bool = False, overwrite: bool = False) -> IcebergSnapshot | None:
        """Append rows (a Spark or pandas DataFrame, or Python rows) as one snapshot; None
        when there are no rows (nothing is committed). ``overwrite``: INSERT OVERWRITE
        (:mod:`schemalab.iceberg.write.overwrite`)."""
        self.check_main_write("INSERT OVERWRITE" if overwrite else "INSERT")
        if overwrite:
            from schemalab.iceberg.write.overwrite import overwrite as run_overwrite

            return run_overwrite(self, data, columns=columns, by_position=by_position)
        branch = self.branch_name or MAIN
        files, spec, fields, order_id = self.write_files(data, columns=columns,
                                                         by_position=by_position)
        if not files:
            return None
        try:
            _, snapshot_id = commit_append(
                self.commit_target, self.name, self.format_version, self.schema, spec,
                [(pf.field_id, pf.name, t) for pf, _, t in fields], files, branch=branch,
                sort_order_id=order_id)
        except BaseException as e:
            if getattr(e, "rule", None) != commits.UNKNOWN_OUTCOME:
                for f in files:  # nothing references them
                    fileio.delete(local_path(self.path, self.location, f.path))
            raise
        self.refresh()
        return self.snapshot(snapshot_id)

    def check_main_write(self, what: str) -> None:
        """Refuse a write to a time-travel selection (``t.tag_v1``), and ``what`` on a branch
        where schemalab writes only appends: its DELETE and INSERT OVERWRITE commit to main."""
        if self.selected:  # SparkTable.newWriteBuilder of a time-travel table
            raise SqlError(f"Cannot write to table with time travel: {self.name} selects "
                           f"{'_'.join(self.selected)}; write to the table or a branch "
                           "(branch_<name>)",
                           table=self.name, rule="iceberg-write-target")
        if what != "INSERT" and (self.branch_name or MAIN) != MAIN:
            raise SqlError(f"{what} on branch {self.branch_name} of {self._root.name}: "
                           "schemalab writes a branch's appends only (its DELETE and INSERT "
                           "OVERWRITE commit to main); run it on the table, or INSERT INTO "
                           "the branch", table=self._root.name, rule="iceberg-write-target")

    def write_files(self, data: Any, *, columns: Sequence[str] | None = None,
                    by_position: bool = False) -> tuple[list[WrittenDataFile], PartitionSpec,
                                                        list[tuple[PartitionField, str,
                                                                   IcebergType]], int]:
        """Rows written as data files of the default spec (no snapshot lists them yet), in
        the table's sort order: (files, spec, its fields, the sort order's id)."""
        from schemalab.engine.frames import to_frame

        self.refresh()
        branch_head({"refs": dict(self._root.metadata.refs)}, self.branch_name or MAIN,
                    self.name)  # no tag
        fileio.check_writable(self.path)
        schema = self.schema
        write_schema = _with_write_defaults(schema)
        df = to_frame(self.spark, data, write_schema, self.name, columns=columns,
                      by_position=by_position)
        spec = self.metadata.spec(self.metadata.default_spec_id)
        assert spec is not None
        fields = self.spec_fields()
        pcs = [partition_column(pf, schema, _column(source), self.name)
               for pf, source, _ in fields]
        kinds = {pf.field_id: (pf.transform, schema.find(pf.source_ids[0]))
                 for pf, _, _ in fields}

        def text(pc: PartitionColumn, value: Any) -> str:
            transform, src = kinds[pc.field_id]
            if src is None:  # a void field whose source was dropped: always null
                return "null"
            return path_text(pc, value, transform, src.type)

        order = next((o for o in self.metadata.sort_orders
                      if o.order_id == self.metadata.default_sort_order_id), None)
        mode = write_mode(self.metadata.properties, session_mode(self.spark),
                          partitioned=any(pf.transform != "void" for pf in spec.fields),
                          ordered=bool(order and order.fields), table=self._root.name)
        files = write_data_files(self.spark, df, self.path, self.location, schema,
                                 write_schema, pcs, table=self.name, path_text=text,
                                 order=output_sort(schema, order.fields if order else (),
                                                   _column, self.name), distribution=mode)
        return files, spec, fields, (order.order_id if order else 0)

    def alter(self, *changes: SchemaChange) -> IcebergSchema:
        """Apply one ALTER statement's changes as one commit (Iceberg's rules); the
        current schema after it. A statement that changes nothing commits nothing, as
        Java's ``TableOperations.commit`` of unchanged metadata writes no file."""
        def change(d: dict[str, Any], dry: bool) -> dict[str, Any]:
            apply_alter(d, changes, self.name)
            return d

        commit_if_changed(self.commit_target, self.name, change)
        self.refresh()
        return self.schema

    def evolve(self, action: str, transforms: Sequence[tuple[str, str]] = (),
               alias: str | None = None, identifier_fields: Sequence[str] = ()) -> str:
        """Partition evolution (``"ADD"``/``"DROP"``/``"REPLACE"`` with (transform, column)
        pairs) or identifier fields (``"SET"``/``"DROP"`` with ``identifier_fields``), one
        commit; the message the statement returns."""
        def change(d: dict[str, Any], dry: bool) -> dict[str, Any]:
            apply_iceberg_alter(d, action, transforms, alias, identifier_fields, self.name)
            return d

        commit_if_changed(self.commit_target, self.name, change)
        self.refresh()
        m = self.metadata
        return (f"Altered {self.name}: spec {m.default_spec_id}, schema {m.current_schema_id} "
                f"(metadata v{self._version()}).")

    def alter_statement(self, changes: Sequence[SchemaChange]) -> str:
        """ALTER TABLE through SQL: the message the statement returns. ``t.branch_dev`` or
        ``t.tag_v1`` is refused as Iceberg's Spark refuses it: its catalog alters tables, not
        refs (``SparkCatalog.alterTable`` loads the name as a table), and the schema and
        properties are the table's, shared by every branch."""
        if self.branch_name or self.selected:
            ref = f"branch_{self.branch_name}" if self.branch_name else "_".join(self.selected
                                                                                 or ())
            root = self._root.name
            raise TableNotFoundError(
                f"[TABLE_OR_VIEW_NOT_FOUND] The table or view `{root.split('.')[-1]}`.`{ref}` "
                f"cannot be found: Iceberg's Spark alters a table, not its {ref}; the schema "
                f"and properties of {root} are shared by all its branches (ALTER TABLE {root} "
                "...)", table=root, rule="table-must-exist")
        before = self.schema.schema_id
        schema = self.alter(*changes)
        what = f"schema {schema.schema_id}" if schema.schema_id != before else \
            f"schema {before} unchanged"
        return f"Altered {self.name}: {what} (metadata v{self._version()})."

    def _version(self) -> int:
        from schemalab.iceberg.locate import metadata_version

        return metadata_version(os.path.basename(self.metadata_file)) or 0


def _with_write_defaults(schema: IcebergSchema) -> TableSchema:
    """The schema rows are written in: its top-level ``write-default`` values fill a column an
    INSERT leaves out (or gives NULL), as the spec's write default says."""
    import dataclasses

    out = schema.to_paimon()
    defaults = {f.id: f.write_default for f in schema.fields if f.write_default is not None}
    if not defaults:
        return out
    fields = tuple(dataclasses.replace(f, default_value=str(defaults[f.id]).lower()
                                       if isinstance(defaults[f.id], bool)
                                       else str(defaults[f.id]))
                   if f.id in defaults else f for f in out.fields)
    return dataclasses.replace(out, fields=fields)


def _column(full_name: str) -> Column:
    from pyspark.sql import functions as F

    head, *rest = full_name.split(".")
    col = F.col("`" + head.replace("`", "``") + "`")
    for part in rest:
        col = col.getField(part)
    return col
