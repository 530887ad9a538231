"""``schemalab serve`` without a browser: what it refuses to serve and how it starts Voilà
(the served page itself is tests/browser/test_serve_browser.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemalab import cli
from schemalab.errors import SchemaLabError
from schemalab.serve import check_target, voila_command, write_notebook


def test_serve_refuses_what_is_neither_a_table_nor_a_warehouse(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SchemaLabError, match="no such table or warehouse") as e:
        check_target(str(tmp_path / "missing"))
    assert e.value.rule == "serve-target"
    (tmp_path / "empty").mkdir()
    assert cli.main(["serve", str(tmp_path / "empty"), "--port", "1"]) == 1
    err = capsys.readouterr().err
    assert "neither a table" in err and "rule: serve-target" in err
    table = tmp_path / "wh" / "default.db" / "t"
    (table / "schema").mkdir(parents=True)
    assert check_target(str(tmp_path / "wh")) == (tmp_path / "wh").resolve()
    assert check_target(str(table)) == table.resolve()


def test_the_served_notebook_is_one_cell_and_voila_runs_it_locked_down(tmp_path: Path) -> None:
    target = tmp_path / "t's \"table\""
    nb = write_notebook(tmp_path, target, allow_reads=False)
    cells = json.loads(nb.read_text())["cells"]
    assert len(cells) == 1
    # the path is a Python string literal, whatever its quotes
    call = cells[0]["source"].splitlines()[-1]
    assert call == f"explorer_page({json.dumps(str(target))}, allow_reads=False)"
    assert eval(call.removeprefix("explorer_page(").split(", allow")[0]) == str(target)
    cmd = voila_command(nb, 8999)
    assert cmd[cmd.index("-m") + 1] == "voila" and str(nb) in cmd
    for flag in ("--Voila.ip=127.0.0.1", "--strip_sources=True", "--show_tracebacks=False",
                 "--VoilaConfiguration.file_allowlist=[]", "--no-browser", "--port=8999"):
        assert flag in cmd
