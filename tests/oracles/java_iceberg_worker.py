"""Java Iceberg 1.12.0 as a subprocess oracle: JSON lines in on stdin, JSON lines out.

Runs in ``.venv-paimon-java`` (it has py4j 0.10.9.7) on the classpath ``make oracle-jars``
writes (``.oracles/iceberg-1.12.0.classpath``: iceberg-data, -parquet, -orc, hadoop-client).
A table is read by Iceberg's own generic reader (``IcebergGenerics``, no Spark), at a snapshot
or at its current one, from a metadata file opened by ``StaticTableOperations``.

Tables written elsewhere name their files by absolute URIs under the directory they were
written in. ``relocate`` maps such a prefix to where the table lies now: the table's FileIO
is a Python object (a py4j callback implementing ``org.apache.iceberg.io.FileIO``) that
rewrites each path and hands the opening to Iceberg's ``HadoopFileIO``; nothing is copied or
edited.

Request:  ``{"id": 1, "op": "read", "table_dir": "/x/db/t", "relocate": {"/tmp/w/db": "/x/db"},
"snapshot_id": 123 | null}``
Response: ``{"id": 1, "ok": true, "result": {"columns", "types", "rows"}}`` (rows: the
canonical JSON texts of ``fixtures/iceberg-java-1.10/README.md``, sorted) or an error as the
Paimon worker reports it.

Usage: python java_iceberg_worker.py --classpath .oracles/iceberg-1.12.0.classpath
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import struct
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gateway  # noqa: E402
from worker_protocol import serve  # noqa: E402  (takes the real stdout for the protocol)

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


class RelocatingFileIO:
    """``org.apache.iceberg.io.FileIO`` in Python: paths rewritten, then HadoopFileIO."""

    def __init__(self, gw: Any, relocate: dict[str, str]) -> None:
        self.gw = gw
        self.io = gw.jvm.org.apache.iceberg.hadoop.HadoopFileIO(
            gw.jvm.org.apache.hadoop.conf.Configuration())
        self.opened: list[Any] = []
        # longest prefix first; "file:" URIs and bare paths alike
        self.moves = sorted(((old.rstrip("/"), new.rstrip("/")) for old, new in relocate.items()),
                            key=lambda m: -len(m[0]))

    def fix(self, location: str) -> str:
        path = re.sub(r"^file:(//)?", "", location)
        for old, new in self.moves:
            if path == old or path.startswith(old + "/"):
                return new + path[len(old):]
        return path

    @staticmethod
    def _location(f: Any) -> str:
        if isinstance(f, str):
            return f
        # ManifestFile.path(), ContentFile.location() (the overloads FileIO has defaults for)
        for name in ("location", "path"):
            try:
                return str(getattr(f, name)())
            except Exception:  # noqa: BLE001 - py4j: no such method on this class
                continue
        raise TypeError(f"cannot open {f!r}")

    def newInputFile(self, f: Any, length: Any = None) -> Any:  # noqa: N802 - Java's name
        opened = self.io.newInputFile(self.fix(self._location(f)))
        # Kept referenced: once Python drops a JavaObject py4j releases it on the Java side,
        # which can happen before Java has taken this answer (Java then reads null).
        self.opened.append(opened)
        return opened

    def newOutputFile(self, path: str) -> Any:  # noqa: N802 - Java's name
        raise PermissionError(f"the Iceberg oracle only reads ({path})")

    def deleteFile(self, f: Any) -> None:  # noqa: N802 - Java's name
        raise PermissionError(f"the Iceberg oracle only reads ({f})")

    def properties(self) -> Any:
        return self.gw.jvm.java.util.HashMap()

    def initialize(self, props: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def toString(self) -> str:  # noqa: N802 - Java's name
        return "RelocatingFileIO"

    def hashCode(self) -> int:  # noqa: N802 - Java's name
        return id(self) & 0x7FFFFFFF

    def equals(self, other: Any) -> bool:
        return other is self

    class Java:
        implements = ["org.apache.iceberg.io.FileIO"]


class IType:
    """An Iceberg type, fetched once per read."""

    __slots__ = ("id", "utc", "fields", "elem", "key", "value")

    def __init__(self, java: Any) -> None:
        self.id: str = java.typeId().name()
        self.utc = False
        self.fields: list[tuple[str, IType]] = []
        self.elem = self.key = self.value = None
        if self.id in ("TIMESTAMP", "TIMESTAMP_NANO"):
            self.utc = bool(java.shouldAdjustToUTC())
        elif self.id == "STRUCT":
            self.fields = [(str(f.name()), IType(f.type())) for f in java.fields()]
        elif self.id == "LIST":
            self.elem = IType(java.elementType())
        elif self.id == "MAP":
            self.key, self.value = IType(java.keyType()), IType(java.valueType())


def _ts(epoch_seconds: int, nanos: int) -> str:
    value = EPOCH + dt.timedelta(seconds=epoch_seconds, microseconds=nanos // 1000)
    return "TS:" + value.isoformat()


class Reader:
    def __init__(self, gw: Any) -> None:
        self.gw = gw
        self.jvm = gw.jvm
        self.I = gw.jvm.org.apache.iceberg
        self.utc = gw.jvm.java.time.ZoneOffset.UTC
        self.bytes_of = self.I.util.ByteBuffers.toByteArray

    def value(self, v: Any, t: IType) -> Any:
        if v is None:
            return None
        k = t.id
        if k in ("BOOLEAN", "INTEGER", "LONG", "STRING"):
            return v if not hasattr(v, "toString") else str(v.toString())
        if k == "FLOAT":
            # py4j sends a Java float as its shortest decimal text ("1.1"); back to the
            # float32 it is, as Spark hands it over (1.100000023841858)
            return "F:" + repr(struct.unpack("f", struct.pack("f", float(v)))[0])
        if k == "DOUBLE":
            return "F:" + repr(float(v))
        if k == "DECIMAL":
            # py4j hands a BigDecimal over as a Decimal (from its toString: scale kept)
            return "D:" + str(v if isinstance(v, Decimal) else Decimal(str(v.toString())))
        if k == "DATE":
            return "DATE:" + (EPOCH_DATE + dt.timedelta(days=int(v.toEpochDay()))).isoformat()
        if k == "TIME":
            return "TIME:" + str(v.toString())
        if k in ("TIMESTAMP", "TIMESTAMP_NANO"):
            seconds = v.toEpochSecond() if t.utc else v.toEpochSecond(self.utc)
            return _ts(int(seconds), int(v.getNano()))
        if k in ("BINARY", "FIXED"):
            raw = v if isinstance(v, bytes | bytearray) else self.bytes_of(v)
            return "B:" + bytes(raw).hex()
        if k == "UUID":
            return str(v.toString())
        if k == "STRUCT":
            return {"struct": [[name, self.value(v.get(i), ft)]
                               for i, (name, ft) in enumerate(t.fields)]}
        if k == "LIST":
            return [self.value(x, t.elem) for x in list(v)]
        if k == "MAP":
            pairs = [[self.value(e.getKey(), t.key), self.value(e.getValue(), t.value)]
                     for e in list(v.entrySet())]
            return {"map": sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))}
        raise TypeError(f"no canonical form for Iceberg type {k}")

    def table(self, req: dict[str, Any]) -> Any:
        table_dir = Path(req["table_dir"])
        meta = latest_metadata(table_dir / "metadata")
        io = RelocatingFileIO(self.gw, req.get("relocate") or {})
        ops = self.I.StaticTableOperations(str(meta), io)
        return self.I.BaseTable(ops, table_dir.name)

    def op_read(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        builder = self.I.data.IcebergGenerics.read(table)
        if req.get("snapshot_id") is not None:
            builder = builder.useSnapshot(int(req["snapshot_id"]))
        # the schema IcebergGenerics projects: its scan's (a snapshot's own schema, if any)
        scan = table.newScan()
        if req.get("snapshot_id") is not None:
            scan = scan.useSnapshot(int(req["snapshot_id"]))
        if req.get("ref") is not None:
            # TableScan.useRef: the ref's snapshot, in SnapshotUtil.schemaFor(table, ref)
            scan = scan.useRef(str(req["ref"]))
            builder = builder.useSnapshot(scan.snapshot().snapshotId()).project(scan.schema())
        schema = scan.schema()
        fields = [(str(f.name()), IType(f.type()), f.type().toString())
                  for f in schema.columns()]
        rows = []
        iterable = builder.build()
        try:
            it = iterable.iterator()
            while it.hasNext():
                rec = it.next()
                rows.append(json.dumps([self.value(rec.get(i), t)
                                        for i, (_, t, _) in enumerate(fields)],
                                       sort_keys=True))
        finally:
            iterable.close()
        return {"columns": [f[0] for f in fields], "types": [str(f[2]) for f in fields],
                "rows": sorted(rows)}

    def op_snapshots(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        return [{"id": int(s.snapshotId()),
                 "parent": None if s.parentId() is None else int(s.parentId()),
                 "operation": s.operation()} for s in table.snapshots()]

    def op_refs(self, req: dict[str, Any]) -> Any:
        """The table's refs as Iceberg's ``Table.refs()`` has them."""
        out = {}
        for e in list(self.table(req).refs().entrySet()):
            r = e.getValue()
            out[str(e.getKey())] = {
                "kind": "branch" if r.isBranch() else "tag", "snapshot_id": int(r.snapshotId()),
                "max-ref-age-ms": _opt(r.maxRefAgeMs()),
                "max-snapshot-age-ms": _opt(r.maxSnapshotAgeMs()),
                "min-snapshots-to-keep": _opt(r.minSnapshotsToKeep())}
        return out

    def op_build(self, req: dict[str, Any]) -> Any:
        """Write a table with Iceberg's Java API (HadoopTables at ``location``) by ``steps``;
        returns the newest snapshot's id after each step. See :class:`Builder`."""
        return Builder(self, str(req["location"])).run(req["steps"])

    # ---- Hadoop catalog: open what schemalab wrote, write what schemalab writes ----------

    def catalog(self, warehouse: str) -> Any:
        conf = self.jvm.org.apache.hadoop.conf.Configuration()
        return self.I.hadoop.HadoopCatalog(conf, warehouse)

    def ident(self, name: str) -> Any:
        return self.I.catalog.TableIdentifier.parse(name)

    def op_catalog_read(self, req: dict[str, Any]) -> Any:
        """``HadoopCatalog(warehouse).loadTable(db.t)``: its rows at a snapshot (or the
        current one), its snapshots and its current metadata file."""
        table = self.catalog(req["warehouse"]).loadTable(self.ident(req["table"]))
        builder = self.I.data.IcebergGenerics.read(table)
        scan = table.newScan()
        if req.get("snapshot_id") is not None:
            builder = builder.useSnapshot(int(req["snapshot_id"]))
            scan = scan.useSnapshot(int(req["snapshot_id"]))
        fields = [(str(f.name()), IType(f.type())) for f in scan.schema().columns()]
        rows = []
        iterable = builder.build()
        try:
            it = iterable.iterator()
            while it.hasNext():
                rec = it.next()
                rows.append(json.dumps([self.value(rec.get(i), t)
                                        for i, (_, t) in enumerate(fields)], sort_keys=True))
        finally:
            iterable.close()
        return {"columns": [f[0] for f in fields], "rows": sorted(rows),
                "snapshots": [int(x.snapshotId()) for x in table.snapshots()],
                "metadata_file": str(table.operations().current().metadataFileLocation())}

    def op_as_of_time(self, req: dict[str, Any]) -> Any:
        """Spark's ``TIMESTAMP AS OF`` as Iceberg's ``SparkCatalog.loadTable(ident,
        timestamp)`` resolves it, on ``HadoopCatalog(warehouse).loadTable(db.t)``:
        ``SnapshotUtil.snapshotIdAsOfTime(table, millis)`` (its IllegalArgumentException when
        there is none), the id ``TableScan.asOfTime(millis)`` picks, and that snapshot read
        in its own schema (as ``catalog_read``)."""
        table = self.catalog(req["warehouse"]).loadTable(self.ident(req["table"]))
        millis = int(req["millis"])
        sid = int(self.I.util.SnapshotUtil.snapshotIdAsOfTime(table, millis))
        scan_sid = int(table.newScan().asOfTime(millis).snapshot().snapshotId())
        read = self.op_catalog_read({"warehouse": req["warehouse"], "table": req["table"],
                                     "snapshot_id": sid})
        return {"snapshot_id": sid, "scan_snapshot_id": scan_sid,
                "columns": read["columns"], "rows": read["rows"]}

    def _type(self, node: Any) -> Any:
        """An Iceberg type from its JSON form (ids are reassigned by the caller)."""
        wrapped = {"type": "struct", "schema-id": 0,
                   "fields": [{"id": 1000000, "name": "x", "required": False, "type": node}]}
        return self.I.SchemaParser.fromJson(json.dumps(wrapped)).findField(1000000).type()

    def op_java_ddl(self, req: dict[str, Any]) -> Any:
        """Create ``table`` in the Hadoop catalog at ``warehouse`` (schema JSON, partition
        transforms, properties), then run ``statements`` (each a list of UpdateSchema ops,
        one commit); returns each statement's error message (None when committed) and the
        metadata file."""
        cat = self.catalog(req["warehouse"])
        schema = self.I.SchemaParser.fromJson(json.dumps(req["schema"]))
        spec = self.I.PartitionSpec.builderFor(schema)
        for transform, column, arg in req.get("partitioning", []):
            if transform == "identity":
                spec = spec.identity(column)
            elif transform in ("bucket", "truncate"):
                spec = getattr(spec, transform)(column, int(arg))
            else:
                spec = getattr(spec, transform)(column)
        props = self.jvm.java.util.HashMap()
        for k, v in (req.get("properties") or {}).items():
            props.put(k, v)
        table = cat.createTable(self.ident(req["table"]), schema, spec.build(), props)
        results = []
        for ops in req.get("statements", []):
            try:
                if isinstance(ops, dict) and "order" in ops:  # one ReplaceSortOrder
                    update = table.replaceSortOrder()
                    for column, direction in ops["order"]:  # Spark's defaults: ASC
                        nulls = "NULLS_FIRST" if direction == "asc" else "NULLS_LAST"
                        update = getattr(update, direction)(
                            self.I.expressions.Expressions.ref(column),
                            getattr(self.I.NullOrder, nulls))
                elif isinstance(ops, dict):  # {"spec": [...]}: one UpdatePartitionSpec
                    update = table.updateSpec()
                    for op in ops["spec"]:
                        update = self._spec_op(update, op)
                else:
                    update = table.updateSchema()
                    for op in ops:
                        update = self._schema_op(update, op)
                update.commit()
                results.append(None)
            except Exception as exc:  # noqa: BLE001 - reported per statement
                java = getattr(exc, "java_exception", None)
                results.append(str(java.getMessage()) if java is not None else str(exc))
            table.refresh()
        return {"errors": results,
                "metadata_file": str(table.operations().current().metadataFileLocation())}

    def _term(self, transform: str, column: str) -> Any:
        ex = self.I.expressions.Expressions
        if transform == "identity":
            return ex.ref(column)
        if transform.startswith(("bucket[", "truncate[")):
            name, arg = transform[:-1].split("[")
            return getattr(ex, name)(column, int(arg))
        return getattr(ex, transform)(column)

    def _spec_op(self, u: Any, op: list[Any]) -> Any:
        kind = op[0]
        if kind == "add":
            _, transform, column, alias = op
            term = self._term(transform, column)
            return u.addField(alias, term) if alias else u.addField(term)
        if kind == "remove":
            return u.removeField(self._term(op[1], op[2]))
        if kind == "remove_name":
            return u.removeField(op[1])
        raise ValueError(f"unknown spec op {kind!r}")

    def _schema_op(self, u: Any, op: list[Any]) -> Any:
        kind = op[0]
        if kind == "identifier":
            names = self.jvm.java.util.ArrayList()
            for n in op[1]:
                names.add(n)
            return u.setIdentifierFields(names)
        if kind == "add":
            _, parent, name, node, doc = op
            return u.addColumn(parent, name, self._type(node), doc)
        if kind == "add_required":
            return u.addRequiredColumn(op[1], self._type(op[2]))
        if kind == "update":
            return u.updateColumn(op[1], self.I.types.Types.fromPrimitiveString(op[2]))
        if kind == "rename":
            return u.renameColumn(op[1], op[2])
        if kind == "delete":
            return u.deleteColumn(op[1])
        if kind == "optional":
            return u.makeColumnOptional(op[1])
        if kind == "require":
            return u.requireColumn(op[1])
        if kind == "doc":
            return u.updateColumnDoc(op[1], op[2])
        if kind == "first":
            return u.moveFirst(op[1])
        if kind == "after":
            return u.moveAfter(op[1], op[2])
        if kind == "before":
            return u.moveBefore(op[1], op[2])
        if kind == "default":  # ["default", name, JSON value or None]: the write default
            value = None if op[2] is None else self.I.expressions.Expressions.lit(op[2])
            return u.updateColumnDefault(op[1], value)
        if kind == "add_default":  # ["add_default", parent, name, type, JSON value]
            lit = self.I.expressions.Expressions.lit(op[4])
            return u.addColumn(op[1], op[2], self._type(op[3]), None, lit)
        raise ValueError(f"unknown schema op {kind!r}")

    # ---- Iceberg's Spark SQL extensions for refs and write order, on Java's API ----------

    def op_ref_statements(self, req: dict[str, Any]) -> Any:
        """Run each statement (a dict of the parsed ALTER TABLE .. BRANCH / TAG / WRITE) on
        ``table`` of the Hadoop catalog at ``warehouse`` as Iceberg's Spark Execs do
        (``CreateOrReplaceBranchExec``, ``CreateOrReplaceTagExec``, ``DropBranchExec``,
        ``DropTagExec``, ``SetWriteDistributionAndOrderingExec``: their steps transcribed,
        every check and commit Java's own); each statement's error message (None when it
        went through) and the metadata file."""
        table = self.catalog(req["warehouse"]).loadTable(self.ident(req["table"]))
        results = []
        for st in req["statements"]:
            try:
                table.refresh()
                getattr(self, "_exec_" + st["op"])(table, st, req["table"])
                results.append(None)
            except Exception as exc:  # noqa: BLE001 - reported per statement
                java = getattr(exc, "java_exception", None)
                results.append(str(java.getMessage()) if java is not None else str(exc))
        table.refresh()
        return {"errors": results,
                "metadata_file": str(table.operations().current().metadataFileLocation())}

    def _snapshot_for(self, table: Any, st: dict[str, Any]) -> Any:
        if st.get("snapshot_id") is not None:
            return st["snapshot_id"]
        cur = table.currentSnapshot()
        return None if cur is None else cur.snapshotId()

    def _exec_branch(self, table: Any, st: dict[str, Any], ident: str) -> None:
        sid = self._snapshot_for(table, st)
        ms = table.manageSnapshots()
        name = st["name"]
        exists = table.refs().get(name) is not None

        def safe_create() -> None:
            if sid is None:
                ms.createBranch(name)
            else:
                ms.createBranch(name, sid)

        if st["create"] and st["replace"] and not exists:
            safe_create()
        elif st["replace"]:
            if sid is None:  # the Exec's Preconditions.checkArgument
                raise ValueError(f"Cannot complete replace branch operation on {ident}, main "
                                 "has no snapshot")
            ms.replaceBranch(name, sid)
        else:
            if exists and st["if_not_exists"]:
                return
            safe_create()
        if st.get("min_snapshots_to_keep") is not None:
            ms.setMinSnapshotsToKeep(name, st["min_snapshots_to_keep"])
        if st.get("max_snapshot_age_ms") is not None:
            ms.setMaxSnapshotAgeMs(name, st["max_snapshot_age_ms"])
        if st.get("max_ref_age_ms") is not None:
            ms.setMaxRefAgeMs(name, st["max_ref_age_ms"])
        ms.commit()

    def _exec_tag(self, table: Any, st: dict[str, Any], ident: str) -> None:
        sid = self._snapshot_for(table, st)
        if sid is None:
            raise ValueError(f"Cannot complete create or replace tag operation on {ident}, "
                             "main has no snapshot")
        ms = table.manageSnapshots()
        name = st["name"]
        exists = table.refs().get(name) is not None
        if st["create"] and st["replace"] and not exists:
            ms.createTag(name, sid)
        elif st["replace"]:
            ms.replaceTag(name, sid)
        else:
            if exists and st["if_not_exists"]:
                return
            ms.createTag(name, sid)
        if st.get("max_ref_age_ms") is not None:
            ms.setMaxRefAgeMs(name, st["max_ref_age_ms"])
        ms.commit()

    def _exec_drop_branch(self, table: Any, st: dict[str, Any], ident: str) -> None:
        if table.refs().get(st["name"]) is not None or not st["if_exists"]:
            table.manageSnapshots().removeBranch(st["name"]).commit()

    def _exec_drop_tag(self, table: Any, st: dict[str, Any], ident: str) -> None:
        if table.refs().get(st["name"]) is not None or not st["if_exists"]:
            table.manageSnapshots().removeTag(st["name"]).commit()

    def _exec_order(self, table: Any, st: dict[str, Any], ident: str) -> None:
        txn = table.newTransaction()
        order = txn.replaceSortOrder().caseSensitive(False)
        for transform, column, direction, nulls in st["order"]:
            term = self._term(transform, column)
            null_order = self.I.NullOrder.NULLS_FIRST if nulls == "nulls-first" else \
                self.I.NullOrder.NULLS_LAST
            order = order.asc(term, null_order) if direction == "asc" else \
                order.desc(term, null_order)
        order.commit()
        if st.get("mode") is not None:
            txn.updateProperties().set("write.distribution-mode", st["mode"]).commit()
        txn.commitTransaction()

    def op_commit_properties(self, req: dict[str, Any]) -> Any:
        """``count`` commits of one table property each (``<prefix><i>``) through the Hadoop
        catalog, as fast as Java goes; which ones reported success."""
        table = self.catalog(req["warehouse"]).loadTable(self.ident(req["table"]))
        done = []
        for i in range(int(req["count"])):
            key = f"{req['prefix']}{i}"
            try:
                table.updateProperties().set(key, "1").commit()
                done.append(key)
            except Exception:  # noqa: BLE001 - a commit Java gave up on: not claimed
                table.refresh()
        return done

    def op_java_dml(self, req: dict[str, Any]) -> Any:
        """INSERT / DELETE / INSERT OVERWRITE as Iceberg's Spark writes them
        (``java_iceberg_dml.py``)."""
        import java_iceberg_dml

        return java_iceberg_dml.run(self, req)
    def op_partition_check(self, req: dict[str, Any]) -> Any:
        """Each data file of ``HadoopCatalog(warehouse).loadTable(table)``: its partition
        tuple as the manifest gives it and as Java's ``PartitionKey`` computes it from each
        row the file holds (the key Java's writers route a row by), both as
        ``PartitionSpec.partitionToPath`` prints them."""
        table = self.catalog(req["warehouse"]).loadTable(self.ident(req["table"]))
        schema = table.schema()
        cols = self.jvm.java.util.ArrayList()
        cols.add(self.I.MetadataColumns.FILE_PATH)
        proj = self.I.types.TypeUtil.join(schema, self.I.Schema(cols))
        out: dict[str, Any] = {}
        specs = {}
        tasks = table.newScan().planFiles().iterator()
        while tasks.hasNext():
            f = tasks.next().file()
            spec = table.specs().get(f.specId())
            specs[str(f.location())] = spec
            out[str(f.location())] = {"manifest": str(spec.partitionToPath(f.partition())),
                                      "spec_id": int(f.specId()), "rows": []}
        wrapper = self.I.data.InternalRecordWrapper(proj.asStruct())
        keys = {sid: self.I.PartitionKey(spec, schema)
                for sid, spec in ((int(s.specId()), s) for s in specs.values())}
        iterable = self.I.data.IcebergGenerics.read(table).project(proj).build()
        try:
            it = iterable.iterator()
            while it.hasNext():
                rec = it.next()
                path = str(rec.getField("_file"))
                key = keys[out[path]["spec_id"]]
                key.partition(wrapper.wrap(rec))
                out[path]["rows"].append(str(specs[path].partitionToPath(key)))
        finally:
            iterable.close()
        return out

    def op_version(self, req: dict[str, Any]) -> Any:
        return str(self.I.IcebergBuild.version())


