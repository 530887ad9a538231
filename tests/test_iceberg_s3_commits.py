"""Iceberg commits on a real S3 API (moto's server on 127.0.0.1): an Iceberg warehouse on
``s3://`` commits each ``v<N>.metadata.json`` with a create-only PUT (``If-None-Match: *``),
so a writer that lost the race for version N re-reads the table, re-applies its change and
takes N+1, and nothing another writer committed is overwritten or lost. pyiceberg (its S3
FileIO on the same endpoint) opens what was committed. Spark's data files on S3 (INSERTs
through hadoop-aws) are tests/test_iceberg_spark_on_s3.py, in ``make test-cluster``."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab import fileio
from schemalab.iceberg.write import commit as commits

pytest_plugins = ["infra.fixtures"]


def _metadata_keys(s3: Any, prefix: str) -> list[str]:
    c = s3.client()
    return sorted(o["Key"].rsplit("/", 1)[-1] for o in c.list_objects_v2(
        Bucket=s3.bucket, Prefix=prefix).get("Contents", []))


def _doc(s3: Any, key: str) -> dict[str, Any]:
    body = s3.client().get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    return json.loads(body)


def _pyiceberg(s3: Any, metadata_file: str) -> Any:
    from infra.s3 import ACCESS_KEY, REGION, SECRET_KEY
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_file, properties={
        "s3.endpoint": s3.endpoint, "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY, "s3.region": REGION})


def test_moto_honours_if_none_match(s3_env: Any) -> None:
    """The primitive itself: a second create-only PUT of a key is refused (HTTP 412)."""
    path = s3_env.uri("inm/probe.json")
    assert fileio.write_new(path, b"first")
    assert not fileio.write_new(path, b"second")
    assert fileio.read_bytes(path) == b"first"


def test_iceberg_ddl_on_s3_commits_create_if_absent(s3_env: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """CREATE and ALTERs land in the bucket as v1.., each PUT with ``If-None-Match: *``
    (the hint, replaced, goes through pyarrow's S3 without a condition); pyiceberg opens
    the table with the schema schemalab committed."""
    monkeypatch.chdir(tmp_path)  # a stray local "s3:" directory would land here
    wh = sl.Warehouse(s3_env.uri("ice-ddl"), format="iceberg")
    sent: list[tuple[str, str | None]] = []

    def record(request: Any, **_: Any) -> None:
        inm = request.headers.get("If-None-Match")
        sent.append((request.url.rsplit("/", 1)[-1],
                     inm.decode() if isinstance(inm, bytes) else inm))

    client = fileio.s3_client(wh.path)
    client.meta.events.register("before-send.s3.PutObject", record)
    try:
        wh.sql("CREATE TABLE t (a INT, s STRUCT<x: INT, y: STRING>) "
               "TBLPROPERTIES ('format-version' = '3')")
        wh.sql("ALTER TABLE t ADD COLUMN b STRING DEFAULT 'bee'; "
               "ALTER TABLE t ALTER COLUMN s.y FIRST; "
               "ALTER TABLE t ALTER COLUMN b SET DEFAULT 'b2'")
    finally:
        client.meta.events.unregister("before-send.s3.PutObject", record)
    assert not (tmp_path / "s3:").exists()
    prefix = "ice-ddl/default/t/metadata/"
    assert _metadata_keys(s3_env, prefix) == [f"v{i}.metadata.json" for i in range(1, 5)] + [
        "version-hint.text"]
    puts = {name: inm for name, inm in sent}
    assert all(puts[f"v{i}.metadata.json"] == "*" for i in range(1, 5)), sent
    t = wh.table("t")
    assert t.metadata_file == s3_env.uri(prefix + "v4.metadata.json")
    theirs = _pyiceberg(s3_env, t.metadata_file)
    assert [f.name for f in theirs.schema().fields] == ["a", "s", "b"]
    b = theirs.schema().find_field("b")
    assert (b.initial_default, b.write_default) == ("bee", "b2")
    assert [f.name for f in theirs.schema().find_field("s").field_type.fields] == ["y", "x"]


def test_a_lost_race_on_s3_retries_at_the_next_version(s3_env: Any) -> None:
    """Another writer takes v2 between our read of v1 and our PUT: our PUT of v2 is refused,
    we re-read, re-apply onto its v2 and commit v3; its v2 stays as it wrote it."""
    wh = sl.Warehouse(s3_env.uri("ice-lost"), format="iceberg")
    wh.sql("CREATE TABLE t (a INT)")
    t = wh.table("t")
    attempts: list[int] = []

    def change(d: dict[str, Any]) -> dict[str, Any]:
        attempts.append(len(d.get("metadata-log", [])))
        if len(attempts) == 1:  # the other writer wins v2 right now
            theirs = json.loads(json.dumps(d))
            theirs["properties"]["other"] = "1"
            assert fileio.write_new(f"{t.path}/metadata/v2.metadata.json",
                                    json.dumps(theirs))
        d["properties"]["ours"] = "1"
        return d

    path, new = commits.commit(t.path, t.name, change)
    assert path.endswith("/v3.metadata.json") and attempts == [0, 0]
    mine = {k: v for k, v in new["properties"].items() if k in ("other", "ours")}
    assert mine == {"other": "1", "ours": "1"}
    assert "ours" not in _doc(s3_env, "ice-lost/default/t/metadata/v2.metadata.json")[
        "properties"]
    assert fileio.read_bytes(f"{t.path}/metadata/version-hint.text") == b"3"


def test_racing_writers_on_s3_lose_nothing(s3_env: Any) -> None:
    """Four writers commit 6 property changes each at once: all 24 are in the final
    metadata, each version was written once, and the metadata log lists every one."""
    wh = sl.Warehouse(s3_env.uri("ice-race"), format="iceberg")
    wh.sql("CREATE TABLE t (a INT)")
    t = wh.table("t")
    start = threading.Barrier(4)
    errors: list[BaseException] = []
    done: list[str] = []

    def writer(w: int) -> None:
        try:
            start.wait()
            for i in range(6):
                key = f"w{w}.{i}"

                def change(d: dict[str, Any], key: str = key) -> dict[str, Any]:
                    d["properties"][key] = "1"
                    return d

                commits.commit(t.path, t.name, change)
                done.append(key)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(done) == 24
    t.refresh()
    assert t.metadata_file.endswith("/v25.metadata.json")
    assert set(done) <= set(t.metadata.properties)
    # each version holds exactly one more of the writers' keys than the one before
    counts = [len([k for k in _doc(s3_env, f"ice-race/default/t/metadata/v{n}.metadata.json")
                   ["properties"] if k[:1] == "w" and k[1:2].isdigit()]) for n in range(1, 26)]
    assert counts == list(range(25))
    assert len(_doc(s3_env, "ice-race/default/t/metadata/v25.metadata.json")
               ["metadata-log"]) == 24
    assert set(done) <= set(_pyiceberg(s3_env, t.metadata_file).properties)
