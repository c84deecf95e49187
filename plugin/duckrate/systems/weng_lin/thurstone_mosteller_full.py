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

from duckrate.core.jit import inlined_kernel
from duckrate.systems.weng_lin.common import (
    S_BETA,
    S_MARGIN,
    margin_factor,
    setting_epsilon,
    square,
    v_and_w,
    vt_and_wt,
    zeroed_terms,
)


@inlined_kernel
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
        value, variance = v_and_w(delta_mu / divisor, t)
        return sigma_sq_to_c * value, scale * variance
    if rank[q] < rank[i]:
        value, variance = v_and_w(-delta_mu / divisor, t)
        return -sigma_sq_to_c * value, scale * variance
    value, variance = vt_and_wt(delta_mu / divisor, t)
    return sigma_sq_to_c * value, scale * variance


@inlined_kernel
def thurstone_mosteller_full_terms(scratch, settings, rank, score, has_score, team_mu, team_sigma_sq):
    """Ω and Δ of each team (in sorted order, best first; views of ``scratch``), summed over all other teams."""
    n = rank.shape[0]
    omega, delta = zeroed_terms(scratch, n)
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
