"""The schemalab command, run as a user would run it (DDL needs no JVM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCHEMALAB = [sys.executable, "-m", "schemalab.cli"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCHEMALAB, *args], capture_output=True, text=True, timeout=120)


def test_sql_ddl_from_e_and_f(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    r = run("sql", wh, "-e", "CREATE TABLE t (id INT, `a b` STRING); "
                             "ALTER TABLE t RENAME COLUMN `a b` TO `<script>`")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["Created default.t (schema 0).",
                                     "Altered default.t: schema 1."]
    script = tmp_path / "s.sql"
    script.write_text("-- comment; with a semicolon\nALTER TABLE t ADD COLUMN c INT;\n"
                      "DESCRIBE t;\n")
    r = run("sql", wh, "-f", str(script))
    assert r.returncode == 0, r.stderr
    assert "| <script> | STRING    | NULL    | 1        |" in r.stdout
    assert "WARN" not in r.stderr


def test_errors_are_one_line_not_tracebacks(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    run("sql", wh, "-e", "CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)")
    r = run("sql", wh, "-e", "ALTER TABLE t DROP COLUMN p")
    assert r.returncode == 1
    assert r.stderr.strip() == ("error: Cannot drop partition key or primary key: [p] "
                                "(table default.t)\nrule: keys-cannot-be-dropped")
    r = run("sql", wh, "-e", "ALTER TABLE t FROBNICATE")
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[1:] == ["rule: unsupported-sql"]
    r = run("sql", wh, "-f", str(tmp_path / "missing.sql"))
    assert r.returncode == 1 and "missing.sql" in r.stderr


ICEBERG_FIXTURES = Path(__file__).parent / "fixtures" / "iceberg-metadata"


def test_inspect_every_iceberg_fixture() -> None:
    """Valid metadata prints its history; invalid metadata gets one clear line, exit 1."""
    import json

    for path in sorted(ICEBERG_FIXTURES.glob("*.json")):
        r = run("inspect", str(path), "--json")
        valid = "Valid" in path.name and "View" not in path.name or \
            "StatisticsFiles" in path.name
        if valid:
            assert r.returncode == 0, (path.name, r.stderr)
            assert json.loads(r.stdout)["format"] == "iceberg"
        else:
            assert r.returncode == 1, path.name
            assert r.stderr.startswith(f"error: {path}") and r.stderr.count("\n") == 2
            assert r.stderr.splitlines()[1] in ("rule: corrupt-file", "rule: table-must-exist"), \
                r.stderr


def test_explain_says_why_a_column_reads_as_it_does(tmp_path: Path, spark: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``explain --column`` runs the read (the shared session: in-process) and answers from
    the same plan as explain_read, with the field's history; a wrong column is one line that
    says what the history knows."""
    import schemalab as sl
    from schemalab import cli

    wh = sl.Warehouse(tmp_path / "wh", spark=spark)  # type: ignore[arg-type]
    wh.sql((Path(__file__).parents[1] / "data" / "scenarios" / "flip226.sql").read_text())
    path = wh.table("T").path
    assert cli.main(["explain", path, "--column", "c", "--where", "a = 'a1'"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("default.T: why `c` reads as it does (snapshot 2, schema 2, "
                      "no cast.mode: Java Paimon's casts; rows where a = 'a1')")
    assert out[1] == "field 3 `c`: added in schema 2."
    assert out[2].startswith("The name `c` belonged to field 2 before (added in schema 0, "
                             "dropped in schema 1)")
    assert out[3:] == [
        "1 row, 1 NULL",
        "  files written under schema 0 (1 file): 1 row, 1 NULL; values NULL ×1",
        "    NULL: field 3 `c` did not exist when these files were written (schema 0)",
        "    these files' own `c` column is field 2, which was dropped in schema 1: the read "
        "ignores it"]
    assert cli.main(["explain", path, "--column", "c", "--snapshot", "1"]) == 0
    assert "  files written under schema 0 (1 file): 1 row, 0 NULL; values c1 ×1" in (
        capsys.readouterr().out)
    assert cli.main(["explain", path]) == 0
    assert capsys.readouterr().out.startswith("default.T: read of snapshot 2 in schema 2")
    wh.sql("ALTER TABLE T RENAME COLUMN b TO b2")
    assert cli.main(["explain", path, "--column", "b"]) == 1
    err = capsys.readouterr().err
    assert err.endswith("\nrule: column-must-exist\n") and err.count("\n") == 2
    assert ("`b` was renamed to `b2` in schema 3 (field 1; today "
                                     "`b2`)") in err


def test_multi_statement_errors_say_what_was_applied(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    r = run("sql", wh, "-e", "CREATE TABLE t (id INT, amount INT); "
                             "ALTER TABLE t RENAME COLUMN amount TO amount_cents; "
                             "ALTER TABLE t DROP COLUMN amount")
    assert r.returncode == 1
    assert r.stderr.strip() == (
        "error: Statement 3 of 3 (ALTER TABLE t DROP COLUMN amount) failed; statements 1, 2 "
        "were applied and stay: Column amount does not exist in the default.t table. "
        "`amount` was renamed to `amount_cents` in schema 1 (field 1; today `amount_cents`)."
        "\nrule: column-must-exist")
