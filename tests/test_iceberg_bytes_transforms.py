"""Iceberg's ``bucket[N]`` and ``truncate[W]`` on string, binary and decimal columns, computed
by Spark SQL alone (no Python UDF): equal to pyiceberg's transforms value by value, and in the
manifests of a table schemalab writes (pyiceberg plans each data file with our partition
tuple and finds the rows its own transforms put there). Java Iceberg judges the same tables
in ``tests/test_interop_iceberg_alter_more.py``."""

from __future__ import annotations

import random
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab.errors import SchemaLabError
from schemalab.iceberg.write.murmur import (
    Steps,
    bucket_of_bytes,
    decimal_bytes_of,
    decimal_unscaled_bytes,
    murmur3_32,
    murmur3_bytes,
    truncate_decimal,
)

pyiceberg = pytest.importorskip("pyiceberg")

STRINGS = ["", "a", "ab", "abc", "abcd", "abcde", "iceberg", "über", "日本語テキスト", "😀x",
           "a longer string of 33 characters!", "tab\there", "0123456789ab"]
DECIMALS = {  # (precision, scale): values
    (9, 2): ["0.00", "14.20", "-14.20", "1.28", "-1.28", "-0.01", "9999999.99", "-9999999.99"],
    (18, 4): ["0.0000", "123456789012.3456", "-0.0001", "-99999999999999.9999"],
    (38, 10): ["0E-10", "1234567890123456789012345678.0123456789",
               "-9999999999999999999999999999.9999999999", "-170141183.4604692317",
               "0.0000000001"],
    (10, 0): ["0", "127", "128", "-128", "-129", "255", "256", "-32768", "9999999999"],
    (18, 0): ["36028797018963967", "36028797018963968", "-36028797018963968",
              "-36028797018963969", "999999999999999999", "-999999999999999999", "-1"],
}


def test_reference_murmur_is_standard_murmur3() -> None:
    """The Python reference equals mmh3 (the Murmur3 pyiceberg hashes with) on every tail
    length, and the spec's examples."""
    mmh3 = pytest.importorskip("mmh3")
    rnd = random.Random(7)
    for n in range(0, 40):
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert murmur3_32(data) == mmh3.hash(data, 0, signed=True), data.hex()
    assert murmur3_32(b"iceberg") == 1210000089
    assert murmur3_32(decimal_bytes_of(Decimal("14.20"), 2)) == -500754589
    for v, hexed in ((0, "00"), (127, "7f"), (128, "0080"), (-128, "80"), (-129, "ff7f"),
                     (-1, "ff"), (255, "00ff"), (65535, "00ffff")):
        assert decimal_bytes_of(Decimal(v), 0).hex() == hexed


