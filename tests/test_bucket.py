"""Paimon's bucket computed on Spark (paimon/write/bucket_column.py) equals the Python reference
(paimon/bucket.py, itself checked against pypaimon in test_primary_key.py) on random keys of
every supported type, alone and in composite keys, with NULLs, in any session time zone."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import re
import string
from typing import Any

import pytest

from schemalab.errors import SchemaLabError
from schemalab.paimon.bucket import bucket_of
from schemalab.paimon.write.bucket_column import bucket_expr
from schemalab.types import DataType, parse_type
from schemalab.types.spark import to_spark

TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "DECIMAL(10, 2)",
         "DECIMAL(18, 0)", "STRING", "CHAR(5)", "VARCHAR(30)", "BYTES", "BINARY(9)",
         "TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
         "TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE"]


def _value(t: DataType, rnd: random.Random) -> Any:
    if rnd.random() < 0.1:
        return None
    r = t.root.value
    ints = {"TINYINT": 7, "SMALLINT": 15, "INTEGER": 31, "BIGINT": 63}
    if r in ints:
        return rnd.choice([-(2 ** ints[r]), 2 ** ints[r] - 1, 0, rnd.randint(-(2 ** ints[r]),
                                                                            2 ** ints[r] - 1)])
    if r == "BOOLEAN":
        return rnd.random() < 0.5
    if r == "DATE":
        return dt.date(1970, 1, 1) + dt.timedelta(days=rnd.randint(-200_000, 200_000))
    if r == "DECIMAL":
        digits = (t.precision or 10) - 1
        return decimal.Decimal(rnd.randint(-10**digits, 10**digits)).scaleb(-(t.scale or 0))
    if r in ("CHAR", "VARCHAR"):  # lengths around the 7-byte inline limit; multi-byte UTF-8
        return "".join(rnd.choice(string.ascii_letters + "éß€😀") for _ in range(
            rnd.randint(0, 12)))
    if r in ("BINARY", "VARBINARY"):
        return bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 12)))
    micros = rnd.randint(-10**16, 10**16)
    v = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
    if (t.precision if t.precision is not None else 6) <= 3:
        v = v.replace(microsecond=v.microsecond // 1000 * 1000)
    if r == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        v = v.replace(tzinfo=dt.UTC)
    return v


@pytest.mark.parametrize("time_zone", ["UTC", "America/Los_Angeles"])
def test_spark_bucket_equals_paimons_bucket_function(spark: Any, time_zone: str) -> None:
    """In UTC every type alone and composite keys of random types; in a zone with DST (which
    only timestamps could feel) the timestamp types. One frame, one job: each bucket column
    is a large expression, and compiling many of them is what costs here."""
    from pyspark.sql import types as st

    rnd = random.Random(20261124)
    if time_zone == "UTC":
        combos = [[t] for t in TYPES] + [[rnd.choice(TYPES) for _ in range(rnd.randint(2, 4))]
                                         for _ in range(6)]
    else:
        stamps = [t for t in TYPES if t.startswith("TIMESTAMP")]
        combos = [[t] for t in stamps] + [["STRING", "TIMESTAMP(9)", "TIMESTAMP(3)"]]
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", time_zone)
    try:
        fields, keys, values = [], [], []
        for c, combo in enumerate(combos):
            types = [parse_type(x) for x in combo]
            names = [f"c{c}_k{i}" for i in range(len(types))]
            fields += [st.StructField(n, to_spark(t), True)
                       for n, t in zip(names, types, strict=True)]
            keys.append((combo, names, types))
        for r in range(40):
            values.append(tuple(None if r == 0 else _value(f_t, rnd)
                                for _, _, types in keys for f_t in types))
        df = spark.createDataFrame(values, st.StructType(fields))
        buckets = [bucket_expr([f"`{x}`" for x in names], types, n).alias(f"b{k}_{n}")
                   for k, (_, names, types) in enumerate(keys) for n in (3, 16)]
        got = df.select(*buckets).collect()
        for i, row in enumerate(values):
            at = 0
            for k, (combo, _, types) in enumerate(keys):
                key = list(row[at:at + len(types)])
                at += len(types)
                for n in (3, 16):
                    assert got[i][f"b{k}_{n}"] == bucket_of(key, types, n), (combo, n, key)
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)


@pytest.mark.parametrize("key", ["FLOAT", "DOUBLE", "DECIMAL(20, 2)", "TIME"])
def test_unsupported_bucket_key_types_are_refused_by_name(key: str) -> None:
    t = parse_type(key)
    with pytest.raises(SchemaLabError, match=re.escape(f"bucket key column k is {t.sql()};")
                       ) as info:
        bucket_expr(["k"], [t], 4, "db.t")
    assert info.value.rule == "bucket-key-type" and info.value.column == "k"
