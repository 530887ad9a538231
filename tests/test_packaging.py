"""The wheel holds every package: pyproject lists them by hand (widgets/ is mapped into
schemalab.widgets), so a package added under src/ must be listed too."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_under_src_is_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT / "src").parts)
             for p in (ROOT / "src").rglob("__init__.py")}
    assert found <= listed, f"not in pyproject's packages: {sorted(found - listed)}"
    assert listed - found == {"schemalab.widgets"}
    assert config["package-dir"]["schemalab.widgets"] == "widgets"
