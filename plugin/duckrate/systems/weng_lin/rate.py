"""One Weng-Lin match, any of the five models: :func:`rate_match`, the entry point of the drivers."""

from __future__ import annotations

from duckrate.core.jit import kernel
from duckrate.systems.weng_lin.bradley_terry_full import bradley_terry_full_terms
from duckrate.systems.weng_lin.bradley_terry_part import bradley_terry_part_terms
from duckrate.systems.weng_lin.common import (
    BRADLEY_TERRY_FULL,
    BRADLEY_TERRY_PART,
    PLACKETT_LUCE,
    THURSTONE_MOSTELLER_FULL,
    THURSTONE_MOSTELLER_PART,
    finish_match,
    prepare_match,
    sorted_teams,
)
from duckrate.systems.weng_lin.plackett_luce import plackett_luce_terms
from duckrate.systems.weng_lin.scratch import match_scratch
from duckrate.systems.weng_lin.thurstone_mosteller_full import thurstone_mosteller_full_terms
from duckrate.systems.weng_lin.thurstone_mosteller_part import thurstone_mosteller_part_terms


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
    rate_match_in(
        match_scratch(mu.shape[0], team_bounds.shape[0] - 1),
        model,
        settings,
        mu,
        sigma,
        team_bounds,
        team_rank,
        team_score,
        has_score,
        weight,
        use_weights,
        out_mu,
        out_sigma,
    )


@kernel
def rate_match_in(
    scratch,
    model,
    settings,
    mu,
    sigma,
    team_bounds,
    team_rank,
    team_score,
    has_score,
    weight,
    use_weights,
    out_mu,
    out_sigma,
):
    """:func:`rate_match` with its working arrays in ``scratch`` (:func:`.scratch.match_scratch`, for at
    least this match's rows and teams): allocates nothing. Not inlined, so a scratch handed in as a temporary
    lives through the call; the replay hands it borrowed arrays (:mod:`duckrate.core.borrowed`), whose
    reference counts cost nothing."""
    order, rank, score, sigma_tau, weights, team_mu, team_sigma_sq = prepare_match(
        scratch, settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights
    )
    mu_sorted, sigma_sq_sorted = sorted_teams(scratch, order, team_mu, team_sigma_sq)
    # each model's Ω and Δ per team; as openskill: Thurstone-Mosteller partial tests Ω > 0 (strict) where the
    # others test Ω >= 0, and the partial-pairing models skip the averaging of tied teams
    if model == PLACKETT_LUCE:
        omega, delta = plackett_luce_terms(scratch, settings, rank, score, has_score, mu_sorted, sigma_sq_sorted)
    elif model == BRADLEY_TERRY_FULL:
        omega, delta = bradley_terry_full_terms(scratch, settings, rank, score, has_score, mu_sorted, sigma_sq_sorted)
    elif model == BRADLEY_TERRY_PART:
        omega, delta = bradley_terry_part_terms(scratch, settings, rank, score, has_score, mu_sorted, sigma_sq_sorted)
    elif model == THURSTONE_MOSTELLER_FULL:
        omega, delta = thurstone_mosteller_full_terms(
            scratch, settings, rank, score, has_score, mu_sorted, sigma_sq_sorted
        )
    else:
        omega, delta = thurstone_mosteller_part_terms(
            scratch, settings, rank, score, has_score, mu_sorted, sigma_sq_sorted
        )
    strict = model == THURSTONE_MOSTELLER_PART
    average = model != BRADLEY_TERRY_PART and model != THURSTONE_MOSTELLER_PART
    finish_match(
        settings,
        mu,
        sigma,
        sigma_tau,
        weights,
        team_bounds,
        order,
        rank,
        team_sigma_sq,
        omega,
        delta,
        strict,
        average,
        out_mu,
        out_sigma,
    )
