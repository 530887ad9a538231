"""Java Iceberg 1.12 runs INSERT, DELETE and INSERT OVERWRITE as Iceberg's Spark does, with
Iceberg's own writers and snapshot producers (worker op ``java_dml``, run inside
``java_iceberg_worker.py``; no Spark):

- ``{"insert": rows}``: the rows through ``FanoutDataWriter`` (one Parquet file per
  partition), one ``AppendFiles``;
- ``{"delete": [column, values]}``: without a column, or on an identity partition column,
  ``DeleteFiles.deleteFromRowFilter`` (Spark's metadata delete). Else the rows of
  ``IcebergGenerics``' read (deletes applied) with their ``_file`` and ``_pos`` whose
  ``column`` is in ``values``: none, ``deleteFromRowFilter`` (it commits, removing nothing);
  when every touched data file had no deletes and loses all its rows, ``DeleteFiles`` of
  them. Else
  Spark's merge-on-read ``SparkPositionDeltaWrite``: format v2 a
  ``FanoutPositionOnlyDeleteWriter`` with ``DeleteGranularity.FILE``, v3 a
  ``BaseDVFileWriter``, both given the previous file-scoped deletes of each data file
  (``PreviousDeleteLoader``), then one ``RowDelta`` adding the new delete files and removing
  the rewritten ones;
- ``{"overwrite": rows, "dynamic": bool}``: ``OverwriteFiles.overwriteByRowFilter(true)`` or
  ``ReplacePartitions``;
- ``{"update": [column, values, target, value]}``: Spark's merge-on-read UPDATE of the rows
  whose ``column`` is in ``values`` (``target`` set to ``value``): their position deletes as
  for a DELETE and the new rows' data files in one ``RowDelta``.

Returns, per statement, the new snapshot's operation, summary and added delete files'
formats.
"""

from __future__ import annotations

from typing import Any


class _Function:
    """``java.util.function.Function`` in Python."""

    class Java:
        implements = ["java.util.function.Function"]

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def apply(self, x: Any) -> Any:
        return self.fn(x)


