"""Elo-MMχ's phase 1 (Gaussian performance model) in O(|P|·m) per contest: Q through Chebyshev series.

For the Gaussian model (Ebtekar & Liu 2021, Section 3.1) the tie-group form of ``Q`` is::

    Q_g(p) = Σ_{j ahead of g} l_j(p) + Σ_{j in g} d_j(p) + Σ_{j behind g} v_j(p)
    v_j = φ(z_j)/(Φ(z_j) δ_j),   l_j = -φ(z_j)/((1 - Φ(z_j)) δ_j),   d_j = -z_j/δ_j,   z_j = (p - μ_j)/δ_j

Unlike the logistic model's, the terms of those ahead and behind differ in shape, so no single function is
shared by every player. Here the participants, in rank order, are cut into blocks of ``BLOCK``; the sums
``L_c = Σ_{j in c} l_j`` and ``V_c = Σ_{j in c} v_j`` of every block c are interpolated by Chebyshev series
on ``[a, b]`` (the prior ratings ± ``REACH`` widest δ), and the series of all blocks wholly ahead of (resp.
behind) each block are summed once (series add coefficient-wise). A tie group's Q is then two series plus
the exact terms of the at most two blocks it shares, its own tie terms included: O(m + ``BLOCK``) per step.

Each block sum is smooth on ``[a, b]`` (v_j and l_j are analytic; the hazard grows linearly on one side and
vanishes on the other), and its series is accepted when its last two coefficients are below ``TOLERANCE``
of its largest value at the nodes, else every series is refit with twice the nodes (from 256 up to 512;
past that the caller solves exactly). Outside ``[a, b]`` (a Newton iterate far from the roots) Q is summed
exactly. Measured at Codeforces size (2,750 participants, ratings spread over ~35 δ): 128 nodes leave a
relative tail of ~1e-11, 256 of ~1e-15, and the performances differ from the exact solve's by ~1e-9 rating points.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.systems.numerics import chebyshev_derivative, normal_hazard

BLOCK = 32  # participants per block
GAUSSIAN_SERIES_FROM = 512  # smaller contests are solved exactly (cheaper than fitting)
FIRST_NODES = 256  # at Codeforces size 128 nodes leave tails of ~1e-11, above TOLERANCE: start where it passes
MOST_NODES = 512
TOLERANCE = 1e-13  # accepted tail of a block's series, relative to its largest value at the nodes
REACH = 8.0  # the series cover the prior ratings ± this many widest scales δ
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


@kernel
def hazards(z):
    """``(φ(z)/Φ(z), φ(z)/(1 - Φ(z)))``, each to full relative precision from one exp and one erfc (the
    smaller of Φ(z) and 1 - Φ(z) by erfc, the larger as 1 minus it); past |z| = 30 the large one by the
    Mills series of :func:`..numerics.normal_hazard`."""
    if z > 30.0:
        return _INV_SQRT_2PI * math.exp(-0.5 * z * z), normal_hazard(-z)
    if z < -30.0:
        return normal_hazard(z), _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    density = _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    tail = 0.5 * math.erfc(abs(z) * _SQRT_HALF)
    if z >= 0.0:
        return density / (1.0 - tail), density / tail
    return density / tail, density / (1.0 - tail)


@kernel
def ahead_term(p, mu, scale):
    """l_j(p) and its derivative: the term of an opponent who finished ahead."""
    z = (p - mu) / scale
    value = -hazards(z)[1] / scale
    return value, -value * (z / scale) - value * value


@kernel
def behind_term(p, mu, scale):
    """v_j(p) and its derivative: the term of an opponent who finished behind."""
    z = (p - mu) / scale
    value = hazards(z)[0] / scale
    return value, -value * (z / scale + value)


@parallel_kernel
def _block_values(mu, scale, a, b, n_nodes, ahead_values, behind_values):
    """Every block's ``L_c`` and ``V_c`` at the Chebyshev nodes of ``[a, b]`` (one node per iteration)."""
    n = mu.shape[0]
    n_blocks = ahead_values.shape[0]
    for i in prange(n_nodes):
        p = 0.5 * (a + b) + 0.5 * (b - a) * math.cos(math.pi * (i + 0.5) / n_nodes)
        for c in range(n_blocks):
            ahead = 0.0
            behind = 0.0
            for j in range(c * BLOCK, min(n, (c + 1) * BLOCK)):
                for_behind, for_ahead = hazards((p - mu[j]) / scale[j])
                behind += for_behind / scale[j]
                ahead -= for_ahead / scale[j]
            ahead_values[c, i] = ahead
            behind_values[c, i] = behind