def _opt(v: Any) -> int | None:
    return None if v is None else int(v)


class Builder:
    """Iceberg tables made by Java's own API, step by step (``{"op": ...}``):

    - ``load``: the table at the location, to go on with;
    - ``create``: ``columns`` [[name, "int"|"string"|"long"], ...], ``format_version``;
    - ``append``: ``rows`` (one Parquet data file), optional ``branch``, ``stage`` (commit
      without moving any ref: ``stageOnly()``) and ``wap_id`` (summary ``wap.id``);
    - ``add_column`` (``name``, ``type``), ``rename`` (``name``, ``to``), ``drop`` (``name``);
    - ``tag`` / ``branch`` (``name``, ``snapshot`` id or the current one), with optional
      ``max_ref_age_ms``, ``max_snapshot_age_ms``, ``min_snapshots_to_keep``;
    - ``rollback`` (``snapshot``), ``cherrypick`` (``snapshot``).
    """

    def __init__(self, reader: Reader, location: str) -> None:
        self.r = reader
        self.I = reader.I
        self.location = location
        self.tables = self.I.hadoop.HadoopTables(reader.jvm.org.apache.hadoop.conf.Configuration())
        self.table: Any = None
        self.files = 0

    def type_of(self, name: str) -> Any:
        types = self.I.types.Types
        return {"int": types.IntegerType.get(), "long": types.LongType.get(),
                "string": types.StringType.get()}[name]

    def run(self, steps: list[dict[str, Any]]) -> list[int | None]:
        out = []
        for step in steps:
            getattr(self, "step_" + step["op"])(step)
            self.table.refresh()
            snaps = list(self.table.snapshots())
            out.append(int(snaps[-1].snapshotId()) if snaps else None)
        return out

    def step_load(self, step: dict[str, Any]) -> None:
        self.table = self.tables.load(self.location)

    def step_create(self, step: dict[str, Any]) -> None:
        types = self.I.types.Types
        fields = [types.NestedField.optional(i + 1, name, self.type_of(t))
                  for i, (name, t) in enumerate(step["columns"])]
        schema = self.I.Schema(fields)
        props = self.r.jvm.java.util.HashMap()
        props.put("format-version", str(step.get("format_version", 2)))
        self.table = self.tables.create(schema, self.I.PartitionSpec.unpartitioned(), props,
                                        self.location)

    def step_append(self, step: dict[str, Any]) -> None:
        schema = self.table.schema()
        # the next name no file has: a later build of the same table (after ``load``) must
        # not overwrite an older snapshot's file (its manifest keeps the old size)
        self.files += 1
        while os.path.exists(f"{self.location}/data/f{self.files:04d}.parquet"):
            self.files += 1
        path = f"{self.location}/data/f{self.files:04d}.parquet"
        out = self.table.encryption().encrypt(self.table.io().newOutputFile(path))
        builder = getattr(self.I.data, "GenericFileWriterFactory$Builder")(self.table)
        factory = builder.dataFileFormat(self.I.FileFormat.PARQUET).dataSchema(schema).build()
        writer = factory.newDataWriter(out, self.table.spec(), None)
        try:
            for row in step["rows"]:
                rec = self.I.data.GenericRecord.create(schema)
                for i, v in enumerate(row):
                    rec.set(i, v)
                writer.write(rec)
        finally:
            writer.close()
        data = writer.toDataFile()
        op = self.table.newAppend().appendFile(data)
        if step.get("branch"):
            op = op.toBranch(step["branch"])
        if step.get("wap_id"):
            op = op.set("wap.id", step["wap_id"])
        if step.get("stage"):
            op = op.stageOnly()
        op.commit()

    def step_add_column(self, step: dict[str, Any]) -> None:
        self.table.updateSchema().addColumn(step["name"], self.type_of(step["type"])).commit()

    def step_rename(self, step: dict[str, Any]) -> None:
        self.table.updateSchema().renameColumn(step["name"], step["to"]).commit()

    def step_drop(self, step: dict[str, Any]) -> None:
        self.table.updateSchema().deleteColumn(step["name"]).commit()

    def _ref(self, step: dict[str, Any], kind: str) -> None:
        snap = step.get("snapshot") or self.table.currentSnapshot().snapshotId()
        ms = self.table.manageSnapshots()
        name = step["name"]
        ms = ms.createTag(name, snap) if kind == "tag" else ms.createBranch(name, snap)
        if step.get("max_ref_age_ms") is not None:
            ms = ms.setMaxRefAgeMs(name, step["max_ref_age_ms"])
        if step.get("max_snapshot_age_ms") is not None:
            ms = ms.setMaxSnapshotAgeMs(name, step["max_snapshot_age_ms"])
        if step.get("min_snapshots_to_keep") is not None:
            ms = ms.setMinSnapshotsToKeep(name, step["min_snapshots_to_keep"])
        ms.commit()

    def step_tag(self, step: dict[str, Any]) -> None:
        self._ref(step, "tag")

    def step_branch(self, step: dict[str, Any]) -> None:
        self._ref(step, "branch")

    def step_rollback(self, step: dict[str, Any]) -> None:
        self.table.manageSnapshots().rollbackTo(step["snapshot"]).commit()

    def step_cherrypick(self, step: dict[str, Any]) -> None:
        self.table.manageSnapshots().cherrypick(step["snapshot"]).commit()


def latest_metadata(metadata_dir: Path) -> Path:
    """The metadata file a Hadoop catalog's ``version-hint.text`` names (else the highest)."""
    hint = metadata_dir / "version-hint.text"
    candidates = {int(m.group(1)): p for p in metadata_dir.iterdir()
                  if (m := re.fullmatch(r"v(\d+)(\.gz)?\.metadata\.json(\.gz)?", p.name))}
    if hint.exists():
        version = int(hint.read_text().strip())
        if version in candidates:
            return candidates[version]
    if not candidates:
        raise FileNotFoundError(f"no v<N>.metadata.json under {metadata_dir}")
    return candidates[max(candidates)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--classpath", required=True,
                    help="a file holding the classpath (make oracle-jars)")
    args = ap.parse_args()
    serve(lambda: Reader(gateway.start(gateway.read_classpath(args.classpath),
                                       callbacks=True)))
    os._exit(0)  # py4j's callback server threads would keep the process alive

if __name__ == "__main__":
    main()
