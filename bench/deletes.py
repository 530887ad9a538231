"""Benchmark: a read that applies deletes against a plain read of the surviving rows.

    .venv/bin/python bench/deletes.py [--rows 10000000] [--files 10] [--share 0.1]
                                      [--repeats 5] [--quick] [--dir /tmp/schemalab-bench-deletes]

A table of ``--rows`` rows in ``--files`` Parquet files (with field ids, as Iceberg and
schemalab write them: the read is one scan by field id), ``--share`` of each file's rows
deleted at random positions, three ways:

* ``dv``         deletion vectors: one Paimon deletion-vector index file per data file (a
                 RoaringBitmap32 in Paimon's layout), decoded by schemalab's reader;
* ``posfile``    position delete files: one Iceberg position delete file (``file_path``,
                 ``pos``) per data file, read with pyarrow;
* ``equality``   equality delete files: one Iceberg equality delete file on ``id`` per data
                 file (its deleted rows' ids), anti-joined by value;
* ``plain``      the surviving rows written to the same number of files, no deletes.

Each read is schemalab's engine (``plan_read`` + ``execute``: planning, decoding the deletes on
the driver, the scan, the anti-join) followed by one aggregate (count and max of every column,
``collect()``). One more candidate shows the design the engine rejected:

* ``per-row``    the same deletes sent to Spark one row per deleted position (file name,
                 position) and removed by a broadcast anti-join on (file name, row index).

Candidates are interleaved per round, after one warm-up each; the median and minimum of
``--repeats`` rounds are printed with the machine's load average, and the median CPU time
(Spark's JVM and this process: steadier than the wall clock on a shared machine).
Generated data is kept under ``--dir`` and reused when its marker matches the parameters.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

GENERATOR_VERSION = 2
PAIMON_DV_MAGIC = 1581511376


def generate(root: Path, rows: int, files: int, share: float) -> None:
    import pyroaring

    marker = root / "bench.json"
    params = {"rows": rows, "files": files, "share": share, "version": GENERATOR_VERSION}
    if marker.exists() and json.loads(marker.read_text()) == params:
        return
    shutil.rmtree(root, ignore_errors=True)
    for d in ("data", "plain", "index", "deletes", "equality"):
        (root / d).mkdir(parents=True)
    rng = np.random.default_rng(7)
    per = rows // files
    schema = pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                        pa.field("v", pa.string(), metadata={b"PARQUET:field_id": b"2"}),
                        pa.field("x", pa.float64(), metadata={b"PARQUET:field_id": b"3"})])
    for i in range(files):
        ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
        table = pa.table([ids, pa.array([f"v{k % 1000}" for k in ids]), ids * 0.5],
                         schema=schema)
        name = f"data-{i:03d}.parquet"
        pq.write_table(table, root / "data" / name, compression="zstd")
        deleted = np.sort(rng.choice(per, int(per * share), replace=False))
        keep = np.ones(per, bool)
        keep[deleted] = False
        pq.write_table(table.filter(pa.array(keep)), root / "plain" / name, compression="zstd")
        dv = struct.pack(">i", PAIMON_DV_MAGIC) + pyroaring.BitMap(deleted.tolist()).serialize()
        (root / "index" / f"index-{i:03d}").write_bytes(
            b"\x01" + struct.pack(">i", len(dv)) + dv + struct.pack(">I", zlib.crc32(dv)))
        pq.write_table(pa.table({"file_path": pa.array([str(root / "data" / name)] *
                                                       len(deleted)),
                                 "pos": pa.array(deleted, pa.int64())}),
                       root / "deletes" / f"{name}-deletes.parquet", compression="zstd")
        pq.write_table(pa.table([pa.array(ids[deleted])], schema=pa.schema([schema.field(0)])),
                       root / "equality" / f"{name}-eq.parquet", compression="zstd")
    marker.write_text(json.dumps(params))


def aggregate(df: Any) -> list[Any]:
    from pyspark.sql import functions as F

    exprs = [F.count(F.lit(1)).alias("_rows")]
    for c in df.columns:
        exprs += [F.count(F.col(c)).alias(f"n_{c}"), F.max(F.col(c)).alias(f"max_{c}")]
    return list(df.agg(*exprs).collect()[0])


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` and of this one: on a machine shared
    with other work, a steadier measure of a read's cost than the wall clock."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") + time.process_time()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1M rows, 2 repeats")
    ap.add_argument("--dir", default="/tmp/schemalab-bench-deletes")
    ap.add_argument("--driver-memory", default="6g")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.repeats = 1_000_000, 2
    root = Path(args.dir) / f"rows{args.rows}-files{args.files}-share{args.share}"
    t0 = time.perf_counter()
    generate(root, args.rows, args.files, args.share)
    print(f"data: {root} ({time.perf_counter() - t0:.1f} s)")

    from pyspark.sql import functions as F

    from schemalab import local_spark
    from schemalab.engine.execute import execute
    from schemalab.engine.plan import (
        DataFile,
        EqualityDeletes,
        PositionDeletes,
        extra_name,
        plan_read,
    )
    from schemalab.iceberg.deletes import file_positions
    from schemalab.paimon.index import read_deletion_vector
    from schemalab.schema import TableSchema
    from schemalab.types import parse_type
    from schemalab.types.casts import CastMode
    from schemalab.types.model import DataField

    spark = local_spark("schemalab-bench-deletes", cores=2, driver_memory=args.driver_memory)
    schema = TableSchema(0, (DataField(1, "id", parse_type("BIGINT")),
                             DataField(2, "v", parse_type("STRING")),
                             DataField(3, "x", parse_type("DOUBLE"))), 3)
    names = sorted(p.name for p in (root / "data").iterdir())
    per = args.rows // args.files

    def files(kind: str) -> list[DataFile]:
        out = []
        for i, n in enumerate(names):
            path = str(root / ("plain" if kind == "plain" else "data") / n)
            if kind == "plain":
                out.append(DataFile(path, 0, pq.ParquetFile(path).metadata.num_rows))
                continue
            if kind == "equality":
                out.append(DataFile(path, 0, per, data_sequence_number=1))
                continue
            if kind == "dv":
                index = root / "index" / f"index-{i:03d}"
                (size,) = struct.unpack(">i", index.read_bytes()[1:5])
                d = PositionDeletes("deletion vector", str(index), None, load=functools.partial(
                    read_deletion_vector, str(index), 1, size))
            else:
                dfile = str(root / "deletes" / f"{n}-deletes.parquet")
                d = PositionDeletes("position delete file", dfile, None, load=functools.partial(
                    file_positions, dfile, "parquet", path))
            out.append(DataFile(path, 0, per, deletes=(d,)))
        return out

    eq_schema = TableSchema(0, (DataField(1, extra_name(1), parse_type("BIGINT")),), 1)
    id_schema = TableSchema(0, (schema.fields[0],), 1)

    def equality_deletes() -> list[EqualityDeletes]:
        out = []
        for n in names:
            path = str(root / "equality" / f"{n}-eq.parquet")
            rows = pq.ParquetFile(path).metadata.num_rows
            eq = DataFile(path, 0, rows, data_sequence_number=2)
            out.append(EqualityDeletes(path, 2, (1,), None, plan_read(
                "bench", eq_schema, [eq], lambda f: id_schema, CastMode.EXPLICIT), rows))
        return out

    def engine(kind: str) -> Callable[[], list[Any]]:
        def run() -> list[Any]:
            plan = plan_read("bench", schema, files(kind), lambda f: schema, CastMode.EXPLICIT,
                             equality_deletes=equality_deletes() if kind == "equality" else ())
            return aggregate(execute(plan, spark))
        return run

    def per_row() -> list[Any]:
        """The rejected design: one row per deleted position, anti-joined on (name, index)."""
        from pyspark.sql import types as st

        fs = files("dv")
        positions = [f.deletes[0].load() for f in fs]
        table = pa.table({"f": pa.array(np.concatenate([np.full(len(p), os.path.basename(f.path),
                                                                dtype=object)
                                                        for f, p in zip(fs, positions,
                                                                        strict=True)]),
                                        pa.string()),
                          "p": pa.array(np.concatenate(positions), pa.int64())})
        dels = spark.createDataFrame(table, schema=st.StructType([
            st.StructField("f", st.StringType()), st.StructField("p", st.LongType())]))
        df = spark.read.parquet(*[f.path for f in fs])
        meta = df.metadataColumn("_metadata")
        df = df.select("id", "v", "x", meta.getField("file_name").alias("_f"),
                       meta.getField("row_index").alias("_p"))
        hit = (F.col("_f") == F.col("f")) & (F.col("_p") == F.col("p"))
        kept = df.join(F.broadcast(dels), hit, "left_anti").select("id", "v", "x")
        return aggregate(kept)

    candidates: dict[str, Callable[[], list[Any]]] = {
        "plain": engine("plain"), "dv": engine("dv"), "posfile": engine("posfile"),
        "equality": engine("equality"), "per-row": per_row}
    expected = None
    for name, run in candidates.items():  # warm-up, and every candidate reads the same rows
        got = run()
        expected = expected or got
        assert got == expected, (name, got, expected)
    print(f"rows left: {expected[0]:,} of {args.rows:,}")
    times: dict[str, list[float]] = {n: [] for n in candidates}
    order = list(candidates)
    loads = []
    jvm = int(spark._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    cpu: dict[str, list[float]] = {n: [] for n in candidates}
    for r in range(args.repeats):
        for name in (order if r % 2 == 0 else order[::-1]):
            t, c = time.perf_counter(), cpu_seconds(jvm)
            candidates[name]()
            times[name].append(time.perf_counter() - t)
            cpu[name].append(cpu_seconds(jvm) - c)
        loads.append(os.getloadavg()[0])
    plain = statistics.median(times["plain"])
    plain_cpu = statistics.median(cpu["plain"])
    print(f"\n{args.rows:,} rows, {args.files} files, {args.share:.0%} deleted; "
          f"median (min) of {args.repeats}; load average during the rounds "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"{'candidate':10s} {'median s':>9s} {'min s':>7s} {'/plain':>7s} "
          f"{'cpu s':>7s} {'/plain':>7s}")
    for name, ts in times.items():
        med, c = statistics.median(ts), statistics.median(cpu[name])
        print(f"{name:10s} {med:9.2f} {min(ts):7.2f} {med / plain:7.2f} "
              f"{c:7.2f} {c / plain_cpu:7.2f}")


if __name__ == "__main__":
    main()
