"""The registered systems as the shared tests see them, asked of the registry when a test module is collected
(so a system registered at run time is in them too), and their presets as test cases."""

from __future__ import annotations

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.protocol import System
from duckrate.core.registry import SYSTEMS


def two_player_systems() -> tuple[System, ...]:
    """Every registered system over two-player matches."""
    return SYSTEMS.of(MATCHES)


def contest_systems() -> tuple[System, ...]:
    """Every registered system over ranked contests."""
    return SYSTEMS.of(CONTEST_RESULTS)
