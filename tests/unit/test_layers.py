"""The layers of ``duckrate``, read from the source's import statements (no module is imported).

The engines sit on top: ``duckrate.sql`` (DuckDB) and ``duckrate.spark`` (Spark) never import each other;
below them, ``core``, ``systems``, ``fits``, ``evaluation``, ``tuning`` and the engine-neutral mart
definitions (``marts``) import neither DuckDB nor PySpark, and the registry of every computation
(``registry.py``) does not import an engine's code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "plugin" / "duckrate"
BELOW_THE_ENGINES = ("core", "systems", "fits", "evaluation", "tuning", "marts")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (top level or inside a function)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules(*parts: str) -> list[Path]:
    root = PACKAGE.joinpath(*parts)
    return sorted(root.rglob("*.py")) if root.is_dir() else [root]


def _offending(paths: list[Path], forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for path in paths:
        bad = sorted(n for n in _imports(path) if any(n == f or n.startswith(f + ".") for f in forbidden))
        if bad:
            found[str(path.relative_to(PACKAGE))] = bad
    return found


@pytest.mark.parametrize("layer", BELOW_THE_ENGINES)
def test_the_layers_below_the_engines_import_no_engine(layer):
    assert _offending(_modules(layer), ("duckdb", "pyspark", "duckrate.sql", "duckrate.spark")) == {}


def test_the_registry_imports_no_engine():
    assert _offending(_modules("registry.py"), ("duckdb", "pyspark", "duckrate.sql", "duckrate.spark")) == {}


def test_the_engines_do_not_import_each_other():
    assert _offending(_modules("spark"), ("duckrate.sql", "duckdb")) == {}
    assert _offending(_modules("sql"), ("duckrate.spark", "pyspark")) == {}
