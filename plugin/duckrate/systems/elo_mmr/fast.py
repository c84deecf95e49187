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

import math

import numpy as np

from ..._numba import kernel
from ..numerics import safeguarded_step
from .phase1 import logistic_cdf_pair


@kernel
def _exact_sums(x, mu, dbar):
    """(G(x), H(x)) computed exactly."""
    g = 0.0
    h = 0.0
    for j in range(mu.shape[0]):
        f, c = logistic_cdf_pair((x - mu[j]) / dbar[j])
        g += f / dbar[j]
        h += c / dbar[j]
    return g, h


@kernel
def _log_sum(x, mu, dbar, upper):
    """log G(x) (``upper`` False) or log H(x) (True), by log-sum-exp when the plain sum underflows."""
    g, h = _exact_sums(x, mu, dbar)
    value = h if upper else g
    if value > 1e-280:
        return math.log(value)
    best = -np.inf
    for j in range(mu.shape[0]):
        z = (x - mu[j]) / dbar[j]
        if upper:
            z = -z
        log_f = -math.log1p(math.exp(-z)) if z > 0 else z - math.log1p(math.exp(z))
        best = max(best, log_f - math.log(dbar[j]))
    total = 0.0
    for j in range(mu.shape[0]):
        z = (x - mu[j]) / dbar[j]
        if upper:
            z = -z
        log_f = -math.log1p(math.exp(-z)) if z > 0 else z - math.log1p(math.exp(z))
        total += math.exp(log_f - math.log(dbar[j]) - best)
    return best + math.log(total)


@kernel
def _tighten(outer, inner, mu, dbar, level, upper):
    """A point between ``outer`` (where G, or H when ``upper``, is <= ``level``) and ``inner``, nearer
    ``inner``, where the sum is still <= ``level``: bisection on the exact sum (a shorter interval needs
    fewer Chebyshev nodes)."""
    for _ in range(30):
        middle = 0.5 * (outer + inner)
        g, h = _exact_sums(middle, mu, dbar)
        if (h if upper else g) <= level:
            outer = middle
        else:
            inner = middle
        if abs(inner - outer) <= 1e-3 * (1.0 + abs(outer)):
            break
    return outer


@kernel
def chebyshev_fit(values):
    """Coefficients c (c_0 already halved) of the series Σ c_k T_k(t) interpolating ``values`` at the
    first-kind nodes t_i = cos(π(i + ½)/m)."""
    m = values.shape[0]
    coefficients = np.zeros(m)
    for i in range(m):
        t = math.cos(math.pi * (i + 0.5) / m)
        previous = 1.0
        current = t
        coefficients[0] += values[i]
        if m > 1:
            coefficients[1] += values[i] * t
        for k in range(2, m):
            nxt = 2.0 * t * current - previous
            coefficients[k] += values[i] * nxt
            previous = current
            current = nxt
    for k in range(m):
        coefficients[k] *= 2.0 / m
    coefficients[0] *= 0.5
    return coefficients


@kernel
def chebyshev_derivative(coefficients):
    """Coefficients of d/dt of Σ c_k T_k(t) (same convention, c_0 halved)."""
    m = coefficients.shape[0]
    out = np.zeros(m)
    if m < 2:
        return out
    # d_{k-1} = d_{k+1} + 2k c_k, then halve d_0
    upper = 0.0  # d_{k+1}
    current = 0.0  # d_k
    for k in range(m - 1, 0, -1):
        value = upper + 2.0 * k * coefficients[k]
        out[k - 1] = value
        upper = current
        current = value
    out[0] *= 0.5
    return out


@kernel
def chebyshev_value(coefficients, t):
    """Σ c_k T_k(t) by Clenshaw's recurrence."""
    b1 = 0.0
    b2 = 0.0
    for k in range(coefficients.shape[0] - 1, 0, -1):
        b0 = coefficients[k] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = b0
    return coefficients[0] + t * b1 - b2


@kernel
def _fit_side(mu, dbar, low, high, n_nodes, upper):
    values = np.empty(n_nodes)
    half = 0.5 * (high - low)
    middle = 0.5 * (high + low)
    for i in range(n_nodes):
        values[i] = _log_sum(middle + half * math.cos(math.pi * (i + 0.5) / n_nodes), mu, dbar, upper)
    return chebyshev_fit(values)


@kernel
def _tail(coefficients):
    m = coefficients.shape[0]
    return abs(coefficients[m - 1]) + abs(coefficients[m - 2])


@kernel
def performances_fast(mu, dbar, group_start, tolerance, out):
    """Phase 1 of one contest (logistic model) through the shared function G; ``out[g]`` receives tie
    group g's performance. Returns False when no series up to 512 nodes meets ``tolerance`` (bound on
    the absolute error of log G and log H, i.e. their relative error) or a bracket fails: the caller
    then uses the exact solve."""
    n = mu.shape[0]
    total = 0.0
    widest = 0.0
    low_mu = np.inf
    high_mu = -np.inf
    for j in range(n):
        total += 1.0 / dbar[j]
        widest = max(widest, dbar[j])
        low_mu = min(low_mu, mu[j])
        high_mu = max(high_mu, mu[j])
    reach = widest * math.log(4.0 * widest * total)
    a = _tighten(low_mu - reach, low_mu, mu, dbar, 0.25 / widest, False)
    b = _tighten(high_mu + reach, high_mu, mu, dbar, 0.25 / widest, True)
    middle = np.median(mu)
    n_nodes = 64
    while True:
        lower_series = _fit_side(mu, dbar, a, middle, n_nodes, False)
        upper_series = _fit_side(mu, dbar, middle, b, n_nodes, True)
        if _tail(lower_series) <= tolerance and _tail(upper_series) <= tolerance:
            break
        n_nodes *= 2
        if n_nodes > 512:
            return False
    lower_slope = chebyshev_derivative(lower_series)
    upper_slope = chebyshev_derivative(upper_series)
    lower_scale = 2.0 / (middle - a) if middle > a else 0.0
    upper_scale = 2.0 / (b - middle) if b > middle else 0.0

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
            if x <= middle:
                t = (2.0 * x - a - middle) / (middle - a) if middle > a else 1.0
                shared = math.exp(chebyshev_value(lower_series, t))
                q = below - shared - tie
                dq = -shared * chebyshev_value(lower_slope, t) * lower_scale - tie_slope
            else:
                t = (2.0 * x - middle - b) / (b - middle)
                shared = math.exp(chebyshev_value(upper_series, t))
                q = shared - above - tie
                dq = shared * chebyshev_value(upper_slope, t) * upper_scale - tie_slope
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