class Dml:
    def __init__(self, reader: Any, table: Any) -> None:
        self.r = reader
        self.I = reader.I
        self.jvm = reader.jvm
        self.table = table

    def _list(self, items: Any) -> Any:
        out = self.jvm.java.util.ArrayList()
        for x in items:
            out.add(x)
        return out

    def _records(self, rows: list[list[Any]]) -> list[Any]:
        schema = self.table.schema()
        out = []
        for row in rows:
            rec = self.I.data.GenericRecord.create(schema)
            for i, v in enumerate(row):
                rec.set(i, v)
            out.append(rec)
        return out

    def write_data(self, rows: list[list[Any]]) -> list[Any]:
        t = self.table
        factory = getattr(self.I.data, "GenericFileWriterFactory$Builder")(t) \
            .dataFileFormat(self.I.FileFormat.PARQUET).dataSchema(t.schema()).build()
        files = self.I.io.OutputFileFactory.builderFor(t, 1, 1) \
            .format(self.I.FileFormat.PARQUET).build()
        writer = self.I.io.FanoutDataWriter(factory, files, t.io(), 128 * 1024 * 1024)
        spec = t.spec()
        wrapper = self.I.data.InternalRecordWrapper(t.schema().asStruct())
        key = self.I.PartitionKey(spec, t.schema())
        try:
            for rec in self._records(rows):
                if spec.isPartitioned():
                    key.partition(wrapper.wrap(rec))
                    writer.write(rec, spec, key)
                else:
                    writer.write(rec, spec, None)
        finally:
            writer.close()
        return list(writer.result().dataFiles())

    def insert(self, rows: list[list[Any]]) -> None:
        op = self.table.newAppend()
        for f in self.write_data(rows):
            op.appendFile(f)
        op.commit()

    def overwrite(self, rows: list[list[Any]], dynamic: bool) -> None:
        files = self.write_data(rows)
        if dynamic:
            op = self.table.newReplacePartitions()
            for f in files:
                op.addFile(f)
        else:
            op = self.table.newOverwrite().overwriteByRowFilter(
                self.I.expressions.Expressions.alwaysTrue())
            for f in files:
                op.addFile(f)
        op.commit()

    def _matched(self, column: str, values: list[Any]) -> tuple[dict[str, list[int]],
                                                                 dict[str, int]]:
        t = self.table
        meta = self.I.MetadataColumns
        cols = self._list([*t.schema().columns(), meta.FILE_PATH, meta.ROW_POSITION])
        projection = self.I.Schema(cols)
        matched: dict[str, list[int]] = {}
        live: dict[str, int] = {}
        iterable = self.I.data.IcebergGenerics.read(t).project(projection).build()
        try:
            it = iterable.iterator()
            while it.hasNext():
                rec = it.next()
                path = str(rec.getField("_file"))
                live[path] = live.get(path, 0) + 1
                if rec.getField(column) in values:
                    matched.setdefault(path, []).append(int(rec.getField("_pos")))
        finally:
            iterable.close()
        return matched, live

    def delete(self, column: str | None, values: list[Any] | None) -> None:
        """Spark's DELETE: a metadata delete (``deleteFromRowFilter``) for no condition or a
        condition on an identity partition column; else when every touched file is
        matched whole and had no deletes (what strict metrics can prove at best); else
        merge-on-read."""
        t = self.table
        ex = self.I.expressions.Expressions
        identity = {str(t.schema().findColumnName(f.sourceId())) for f in t.spec().fields()
                    if f.transform().isIdentity()}
        if column is None or column in identity:
            expr = ex.alwaysTrue()
            if column is not None:
                expr = ex.equal(column, values[0])
                for v in values[1:]:
                    expr = getattr(ex, "or")(expr, ex.equal(column, v))
            t.newDelete().deleteFromRowFilter(expr).commit()
            return
        assert values is not None
        matched, live = self._matched(column, values)
        if not matched:  # no file can match (what metrics prove at best): Spark's metadata
            expr = ex.equal(column, values[0])  # delete, which commits removing nothing
            for v in values[1:]:
                expr = getattr(ex, "or")(expr, ex.equal(column, v))
            t.newDelete().deleteFromRowFilter(expr).commit()
            return
        tasks: dict[str, Any] = {}
        it = t.newScan().planFiles().iterator()
        while it.hasNext():
            task = it.next()
            tasks[str(task.file().location())] = task
        if all(len(p) == live[path] and not list(tasks[path].deletes())
               for path, p in matched.items()):
            op = t.newDelete()
            for path in matched:
                op.deleteFile(tasks[path].file())
            op.commit()
            return
        self._row_delta(matched, tasks)

    def update(self, column: str, values: list[Any], target: str, value: Any) -> None:
        """Spark's merge-on-read UPDATE (``SparkPositionDeltaWrite``, command UPDATE): the
        matched rows' positions deleted and the rows with ``target`` set to ``value``
        written as new data files, in one ``RowDelta`` (it commits when nothing matched
        too)."""
        t = self.table
        meta = self.I.MetadataColumns
        names = [str(f.name()) for f in t.schema().columns()]
        cols = self._list([*t.schema().columns(), meta.FILE_PATH, meta.ROW_POSITION])
        matched: dict[str, list[int]] = {}
        rows: list[list[Any]] = []
        iterable = self.I.data.IcebergGenerics.read(t).project(self.I.Schema(cols)).build()
        try:
            it = iterable.iterator()
            while it.hasNext():
                rec = it.next()
                if rec.getField(column) in values:
                    matched.setdefault(str(rec.getField("_file")), []).append(
                        int(rec.getField("_pos")))
                    rows.append([value if n == target else rec.getField(n) for n in names])
        finally:
            iterable.close()
        tasks: dict[str, Any] = {}
        it = t.newScan().planFiles().iterator()
        while it.hasNext():
            task = it.next()
            tasks[str(task.file().location())] = task
        self._row_delta(matched, tasks, self.write_data(rows) if rows else [])

    def _row_delta(self, matched: dict[str, list[int]], tasks: dict[str, Any],
                   data: list[Any] | None = None) -> None:
        t = self.table
        io = t.io()
        loader = self.I.data.BaseDeleteLoader(_Function(lambda f: io.newInputFile(f.location())))
        content_util = self.I.util.ContentFileUtil

        def previous(path: Any) -> Any:
            task = tasks.get(str(path))
            if task is None:
                return None
            scoped = [d for d in task.deletes() if content_util.isFileScoped(d)]
            if not scoped:
                return None
            return loader.loadPositionDeletes(self._list(scoped), str(path))

        prev = _Function(previous)
        v3 = int(t.operations().current().formatVersion()) >= 3
        fmt = self.I.FileFormat.PUFFIN if v3 else self.I.FileFormat.PARQUET
        files = self.I.io.OutputFileFactory.builderFor(t, 1, 1).format(fmt) \
            .suffix("deletes").build()
        if v3:
            writer = self.I.deletes.BaseDVFileWriter(files, prev)
        else:
            factory = getattr(self.I.data, "GenericFileWriterFactory$Builder")(t) \
                .deleteFileFormat(self.I.FileFormat.PARQUET).build()
            granularity = self.I.deletes.DeleteGranularity.FILE
            writer = self.I.io.FanoutPositionOnlyDeleteWriter(
                factory, files, io, 128 * 1024 * 1024, granularity, prev)
        try:
            for path in sorted(matched):
                task = tasks[path]
                for pos in sorted(matched[path]):
                    if v3:
                        writer.delete(path, pos, task.spec(), task.file().partition())
                    else:
                        writer.write(self.I.deletes.PositionDelete.create().set(path, pos),
                                     task.spec(), task.file().partition())
        finally:
            writer.close()
        result = writer.result()
        op = t.newRowDelta()
        for f in data or []:
            op.addRows(f)
        for f in result.deleteFiles():
            op.addDeletes(f)
        for f in result.rewrittenDeleteFiles():
            op.removeDeletes(f)
        if t.currentSnapshot() is not None:
            op.validateFromSnapshot(t.currentSnapshot().snapshotId())
        op.validateDataFilesExist(result.referencedDataFiles())
        op.commit()


