"""Bradley-Terry with partial pairing: Weng & Lin (2011), Algorithm 2, as ``openskill`` 6.2.0's
``BradleyTerryPart`` computes it.

The paper compares each team only with its neighbours in the ranking (q = i ± 1). openskill generalises
this to a sliding window: team i (in rank order, best first) is compared with every q ≠ i with
``|q - i| <= window_size`` (default 4), with the Bradley-Terry terms of Algorithm 1 (see
:mod:`duckrate.systems.weng_lin.bradley_terry_full`), and Ω_i, Δ_i are the **means** over those
comparisons rather than sums. There is no tie averaging in this model.
"""

from __future__ import annotations

from duckrate.core.jit import inlined_kernel
from duckrate.systems.weng_lin.bradley_terry_full import bradley_terry_pair
from duckrate.systems.weng_lin.common import setting_window, zeroed_terms


@inlined_kernel
def bradley_terry_part_terms(scratch, settings, rank, score, has_score, team_mu, team_sigma_sq):
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
            d_omega, d_delta = bradley_terry_pair(settings, i, q, rank, score, has_score, team_mu, team_sigma_sq)
            omega_sum += d_omega
            delta_sum += d_delta
            comparisons += 1
        if comparisons > 0:
            omega[i] = omega_sum / comparisons
            delta[i] = delta_sum / comparisons
    return omega, delta
