"""The MM (minorise-maximise) iteration of the MAP paper, section 1.2, computed in log space.

Each iteration maximises the paper's separable minoriser Q_λ, so the log-posterior ℓ rises at every
step (eq. 4). With ``A_i`` player i's (weighted) score, ``B_i = Σ_j n_ij / (γ_i + γ_j)`` and prior
precision ``C_i = 1/σ_i²``, the update (5) is ``γ_i = (C_i/B_i)·W((B_i/C_i)·exp((A_i + μ_i C_i)/C_i))``.
The exponential overflows for strong players (one of the MAP paper's slips, docs/papers.md), so with ``z = log(B_i/C_i) + A_i/C_i + μ_i``
we use ``W(exp z) = ω(z)`` (Wright omega, ``scipy.special.wrightomega``) and ``log ω(z) = z - ω(z)``:

    θ_i ← μ_i + A_i/C_i - ω(z),

with no exponential and no logarithm of ω. ``log B_i = log E_i - θ_i`` where ``E_i`` is i's expected
score, computed by a numba pass over the pairs. For ``C_i = 0`` (plain MLE) the update is the classic
Zermelo/Hunter step ``θ_i ← θ_i + log A_i - log E_i``, then θ is re-centred (ℓ is unchanged by a shift).
The paper starts from γ_i = exp(μ_i) (its text says μ_i, a slip).

Order effect (Hunter 2004, home-field model): after the θ block, α gets its own MM step with θ fixed,
``α ← α + log H - log Σ_pairs n·σ(d)`` (H = side A's total score); each block step maximises a
minoriser touching ℓ at the current point, so ℓ still rises every iteration.
"""

from __future__ import annotations

import numpy as np

from duckrate.fits.bradley_terry.model import center, evaluate, expected_scores, gradient_norm
from duckrate.fits.bradley_terry.pairs import Pairs
from duckrate.fits.bradley_terry.solution import RUNAWAY, Runaway, Solution


def scores(pairs: Pairs) -> tuple[np.ndarray, float]:
    """Each player's weighted score ``A_i`` and side A's total score ``H``."""
    won = np.bincount(pairs.a, weights=pairs.wins, minlength=pairs.n_players)
    won += np.bincount(pairs.b, weights=pairs.losses, minlength=pairs.n_players)
    return won, float(pairs.wins.sum())


def mm_fit(
    pairs: Pairs,
    precision: np.ndarray,
    mu: np.ndarray,
    use_alpha: bool,
    tol: float,
    max_iter: int,
    theta0: np.ndarray | None = None,
    alpha0: float = 0.0,
) -> Solution:
    """Iterate the MM update until ‖∇f‖₂ <= ``tol`` or ``max_iter`` iterations; ``history`` holds ℓ = -f
    after every iteration (the first entry at the start)."""
    n = pairs.n_players
    mle = not np.any(precision > 0.0)
    theta = (mu.copy() if theta0 is None else theta0.copy()).astype(np.float64)
    alpha = float(alpha0) if use_alpha else 0.0
    if mle:
        center(theta)
    from scipy.special import wrightomega  # imported when used: scipy.special costs 0.1 s at import

    won, side_a_score = scores(pairs)
    prior = precision > 0.0
    safe_precision = np.where(prior, precision, 1.0)
    log_precision = np.log(safe_precision)
    won_over_precision = won / safe_precision
    log_won = np.log(np.where(prior, 1.0, won))  # only used where C_i = 0 (then A_i > 0 when the MLE exists)
    grad = np.empty(n + 1)
    curvature = np.empty(pairs.n_pairs)
    diagonal = np.empty(n + 1)
    expected = np.empty(n)
    f = evaluate(pairs.a, pairs.b, pairs.wins, pairs.losses, theta, alpha, mu, precision, grad, curvature, diagonal)
    g_norm = gradient_norm(grad, use_alpha)
    history = [-f]
    iterations = 0
    while g_norm > tol and iterations < max_iter:
        expected_scores(pairs.a, pairs.b, pairs.wins, pairs.losses, theta, alpha, expected)
        log_b = np.log(expected) - theta
        z = log_b - log_precision + won_over_precision + mu
        theta = np.where(prior, mu + won_over_precision - wrightomega(z), theta + log_won - np.log(expected))
        if mle:
            center(theta)
        if use_alpha:
            side_a_expected = expected_scores(pairs.a, pairs.b, pairs.wins, pairs.losses, theta, alpha, expected)
            alpha = alpha + np.log(side_a_score) - np.log(side_a_expected)
        f = evaluate(pairs.a, pairs.b, pairs.wins, pairs.losses, theta, alpha, mu, precision, grad, curvature, diagonal)
        g_norm = gradient_norm(grad, use_alpha)
        history.append(-f)
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
        method="mm",
        history=history,
    )
