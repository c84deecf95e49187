"""Elo-MMR phase 2 and the players' belief factors: pseudodiffusion, history compression, robust average.

A player's belief is one Gaussian factor (mean ``p0``, sd ``s0``, weight ``w0 = 1/s0²``) and a list of
logistic factors, one per past performance ``p_k`` (Section 3.2, eq. 5). A logistic factor is stored
as ``(p_k, a_k, o_k)`` with argument scale ``a_k = π/(√12 β_k)`` and output scale
``o_k = ω_k π/(√3 β_k)``: its term in L' (eq. 6 with the multiplicities of Section 4.2) is
``o_k tanh(a_k (s - p_k))`` and its weight ``w_k = ω_k/β_k² = o_k a_k 6/π²``.

The lists live in one pool: each player owns a slab ``[slab, slab + capacity)`` of the pool arrays and
uses ``[slab + head, slab + head + length)`` of it (a deque: appended at the back, folded away at the
front). A full slab is compacted, or moved to a slab twice as large at the end of the pool; the pool
itself doubles when needed. Old slabs are abandoned, so the pool holds at most about twice the live
factors.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.numerics import safeguarded_step

WEIGHT_PER_SCALES = 6.0 / (math.pi * math.pi)  # w_k = o_k · a_k · 6/π²
_ARG_PER_BETA = math.pi / math.sqrt(12.0)
_OUT_PER_BETA = math.pi / math.sqrt(3.0)


@kernel
def robust_average(p0, w0, centres, arg_scales, out_scales, start, stop, guess):
    """The rating: the zero of ``L'(s) = w0 (s - p0) + Σ_k o_k tanh(a_k (s - p_k))`` over the factors
    ``[start, stop)`` (eq. 6-7), by Newton's method safeguarded by bisection. L' is increasing, negative
    below every centre and positive above every centre, which brackets the zero."""
    low = p0
    high = p0
    for k in range(start, stop):
        low = min(low, centres[k])
        high = max(high, centres[k])
    if high == low:
        return low
    x = min(max(guess, low), high)
    for _ in range(200):
        value = w0 * (x - p0)
        slope = w0
        for k in range(start, stop):
            t = math.tanh(arg_scales[k] * (x - centres[k]))
            value += out_scales[k] * t
            slope += out_scales[k] * arg_scales[k] * (1.0 - t * t)
        if value == 0.0:
            return x
        nxt, low, high, converged = safeguarded_step(x, value, slope, low, high, False)
        if converged:
            return nxt
        x = nxt
    return x


@kernel
def logistic_scales(beta):
    """(a, o) of a new logistic factor for a performance with sd β (multiplicity 1)."""
    return _ARG_PER_BETA / beta, _OUT_PER_BETA / beta


@kernel
def ensure_room(state, slab, head, length, capacity, pool_used, centres, arg_scales, out_scales):
    """Make room for one more factor at the back of ``state``'s deque; returns the (possibly reallocated)
    pool arrays and the new ``pool_used``."""
    if head[state] + length[state] < capacity[state]:
        return centres, arg_scales, out_scales, pool_used
    base = slab[state]
    if head[state] > 0:  # compact in place
        for k in range(length[state]):
            centres[base + k] = centres[base + head[state] + k]
            arg_scales[base + k] = arg_scales[base + head[state] + k]
            out_scales[base + k] = out_scales[base + head[state] + k]
        head[state] = 0
        return centres, arg_scales, out_scales, pool_used
    new_capacity = max(4, 2 * capacity[state])
    if pool_used + new_capacity > centres.shape[0]:
        size = max(2 * centres.shape[0], pool_used + new_capacity)
        grown = np.empty(size)
        grown[:pool_used] = centres[:pool_used]
        centres = grown
        grown = np.empty(size)
        grown[:pool_used] = arg_scales[:pool_used]
        arg_scales = grown
        grown = np.empty(size)
        grown[:pool_used] = out_scales[:pool_used]
        out_scales = grown
    for k in range(length[state]):
        centres[pool_used + k] = centres[base + k]
        arg_scales[pool_used + k] = arg_scales[base + k]
        out_scales[pool_used + k] = out_scales[base + k]
    slab[state] = pool_used
    capacity[state] = new_capacity
    return centres, arg_scales, out_scales, pool_used + new_capacity


@kernel
def fold_oldest(state, slab, head, length, normal_mu, normal_sig, centres, arg_scales, out_scales):
    """History compression (Section 5.3): replace the oldest logistic factor by a moment-matched Gaussian
    merged into the Gaussian factor (total weight preserved)."""
    k = slab[state] + head[state]
    wn = 1.0 / (normal_sig[state] * normal_sig[state])
    wl = out_scales[k] * arg_scales[k] * WEIGHT_PER_SCALES
    normal_mu[state] = (wn * normal_mu[state] + wl * centres[k]) / (wn + wl)
    normal_sig[state] = 1.0 / math.sqrt(wn + wl)
    head[state] += 1
    length[state] -= 1


@kernel
def diffuse(state, drift_variance, rho, mu, sig, normal_mu, normal_sig, slab, head, length, out_scales, arg_scales):
    """Pseudodiffusion (Algorithm 2) by ``drift_variance`` = γ², with transfer rate ``rho``.

    κ = σ²/(σ² + γ²); the Gaussian factor keeps κ^ρ of its weight and receives (1 - κ^ρ) of the total
    weight centred at the current rating, all of it then decayed by κ; logistic factors are multiplied
    by κ^(1+ρ). ρ = ∞ collapses the belief to the Gaussian N(μ, σ² + γ²) (Elo-MMR(∞)); the rating is
    unchanged and σ² grows by γ² in every case."""
    old = sig[state] * sig[state]
    new = old + drift_variance
    if math.isinf(rho):
        sig[state] = math.sqrt(new)
        normal_mu[state] = mu[state]
        normal_sig[state] = sig[state]
        head[state] = 0
        length[state] = 0
        return
    if drift_variance == 0.0:
        return
    decay = old / new
    transfer = decay**rho
    w_normal = 1.0 / (normal_sig[state] * normal_sig[state])
    w_logistic = 0.0
    base = slab[state] + head[state]
    for k in range(base, base + length[state]):
        w_logistic += out_scales[k] * arg_scales[k] * WEIGHT_PER_SCALES
    kept = transfer * w_normal
    moved = (1.0 - transfer) * (w_normal + w_logistic)
    normal_mu[state] = (kept * normal_mu[state] + moved * mu[state]) / (kept + moved)
    normal_sig[state] = 1.0 / math.sqrt(decay * (kept + moved))
    factor = transfer * decay
    for k in range(base, base + length[state]):
        out_scales[k] *= factor
    sig[state] = math.sqrt(new)


@kernel
def fold_negligible(state, tolerance, slab, head, length, normal_mu, normal_sig, centres, arg_scales, out_scales):
    """Fold the oldest factors into the Gaussian while each weighs less than ``tolerance`` times the
    player's total weight (old factors decay geometrically, Section 5.3)."""
    if tolerance <= 0.0 or length[state] == 0:
        return
    total = 1.0 / (normal_sig[state] * normal_sig[state])
    base = slab[state] + head[state]
    for k in range(base, base + length[state]):
        total += out_scales[k] * arg_scales[k] * WEIGHT_PER_SCALES
    while length[state] > 0:
        k = slab[state] + head[state]
        if out_scales[k] * arg_scales[k] * WEIGHT_PER_SCALES >= tolerance * total:
            break
        fold_oldest(state, slab, head, length, normal_mu, normal_sig, centres, arg_scales, out_scales)
