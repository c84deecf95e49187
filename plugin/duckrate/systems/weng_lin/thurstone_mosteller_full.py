"""Thurstone-Mosteller with full pairing: Weng & Lin (2011), Algorithm 3, as ``openskill`` 6.2.0's
``ThurstoneMostellerFull`` computes it.

Every pair of teams (i, q) is a Thurstone-Mosteller comparison (Gaussian performance differences) with
``c_iq² = σ_i² + σ_q² + 2β²``, ``x = (θ_i - θ_q)/c_iq`` and the draw margin ``t = ε/c_iq`` (ε the model's
``epsilon``, default 0.1). Each team moves by

    Ω_i = Σ_{q ≠ i} σ_i²/c_iq · V,          Δ_i = Σ_{q ≠ i} γ_iq σ_i²/c_iq² · W,

with (V, W) = (V(x, t), W(x, t)) when i placed better, (-V(-x, t), W(-x, t)) when worse and
(Ṽ(x, t), W̃(x, t)) on a tie (Algorithm 3; the functions are in
:mod:`duckrate.systems.weng_lin.common`), and openskill's default ``γ_iq = σ_i/c_iq``. When the match is
given as scores and ``|s_i - s_q| > margin > 0``, x is divided by ``log1p(|s_i - s_q|/margin)`` (an
openskill addition). The tie averaging that follows is a no-op (see :mod:`duckrate.systems.weng_lin.common`).

This model is numerically fragile in openskill: V and W divide by Φ(x - t), which Python up to 3.13
evaluates as ``0.5 (1 + erf)`` and so to only a few digits in the lower tail (lopsided matches: big
team-size or rating gaps). A last-bit difference anywhere upstream (``x*x`` for openskill's ``x**2``
was enough) drifts a replay by more than 1e-9 within a few hundred matches; hence the bit-for-bit
care in :mod:`duckrate.systems.weng_lin.common` (its ``square`` and ``phi_major``).
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.weng_lin.common import (
    S_BETA,
    S_MARGIN,
    margin_factor,
    setting_epsilon,
    square,
    v,
    vt,
    w,
    wt,
)


@kernel
def thurstone_mosteller_pair(settings, i, q, rank, score, has_score, team_mu, team_sigma_sq, c_scale):
    """The pair (i, q)'s contributions to team i's Ω and Δ (Algorithm 3), with
    ``c_iq = c_scale · sqrt(σ_i² + σ_q² + 2β²)`` (c_scale is 1 for full pairing, 2 in openskill's partial)."""
    beta_squared = square(settings[S_BETA])
    epsilon = setting_epsilon(settings)
    c_iq = c_scale * math.sqrt(team_sigma_sq[i] + team_sigma_sq[q] + 2.0 * beta_squared)
    delta_mu = (team_mu[i] - team_mu[q]) / c_iq
    sigma_sq_to_c = team_sigma_sq[i] / c_iq
    gamma = math.sqrt(team_sigma_sq[i]) / c_iq
    divisor = margin_factor(score[i], score[q], settings[S_MARGIN]) if has_score else 1.0
    t = epsilon / c_iq
    scale = gamma * sigma_sq_to_c / c_iq
    if rank[q] > rank[i]:
        x = delta_mu / divisor
        return sigma_sq_to_c * v(x, t), scale * w(x, t)
    if rank[q] < rank[i]:
        x = -delta_mu / divisor
        return -sigma_sq_to_c * v(x, t), scale * w(x, t)
    x = delta_mu / divisor
    return sigma_sq_to_c * vt(x, t), scale * wt(x, t)


@kernel
def thurstone_mosteller_full_terms(settings, rank, score, has_score, team_mu, team_sigma_sq):
    """Ω and Δ of each team (arrays in sorted order, best first), summed over all other teams."""
    n = rank.shape[0]
    omega = np.zeros(n, dtype=np.float64)
    delta = np.zeros(n, dtype=np.float64)
    for i in range(n):
        for q in range(n):
            if q == i:
                continue
            d_omega, d_delta = thurstone_mosteller_pair(
                settings, i, q, rank, score, has_score, team_mu, team_sigma_sq, 1.0
            )
            omega[i] += d_omega
            delta[i] += d_delta
    return omega, delta
