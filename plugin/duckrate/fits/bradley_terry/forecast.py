"""A Bradley-Terry fit's forecast between two of its players (``win_probability`` over a ``bt_fit`` result,
as system ``'bt'``): σ(θ_a - θ_b + α) on the display scale, with the fitted home advantage α on side A when
asked."""

from __future__ import annotations

import numpy as np

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.parameters import Parameter
from duckrate.core.scales import NATURAL_PER_POINT
from duckrate.systems.elo import logistic_forecasts

SIDE_A_ADVANTAGE = Parameter(
    "side_a_advantage", False, "true to add the fitted home_advantage column to side A, or false", boolean=True
)


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    advantage = np.zeros(a.shape[0])
    if params["side_a_advantage"]:
        advantage = column(players, "home_advantage", a)
        if np.isnan(advantage).any():
            raise DuckrateInputError(
                "bt: side_a_advantage := true needs the home_advantage column of a bt_fit with "
                "home_advantage := true; this table has none"
            )
    rating_a, rating_b = column(players, "rating", a), column(players, "rating", b)
    return logistic_forecasts(rating_a, rating_b, advantage, NATURAL_PER_POINT), None


BT_FORECAST = Forecast(_forecast, parameters=(SIDE_A_ADVANTAGE,))
