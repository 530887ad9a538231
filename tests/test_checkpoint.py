"""Checkpoints of a warehouse (issue 20): ``Warehouse.checkpoint()`` records the listing and
the hint files, nothing else; ``Warehouse.restore(token)`` brings back exactly the files,
bytes and reads of that moment — after a CREATE, an ALTER, an INSERT, an INSERT OVERWRITE, a
compaction, a DROP TABLE (whose files come back from what was kept as they went), locally
and on S3 (moto on 127.0.0.1). The AlterStepper's Back and Reset are built on it: the
FLIP-226 script is stepped forward and back on both kinds of warehouse and every Back finds
the same files and the same reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import schemalab as sl
from schemalab import fileio
from schemalab.checkpoint import CheckpointError

pytest_plugins = ["infra.fixtures"]

REPO = Path(__file__).resolve().parents[1]
FLIP226 = REPO / "data" / "scenarios" / "flip226.sql"


def _tree(root: str) -> dict[str, str]:
    """Every file's bytes (as a digest) and every directory of a local warehouse."""
    out = {}
    for d, dirs, names in os.walk(root):
        for n in dirs:
            out[os.path.relpath(os.path.join(d, n), root) + "/"] = "dir"
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def _keys(s3: Any, prefix: str) -> dict[str, str]:
    """Every key (directory markers too) below ``prefix`` with its bytes' digest."""
    c = s3.client()
    out = {}
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            body = c.get_object(Bucket=s3.bucket, Key=o["Key"])["Body"].read()
            out[o["Key"]] = hashlib.sha256(body).hexdigest()
    return out


def _reads(wh: sl.Warehouse) -> dict[str, Any]:
    """Each table's schema (its fields), snapshots and every snapshot's rows."""
    out: dict[str, Any] = {}
    for name in wh.list_tables():
        t = wh.table(name)
        snaps = [s.id for s in t.snapshots]
        fields = [(f.id, f.name, f.type.sql()) for f in t.schema.fields]
        out[name] = ((t.schema.id, fields), snaps, [
            sorted(map(repr, t.read(snapshot_id=i).collect())) for i in snaps])
    return out


def _fields(wh: sl.Warehouse, name: str) -> list[str]:
    return [f.name for f in wh.table(name).schema.fields]


# ---- metadata statements (no Spark) -------------------------------------------------------


