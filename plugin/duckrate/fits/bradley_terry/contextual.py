"""Bradley-Terry with covariates ("style control", the contextual model): objective, gradient and Newton.

Each game r of side A (player a) against side B (player b) has its own covariates ``x_r`` (a row of ``X``,
which holds a column of ones when the side-A effect is fitted) and logit

    d_r = θ_a - θ_b + β·x_r,

so the solvers minimise, with the row's weighted wins and losses of :mod:`.pairs` (a draw half each way),

    f(θ, β) = Σ_rows [ wins_r·softplus(-d_r) + losses_r·softplus(d_r) ] + ½ Σ_i C_i (θ_i - μ_i)²,

β unpenalised (its MLE: ratings then mean "controlled for" the covariates). The Hessian is bordered::

    H = [ L   B ]     L = L_w + diag(C), the Laplacian of the per-pair sums of v_r = (wins_r + losses_r)·σ(d_r)σ(-d_r),
        [ Bᵀ  F ]     B_i· = Σ_{r: a_r = i} v_r x_r - Σ_{r: b_r = i} v_r x_r,   F = Σ_r v_r x_r x_rᵀ.

Newton's step solves it through the Schur complement ``S = F - Bᵀ L⁻¹ B`` (k × k, k the number of covariate
columns): k + 1 conjugate-gradient solves with L on the sparse pairs (:func:`.model.preconditioned_cg`), never
a dense n × n matrix. For the plain MLE (C = 0) L is singular along the all-ones vector; every right-hand side
sums to zero (B's columns too), CG stays in the consistent subspace, and θ is re-centred after each step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.fits.bradley_terry.model import center, logistic_terms, preconditioned_cg
from duckrate.fits.bradley_terry.pairs import Pairs
from duckrate.fits.bradley_terry.solution import RUNAWAY, Runaway, Solution

#: Relative residual of the CG solves for L⁻¹B and of the uncertainty's solves (they must be accurate).
SOLVE_RTOL = 1e-12
SOLVE_MAX_ITER = 100_000


@dataclass(frozen=True)
class Border:
    """The covariates' part of the Hessian at a point: ``cross`` (n × k, B) and ``fisher`` (k × k, F)."""

    cross: np.ndarray
    fisher: np.ndarray

    @property
    def k(self) -> int:
        return self.fisher.shape[0]


@parallel_kernel
def row_terms(a, b, wins, losses, features, theta, beta, loss, residual, curvature):
    """Each row's objective term, df/dd_r = ``losses_r·σ(d_r) - wins_r·σ(-d_r)`` (its score is this times
    ``(e_a - e_b, x_r)``, what the sandwich's middle matrix is made of) and ``v_r``; rows on threads, each
    writing its own entries."""
    k = beta.shape[0]
    for r in prange(a.shape[0]):
        d = theta[a[r]] - theta[b[r]]
        for j in range(k):
            d += beta[j] * features[r, j]
        softplus_neg, softplus_pos, prob, other = logistic_terms(d)
        loss[r] = wins[r] * softplus_neg + losses[r] * softplus_pos
        residual[r] = losses[r] * prob - wins[r] * other
        curvature[r] = (wins[r] + losses[r]) * prob * other


@kernel
def accumulate_rows(
    a,
    b,
    row_pair,
    features,
    theta,
    mu,
    precision,
    loss,
    residual,
    row_curvature,
    grad,
    curvature,
    diagonal,
    cross,
    fisher,
):
    """f and the gradient and Hessian pieces from the row terms, summed in row order (reproducible):
    ``grad`` (n + k: θ's entries, then β's), the per-pair curvature (Σ over the pair's rows of v_r), the
    θ-block's diagonal (n + 1 entries, the last unused, as :func:`.model.preconditioned_cg` expects),
    ``cross`` (B) and ``fisher`` (F). Returns f."""
    n = theta.shape[0]
    k = features.shape[1]
    f = 0.0
    for i in range(n):
        gap = theta[i] - mu[i]
        f += 0.5 * precision[i] * gap * gap
        grad[i] = precision[i] * gap
        diagonal[i] = precision[i]
        for j in range(k):
            cross[i, j] = 0.0
    diagonal[n] = 0.0
    for j in range(k):
        grad[n + j] = 0.0
        for m in range(k):
            fisher[j, m] = 0.0
    curvature[:] = 0.0
    for r in range(a.shape[0]):
        i = a[r]
        o = b[r]
        g = residual[r]
        v = row_curvature[r]
        f += loss[r]
        grad[i] += g
        grad[o] -= g
        curvature[row_pair[r]] += v
        diagonal[i] += v
        diagonal[o] += v
        for j in range(k):
            x = features[r, j]
            grad[n + j] += g * x
            cross[i, j] += v * x
            cross[o, j] -= v * x
            for m in range(j + 1):
                fisher[j, m] += v * x * features[r, m]
    for j in range(k):
        for m in range(j):
            fisher[m, j] = fisher[j, m]
    return f


def solve_theta_block(pairs: Pairs, curvature, precision, diagonal, rhs, rtol: float, mle: bool) -> np.ndarray:
    """``L⁻¹ rhs`` (θ-block only) by Jacobi-preconditioned CG; mean-zero for the plain MLE."""
    n = pairs.n_players
    padded = np.zeros(n + 1)
    padded[:n] = rhs
    if mle:  # consistent with L's null space exactly, not only up to the rounding of the row sums
        padded[:n] -= padded[:n].mean()
    x = np.empty(n + 1)
    preconditioned_cg(pairs.a, pairs.b, curvature, precision, diagonal, padded, False, rtol, SOLVE_MAX_ITER, x)
    x = x[:n].copy()
    if mle:
        center(x)
    return x


