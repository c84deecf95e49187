"""Elo-MMR phase 1 for the logistic model in O(|P|·m) per contest instead of O(|P|²).

For the logistic model the tie-group form of ``Q`` (Section 3.1) splits into one function shared by
every player of the contest and a few exact terms::

    Q_g(p) = W_g - G(p) - T_g(p) = H(p) - B_g - T_g(p)
    G(p) = Σ_j F_j(p)/δ̄_j,   H(p) = Σ_j (1 - F_j(p))/δ̄_j,   T_g(p) = Σ_{j in group g} F_j(p)/δ̄_j
    W_g = Σ_{j tied with or below g} 1/δ̄_j,   B_g = Σ_{j above g} 1/δ̄_j

(``W_g - G = H - B_g``). G is approximated once per contest by a Chebyshev series of ``log G`` on
``[a, median μ]`` and H by one of ``log H`` on ``[median μ, b]`` (relative accuracy: G and H span many
orders of magnitude). No root lies outside ``[a, b]``: at a root ``G ≥ 1/(2 max δ̄)`` and ``H ≥ 1/(2 max δ̄)``
(each is at least half the tie group's weight), and ``G(a), H(b) ≤ 1/(4 max δ̄)`` by ``F ≤ e^z``. The
truncation error is bounded by the last coefficients; a series whose tail exceeds the tolerance is refit
with twice the nodes, and past 512 nodes the caller falls back to the exact solve. Each tie group's root
then costs a safeguarded Newton iteration of O(m + group size) per step, warm-started at the previous
group's root (performances fall with rank, Theorem 5.2).
"""

from __future__ import annotations

from duckrate.core.jit import kernel
from duckrate.systems.logistic_sums import fit_logistic_sums, logistic_cdf_pair, logistic_sum_at
from duckrate.systems.numerics import safeguarded_step


@kernel
def performances_fast(mu, dbar, group_start, tolerance, out):
    """Phase 1 of one contest (logistic model) through the shared function G; ``out[g]`` receives tie
    group g's performance. Returns False when no series up to 512 nodes meets ``tolerance`` (bound on
    the absolute error of log G and log H, i.e. their relative error) or a bracket fails: the caller
    then uses the exact solve."""
    total = 0.0
    for j in range(mu.shape[0]):
        total += 1.0 / dbar[j]
    ok, fit = fit_logistic_sums(mu, dbar, 0.25, tolerance)
    if not ok:
        return False
    a = fit[0]
    b = fit[2]

    n_groups = group_start.shape[0] - 1
    above = 0.0  # B_g
    guess = 0.5 * (a + b)
    for g in range(n_groups):
        first = group_start[g]
        stop = group_start[g + 1]
        below = total - above  # W_g
        low = a
        high = b
        x = min(max(guess, low), high)
        found = False
        for _ in range(200):
            tie = 0.0
            tie_slope = 0.0
            for j in range(first, stop):
                f, c = logistic_cdf_pair((x - mu[j]) / dbar[j])
                tie += f / dbar[j]
                tie_slope += f * c / (dbar[j] * dbar[j])
            lower, shared, shared_slope = logistic_sum_at(fit, x)
            if lower:
                q = below - shared - tie
                dq = -shared_slope - tie_slope
            else:
                q = shared - above - tie
                dq = shared_slope - tie_slope
            if q == 0.0:
                found = True
                break
            nxt, low, high, converged = safeguarded_step(x, q, dq, low, high, True)
            x = nxt
            if converged:
                found = True
                break
        if not found or x <= a or x >= b:
            return False
        out[g] = x
        guess = x
        for j in range(first, stop):
            above += 1.0 / dbar[j]
    return True
