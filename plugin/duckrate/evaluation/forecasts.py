"""Each system's forecast between two players, as its replay computes ``expected_a`` before a match.

:data:`FORECASTS` holds one :class:`Forecast` per supported system: the parameters it takes (the replay's own
declarations, so names and defaults are the replay's) and the function that computes it for pairs of rows
of a :class:`Players` table, calling the system's kernels (no formula is written here). Two kinds:

- from each player's rating and sd (``bt``, ``elo``, ``glicko``, ``glicko2``, ``trueskill``): any table that
  holds them, a replay's latest state, a leaderboard or a ``bt_fit`` result;
- from the saved state (``chance``: each posterior on the grid; ``elo2k``: the vector pairs; ``pairwise``:
  the pair counts), which no replay table or leaderboard holds: a ``<system>_state`` table, read by the
  forecast's ``read_state`` with the parameters the state was saved with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..errors import DuckrateInputError
from ..fits.bradley_terry.fit import NATURAL_PER_POINT
from ..parameters import Parameter
from ..systems import CHANCE, ELO, ELO2K, GLICKO, PAIRWISE, TRUESKILL
from ..systems._state import field_values
from ..systems.chance.forecast import chance_forecasts
from ..systems.chance.grid import DISPLAY_CENTER, DISPLAY_SCALE
from ..systems.elo import logistic_forecasts
from ..systems.elo2k import elo2k_forecasts, field_ratings
from ..systems.glicko_rules import glicko2_forecasts, glicko_forecasts
from ..systems.pairwise import field_ratings as pairwise_field_ratings
from ..systems.pairwise import pairwise_forecasts
from ..systems.trueskill import draw_margin, trueskill_forecasts

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


Probabilities = tuple[np.ndarray, np.ndarray | None]  # (expected_a, P(draw) or None), one value per pair


@dataclass(frozen=True)
class Forecast:
    """A system's forecast: ``compute(players, a_rows, b_rows, params)`` gives the pairs' expected scores
    (and draw probabilities where the model has draws); ``read_state(state, saved)``, for the forecasts
    that need the saved state, builds the :class:`Players` from a state table's rows (``kind``, ``league``,
    ``player``, ``opponent``, ``value``) and the parameters it was saved with."""

    name: str
    parameters: tuple[Parameter, ...]
    compute: Callable[[Players, np.ndarray, np.ndarray, dict], Probabilities]
    read_state: Callable[[pl.DataFrame, dict], Players] | None = None
    models_draws: bool = False

    @property
    def from_state(self) -> bool:
        return self.read_state is not None


def _declared(system, *names: str) -> tuple[Parameter, ...]:
    """The system's own declarations of these parameters (their defaults are the replay's)."""
    by_name = {p.name: p for p in system.parameters}
    return tuple(by_name[name] for name in names)


def _column(players: Players, name: str, rows: np.ndarray) -> np.ndarray:
    return players.frame[name].to_numpy()[rows].astype(np.float64)


# ---- from ratings and sds ---------------------------------------------------------------------------------

SIDE_A_ADVANTAGE = Parameter(
    "side_a_advantage", False, "true to add the fitted home_advantage column to side A, or false", boolean=True
)


def _bt(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Bradley-Terry's σ(θ_a - θ_b + α) on the display scale (the Elo logistic with scale 400)."""
    advantage = np.zeros(a.shape[0])
    if params["side_a_advantage"]:
        advantage = _column(players, "home_advantage", a)
        if np.isnan(advantage).any():
            raise DuckrateInputError(
                "win_probability: side_a_advantage := true needs the home_advantage column of a bt_fit with "
                "home_advantage := true; this table has none"
            )
    rating = players.frame["rating"].to_numpy().astype(np.float64)
    return logistic_forecasts(rating[a], rating[b], advantage, NATURAL_PER_POINT), None