def border_solves(pairs: Pairs, curvature, precision, diagonal, border: Border, mle: bool):
    """``Y = L⁻¹ B`` (n × k, column by column) and the Schur complement ``S = F - Bᵀ Y`` (k × k)."""
    y = np.empty_like(border.cross)
    for j in range(border.k):
        y[:, j] = solve_theta_block(pairs, curvature, precision, diagonal, border.cross[:, j], SOLVE_RTOL, mle)
    schur = border.fisher - border.cross.T @ y
    return y, 0.5 * (schur + schur.T)


class _Point:
    """Objective, gradient and Hessian pieces at one (θ, β); ``residual`` holds each row's df/dd."""

    def __init__(self, pairs: Pairs, rows, features, theta, beta, mu, precision):
        n, k = pairs.n_players, features.shape[1]
        a, b, row_pair, wins, losses = rows
        self.theta, self.beta = theta, beta
        self.grad = np.empty(n + k)
        self.curvature = np.empty(pairs.n_pairs)
        self.diagonal = np.empty(n + 1)
        self.border = Border(np.empty((n, k)), np.empty((k, k)))
        loss, self.residual, row_curvature = (np.empty(a.shape[0]) for _ in range(3))
        row_terms(a, b, wins, losses, features, theta, beta, loss, self.residual, row_curvature)
        self.f = accumulate_rows(
            a,
            b,
            row_pair,
            features,
            theta,
            mu,
            precision,
            loss,
            self.residual,
            row_curvature,
            self.grad,
            self.curvature,
            self.diagonal,
            self.border.cross,
            self.border.fisher,
        )
        self.g_norm = math.sqrt(float(self.grad @ self.grad))


def rows_of(pairs: Pairs, row_scale: np.ndarray | None = None) -> tuple:
    """The row arrays a :class:`_Point` reads, each row's weight times ``row_scale`` (bootstrap counts)."""
    wins, losses = pairs.row_wins, pairs.row_losses
    if row_scale is not None:
        wins, losses = wins * row_scale, losses * row_scale
    return pairs.row_a, pairs.row_b, pairs.row_pair, wins, losses


def contextual_fit(
    pairs: Pairs,
    features: np.ndarray,
    precision: np.ndarray,
    mu: np.ndarray,
    tol: float,
    max_iter: int,
    theta0: np.ndarray | None = None,
    beta0: np.ndarray | None = None,
    row_scale: np.ndarray | None = None,
) -> tuple[Solution, np.ndarray]:
    """Minimise f over (θ, β) by Newton's method (Schur-complement steps, Armijo backtracking) until
    ‖∇f‖₂ <= ``tol``. ``features`` is rows × k in the rows' order of ``pairs`` (``pairs.row_*``);
    ``row_scale`` multiplies each row's weight (bootstrap counts). Returns the solution (``alpha`` 0) and β.

    Raises :class:`Runaway` when the iterates run off (no finite optimum: separation by the covariates).
    """
    n, k = pairs.n_players, features.shape[1]
    mle = not np.any(precision > 0.0)
    rows = rows_of(pairs, row_scale)
    theta = (mu.copy() if theta0 is None else theta0.copy()).astype(np.float64)
    beta = np.zeros(k) if beta0 is None else beta0.astype(np.float64).copy()
    if mle:
        center(theta)
    point = _Point(pairs, rows, features, theta, beta, mu, precision)
    g0 = max(point.g_norm, 1e-300)
    history = [point.g_norm]
    iterations = 0
    while point.g_norm > tol and iterations < max_iter:
        forcing = min(0.5, math.sqrt(point.g_norm / g0))
        y, schur = border_solves(pairs, point.curvature, precision, point.diagonal, point.border, mle)
        z = solve_theta_block(pairs, point.curvature, precision, point.diagonal, point.grad[:n], forcing * 1e-2, mle)
        d_beta = -np.linalg.solve(schur, point.grad[n:] - point.border.cross.T @ z)
        d_theta = -z - y @ d_beta
        slope = float(point.grad[:n] @ d_theta + point.grad[n:] @ d_beta)
        if not slope < 0.0:  # rounding-level trouble: steepest descent on the diagonal
            scale = np.concatenate([point.diagonal[:n], np.diag(point.border.fisher)])
            step = -point.grad / np.where(scale > 0.0, scale, 1.0)
            d_theta, d_beta = step[:n], step[n:]
            slope = float(point.grad @ step)
        t = 1.0
        slack = 1e-12 * (abs(point.f) + 1.0)
        for _ in range(60):
            trial_theta = point.theta + t * d_theta
            if mle:
                center(trial_theta)
            trial = _Point(pairs, rows, features, trial_theta, point.beta + t * d_beta, mu, precision)
            if trial.f <= point.f + 1e-4 * t * slope + slack:
                break
            t *= 0.5
        else:
            break
        point = trial
        history.append(point.g_norm)
        iterations += 1
        if np.max(np.abs(point.theta)) > RUNAWAY or np.max(np.abs(point.beta), initial=0.0) > RUNAWAY:
            raise Runaway(point.theta, 0.0)
    solution = Solution(
        theta=point.theta,
        alpha=0.0,
        converged=point.g_norm <= tol,
        iterations=iterations,
        gradient_norm=point.g_norm,
        objective=point.f,
        method="newton",
        history=history,
    )
    return solution, point.beta


def point_at(pairs: Pairs, features, theta, beta, mu, precision) -> _Point:
    """The objective's pieces at (θ, β): ``curvature`` (per pair), ``diagonal`` (θ block), ``border``
    and each row's ``residual`` (the sandwich's ingredients)."""
    return _Point(pairs, rows_of(pairs), features, theta, beta, mu, precision)
