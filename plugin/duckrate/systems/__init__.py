"""Sequential rating systems: one module per system (numba kernel + Polars wrapper)."""

from .elo import ELO, elo

REPLAY_SYSTEMS = (ELO,)

__all__ = ["ELO", "REPLAY_SYSTEMS", "elo"]
