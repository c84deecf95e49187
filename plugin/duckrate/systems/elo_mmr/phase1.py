"""Elo-MMR phase 1, the exact reference: each performance is the zero of ``Q_i`` (Theorem 3.2).

``Q_i(p) = Σ_{j>i} l_j(p) + Σ_{j~i} d_j(p) + Σ_{j<i} v_j(p)`` over the opponents j who beat (``j>i``:
a better rank), tied (``j~i``, i itself included) or lost to i, with

* logistic (Elo-MMR): ``l_j = -F_j/δ̄_j``, ``v_j = (1-F_j)/δ̄_j``, ``d_j = l_j + v_j`` and
  ``F_j(p) = 1/(1 + exp(-(p - μ_j)/δ̄_j))``, ``δ̄_j = √3/π · δ_j`` (Section 3.1);
* Gaussian (Elo-MMχ): ``v_j = f_j/F_j``, ``l_j = -f_j/(1-F_j)``, ``d_j = f_j'/f_j = -(p-μ_j)/δ_j²``.

``δ_j² = σ_j² + β²``. Every function here takes the contest's players in rank order (``mu``, ``scale`` =
δ̄ or δ, ``rank``) and visits the opponents ``perm[lo:hi]``: all of them for the exact solve, a window
of the nearest ratings for opponent subsampling (Section 5.3). Cost O(|P|) per evaluation, so
O(|P|²) per contest: the fast path (:mod:`._mmr_fast`) must agree with this one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..._numba import kernel, parallel_kernel
from ..logistic_sums import logistic_cdf_pair
from ..numerics import safeguarded_step

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
BRACKET_STEPS = 60.0  # subsampled solves: the bracket reaches this many widest scales past the extreme ratings


@kernel
def normal_hazard(z):
    """φ(z)/Φ(z), the standard normal's reverse hazard, stable for very negative z (Mills-ratio series)."""
    if z > -30.0:
        return _INV_SQRT_2PI * math.exp(-0.5 * z * z) / (0.5 * math.erfc(-z * _SQRT_HALF))
    x2 = 1.0 / (z * z)
    # 1/R(x) with R(x) ~ (1/x)(1 - 1/x² + 3/x⁴ - 15/x⁶ + ...), x = -z
    series = 1.0 + x2 * (-1.0 + x2 * (3.0 + x2 * (-15.0 + x2 * (105.0 + x2 * (-945.0 + x2 * 10395.0)))))
    return -z / series


@kernel
def term(p, mu, scale, relation, gaussian):
    """One opponent's term of Q and its derivative: relation -1 = the opponent beat us (l), 0 = tie (d),
    +1 = we beat them (v)."""
    z = (p - mu) / scale
    if gaussian:
        if relation == 0:
            return -z / scale, -1.0 / (scale * scale)
        if relation > 0:
            v = normal_hazard(z) / scale
            return v, -v * (z / scale + v)
        l = -normal_hazard(-z) / scale
        return l, -l * (z / scale) - l * l
    f, g = logistic_cdf_pair(z)
    slope = -f * g / (scale * scale)
    if relation < 0:
        return -f / scale, slope
    if relation > 0:
        return g / scale, slope
    return (g - f) / scale, 2.0 * slope


@kernel
def q_value(p, mu, scale, rank, perm, lo, hi, my_rank, gaussian):
    """Q(p) and Q'(p) for a player of rank ``my_rank`` against the opponents ``perm[lo:hi]``."""
    q = 0.0
    dq = 0.0
    for position in range(lo, hi):
        j = perm[position]
        relation = 0 if rank[j] == my_rank else (1 if rank[j] > my_rank else -1)
        value, slope = term(p, mu[j], scale[j], relation, gaussian)
        q += value
        dq += slope
    return q, dq


