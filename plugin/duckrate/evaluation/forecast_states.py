"""The forecasts that read a saved state (``<system>_state``, ``replay_<system>__state``): the grid system's
posteriors, Elo2k's vector pairs, Pairwise's pair counts. Each has a reader, from the state's rows and the
parameters it was saved with to :class:`~.forecast_players.Players` (ratings as the replay reports them, now),
and the forecast itself, calling the system's kernels."""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.scales import DISPLAY_CENTER, points_per_natural
from duckrate.evaluation.forecast_players import PAIR_COUNTS, PLAYER_COLUMNS, Players, Probabilities
from duckrate.systems import CHANCE, ELO2K, PAIRWISE
from duckrate.systems.chance.forecast import chance_forecasts
from duckrate.systems.chance.grid import DISPLAY_SCALE
from duckrate.systems.elo2k import elo2k_forecasts, field_ratings
from duckrate.systems.pairwise import field_ratings as pairwise_field_ratings
from duckrate.systems.pairwise import pairwise_forecasts
from duckrate.systems.saved_state import field_values


def _frame(player_rows: pl.DataFrame, rating: np.ndarray, sd: np.ndarray | None) -> pl.DataFrame:
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


def _rows(state: pl.DataFrame, kind: str) -> pl.DataFrame:
    return state.filter(pl.col("kind") == kind)


def _league_fields(players: pl.DataFrame, state: pl.DataFrame, system, saved: dict):
    """Each player row's index into the state's league rows, and those rows' fields."""
    leagues = _rows(state, "league")
    fields = field_values(leagues["value"], system.league_state, saved, "league")
    index = {name: i for i, name in enumerate(leagues["league"].to_list())}
    return np.array([index[name] for name in players["league"].to_list()], dtype=np.int64), fields


def read_chance(state: pl.DataFrame, saved: dict) -> Players:
    players = _rows(state, "player")
    values = field_values(players["value"], CHANCE.player_state, saved, "player")
    rating = DISPLAY_CENTER + DISPLAY_SCALE * values["mean"]  # the replay's display scale
    return Players(_frame(players, rating, DISPLAY_SCALE * values["sd"]), {"rho": values["rho"]}, saved=saved)


def chance(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return chance_forecasts(players.vectors["rho"], a, b, players.saved), None


def read_elo2k(state: pl.DataFrame, saved: dict) -> Players:
    players = _rows(state, "player")
    values = field_values(players["value"], ELO2K.player_state, saved, "player")
    league, fields = _league_fields(players, state, ELO2K, saved)
    u, v = np.ascontiguousarray(values["u"]), np.ascontiguousarray(values["v"])
    rating = field_ratings(
        u,
        v,
        league,
        np.ascontiguousarray(fields["sum_u"]),
        np.ascontiguousarray(fields["sum_v"]),
        fields["players"].astype(np.int64),
        saved["initial"],
        points_per_natural(saved["scale"]),
    )
    return Players(_frame(players, rating, None), {"u": u, "v": v}, saved=saved)


def elo2k(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return elo2k_forecasts(players.vectors["u"], players.vectors["v"], a, b), None


def read_pairwise(state: pl.DataFrame, saved: dict) -> Players:
    """Ratings as the replay reports them against the league's whole field; the pair rows (saved once per
    pair, the lower name as ``player``) in both directions: (league, a, b, wins of a, games)."""
    players = _rows(state, "player")
    values = field_values(players["value"], PAIRWISE.player_state, saved, "player")
    league, fields = _league_fields(players, state, PAIRWISE, saved)
    rating = pairwise_field_ratings(
        values["logit_sum"],
        fields["players"][league].astype(np.int64),
        saved["initial"],
        points_per_natural(saved["scale"]),
    )
    pairs = _rows(state, "pair")
    counts = field_values(pairs["value"], PAIRWISE.pair_state, saved, "pair")
    forward = pl.DataFrame(
        {
            "league": pairs["league"],
            "a": pairs["player"],
            "b": pairs["opponent"],
            "wins_a": counts["wins_player"],
            "games": counts["games"],
        },
        schema=PAIR_COUNTS,
    )
    backward = forward.select(
        "league", pl.col("b").alias("a"), pl.col("a").alias("b"), pl.Series("wins_a", counts["wins_opponent"]), "games"
    )
    return Players(_frame(players, rating, None), pairs=pl.concat([forward, backward]), saved=saved)


def pairwise(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Each pair's counts (a pair that never met has none: P = ½)."""
    names = players.frame.select("league", "player")
    queries = pl.DataFrame(
        {"league": names["league"].gather(a), "a": names["player"].gather(a), "b": names["player"].gather(b)}
    ).with_row_index("query")
    assert players.pairs is not None  # read_pairwise keeps them
    counts = (
        queries.join(players.pairs, on=["league", "a", "b"], how="left", nulls_equal=True)
        .sort("query")
        .select(pl.col("wins_a").fill_null(0.0), pl.col("games").fill_null(0.0))
    )
    return pairwise_forecasts(
        counts["wins_a"].to_numpy(), counts["games"].to_numpy(), players.saved["prior_games"]
    ), None
