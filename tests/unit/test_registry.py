"""The registries are the one list of systems: the dbt project's lists, models and macros agree with them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from duckrate.systems import CONTEST_SYSTEMS, REPLAY_SYSTEMS

REPO = Path(__file__).resolve().parents[2]
REPLAY_MODELS = REPO / "models" / "replays"


def project_vars() -> dict:
    return yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"]


def test_the_default_system_list_is_the_registry():
    assert project_vars()["duckrate_systems"] == [system.name for system in REPLAY_SYSTEMS]


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


def test_the_macros_default_system_list_is_the_registry():
    """macros/_systems.sql keeps dbt_project.yml's default for callers outside the package's var scope."""
    source = (REPO / "macros" / "_systems.sql").read_text()
    (listed,) = re.findall(r"var\('duckrate_systems', \[([^\]]*)\]\)", source)
    assert re.findall(r"'([^']+)'", listed) == [system.name for system in REPLAY_SYSTEMS]
