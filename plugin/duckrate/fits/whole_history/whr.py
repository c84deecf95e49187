"""Whole-History Rating: the maximum a posteriori of every player's rating at every step, and its sd.

Model (Coulom 2008, section 3.1), in natural units ``r = ln γ`` (Elo = ``400/ln10 · r``):

- a game of player i at step t against j: ``P(i wins) = σ(r_i(t) - r_j(t))`` (dynamic Bradley-Terry); a draw
  (score ½) counts as half a win and half a loss, a score s as ``s`` wins and ``1 - s`` losses, and a weight
  multiplies the game's log-likelihood;
- between a player's consecutive steps t₁ < t₂, ``r(t₂) - r(t₁) ~ N(0, w²·(t₂ - t₁))`` (a Wiener process), w²
  given in Elo² per step and converted with ``(ln10/400)²``, as the ``whr`` package does;
- on a player's first step, ``virtual_games`` virtual draws against a virtual player of rating 0 (the
  package's form of the paper's prior: each virtual draw adds ``½ r - ln(1 + e^r)`` to the log-posterior).

Algorithm (section 3.2 and appendices A-B): one Newton step per player per iteration, the player's ratings
moving together with the others' fixed. The player's Hessian is tridiagonal (the games give the diagonal
``-Σ w·p(1 - p)``, the Wiener prior ``∓1/σ²`` around it); the step solves ``H x = g`` with the Thomas algorithm
(the LU decomposition of appendix B) and sets ``r ← r - x``. As in the package (whr 2.2.0): players are
updated in sequence (Gauss-Seidel), each reading the others' newest ratings; a player with one step takes a
plain one-dimensional Newton step; a player with several adds ``-0.001`` to the Hessian's diagonal (a
ridge that changes the step, not the fixed point). Players are swept in name order (the package: in order of
first appearance); the fixed point, where every gradient is zero, is the same.

Convergence (``method := 'sweeps'``; :mod:`.newton` reaches the same fixed point faster): an iteration is
one sweep over the league's players. Near the optimum the largest change of a rating per sweep, ``Δ``,
falls geometrically at a rate ρ (the slower of its rates over the last sweep and over the last :data:`LAG`
sweeps), so the distance left is about ``Δ·ρ/(1 - ρ)``; the sweeps stop when :data:`SAFETY` times that is
at most ``tol`` (natural units here), or after ``max_iter`` sweeps. (The package's
``iterate_until_converge`` stops instead when no rating, rounded to 0.01 Elo, has changed for 10 sweeps.)

Uncertainty (appendix C, the package's ``Player::covariance``): the variance of ``r(t)`` is the diagonal of
``-H⁻¹`` for the player's own tridiagonal Hessian at the optimum (with the same ``-0.001`` ridge), from the
forward and backward pivots of the LU decomposition, ``-(H⁻¹)ᵢᵢ = d'ᵢ₊₁ / (bᵢ b'ᵢ₊₁ - dᵢ d'ᵢ₊₁)``. It is the
sd of a player's rating with every other player's ratings held at their estimates, as the package reports it.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel

#: The package's ridge on the diagonal of a player's Hessian (several steps, and for the covariance).
RIDGE = 1e-3
#: The convergence rate of the sweeps is estimated over this many sweeps.
LAG = 5
#: An estimated distance from the optimum is multiplied by this before it is compared with the tolerance.
SAFETY = 10.0


@inlined_kernel
def day_derivatives(day, r, entry_start, opp_day, score, weight, is_first, virtual_games):
    """First and second derivative of the log-likelihood of one player-day's games (and, on the player's
    first day, the virtual draws) with respect to its rating (appendix A)."""
    weighted = weight.shape[0] > 1
    own = r[day]
    g = 0.0
    h = 0.0
    for e in range(entry_start[day], entry_start[day + 1]):
        p = 1.0 / (1.0 + math.exp(r[opp_day[e]] - own))
        w = weight[e] if weighted else 1.0
        g += w * (score[e] - p)
        h -= w * p * (1.0 - p)
    if is_first and virtual_games > 0.0:
        p = 1.0 / (1.0 + math.exp(-own))
        g += virtual_games * (0.5 - p)
        h -= virtual_games * p * (1.0 - p)
    return g, h


@inlined_kernel
def player_hessian(first, n, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, grad, diag, off):
    """The gradient (into ``grad``, when it is not empty) and the tridiagonal Hessian (``diag``, and ``off``
    between steps k and k + 1) of the log-posterior in one player's ``n`` ratings, days ``first ..``."""
    with_grad = grad.shape[0] > 0
    for k in range(n):
        day = first + k
        g, h = day_derivatives(day, r, entry_start, opp_day, score, weight, k == 0, virtual_games)
        diag[k] = h - RIDGE
        if with_grad:
            grad[k] = g
    for k in range(n - 1):
        day = first + k
        inv = 1.0 / (w2 * (day_step[day + 1] - day_step[day]))
        off[k] = inv
        diag[k] -= inv
        diag[k + 1] -= inv
        if with_grad:
            pull = (r[day + 1] - r[day]) * inv
            grad[k] += pull
            grad[k + 1] -= pull