def test_spark_columns_equal_pyiceberg_transforms(spark: Any) -> None:
    """Murmur3 of binary (every tail length), bucket and truncate of strings, binary and
    decimals of several precisions, in Spark SQL (one job): equal to pyiceberg's value by
    value."""
    from pyiceberg.transforms import BucketTransform, TruncateTransform
    from pyiceberg.types import BinaryType, DecimalType, StringType
    from pyspark.sql import functions as F

    rnd = random.Random(11)
    blobs = [bytes(rnd.randrange(256) for _ in range(n)) for n in range(0, 21)]
    truncate = TruncateTransform(50)
    columns: dict[str, tuple[str, list[Any]]] = {
        "b": ("binary", blobs), "s": ("string", STRINGS)}
    for (p, sc), values in DECIMALS.items():
        ds = [_scaled(Decimal(v), sc) for v in values]
        columns[f"d{p}_{sc}"] = (f"decimal({p},{sc})", ds)
        # truncate where its result still fits DECIMAL(p, s) (Java writes no other value)
        columns[f"t{p}_{sc}"] = (f"decimal({p},{sc})", [
            v for v in ds if abs(truncate.transform(DecimalType(p, sc))(v)) < 10 ** (p - sc)])
    n = max(len(v) for _, v in columns.values()) + 1  # a NULL in every column
    rows = [tuple(v[i] if i < len(v) else None for _, v in columns.values()) for i in range(n)]
    df = spark.createDataFrame(rows, ", ".join(f"{k} {t}" for k, (t, _) in columns.items()))
    outs = [murmur3_bytes(F.col("b")).alias("h_b"), bucket_of_bytes(F.col("b"), 7).alias("k_b"),
            bucket_of_bytes(F.col("s").cast("binary"), 16).alias("k_s"),
            F.substring("s", 1, 3).alias("t_s")]
    for (p, sc) in DECIMALS:
        d = F.col(f"d{p}_{sc}")
        outs += [F.hex(decimal_unscaled_bytes(d, sc)).alias(f"x{p}_{sc}"),
                 bucket_of_bytes(decimal_unscaled_bytes(d, sc), 13).alias(f"k{p}_{sc}"),
                 truncate_decimal(F.col(f"t{p}_{sc}"), 50, sc).cast("string")
                 .alias(f"u{p}_{sc}")]
    steps = Steps("__m")  # the same values bound in compiled projections, as INSERT does
    staged = [murmur3_bytes(F.col("b"), steps.let).alias("sh_b"),
              bucket_of_bytes(F.col("b"), 7, steps.let).alias("sk_b"),
              bucket_of_bytes(F.col("s").cast("binary"), 16, steps.let).alias("sk_s")]
    staged += [bucket_of_bytes(decimal_unscaled_bytes(F.col(f"d{p}_{sc}"), sc, steps.let, p),
                               13, steps.let).alias(f"sk{p}_{sc}") for (p, sc) in DECIMALS]
    staged += [F.hex(decimal_unscaled_bytes(F.col(f"d{p}_{sc}"), sc, steps.let, p))
               .alias(f"sx{p}_{sc}") for (p, sc) in DECIMALS]
    assert len(steps.columns) > 10 * len(DECIMALS)
    # the plans of one string's bucket (optimizing the whole frame's plans again costs 30 s)
    one = Steps("__one")
    bucket = bucket_of_bytes(F.col("s").cast("binary"), 16, one.let)
    small = one.apply(df).select(bucket)
    plan = small._jdf.queryExecution().executedPlan().toString()
    assert "lambdafunction" not in plan.lower() and "*(1) Project" in plan, plan
    assert "lambdafunction" in df.select(bucket_of_bytes(F.col("s").cast("binary"), 16)) \
        ._jdf.queryExecution().executedPlan().toString().lower()
    frame = steps.apply(df).select(*df.columns, *outs, *staged)
    for r in frame.collect():
        assert (r.sh_b, r.sk_b, r.sk_s) == (r.h_b, r.k_b, r.k_s), r.b
        assert all(r[f"sk{p}_{sc}"] == r[f"k{p}_{sc}"] and r[f"sx{p}_{sc}"] == r[f"x{p}_{sc}"]
                   for (p, sc) in DECIMALS), r
        if r.b is None:
            assert r.h_b is None and r.k_b is None
        else:
            assert r.h_b == murmur3_32(bytes(r.b)), bytes(r.b).hex()
            assert r.k_b == BucketTransform(7).transform(BinaryType())(bytes(r.b))
        assert r.k_s == (None if r.s is None else
                         BucketTransform(16).transform(StringType())(r.s)), r.s
        assert r.t_s == (None if r.s is None else
                         TruncateTransform(3).transform(StringType())(r.s)), r.s
        for (p, sc) in DECIMALS:
            d, t = r[f"d{p}_{sc}"], r[f"t{p}_{sc}"]
            x, k, u = r[f"x{p}_{sc}"], r[f"k{p}_{sc}"], r[f"u{p}_{sc}"]
            if d is None:
                assert x is None and k is None
            else:  # pyiceberg takes the unscaled digits as the Decimal holds them: scale s
                assert x.lower() == decimal_bytes_of(d, sc).hex(), (p, sc, d)
                assert k == BucketTransform(13).transform(DecimalType(p, sc))(
                    _scaled(d, sc)), (p, sc, d)
            if t is None:
                assert u is None
            else:
                got = Decimal(int(Decimal(u))).scaleb(-sc, context=Context(prec=80))
                assert got == truncate.transform(DecimalType(p, sc))(_scaled(t, sc)), t


