"""The house's rules, read from the code rather than remembered.

* The packages stand in layers, each importing only those below it (import-linter's
  contracts in pyproject.toml; ``compile`` never reaches ``adapt``: it returns needs).
* No import cycle between modules, counting the imports written inside functions.
* An import inside a function stays within its package (the command line's lazy loading
  of its subcommands excepted).
* No module takes another's private (``_name``) names.
* No module over about 800 lines without a reason written at its top (``Long module:``).
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "adaptive_client"
MAX_LINES = 800
# the command line loads each subcommand's modules when it runs (its start stays fast)
LAZY_LOADERS = {"adaptive_client.admin.cli"}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    names: tuple[str, ...]
    line: int
    in_function: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports() -> Iterator[Import]:
    """Every import of one of the package's modules, with where it is written."""
    known = modules()
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        in_function: set[int] = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(id(n) for n in ast.walk(fn) if n is not fn)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(name, path.name == "__init__.py", node)
                if not target.startswith("adaptive_client"):
                    continue
                for alias in node.names:  # `from pkg import module` imports the module
                    sub = f"{target}.{alias.name}"
                    imported = sub if sub in known else target
                    yield Import(
                        name, imported, (alias.name,), node.lineno, id(node) in in_function
                    )
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("adaptive_client"):
                        yield Import(name, alias.name, (), node.lineno, id(node) in in_function)


def package_of(module: str) -> str:
    """The concern a module belongs to: ``adaptive_client.compile`` for its modules; a
    top-level module is its own."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_layer_contracts_hold() -> None:
    """import-linter's contracts (pyproject.toml): lower layers never import higher ones,
    directly or through another module."""
    linter = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for imp in imports():
        if imp.importer in LAZY_LOADERS or imp.imported == imp.importer:
            continue
        graph[imp.importer].add(imp.imported)
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail("import cycle: " + " -> ".join(cycle.args[1]))


def test_function_imports_stay_in_their_package() -> None:
    crossing = [
        f"{imp.importer}:{imp.line} imports {imp.imported}"
        for imp in imports()
        if imp.in_function
        and imp.importer not in LAZY_LOADERS
        and package_of(imp.importer) != package_of(imp.imported)
    ]
    assert crossing == []


def test_no_private_names_taken_from_another_module() -> None:
    taken = [
        f"{imp.importer}:{imp.line} takes {imp.imported}.{name}"
        for imp in imports()
        for name in imp.names
        if name.startswith("_") and not name.startswith("__") and imp.imported != imp.importer
    ]
    assert taken == []


def test_long_modules_say_why() -> None:
    unexplained = []
    for name, path in modules().items():
        lines = path.read_text().splitlines()
        if len(lines) > MAX_LINES and not any("Long module:" in ln for ln in lines[:40]):
            unexplained.append(f"{name}: {len(lines)} lines")
    assert unexplained == []


def test_the_walk_sees_imports_inside_functions() -> None:
    """The checks read what they claim to: the command line's lazy imports of its
    subcommands are seen, as imports inside functions, and the cursor's imports of the
    compiled plan at the top of its module."""
    found = list(imports())
    assert any(imp.importer == "adaptive_client.admin.cli" and imp.in_function for imp in found)
    assert any(
        imp.importer == "adaptive_client.dbapi.cursor"
        and imp.imported == "adaptive_client.compile.plan"
        and not imp.in_function
        for imp in found
    )
