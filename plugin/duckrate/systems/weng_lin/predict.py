"""Forecasts before a Weng-Lin match, as ``openskill`` 6.2.0's ``predict_win``, ``predict_draw`` and
``predict_rank``.

The five openskill models share these three methods word for word (checked in 6.2.0: the model classes
differ only in their update), so one set of kernels serves every model code. They use the ratings as they
are, without the dynamics τ, and the team ratings θ_i = Σ μ, σ_i² = Σ σ² with the ``balance`` weights
when that setting is on (:func:`duckrate.systems.weng_lin.common.team_ratings`). With
``c_ij = sqrt(2β² + σ_i² + σ_j²)`` and ``P_ij = Φ((θ_i - θ_j)/c_ij)``, the pairwise probability that i
beats j under Gaussian performances (a Thurstone-Mosteller pair, as in Weng & Lin (2011)):

* ``predict_win``: for two teams ``[P_01, 1 - P_01]``; for more, the mean over j of P_ij, normalised to
  sum to 1 (openskill's generalisation of Ibstedt et al. to n teams);
* ``predict_draw``: the mean over the pairs i < j of ``Φ((m - θ_i + θ_j)/c_ij) - Φ((θ_j - θ_i - m)/c_ij)``
  with the draw margin ``m = √N · β · Φ⁻¹((1 + 1/N)/2)``, N the number of players of the match;
* ``predict_rank``: the probabilities of ``predict_win``'s n-team formula (also for two teams, where they
  are ``P_01/(P_01 + P_10)`` and ``P_10/(P_01 + P_10)``: equal to ``predict_win``'s up to rounding, not bit
  for bit), and the competition ranks of those probabilities, highest first (exactly equal
  probabilities share a rank, the next rank skips).
"""

from __future__ import annotations

import math

from duckrate.core.borrowed import borrowed_row
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.systems.weng_lin.common import (
    S_BETA,
    phi_major,
    phi_major_inverse,
    scratch_team_ratings,
    square,
)
from duckrate.systems.weng_lin.scratch import (
    TEAM_FORECAST_MU,
    TEAM_FORECAST_ORDER,
    TEAM_FORECAST_SIGMA_SQ,
    TEAM_PROBABILITY,
    match_scratch,
)


@inlined_kernel
def _teams(scratch, settings, mu, sigma, team_bounds):
    """The teams' θ and σ² as the forecasts see them (no τ; ``balance`` applied), in ``scratch``."""
    return scratch_team_ratings(scratch, settings, mu, sigma, team_bounds, TEAM_FORECAST_MU, TEAM_FORECAST_SIGMA_SQ)


@inlined_kernel
def _mean_pairwise_wins(settings, team_mu, team_sigma_sq, out):
    """out[i] = the mean over j ≠ i of Φ((θ_i - θ_j)/sqrt(2β² + σ_i² + σ_j²)), normalised to sum 1."""
    n = team_mu.shape[0]
    two_beta_squared = 2.0 * square(settings[S_BETA])
    total = 0.0
    for i in range(n):
        summed = 0.0
        for j in range(n):
            if j != i:
                c = math.sqrt(two_beta_squared + team_sigma_sq[i] + team_sigma_sq[j])
                summed += phi_major((team_mu[i] - team_mu[j]) / c)
        out[i] = summed / (n - 1)
        total += out[i]
    for i in range(n):
        out[i] = out[i] / total


@inlined_kernel
def _win(settings, team_mu, team_sigma_sq, out):
    """``predict_win`` from the team ratings."""
    if team_mu.shape[0] == 2:
        two_beta_squared = 2.0 * square(settings[S_BETA])
        c = math.sqrt(two_beta_squared + team_sigma_sq[0] + team_sigma_sq[1])
        p = phi_major((team_mu[0] - team_mu[1]) / c)
        out[0] = p
        out[1] = 1.0 - p
        return
    _mean_pairwise_wins(settings, team_mu, team_sigma_sq, out)


@inlined_kernel
def _draw_margin(settings, players, margins):
    """√N · β · Φ⁻¹((1 + 1/N)/2) for N ``players``, kept in ``margins[N]`` once computed."""
    if math.isnan(margins[players]):
        draw_probability = 1.0 / players
        margins[players] = math.sqrt(players) * settings[S_BETA] * phi_major_inverse((1.0 + draw_probability) / 2.0)
    return margins[players]


@inlined_kernel
def _draw(settings, team_mu, team_sigma_sq, draw_margin):
    """``predict_draw`` from the team ratings and the match's draw margin."""
    n = team_mu.shape[0]
    two_beta_squared = 2.0 * square(settings[S_BETA])
    summed = 0.0
    pairs = 0
    for i in range(n):
        for j in range(i + 1, n):
            c = math.sqrt(two_beta_squared + team_sigma_sq[i] + team_sigma_sq[j])
            summed += phi_major((draw_margin - team_mu[i] + team_mu[j]) / c) - phi_major(
                (team_mu[j] - team_mu[i] - draw_margin) / c
            )
            pairs += 1
    return summed / pairs


