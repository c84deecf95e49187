"""One Weng-Lin match, any of the five models: :func:`rate_match`, the entry point of the drivers."""

from __future__ import annotations

from duckrate.core.jit import kernel
from duckrate.systems.weng_lin.bradley_terry_full import rate_bradley_terry_full
from duckrate.systems.weng_lin.bradley_terry_part import rate_bradley_terry_part
from duckrate.systems.weng_lin.common import (
    BRADLEY_TERRY_FULL,
    BRADLEY_TERRY_PART,
    PLACKETT_LUCE,
    THURSTONE_MOSTELLER_FULL,
)
from duckrate.systems.weng_lin.plackett_luce import rate_plackett_luce
from duckrate.systems.weng_lin.thurstone_mosteller_full import rate_thurstone_mosteller_full
from duckrate.systems.weng_lin.thurstone_mosteller_part import rate_thurstone_mosteller_part


@kernel
def rate_match(
    model, settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
):
    """Rate one match: each row's μ and σ after it into ``out_mu``, ``out_sigma``, equal to openskill
    6.2.0's ``Model(beta=…, kappa=…, tau=…, limit_sigma=…, balance=…, margin=…, weight_bounds=…)
    .rate(teams, ranks=… or scores=…, weights=…)``.

    ``model``: a model code (PLACKETT_LUCE, …). ``settings``: :func:`settings_array`'s vector. The rows are the
    players, each team's contiguous, ``team_bounds[t]:team_bounds[t + 1]`` for team t, with ``mu``,
    ``sigma`` before the match (before τ). ``team_rank``: the place of each team (smaller is better, ties
    equal), used when not ``has_score``; with ``has_score`` the ranks come from ``team_score`` (higher is
    better) and the margin applies, as openskill's ``scores=``. ``weight`` per row, used when
    ``use_weights`` (openskill's ``weights=``, normalised per team to the weight bounds unless they are NaN).
    Teams may come in any order (openskill sorts them by rank, stably, and so does this). Inputs are not
    validated: at least two teams of at least one player each, as openskill requires."""
    if model == PLACKETT_LUCE:
        rate_plackett_luce(
            settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
        )
    elif model == BRADLEY_TERRY_FULL:
        rate_bradley_terry_full(
            settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
        )
    elif model == BRADLEY_TERRY_PART:
        rate_bradley_terry_part(
            settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
        )
    elif model == THURSTONE_MOSTELLER_FULL:
        rate_thurstone_mosteller_full(
            settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
        )
    else:
        rate_thurstone_mosteller_part(
            settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights, out_mu, out_sigma
        )