def _scaled(d: Decimal, scale: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-scale), context=Context(prec=80))


CREATE = ("CREATE TABLE t (id INT, name STRING, b BINARY, d DECIMAL(9, 2), big DECIMAL(38, 6), "
          "ts TIMESTAMP, tn TIMESTAMP_NTZ) USING iceberg PARTITIONED BY ({parts}) "
          "TBLPROPERTIES ('format-version' = '{v}')")
ROWS = """INSERT INTO t VALUES
  (1, 'iceberg', X'00010203', 14.20, 12345678901234567890.123456,
   TIMESTAMP'2024-01-02 03:04:05', TIMESTAMP_NTZ'2024-01-02 03:04:05'),
  (2, 'über', X'FF', -14.20, -0.000001, TIMESTAMP'1969-12-31 23:59:59',
   TIMESTAMP_NTZ'1969-12-31 23:00:00'),
  (3, '日本語テキスト', X'', -0.01, -9999999999999999999999999999.999999,
   TIMESTAMP'2000-02-29 12:00:00', TIMESTAMP_NTZ'1900-01-01 00:00:00'),
  (4, NULL, NULL, NULL, NULL, NULL, NULL),
  (5, '', X'0102030405', 0.00, 0, TIMESTAMP'2024-01-02 03:59:59',
   TIMESTAMP_NTZ'2024-01-02 03:59:59'),
  (6, 'ab', X'0102', 9999999.99, 1.5, TIMESTAMP'2024-01-03 00:00:00',
   TIMESTAMP_NTZ'2024-01-03 00:00:00')"""
PARTS = ("bucket(8, name), truncate(2, name), bucket(4, b), truncate(3, b), bucket(5, d), "
         "truncate(50, d), bucket(3, big), truncate(7, big), hours(ts), days(tn)")
#: the same transforms, one per table (Java checks each in the interop tests); the default
#: suite writes the ones PARTS does not have
SINGLE = ["bucket(8, name)", "truncate(2, name)", "bucket(4, b)", "truncate(3, b)",
          "bucket(5, d)", "truncate(50, d)", "bucket(3, big)", "truncate(7, big)", "hours(ts)",
          "days(tn)", "hours(tn)", "days(ts)", "b", "d", "name"]
NOT_IN_PARTS = ["hours(tn)", "days(ts)", "b", "d", "name"]


def write_table(root: Path, spark: Any, parts: str, version: int = 2) -> Any:
    wh = sl.Warehouse(root, spark=spark, format="iceberg")
    wh.sql(CREATE.format(parts=parts, v=version))
    wh.sql(ROWS)
    return wh


def pyiceberg_partitions_agree(metadata_file: str) -> int:
    """Every data file pyiceberg plans: the partition tuple in our manifest equals
    pyiceberg's transforms of each row the file holds. Returns the number of files."""
    import pyarrow.parquet as pq
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(metadata_file)
    spec, schema = t.spec(), t.schema()
    files = 0
    for task in t.scan().plan_files():
        files += 1
        f = task.file
        rows = pq.ParquetFile(f.file_path.removeprefix("file:")).read().to_pylist()
        assert rows, f.file_path
        for row in rows:
            want = []
            for pf in spec.fields:
                src = schema.find_field(pf.source_id)
                value = row[src.name]
                fn = pf.transform.transform(src.field_type)
                want.append(fn(_pyiceberg_value(value, src.field_type)))
            got = [f.partition[i] for i in range(len(spec.fields))]
            assert got == want, (f.file_path, row)
    return files


