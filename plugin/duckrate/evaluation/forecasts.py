"""Each system's forecast between two players, as its replay computes ``expected_a`` before a match.

:data:`FORECASTS` holds one :class:`Forecast` per supported system: the parameters it takes (the replay's own
declarations, so names and defaults are the replay's) and the function that computes it for pairs of rows
of a :class:`~.forecast_players.Players` table, calling the system's kernels (no formula is written here).
Two kinds:

- from each player's rating and sd (``bt``, ``elo``, ``glicko``, ``glicko2``, ``trueskill``): any table that
  holds them, a replay's latest state, a leaderboard or a ``bt_fit`` result;
- from the saved state (``chance``: each posterior on the grid; ``elo2k``: the vector pairs; ``pairwise``:
  the pair counts), which no replay table or leaderboard holds: a ``<system>_state`` table, read by the
  forecast's ``read_state`` with the parameters the state was saved with (:mod:`.forecast_states`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter
from duckrate.core.scales import NATURAL_PER_POINT, natural_per_point
from duckrate.evaluation import forecast_states
from duckrate.evaluation.forecast_players import Players, Probabilities
from duckrate.systems import ELO, GLICKO, TRUESKILL
from duckrate.systems.elo import logistic_forecasts
from duckrate.systems.glicko_rules import glicko2_forecasts, glicko_forecasts
from duckrate.systems.trueskill import draw_margin, trueskill_forecasts


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
                "bt: side_a_advantage := true needs the home_advantage column of a bt_fit with "
                "home_advantage := true; this table has none"
            )
    rating_a, rating_b = _column(players, "rating", a), _column(players, "rating", b)
    return logistic_forecasts(rating_a, rating_b, advantage, NATURAL_PER_POINT), None


def _elo(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    rating_a, rating_b = _column(players, "rating", a), _column(players, "rating", b)
    advantage = np.full(a.shape[0], params["advantage"])
    return logistic_forecasts(rating_a, rating_b, advantage, natural_per_point(params["scale"])), None


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


FORECASTS: dict[str, Forecast] = {
    forecast.name: forecast
    for forecast in (
        Forecast("bt", (SIDE_A_ADVANTAGE,), _bt),
        Forecast("elo", _declared(ELO, "scale", "advantage"), _elo),
        Forecast("glicko", _declared(GLICKO, "c", "rd_max"), _glicko),
        Forecast("glicko2", (), _glicko2),
        Forecast("trueskill", _declared(TRUESKILL, "beta", "tau", "draw_probability"), _trueskill),
        Forecast("chance", (), forecast_states.chance, read_state=forecast_states.read_chance),
        Forecast("elo2k", (), forecast_states.elo2k, read_state=forecast_states.read_elo2k),
        Forecast("pairwise", (), forecast_states.pairwise, read_state=forecast_states.read_pairwise),
    )
}
"""Every supported forecast by system name (``bt``: a Bradley-Terry fit, ``bt_fit`` / ``bt_ratings``)."""