def _elo(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    rating = players.frame["rating"].to_numpy().astype(np.float64)
    advantage = np.full(a.shape[0], params["advantage"])
    return logistic_forecasts(rating[a], rating[b], advantage, math.log(10.0) / params["scale"]), None


def _glicko(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    r, rd = _column(players, "rating", a), _column(players, "sd", a)
    return glicko_forecasts(
        r, rd, _column(players, "rating", b), _column(players, "sd", b), params["c"], params["rd_max"]
    ), None


def _glicko2(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    r, rd = _column(players, "rating", a), _column(players, "sd", a)
    return glicko2_forecasts(r, rd, _column(players, "rating", b), _column(players, "sd", b)), None


def _trueskill(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    epsilon = draw_margin(params["draw_probability"], params["beta"])
    mu_a, sigma_a = _column(players, "rating", a), _column(players, "sd", a)
    mu_b, sigma_b = _column(players, "rating", b), _column(players, "sd", b)
    return trueskill_forecasts(mu_a, sigma_a, mu_b, sigma_b, params["beta"], params["tau"], epsilon)


# ---- from a saved state -----------------------------------------------------------------------------------


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


def _read_chance(state: pl.DataFrame, saved: dict) -> Players:
    players = _rows(state, "player")
    values = field_values(players["value"], CHANCE.player_state, saved, "player")
    rating = DISPLAY_CENTER + DISPLAY_SCALE * values["mean"]  # the replay's display scale
    return Players(_frame(players, rating, DISPLAY_SCALE * values["sd"]), {"rho": values["rho"]}, saved=saved)


def _chance(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return chance_forecasts(players.vectors["rho"], a, b, players.saved), None


def _read_elo2k(state: pl.DataFrame, saved: dict) -> Players:
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
        saved["scale"] / math.log(10.0),
    )
    return Players(_frame(players, rating, None), {"u": u, "v": v}, saved=saved)


def _elo2k(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return elo2k_forecasts(players.vectors["u"], players.vectors["v"], a, b), None


def _read_pairwise(state: pl.DataFrame, saved: dict) -> Players:
    """Ratings as the replay reports them against the league's whole field; the pair rows (saved once per
    pair, the lower name as ``player``) in both directions: (league, a, b, wins of a, games)."""
    players = _rows(state, "player")
    values = field_values(players["value"], PAIRWISE.player_state, saved, "player")
    league, fields = _league_fields(players, state, PAIRWISE, saved)
    rating = pairwise_field_ratings(
        values["logit_sum"],
        fields["players"][league].astype(np.int64),
        saved["initial"],
        saved["scale"] / math.log(10.0),
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


PAIR_COUNTS = {"league": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "wins_a": pl.Float64, "games": pl.Float64}


def _pairwise(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Each pair's counts (a pair that never met has none: P = ½)."""
    names = players.frame.select("league", "player")
    queries = pl.DataFrame(
        {"league": names["league"].gather(a), "a": names["player"].gather(a), "b": names["player"].gather(b)}
    ).with_row_index("query")
    counts = (
        queries.join(players.pairs, on=["league", "a", "b"], how="left", nulls_equal=True)
        .sort("query")
        .select(pl.col("wins_a").fill_null(0.0), pl.col("games").fill_null(0.0))
    )
    return pairwise_forecasts(
        counts["wins_a"].to_numpy(), counts["games"].to_numpy(), players.saved["prior_games"]
    ), None


FORECASTS: dict[str, Forecast] = {
    forecast.name: forecast
    for forecast in (
        Forecast("bt", (SIDE_A_ADVANTAGE,), _bt),
        Forecast("elo", _declared(ELO, "scale", "advantage"), _elo),
        Forecast("glicko", _declared(GLICKO, "c", "rd_max"), _glicko),
        Forecast("glicko2", (), _glicko2),
        Forecast("trueskill", _declared(TRUESKILL, "beta", "tau", "draw_probability"), _trueskill, models_draws=True),
        Forecast("chance", (), _chance, read_state=_read_chance),
        Forecast("elo2k", (), _elo2k, read_state=_read_elo2k),
        Forecast("pairwise", (), _pairwise, read_state=_read_pairwise),
    )
}
"""Every supported forecast by system name (``bt``: a Bradley-Terry fit, ``bt_fit`` / ``bt_ratings``)."""

STATE_SYSTEMS = {"chance": CHANCE, "elo2k": ELO2K, "pairwise": PAIRWISE}
"""The replay systems of the forecasts that read a saved state, by name."""
