"""What the forecasts from a saved state share (the grid system, Elo2k, Pairwise): the state's rows of one
kind, each player's league row fields, and the :class:`~duckrate.core.forecast.Players` frame of ratings as
the replay reports them, now. Each system's reader and forecast live in its own module."""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.forecast import PLAYER_COLUMNS
from duckrate.systems.saved_state import field_values


def players_frame(player_rows: pl.DataFrame, rating: np.ndarray, sd: np.ndarray | None) -> pl.DataFrame:
    """:data:`~duckrate.core.forecast.PLAYER_COLUMNS` of the state's player rows with these ratings (and sds)."""
    return pl.DataFrame(
        {
            "league": player_rows["league"],
            "player": player_rows["player"],
            "rating": rating,
            "sd": sd if sd is not None else np.full(player_rows.height, np.nan),
            "home_advantage": np.full(player_rows.height, np.nan),
        },
        schema=PLAYER_COLUMNS,
    ).with_columns(pl.col("sd").fill_nan(None), pl.col("home_advantage").fill_nan(None))


def state_rows(state: pl.DataFrame, kind: str) -> pl.DataFrame:
    """The state's rows of ``kind`` (``player``, ``league``, ``pair``)."""
    return state.filter(pl.col("kind") == kind)


def league_fields(players: pl.DataFrame, state: pl.DataFrame, system, saved: dict):
    """Each player row's index into the state's league rows, and those rows' fields."""
    leagues = state_rows(state, "league")
    fields = field_values(leagues["value"], system.league_state, saved, "league")
    index = {name: i for i, name in enumerate(leagues["league"].to_list())}
    return np.array([index[name] for name in players["league"].to_list()], dtype=np.int64), fields
