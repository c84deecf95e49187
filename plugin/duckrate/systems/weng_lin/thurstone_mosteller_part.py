"""Thurstone-Mosteller with partial pairing: Weng & Lin (2011), Algorithm 3 restricted to partial pairs
(the pairing of Algorithm 2), as ``openskill`` 6.2.0's ``ThurstoneMostellerPart`` computes it.

Like :mod:`duckrate.systems.weng_lin.bradley_terry_part`, team i (in rank order, best first) is compared
with every q ≠ i with ``|q - i| <= window_size`` (default 4) and Ω_i, Δ_i are the means over those
comparisons, with the Thurstone-Mosteller terms of
:mod:`duckrate.systems.weng_lin.thurstone_mosteller_full`. Two differences from the full-pairing model,
both openskill's and kept for agreement: ``c_iq = 2·sqrt(σ_i² + σ_q² + 2β²)`` (twice the full model's, so
also t = ε/c_iq and γ_iq halve), and a team gains (Ω and Δ multiplied by the player weight) only when
Ω > 0 rather than Ω >= 0. There is no tie averaging in this model.
"""

from __future__ import annotations

from duckrate.core.jit import inlined_kernel
from duckrate.systems.weng_lin.common import setting_window, zeroed_terms
from duckrate.systems.weng_lin.thurstone_mosteller_full import thurstone_mosteller_pair


@inlined_kernel
def thurstone_mosteller_part_terms(scratch, settings, rank, score, has_score, team_mu, team_sigma_sq):
    """Ω and Δ of each team (in sorted order, best first; views of ``scratch``), averaged over the window's pairs."""
    n = rank.shape[0]
    window = setting_window(settings)
    omega, delta = zeroed_terms(scratch, n)
    for i in range(n):
        omega_sum = 0.0
        delta_sum = 0.0
        comparisons = 0
        for q in range(max(0, i - window), min(n, i + window + 1)):
            if q == i:
                continue
            d_omega, d_delta = thurstone_mosteller_pair(
                settings, i, q, rank, score, has_score, team_mu, team_sigma_sq, 2.0
            )
            omega_sum += d_omega
            delta_sum += d_delta
            comparisons += 1
        if comparisons > 0:
            omega[i] = omega_sum / comparisons
            delta[i] = delta_sum / comparisons
    return omega, delta
