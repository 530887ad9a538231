"""Manifests and manifest lists: pypaimon's fixtures byte for byte, other writers, bad files."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemalab.errors import CorruptFileError, UnsupportedVersionError
from schemalab.paimon.binaryrow import EMPTY_ROW, encode_row
from schemalab.paimon.manifest import (
    MANIFEST_LIST_PREFIX,
    MANIFEST_PREFIX,
    DataFileMeta,
    FileKind,
    FileNamer,
    FileSource,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    new_file_name,
)
from schemalab.paimon.manifest_avro import manifest_entry_schema, manifest_file_meta_schema
from schemalab.paimon.manifest_codec import (
    manifest_file_meta,
    read_manifest,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.types.model import (
    BIGINT,
    INT,
    STRING,
    DataType,
)

EVENTS = ("wh", "demo.db", "events")


def _manifest_files(root: Path, lists: bool) -> list[Path]:
    pattern = "manifest-list-*" if lists else "manifest-[0-9a-f]*"
    return sorted(root.glob(f"*/*/*/manifest/{pattern}"))


def _header(data: bytes) -> dict[str, Any]:
    return fastavro.reader(io.BytesIO(data)).metadata


def _entry(name: str = "data-1.parquet", kind: FileKind = FileKind.ADD, bucket: int = 0,
           partition: bytes = EMPTY_ROW, **file: Any) -> ManifestEntry:
    file.setdefault("file_size", 100)
    file.setdefault("row_count", 1)
    return ManifestEntry(kind, partition, bucket, -1, DataFileMeta(name, **file))


# --------------------------------------------------------------------------------------------
# The fixtures pypaimon 2.1.0 wrote
# --------------------------------------------------------------------------------------------


def test_reads_the_dumped_entry(pypaimon_warehouses: Path) -> None:
    # paimon-dumps/avro_events.txt, first record of manifest-104df80c-...
    path = pypaimon_warehouses.joinpath(*EVENTS, "manifest",
                                        "manifest-104df80c-dd33-49fe-8084-45613ad4dda8-0")
    first = read_manifest(str(path))[0]
    assert first.kind is FileKind.ADD
    assert first.partition_values([STRING()]) == ["2024-01-02"]
    assert (first.bucket, first.total_buckets) == (0, -1)
    f = first.file
    assert f.file_name == "data-4b23bfff-a3e5-442a-8dac-d7c88f81637c-0.parquet"
    assert (f.file_size, f.row_count, f.schema_id, f.level) == (1792, 1, 5, 0)
    assert f.min_key == f.max_key == EMPTY_ROW
    assert f.value_stats == SimpleStats(EMPTY_ROW, EMPTY_ROW, ())
    assert f.value_stats_cols == ()
    assert (f.delete_row_count, f.file_source, f.embedded_index) == (0, FileSource.APPEND, None)
    assert f.creation_datetime == dt.datetime(2026, 11, 21, 22, 11, 13, 252000)
    assert f.creation_time == 1795299073252
    assert (f.first_row_id, f.write_cols, f.write_cols_sequences, f.extra) == (None, None,
                                                                              None, {})


def test_reads_the_dumped_manifest_list(pypaimon_warehouses: Path) -> None:
    path = pypaimon_warehouses.joinpath(*EVENTS, "manifest",
                                        "manifest-list-fda3a856-8f26-4b19-944c-64df6fed5f60-1")
    (meta,) = read_manifest_list(str(path))
    assert meta.file_name == "manifest-104df80c-dd33-49fe-8084-45613ad4dda8-0"
    assert (meta.file_size, meta.num_added_files, meta.num_deleted_files) == (2374, 2, 0)
    assert meta.partition_stats.decode([STRING()]) == (["2024-01-02"], ["2024-01-03"])
    assert meta.partition_stats.null_counts == (0,)
    assert (meta.schema_id, meta.min_bucket, meta.max_bucket, meta.min_level,
            meta.max_level) == (5, 0, 0, 0, 0)
    assert (meta.min_row_id, meta.max_row_id, meta.total_buckets, meta.extra_files) == (
        None, None, None, None)


def test_writer_schemas_are_pypaimons(pypaimon_warehouses: Path) -> None:
    entry_json = json.dumps(manifest_entry_schema())
    list_json = json.dumps(manifest_file_meta_schema())
    for path in _manifest_files(pypaimon_warehouses, lists=False):
        assert _header(path.read_bytes())["avro.schema"] == entry_json
    for path in _manifest_files(pypaimon_warehouses, lists=True):
        assert _header(path.read_bytes())["avro.schema"] == list_json


@pytest.mark.parametrize("lists", [False, True])
def test_rewriting_fixtures_gives_the_same_bytes(pypaimon_warehouses: Path, tmp_path: Path,
                                                 lists: bool) -> None:
    files = _manifest_files(pypaimon_warehouses, lists)
    assert len(files) == (14 if lists else 7)
    for path in files:
        original = path.read_bytes()
        out = str(tmp_path / path.name)
        if lists:
            size = write_manifest_list(out, read_manifest_list(str(path)),
                                       sync_marker=original[-16:])
        else:
            size = write_manifest(out, read_manifest(str(path)), sync_marker=original[-16:])
        assert Path(out).read_bytes() == original
        assert size == len(original)


def test_manifest_file_meta_recomputes_the_fixture_lists(pypaimon_warehouses: Path) -> None:
    checked = 0
    for list_path in _manifest_files(pypaimon_warehouses, lists=True):
        table = list_path.parent.parent
        schemas = SchemaManager(str(table))
        for meta in read_manifest_list(str(list_path)):
            manifest = list_path.parent / meta.file_name
            schema = schemas.get(meta.schema_id)
            types = [schema.type_of(k) for k in schema.partition_keys]
            built = manifest_file_meta(meta.file_name, manifest.stat().st_size,
                                       read_manifest(str(manifest)), types)
            assert built == meta
            checked += 1
    assert checked == 11


def test_schema_id_of_a_manifest_is_its_newest_file_schema() -> None:
    meta = manifest_file_meta("m", 1, [_entry("a", schema_id=2), _entry("b", schema_id=7),
                                       _entry("c", kind=FileKind.DELETE, schema_id=0)], [])
    assert (meta.schema_id, meta.num_added_files, meta.num_deleted_files) == (7, 2, 1)
    assert meta.partition_stats == SimpleStats(EMPTY_ROW, EMPTY_ROW, ())


def test_row_id_range_needs_every_first_row_id() -> None:
    with_ids = [_entry("a", first_row_id=0, row_count=10), _entry("b", first_row_id=10,
                                                                  row_count=5)]
    meta = manifest_file_meta("m", 1, with_ids, [])
    assert (meta.min_row_id, meta.max_row_id) == (0, 14)
    meta = manifest_file_meta("m", 1, [*with_ids, _entry("c")], [])
    assert (meta.min_row_id, meta.max_row_id) == (None, None)


def test_partition_stats_count_nulls() -> None:
    types: list[DataType] = [STRING(), INT()]
    entries = [_entry(str(i), partition=encode_row(p, types))
               for i, p in enumerate([["b", None], [None, 3], ["a", 1]])]
    stats = manifest_file_meta("m", 1, entries, types).partition_stats
    assert stats.decode(types) == (["a", 1], ["b", 3])
    assert stats.null_counts == (1, 1)


# --------------------------------------------------------------------------------------------
# Writing: flavors, codecs, never overwrite
# --------------------------------------------------------------------------------------------

FULL_ENTRY = ManifestEntry(
    FileKind.DELETE, encode_row(["x", 3], [STRING(), INT()]), 4, 8,
    DataFileMeta(
        "data-x.parquet", 123, 45,
        min_key=encode_row([1], [BIGINT()]), max_key=encode_row([9], [BIGINT()]),
        key_stats=SimpleStats.of([1], [9], [0], [BIGINT()]),
        value_stats=SimpleStats(EMPTY_ROW, EMPTY_ROW, None),
        min_sequence_number=5, max_sequence_number=50, schema_id=3, level=2,
        extra_files=("data-x.parquet.index",), creation_time=-1, delete_row_count=7,
        embedded_index=b"\x01\x02", file_source=FileSource.COMPACT, value_stats_cols=("a",),
        external_path="s3://b/data-x.parquet", first_row_id=100, write_cols=("a", "b"),
        write_cols_sequences=(1, 2)))
FULL_META = ManifestFileMeta("manifest-x-0", 10, 1, 2, SimpleStats.of([1], [2], [0], [INT()]),
                             4, 0, 3, 0, 5, 7, 9, 16, ("extra",))


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard", "zstd", "bzip2",
                                   "xz"])
def test_every_field_round_trips_in_every_codec(tmp_path: Path, codec: str) -> None:
    size = write_manifest(str(tmp_path / "m"), [FULL_ENTRY, _entry()], codec)
    assert size == (tmp_path / "m").stat().st_size
    assert read_manifest(str(tmp_path / "m")) == [FULL_ENTRY, _entry()]
    write_manifest_list(str(tmp_path / "l"), [FULL_META], codec)
    assert read_manifest_list(str(tmp_path / "l")) == [FULL_META]
    expected = {"zstd": "zstandard"}.get(codec, codec)
    assert _header((tmp_path / "m").read_bytes())["avro.codec"] == expected


def test_unknown_codec_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown Avro codec"):
        write_manifest(str(tmp_path / "m"), [], "brotli")
    assert not (tmp_path / "m").exists()


def test_java_flavor_names_records_like_avro_schema_converter(tmp_path: Path) -> None:
    write_manifest(str(tmp_path / "m"), [FULL_ENTRY], flavor="java")
    schema = json.loads(_header((tmp_path / "m").read_bytes())["avro.schema"])
    assert schema["name"] == "org.apache.paimon.avro.generated.record"
    file_schema = schema["fields"][5]["type"]
    assert file_schema["name"] == "org.apache.paimon.avro.generated.record__FILE"
    assert file_schema["fields"][5]["type"]["name"] == (
        "org.apache.paimon.avro.generated.record__FILE__KEY_STATS")
    assert read_manifest(str(tmp_path / "m")) == [FULL_ENTRY]
    # Java's manifest list has no _TOTAL_BUCKETS / _EXTRA_FILES.
    write_manifest_list(str(tmp_path / "l"), [FULL_META], flavor="java")
    names = [f["name"] for f in json.loads(
        _header((tmp_path / "l").read_bytes())["avro.schema"])["fields"]]
    assert names[-1] == "_MAX_ROW_ID" and "_TOTAL_BUCKETS" not in names
    (read,) = read_manifest_list(str(tmp_path / "l"))
    assert read == ManifestFileMeta(**{**FULL_META.__dict__, "total_buckets": None,
                                       "extra_files": None})


def test_older_writer_schemas_read_with_defaults(tmp_path: Path) -> None:
    # Paimon 0.8-style DataFileMeta: none of the nullable fields after _CREATION_TIME, and
    # one field a future writer might add.
    schema = manifest_entry_schema("java")
    file_fields = schema["fields"][5]["type"]["fields"]
    kept = [f for f in file_fields if f["name"] not in (
        "_DELETE_ROW_COUNT", "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_VALUE_STATS_COLS",
        "_EXTERNAL_PATH", "_FIRST_ROW_ID", "_WRITE_COLS", "_WRITE_COLS_SEQUENCES")]
    kept.append({"name": "_FUTURE", "type": "string"})
    schema["fields"][5]["type"]["fields"] = kept
    record = {"_VERSION": 2, "_KIND": 0, "_PARTITION": EMPTY_ROW, "_BUCKET": 0,
              "_TOTAL_BUCKETS": 1,
              "_FILE": {"_FILE_NAME": "data-old.orc", "_FILE_SIZE": 9, "_ROW_COUNT": 2,
                        "_MIN_KEY": EMPTY_ROW, "_MAX_KEY": EMPTY_ROW,
                        "_KEY_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW,
                                       "_NULL_COUNTS": None},
                        "_VALUE_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW,
                                         "_NULL_COUNTS": [None]},
                        "_MIN_SEQUENCE_NUMBER": 0, "_MAX_SEQUENCE_NUMBER": 1, "_SCHEMA_ID": 0,
                        "_LEVEL": 5, "_EXTRA_FILES": [], "_CREATION_TIME": None,
                        "_FUTURE": "hello"}}
    with open(tmp_path / "m", "wb") as fh:
        fastavro.writer(fh, schema, [record], codec="deflate")
    (entry,) = read_manifest(str(tmp_path / "m"))
    assert entry.file.value_stats.null_counts == (None,)
    assert entry.file.key_stats.null_counts is None
    assert (entry.file.file_source, entry.file.value_stats_cols, entry.file.level) == (
        None, None, 5)
    assert entry.file.extra == {"_FUTURE": "hello"}


def test_manifests_are_never_overwritten(tmp_path: Path) -> None:
    path = str(tmp_path / "m")
    write_manifest(path, [_entry("first")])
    with pytest.raises(FileExistsError):
        write_manifest(path, [_entry("second")])
    with pytest.raises(FileExistsError):
        write_manifest_list(path, [])
    assert [e.file.file_name for e in read_manifest(path)] == ["first"]
    assert [p.name for p in tmp_path.iterdir()] == ["m"]  # no temporary files left


def test_identifier_is_what_java_matches_on() -> None:
    a = _entry("f", bucket=1, level=0)
    assert a.identifier == _entry("f", kind=FileKind.DELETE, bucket=1, row_count=99).identifier
    assert a.identifier != _entry("f", bucket=2).identifier
    assert a.identifier != _entry("f", bucket=1, level=1).identifier
    assert a.identifier != _entry("f", bucket=1, extra_files=("x",)).identifier
    assert a.identifier != _entry("f", bucket=1, external_path="s3://x/f").identifier
    assert a.identifier != _entry("f", bucket=1, embedded_index=b"i").identifier


def test_file_names_follow_file_store_path_factory() -> None:
    namer = FileNamer()
    uuid_re = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    names = [namer.new_manifest(), namer.new_manifest(), namer.new_manifest_list()]
    assert re.fullmatch(f"manifest-{uuid_re}-0", names[0])
    assert names[1] == names[0][:-1] + "1"
    assert names[2] == f"manifest-list-{namer.uuid}-0"
    assert re.fullmatch(f"{MANIFEST_PREFIX}{uuid_re}-0", new_file_name(MANIFEST_PREFIX))
    assert new_file_name(MANIFEST_LIST_PREFIX) != new_file_name(MANIFEST_LIST_PREFIX)


# --------------------------------------------------------------------------------------------
# Files that are not manifests
# --------------------------------------------------------------------------------------------


def _records(path: Path) -> list[dict[str, Any]]:
    with open(path, "rb") as fh:
        return [dict(r) for r in fastavro.reader(fh)]  # type: ignore[arg-type]


def _write_raw(path: Path, schema: dict[str, Any], records: list[dict[str, Any]]) -> str:
    with open(path, "wb") as fh:
        fastavro.writer(fh, schema, records)
    return str(path)


def test_missing_empty_and_garbage_files(tmp_path: Path) -> None:
    with pytest.raises(CorruptFileError, match="does not exist"):
        read_manifest(str(tmp_path / "nope"))
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "garbage").write_bytes(b"\x00not avro at all" * 10)
    for name in ("empty", "garbage"):
        with pytest.raises(CorruptFileError, match="not an Avro container") as info:
            read_manifest_list(str(tmp_path / name))
        assert info.value.path == str(tmp_path / name)


def test_other_avro_files_are_corrupt_not_crashes(tmp_path: Path) -> None:
    schema = {"type": "record", "name": "X", "fields": [{"name": "a", "type": "int"}]}
    path = _write_raw(tmp_path / "x", schema, [{"a": 1}])
    with pytest.raises(CorruptFileError, match="missing field _VERSION"):
        read_manifest(path)


def test_version_1_manifests_are_refused(tmp_path: Path) -> None:
    write_manifest(str(tmp_path / "m"), [_entry()], "null")
    records = _records(tmp_path / "m")
    records[0]["_VERSION"] = 1
    records[0]["_FILE"]["_CREATION_TIME"] = None
    path = _write_raw(tmp_path / "v1", manifest_entry_schema(), records)
    with pytest.raises(UnsupportedVersionError, match="_VERSION 1"):
        read_manifest(path)


def test_bad_kind_and_bad_field_types(tmp_path: Path) -> None:
    schema = manifest_entry_schema()
    write_manifest(str(tmp_path / "m"), [_entry()], "null")
    (record,) = _records(tmp_path / "m")
    record["_KIND"] = 5
    with pytest.raises(CorruptFileError, match="entry 0: _KIND 5"):
        read_manifest(_write_raw(tmp_path / "k", schema, [record]))
    schema["fields"][5]["type"]["fields"][0]["type"] = "long"  # _FILE_NAME as a number
    record["_KIND"] = 0
    record["_FILE"]["_FILE_NAME"] = 7
    with pytest.raises(CorruptFileError, match="_FILE: _FILE_NAME is int, not str"):
        read_manifest(_write_raw(tmp_path / "t", schema, [record]))


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0), flip=st.integers(min_value=0))
def test_truncated_or_flipped_fixtures_fail_cleanly(cut: int, flip: int) -> None:
    import tempfile

    original = _SAMPLE_MANIFEST
    with tempfile.TemporaryDirectory() as d:
        truncated = os.path.join(d, "t")
        Path(truncated).write_bytes(original[: cut % len(original)])
        flipped = bytearray(original)
        flipped[flip % len(original)] ^= 0xFF
        Path(d, "f").write_bytes(bytes(flipped))
        for path in (truncated, os.path.join(d, "f")):
            try:
                entries = read_manifest(path)
            except CorruptFileError:
                continue
            # A cut at a block boundary or a flip in a name leaves a readable file.
            assert len(entries) <= 2


_SAMPLE_BUF = io.BytesIO()
fastavro.writer(_SAMPLE_BUF, manifest_entry_schema(),
                [{"_VERSION": 2, "_KIND": 0, "_PARTITION": EMPTY_ROW, "_BUCKET": 0,
                  "_TOTAL_BUCKETS": -1, "_FILE": {
                      "_FILE_NAME": "data-1.parquet", "_FILE_SIZE": 1, "_ROW_COUNT": 1,
                      "_MIN_KEY": EMPTY_ROW, "_MAX_KEY": EMPTY_ROW,
                      "_KEY_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW},
                      "_VALUE_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW},
                      "_MIN_SEQUENCE_NUMBER": 0, "_MAX_SEQUENCE_NUMBER": 0, "_SCHEMA_ID": 0,
                      "_LEVEL": 0, "_EXTRA_FILES": []}}] * 2,
                codec="zstandard")
_SAMPLE_MANIFEST = _SAMPLE_BUF.getvalue()
