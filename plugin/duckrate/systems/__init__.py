"""Sequential rating systems: one module per system (numba kernel, its registry entry, its Python function).

The registry lines: each system's entry added to :data:`duckrate.core.registry.SYSTEMS`, in the order the
docs, the dbt lists and the tests show them. Two-player systems (over ``matches``), contest systems (over
``contest_results``), then team systems (over ``team_results``).
"""

from duckrate.core.registry import SYSTEMS
from duckrate.systems.bar import BAR, bar
from duckrate.systems.chance import CHANCE, chance
from duckrate.systems.codeforces import CODEFORCES, codeforces
from duckrate.systems.elo import ELO, elo
from duckrate.systems.elo2k import ELO2K, elo2k
from duckrate.systems.elo_mmr import ELO_MMR, elo_mmr
from duckrate.systems.glicko import GLICKO, glicko
from duckrate.systems.glicko2 import GLICKO2, glicko2
from duckrate.systems.glicko_contest import GLICKO_CONTEST, glicko_contest
from duckrate.systems.pairwise import PAIRWISE, pairwise
from duckrate.systems.topcoder import TOPCODER, topcoder
from duckrate.systems.trueskill import TRUESKILL, trueskill
from duckrate.systems.trueskill_contest import TRUESKILL_CONTEST, trueskill_contest
from duckrate.systems.trueskill_teams.replay import TRUESKILL_TEAMS, trueskill_teams
from duckrate.systems.weng_lin.replay import (
    BRADLEY_TERRY_FULL,
    BRADLEY_TERRY_PART,
    PLACKETT_LUCE,
    THURSTONE_MOSTELLER_FULL,
    THURSTONE_MOSTELLER_PART,
    bradley_terry_full,
    bradley_terry_part,
    plackett_luce,
    thurstone_mosteller_full,
    thurstone_mosteller_part,
)

SYSTEMS.add(ELO)
SYSTEMS.add(GLICKO)
SYSTEMS.add(GLICKO2)
SYSTEMS.add(TRUESKILL)
SYSTEMS.add(CHANCE)
SYSTEMS.add(ELO2K)
SYSTEMS.add(PAIRWISE)
SYSTEMS.add(ELO_MMR)
SYSTEMS.add(CODEFORCES)
SYSTEMS.add(TOPCODER)
SYSTEMS.add(TRUESKILL_CONTEST)
SYSTEMS.add(GLICKO_CONTEST)
SYSTEMS.add(BAR)
SYSTEMS.add(PLACKETT_LUCE)
SYSTEMS.add(BRADLEY_TERRY_FULL)
SYSTEMS.add(BRADLEY_TERRY_PART)
SYSTEMS.add(THURSTONE_MOSTELLER_FULL)
SYSTEMS.add(THURSTONE_MOSTELLER_PART)
SYSTEMS.add(TRUESKILL_TEAMS)
# the name the public contract gives TrueSkill for teams (trueskill_team_replay, duckrate.trueskill_team)
SYSTEMS.alias("trueskill_team", "trueskill_teams")
trueskill_team = trueskill_teams

__all__ = [
    "TRUESKILL_TEAMS",
    "trueskill_team",
    "trueskill_teams",
    "thurstone_mosteller_part",
    "thurstone_mosteller_full",
    "plackett_luce",
    "bradley_terry_part",
    "bradley_terry_full",
    "THURSTONE_MOSTELLER_PART",
    "THURSTONE_MOSTELLER_FULL",
    "PLACKETT_LUCE",
    "BRADLEY_TERRY_PART",
    "BRADLEY_TERRY_FULL",
    "BAR",
    "CHANCE",
    "CODEFORCES",
    "ELO",
    "ELO2K",
    "ELO_MMR",
    "GLICKO",
    "GLICKO2",
    "GLICKO_CONTEST",
    "PAIRWISE",
    "SYSTEMS",
    "TOPCODER",
    "TRUESKILL",
    "TRUESKILL_CONTEST",
    "bar",
    "chance",
    "codeforces",
    "elo",
    "elo2k",
    "elo_mmr",
    "glicko",
    "glicko2",
    "glicko_contest",
    "pairwise",
    "topcoder",
    "trueskill",
    "trueskill_contest",
]
