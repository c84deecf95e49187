"""Logistic regression over individual games: Bradley-Terry strengths plus a few per-game features.

One job: the fits behind the likelihood-ratio tests of Bradley-Terry (Tang, Wang & Jin, Section 3.1),
where each game t has the pair design ``x_t = e_{i_t} - e_{j_t}`` and, in the augmented model, features
``g_t ∈ R^m`` (m = 0, 1 or 2) with coefficients α::

    f(θ, α) = Σ_t w_t [softplus(z_t) - o_t z_t] + (λ/2)·|θ|²,   z_t = θ_i - θ_j + α·g_t,

with targets ``o_t ∈ [0, 1]`` (a draw is ½). The features change from game to game (the martingale
test's online ratings), so games are not aggregated by pair. Minimised by Newton's method with a
Jacobi-preconditioned conjugate-gradient solve of each step on the Hessian
``Σ_t w_t p_t(1 - p_t) [x_t; g_t][x_t; g_t]ᵀ + λ I_θ`` (never formed) and a backtracking line search.
Everything runs sequentially in numba in a fixed order, so results are bit-for-bit reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel

GRADIENT_TOLERANCE = 1e-7
MAX_NEWTON_STEPS = 100


@kernel
def log_loss(z, target):
    """``(log(1 + e^z) - target·z, σ(z))``: the logistic log loss of one game and its forecast, with one
    exponential and no overflow."""
    if z > 0.0:
        e = math.exp(-z)
        return z + math.log1p(e) - target * z, 1.0 / (1.0 + e)
    e = math.exp(z)
    return math.log1p(e) - target * z, e / (1.0 + e)


@kernel
def objective(a, b, target, weight, features, beta, n, lam, grad, curvature):
    """f(β) at β = [θ; α]; fills ``grad`` (n + m) and ``curvature`` (w p (1-p) per game)."""
    m = features.shape[1]
    weighted = weight.shape[0] == a.shape[0]
    grad[:] = 0.0
    total = 0.0
    for t in range(a.shape[0]):
        z = beta[a[t]] - beta[b[t]]
        for k in range(m):
            z += beta[n + k] * features[t, k]
        w = weight[t] if weighted else 1.0
        loss, p = log_loss(z, target[t])
        total += w * loss
        r = w * (p - target[t])
        grad[a[t]] += r
        grad[b[t]] -= r
        for k in range(m):
            grad[n + k] += r * features[t, k]
        curvature[t] = w * p * (1.0 - p)
    penalty = 0.0
    for i in range(n):
        penalty += beta[i] * beta[i]
        grad[i] += lam * beta[i]
    return total + 0.5 * lam * penalty


@kernel
def _hessian_times(a, b, features, curvature, n, lam, v, out):
    m = features.shape[1]
    out[:] = 0.0
    for t in range(a.shape[0]):
        s = v[a[t]] - v[b[t]]
        for k in range(m):
            s += v[n + k] * features[t, k]
        q = curvature[t] * s
        out[a[t]] += q
        out[b[t]] -= q
        for k in range(m):
            out[n + k] += q * features[t, k]
    for i in range(n):
        out[i] += lam * v[i]


@kernel
def _diagonal(a, b, features, curvature, n, lam, out):
    m = features.shape[1]
    out[:] = 0.0
    for t in range(a.shape[0]):
        out[a[t]] += curvature[t]
        out[b[t]] += curvature[t]
        for k in range(m):
            out[n + k] += curvature[t] * features[t, k] * features[t, k]
    for i in range(n):
        out[i] += lam
    for i in range(out.shape[0]):
        if out[i] <= 1e-300:
            out[i] = 1.0


@kernel
def newton_direction(a, b, features, curvature, n, lam, grad, rtol, max_iter):
    """Approximately solve H d = -grad by Jacobi-preconditioned conjugate gradients."""
    size = grad.shape[0]
    diag = np.empty(size)
    _diagonal(a, b, features, curvature, n, lam, diag)
    d = np.zeros(size)
    r = -grad.copy()
    z = r / diag
    p = z.copy()
    hp = np.empty(size)
    rz = 0.0
    norm0 = 0.0
    for i in range(size):
        rz += r[i] * z[i]
        norm0 += r[i] * r[i]
    norm0 = math.sqrt(norm0)
    for _ in range(max_iter):
        _hessian_times(a, b, features, curvature, n, lam, p, hp)
        php = 0.0
        for i in range(size):
            php += p[i] * hp[i]
        if php <= 0.0:
            break
        step = rz / php
        norm = 0.0
        for i in range(size):
            d[i] += step * p[i]
            r[i] -= step * hp[i]
            norm += r[i] * r[i]
        if math.sqrt(norm) <= rtol * norm0:
            break
        rz_new = 0.0
        for i in range(size):
            z[i] = r[i] / diag[i]
            rz_new += r[i] * z[i]
        beta = rz_new / rz
        rz = rz_new
        for i in range(size):
            p[i] = z[i] + beta * p[i]
    return d


@dataclass(frozen=True)
class GameFit:
    """The minimiser: ``theta`` (n), ``alpha`` (m), the objective ``value`` at it, its gradient norm,
    Newton ``iterations``, and whether the tolerance was reached."""

    theta: np.ndarray
    alpha: np.ndarray
    value: float
    gradient_norm: float
    iterations: int
    converged: bool


def fit_games(
    a: np.ndarray,
    b: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray,
    n_players: int,
    features: np.ndarray | None = None,
    ridge: float = 0.0,
    tolerance: float = GRADIENT_TOLERANCE,
    start: np.ndarray | None = None,
) -> GameFit:
    """Minimise f(θ, α) (module docstring) to gradient norm ``tolerance``.

    Parameters
    ----------
    a, b : int64 player codes of each game's two sides (0..n_players-1).
    target : float64 score of side a in [0, 1].
    weight : float64 per game, or one entry (every game weighs 1).
    features : float64 (games x m) features g_t, or None (m = 0: plain Bradley-Terry).
    ridge : λ on θ (α is not penalised); with λ = 0 the model is only defined up to a constant shift of
        θ and need not have a finite minimiser: give λ > 0 unless the data are strongly connected.
    start : θ to start from (e.g. the fit without features; α starts at 0), else zeros.
    """
    features = np.zeros((a.shape[0], 0)) if features is None else np.ascontiguousarray(features, dtype=np.float64)
    m = features.shape[1]
    beta = np.zeros(n_players + m)
    if start is not None:
        beta[:n_players] = start
    grad = np.empty_like(beta)
    curvature = np.empty(a.shape[0])
    trial_grad = np.empty_like(beta)
    trial_curvature = np.empty_like(curvature)
    value = objective(a, b, target, weight, features, beta, n_players, ridge, grad, curvature)
    norm = float(np.sqrt(grad @ grad))
    steps = 0
    while norm > tolerance and steps < MAX_NEWTON_STEPS:
        steps += 1
        direction = newton_direction(
            a, b, features, curvature, n_players, ridge, grad, min(0.5, math.sqrt(norm)) * 0.1, 4 * (n_players + m) + 50
        )
        slope = float(grad @ direction)
        if slope >= 0.0:  # not a descent direction (should not happen): fall back to the gradient
            direction, slope = -grad, -norm * norm
        step = 1.0
        while True:
            trial = beta + step * direction
            trial_value = objective(
                a, b, target, weight, features, trial, n_players, ridge, trial_grad, trial_curvature
            )
            if trial_value <= value + 1e-4 * step * slope:  # Armijo
                break
            # Near the optimum f changes by less than its rounding error: accept a step that shrinks the gradient.
            if trial_value <= value + 1e-13 * abs(value) and float(np.sqrt(trial_grad @ trial_grad)) < norm:
                break
            step *= 0.5
            if step < 1e-10:
                break
        if step < 1e-10:  # no progress possible at this precision
            break
        beta, value = trial, trial_value
        grad, trial_grad = trial_grad, grad
        curvature, trial_curvature = trial_curvature, curvature
        norm = float(np.sqrt(grad @ grad))
    return GameFit(beta[:n_players].copy(), beta[n_players:].copy(), float(value), norm, steps, norm <= tolerance)
