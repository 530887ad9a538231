"""Bad input: damaged files, newer formats, unknown types, hostile and escaping names.

Every schema, snapshot, manifest-list, manifest and data file that a read touches is broken
in many ways (empty, truncated, garbage, wrong JSON shape, wrong ids, newer versions, unknown
types, missing, flipped bytes...). Each must give a :class:`SchemaLabError` whose message
names the file and what is wrong — through the Python API (planning a read needs no JVM),
the history, and ``schemalab inspect`` (one line, exit 1) — never a bare traceback.

Then hostile identifiers (backticks, quotes, dots, spaces, unicode, ``<script>``) round-trip
through SQL, the files, reads, the CLI and widget HTML; database and table names cannot
leave the warehouse (``..``, ``/``, absolute paths, a symlink out).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest
from reliability_support import py_insert

import schemalab as sl
from schemalab import cli
from schemalab.errors import InvalidIdentifierError, SchemaLabError
from schemalab.schema.changes import AddColumn, ColumnSpec
from schemalab.sql import TableName
from schemalab.table import Table
from schemalab.types.parse import parse_type

# ---- a small table to damage ------------------------------------------------------------------


def build_table(root: Path) -> Table:
    """Two schemas, two snapshots (the second in schema 1), written without Spark."""
    t = sl.Warehouse(root / "wh").create_table(
        "victim", [ColumnSpec("id", parse_type("BIGINT")), ColumnSpec("s", parse_type("STRING"))])
    py_insert(t, [{"id": 1, "s": "a"}, {"id": 2, "s": None}])
    t.alter(AddColumn(("n",), parse_type("INT")))
    py_insert(t, [{"id": 3, "s": "c", "n": 7}])
    return t


def files_of(t: Table) -> dict[str, str]:
    """Role → path of each file the latest read touches."""
    snap = t.snapshot(2)
    mdir = os.path.join(t.path, "manifest")
    from schemalab.paimon.manifest_codec import read_manifest_list

    delta = read_manifest_list(os.path.join(mdir, snap.delta_manifest_list))
    data = t.data_files(snap)
    newest = max(data, key=lambda f: f.schema_id)
    return {"schema": os.path.join(t.path, "schema", "schema-1"),
            "snapshot": os.path.join(t.path, "snapshot", "snapshot-2"),
            "base-list": os.path.join(mdir, snap.base_manifest_list),
            "delta-list": os.path.join(mdir, snap.delta_manifest_list),
            "manifest": os.path.join(mdir, delta[0].file_name),
            "data": newest.path}


Mutation = Callable[[bytes, dict[str, str]], bytes | None]  # None: delete the file


def _json_edit(fn: Callable[[dict[str, Any]], Any]) -> Mutation:
    def edit(raw: bytes, _: dict[str, str]) -> bytes:
        d = json.loads(raw)
        out = fn(d)
        return json.dumps(d if out is None else out).encode()
    return edit


def _avro_edit(fn: Callable[[dict[str, Any]], None]) -> Mutation:
    def edit(raw: bytes, _: dict[str, str]) -> bytes:
        reader = fastavro.reader(io.BytesIO(raw))
        schema = reader.writer_schema
        records = list(reader)
        for r in records:
            fn(r)
        buf = io.BytesIO()
        fastavro.writer(buf, schema, records)
        return buf.getvalue()
    return edit


def _flip(at: float) -> Mutation:
    def flip(raw: bytes, _: dict[str, str]) -> bytes:
        i = int(len(raw) * at)
        return raw[:i] + bytes([raw[i] ^ 0xFF]) + raw[i + 1:]
    return flip


def _set(d: dict[str, Any], key: str, value: Any) -> None:
    d[key] = value


def _del(d: dict[str, Any], key: str) -> None:
    del d[key]


COMMON: list[tuple[str, Mutation]] = [
    ("missing", lambda raw, _: None),
    ("empty", lambda raw, _: b""),
    ("truncated to half", lambda raw, _: raw[: len(raw) // 2]),
    ("truncated to 3 bytes", lambda raw, _: raw[:3]),
    ("garbage", lambda raw, _: b"\x00\xff\xfe garbage \x01" * 7),
    ("trailing junk", lambda raw, _: raw + b"junk"),
]
JSON_CASES: list[tuple[str, Mutation]] = [
    ("a JSON array", lambda raw, _: b"[1, 2]"),
    ("not UTF-8", lambda raw, _: raw.replace(b'"id"', b'"\xff\xfe"', 1)),
    ("nested too deeply", lambda raw, _: b"[" * 100_000 + b"]" * 100_000),
    ("version 99", _json_edit(lambda d: _set(d, "version", 99))),
    ("version 4 (newer)", _json_edit(lambda d: _set(d, "version", 4))),
    ("version as text", _json_edit(lambda d: _set(d, "version", "3"))),
    ("id as text", _json_edit(lambda d: _set(d, "id", "x"))),
    ("another id", _json_edit(lambda d: _set(d, "id", d["id"] + 5))),
]
SCHEMA_CASES: list[tuple[str, Mutation]] = [
    ("no fields", _json_edit(lambda d: _del(d, "fields"))),
    ("fields not a list", _json_edit(lambda d: _set(d, "fields", {"a": 1}))),
    ("unknown type", _json_edit(lambda d: d["fields"][1].update(type="GEOMETRY"))),
    ("unknown nested type", _json_edit(lambda d: d["fields"][1].update(
        type={"type": "ROW", "fields": [{"id": 9, "name": "q", "type": "BLOB<9>"}]}))),
    ("deeply nested type", _json_edit(lambda d: d["fields"][1].update(
        type="ROW<a " * 3000 + "INT" + ">" * 3000))),
    ("a field without id", _json_edit(lambda d: d["fields"][1].pop("id"))),
    ("a field name that is a number", _json_edit(lambda d: d["fields"][1].update(name=5))),
    ("two fields with one id", _json_edit(lambda d: d["fields"][1].update(id=0))),
    ("two fields with one name", _json_edit(lambda d: d["fields"][1].update(name="id"))),
    ("highestFieldId too low", _json_edit(lambda d: _set(d, "highestFieldId", 0))),
    ("partition key not a column", _json_edit(lambda d: _set(d, "partitionKeys", ["zz"]))),
    ("options not an object", _json_edit(lambda d: _set(d, "options", [1]))),
]
SNAPSHOT_CASES: list[tuple[str, Mutation]] = [
    ("no schemaId", _json_edit(lambda d: _del(d, "schemaId"))),
    ("schemaId of no schema", _json_edit(lambda d: _set(d, "schemaId", 99))),
    ("base list missing", _json_edit(lambda d: _set(d, "baseManifestList", "manifest-list-x"))),
    ("delta list not a string", _json_edit(lambda d: _set(d, "deltaManifestList", 5))),
    ("commitKind unknown", _json_edit(lambda d: _set(d, "commitKind", "FROB"))),
]
AVRO_CASES: list[tuple[str, Mutation]] = [
    ("flipped byte at 40%", _flip(0.4)),
    ("flipped byte at 80%", _flip(0.8)),
    ("a JSON file", lambda raw, _: b'{"not": "avro"}'),
    ("newer _VERSION 3", _avro_edit(lambda r: r.update(_VERSION=3))),
    ("old _VERSION 1", _avro_edit(lambda r: r.update(_VERSION=1))),
]
MANIFEST_CASES: list[tuple[str, Mutation]] = [
    ("unknown _KIND", _avro_edit(lambda r: r.update(_KIND=7))),
    ("file of schema 99", _avro_edit(lambda r: r["_FILE"].update(_SCHEMA_ID=99))),
    ("file renamed", _avro_edit(lambda r: r["_FILE"].update(_FILE_NAME="data-gone.parquet"))),
    ("file size off", _avro_edit(lambda r: r["_FILE"].update(
        _FILE_SIZE=r["_FILE"]["_FILE_SIZE"] + 1))),
]
LIST_CASES: list[tuple[str, Mutation]] = [
    ("names a missing manifest", _avro_edit(lambda r: r.update(_FILE_NAME="manifest-gone"))),
]
DATA_CASES: list[tuple[str, Mutation]] = [
    ("same size, garbage", lambda raw, _: b"PAR1" + b"\x00" * (len(raw) - 8) + b"PAR1"),
    ("same size, no magic", lambda raw, _: b"\x00" * len(raw)),
    ("footer flipped", lambda raw, _: raw[:-12] + bytes(b ^ 0xFF for b in raw[-12:-8])
     + raw[-8:]),
]

CASES: list[tuple[str, str, Mutation]] = (
    # (a missing latest snapshot is no damage: the one before it is then the latest)
    [(role, label, m) for role in ("schema", "snapshot") for label, m in COMMON + JSON_CASES
     if (role, label) != ("snapshot", "missing")]
    + [("schema", label, m) for label, m in SCHEMA_CASES]
    + [("snapshot", label, m) for label, m in SNAPSHOT_CASES]
    + [(role, label, m) for role in ("base-list", "delta-list", "manifest")
       for label, m in COMMON + AVRO_CASES]
    + [("manifest", label, m) for label, m in MANIFEST_CASES]
    + [(role, label, m) for role in ("base-list", "delta-list") for label, m in LIST_CASES]
    + [("data", label, m) for label, m in COMMON + DATA_CASES]
)
#: a file that refers to a missing one: the error names the missing file
REFERENCES = {"schemaId of no schema", "base list missing", "file of schema 99", "file renamed",
              "file size off", "names a missing manifest"}
#: what ``inspect`` (metadata only, no data files) may show without an error
INSPECT_MAY_PASS = {"file renamed", "file size off", "schemaId of no schema"}
#: flipped bytes may land where a reader cannot tell (a value inside a record): those
#: cases must either read or fail cleanly
MAY_READ = {"flipped byte at 40%", "flipped byte at 80%", "trailing junk", "footer flipped",
            "commitKind unknown"}


def damage(pristine: Path, root: Path, role: str, mutation: Mutation) -> tuple[Table, str]:
    """A copy of the pristine table with one file damaged; returns (table, its path)."""
    shutil.copytree(pristine, root)
    t = Table(str(root), name="default.victim")
    path = files_of(t)[role]
    raw = Path(path).read_bytes()
    out = mutation(raw, {})
    if out is None:
        os.remove(path)
    else:
        Path(path).write_bytes(out)
    return Table(str(root), name="default.victim"), path  # nothing cached from before


def use_table(t: Table) -> None:
    """Everything the API does with a table's files, short of running Spark."""
    t.read_plan()
    for sid in t.snapshot_manager.list_ids():
        t.read_plan(snapshot_id=sid)
    h = t.history()
    for s in h.snapshots:
        h.tree(s.id)


