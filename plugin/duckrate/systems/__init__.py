"""Sequential rating systems: one module per system (numba kernel + Polars wrapper)."""

from .chance import CHANCE, chance
from .elo import ELO, elo
from .glicko import GLICKO, glicko
from .glicko2 import GLICKO2, glicko2
from .trueskill import TRUESKILL, trueskill

REPLAY_SYSTEMS = (ELO, GLICKO, GLICKO2, TRUESKILL, CHANCE)

__all__ = ["CHANCE", "ELO", "GLICKO", "GLICKO2", "REPLAY_SYSTEMS", "TRUESKILL", "chance", "elo", "glicko", "glicko2", "trueskill"]
