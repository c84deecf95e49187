"""What a forecast reads: the players of a ratings table, one row per (league, player), with what the
forecasts from a saved state need besides (:mod:`.forecasts`, :mod:`.forecast_states`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

PLAYER_COLUMNS = {
    "league": pl.Utf8,
    "player": pl.Utf8,
    "rating": pl.Float64,
    "sd": pl.Float64,
    "home_advantage": pl.Float64,
}
"""The columns of :attr:`Players.frame`, one row per (league, player)."""


@dataclass(frozen=True)
class Players:
    """The players a forecast reads: ``frame`` (:data:`PLAYER_COLUMNS`), and for the forecasts from a saved
    state the per-row ``vectors`` (e.g. ``rho``: players x grid points), the ``pairs`` counts
    (:data:`PAIR_COUNTS`, both directions) and the parameters the state was ``saved`` with."""

    frame: pl.DataFrame
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    pairs: pl.DataFrame | None = None
    saved: dict = field(default_factory=dict)


PAIR_COUNTS = {"league": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "wins_a": pl.Float64, "games": pl.Float64}
"""A Pairwise state's counts, one row per pair and direction: the wins of ``a`` over ``b`` and their games."""

Probabilities = tuple[np.ndarray, np.ndarray | None]
"""A forecast's result: (expected_a, P(draw) or None when the model has no draws), one value per pair."""