# What a damaged file is refused as: mostly a corrupt file; a file that is gone (or names one
# that is) is a missing schema or snapshot; a type name that is not Paimon's is a type error.
DAMAGE_RULES = frozenset({"corrupt-file", "schema-must-exist", "snapshot-must-exist",
                          "table-must-exist", "unknown-type", "unsupported-type"})


def check_case(pristine: Path, root: Path, role: str, label: str, mutation: Mutation) -> str:
    """Damage, use, and check the error; returns "error" or "read" (a harmless flip)."""
    t, path = damage(pristine, root, role, mutation)
    try:
        use_table(t)
    except SchemaLabError as e:
        message = str(e)
        named = os.path.basename(path) in message or (
            label in REFERENCES and str(root) in message)  # names the file referred to
        assert named, f"{role} {label}: {message}"
        assert len(message) < 2000, f"{role} {label}: message too long"
        assert e.rule in DAMAGE_RULES, f"{role} {label}: rule {e.rule}: {message}"
    else:
        if label in MAY_READ:
            return "read"
        raise AssertionError(f"{role} {label}: damaged {path} was not noticed")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["inspect", str(root)])
    text = err.getvalue()
    if code == 0 and (role == "data" or label in INSPECT_MAY_PASS):
        return "error"  # inspect reads metadata only: data files are not its business
    assert code == 1 and text.startswith("error: ") and text.count("\n") == 2, (role, label,
                                                                                 text)
    assert text.splitlines()[1].removeprefix("rule: ") in DAMAGE_RULES, (role, label, text)
    assert "Traceback" not in text
    return "error"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = build_table(tmp_path_factory.mktemp("pristine"))
    use_table(t)  # undamaged, it reads
    return Path(t.path)


