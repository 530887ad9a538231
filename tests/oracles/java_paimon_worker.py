"""Java Paimon 1.0 as a subprocess oracle: JSON lines in on stdin, JSON lines out on stdout.

Runs in ``.venv-paimon-java`` (``make .venv-paimon-java``), never in the main venv: the
bundled paimon-python-java-bridge.jar (paimon-core 1.0-SNAPSHOT) is driven through py4j
0.10.9.7. Everything goes through Java's own API (catalog, BatchTableWrite with BinaryRows
built on the Java side, TableRead's row reader), not the bridge's Arrow path, whose
converters are not Paimon's (they NPE on a NULL from a DECIMAL overflow, for instance).

Request:  ``{"id": 1, "op": "read", "warehouse": "/wh", "table": "t", ...}``
Response: ``{"id": 1, "ok": true, "result": ...}`` or
          ``{"id": 1, "ok": false, "error": {"kind": "java"|"python", "class": ...,
          "message": ..., "causes": [...]}}``

Values cross in the canonical form of ``canonical.py``; on a write, plain JSON numbers
and strings are accepted where unambiguous (``1.5`` for a DOUBLE, ``"12.30"`` for a DECIMAL).

Usage: python java_paimon_worker.py --netty-jar /path/to/netty-common-X.jar   (Paimon 1.0)
       python java_paimon_worker.py --classpath .oracles/paimon-2.0.0.classpath  (Paimon 2.0.0)

With ``--classpath`` the JVM runs the Maven-fetched Paimon (``make oracle-jars``) under a plain
py4j gateway instead of the bridge jar; the operations are the same Java API calls.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canonical as C  # noqa: E402
from worker_protocol import serve  # noqa: E402  (takes the real stdout for the protocol)

# Arrow's MemoryUtil (inside the bridge) needs the two --add-opens; the rest keeps the JVM
# small and quick to start for tiny tables.
JVM_ARGS = ("--add-opens=java.base/java.nio=ALL-UNNAMED"
            " --add-opens=java.base/sun.nio.ch=ALL-UNNAMED -Xmx1g -XX:TieredStopAtLevel=1")



# ---------------------------------------------------------------------------------------------
# Starting the JVM
# ---------------------------------------------------------------------------------------------


def start_gateway(netty_jar: str | None) -> Any:
    os.environ["_PYPAIMON_JVM_ARGS"] = (os.environ.get("_PYPAIMON_JVM_ARGS", "") + " "
                                        + JVM_ARGS).strip()
    if netty_jar:
        extra = os.environ.get("_PYPAIMON_JAVA_CLASSPATH")
        os.environ["_PYPAIMON_JAVA_CLASSPATH"] = (
            netty_jar if not extra else os.pathsep.join([extra, netty_jar]))
    from paimon_python_java import java_gateway

    launch = java_gateway.launch_gateway_server_process

    def launch_and_drain(env: dict[str, str]) -> Any:
        # The bridge pipes the JVM's stderr and never reads it: a chatty JVM would block.
        proc = launch(env)

        def drain() -> None:
            for line in iter(proc.stderr.readline, b""):
                sys.stderr.buffer.write(line)
                sys.stderr.flush()

        threading.Thread(target=drain, daemon=True).start()
        return proc

    java_gateway.launch_gateway_server_process = launch_and_drain
    return java_gateway.get_gateway()


class BuilderUtil:
    """What the bridge's ``org.apache.paimon.python.InvocationUtil`` does, for a plain
    classpath: py4j's reflection does not find the tables' default ``new*Builder`` methods,
    so the builders are made by their public constructors."""

    def __init__(self, paimon: Any) -> None:
        self.P = paimon

    def getReadBuilder(self, table: Any) -> Any:  # noqa: N802 - the bridge's name
        return self.P.table.source.ReadBuilderImpl(table)

    def getBatchWriteBuilder(self, table: Any) -> Any:  # noqa: N802 - the bridge's name
        return self.P.table.sink.BatchWriteBuilderImpl(table)


# ---------------------------------------------------------------------------------------------
# Type strings (Paimon SQL form) ⇄ Java DataTypes ⇄ a small Python description
# ---------------------------------------------------------------------------------------------



def _column_values(path: str, column: str) -> list[Any]:
    """One column of a data file, in file order."""
    if path.endswith(".avro"):
        import fastavro

        with open(path, "rb") as f:
            return [r[column] for r in fastavro.reader(f)]
    if path.endswith(".orc"):
        import pyarrow.orc as orc

        return orc.ORCFile(path).read(columns=[column]).column(0).to_pylist()
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=[column]).column(0).to_pylist()


class PType:
    """What the worker needs of a Java DataType, fetched once per table read or write."""

    __slots__ = ("root", "nullable", "precision", "scale", "elem", "key", "value", "fields",
                 "java")

    def __init__(self, java: Any) -> None:
        self.java = java
        self.root: str = java.getTypeRoot().name()
        self.nullable: bool = java.isNullable()
        self.precision = self.scale = 0
        self.elem = self.key = self.value = None
        self.fields: list[tuple[str, PType]] = []
        r = self.root
        if r == "DECIMAL":
            self.precision, self.scale = java.getPrecision(), java.getScale()
        elif r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
                   "TIME_WITHOUT_TIME_ZONE"):
            self.precision = java.getPrecision()
        elif r in ("ARRAY", "MULTISET", "VECTOR"):
            self.elem = PType(java.getElementType())
        elif r == "MAP":
            self.key, self.value = PType(java.getKeyType()), PType(java.getValueType())
        elif r == "ROW":
            self.fields = [(f.name(), PType(f.type())) for f in java.getFields()]


def split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, cur, quoted = [], 0, [], False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "<(":
            depth += 1
        elif not quoted and ch in ">)":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


class Types:
    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        t = jvm.org.apache.paimon.types
        self.t = t
        self.parser = t.DataTypeJsonParser

    def parse(self, text: str) -> Any:
        """``ARRAY<INT>``, ``MAP<STRING, BIGINT NOT NULL>``, ``ROW<a INT, `b c` STRING>``,
        ``MULTISET<STRING>``, ``DECIMAL(10, 2) NOT NULL``, ... → a Java DataType."""
        s = text.strip()
        nullable = True
        if s.upper().endswith(" NOT NULL") and s[: -len(" NOT NULL")].rstrip().endswith(">"):
            s, nullable = s[: -len(" NOT NULL")].rstrip(), False
        word = s.split("<", 1)[0].strip().upper()
        if word in ("ARRAY", "MULTISET", "MAP", "ROW") and s.endswith(">"):
            inner = s[s.index("<") + 1: -1]
            if word == "ARRAY":
                return self.t.ArrayType(nullable, self.parse(inner))
            if word == "MULTISET":
                return self.t.MultisetType(nullable, self.parse(inner))
            if word == "MAP":
                k, v = split_top(inner)
                return self.t.MapType(nullable, self.parse(k), self.parse(v))
            fields = []
            for i, part in enumerate(split_top(inner)):
                name, rest = self._field_name(part)
                comment = None
                if " COMMENT " in rest.upper():
                    at = rest.upper().rindex(" COMMENT ")
                    comment = rest[at + 9:].strip().strip("'")
                    rest = rest[:at]
                fields.append(self.t.DataField(i, name, self.parse(rest), comment))
            return self.t.RowType(nullable, fields)
        return self.parser.parseAtomicTypeSQLString(text.strip())

    @staticmethod
    def _field_name(part: str) -> tuple[str, str]:
        part = part.strip()
        if part.startswith("`"):
            end = part.index("`", 1)
            return part[1:end], part[end + 1:].strip()
        name, rest = part.split(None, 1)
        return name, rest


# ---------------------------------------------------------------------------------------------
# Values: canonical JSON → BinaryRow (Java side) and InternalRow → canonical JSON
# ---------------------------------------------------------------------------------------------

COMPACT_TS = 3
COMPACT_DECIMAL = 18
INT_LIKE = {"INTEGER", "DATE", "TIME_WITHOUT_TIME_ZONE"}


def _strip(v: Any, prefix: str) -> Any:
    return v[len(prefix):] if isinstance(v, str) and v.startswith(prefix) else v


def parse_ts_nanos(v: Any) -> int:
    """``"TS:2024-01-05T10:11:12.123456789"`` (or without the tag, with a space) → epoch nanos."""
    text = str(_strip(v, "TS:")).replace(" ", "T")
    frac = 0
    if "." in text:
        text, f = text.split(".", 1)
        frac = int((f + "000000000")[:9])
    base = dt.datetime.fromisoformat(text)
    if base.tzinfo is not None:
        base = base.astimezone(dt.UTC).replace(tzinfo=None)
    delta = base - C.EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + frac


def parse_date_days(v: Any) -> int:
    if isinstance(v, int):
        return v
    return (dt.date.fromisoformat(str(_strip(v, "DATE:"))) - C.EPOCH_DATE).days


def parse_time_millis(v: Any) -> int:
    if isinstance(v, int):
        return v
    t = dt.time.fromisoformat(str(_strip(v, "TIME:")))
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + t.microsecond // 1000


def parse_float(v: Any) -> float:
    return float(_strip(v, "F:")) if isinstance(v, str) else float(v)


class Values:
    def __init__(self, gateway: Any) -> None:
        jvm = gateway.jvm
        self.jvm = jvm
        d = jvm.org.apache.paimon.data
        self.BinaryRow, self.BinaryRowWriter = d.BinaryRow, d.BinaryRowWriter
        self.BinaryArray, self.BinaryArrayWriter = d.BinaryArray, d.BinaryArrayWriter
        self.BinaryMap, self.BinaryString = d.BinaryMap, d.BinaryString
        self.Decimal, self.Timestamp = d.Decimal, d.Timestamp
        self.BigDecimal = jvm.java.math.BigDecimal
        ser = d.serializer
        self.RowSer, self.ArraySer, self.MapSer = (ser.InternalRowSerializer,
                                                   ser.InternalArraySerializer,
                                                   ser.InternalMapSerializer)
        self.gateway = gateway
        self.RowKind = jvm.org.apache.paimon.types.RowKind
        self.IntType = jvm.org.apache.paimon.types.IntType
        self._kinds = {k: self.RowKind.fromShortString(k) for k in ("+I", "-U", "+U", "-D")}
        self.binary_range = any(
            len(m.getParameterTypes()) == 4
            for m in jvm.java.lang.Class.forName("org.apache.paimon.data.BinaryWriter").getMethods()
            if m.getName() == "writeBinary")

    # -- writing ------------------------------------------------------------------------------

    def row(self, values: list[Any], types: list[PType], kind: str = "+I") -> Any:
        if len(values) != len(types):
            raise ValueError(f"row has {len(values)} values for {len(types)} columns: {values!r}")
        row = self.BinaryRow(len(types))
        w = self.BinaryRowWriter(row)
        w.reset()
        for pos, (v, t) in enumerate(zip(values, types, strict=True)):
            self._write(w, pos, v, t, in_array=False)
        w.complete()
        row.setRowKind(self._kinds[kind])
        return row

    def _write(self, w: Any, pos: int, v: Any, t: PType, in_array: bool) -> None:
        r = t.root
        if v is None:
            if r == "DECIMAL" and t.precision > COMPACT_DECIMAL:
                w.writeDecimal(pos, None, t.precision)
            elif r.startswith("TIMESTAMP") and t.precision > COMPACT_TS:
                w.writeTimestamp(pos, None, t.precision)
            elif in_array:
                w.setNullAt(pos, t.java)
            else:
                w.setNullAt(pos)
            return
        if r == "BOOLEAN":
            w.writeBoolean(pos, bool(v))
        elif r == "TINYINT":
            w.writeByte(pos, int(v))
        elif r == "SMALLINT":
            w.writeShort(pos, int(v))
        elif r == "INTEGER":
            w.writeInt(pos, int(v))
        elif r == "BIGINT":
            w.writeLong(pos, int(v))
        elif r == "FLOAT":
            w.writeFloat(pos, parse_float(v))
        elif r == "DOUBLE":
            w.writeDouble(pos, parse_float(v))
        elif r == "DECIMAL":
            dec = self.Decimal.fromBigDecimal(self.BigDecimal(str(_strip(v, "D:"))),
                                              t.precision, t.scale)
            if dec is None:
                raise ValueError(f"{v!r} does not fit DECIMAL({t.precision}, {t.scale})")
            w.writeDecimal(pos, dec, t.precision)
        elif r in ("CHAR", "VARCHAR"):
            w.writeString(pos, self.BinaryString.fromString(str(v)))
        elif r in ("BINARY", "VARBINARY"):
            raw = bytes.fromhex(_strip(v, "B:")) if isinstance(v, str) else bytes(v)
            if self.binary_range:  # Paimon 2.x: writeBinary(pos, bytes, offset, length)
                w.writeBinary(pos, raw, 0, len(raw))
            else:
                w.writeBinary(pos, raw)
        elif r == "DATE":
            w.writeInt(pos, parse_date_days(v))
        elif r == "TIME_WITHOUT_TIME_ZONE":
            w.writeInt(pos, parse_time_millis(v))
        elif r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
            nanos = v if isinstance(v, int) else parse_ts_nanos(v)
            millis, nano_of_milli = divmod(nanos, 1_000_000)
            w.writeTimestamp(pos, self.Timestamp.fromEpochMillis(millis, nano_of_milli),
                             t.precision)
        elif r == "ARRAY":
            w.writeArray(pos, self.array(list(v), t.elem), self.ArraySer(t.elem.java))
        elif r in ("MAP", "MULTISET"):
            pairs = v["map"] if isinstance(v, dict) and "map" in v else (
                list(v.items()) if isinstance(v, dict) else list(v))
            kt = t.key if r == "MAP" else t.elem
            keys = self.array([p[0] for p in pairs], kt)
            if r == "MAP":
                vals, vser = self.array([p[1] for p in pairs], t.value), t.value.java
            else:
                vals = self.array([p[1] for p in pairs], PType(self.IntType(False)))
                vser = self.IntType(False)
            w.writeMap(pos, self.BinaryMap.valueOf(keys, vals), self.MapSer(kt.java, vser))
        elif r == "VECTOR":  # Paimon 2.x: a BinaryVector of a primitive array
            prim = {"BOOLEAN": self.jvm.boolean, "TINYINT": self.jvm.byte,
                    "SMALLINT": self.jvm.short, "INTEGER": self.jvm.int,
                    "BIGINT": self.jvm.long, "FLOAT": self.jvm.float,
                    "DOUBLE": self.jvm.double}[t.elem.root]
            arr = self.gateway.new_array(prim, len(v))
            for i, x in enumerate(v):
                arr[i] = parse_float(x) if t.elem.root in ("FLOAT", "DOUBLE") else (
                    bool(x) if t.elem.root == "BOOLEAN" else int(x))
            ser = self.jvm.org.apache.paimon.data.serializer.InternalVectorSerializer(
                t.elem.java, t.java.getLength())
            w.writeVector(pos, self.jvm.org.apache.paimon.data.BinaryVector
                          .fromPrimitiveArray(arr), ser)
        elif r == "BLOB":  # Paimon 2.x: the bytes, kept in a .blob file by the writer
            raw = bytes.fromhex(_strip(v, "B:")) if isinstance(v, str) else bytes(v)
            w.writeBlob(pos, self.jvm.org.apache.paimon.data.Blob.fromData(raw))
        elif r == "VARIANT":  # its JSON text (GenericVariant.fromJson)
            w.writeVariant(pos, self.jvm.org.apache.paimon.data.variant.GenericVariant
                           .fromJson(_strip(v, "V:")))
        elif r == "ROW":
            if isinstance(v, dict) and "struct" in v:
                vals = [x[1] for x in v["struct"]]
            elif isinstance(v, dict):
                vals = [v.get(name) for name, _ in t.fields]
            else:
                vals = list(v)
            nested = self.row(vals, [ft for _, ft in t.fields])
            w.writeRow(pos, nested, self.RowSer(t.java))
        else:
            raise TypeError(f"cannot write a value of type {r}")

    def array(self, values: list[Any], elem: PType) -> Any:
        arr = self.BinaryArray()
        w = self.BinaryArrayWriter(arr, len(values),
                                   self.BinaryArray.calculateFixLengthPartSize(elem.java))
        for pos, v in enumerate(values):
            self._write(w, pos, v, elem, in_array=True)
        w.complete()
        return arr

    # -- reading ------------------------------------------------------------------------------

    def read(self, getters: Any, pos: int, t: PType) -> Any:
        if getters.isNullAt(pos):
            return None
        r = t.root
        if r == "BOOLEAN":
            return bool(getters.getBoolean(pos))
        if r == "TINYINT":
            return int(getters.getByte(pos))
        if r == "SMALLINT":
            return int(getters.getShort(pos))
        if r in ("INTEGER",):
            return int(getters.getInt(pos))
        if r == "BIGINT":
            return int(getters.getLong(pos))
        if r == "FLOAT":
            return C.canon_float(getters.getFloat(pos), single=True)
        if r == "DOUBLE":
            return C.canon_float(getters.getDouble(pos))
        if r == "DECIMAL":
            d = getters.getDecimal(pos, t.precision, t.scale)
            return None if d is None else C.canon_decimal(Decimal(str(d.toBigDecimal())))
        if r in ("CHAR", "VARCHAR"):
            s = getters.getString(pos)
            return None if s is None else s.toString()
        if r in ("BINARY", "VARBINARY"):
            b = getters.getBinary(pos)
            return None if b is None else C.canon_binary(b)
        if r == "DATE":
            return C.canon_date_days(getters.getInt(pos))
        if r == "TIME_WITHOUT_TIME_ZONE":
            return C.canon_time_micros(getters.getInt(pos) * 1000)
        if r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
            ts = getters.getTimestamp(pos, t.precision)
            if ts is None:
                return None
            return C.canon_timestamp_nanos(ts.getMillisecond() * 1_000_000
                                           + ts.getNanoOfMillisecond())
        if r == "ARRAY":
            a = getters.getArray(pos)
            return [self.read(a, i, t.elem) for i in range(a.size())]
        if r in ("MAP", "MULTISET"):
            m = getters.getMap(pos)
            ks, vs = m.keyArray(), m.valueArray()
            kt = t.key if r == "MAP" else t.elem
            vt = t.value if r == "MAP" else PType(self.IntType(False))
            return C.canon_map((self.read(ks, i, kt), self.read(vs, i, vt))
                               for i in range(m.size()))
        if r == "VECTOR":  # as Paimon's Spark integration shows it: an ARRAY
            a = getters.getVector(pos)
            return [self.read(a, i, t.elem) for i in range(a.size())]
        if r == "BLOB":  # as Paimon's Spark integration shows it: the bytes
            return C.canon_binary(getters.getBlob(pos).toData())
        if r == "VARIANT":
            return C.canon_variant(getters.getVariant(pos).toJson(
                self.jvm.java.time.ZoneOffset.UTC))
        if r == "ROW":
            row = getters.getRow(pos, len(t.fields))
            return C.canon_struct((name, self.read(row, i, ft))
                                  for i, (name, ft) in enumerate(t.fields))
        raise TypeError(f"cannot read a value of type {r}")


# ---------------------------------------------------------------------------------------------
# The operations
# ---------------------------------------------------------------------------------------------


class Worker:
    def __init__(self, gateway: Any) -> None:
        self.gw = gateway
        self.jvm = jvm = gateway.jvm
        self.P = jvm.org.apache.paimon
        self.types = Types(jvm)
        self.values = Values(gateway)
        self.catalogs: dict[str, Any] = {}
        self.tmp = tempfile.mkdtemp(prefix="java-paimon-io-")
        self.io_manager = self.P.disk.IOManager.create(self.tmp)
        self.bridge = self._has_class("org.apache.paimon.python.InvocationUtil")
        self.Util = self.P.python.InvocationUtil if self.bridge else BuilderUtil(self.P)

    # -- helpers ------------------------------------------------------------------------------

    def _has_class(self, name: str) -> bool:
        try:
            self.jvm.java.lang.Class.forName(name)
        except Exception:  # noqa: BLE001 - py4j wraps ClassNotFoundException
            return False
        return True

    def catalog(self, warehouse: str) -> Any:
        cat = self.catalogs.get(warehouse)
        if cat is None:
            # No caching catalog: schemalab changes the same tables between our calls.
            opts = self.P.options.Options({"warehouse": warehouse, "cache-enabled": "false"})
            cat = self.P.catalog.CatalogFactory.createCatalog(
                self.P.catalog.CatalogContext.create(opts))
            self.catalogs[warehouse] = cat
        return cat

    def ident(self, req: dict[str, Any]) -> Any:
        return self.P.catalog.Identifier.create(req.get("database", "default"), req["table"])

    def table(self, req: dict[str, Any]) -> Any:
        return self.catalog(req["warehouse"]).getTable(self.ident(req))

    def names(self, path: Any) -> Any:
        parts = [path] if isinstance(path, str) else list(path)
        arr = self.gw.new_array(self.jvm.java.lang.String, len(parts))
        for i, p in enumerate(parts):
            arr[i] = p
        return arr

    def top(self, path: Any) -> Any:
        """The bundled 1.0-SNAPSHOT (paimon-core of 2024-09-04) has no nested add, rename,
        drop or retype: its SchemaChange factories take one top-level name. Paimon 2.x takes
        a nested path (``["a", "element"]``) as a String[]."""
        parts = [path] if isinstance(path, str) else list(path)
        if len(parts) == 1:
            return parts[0]
        if self.bridge:
            raise ValueError(f"this Paimon build changes top-level columns only, not {parts}")
        return self.names(parts)

    def commit(self, table: Any, fill: Any) -> int | None:
        wb = self.Util.getBatchWriteBuilder(table)
        write = wb.newWrite()
        write.withIOManager(self.io_manager)
        try:
            fill(write)
            messages = write.prepareCommit()
            commit = wb.newCommit()
            try:
                commit.commit(messages)
            finally:
                commit.close()
        finally:
            write.close()
        latest = table.snapshotManager().latestSnapshotId()
        return None if latest is None else int(latest)

    # -- ops ----------------------------------------------------------------------------------

    def op_ping(self, req: dict[str, Any]) -> Any:
        return "pong"

    def op_create_table(self, req: dict[str, Any]) -> Any:
        b = self.P.schema.Schema.newBuilder()
        for col in req["columns"]:
            name, type_text = col[0], col[1]
            comment = col[2] if len(col) > 2 else None
            b.column(name, self.types.parse(type_text), comment)
        if req.get("partition_keys"):
            b.partitionKeys(list(req["partition_keys"]))
        if req.get("primary_keys"):
            b.primaryKey(list(req["primary_keys"]))
        b.options(dict(req.get("options") or {}))
        if req.get("comment") is not None:
            b.comment(req["comment"])
        cat = self.catalog(req["warehouse"])
        cat.createDatabase(req.get("database", "default"), True)
        cat.createTable(self.ident(req), b.build(), bool(req.get("ignore_if_exists", False)))
        return self.describe(self.table(req))

    def describe(self, table: Any) -> dict[str, Any]:
        schema = table.schema()
        return {"schema_id": int(schema.id()),
                "columns": [f.name() for f in schema.fields()],
                "types": [f.type().asSQLString() for f in schema.fields()],
                "partition_keys": list(schema.partitionKeys()),
                "primary_keys": list(schema.primaryKeys()),
                "options": dict(schema.options()),
                "location": table.location().toString()}

    def op_describe(self, req: dict[str, Any]) -> Any:
        return self.describe(self.table(req))

    def op_write(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        fields = list(table.rowType().getFields())
        types = [PType(f.type()) for f in fields]
        rows = req["rows"]
        kinds = req.get("row_kinds") or ["+I"] * len(rows)
        dynamic = table.bucketMode().name() in ("HASH_DYNAMIC", "CROSS_PARTITION", "KEY_DYNAMIC")
        assign = self._bucket_assigner(table) if dynamic else None

        def fill(write: Any) -> None:
            for values, kind in zip(rows, kinds, strict=True):
                row = self.values.row(values, types, kind)
                if assign is not None:
                    write.write(row, assign(row))
                else:
                    write.write(row)

        return {"snapshot_id": self.commit(table, fill)}

    def _bucket_assigner(self, table: Any) -> Any:
        if table.bucketMode().name() in ("CROSS_PARTITION", "KEY_DYNAMIC"):  # (2.x: KEY_DYNAMIC)
            raise ValueError("cross-partition (global index) writes are not supported here")
        opts = table.coreOptions()
        args = [table.snapshotManager(), "java-paimon-oracle",
                table.store().newIndexFileHandler(), 1, 1, 0, opts.dynamicBucketTargetRowNum()]
        if not self.bridge:  # Paimon 2.x: and the maximum number of buckets
            max_buckets = opts.dynamicBucketMaxBuckets()
            args.append(-1 if max_buckets is None else int(max_buckets))
        assigner = self.P.index.HashBucketAssigner(*args)
        extractor = self.P.table.sink.RowPartitionKeyExtractor(table.schema())

        def assign(row: Any) -> int:
            return int(assigner.assign(extractor.partition(row),
                                       extractor.trimmedPrimaryKey(row).hashCode()))

        return assign

    def op_alter(self, req: dict[str, Any]) -> Any:
        SC = self.P.schema.SchemaChange
        changes = []
        for ch in req["changes"]:
            kind = ch["kind"]
            if kind == "add_column":
                move = self._move(ch["move"], ch["path"]) if ch.get("move") else None
                changes.append(SC.addColumn(self.top(ch["path"]), self.types.parse(ch["type"]),
                                            ch.get("comment"), move))
            elif kind == "rename_column":
                changes.append(SC.renameColumn(self.top(ch["path"]), ch["new_name"]))
            elif kind == "drop_column":
                changes.append(SC.dropColumn(self.top(ch["path"])))
            elif kind == "update_column_type":
                changes.append(SC.updateColumnType(self.top(ch["path"]),
                                                   self.types.parse(ch["type"]),
                                                   bool(ch.get("keep_nullability", False))))
            elif kind == "update_column_nullability":
                changes.append(SC.updateColumnNullability(self.names(ch["path"]),
                                                          bool(ch["nullable"])))
            elif kind == "update_column_comment":
                changes.append(SC.updateColumnComment(self.names(ch["path"]), ch["comment"]))
            elif kind == "update_column_position":
                changes.append(SC.updateColumnPosition(self._move(ch["move"], ch["path"])))
            elif kind == "set_option":
                changes.append(SC.setOption(ch["key"], str(ch["value"])))
            elif kind == "remove_option":
                changes.append(SC.removeOption(ch["key"]))
            elif kind == "update_comment":
                changes.append(SC.updateComment(ch.get("comment")))
            else:
                raise ValueError(f"unknown schema change kind {kind!r}")
        self.catalog(req["warehouse"]).alterTable(self.ident(req), changes, False)
        return self.describe(self.table(req))

    def _move(self, move: dict[str, Any], path: Any) -> Any:
        Move = self.P.schema.SchemaChange.Move
        name = path if isinstance(path, str) else path[-1]
        if move.get("first"):
            return Move.first(name)
        if move.get("last"):
            return Move.last(name)
        if "after" in move:
            return Move.after(name, move["after"])
        if "before" in move:
            return Move.before(name, move["before"])
        raise ValueError(f"bad move {move!r}")

    def op_read(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        dynamic = dict(req.get("options") or {})
        if req.get("snapshot_id") is not None:
            dynamic["scan.snapshot-id"] = str(req["snapshot_id"])
        if dynamic:
            table = table.copy(dynamic)
        fields = list(table.rowType().getFields())
        types = [PType(f.type()) for f in fields]
        rb = self.Util.getReadBuilder(table)
        splits = rb.newScan().plan().splits()
        read = rb.newRead()
        rows = []
        for split in splits:
            it = self.P.reader.RecordReaderIterator(read.createReader(split))
            try:
                while it.hasNext():
                    row = it.next()
                    rows.append([self.values.read(row, i, t) for i, t in enumerate(types)])
            finally:
                it.close()
        # a system table (``t$snapshots``) is no FileStoreTable: it has no schema id
        schema_id = None if "$" in req["table"] else int(table.schema().id())
        return {"schema_id": schema_id,
                "columns": [f.name() for f in fields],
                "types": [f.type().asSQLString() for f in fields],
                "rows": C.sort_rows(rows)}

    def op_time_travel(self, req: dict[str, Any]) -> Any:
        """The snapshot id a read with ``options`` (``scan.timestamp-millis``, ...) starts
        from: ``TimeTravelUtil.tryTravelToSnapshot`` of the table copied with them, the
        snapshot its scan and its schema use (None: no time travel option); a time before
        the first snapshot raises StaticFromTimestampStartingScanner's message."""
        table = self.table(req).copy(dict(req.get("options") or {}))
        snap = self.P.table.source.snapshot.TimeTravelUtil.tryTravelToSnapshot(table)
        return int(snap.get().id()) if snap.isPresent() else None

    def op_delete_where(self, req: dict[str, Any]) -> Any:
        """``DELETE FROM t WHERE column IN (values)`` on an append table with deletion
        vectors, the way paimon-spark does it (PaimonSparkWriter.persistDeletionVectors): row
        positions per data file → BitmapDeletionVector → AppendDeletionFileMaintainer →
        a commit of index files only. Positions come from reading each data file (Parquet
        and ORC with pyarrow, Avro with fastavro); ``column`` is the name the files carry."""
        table = self.table(req)
        if not table.coreOptions().deletionVectorsEnabled() or list(table.primaryKeys()):
            raise ValueError("delete_where is for append tables with deletion-vectors.enabled")
        wanted = {C.dumps(v) for v in req["values"]}
        column = req["column"]
        snapshot_id = table.snapshotManager().latestSnapshotId()
        handler = table.store().newIndexFileHandler()
        if self.bridge:
            Maintainer = self.P.deletionvectors.append.AppendDeletionFileMaintainer
        else:  # Paimon 2.x: renamed, and given the Snapshot rather than its id
            Maintainer = self.P.deletionvectors.append.BaseAppendDeleteFileMaintainer
            snapshot_id = table.snapshotManager().latestSnapshot()
        unaware = table.bucketMode().name() == "BUCKET_UNAWARE"
        maintainers: dict[tuple[str, int], Any] = {}
        deleted = 0
        for split in self.Util.getReadBuilder(table).newScan().plan().splits():
            partition, bucket = split.partition(), int(split.bucket())
            key = (partition.toString(), bucket)
            for meta in split.dataFiles():
                path = (split.bucketPath() + "/" + meta.fileName()).replace("file:", "", 1)
                positions = [i for i, v in enumerate(_column_values(path, column))
                             if C.dumps(v) in wanted]
                if not positions:
                    continue
                if key not in maintainers:
                    maintainers[key] = (Maintainer.forUnawareAppend(handler, snapshot_id,
                                                                    partition) if unaware else
                                        Maintainer.forBucketedAppend(handler, snapshot_id,
                                                                     partition, bucket))
                dv = self.P.deletionvectors.BitmapDeletionVector()
                for pos in positions:
                    dv.delete(pos)
                maintainers[key].notifyNewDeletionVector(meta.fileName(), dv)
                deleted += len(positions)
        if not maintainers:
            return {"snapshot_id": None, "deleted": 0}
        io = self.P.io
        messages = []
        for m in maintainers.values():
            entries = list(m.persist())
            added = [e.indexFile() for e in entries if e.kind().name() == "ADD"]
            removed = [e.indexFile() for e in entries if e.kind().name() != "ADD"]
            if self.bridge:
                messages.append(self.P.table.sink.CommitMessageImpl(
                    m.getPartition(), m.getBucket(), io.DataIncrement.emptyIncrement(),
                    io.CompactIncrement.emptyIncrement(), io.IndexIncrement(added, removed)))
            else:  # Paimon 2.x: no IndexIncrement; the vectors ride a CompactIncrement, so
                # the snapshot is a COMPACT as before (in a DataIncrement, an OVERWRITE)
                messages.append(self.P.table.sink.CommitMessageImpl(
                    m.getPartition(), m.getBucket(), None, io.DataIncrement.emptyIncrement(),
                    io.CompactIncrement([], [], [], added, removed)))
        commit = self.Util.getBatchWriteBuilder(table).newCommit()
        try:
            commit.commit(messages)
        finally:
            commit.close()
        return {"snapshot_id": int(table.snapshotManager().latestSnapshotId()),
                "deleted": deleted}

    def op_snapshots(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        sm = table.snapshotManager()
        earliest, latest = sm.earliestSnapshotId(), sm.latestSnapshotId()
        out = []
        if latest is None:
            return out
        for sid in range(int(earliest), int(latest) + 1):
            if not sm.snapshotExists(sid):
                continue
            s = sm.snapshot(sid)
            out.append({"id": int(s.id()), "schema_id": int(s.schemaId()),
                        "commit_kind": s.commitKind().name(),
                        "total_record_count": s.totalRecordCount(),
                        "delta_record_count": s.deltaRecordCount(),
                        "index_manifest": s.indexManifest()})
        return out

    def op_compact(self, req: dict[str, Any]) -> Any:
        """Full compaction of every partition and bucket: TableWrite.compact(p, b, true) for
        bucketed and primary-key tables, the append compaction coordinator for unaware-bucket
        append tables."""
        table = self.table(req)
        mode = table.bucketMode().name()
        if mode == "BUCKET_UNAWARE" and not self.bridge \
                and table.coreOptions().dataEvolutionEnabled():
            return self._compact_data_evolution(table)
        if mode == "BUCKET_UNAWARE":
            return self._compact_unaware(table)
        rb = self.Util.getReadBuilder(table)
        targets = {}
        for split in rb.newScan().plan().splits():
            targets[(split.partition().toString(), int(split.bucket()))] = (split.partition(),
                                                                           int(split.bucket()))

        def fill(write: Any) -> None:
            for partition, bucket in targets.values():
                write.compact(partition, bucket, True)

        return {"snapshot_id": self.commit(table, fill), "buckets": len(targets)}

    def _compact_data_evolution(self, table: Any) -> Any:
        """What Spark's ``CALL sys.compact`` runs on a data-evolution table (Paimon 2.x's
        ``CompactProcedure.compactDataEvolutionTable``): the coordinator's tasks, each
        compacted and all committed at once."""
        snapshot = table.snapshotManager().latestSnapshot()
        if snapshot is None:
            return {"snapshot_id": None, "tasks": 0}
        coordinator = self.P.append.dataevolution.DataEvolutionCompactCoordinator(
            table, False, False, snapshot)
        tasks = list(coordinator.plan())
        if not tasks:
            return {"snapshot_id": None, "tasks": 0}
        user = "java-paimon-oracle"
        messages = [task.doCompact(table, user) for task in tasks]
        commit = table.newCommit(user)
        try:
            commit.commit(messages)
        finally:
            commit.close()
        return {"snapshot_id": int(table.snapshotManager().latestSnapshotId()),
                "tasks": len(tasks)}

    def _compact_unaware(self, table: Any) -> Any:
        """One UnawareAppendCompactionTask per partition holding every live file (the
        coordinator would pick only small-enough bins)."""
        by_partition: dict[str, tuple[Any, list[Any]]] = {}
        for split in self.Util.getReadBuilder(table).newScan().plan().splits():
            key = split.partition().toString()
            entry = by_partition.setdefault(key, (split.partition(), []))
            entry[1].extend(list(split.dataFiles()))
        # Paimon 2.x renamed the task (AppendCompactTask)
        Task = (self.P.append.UnawareAppendCompactionTask if self.bridge
                else self.P.append.AppendCompactTask)
        tasks = [Task(partition, files)
                 for partition, files in by_partition.values() if len(files) > 1]
        if not tasks:
            return {"snapshot_id": None, "tasks": 0}
        wb = self.Util.getBatchWriteBuilder(table)
        write = table.store().newWrite("java-paimon-oracle")
        write.withIOManager(self.io_manager)
        if not self.bridge and table.coreOptions().rowTrackingEnabled():
            # as Spark's CompactProcedure: the rewritten rows keep their row ids and
            # sequence numbers in columns of their own
            write.withWriteType(self.P.table.SpecialFields.rowTypeWithRowTracking(
                table.rowType()))
        try:
            messages = [task.doCompact(table, write) for task in tasks]
            commit = wb.newCommit()
            try:
                commit.commit(messages)
            finally:
                commit.close()
        finally:
            write.close()
        return {"snapshot_id": int(table.snapshotManager().latestSnapshotId()),
                "tasks": len(tasks)}


    # -- branches and tags (the Table API Paimon's procedures call) ----------------------------

    def op_create_tag(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        retained = req.get("time_retained_seconds")
        duration = None if retained is None else self.jvm.java.time.Duration.ofSeconds(
            int(retained))
        sid = req.get("snapshot_id")
        if sid is None:
            sid = int(table.snapshotManager().latestSnapshotId())
        if duration is None:
            table.createTag(req["tag"], int(sid))
        else:
            table.createTag(req["tag"], int(sid), duration)
        return {"snapshot_id": int(sid)}

    def op_delete_tag(self, req: dict[str, Any]) -> Any:
        self.table(req).deleteTag(req["tag"])
        return None

    def op_create_branch(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        if req.get("tag"):
            table.createBranch(req["branch"], req["tag"])
        else:
            table.createBranch(req["branch"])
        return None

    def op_delete_branch(self, req: dict[str, Any]) -> Any:
        self.table(req).deleteBranch(req["branch"])
        return None

    def op_fast_forward(self, req: dict[str, Any]) -> Any:
        self.table(req).fastForward(req["branch"])
        return None

    def op_rollback(self, req: dict[str, Any]) -> Any:
        table = self.table(req)
        if req.get("tag"):
            table.rollbackTo(req["tag"])
        else:
            table.rollbackTo(self.jvm.java.lang.Long(int(req["snapshot_id"])).longValue())
        return None

    def op_expire(self, req: dict[str, Any]) -> Any:
        """Expire snapshots keeping the newest ``retain_max`` (and at least
        ``retain_min``), as ``CALL sys.expire_snapshots`` does."""
        table = self.table(req)
        Config = self.P.options.ExpireConfig
        b = Config.builder().snapshotRetainMax(int(req["retain_max"])).snapshotRetainMin(
            int(req.get("retain_min", 1))).snapshotTimeRetain(
            self.jvm.java.time.Duration.ofMillis(0))
        return int(table.newExpireSnapshots().config(b.build()).expire())

    def op_refs(self, req: dict[str, Any]) -> Any:
        """Tags (name → snapshot id, schema id) and branch names, as Java lists them."""
        table = self.table(req)
        tags = {}
        for name in list(table.tagManager().allTagNames()):
            if self.bridge:  # Paimon 1.0: no Tag class yet
                snap = table.tagManager().taggedSnapshot(name)
            else:
                snap = table.tagManager().getOrThrow(name).trimToSnapshot()
            tags[str(name)] = [int(snap.id()), int(snap.schemaId())]
        branches = sorted(str(b) for b in list(table.branchManager().branches()))
        return {"tags": tags, "branches": branches}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--netty-jar", default=os.environ.get("JAVA_PAIMON_NETTY_JAR"))
    ap.add_argument("--classpath", help="a file holding the classpath (make oracle-jars)")
    args = ap.parse_args()

    def start() -> Worker:
        if args.classpath:
            import gateway

            return Worker(gateway.start(gateway.read_classpath(args.classpath)))
        return Worker(start_gateway(args.netty_jar))

    serve(start)
    os._exit(0)  # py4j's callback server threads would keep the process alive

if __name__ == "__main__":
    main()
