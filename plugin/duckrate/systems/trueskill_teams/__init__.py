"""TrueSkill with teams (Herbrich, Minka & Graepel, "TrueSkill™: A Bayesian Skill Rating System", NIPS 2006),
as the ``trueskill`` package 0.4.5 computes it with its scipy backend: numba kernels for one match.

- :mod:`.factor_graph`: the settings and :func:`rate_match`, the message passing of one match;
- :mod:`.quality`: :func:`match_quality`, the package's ``quality``;
- :mod:`.forecast`: :func:`predict_match` and :func:`predicted_ranks`, the model's forecast before a match.
"""

from duckrate.systems.trueskill_teams.factor_graph import (
    MAX_ROUNDS,
    MIN_DELTA,
    N_SETTINGS,
    S_BETA,
    S_DRAW_PROBABILITY,
    S_MIN_DELTA,
    S_TAU,
    rate_match,
    settings_array,
)
from duckrate.systems.trueskill_teams.forecast import predict_match, predicted_ranks
from duckrate.systems.trueskill_teams.quality import match_quality

__all__ = [
    "MAX_ROUNDS",
    "MIN_DELTA",
    "N_SETTINGS",
    "S_BETA",
    "S_DRAW_PROBABILITY",
    "S_MIN_DELTA",
    "S_TAU",
    "match_quality",
    "predict_match",
    "predicted_ranks",
    "rate_match",
    "settings_array",
]