@pytest.mark.parametrize(("role", "label", "mutation"), CASES,
                         ids=[f"{r}: {label}" for r, label, _ in CASES])
def test_damaged_file_is_named_in_a_clear_error(pristine: Path, tmp_path: Path, role: str,
                                                label: str, mutation: Mutation) -> None:
    check_case(pristine, tmp_path / "t", role, label, mutation)


def run_bad_inputs(root: Path) -> dict[str, int]:
    """Every case once (for bench/reliability_report.py)."""
    pristine = Path(build_table(root / "pristine").path)
    out = {"tried": 0, "error": 0, "read": 0}
    for i, (role, label, m) in enumerate(CASES):
        out[check_case(pristine, root / f"c{i}", role, label, m)] += 1
        out["tried"] += 1
    return out


def test_cli_on_a_damaged_table_prints_one_line(pristine: Path, tmp_path: Path) -> None:
    """The installed command, as a user runs it."""
    t, path = damage(pristine, tmp_path / "t", "snapshot", COMMON[2][1])
    r = subprocess.run([sys.executable, "-m", "schemalab.cli", "inspect", t.path],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {path}: not valid JSON")


def test_stale_or_garbled_hints_are_only_shortcuts(pristine: Path, tmp_path: Path) -> None:
    shutil.copytree(pristine, tmp_path / "t")
    t = Table(str(tmp_path / "t"))
    for text in (b"garbage", b"99", b"-1", b"1"):
        (tmp_path / "t" / "snapshot" / "LATEST").write_bytes(text)
        (tmp_path / "t" / "snapshot" / "EARLIEST").write_bytes(text)
        assert t.snapshot_manager.latest_id() == 2 and t.snapshot_manager.earliest_id() in (1, 2)
        use_table(t)


# ---- unknown types in SQL ---------------------------------------------------------------------


@pytest.mark.parametrize("sql", [
    "CREATE TABLE t (a GEOMETRY)",
    "CREATE TABLE t (a ROW<x BLOB2>)",
    "CREATE TABLE t (a DECIMAL(99, 2))",
    "CREATE TABLE t (a " + "ROW<a " * 3000 + "INT" + ">" * 3000 + ")",
])
def test_unknown_types_in_sql_are_clear_errors(tmp_path: Path, sql: str) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["sql", str(tmp_path / "wh"), "-e", sql])
    assert code == 1 and err.getvalue().startswith("error: ") and err.getvalue().count(
        "\n") == 2, err.getvalue()
    assert err.getvalue().splitlines()[1] in ("rule: unknown-type", "rule: sql-syntax"), \
        err.getvalue()
    assert not list((tmp_path / "wh").glob("*.db/t"))  # nothing half-created


