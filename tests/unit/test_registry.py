"""The registries are the one list of systems: the dbt project's lists, models and macros agree with them."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import yaml

import duckrate
from duckrate.reference import reference_markdown
from duckrate.registry import CONTEST_SYSTEMS, FITS, MARTS, REPLAY_SYSTEMS, TESTS

REPO = Path(__file__).resolve().parents[2]
REPLAY_MODELS = REPO / "models" / "replays"


def project_vars() -> dict:
    return yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"]


def test_the_default_system_lists_are_the_registries():
    assert project_vars()["duckrate_systems"] == [system.name for system in REPLAY_SYSTEMS]
    assert project_vars()["duckrate_contest_systems"] == [system.name for system in CONTEST_SYSTEMS]


def test_every_registered_system_has_its_replay_model():
    for system in (*REPLAY_SYSTEMS, *CONTEST_SYSTEMS):
        model = REPLAY_MODELS / f"replay_{system.name}.sql"
        assert model.is_file(), f"{system.name} is registered but has no dbt model {model.relative_to(REPO)}"
        assert f"duckrate_system='{system.name}'" in model.read_text(), model.name


def test_every_replay_model_is_a_registered_system():
    registered = {system.name for system in (*REPLAY_SYSTEMS, *CONTEST_SYSTEMS)}
    for model in REPLAY_MODELS.glob("replay_*.sql"):
        name = model.stem.removeprefix("replay_")
        assert name in registered, f"{model.relative_to(REPO)} names {name!r}, which no registry holds"


@pytest.mark.parametrize(
    "macro, var, registry",
    [
        ("_systems", "duckrate_systems", REPLAY_SYSTEMS),
        ("_contest_systems", "duckrate_contest_systems", CONTEST_SYSTEMS),
    ],
)
def test_the_macros_default_system_lists_are_the_registries(macro, var, registry):
    """The macros keep dbt_project.yml's defaults for callers outside the package's var scope."""
    source = (REPO / "macros" / f"{macro}.sql").read_text()
    (listed,) = re.findall(rf"var\('{var}', \[([^\]]*)\]\)", source)
    assert re.findall(r"'([^']+)'", listed) == [system.name for system in registry]


def test_the_reference_page_is_generated_from_the_registries():
    """docs/reference.md is what `python -m duckrate.cli reference` writes today (regenerate it when this fails)."""
    assert (REPO / "docs" / "reference.md").read_text() == reference_markdown()


def python_defaults(function, skip=("matches", "results", "replay", "priors", "state", "chunk_size")) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if name not in skip and p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize(
    "entry", [*REPLAY_SYSTEMS, *CONTEST_SYSTEMS, *FITS, *TESTS, *MARTS], ids=lambda entry: entry.name
)
def test_python_functions_take_the_registry_defaults(entry):
    """Each Python function's signature repeats its registry entry's parameters and defaults (for help() and
    editors); this pins the two together."""
    assert python_defaults(getattr(duckrate, entry.name)) == {p.name: p.default for p in entry.parameters}
