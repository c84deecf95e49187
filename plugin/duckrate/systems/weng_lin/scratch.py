"""The scratch arrays of one Weng-Lin match: allocated once per kernel call (:func:`match_scratch`) and reused
match after match, so rating a match allocates nothing.

A scratch is a tuple ``(row_floats, row_ints, team_floats, team_ints, draw_margins)``: 2-D arrays whose
rows (the ``ROW_*`` and ``TEAM_*`` indices below) are the per-player and per-team buffers the steps of a
match fill, each step taking the first n (or k, k + 1) entries of its buffer; ``draw_margins[n]`` caches
``predict_draw``'s margin for a match of n players (NaN until first needed), which depends only on n and β,
fixed for one kernel call.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel

# Per player (float64): the ratings gathered before the match, after it, the σ after τ, the normalised
# weights, and the ordinals the team sums sort by.
ROW_MU, ROW_SIGMA, ROW_WEIGHT, ROW_NEW_MU, ROW_NEW_SIGMA, ROW_SIGMA_TAU, ROW_WEIGHTS, ROW_ORDINAL = range(8)
N_ROW_FLOATS = 8
# Per player (int64): the input row of each, and the order the team sums take them in.
ROW_INPUT, ROW_ORDER = range(2)
N_ROW_INTS = 2
# Per team (float64): the forecast's outputs and team ratings, then the update's ranks, scores, team
# ratings (given and sorted order), Ω, Δ and Plackett-Luce's strengths and sums.
(
    TEAM_P_WIN,
    TEAM_PROBABILITY,
    TEAM_FORECAST_MU,
    TEAM_FORECAST_SIGMA_SQ,
    TEAM_GIVEN_RANK,
    TEAM_RANK,
    TEAM_SCORE,
    TEAM_MU,
    TEAM_SIGMA_SQ,
    TEAM_MU_SORTED,
    TEAM_SIGMA_SQ_SORTED,
    TEAM_OMEGA,
    TEAM_DELTA,
    TEAM_STRENGTH,
    TEAM_SUM_Q,
) = range(15)
N_TEAM_FLOATS = 15
# Per team (int64): the teams' row offsets (k + 1 entries), the predicted ranks, the sorted order of the
# update, the forecast's sort and Plackett-Luce's tie counts.
TEAM_BOUNDS, TEAM_PREDICTED, TEAM_ORDER, TEAM_FORECAST_ORDER, TEAM_TIED = range(5)
N_TEAM_INTS = 5


@kernel
def match_scratch(max_rows, max_teams):
    """A scratch for matches of at most ``max_rows`` players in at most ``max_teams`` teams."""
    return (
        np.empty((N_ROW_FLOATS, max(max_rows, 1)), dtype=np.float64),
        np.empty((N_ROW_INTS, max(max_rows, 1)), dtype=np.int64),
        np.empty((N_TEAM_FLOATS, max_teams + 1), dtype=np.float64),
        np.empty((N_TEAM_INTS, max_teams + 1), dtype=np.int64),
        np.full(max_rows + 1, np.nan, dtype=np.float64),
    )