def _pyiceberg_value(value: Any, t: Any) -> Any:
    """A Parquet value as pyiceberg's transforms take it (timestamps as micros)."""
    import datetime as dt

    from pyiceberg.types import DecimalType, TimestampType, TimestamptzType

    if value is None:
        return None
    if isinstance(t, DecimalType):
        return _scaled(value, t.scale)
    if isinstance(t, TimestampType | TimestamptzType):
        if isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    return value


@pytest.mark.parametrize("version", [1, 2, 3])
def test_table_partitioned_by_byte_transforms(version: int, tmp_path: Path, spark: Any) -> None:
    """All transforms at once: pyiceberg reads the table like us, and every file's partition
    tuple is pyiceberg's transform of each of its rows (pruning by them finds every row)."""
    from test_iceberg_write import assert_pyiceberg_reads_like_us, pyiceberg_rows

    wh = write_table(tmp_path, spark, PARTS, version)
    t = wh.table("t")
    assert [f.transform for f in t.metadata.spec(0).fields] == [
        "bucket[8]", "truncate[2]", "bucket[4]", "truncate[3]", "bucket[5]", "truncate[50]",
        "bucket[3]", "truncate[7]", "hour", "day"]
    assert pyiceberg_partitions_agree(t.metadata_file) == 6
    assert_pyiceberg_reads_like_us(t)
    from pyiceberg.expressions import EqualTo

    for cond in ("name = 'iceberg'", "name = 'über'", EqualTo("b", b"\xff"), "d = 14.20",
                 "d < 0", "big > 1", "ts >= '2024-01-02T00:00:00+00:00'"):
        assert len(pyiceberg_rows(t.metadata_file, None, cond)) >= 1, cond  # type: ignore


def test_each_transform_alone(tmp_path: Path, spark: Any) -> None:
    """One table per transform (one partition field) PARTS lacks: identity binary, decimal
    and string ('' and NULL are two partitions), hours/days of the other timestamp type:
    the partition paths read back, and pyiceberg agrees with each file's tuple."""
    for i, parts in enumerate(NOT_IN_PARTS):
        wh = write_table(tmp_path / str(i), spark, parts)
        t = wh.table("t")
        assert pyiceberg_partitions_agree(t.metadata_file) >= 3, parts
        assert t.read().count() == 6


def test_truncate_and_bucket_values(tmp_path: Path, spark: Any) -> None:
    """The values themselves: truncate by code points and by bytes, decimals toward
    negative infinity, in the manifest's Iceberg form."""
    wh = write_table(tmp_path, spark, "truncate(2, name), truncate(3, b), truncate(50, d)")
    t = wh.table("t")
    from pyiceberg.table import StaticTable

    tuples = sorted((tuple(f.file.partition) for f in
                     StaticTable.from_metadata(t.metadata_file).scan().plan_files()),
                    key=repr)
    assert ("日本", b"", Decimal("-0.50")) in tuples
    assert ("üb", b"\xff", Decimal("-14.50")) in tuples
    assert ("ic", b"\x00\x01\x02", Decimal("14.00")) in tuples
    assert (None, None, None) in tuples
    paths = sorted(f.path for f in t.data_files())
    assert any("/name_trunc=%C3%BCb/b_trunc=%2Fw%3D%3D/d_trunc=-14.50/" in p for p in paths)


def test_unsupported_sources_are_refused(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path, format="iceberg")
    for parts, column in (("bucket(4, f)", "f"), ("truncate(4, bo)", "bo"),
                          ("truncate(4, dt)", "dt")):
        with pytest.raises(SchemaLabError, match=r"Invalid source type .* for transform") as e:
            wh.sql(f"CREATE TABLE x (f DOUBLE, bo BOOLEAN, dt DATE) PARTITIONED BY ({parts})")
        assert e.value.rule == "iceberg-partition-transform" and e.value.column == column
