"""Steps a script forward and back with the AlterStepper on an s3:// warehouse and prints,
as JSON, whether every Back found the same keys, bytes and reads as before that step. Run by
tests/test_checkpoint.py in a process of its own (its Spark needs hadoop-aws)::

    python tests/stepper_on_s3.py s3://bucket/wh http://127.0.0.1:PORT a.sql '{"spark.jars": …}'
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import Any

from schemalab.widgets import AlterStepper

import schemalab as sl
from schemalab import fileio


def s3a_conf(endpoint: str) -> dict[str, str]:
    """Spark's S3A settings for an S3-compatible server at ``endpoint`` (moto's)."""
    return {
        "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.aws.credentials.provider":
            "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "spark.hadoop.fs.s3a.access.key": "testing",
        "spark.hadoop.fs.s3a.secret.key": "testing",
    }


def state(wh: sl.Warehouse) -> dict[str, Any]:
    """Every key below the warehouse (markers too) with its bytes' digest, and each table's
    schema id, latest snapshot and rows."""
    client = fileio.s3_client(wh.path)
    bucket, _, prefix = wh.path.split("://", 1)[1].partition("/")
    keys = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                  Prefix=prefix + "/"):
        for o in page.get("Contents", []):
            body = client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
            keys[o["Key"]] = hashlib.sha256(body).hexdigest()
    reads = {}
    for name in wh.list_tables():
        t = wh.table(name)
        rows = sorted(repr(tuple(r)) for r in t.read().collect())
        reads[name] = [t.schema.id, t.snapshot_manager.latest_id(), rows]
    return {"keys": keys, "reads": reads}


def main(uri: str, endpoint: str, script: str, jars: dict[str, str]) -> dict[str, Any]:
    wh = sl.Warehouse(uri, spark=sl.local_spark(extra_conf={**jars, **s3a_conf(endpoint)}))
    with open(script) as fh:
        s = AlterStepper(wh, fh.read())
    n = len(s.statements)
    seen = {0: state(wh)}
    out: dict[str, Any] = {"steps": n, "backs": [], "errors": []}
    for pos in range(1, n + 1):
        s.step()
        if s.last_error is not None:
            out["errors"].append(f"step {pos}: {s.last_error!r}")
        seen[pos] = state(wh)
    for pos in reversed(range(n)):
        t0 = time.perf_counter()
        s.back()
        took = time.perf_counter() - t0
        got = state(wh)
        out["backs"].append({"to": pos, "same": got == seen[pos], "seconds": round(took, 3),
                             "keys": len(got["keys"])})
        if got != seen[pos]:
            out["errors"].append(f"back to {pos}: {json.dumps(got)[:800]} != "
                                 f"{json.dumps(seen[pos])[:800]}")
    s.play()  # new files (new names), the same reads
    out["play_reads_same"] = state(wh)["reads"] == seen[n]["reads"]
    s.reset()
    out["reset_same"] = state(wh) == seen[0]
    out["reads"] = seen[n]["reads"]
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))))