@inlined_kernel
def _rank(settings, team_mu, team_sigma_sq, out_rank, out_probability, order):
    """``predict_rank`` from the team ratings; ``order`` (int64, one per team) is scratch."""
    _mean_pairwise_wins(settings, team_mu, team_sigma_sq, out_probability)
    n = team_mu.shape[0]
    # stable sort, highest probability first (Python's sorted(..., reverse=True))
    for i in range(n):
        k = i
        while k > 0 and out_probability[order[k - 1]] < out_probability[i]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
    current = 1
    for k in range(n):
        if k > 0 and out_probability[order[k]] < out_probability[order[k - 1]]:
            current = k + 1
        out_rank[order[k]] = current


@kernel
def _scratch_for(mu, team_bounds):
    return match_scratch(mu.shape[0], team_bounds.shape[0] - 1)


# The public forecasts below allocate a scratch and hand it to a kernel that is not inlined: the scratch
# then lives for that whole call, which the borrowed views of it (:mod:`duckrate.core.borrowed`) require.


@kernel
def _win_with(scratch, settings, mu, sigma, team_bounds, out):
    team_mu, team_sigma_sq = _teams(scratch, settings, mu, sigma, team_bounds)
    _win(settings, team_mu, team_sigma_sq, out)


@kernel
def _draw_with(scratch, settings, mu, sigma, team_bounds):
    team_mu, team_sigma_sq = _teams(scratch, settings, mu, sigma, team_bounds)
    return _draw(settings, team_mu, team_sigma_sq, _draw_margin(settings, mu.shape[0], scratch[4]))


@kernel
def _rank_with(scratch, settings, mu, sigma, team_bounds, out_rank, out_probability):
    team_mu, team_sigma_sq = _teams(scratch, settings, mu, sigma, team_bounds)
    order = borrowed_row(scratch[3], TEAM_FORECAST_ORDER, team_mu.shape[0])
    _rank(settings, team_mu, team_sigma_sq, out_rank, out_probability, order)


@kernel
def predict_win(settings, mu, sigma, team_bounds, out):
    """Each team's probability of winning into ``out`` (float64[n_teams]), as openskill's ``predict_win``."""
    _win_with(_scratch_for(mu, team_bounds), settings, mu, sigma, team_bounds, out)


@kernel
def predict_draw(settings, mu, sigma, team_bounds):
    """The probability of a draw, as openskill's ``predict_draw``."""
    return _draw_with(_scratch_for(mu, team_bounds), settings, mu, sigma, team_bounds)


@kernel
def predict_rank(settings, mu, sigma, team_bounds, out_rank, out_probability):
    """openskill's ``predict_rank``: the predicted rank of each team into ``out_rank`` (int64[n_teams], 1 is
    best, competition ranks of the probabilities) and its probability into ``out_probability``."""
    _rank_with(_scratch_for(mu, team_bounds), settings, mu, sigma, team_bounds, out_rank, out_probability)


@kernel
def predict_match(model, settings, mu, sigma, team_bounds, out_p_win, out_rank):
    """The forecasts of one match before it: ``predict_win`` into ``out_p_win`` (float64[n_teams]), the
    ranks of ``predict_rank`` into ``out_rank`` (int64[n_teams]); returns ``predict_draw``. Teams in the
    order given. ``model`` is any model code: openskill's forecasts are the same for all five."""
    return predict_match_in(_scratch_for(mu, team_bounds), settings, mu, sigma, team_bounds, out_p_win, out_rank)


@kernel
def predict_match_in(scratch, settings, mu, sigma, team_bounds, out_p_win, out_rank):
    """:func:`predict_match` with its working arrays in ``scratch`` (:func:`.scratch.match_scratch`, for
    at least this match's rows and teams, its draw margins for one β): the team ratings computed once for
    the three forecasts; allocates nothing. Not inlined, as :func:`.rate.rate_match_in`."""
    team_mu, team_sigma_sq = _teams(scratch, settings, mu, sigma, team_bounds)
    _win(settings, team_mu, team_sigma_sq, out_p_win)
    n = team_mu.shape[0]
    team_floats, team_ints = scratch[2], scratch[3]
    _rank(
        settings,
        team_mu,
        team_sigma_sq,
        out_rank,
        borrowed_row(team_floats, TEAM_PROBABILITY, n),
        borrowed_row(team_ints, TEAM_FORECAST_ORDER, n),
    )
    return _draw(settings, team_mu, team_sigma_sq, _draw_margin(settings, mu.shape[0], scratch[4]))
