"""Whole-History Rating by Newton's method on all of a league's ratings at once: the fixed point of the
per-player sweeps of :mod:`.whr` (every gradient zero), reached in about ten Newton steps instead of
hundreds of sweeps.

The log-posterior is concave with a sparse Hessian H: each player's own block is tridiagonal (their games
and the Wiener prior, Coulom 2008 section 3.2 and appendix A), and each game couples the two players'
ratings on its step. A Newton step solves ``A δ = g`` (``A = -H``, g the gradient) by conjugate gradients
preconditioned with the players' own blocks, one Thomas solve per player (the LU decomposition of
appendix B): the per-player Newton step of the sweeps, here used inside a global solve. The solve stops at
a relative residual ``η = min(0.5, sqrt(‖g‖/‖g₀‖))`` (Eisenstat-Walker: loose far away, superlinear
near the optimum); the step is halved (Armijo) until it raises the log-posterior.

Convergence: after a full step ``s`` (the largest change of any rating) following a step ``s'``, the
distance left to the optimum is estimated as ``max(s³/s'², 10·η·s)``: quadratic convergence (``s_next ≈
C s²`` with ``C = s/s'²``) and the inexact solve (:data:`INEXACT`). The fit stops when
:data:`.whr.SAFETY` (10) times that is at most ``tol``.

Every loop runs in a fixed order on one thread, and the dot products are plain loops (not BLAS, whose
threads and blocking would change the rounding and, on a busy machine, cost more than the sums), so the
result does not depend on the machine's load or thread count.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.fits.whole_history.whr import SAFETY

#: The error a step solved to relative residual η leaves, as a multiple of η times the step (the residual
#: bounds the error only up to the square root of the preconditioned condition number; measured: ~3).
INEXACT = 10.0


@inlined_kernel
def log_sigmoid(x):
    """``log σ(x)`` without overflow."""
    if x > 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@kernel
def log_posterior(
    unit_lo, unit_hi, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games
):
    """The log-posterior of one league's ratings ``r`` (up to a constant; section 3.1): the games, the
    virtual draws on each player's first step, and the Wiener prior between consecutive steps."""
    weighted = weight.shape[0] > 1
    games = 0.0
    for d in range(unit_day_start[unit_lo], unit_day_start[unit_hi]):
        own = r[d]
        for e in range(entry_start[d], entry_start[d + 1]):
            x = own - r[opp_day[e]]
            w = weight[e] if weighted else 1.0
            games += w * (score[e] * log_sigmoid(x) + (1.0 - score[e]) * log_sigmoid(-x))
    total = 0.5 * games  # every game is counted from both sides
    for u in range(unit_lo, unit_hi):
        first = unit_day_start[u]
        if virtual_games > 0.0:
            total += virtual_games * 0.5 * (log_sigmoid(r[first]) + log_sigmoid(-r[first]))
        for d in range(first, unit_day_start[u + 1] - 1):
            change = r[d + 1] - r[d]
            total -= 0.5 * change * change / (w2 * (day_step[d + 1] - day_step[d]))
    return total


@kernel
def derivatives(
    unit_lo, unit_hi, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, g, a, o, c
):
    """At ``r``, per day of the league (index ``d - first day``): the gradient ``g``, and the players' own
    blocks of ``A = -H``, ``a`` on the diagonal and ``o`` to the player's next day (0 after their last);
    per entry (index ``e - first entry``) the coupling ``c = w·p(1 - p)`` between the two sides of a game."""
    weighted = weight.shape[0] > 1
    day_lo = unit_day_start[unit_lo]
    e_lo = entry_start[day_lo]
    for u in range(unit_lo, unit_hi):
        first = unit_day_start[u]
        stop = unit_day_start[u + 1]
        for d in range(first, stop):
            own = r[d]
            gd = 0.0
            ad = 0.0
            for e in range(entry_start[d], entry_start[d + 1]):
                p = 1.0 / (1.0 + math.exp(r[opp_day[e]] - own))
                w = weight[e] if weighted else 1.0
                gd += w * (score[e] - p)
                curvature = w * p * (1.0 - p)
                ad += curvature
                c[e - e_lo] = curvature
            if d == first and virtual_games > 0.0:
                p = 1.0 / (1.0 + math.exp(-own))
                gd += virtual_games * (0.5 - p)
                ad += virtual_games * p * (1.0 - p)
            g[d - day_lo] = gd
            a[d - day_lo] = ad
            o[d - day_lo] = 0.0
        for d in range(first, stop - 1):
            inv = 1.0 / (w2 * (day_step[d + 1] - day_step[d]))
            pull = (r[d + 1] - r[d]) * inv
            g[d - day_lo] += pull
            g[d + 1 - day_lo] -= pull
            a[d - day_lo] += inv
            a[d + 1 - day_lo] += inv
            o[d - day_lo] = -inv


@inlined_kernel
def factor_blocks(unit_lo, unit_hi, unit_day_start, a, o, inv_pivot, multiplier):
    """LU of each player's tridiagonal block of A (appendix B): the inverse pivots and the multipliers
    ``o[k-1]/pivot[k-1]`` of the forward pass."""
    day_lo = unit_day_start[unit_lo]
    for u in range(unit_lo, unit_hi):
        first = unit_day_start[u] - day_lo
        n = unit_day_start[u + 1] - unit_day_start[u]
        pivot = a[first]
        inv_pivot[first] = 1.0 / pivot
        multiplier[first] = 0.0
        for k in range(first + 1, first + n):
            multiplier[k] = o[k - 1] * inv_pivot[k - 1]
            pivot = a[k] - multiplier[k] * o[k - 1]
            inv_pivot[k] = 1.0 / pivot


