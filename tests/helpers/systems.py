"""The registered systems as the shared tests see them, asked of the registry when a test module is collected
(so a system registered at run time is in them too), and their presets as test cases."""

from __future__ import annotations

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.protocol import Preset, System
from duckrate.core.registry import SYSTEMS
from duckrate.core.teams import TEAM_RESULTS


def two_player_systems() -> tuple[System, ...]:
    """Every registered system over two-player matches."""
    return SYSTEMS.of(MATCHES)


def contest_systems() -> tuple[System, ...]:
    """Every registered system over ranked contests."""
    return SYSTEMS.of(CONTEST_RESULTS)


def team_systems() -> tuple[System, ...]:
    """Every registered system over team matches."""
    return SYSTEMS.of(TEAM_RESULTS)


def preset_cases(systems, with_priors: bool = True, with_periods: bool = True) -> list[tuple[str, System, Preset]]:
    """``(id, system, preset)`` for every preset of ``systems`` (ids ``<name>-<i>``, the preset's index on
    its entry); without the presets that need a priors table or a period column when asked."""
    return [
        (f"{system.name}-{i}", system, preset)
        for system in systems
        for i, preset in enumerate(system.presets)
        if (with_priors or preset.priors is None) and (with_periods or not preset.period_column)
    ]


def sql_arguments(params) -> str:
    """A preset's parameters as a macro's named arguments (``, k := 20, variant := 'gaussian'``)."""
    return "".join(f", {name} := {value!r}" for name, value in params.items())


def incremental_preset(system: System) -> Preset:
    """The preset an incremental build runs a system with: its last one that needs neither a priors table nor
    a period column and continues its saved state (the richest options the plain input takes); for a system
    none of whose presets continues (a whole-history replay, which replays in full), its last plain one."""
    plain = [p for p in system.presets if p.priors is None and not p.period_column]
    return ([p for p in plain if p.resumable] or plain)[-1]
