"""The layout's rules, checked on the source (AST only: nothing is imported or run).

- no import cycle among schemalab's modules, counting every import: module level,
  ``if TYPE_CHECKING:`` and inside functions;
- the read engine (``engine/``) imports no table format: formats plan into it; neither do
  the other format-neutral layers (``format.py``, types, schema, explain, history, codecs,
  render, widgets), and the two formats import nothing of each other;
- the core packages do not import ``render/``: presentation is attached at the edge;
- no ``_private`` name is imported from another module;
- modules <= 600 lines and functions <= 80 lines in ``src/`` and ``widgets/``.

What breaks a rule today is listed below by name, and the lists only shrink: an entry that
no longer breaks its rule fails the test until it is removed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source roots → the package each maps onto (widgets/ is schemalab.widgets)
ROOTS = {ROOT / "src" / "schemalab": "schemalab", ROOT / "widgets": "schemalab.widgets"}
FORMATS = ("schemalab.paimon", "schemalab.iceberg")
#: what knows no table format (the facades, the warehouse and the CLI do)
NEUTRAL = ("schemalab.engine", "schemalab.format", "schemalab.forms", "schemalab.types",
           "schemalab.schema", "schemalab.explain", "schemalab.history", "schemalab.codecs",
           "schemalab.render", "schemalab.widgets")
#: packages that hold values and logic, not presentation
CORE = ("schemalab.types", "schemalab.schema", "schemalab.paimon", "schemalab.iceberg",
        "schemalab.engine", "schemalab.history", "schemalab.explain", "schemalab.codecs",
        "schemalab.sql")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

#: functions longer than MAX_FUNCTION_LINES today ("module:function"); shrink only
LONG_FUNCTIONS: set[str] = set()
#: modules longer than MAX_MODULE_LINES today; shrink only
LONG_MODULES: set[str] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for root, package in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _trees() -> Iterator[tuple[str, Path, ast.Module]]:
    for name, path in MODULES.items():
        yield name, path, TREES[name]


def _known(name: str) -> str | None:
    """The schemalab module ``name`` is, or is inside of (``a.b.func`` → ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import in ``tree``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (target := _known(alias.name)) is not None:
                    yield target, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in MODULES else _known(base)
                if target is not None and target != module:
                    yield target, "" if target == full else alias.name, node.lineno


GRAPH = {m: sorted({t for t, _, _ in _imports(m, p, tree)}) for m, p, tree in _trees()}


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_every_kind_of_import() -> None:
    # the checks below are only as good as the graph: it must hold the TYPE_CHECKING and
    # in-function imports too (table.py imports pyspark's types under TYPE_CHECKING and
    # warehouse.py imports primary-key rules inside a function)
    assert "schemalab.format" in GRAPH["schemalab.table"]
    assert "schemalab.paimon.primary_key" in GRAPH["schemalab.warehouse"]
    assert "schemalab.render.attach" in GRAPH["schemalab"]
    assert "schemalab.forms" in GRAPH["schemalab.schema.table_schema"]
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_the_engine_imports_no_table_format() -> None:
    bad = [f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("schemalab.engine")
           for t in ts if t.startswith(FORMATS)]
    assert bad == []


def test_format_neutral_layers_import_no_format() -> None:
    bad = [f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith(NEUTRAL)
           for t in ts if t.startswith(FORMATS)]
    assert bad == []


def test_the_formats_are_peers() -> None:
    paimon, iceberg = FORMATS
    bad = [f"{m} -> {t}" for m, ts in GRAPH.items() for t in ts
           if (m.startswith(paimon) and t.startswith(iceberg))
           or (m.startswith(iceberg) and t.startswith(paimon))]
    assert bad == []


def test_core_packages_do_not_import_render() -> None:
    bad = [f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith(CORE)
           for t in ts if t.startswith("schemalab.render")]
    assert bad == []


def test_no_private_name_is_imported_from_another_module() -> None:
    bad = [f"{m}:{line} imports {target}.{name}" for m, path, tree in _trees()
           for target, name, line in _imports(m, path, tree)
           if name.startswith("_") and not name.startswith("__")]
    assert bad == []


def _long_functions() -> set[str]:
    out = set()
    for m, _, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    out.add(f"{m}:{node.name}")
    return out


def test_functions_are_at_most_80_lines() -> None:
    assert _long_functions() == LONG_FUNCTIONS


def test_modules_are_at_most_600_lines() -> None:
    long = {m for m, path in MODULES.items()
            if len(path.read_text().splitlines()) > MAX_MODULE_LINES}
    assert long == LONG_MODULES


@pytest.mark.parametrize("package", sorted({m.rpartition(".")[0] for m in MODULES
                                            if m.count(".") > 1}))
def test_every_package_has_an_init(package: str) -> None:
    assert package in MODULES, f"{package} has no __init__.py (pyproject lists packages)"
