"""A system's knowledge lives on its registry entry: its quoted name appears in no hand-written file but its
own module, the registry lines (``duckrate/systems/__init__.py``, and ``duckrate/fits/__init__.py`` for the
replays built on a fit) and its dbt model. Everything else asks the registry (the generated files are written
from it by ``python -m duckrate.cli generate``)."""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

from duckrate.core.registry import SYSTEMS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugin" / "duckrate"
REGISTRY_LINES = {PACKAGE / "systems" / "__init__.py", PACKAGE / "fits" / "__init__.py"}
GENERATED = {
    ROOT / "macros" / "_systems.sql",
    ROOT / "macros" / "_contest_systems.sql",
    ROOT / "macros" / "_team_systems.sql",
    ROOT / "models" / "replays" / "replays.yml",
    PACKAGE / "__init__.py",
}


def hand_written_files() -> list[Path]:
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "macros").rglob("*.sql"), *(ROOT / "models").rglob("*.sql")]
    files += [*(ROOT / "models").rglob("*.yml"), ROOT / "dbt_project.yml"]
    return sorted(path for path in files if path not in GENERATED)


@cache
def python_strings(text: str) -> tuple[str, ...]:
    """The string constants of a Python file's text, docstrings aside (they may name systems in examples)."""
    tree = ast.parse(text)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return tuple(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    )


@cache
def sql_text(text: str) -> str:
    """A SQL, Jinja or yml file's text without its comments (``{# ... #}``, ``-- ...``, ``# ...`` in yml)."""
    text = re.sub(r"\{#.*?#\}", "", text, flags=re.S)
    return re.sub(r"(--|^\s*#).*$", "", text, flags=re.M)


def quotes_name(path: Path, name: str) -> bool:
    if path.suffix == ".py":
        return name in python_strings(path.read_text())
    return re.search(rf"""(['"]){re.escape(name)}\1""", sql_text(path.read_text())) is not None


def own_files(system) -> set[Path]:
    """The system's module (its whole subpackage for a big system), the registry lines and its dbt model."""
    module = Path(inspect.getfile(system.run)).resolve()
    own = set(module.parent.rglob("*.py")) if module.parent != PACKAGE / "systems" else {module}
    return own | REGISTRY_LINES | {ROOT / "models" / "replays" / f"replay_{system.name}.sql"}


@pytest.mark.parametrize("system", list(SYSTEMS), ids=lambda system: system.name)
def test_a_systems_name_is_quoted_only_in_its_own_files(system):
    elsewhere = [
        str(path.relative_to(ROOT))
        for path in hand_written_files()
        if path not in own_files(system) and quotes_name(path, system.name)
    ]
    assert not elsewhere, f"{system.name!r} quoted in {elsewhere}: put that knowledge on its registry entry"


def test_the_check_sees_a_quoted_name(tmp_path):
    """The check itself can fail: a name in code is found, in a docstring or a comment it is not."""
    module = tmp_path / "m.py"
    module.write_text('"""Say \'elo\'."""\nTABLE = {"elo": 1}\n')
    assert quotes_name(module, "elo")
    module.write_text('"""Say \'elo\'."""\n')
    assert not quotes_name(module, "elo")
    macro = tmp_path / "m.sql"
    macro.write_text("{# e.g. 'elo' #}\nselect 1 -- 'elo'\n")
    assert not quotes_name(macro, "elo")
    macro.write_text("{% set s = 'elo' %}\n")
    assert quotes_name(macro, "elo")
