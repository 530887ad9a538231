"""Tables on an object store: a real S3 API (moto's server on 127.0.0.1) holding warehouses
written by schemalab and by pypaimon.

History, lineage, snapshot trees, read explanations and ``schemalab inspect`` of an s3://
table equal those of the local copy; DDL on an s3:// warehouse lands in the bucket and
commits with a create-only PUT, so of racing committers exactly one wins each version and
the others retry; a store without such a primitive is refused for writes, with reads
still working. The suite's Spark has no S3A connector: a read of s3:// data fails with a
clear error naming the settings. Spark's own data path on S3 (hadoop-aws from Maven Central)
is tests/test_spark_on_s3.py, in ``make test-cluster``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest

import schemalab as sl
from schemalab import cli, fileio
from schemalab.errors import SchemaLabError
from schemalab.schema import AddColumn
from schemalab.types import INT

pytest_plugins = ["infra.fixtures"]


def _upload(s3: Any, local: Path, key: str) -> str:
    """Copy a local table directory into the bucket; its s3:// URI."""
    pafs.copy_files(str(local), f"{s3.bucket}/{key}", destination_filesystem=s3.filesystem())
    return s3.uri(key)


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """An inspect document without where it was read from."""
    return {k: v for k, v in doc.items() if k != "location"}