# ---- hostile identifiers ------------------------------------------------------------------------

HOSTILE = ["a`b", "it's", 'say "hi"', "x.y", "a b", "ünï ☃", "<script>alert(1)</script>",
           "--; DROP", "%41=b"]


def test_hostile_identifiers_round_trip_sql_files_cli(tmp_path: Path) -> None:
    """Hostile database, table and column names through SQL (CLI), files and inspect."""
    from schemalab.types.model import quote_identifier as q

    wh = str(tmp_path / "wh")
    for i, column in enumerate(HOSTILE):
        name = column.replace("/", "")  # "/" is refused in table names (see below)
        db = f"db {name}"
        cols = ", ".join(f"{q(c)} INT" for c in HOSTILE)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(["sql", wh, "-e",
                             f"CREATE TABLE {q(db)}.{q(name)} ({cols}); "
                             f"ALTER TABLE {q(db)}.{q(name)} RENAME COLUMN {q(HOSTILE[i])} "
                             f"TO {q(name + '2')}; DESCRIBE {q(db)}.{q(name)}"])
        assert code == 0, out.getvalue()
        table_dir = Path(wh) / f"{db}.db" / name
        assert table_dir.is_dir()
        schema = json.loads((table_dir / "schema" / "schema-1").read_text("utf-8"))
        want = [c if j != i else name + "2" for j, c in enumerate(HOSTILE)]
        assert [f["name"] for f in schema["fields"]] == want
        assert f"| {name}2 " in out.getvalue()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["inspect", str(table_dir), "--json"]) == 0
        strings = set(_strings(json.loads(out.getvalue())))
        assert name + "2" in strings and HOSTILE[i] in strings  # renamed, and its old name


def _strings(obj: Any) -> Any:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def test_hostile_identifiers_in_reads_and_widget_html(tmp_path: Path, spark: Any) -> None:
    from schemalab.widgets import LineageView, SchemaHistoryView, SnapshotTreeView

    from schemalab.types.model import quote_identifier as q

    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    name = "<script>alert('t') `x`.\"y\""
    odd = "a`b.c \"d\" 'e'"
    qualified = f"{q('d<b>')}.{q(name)}"
    t = wh.create_table(TableName("d<b>", name),
                        [ColumnSpec("<script>alert(1)</script>", parse_type("INT")),
                         ColumnSpec(odd, parse_type("STRING"))])
    wh.sql(f"INSERT INTO {qualified} VALUES (1, '<script>x</script>')")
    wh.sql(f"ALTER TABLE {qualified} RENAME COLUMN {q(odd)} TO {q('ü <i>')}")
    rows = [tuple(r) for r in wh.sql(f"SELECT * FROM {qualified}").collect()]
    assert rows == [(1, "<script>x</script>")]
    assert t.read().columns == ["<script>alert(1)</script>", "ü <i>"]
    html_parts: list[str] = []

    def collect(w: Any) -> None:
        value = getattr(w, "value", None)
        if type(w).__name__ == "HTML" and isinstance(value, str):
            html_parts.append(value)
        if hasattr(w, "data") and hasattr(w, "layout") and type(w).__name__ == "FigureWidget":
            html_parts.append(json.dumps(w.to_plotly_json()))
        for c in getattr(w, "children", ()):
            collect(c)

    for view in (SchemaHistoryView(t), LineageView(t), SnapshotTreeView(t)):
        collect(view)
    text = "\n".join(html_parts)
    assert html_parts and "alert(1)" in text  # the names are shown...
    assert "<script" not in text  # ...escaped, never as markup
    assert "<i>" not in text


