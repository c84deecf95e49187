"""A toy two-player system, defined only here, to show that registering an entry is all a new system needs:
a fixed-step logistic rating (Elo's update without K schedules) in plain NumPy, with its saved state, its
forecast, its grid and its presets. Not a rating system anyone should use."""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.parameters import Parameter, positive
from duckrate.core.priors import initial_states
from duckrate.core.protocol import Preset
from duckrate.systems.saved_state import EndState, StateField
from duckrate.systems.two_player import ReplaySystem, new_outputs

NAME = "toy_step"


def expected(rating_a: np.ndarray, rating_b: np.ndarray, spread: float) -> np.ndarray:
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / spread))


def _run(prepared, priors, params, start):
    rating = start.overlay(initial_states(prepared, priors, {"rating": params["initial"]}))["rating"]
    out = new_outputs(prepared.n_rows, has_sd=False)
    seq = start.seq.copy()
    for row in prepared.order:
        a, b, league = prepared.state_a[row], prepared.state_b[row], prepared.league[row]
        seq[league] += 1
        p = 1.0 / (1.0 + 10.0 ** ((rating[b] - rating[a]) / params["spread"]))
        step = params["step"] * (prepared.score[row] - p)
        out["seq"][row] = seq[league]
        out["expected_a"][row] = p
        out["rating_a_before"][row], out["rating_b_before"][row] = rating[a], rating[b]
        rating[a] += step
        rating[b] -= step
        out["rating_a_after"][row], out["rating_b_after"][row] = rating[a], rating[b]
    return out, EndState(player={"rating": rating})


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return expected(column(players, "rating", a), column(players, "rating", b), params["spread"]), None


TOY = ReplaySystem(
    name=NAME,
    summary="A toy fixed-step logistic rating (tests only).",
    parameters=(
        Parameter("step", 20.0, "a finite step > 0", positive),
        Parameter("initial", 1500.0, "a finite starting rating", math.isfinite),
        Parameter("spread", 400.0, "a finite spread > 0", positive),
    ),
    run=_run,
    has_sd=False,
    player_state=(StateField("rating"),),
    forecast=Forecast(_forecast, uses=("spread",)),
    grid={"step": [10.0, 30.0]},
    presets=(Preset(), Preset({"step": 35.0, "spread": 300.0})),
)


def naive_replay(matches, step: float = 20.0, initial: float = 1500.0, spread: float = 400.0) -> list[float]:
    """``expected_a`` of every match in (played_at, match_id) order, one league, by a plain loop."""
    rating: dict[str, float] = {}
    forecasts = []
    for row in matches.sort("played_at", "match_id").iter_rows(named=True):
        ra, rb = rating.get(row["player_a"], initial), rating.get(row["player_b"], initial)
        p = 1.0 / (1.0 + 10.0 ** ((rb - ra) / spread))
        forecasts.append(p)
        rating[row["player_a"]] = ra + step * (row["score_a"] - p)
        rating[row["player_b"]] = rb - step * (row["score_a"] - p)
    return forecasts
