"""Bradley-Terry with full pairing: Weng & Lin (2011), Algorithm 1, as ``openskill`` 6.2.0's
``BradleyTerryFull`` computes it.

Every pair of teams (i, q) of a match is a Bradley-Terry comparison with ``c_iq² = σ_i² + σ_q² + 2β²`` and
``p_iq = 1/(1 + exp((θ_q - θ_i)/c_iq))`` (the paper's p̂_iq); the outcome s = 1 when i placed
better, 1/2 on a tie, 0 when worse. Each team moves by

    Ω_i = Σ_{q ≠ i} σ_i²/c_iq · (s - p_iq),     Δ_i = Σ_{q ≠ i} γ_iq σ_i²/c_iq² · p_iq (1 - p_iq)

(Algorithm 1), with openskill's default ``γ_iq = σ_i/c_iq`` (the paper's suggested γ). When the match is given as
scores and ``|s_i - s_q| > margin > 0``, ``θ_q - θ_i`` is divided by ``log1p(|s_i - s_q|/margin)`` inside
p_iq (an openskill addition, symmetric in who won). The tie averaging that follows is a no-op (see
:mod:`duckrate.systems.weng_lin.common`).
"""

from __future__ import annotations

import math

from duckrate.core.jit import inlined_kernel
from duckrate.systems.weng_lin.common import (
    S_BETA,
    S_MARGIN,
    margin_factor,
    square,
    zeroed_terms,
)


@inlined_kernel
def bradley_terry_pair(settings, i, q, rank, score, has_score, team_mu, team_sigma_sq):
    """The pair (i, q)'s contributions to team i's Ω and Δ (Algorithm 1)."""
    beta_squared = square(settings[S_BETA])
    divisor = margin_factor(score[i], score[q], settings[S_MARGIN]) if has_score else 1.0
    c_iq = math.sqrt(team_sigma_sq[i] + team_sigma_sq[q] + 2.0 * beta_squared)
    p_iq = 1.0 / (1.0 + math.exp(((team_mu[q] - team_mu[i]) / divisor) / c_iq))
    sigma_sq_to_c = team_sigma_sq[i] / c_iq
    s = 0.0
    if rank[q] > rank[i]:
        s = 1.0
    elif rank[q] == rank[i]:
        s = 0.5
    gamma = math.sqrt(team_sigma_sq[i]) / c_iq
    return sigma_sq_to_c * (s - p_iq), gamma * sigma_sq_to_c / c_iq * p_iq * (1.0 - p_iq)


@inlined_kernel
def bradley_terry_full_terms(scratch, settings, rank, score, has_score, team_mu, team_sigma_sq):
    """Ω and Δ of each team (in sorted order, best first; views of ``scratch``), summed over all other teams."""
    n = rank.shape[0]
    omega, delta = zeroed_terms(scratch, n)
    for i in range(n):
        for q in range(n):
            if q == i:
                continue
            d_omega, d_delta = bradley_terry_pair(settings, i, q, rank, score, has_score, team_mu, team_sigma_sq)
            omega[i] += d_omega
            delta[i] += d_delta
    return omega, delta
