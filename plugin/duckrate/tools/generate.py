"""The files generated from the registries (:mod:`duckrate.registry`): the reference page, the dbt
macros that list the systems and the yml of their replay models. ``python -m duckrate.cli generate`` writes them into a checkout; a test fails
when one in the repository differs from what this module gives."""

from __future__ import annotations

from duckrate.registry import CONTEST_SYSTEMS, REPLAY_SYSTEMS
from duckrate.tools.reference import reference_markdown
from duckrate.tools.replay_models import replays_yml

_SYSTEMS_MACRO = """{{#- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
  {what}: var('{var}'), or when it is null (the default) every registered one. -#}}
{{% macro {macro}() -%}}
  {{% set chosen = var('{var}', none) %}}
  {{{{ return([{names}] if chosen is none else chosen) }}}}
{{%- endmacro %}}
"""


def _systems_macro(macro: str, var: str, what: str, systems) -> str:
    names = ", ".join(f"'{system.name}'" for system in systems)
    return _SYSTEMS_MACRO.format(macro=macro, var=var, what=what, names=names)


def generated_files() -> dict[str, str]:
    """Each generated file's path in the repository and its text."""
    return {
        "docs/reference.md": reference_markdown(),
        "macros/_systems.sql": _systems_macro(
            "_systems", "duckrate_systems", "The two-player replays that are built and feed the marts", REPLAY_SYSTEMS
        ),
        "macros/_contest_systems.sql": _systems_macro(
            "_contest_systems",
            "duckrate_contest_systems",
            "The contest replays that are built and feed the contest marts",
            CONTEST_SYSTEMS,
        ),
        "models/replays/replays.yml": replays_yml(),
    }
