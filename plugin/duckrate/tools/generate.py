"""The files generated from the registries (:mod:`duckrate.registry`): the reference page, the dbt
macros that list the systems, the yml of their replay models, the team systems' replay models and the
package's exports of the system functions. ``python -m duckrate.cli generate`` writes them into a checkout; a test fails
when one in the repository differs from what this module gives."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.teams import TEAM_RESULTS
from duckrate.registry import SYSTEMS
from duckrate.tools.reference import reference_markdown
from duckrate.tools.replay_models import replays_yml, team_replay_model

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


_PACKAGE_INIT = Path(__file__).resolve().parent.parent / "__init__.py"
_BLOCK = re.compile(r"(# generated \((?P<what>[^)]*)\)[^\n]*\n)(?P<body>.*?)(# end generated)", re.S)


#: The packages that define system functions, in the order of their layers (a system built on a fit, such as
#: the whole-history replays, lives with its fit).
_FUNCTION_PACKAGES = ("duckrate.systems", "duckrate.fits")


def package_init(text: str) -> str:
    """``duckrate/__init__.py`` with its generated blocks rewritten from the registry: every system's Python
    function imported by name from its package (``duckrate.elo``, visible to editors) and listed in
    ``__all__``."""
    names = sorted(system.name for system in (*SYSTEMS, *SYSTEMS.aliases()))
    imports = {}
    for package in map(importlib.import_module, _FUNCTION_PACKAGES):
        defined = [name for name in names if hasattr(package, name)]
        names = [name for name in names if name not in defined]
        if defined:
            listed = "".join(f"    {name},\n" for name in defined)
            imports[package.__name__] = f"from {package.__name__} import (\n{listed})\n"
    if names:
        raise ValueError(f"no package among {', '.join(_FUNCTION_PACKAGES)} defines the function of {names}")
    quoted = "".join(f'    "{name}",\n' for name in sorted(system.name for system in (*SYSTEMS, *SYSTEMS.aliases())))
    bodies = {
        "system functions": "".join(imports[name] for name in sorted(imports)) + "\n",
        "their names": f"__all__ += [\n{quoted}]\n",
    }
    return _BLOCK.sub(lambda m: m.group(1) + bodies[m.group("what")] + m.group(4), text)


def generated_files() -> dict[str, str]:
    """Each generated file's path in the repository and its text."""
    return {
        "plugin/duckrate/__init__.py": package_init(_PACKAGE_INIT.read_text()),
        "docs/reference.md": reference_markdown(),
        "macros/_systems.sql": _systems_macro(
            "_systems",
            "duckrate_systems",
            "The two-player replays that are built and feed the marts",
            SYSTEMS.of(MATCHES),
        ),
        "macros/_contest_systems.sql": _systems_macro(
            "_contest_systems",
            "duckrate_contest_systems",
            "The contest replays that are built and feed the contest marts",
            SYSTEMS.of(CONTEST_RESULTS),
        ),
        "macros/_team_systems.sql": _systems_macro(
            "_team_systems",
            "duckrate_team_systems",
            "The team replays that are built",
            SYSTEMS.of(TEAM_RESULTS),
        ),
        "models/replays/replays.yml": replays_yml(),
        **{
            f"models/replays/replay_{system.name}.sql": team_replay_model(system) for system in SYSTEMS.of(TEAM_RESULTS)
        },
    }
