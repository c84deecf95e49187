"""The penalised Bradley-Terry objective, its gradient and its Hessian, over :class:`~._bt_pairs.Pairs`.

With θ the natural-scale strengths (γ = exp θ), α an optional order (side A) effect and per-player prior
precision ``C_i`` and mean ``μ_i`` (the MAP paper, section 1.2, with its sign slip fixed: the prior term
is *subtracted*), the solvers *minimise*

    f(θ, α) = Σ_pairs [ wins·softplus(-d) + losses·softplus(d) ] + ½ Σ_i C_i (θ_i - μ_i)²,
    d = θ_a - θ_b + α,

so ``-f`` is the paper's log-posterior ℓ (up to constants). Its Hessian is ``L_w + diag(C)`` (L_w the
graph Laplacian with weights ``v = (wins + losses)·σ(d)·σ(-d)``) bordered by the α row when α is fitted.
Plain MLE is ``C = 0``; ridge is ``C_i = λ``, ``μ = 0``.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel


@kernel
def logistic_terms(d):
    """At a logit d: ``-log σ(d)``, ``-log σ(-d)``, ``σ(d)`` and ``σ(-d)``, without overflow either side."""
    if d > 0.0:
        e = math.exp(-d)
        softplus_neg = math.log1p(e)
        return softplus_neg, d + softplus_neg, 1.0 / (1.0 + e), e / (1.0 + e)
    e = math.exp(d)
    softplus_pos = math.log1p(e)
    return softplus_pos - d, softplus_pos, e / (1.0 + e), 1.0 / (1.0 + e)


@kernel
def evaluate(a, b, wins, losses, theta, alpha, mu, precision, grad, curvature, diagonal):
    """f at (θ, α); fills ``grad`` (n_players + 1 entries, the last for α), the per-pair curvature ``v``
    and the Hessian's diagonal (for the preconditioner). Returns f."""
    n = theta.shape[0]
    f = 0.0
    for i in range(n):
        gap = theta[i] - mu[i]
        f += 0.5 * precision[i] * gap * gap
        grad[i] = precision[i] * gap
        diagonal[i] = precision[i]
    grad[n] = 0.0
    diagonal[n] = 0.0
    for p in range(a.shape[0]):
        i = a[p]
        j = b[p]
        softplus_neg, softplus_pos, prob, other = logistic_terms(theta[i] - theta[j] + alpha)
        f += wins[p] * softplus_neg + losses[p] * softplus_pos
        r = losses[p] * prob - wins[p] * other  # df/dd
        grad[i] += r
        grad[j] -= r
        grad[n] += r
        v = (wins[p] + losses[p]) * prob * other
        curvature[p] = v
        diagonal[i] += v
        diagonal[j] += v
        diagonal[n] += v
    return f


@kernel
def expected_scores(a, b, wins, losses, theta, alpha, expected):
    """Expected weighted score of every player (``expected[i]``) and of side A overall (returned), at (θ, α)."""
    expected[:] = 0.0
    side_a = 0.0
    for p in range(a.shape[0]):
        d = theta[a[p]] - theta[b[p]] + alpha
        if d > 0.0:
            e = math.exp(-d)
            prob = 1.0 / (1.0 + e)
            other = e / (1.0 + e)
        else:
            e = math.exp(d)
            prob = e / (1.0 + e)
            other = 1.0 / (1.0 + e)
        games = wins[p] + losses[p]
        expected[a[p]] += games * prob
        expected[b[p]] += games * other
        side_a += games * prob
    return side_a


@kernel
def hessian_times(a, b, curvature, precision, x, use_alpha, out):
    """``out = H x`` for the Hessian of :func:`evaluate` (x has n_players + 1 entries; the last is α's
    and is ignored, with out's last entry 0, unless ``use_alpha``)."""
    n = precision.shape[0]
    xa = x[n] if use_alpha else 0.0
    for i in range(n):
        out[i] = precision[i] * x[i]
    total = 0.0
    for p in range(a.shape[0]):
        t = curvature[p] * (x[a[p]] - x[b[p]] + xa)
        out[a[p]] += t
        out[b[p]] -= t
        total += t
    out[n] = total if use_alpha else 0.0


@kernel
def preconditioned_cg(a, b, curvature, precision, diagonal, rhs, use_alpha, rtol, max_iter, x):
    """Solve ``H x = rhs`` by conjugate gradients with the Jacobi preconditioner, from x = 0, until
    ``‖r‖ <= rtol·‖rhs‖``. With C = 0 the θ-block of H is singular along the all-ones vector; ``rhs`` is
    then orthogonal to it (the gradient sums to zero) and CG stays in the consistent subspace. Returns the
    number of iterations. All reductions run sequentially in a fixed order (bit-for-bit reproducible)."""
    m = precision.shape[0] + 1
    last = m if use_alpha else m - 1
    r = rhs.copy()
    if not use_alpha:
        r[m - 1] = 0.0
    z = np.zeros(m)
    q = np.zeros(m)
    hq = np.zeros(m)
    x[:] = 0.0
    rhs_norm = 0.0
    for i in range(last):
        rhs_norm += r[i] * r[i]
    rhs_norm = math.sqrt(rhs_norm)
    if rhs_norm == 0.0:
        return 0
    rz = 0.0
    for i in range(last):
        z[i] = r[i] / diagonal[i]
        q[i] = z[i]
        rz += r[i] * z[i]
    for iteration in range(1, max_iter + 1):
        hessian_times(a, b, curvature, precision, q, use_alpha, hq)
        qhq = 0.0
        for i in range(last):
            qhq += q[i] * hq[i]
        if qhq <= 0.0:
            return iteration
        step = rz / qhq
        r_norm = 0.0
        for i in range(last):
            x[i] += step * q[i]
            r[i] -= step * hq[i]
            r_norm += r[i] * r[i]
        if math.sqrt(r_norm) <= rtol * rhs_norm:
            return iteration
        rz_new = 0.0
        for i in range(last):
            z[i] = r[i] / diagonal[i]
            rz_new += r[i] * z[i]
        beta = rz_new / rz
        rz = rz_new
        for i in range(last):
            q[i] = z[i] + beta * q[i]
    return max_iter


@kernel
def gradient_norm(grad, use_alpha):
    m = grad.shape[0] if use_alpha else grad.shape[0] - 1
    total = 0.0
    for i in range(m):
        total += grad[i] * grad[i]
    return math.sqrt(total)


@kernel
def center(theta):
    """Subtract the mean (sequential sum: reproducible)."""
    total = 0.0
    for i in range(theta.shape[0]):
        total += theta[i]
    mean = total / theta.shape[0]
    for i in range(theta.shape[0]):
        theta[i] -= mean