@inlined_kernel
def newton_step(first, n, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, grad, diag, off):
    """One Newton step on one player's ratings (section 3.2); returns the largest change. ``grad``, ``diag``
    and ``off`` are scratch of at least ``n`` entries."""
    if n == 1:
        g, h = day_derivatives(first, r, entry_start, opp_day, score, weight, True, virtual_games)
        if not h < 0.0:  # no curvature (every p at 0 or 1): no step
            return 0.0
        x = g / h
        r[first] -= x
        return abs(x)
    player_hessian(first, n, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, grad, diag, off)
    # Thomas algorithm (appendix B): H = L U, forward pass into diag (pivots) and grad (y), then back-substitute
    for k in range(1, n):
        a = off[k - 1] / diag[k - 1]
        diag[k] -= a * off[k - 1]
        grad[k] -= a * grad[k - 1]
    x = grad[n - 1] / diag[n - 1]
    r[first + n - 1] -= x
    largest = abs(x)
    for k in range(n - 2, -1, -1):
        x = (grad[k] - off[k] * x) / diag[k]
        r[first + k] -= x
        largest = max(largest, abs(x))
    return largest


@kernel
def sweep_league(
    unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, score, weight, w2, virtual_games, tol, max_iter, r
):
    """Gauss-Seidel sweeps of per-player Newton steps over units ``unit_lo .. unit_hi - 1`` (one league), from
    the ratings in ``r`` (updated in place), until no rating moves by more than ``tol`` in a sweep or after
    ``max_iter`` sweeps (see the module docstring). Returns (sweeps, converged)."""
    longest = 0
    for u in range(unit_lo, unit_hi):
        longest = max(longest, unit_day_start[u + 1] - unit_day_start[u])
    grad = np.empty(longest)
    diag = np.empty(longest)
    off = np.empty(max(longest - 1, 0))
    lagged = np.zeros(LAG)  # the largest change of the last LAG sweeps, by sweep number modulo LAG
    sweeps = 0
    while sweeps < max_iter:
        sweeps += 1
        largest = 0.0
        for u in range(unit_lo, unit_hi):
            first = unit_day_start[u]
            n = unit_day_start[u + 1] - first
            moved = newton_step(
                first, n, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, grad, diag, off
            )
            largest = max(largest, moved)
        if largest == 0.0:
            return sweeps, True
        slot = sweeps % LAG
        if sweeps > LAG and largest < lagged[slot] and largest < lagged[(sweeps - 1) % LAG]:
            # the slower of the rates over the last sweep and over the last LAG sweeps
            rate = max((largest / lagged[slot]) ** (1.0 / LAG), largest / lagged[(sweeps - 1) % LAG])
            if SAFETY * largest * rate / (1.0 - rate) <= tol:
                return sweeps, True
        lagged[slot] = largest
    return sweeps, False


@kernel
def variances(unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games):
    """The variance of each day's rating (natural units²): the diagonal of ``-H⁻¹`` of its player's own
    Hessian at ``r`` (appendix C, as the package computes it)."""
    out = np.empty(r.shape[0])
    n_units = unit_day_start.shape[0] - 1
    variances_into(0, n_units, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, out)
    return out


@kernel
def variances_into(lo, hi, unit_day_start, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, out):
    """:func:`variances` of the days of units ``lo .. hi - 1`` only, written into ``out`` (one entry per day
    of the layout)."""
    longest = 0
    for u in range(lo, hi):
        longest = max(longest, unit_day_start[u + 1] - unit_day_start[u])
    empty = np.empty(0)
    diag = np.empty(longest)
    off = np.empty(max(longest - 1, 0))
    forward = np.empty(longest)
    backward = np.empty(longest)
    for u in range(lo, hi):
        first = unit_day_start[u]
        n = unit_day_start[u + 1] - first
        player_hessian(first, n, r, day_step, entry_start, opp_day, score, weight, w2, virtual_games, empty, diag, off)
        forward[0] = diag[0]
        for k in range(1, n):
            forward[k] = diag[k] - off[k - 1] * off[k - 1] / forward[k - 1]
        backward[n - 1] = diag[n - 1]
        for k in range(n - 2, -1, -1):
            backward[k] = diag[k] - off[k] * off[k] / backward[k + 1]
        for k in range(n - 1):
            out[first + k] = backward[k + 1] / (off[k] * off[k] - forward[k] * backward[k + 1])
        out[first + n - 1] = -1.0 / forward[n - 1]
