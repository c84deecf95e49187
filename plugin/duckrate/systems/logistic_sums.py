"""Sums of logistic cdfs over a contest's participants, exactly and through one Chebyshev fit per contest.

For participants with centres μ_j and scales δ̄_j (F_j(x) = 1/(1 + exp(-(x - μ_j)/δ̄_j)))::

    G(x) = Σ_j F_j(x)/δ̄_j,   H(x) = Σ_j (1 - F_j(x))/δ̄_j

Both are shared by every participant of a contest, so a solve that needs them at many points (Elo-MMR's
phase 1, the Codeforces system's performances) fits them once: log G by a Chebyshev series on
``[a, median μ]`` and log H on ``[median μ, b]`` (relative accuracy: G and H span many orders of magnitude),
where ``G(a)`` and ``H(b)`` are at most a given level. The truncation error is bounded by the last
coefficients; a series whose tail exceeds the tolerance is refit with twice the nodes, up to 512.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.numerics import chebyshev_derivative, chebyshev_fit, chebyshev_value

SERIES_TOLERANCE = 1e-11  # the fits' bound on the relative error of G and H (every system that fits them)
EXACT_BELOW = 64  # contests this small are summed exactly: a fit costs more than it saves


@kernel
def logistic_cdf_pair(z):
    """(F, 1 - F) of the standard logistic at z, each with full relative precision."""
    if z >= 0.0:
        e = math.exp(-z)
        return 1.0 / (1.0 + e), e / (1.0 + e)
    e = math.exp(z)
    return e / (1.0 + e), 1.0 / (1.0 + e)


@kernel
def exact_sums(x, mu, dbar):
    """(G(x), H(x)) computed exactly."""
    g = 0.0
    h = 0.0
    for j in range(mu.shape[0]):
        f, c = logistic_cdf_pair((x - mu[j]) / dbar[j])
        g += f / dbar[j]
        h += c / dbar[j]
    return g, h


@kernel
def log_sum(x, mu, dbar, upper):
    """log G(x) (``upper`` False) or log H(x) (True), by log-sum-exp when the plain sum underflows."""
    g, h = exact_sums(x, mu, dbar)
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
def tighten(outer, inner, mu, dbar, level, upper):
    """A point between ``outer`` (where G, or H when ``upper``, is <= ``level``) and ``inner``, nearer
    ``inner``, where the sum is still <= ``level``: bisection on the exact sum (a shorter interval needs
    fewer Chebyshev nodes)."""
    for _ in range(30):
        middle = 0.5 * (outer + inner)
        g, h = exact_sums(middle, mu, dbar)
        if (h if upper else g) <= level:
            outer = middle
        else:
            inner = middle
        if abs(inner - outer) <= 1e-3 * (1.0 + abs(outer)):
            break
    return outer


@kernel
def _fit_side(mu, dbar, low, high, n_nodes, upper):
    values = np.empty(n_nodes)
    half = 0.5 * (high - low)
    middle = 0.5 * (high + low)
    for i in range(n_nodes):
        values[i] = log_sum(middle + half * math.cos(math.pi * (i + 0.5) / n_nodes), mu, dbar, upper)
    return chebyshev_fit(values)


@kernel
def _tail(coefficients):
    m = coefficients.shape[0]
    return abs(coefficients[m - 1]) + abs(coefficients[m - 2])


@kernel
def fit_logistic_sums(mu, dbar, level_scale, tolerance):
    """Chebyshev series of log G on ``[a, median μ]`` and of log H on ``[median μ, b]`` (the module
    docstring), with ``a`` and ``b`` where G, resp. H, is at most ``level_scale / max δ̄`` (below any value a
    caller solves for). Returns ``(ok, fit)``: ``ok``
    False when no series up to 512 nodes meets ``tolerance`` (a bound on the absolute error of log G and
    log H, i.e. their relative error); ``fit`` is what :func:`logistic_sum_at` reads."""
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
    level = level_scale / widest
    # past this distance from the extreme centres every F_j (or 1 - F_j) is below level/total: F <= e^z
    reach = widest * math.log((1.0 / level_scale) * widest * total)
    a = tighten(low_mu - reach, low_mu, mu, dbar, level, False)
    b = tighten(high_mu + reach, high_mu, mu, dbar, level, True)
    middle = np.median(mu)
    n_nodes = 64
    ok = True
    while True:
        lower_series = _fit_side(mu, dbar, a, middle, n_nodes, False)
        upper_series = _fit_side(mu, dbar, middle, b, n_nodes, True)
        if _tail(lower_series) <= tolerance and _tail(upper_series) <= tolerance:
            break
        n_nodes *= 2
        if n_nodes > 512:
            ok = False
            break
    lower_scale = 2.0 / (middle - a) if middle > a else 0.0
    upper_scale = 2.0 / (b - middle) if b > middle else 0.0
    fit = (
        a,
        middle,
        b,
        lower_series,
        upper_series,
        chebyshev_derivative(lower_series),
        chebyshev_derivative(upper_series),
        lower_scale,
        upper_scale,
    )
    return ok, fit


@kernel
def logistic_sum_at(fit, x):
    """``(lower, value, slope)`` at x from :func:`fit_logistic_sums`: G(x) and G'(x) with ``lower`` True
    when x is at most the median μ, else H(x) and H'(x)."""
    a, middle, b, lower_series, upper_series, lower_slope, upper_slope, lower_scale, upper_scale = fit
    if x <= middle:
        t = (2.0 * x - a - middle) / (middle - a) if middle > a else 1.0
        value = math.exp(chebyshev_value(lower_series, t))
        return True, value, value * chebyshev_value(lower_slope, t) * lower_scale
    t = (2.0 * x - middle - b) / (b - middle)
    value = math.exp(chebyshev_value(upper_series, t))
    return False, value, value * chebyshev_value(upper_slope, t) * upper_scale


@kernel
def contest_sums_fit(mu, dbar, level_scale, tolerance):
    """``(exact, fit)`` for a contest's shared sums: the fit of :func:`fit_logistic_sums`, or ``exact`` True
    (the fit then a placeholder nobody reads) when the contest has fewer than ``EXACT_BELOW`` participants
    (no fit is computed: it would cost more than the exact sums) or no series meets ``tolerance``."""
    if mu.shape[0] < EXACT_BELOW:
        none = np.zeros(1)
        return True, (0.0, 0.0, 0.0, none, none, none, none, 0.0, 0.0)
    ok, fit = fit_logistic_sums(mu, dbar, level_scale, tolerance)
    return not ok, fit