@parallel_kernel
def _fit_rows(values, out):
    """Chebyshev coefficients (c_0 halved) of each row of ``values`` at the first-kind nodes; returns the
    largest tail (last two coefficients) of a row relative to the row's largest value."""
    rows, m = values.shape
    basis = np.empty((m, m))  # basis[k, i] = T_k(t_i) · 2/m
    for k in prange(m):
        for i in range(m):
            basis[k, i] = math.cos(math.pi * k * (i + 0.5) / m) * (2.0 / m)
    tails = np.zeros(rows)
    for r in prange(rows):
        largest = 0.0
        for i in range(m):
            largest = max(largest, abs(values[r, i]))
        for k in range(m):
            total = 0.0
            for i in range(m):
                total += values[r, i] * basis[k, i]
            out[r, k] = total
        out[r, 0] *= 0.5
        if largest > 0.0:
            tails[r] = (abs(out[r, m - 1]) + abs(out[r, m - 2])) / largest
    return tails.max()


@kernel
def empty_series():
    """A fit that covers nothing (for the exact solve)."""
    none = np.zeros((1, 1))
    return (np.nan, np.nan, none, none, none, none)


@kernel
def fit_block_series(mu, scale):
    """``(ok, fit)``: ``fit`` = (a, b, ahead series, their derivatives, behind series, their derivatives),
    row c of the ahead series summing the blocks before block c and row c of the behind series the blocks
    after it. ``ok`` False when no node count up to ``MOST_NODES`` meets ``TOLERANCE``."""
    n = mu.shape[0]
    widest = 0.0
    for j in range(n):
        widest = max(widest, scale[j])
    a = np.min(mu) - REACH * widest
    b = np.max(mu) + REACH * widest
    n_blocks = (n + BLOCK - 1) // BLOCK
    n_nodes = FIRST_NODES
    while True:
        values = np.empty((2 * n_blocks, n_nodes))
        _block_values(mu, scale, a, b, n_nodes, values[:n_blocks], values[n_blocks:])
        coefficients = np.empty((2 * n_blocks, n_nodes))
        if _fit_rows(values, coefficients) <= TOLERANCE:
            break
        n_nodes *= 2
        if n_nodes > MOST_NODES:
            return False, empty_series()
    ahead = np.zeros((n_blocks, n_nodes))
    behind = np.zeros((n_blocks, n_nodes))
    for c in range(1, n_blocks):
        ahead[c] = ahead[c - 1] + coefficients[c - 1]
    for c in range(n_blocks - 2, -1, -1):
        behind[c] = behind[c + 1] + coefficients[n_blocks + c + 1]
    ahead_slope = np.empty_like(ahead)
    behind_slope = np.empty_like(behind)
    for c in range(n_blocks):
        ahead_slope[c] = chebyshev_derivative(ahead[c])
        behind_slope[c] = chebyshev_derivative(behind[c])
    return True, (a, b, ahead, ahead_slope, behind, behind_slope)


@kernel
def _two_series(first, second, first_slope, second_slope, t):
    """``(Σ (a_k + b_k) T_k(t), Σ (a'_k + b'_k) T_k(t))``: the two series' sum and its derivative series by
    two interleaved Clenshaw recurrences (the same sums as :func:`..numerics.chebyshev_value`, added first)."""
    b1 = 0.0
    b2 = 0.0
    d1 = 0.0
    d2 = 0.0
    for k in range(first.shape[0] - 1, 0, -1):
        b0 = (first[k] + second[k]) + 2.0 * t * b1 - b2
        d0 = (first_slope[k] + second_slope[k]) + 2.0 * t * d1 - d2
        b2 = b1
        b1 = b0
        d2 = d1
        d1 = d0
    return (first[0] + second[0]) + t * b1 - b2, (first_slope[0] + second_slope[0]) + t * d1 - d2


@kernel
def q_from_series(p, fit, mu, scale, first, stop):
    """``(inside, Q, Q')`` at p for the tie group of the participants ``first:stop`` (rank order);
    ``inside`` False (and nothing computed) when p is outside the series' interval."""
    a, b, ahead, ahead_slope, behind, behind_slope = fit
    if not (p >= a and p <= b):
        return False, 0.0, 0.0
    n = mu.shape[0]
    t = (2.0 * p - a - b) / (b - a)
    dt = 2.0 / (b - a)
    first_block = first // BLOCK
    last_block = (stop - 1) // BLOCK
    q, dq = _two_series(ahead[first_block], behind[last_block], ahead_slope[first_block], behind_slope[last_block], t)
    dq *= dt
    for j in range(first_block * BLOCK, first):
        value, slope = ahead_term(p, mu[j], scale[j])
        q += value
        dq += slope
    for j in range(first, stop):  # the tie terms d_j, the player's own included
        q -= (p - mu[j]) / (scale[j] * scale[j])
        dq -= 1.0 / (scale[j] * scale[j])
    for j in range(stop, min(n, (last_block + 1) * BLOCK)):
        value, slope = behind_term(p, mu[j], scale[j])
        q += value
        dq += slope
    return True, q, dq