@inlined_kernel
def precondition(unit_lo, unit_hi, unit_day_start, o, inv_pivot, multiplier, res, z):
    """``z = M⁻¹ res`` with M the players' own blocks (a Thomas solve each); returns ``res·z``."""
    day_lo = unit_day_start[unit_lo]
    total = 0.0
    for u in range(unit_lo, unit_hi):
        first = unit_day_start[u] - day_lo
        stop = unit_day_start[u + 1] - day_lo
        z[first] = res[first]
        for k in range(first + 1, stop):
            z[k] = res[k] - multiplier[k] * z[k - 1]
        z[stop - 1] *= inv_pivot[stop - 1]
        for k in range(stop - 2, first - 1, -1):
            z[k] = (z[k] - o[k] * z[k + 1]) * inv_pivot[k]
        for k in range(first, stop):
            total += res[k] * z[k]
    return total


@kernel
def newton_league(
    unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, score, weight, w2, virtual_games, tol, max_iter, r
):
    """Newton steps on the ratings of units ``unit_lo .. unit_hi - 1`` (one league; ``r`` updated in place)
    until converged (see the module docstring) or after ``max_iter`` steps. Returns (Newton steps,
    converged, conjugate-gradient iterations)."""
    day_lo = unit_day_start[unit_lo]
    m = unit_day_start[unit_hi] - day_lo
    e_lo = entry_start[day_lo]
    g = np.empty(m)
    a = np.empty(m)
    o = np.empty(m)
    c = np.empty(entry_start[day_lo + m] - e_lo)
    inv_pivot = np.empty(m)
    multiplier = np.empty(m)
    x = np.empty(m)
    res = np.empty(m)
    z = np.empty(m)
    p = np.empty(m)
    q = np.empty(m)
    start = np.empty(m)
    f = log_posterior(
        unit_lo, unit_hi, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games
    )
    g0 = 0.0
    previous = math.inf
    steps = 0
    cg_total = 0
    while steps < max_iter:
        derivatives(
            unit_lo,
            unit_hi,
            unit_day_start,
            r,
            day_step,
            entry_start,
            opp_day,
            score,
            weight,
            w2,
            virtual_games,
            g,
            a,
            o,
            c,
        )
        g_norm = 0.0
        for i in range(m):
            g_norm += g[i] * g[i]
        g_norm = math.sqrt(g_norm)
        if g_norm == 0.0:
            return steps, True, cg_total
        steps += 1
        if g0 == 0.0:
            g0 = g_norm
        eta = min(0.5, math.sqrt(g_norm / g0))
        target = eta * g_norm
        factor_blocks(unit_lo, unit_hi, unit_day_start, a, o, inv_pivot, multiplier)
        # preconditioned conjugate gradients on A x = g, from x = 0
        for i in range(m):
            x[i] = 0.0
            res[i] = g[i]
        rz = precondition(unit_lo, unit_hi, unit_day_start, o, inv_pivot, multiplier, res, z)
        for i in range(m):
            p[i] = z[i]
        for _ in range(10 * m + 100):
            pq = 0.0
            for i in range(m):  # q = A p
                d = day_lo + i
                v = a[i] * p[i]
                if i + 1 < m:
                    v += o[i] * p[i + 1]
                if i > 0:
                    v += o[i - 1] * p[i - 1]
                for e in range(entry_start[d], entry_start[d + 1]):
                    v -= c[e - e_lo] * p[opp_day[e] - day_lo]
                q[i] = v
                pq += p[i] * v
            if not (pq > 0.0 and rz > 0.0):
                break
            alpha = rz / pq
            rr = 0.0
            for i in range(m):
                x[i] += alpha * p[i]
                res[i] -= alpha * q[i]
                rr += res[i] * res[i]
            cg_total += 1
            if math.sqrt(rr) <= target:
                break
            rz_next = precondition(unit_lo, unit_hi, unit_day_start, o, inv_pivot, multiplier, res, z)
            beta = rz_next / rz
            rz = rz_next
            for i in range(m):
                p[i] = z[i] + beta * p[i]
        # Armijo backtracking: the log-posterior must rise (up to its rounding noise)
        slope = 0.0
        for i in range(m):
            slope += g[i] * x[i]
            start[i] = r[day_lo + i]
        t = 1.0
        accepted = False
        for _ in range(60):
            for i in range(m):
                r[day_lo + i] = start[i] + t * x[i]
            f_trial = log_posterior(
                unit_lo, unit_hi, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games
            )
            if f_trial >= f + 1e-4 * t * slope - 1e-12 * (abs(f) + 1.0):
                accepted = True
                break
            t *= 0.5
        if not accepted:  # no rise at floating-point resolution: stay put
            for i in range(m):
                r[day_lo + i] = start[i]
            return steps, False, cg_total
        f = f_trial
        largest = 0.0
        for i in range(m):
            largest = max(largest, abs(t * x[i]))
        if largest == 0.0:
            return steps, True, cg_total
        if t == 1.0 and largest < previous:
            remaining = max(largest * largest * largest / (previous * previous), INEXACT * eta * largest)
            if SAFETY * remaining <= tol:
                return steps, True, cg_total
        previous = largest if t == 1.0 else math.inf
    return steps, False, cg_total
