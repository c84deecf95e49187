"""Newton's method with preconditioned conjugate gradients for the penalised Bradley-Terry fit.

The objective f of :mod:`._bt_model` is convex with Hessian ``L_w + diag(C)`` (:mod:`._bt_model`): each
Newton step solves ``H p = -g`` inexactly by Jacobi-preconditioned CG on the sparse pairs (never forming
H), with forcing term ``η = min(0.5, sqrt(‖g‖/‖g_0‖))`` (Eisenstat-Walker: superlinear near the optimum),
then backtracks (Armijo) if the full step does not lower f. With ``C = 0`` (plain MLE) f is flat along
the all-ones direction: the gradient is orthogonal to it, CG stays in the consistent subspace, and θ is
re-centred after every step (the anchoring constraint, mean zero), which leaves f unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.fits.bradley_terry.model import center, evaluate, gradient_norm, preconditioned_cg
from duckrate.fits.bradley_terry.pairs import Pairs
from duckrate.fits.bradley_terry.solution import RUNAWAY, Runaway, Solution


def newton_fit(
    pairs: Pairs,
    precision: np.ndarray,
    mu: np.ndarray,
    use_alpha: bool,
    tol: float,
    max_iter: int,
    theta0: np.ndarray | None = None,
    alpha0: float = 0.0,
) -> Solution:
    """Minimise f from ``theta0`` (default: the prior means, zero for MLE) until ‖∇f‖₂ <= ``tol``.

    Raises :class:`Runaway` if |θ| exceeds the bound a finite optimum of real data can reach (the MLE
    does not exist, e.g. with an order effect that always wins).
    """
    n = pairs.n_players
    mle = not np.any(precision > 0.0)
    theta = (mu.copy() if theta0 is None else theta0.copy()).astype(np.float64)
    alpha = float(alpha0) if use_alpha else 0.0
    if mle:
        center(theta)
    grad = np.empty(n + 1)
    curvature = np.empty(pairs.n_pairs)
    diagonal = np.empty(n + 1)
    trial_grad = np.empty(n + 1)
    trial_curvature = np.empty(pairs.n_pairs)
    trial_diagonal = np.empty(n + 1)
    step = np.empty(n + 1)
    f = evaluate(pairs.a, pairs.b, pairs.wins, pairs.losses, theta, alpha, mu, precision, grad, curvature, diagonal)
    g_norm = gradient_norm(grad, use_alpha)
    g0 = max(g_norm, 1e-300)
    history = [g_norm]
    cg_total = 0
    iterations = 0
    while g_norm > tol and iterations < max_iter:
        forcing = min(0.5, math.sqrt(g_norm / g0))
        cg_total += preconditioned_cg(
            pairs.a, pairs.b, curvature, precision, diagonal, -grad, use_alpha, forcing, 10 * n + 100, step
        )
        slope = float(np.dot(grad[:n], step[:n])) + (grad[n] * step[n] if use_alpha else 0.0)
        if not slope < 0.0:  # CG gave no descent direction (only at rounding level): steepest descent
            step[:] = -grad / diagonal
            slope = (
                -float(np.dot(grad, grad / diagonal))
                if use_alpha
                else -float(np.dot(grad[:n], grad[:n] / diagonal[:n]))
            )
        t = 1.0
        slack = 1e-12 * (abs(f) + 1.0)  # f is a long sum: allow its rounding noise near the optimum
        for _ in range(60):
            trial = theta + t * step[:n]
            trial_alpha = alpha + t * step[n] if use_alpha else 0.0
            if mle:
                center(trial)
            f_trial = evaluate(
                pairs.a,
                pairs.b,
                pairs.wins,
                pairs.losses,
                trial,
                trial_alpha,
                mu,
                precision,
                trial_grad,
                trial_curvature,
                trial_diagonal,
            )
            if f_trial <= f + 1e-4 * t * slope + slack:
                break
            t *= 0.5
        else:
            break  # no progress possible at floating-point resolution
        theta, alpha, f = trial, trial_alpha, f_trial
        grad, trial_grad = trial_grad, grad
        curvature, trial_curvature = trial_curvature, curvature
        diagonal, trial_diagonal = trial_diagonal, diagonal
        g_norm = gradient_norm(grad, use_alpha)
        history.append(g_norm)
        iterations += 1
        if np.max(np.abs(theta)) > RUNAWAY or abs(alpha) > RUNAWAY:
            raise Runaway(theta, alpha)
    return Solution(
        theta=theta,
        alpha=alpha,
        converged=g_norm <= tol,
        iterations=iterations,
        gradient_norm=g_norm,
        objective=f,
        method="newton",
        history=history,
        inner_iterations=cg_total,
    )
