"""Sequential rating systems: one module per system (numba kernel + Polars wrapper)."""

from .elo import ELO, elo
from .glicko import GLICKO, glicko
from .glicko2 import GLICKO2, glicko2
from .trueskill import TRUESKILL, trueskill

REPLAY_SYSTEMS = (ELO, GLICKO, GLICKO2, TRUESKILL)

__all__ = ["ELO", "GLICKO", "GLICKO2", "REPLAY_SYSTEMS", "TRUESKILL", "elo", "glicko", "glicko2", "trueskill"]