def test_create_alter_and_drop_undone_exactly(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    wh = sl.Warehouse(tmp_path / "wh")
    empty = (wh.checkpoint(), _tree(wh.path))
    wh.sql("CREATE TABLE T (a INT, b STRING); ALTER TABLE T ADD COLUMN c INT")
    two = (wh.checkpoint(), _tree(wh.path))
    wh.sql("ALTER TABLE T RENAME COLUMN b TO bb")
    wh.restore(two[0])
    assert _tree(wh.path) == two[1] and _fields(wh, "T") == ["a", "b", "c"]
    # DROP TABLE, then a new T under the same name: the old schema-0 is kept as it went,
    # and told apart from the new one of the same name
    wh.sql("DROP TABLE T; CREATE TABLE T (x STRING)")
    again = (wh.checkpoint(), _tree(wh.path))
    assert again[1]["default.db/T/schema/schema-0"] != two[1]["default.db/T/schema/schema-0"]
    wh.sql("DROP TABLE T; CREATE TABLE U (y INT)")
    for token, tree in (two, again, empty, two, again):
        wh.restore(token)
        assert _tree(wh.path) == tree
    assert wh.list_tables() == ["default.T"] and _fields(wh, "T") == ["x"]
    # a checkpoint reads no file but the hints (there are none here): it copies nothing
    reads: Counter[str] = Counter()
    real = fileio.read_bytes
    monkeypatch.setattr(fileio, "read_bytes", lambda p: reads.update([p]) or real(p))
    wh.checkpoint()
    assert not reads


def test_restore_refuses_what_changed_behind_its_back(tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path / "wh")
    wh.sql("CREATE TABLE T (a INT); ALTER TABLE T ADD COLUMN b INT")
    token = wh.checkpoint()
    wh.sql("ALTER TABLE T ADD COLUMN c INT")
    os.unlink(os.path.join(wh.table_path("T"), "schema", "schema-1"))  # not through schemalab
    before = _tree(wh.path)
    with pytest.raises(CheckpointError, match="schema/schema-1 is gone") as info:
        wh.restore(token)
    assert info.value.rule == "checkpoint-restorable"
    assert _tree(wh.path) == before, "a refused restore changes nothing"
    other = sl.Warehouse(tmp_path / "other")
    with pytest.raises(CheckpointError) as info:
        other.restore(token)
    assert info.value.rule == "checkpoint-of-this-warehouse"


def test_checkpoints_on_s3_restore_every_key_and_byte(s3_env: Any) -> None:
    """On S3 the keys after a restore are exactly those before, directory markers included
    (pyarrow writes one when it deletes a directory's last file)."""
    wh = sl.Warehouse(s3_env.uri("ckpt-ddl"))
    states = [(wh.checkpoint(), _keys(s3_env, "ckpt-ddl/"))]
    for statement in ("CREATE TABLE T (a INT)", "ALTER TABLE T ADD COLUMN b INT",
                      "DROP TABLE T", "CREATE TABLE T (x STRING)", "DROP TABLE T"):
        wh.sql(statement)
        states.append((wh.checkpoint(), _keys(s3_env, "ckpt-ddl/")))
    assert "ckpt-ddl/default.db/" in states[3][1], "pyarrow left a directory marker"
    for i in (2, 4, 0, 1, 5, 3, 4):
        wh.restore(states[i][0])
        assert _keys(s3_env, "ckpt-ddl/") == states[i][1], f"restore of state {i}"
    assert _fields(wh, "T") == ["x"]


# ---- data statements (Spark) ----------------------------------------------------------


def test_insert_overwrite_compaction_and_drop_undone_exactly(spark: Any, tmp_path: Path) -> None:
    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("""CREATE TABLE T (id INT, name STRING) PARTITIONED BY (name);
              INSERT INTO T VALUES (1, 'a'), (2, 'b');
              INSERT INTO T VALUES (3, 'a')""")
    states = [(wh.checkpoint(), _tree(wh.path), _reads(wh))]
    for statement in ("INSERT INTO T VALUES (4, 'c')",
                      "CALL sys.compact(table => 'T')",
                      "INSERT OVERWRITE T VALUES (9, 'a')",
                      "DROP TABLE T"):
        wh.sql(statement)
        states.append((wh.checkpoint(), _tree(wh.path), _reads(wh)))
    assert states[2][2]["default.T"][1] == [1, 2, 3, 4]  # the compaction's own snapshot
    assert states[4][2] == {}
    for i in (3, 0, 4, 2, 1):
        wh.restore(states[i][0])
        assert _tree(wh.path) == states[i][1], f"files of state {i}"
        assert _reads(wh) == states[i][2], f"reads of state {i}"


# ---- the stepper --------------------------------------------------------------------------


def test_stepper_back_and_reset_restore_files_and_reads(spark: Any, tmp_path: Path) -> None:
    from schemalab.widgets import AlterStepper

    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    s = AlterStepper(wh, FLIP226.read_text())
    n = len(s.statements)
    seen = {0: (_tree(wh.path), _reads(wh))}
    for pos in range(1, n + 1):
        assert s.step() and s.last_error is None, s.status.value
        seen[pos] = (_tree(wh.path), _reads(wh))
    assert seen[n][1]["default.T"][2][-1] == ["Row(a='a1', b='b1', c=None)",
                                              "Row(a='a2', b='b2', c='c2')"]
    for pos in reversed(range(n)):
        assert s.back() and s.position == pos
        assert (_tree(wh.path), _reads(wh)) == seen[pos], f"Back to step {pos}"
    s.play()
    assert _reads(wh) == seen[n][1]
    s.reset()
    assert (_tree(wh.path), _reads(wh)) == seen[0]


def _s3a_jars() -> dict[str, str]:
    """Spark's settings for hadoop-aws: the jars named in ``SCHEMALAB_S3A_JARS`` (comma
    separated), else schemalab's own (``s3a_conf``), resolved into the Ivy cache the S3 tests
    share (``.cache/ivy`` or ``$SCHEMALAB_IVY_DIR``), so a machine downloads them once."""
    jars = os.environ.get("SCHEMALAB_S3A_JARS")
    if jars:
        return {"spark.jars": jars}
    from schemalab.spark import s3a_conf

    ivy = os.environ.get("SCHEMALAB_IVY_DIR") or str(Path(__file__).parent.parent / ".cache"
                                                      / "ivy")
    conf = s3a_conf(ivy_dir=ivy)
    return {k: conf[k] for k in ("spark.jars.packages", "spark.jars.ivy")}


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.cluster
@pytest.mark.skipif(os.environ.get("SCHEMALAB_CLUSTER") != "1",
                    reason="a Spark with hadoop-aws of its own (~690 MB from Maven Central on "
                    "first use): run `make test-cluster` (sets SCHEMALAB_CLUSTER=1)")
def test_stepper_back_on_s3_restores_keys_and_reads(s3: Any) -> None:
    """FLIP-226 stepped forward and back with the stepper on an s3:// warehouse, in a
    process of its own (its Spark reads and writes s3a:// through hadoop-aws)."""
    out = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "stepper_on_s3.py"),
         s3.uri("stepper-flip226"), s3.endpoint, str(FLIP226), json.dumps(_s3a_jars())],
        capture_output=True, text=True, timeout=1500, env={**os.environ, **s3.env})
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert not result["errors"], result["errors"]
    assert [b["to"] for b in result["backs"]] == [5, 4, 3, 2, 1, 0]
    assert all(b["same"] for b in result["backs"])
    assert result["backs"][0]["keys"] > 10  # two snapshots' files, manifests and schemas
    assert result["reset_same"] and result["play_reads_same"]
    assert result["reads"]["default.T"][2] == ["('a1', 'b1', None)", "('a2', 'b2', 'c2')"]