@pytest.mark.parametrize("db,table", [
    ("..", "t"), ("default", ".."), ("default", "."), ("default", "../escape"),
    ("../..", "t"), ("a/b", "t"), ("default", "a/b"), ("/abs", "t"), ("default", "/abs"),
    ("default", ".hidden"), ("default", "nul\x00"), ("default", "back\\slash"),
    ("default", ""), ("default", "x" * 300),
])
def test_names_cannot_escape_the_warehouse(tmp_path: Path, db: str, table: str) -> None:
    root = tmp_path / "inside"
    root.mkdir()
    wh = sl.Warehouse(root / "wh")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    cols = [ColumnSpec("a", parse_type("INT"))]
    with pytest.raises(InvalidIdentifierError) as info:
        wh.create_table(TableName(db, table), cols)
    assert info.value.rule == "valid-identifier"
    with pytest.raises(SchemaLabError) as found:
        wh.table(TableName(db, table))
    assert found.value.rule == "valid-identifier"
    from schemalab.types.model import quote_identifier as q

    if "\x00" not in db + table:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["sql", str(root / "wh"), "-e",
                             f"CREATE TABLE {q(db)}.{q(table)} (a INT)"])
        assert code == 1 and err.getvalue().startswith("error: "), err.getvalue()
        assert err.getvalue().splitlines()[-1] in ("rule: valid-identifier",
                                                   "rule: sql-syntax"), err.getvalue()
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before and not str(p).startswith("inside/wh")] == []
    assert not (tmp_path / "t").exists() and not Path("/abs").exists()


def test_a_symlink_out_of_the_warehouse_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    wh = sl.Warehouse(tmp_path / "wh")
    (tmp_path / "wh" / "default.db").mkdir(parents=True)
    (tmp_path / "wh" / "default.db" / "evil").symlink_to(outside)
    with pytest.raises(InvalidIdentifierError, match="outside the warehouse") as info:
        wh.create_table("evil", [ColumnSpec("a", parse_type("INT"))])
    assert (info.value.table, info.value.rule) == ("default.evil", "valid-identifier")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(("how", "column", "value"), [
    ("sql", "small", "1000"),
    ("sql", "n", "'abc'"),
    ("rows", "small", 1000),
    ("rows", "n", "abc"),
    ("pandas", "small", 1000),
])
def test_values_a_column_cannot_hold_are_refused_by_name(tmp_path: Path, spark: Any, how: str,
                                                         column: str, value: Any) -> None:
    """A value the column's type cannot hold fails the INSERT with the table, the column and
    the rule (PySpark's and Spark's own errors name neither), and leaves nothing behind."""
    import pandas as pd

    wh = sl.Warehouse(tmp_path / "wh", spark=spark)
    wh.sql("CREATE TABLE t (id INT, small TINYINT, n INT)")
    t = wh.table("t")
    t.insert([(1, 1, 1)])
    before = sorted(p.relative_to(t.path) for p in Path(t.path).rglob("*"))
    row: dict[str, Any] = {"id": 2, "small": 2, "n": 2, column: value}
    with pytest.raises(SchemaLabError) as e:
        if how == "sql":
            wh.sql(f"INSERT INTO t VALUES ({row['id']}, {row['small']}, {row['n']})")
        elif how == "rows":
            t.insert([(row["id"], row["small"], row["n"])])
        else:
            t.insert(pd.DataFrame([row]))
    assert (e.value.table, e.value.column, e.value.rule) == ("default.t", column, "insert-cast")
    assert "Table default.t: column " + column in e.value.message
    assert sorted(p.relative_to(t.path) for p in Path(t.path).rglob("*")) == before
    assert [tuple(r) for r in t.read().collect()] == [(1, 1, 1)]
