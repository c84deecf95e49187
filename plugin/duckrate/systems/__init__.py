"""Sequential rating systems: one module per system (numba kernel + Polars wrapper)."""

from .chance import CHANCE, chance
from .elo import ELO, elo
from .elo2k import ELO2K, elo2k
from .glicko import GLICKO, glicko
from .glicko2 import GLICKO2, glicko2
from .pairwise import PAIRWISE, pairwise
from .trueskill import TRUESKILL, trueskill

REPLAY_SYSTEMS = (ELO, GLICKO, GLICKO2, TRUESKILL, CHANCE, ELO2K, PAIRWISE)

__all__ = [
    "CHANCE", "ELO", "ELO2K", "GLICKO", "GLICKO2", "PAIRWISE", "REPLAY_SYSTEMS", "TRUESKILL",
    "chance", "elo", "elo2k", "glicko", "glicko2", "pairwise", "trueskill",
]
