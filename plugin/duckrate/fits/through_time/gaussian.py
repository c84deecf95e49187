"""The normal-distribution numerics of TrueSkill Through Time, as the ``trueskillthroughtime`` package has them.

TTT's game update (Dangauthier et al. 2007; Landfried & Mocskos, the game's likelihood with draws) truncates
the Gaussian of the performance difference ``d = p_winner - p_loser`` to ``d > margin`` (a win) or
``|d| <= margin`` (a draw) and matches its moments: ``mu' = mu + sigma v`` and ``sigma' = sigma sqrt(1 - w)``
with Herbrich's ``v`` and ``w`` functions (:func:`v_w`; TrueSkill, Herbrich, Minka & Graepel 2006, the truncated-Gaussian update).

The package computes ``erfc`` with the Numerical Recipes Chebyshev fit (relative error below 1.2e-7) and
its inverse with three Newton steps from a rational first guess. The same approximations are used here, in
the same order of operations, so that a fit agrees with the package to 1e-6 and better: with an exact
``erfc`` the estimates differ from the package's by up to ~1e-7 per game update, which adds up over a
history. Where the package divides zero by zero (a result more than ~37 sd from its expectation, where
``erfc`` underflows), the truncated moments come from their asymptotic series instead.
"""

from __future__ import annotations

import math

from duckrate.core.jit import inlined_kernel

SQRT2 = math.sqrt(2.0)
SQRT2PI = math.sqrt(2.0 * math.pi)
INV_SQRT2PI = SQRT2PI**-1


@inlined_kernel
def erfc(x):
    """The complementary error function as the package computes it (Numerical Recipes' ``erfcc``)."""
    z = abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    a = -0.82215223 + t * 0.17087277
    b = 1.48851587 + t * a
    c = -1.13520398 + t * b
    d = 0.27886807 + t * c
    e = -0.18628806 + t * d
    f = 0.09678418 + t * e
    g = 0.37409196 + t * f
    h = 1.00002368 + t * g
    r = t * math.exp(-z * z - 1.26551223 + t * h)
    return r if not (x < 0) else 2.0 - r


@inlined_kernel
def std_pdf(x):
    """The standard normal density."""
    return INV_SQRT2PI * math.exp(-(x * x) / 2.0)


@inlined_kernel
def std_cdf(x):
    """The standard normal cdf through :func:`erfc`."""
    return 0.5 * erfc(-x / SQRT2)


@inlined_kernel
def _tail_moments(a):
    """Mean and variance of a standard normal truncated to ``x > a`` for a large ``a`` (above ~37, where
    :func:`erfc` underflows): the asymptotic series ``a + 1/a - 2/a^3`` and ``1/a^2 - 6/a^4``."""
    inv = 1.0 / a
    inv2 = inv * inv
    return a + inv - 2.0 * inv * inv2, inv2 - 6.0 * inv2 * inv2


@inlined_kernel
def v_w(mu, sigma, margin, tie):
    """Herbrich's ``v`` and ``w`` for ``d ~ N(mu, sigma^2)`` truncated to ``d > margin`` (``tie`` False) or to
    ``|d| <= margin`` (``tie`` True), in the package's formulas."""
    if not tie:
        alpha = (margin - mu) / sigma
        denominator = std_cdf(-alpha)
        if denominator > 0.0:
            v = std_pdf(-alpha) / denominator
            return v, v * (v + (-alpha))
        mean, variance = _tail_moments(alpha)  # the package's 0/0
        return mean, 1.0 - variance
    alpha = (-margin - mu) / sigma
    beta = (margin - mu) / sigma
    denominator = std_cdf(beta) - std_cdf(alpha)
    if denominator > 0.0:
        pdf_alpha, pdf_beta = std_pdf(alpha), std_pdf(beta)
        v = (pdf_alpha - pdf_beta) / denominator
        u = (alpha * pdf_alpha - beta * pdf_beta) / denominator
        return v, -(u - v * v)
    # both ends far in one tail: the mass sits at the nearer end
    if alpha > 0.0:
        mean, variance = _tail_moments(alpha)
        return mean, 1.0 - variance
    mean, variance = _tail_moments(-beta)
    return -mean, 1.0 - variance


def _erfc_py(x: float) -> float:
    return float(erfc.py_func(x))


def erfcinv(y: float) -> float:
    """The inverse of :func:`erfc` as the package computes it: a rational first guess, three Newton steps."""
    if y >= 2:
        return -math.inf
    if y < 0:
        raise ValueError("erfcinv: argument must be nonnegative")
    if y == 0:
        return math.inf
    if not (y < 1):
        y = 2 - y
    t = math.sqrt(-2 * math.log(y / 2.0))
    x = -0.70711 * ((2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t)
    for _ in range(3):
        err = _erfc_py(x) - y
        x += err / (1.12837916709551257 * math.exp(-(x**2)) - x * err)
    return x if (y < 1) else -x


def draw_margin(p_draw: float, beta: float) -> float:
    """The draw margin of a two-player game (Landfried & Mocskos, the draw margin; the package's ``compute_margin``):
    ``|Phi^-1((1 - p_draw) / 2)|`` times the sd of the difference of two performances, ``sqrt(2) beta``; 0
    when ``p_draw`` is 0."""
    if p_draw == 0.0:
        return 0.0
    sd = math.sqrt(beta**2 + beta**2)
    return abs(0.0 - sd * SQRT2 * erfcinv(2 * (0.5 - p_draw / 2)))
