"""The registries are the one list of systems: the dbt project's lists, models and macros agree with them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers.replay_cases import python_defaults
from helpers.systems import contest_systems, team_systems, two_player_systems

import duckrate
from duckrate.registry import FITS, MARTS, TESTS
from duckrate.tools.generate import generated_files

REPO = Path(__file__).resolve().parents[2]
REPLAY_MODELS = REPO / "models" / "replays"


def project_vars() -> dict:
    return yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"]


def test_the_default_system_lists_are_every_registered_system():
    """dbt_project.yml leaves the lists null, so the generated macros' lists (the registries) apply."""
    assert project_vars()["duckrate_systems"] is None
    assert project_vars()["duckrate_contest_systems"] is None
    assert project_vars()["duckrate_team_systems"] is None


def test_every_registered_system_has_its_replay_model():
    for system in (*two_player_systems(), *contest_systems(), *team_systems()):
        model = REPLAY_MODELS / f"replay_{system.name}.sql"
        assert model.is_file(), f"{system.name} is registered but has no dbt model {model.relative_to(REPO)}"
        assert f"duckrate_system='{system.name}'" in model.read_text(), model.name


def test_every_replay_model_is_a_registered_system():
    registered = {system.name for system in (*two_player_systems(), *contest_systems(), *team_systems())}
    for model in REPLAY_MODELS.glob("replay_*.sql"):
        name = model.stem.removeprefix("replay_")
        assert name in registered, f"{model.relative_to(REPO)} names {name!r}, which no registry holds"


def test_every_registered_system_is_a_python_function_of_the_package():
    for system in (*two_player_systems(), *contest_systems(), *team_systems()):
        assert system.name in duckrate.__all__, system.name
        assert callable(getattr(duckrate, system.name)), system.name


def test_every_registered_system_has_a_summary():
    """The summary is the description of its dbt model and its section of docs/reference.md."""
    for system in (*two_player_systems(), *contest_systems(), *team_systems()):
        assert system.summary.strip(), system.name


@pytest.mark.parametrize("path, text", generated_files().items(), ids=lambda value: str(value)[:40])
def test_generated_files_are_current(path, text):
    """docs/reference.md and the dbt macros listing the systems are what `python -m duckrate.cli generate` writes
    from the registries today (run it when this fails)."""
    assert (REPO / path).read_text() == text


@pytest.mark.parametrize(
    "entry",
    [*two_player_systems(), *contest_systems(), *team_systems(), *FITS, *TESTS, *MARTS],
    ids=lambda entry: entry.name,
)
def test_python_functions_take_the_registry_defaults(entry):
    """Each Python function's signature repeats its registry entry's parameters and defaults (for help() and
    editors); this pins the two together."""
    skip = ("matches", "results", "replay", "priors", "state", "chunk_size")
    assert python_defaults(getattr(duckrate, entry.name), skip) == {p.name: p.default for p in entry.parameters}


def test_every_dbt_project_here_lists_only_registered_systems():
    """The system lists of the dbt projects in this repository (the package, the demo, the test projects)
    name registered systems only."""
    two_player = {system.name for system in two_player_systems()}
    contest = {system.name for system in contest_systems()}
    team = {system.name for system in team_systems()}
    for path in REPO.glob("**/dbt_project.yml"):
        if any(part.startswith(".venv") for part in path.parts) or "dbt_packages" in path.parts:  # .venv-oldest too
            continue
        variables = yaml.safe_load(path.read_text()).get("vars") or {}
        assert set(variables.get("duckrate_systems") or []) <= two_player, path
        assert set(variables.get("duckrate_contest_systems") or []) <= contest, path
        assert set(variables.get("duckrate_team_systems") or []) <= team, path
