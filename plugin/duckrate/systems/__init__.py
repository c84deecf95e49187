"""Sequential rating systems: one module per system (numba kernel + Polars wrapper)."""

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

# The registries: every two-player system (over matches) and every contest system (over ranked results).
REPLAY_SYSTEMS = (ELO, GLICKO, GLICKO2, TRUESKILL, CHANCE, ELO2K, PAIRWISE)
CONTEST_SYSTEMS = (ELO_MMR, CODEFORCES, TOPCODER, TRUESKILL_CONTEST, GLICKO_CONTEST, BAR)

__all__ = [
    "BAR",
    "CHANCE",
    "CODEFORCES",
    "CONTEST_SYSTEMS",
    "ELO",
    "ELO2K",
    "ELO_MMR",
    "GLICKO",
    "GLICKO2",
    "GLICKO_CONTEST",
    "PAIRWISE",
    "REPLAY_SYSTEMS",
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