def run(reader: Any, req: dict[str, Any]) -> Any:
    """Create the table (as ``java_ddl`` does), run the statements; per statement the new
    snapshot's operation, summary and added delete file formats (None: no snapshot)."""
    import json

    cat = reader.catalog(req["warehouse"])
    schema = reader.I.SchemaParser.fromJson(json.dumps(req["schema"]))
    spec = reader.I.PartitionSpec.builderFor(schema)
    for column in req.get("identity", []):
        spec = spec.identity(column)
    props = reader.jvm.java.util.HashMap()
    for k, v in (req.get("properties") or {}).items():
        props.put(k, v)
    table = cat.createTable(reader.ident(req["table"]), schema, spec.build(), props)
    dml = Dml(reader, table)
    out = []
    for stmt in req["statements"]:
        before = table.currentSnapshot()
        if "insert" in stmt:
            dml.insert(stmt["insert"])
        elif "delete" in stmt:
            dml.delete(*stmt["delete"])
        elif "update" in stmt:
            dml.update(*stmt["update"])
        else:
            dml.overwrite(stmt["overwrite"], bool(stmt.get("dynamic")))
        table.refresh()
        snap = table.currentSnapshot()
        if snap is None or (before is not None and snap.snapshotId() == before.snapshotId()):
            out.append(None)
            continue
        formats = sorted({str(f.format().name()) for f in snap.addedDeleteFiles(table.io())})
        out.append({"operation": str(snap.operation()),
                    "summary": {str(e.getKey()): str(e.getValue())
                                for e in snap.summary().entrySet()},
                    "delete_formats": formats})
    return out