@pytest.fixture(scope="module")
def our_table(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Path:
    """A schemalab table with renames, a drop and re-add, a widening and three snapshots."""
    wh = sl.Warehouse(tmp_path_factory.mktemp("ours"), spark=spark)
    wh.sql("""CREATE TABLE events (id INT, name STRING, qty INT, note STRING)
                  PARTITIONED BY (name);
              INSERT INTO events VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'y');
              ALTER TABLE events RENAME COLUMN qty TO amount;
              ALTER TABLE events DROP COLUMN note;
              INSERT INTO events VALUES (3, 'a', 30);
              ALTER TABLE events ADD COLUMN note STRING;
              ALTER TABLE events ALTER COLUMN amount TYPE BIGINT;
              INSERT INTO events VALUES (4, 'c', 40, 'z')""")
    return Path(wh.table("events").path)


def test_history_lineage_and_trees_on_s3_equal_the_local_copy(
        s3_env: Any, our_table: Path, pypaimon_warehouses: Path) -> None:
    for local, key in ((our_table, "hist/default.db/events"),
                       (pypaimon_warehouses / "wh" / "demo.db" / "users", "hist/demo.db/users")):
        uri = _upload(s3_env, local, key)
        remote, here = sl.open_table(uri), sl.open_table(local)
        assert remote.path == uri and remote.name == here.name
        got, want = remote.history().to_json(), here.history().to_json()
        assert got["location"] == uri
        assert _comparable(got) == _comparable(want)
        assert got["snapshots"] and all(s["files"] for s in got["snapshots"])
        assert remote.explain_read().text() == here.explain_read().text()
        assert remote.explain_read(snapshot_id=1).text() == \
            here.explain_read(snapshot_id=1).text()


def test_inspect_s3_with_the_standard_environment(s3_env: Any, our_table: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    uri = _upload(s3_env, our_table, "cli/default.db/events")
    assert cli.main(["inspect", uri, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert cli.main(["inspect", str(our_table), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert _comparable(got) == _comparable(want)
    assert cli.main(["inspect", uri.replace("s3://", "s3a://")]) == 0
    text = capsys.readouterr().out
    assert cli.main(["inspect", str(our_table)]) == 0
    assert text.replace(uri, "<table>") == capsys.readouterr().out.replace(
        str(our_table), "<table>")


def test_ddl_on_an_s3_warehouse_lands_in_the_bucket(s3_env: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a stray local "s3:" directory would land here
    wh = sl.Warehouse(s3_env.uri("ddl-wh/"))
    assert wh.path == s3_env.uri("ddl-wh")
    wh.sql("""CREATE TABLE T (a STRING, b INT);
              ALTER TABLE T RENAME COLUMN b TO c;
              ALTER TABLE T ADD COLUMN d BIGINT""")
    assert not (tmp_path / "s3:").exists()
    keys = sorted(o["Key"] for o in s3_env.client().list_objects_v2(
        Bucket=s3_env.bucket, Prefix="ddl-wh/").get("Contents", []))
    assert keys == [f"ddl-wh/default.db/T/schema/schema-{i}" for i in range(3)]
    t = wh.table("T")
    assert [f.name for f in t.schema.fields] == ["a", "c", "d"]
    assert wh.list_tables() == ["default.T"]
    assert [lin.names for lin in t.history().lineage] == [["a"], ["b", "c"], ["d"]]
    with pytest.raises(SchemaLabError, match="object store has no rename"):
        wh.sql("ALTER TABLE T RENAME TO U")
    wh.sql("DROP TABLE T")
    assert not wh.has_table("T")


def test_options_configure_the_store_without_the_environment(s3: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    options = {"s3.endpoint": s3.endpoint, "s3.access-key": "testing",
               "s3.secret-key": "testing", "s3.region": "us-east-1",
               "s3.path.style.access": "true"}
    wh = sl.Warehouse(s3.uri("opts-wh"), options=options)
    wh.sql("CREATE TABLE T (a STRING); ALTER TABLE T ADD COLUMN b INT")
    t = sl.open_table(s3.uri("opts-wh/default.db/T"), options=options)
    assert [v.id for v in t.history().schemas] == [0, 1]


def test_racing_alters_on_s3_each_commit_once(s3_env: Any) -> None:
    """Eight writers ADD a column each at the same moment: every ALTER lands, each schema
    version is written exactly once (create-only PUT), nothing is overwritten."""
    wh = sl.Warehouse(s3_env.uri("race-wh"))
    wh.sql("CREATE TABLE T (a STRING)")
    t = wh.table("T")
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def add(i: int) -> None:
        try:
            start.wait()
            sl.open_table(t.path).alter(AddColumn((f"c{i}",), INT()))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    fresh = sl.open_table(t.path)
    assert [s.id for s in fresh.schemas] == list(range(9))
    assert sorted(f.name for f in fresh.schema.fields) == ["a", *sorted(f"c{i}" for i in
                                                                        range(8))]
    # every version holds one more column than the one before: none was overwritten
    assert [len(s.fields) for s in fresh.schemas] == list(range(1, 10))
    assert fresh.schema.highest_field_id == 8


def test_racing_snapshot_commits_on_s3_each_commit_once(s3_env: Any, tmp_path: Path) -> None:
    """Six committers race for the next snapshot of one table: each commit becomes exactly
    one snapshot, and replaying them gives every file once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemalab.paimon.commit import commit
    from schemalab.paimon.write.files import WrittenFile, data_file_entry, file_stats

    wh = sl.Warehouse(s3_env.uri("race-snap"))
    wh.sql("CREATE TABLE T (a INT)")
    t = wh.table("T")
    schema = t.schema
    files = []
    for i in range(6):
        path = f"{t.path}/bucket-0/data-race-{i}.parquet"
        pq.write_table(pa.table({"a": pa.array([i], pa.int32())}),
                       path.removeprefix("s3://"), filesystem=s3_env.filesystem())
        meta = pq.ParquetFile(fileio.open_input(path)).metadata
        files.append(WrittenFile(path, os.path.basename(path), 1, fileio.size(path), (), 0,
                                 file_stats(meta, schema)))
    start = threading.Barrier(6)
    made: list[int] = []

    def go(f: WrittenFile) -> None:
        start.wait()
        snap = commit(t.path, t.name, schema, [data_file_entry(f, schema)])
        assert snap is not None
        made.append(snap.id)

    threads = [threading.Thread(target=go, args=(f,)) for f in files]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(made) == [1, 2, 3, 4, 5, 6]
    live = sorted(e.file.file_name for e in t.live_entries(t.latest_snapshot))
    assert live == sorted(f.file_name for f in files)
    assert t.latest_snapshot.total_record_count == 6


_WITHOUT_BOTO3 = """
import sys
sys.modules["boto3"] = None
import schemalab as sl
from schemalab.errors import SchemaLabError
print([v.id for v in sl.open_table(sys.argv[1]).history().schemas])
try:
    sl.Warehouse(sys.argv[2]).sql("CREATE TABLE T (a INT)")
except SchemaLabError as e:
    print(e.rule, "|", e.message)
"""


def test_without_boto3_s3_reads_work_and_writes_say_what_to_install(
        s3_env: Any, our_table: Path) -> None:
    uri = _upload(s3_env, our_table, "noboto/ours.db/events")
    out = subprocess.run([sys.executable, "-c", _WITHOUT_BOTO3, uri, s3_env.uri("noboto-wh")],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, **s3_env.env})
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "[0, 1, 2, 3, 4]"
    assert lines[1].startswith("atomic-commit | Cannot write to s3://")
    assert "pip install 'schemalab[s3]'" in lines[1]


def test_stores_without_an_atomic_create_are_refused_for_writes() -> None:
    for uri in ("gs://bucket/wh/t/schema/schema-0", "abfs://c@acct/wh/t/schema/schema-0",
                "hdfs://nn/wh/t/schema/schema-0"):
        with pytest.raises(fileio.StoreError, match="atomic create-if-absent") as info:
            fileio.write_new(uri, b"{}")
        assert info.value.rule == "atomic-commit"


def test_spark_without_s3a_gives_a_clear_error(s3_env: Any, our_table: Path,
                                               spark: Any) -> None:
    uri = _upload(s3_env, our_table, "nospark/ours.db/events")
    t = sl.open_table(uri, spark=spark)
    with pytest.raises(SchemaLabError, match=r"Spark cannot read or write s3a://.*hadoop-aws"):
        t.read()


def test_a_local_copy_of_a_table_is_read_where_it_is(tmp_path: Path, our_table: Path,
                                                     spark: Any) -> None:
    """file:// URIs and plain paths name the same table."""
    copy = tmp_path / "copy" / "ours.db" / "events"
    shutil.copytree(our_table, copy)
    t = sl.open_table(f"file://{copy}", spark=spark)
    assert t.path == str(copy)
    assert sorted(r[0] for r in t.read().collect()) == [1, 2, 3, 4]


# ---- what the store itself offers (facts the commit design rests on) ----------------------


def test_s3_pyarrow_writes_reads_and_lists(s3: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import fs

    s3fs_ = s3.filesystem()
    base = f"{s3.bucket}/pyarrow-rw"
    with s3fs_.open_output_stream(f"{base}/dir/a.json") as out:
        out.write(b'{"id": 1}')
    assert s3fs_.open_input_stream(f"{base}/dir/a.json").read() == b'{"id": 1}'
    pq.write_table(pa.table({"x": [1, 2, 3]}), f"{base}/t/p.parquet", filesystem=s3fs_)
    assert pq.read_table(f"{base}/t/p.parquet", filesystem=s3fs_)["x"].to_pylist() == [1, 2, 3]
    listed = sorted(i.path for i in s3fs_.get_file_info(fs.FileSelector(base, recursive=True))
                    if i.type == fs.FileType.File)
    assert listed == [f"{base}/dir/a.json", f"{base}/t/p.parquet"]
    # a missing key is NotFound, the "create if absent" probe a reader needs
    assert s3fs_.get_file_info(f"{base}/nope").type == fs.FileType.NotFound


# A fresh interpreter with only the standard AWS_* env, fsspec and s3fs made unimportable:
# pyarrow alone reaches S3 (AWS_ENDPOINT_URL honoured), and fastavro reads an Avro manifest
# from a pyarrow stream, i.e. everything schemalab's metadata and data I/O would need.
_NO_FSSPEC = textwrap.dedent("""
    import io, json, sys
    sys.modules["fsspec"] = None
    sys.modules["s3fs"] = None
    import fastavro, pyarrow as pa, pyarrow.parquet as pq
    from pyarrow import fs
    s3, root = fs.FileSystem.from_uri(sys.argv[1])
    buf = io.BytesIO()
    fastavro.writer(buf, {"type": "record", "name": "m", "fields": [
        {"name": "file", "type": "string"}]}, [{"file": "data-0.parquet"}], codec="zstandard")
    with s3.open_output_stream(root + "/manifest/manifest-0") as out:
        out.write(buf.getvalue())
    with s3.open_output_stream(root + "/snapshot/snapshot-1") as out:
        out.write(json.dumps({"id": 1}).encode())
    pq.write_table(pa.table({"a": ["x"]}), root + "/bucket-0/data-0.parquet", filesystem=s3)
    with s3.open_input_file(root + "/manifest/manifest-0") as f:
        files = [r["file"] for r in fastavro.reader(f)]
    snap = json.loads(s3.open_input_stream(root + "/snapshot/snapshot-1").read())
    rows = pq.read_table(sys.argv[1] + "/bucket-0/data-0.parquet")["a"].to_pylist()
    print(json.dumps({"fs": type(s3).__name__, "files": files, "snap": snap, "rows": rows,
                      "fsspec_loaded": sys.modules.get("fsspec") is not None}))
""")


def test_s3_needs_neither_fsspec_nor_s3fs(s3: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | s3.env
    out = subprocess.run([sys.executable, "-c", _NO_FSSPEC, s3.uri("no-fsspec/t")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout) == {"fs": "S3FileSystem", "files": ["data-0.parquet"],
                                      "snap": {"id": 1}, "rows": ["x"],
                                      "fsspec_loaded": False}


def test_s3_conditional_put_if_none_match_through_boto3(s3: Any) -> None:
    from botocore.exceptions import ClientError
    from infra.s3 import put_if_absent

    c = s3.client()
    key = "cond/snapshot/snapshot-1"
    first = c.put_object(Bucket=s3.bucket, Key=key, Body=b"winner", IfNoneMatch="*")
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=s3.bucket, Key=key, Body=b"loser", IfNoneMatch="*")
    assert e.value.response["Error"]["Code"] == "PreconditionFailed"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert c.get_object(Bucket=s3.bucket, Key=key)["Body"].read() == b"winner"
    # the helper a commit would use
    assert put_if_absent(c, s3.bucket, "cond/snapshot/snapshot-2", b"x") is True
    assert put_if_absent(c, s3.bucket, "cond/snapshot/snapshot-2", b"y") is False
    # big files go multipart: the condition is checked at CompleteMultipartUpload
    mp = c.create_multipart_upload(Bucket=s3.bucket, Key=key)
    part = c.upload_part(Bucket=s3.bucket, Key=key, UploadId=mp["UploadId"], PartNumber=1,
                         Body=b"loser-multipart")
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(
            Bucket=s3.bucket, Key=key, UploadId=mp["UploadId"], IfNoneMatch="*",
            MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
    assert e.value.response["Error"]["Code"] == "PreconditionFailed"
    assert c.get_object(Bucket=s3.bucket, Key=key)["Body"].read() == b"winner"


def test_s3_conditional_put_as_a_raw_signed_request(s3: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """No boto3 client: a SigV4-signed PUT with ``If-None-Match: *`` from the standard
    library (infra.s3.signed_request), whose signature equals botocore's for the same
    request and instant (moto does not check signatures, so that comparison is the proof)."""
    import datetime as dt
    import urllib.error
    import urllib.request

    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from infra.s3 import ACCESS_KEY, REGION, SECRET_KEY, signed_request

    url = f"{s3.endpoint}/{s3.bucket}/raw/snapshot-1"
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    ours = signed_request("PUT", url, b"{}", {"If-None-Match": "*"},
                          access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, now=when)
    theirs = AWSRequest(method="PUT", url=url, data=b"{}", headers={"If-None-Match": "*"})
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    botocore.auth.S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(theirs)
    assert ours.headers["Authorization"] == theirs.headers["Authorization"]

    first = signed_request("PUT", url, b"{}", {"If-None-Match": "*"}, access_key=ACCESS_KEY,
                           secret_key=SECRET_KEY, region=REGION)
    with urllib.request.urlopen(first, timeout=10) as r:
        assert r.status == 200
    second = signed_request("PUT", url, b"{...}", {"If-None-Match": "*"}, access_key=ACCESS_KEY,
                            secret_key=SECRET_KEY, region=REGION)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(second, timeout=10)
    assert e.value.code == 412
    assert b"PreconditionFailed" in e.value.read()


def test_s3_pyarrow_cannot_send_if_none_match(s3: Any) -> None:
    """pyarrow's S3 filesystem (19.x) has no conditional write: ``metadata`` keys it does not
    know (If-None-Match among them) are dropped, and every write is a multipart upload whose
    Complete carries no condition, so a second create-only write silently overwrites."""
    s3fs_ = s3.filesystem()
    path = f"{s3.bucket}/pyarrow-cond/snapshot-1"
    for body in (b"winner", b"loser"):
        with s3fs_.open_output_stream(path, metadata={"If-None-Match": "*"}) as out:
            out.write(body)
    assert s3fs_.open_input_stream(path).read() == b"loser"
