"""Every example in the package's docstrings runs: each module whose docstrings carry
``>>>`` examples is a test here (examples that need a warehouse or Spark say ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import schemalab


def _modules_with_examples() -> list[str]:
    out = []
    for info in pkgutil.walk_packages(schemalab.__path__, "schemalab."):
        if info.name.startswith("schemalab.widgets"):
            continue  # imports ipywidgets; its examples, if any, run in test_widgets
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None:
            continue
        with open(spec.origin, encoding="utf-8") as fh:
            if ">>>" in fh.read():
                out.append(info.name)
    return sorted(out)


MODULES = _modules_with_examples()


def test_examples_are_found() -> None:
    # the discovery itself must not silently find nothing
    assert {"schemalab.types.parse", "schemalab.schema.apply",
            "schemalab.paimon.binaryrow"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