@kernel
def solve_q(mu, scale, rank, perm, lo, hi, my_rank, gaussian, guess, step):
    """The zero of the strictly decreasing Q: bracket by doubling steps from ``guess``, then Newton
    safeguarded by bisection, to full double precision."""
    low = guess - step
    q, dq = q_value(low, mu, scale, rank, perm, lo, hi, my_rank, gaussian)
    width = step
    while q <= 0.0:
        width *= 2.0
        low -= width
        q, dq = q_value(low, mu, scale, rank, perm, lo, hi, my_rank, gaussian)
    high = guess + step
    q, dq = q_value(high, mu, scale, rank, perm, lo, hi, my_rank, gaussian)
    width = step
    while q >= 0.0:
        width *= 2.0
        high += width
        q, dq = q_value(high, mu, scale, rank, perm, lo, hi, my_rank, gaussian)
    x = min(max(guess, low), high)
    for _ in range(200):
        q, dq = q_value(x, mu, scale, rank, perm, lo, hi, my_rank, gaussian)
        if q == 0.0:
            return x
        nxt, low, high, converged = safeguarded_step(x, q, dq, low, high, True)
        if converged:
            return nxt
        x = nxt
    return x


@kernel
def performances_exact(mu, scale, rank, group_start, gaussian, out):
    """Phase 1 of one contest by the exact O(|P|²) solve, one root per tie group (all members of a tie
    group share Q). ``out[g]`` receives the group's performance."""
    n = mu.shape[0]
    perm = np.arange(n)
    step = 0.0
    for j in range(n):
        step = max(step, scale[j])
    guess = 0.0
    for j in range(n):
        guess += mu[j]
    guess /= max(n, 1)
    for g in range(group_start.shape[0] - 1):
        first = group_start[g]
        guess = solve_q(mu, scale, rank, perm, 0, n, rank[first], gaussian, guess, step)
        out[g] = guess


@kernel
def log_balance(p, mu, scale, rank, perm, lo, hi, my_rank):
    """For the logistic model, log P(p) - log N(p) and its derivative, where Q = P - N splits into the
    positive parts of its terms (P = Σ (1 - F_j)/s_j over the opponents beaten or tied) and the negative
    ones (N = Σ F_j/s_j over those who beat or tied us): the same zero as Q, but nearly linear far from it
    (P and N are sums of exponentials there), so Newton's method needs a few steps from anywhere."""
    positive = 0.0
    negative = 0.0
    positive_slope = 0.0
    negative_slope = 0.0
    for position in range(lo, hi):
        j = perm[position]
        f, g = logistic_cdf_pair((p - mu[j]) / scale[j])
        slope = f * g / (scale[j] * scale[j])
        if rank[j] >= my_rank:  # beaten or tied
            positive += g / scale[j]
            positive_slope -= slope
        if rank[j] <= my_rank:  # beat us or tied
            negative += f / scale[j]
            negative_slope += slope
    return math.log(positive) - math.log(negative), positive_slope / positive - negative_slope / negative


@parallel_kernel
def performances_subsampled(mu, scale, rank, max_opponents, gaussian, out):
    """Phase 1 with opponent subsampling (Section 5.3): each player's Q runs over the ``max_opponents``
    players (themselves included) whose prior ratings are nearest theirs in the contest's order by
    rating. ``out[k]`` receives player k's performance (players of one tie group may now differ).

    Each solve is a safeguarded Newton iteration (on :func:`log_balance` for the logistic model) started at
    the player's own rating inside a bracket that holds every root (``BRACKET_STEPS`` of the widest scale beyond the extreme ratings: there Q has the
    sign of the player's own tie term), so it needs no bracketing evaluations; players are solved in
    parallel, each from its own inputs only."""
    n = mu.shape[0]
    by_rating = np.argsort(mu, kind="mergesort")  # stable: equal ratings stay in rank order
    position = np.empty(n, dtype=np.int64)
    for q in range(n):
        position[by_rating[q]] = q
    step = 0.0
    for j in range(n):
        step = max(step, scale[j])
    lowest = mu[by_rating[0]] - BRACKET_STEPS * step
    highest = mu[by_rating[n - 1]] + BRACKET_STEPS * step
    window = min(max_opponents, n)
    for k in prange(n):
        lo = position[k] - window // 2
        if lo < 0:
            lo = 0
        hi = lo + window
        if hi > n:
            hi = n
            lo = n - window
        low = lowest
        high = highest
        x = mu[k]
        for _ in range(200):
            if gaussian:
                q, dq = q_value(x, mu, scale, rank, by_rating, lo, hi, rank[k], True)
            else:
                q, dq = log_balance(x, mu, scale, rank, by_rating, lo, hi, rank[k])
            if q == 0.0:
                break
            x, low, high, converged = safeguarded_step(x, q, dq, low, high, True)
            if converged:
                break
        out[k] = x
