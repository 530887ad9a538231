"""The schemalab command, run as a user would run it (DDL needs no JVM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
                                "(table default.t)")
    r = run("sql", wh, "-e", "ALTER TABLE t FROBNICATE")
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
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
            assert r.stderr.startswith(f"error: {path}") and r.stderr.count("\n") == 1
