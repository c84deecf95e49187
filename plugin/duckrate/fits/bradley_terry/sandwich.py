"""Robust (sandwich, M-estimator) covariance of a Bradley-Terry fit: ``H⁻¹ J H⁻¹``.

H is the Hessian of the objective at the optimum (:mod:`.model`, :mod:`.contextual`); J the sum over
*clusters* c of ``g_c g_cᵀ``, g_c the sum of its games' score contributions ``u_r (e_a - e_b, x_r)`` with
``u_r`` the row's df/dd (:func:`.contextual.row_terms`). Without a cluster column each game is its own
cluster (Huber 1967; White 1980; for clustered data Liang and Zeger 1986). J holds the data's terms only, so
with a prior the result is the sampling variance of the MAP estimate. Where the model is right and games are
independent, J ≈ H and the sandwich ≈ the inverse Hessian; where outcomes vary more than the model says
(users who disagree, battles of one conversation that go together) J > H and the intervals widen.

For the plain MLE H is singular along the all-ones direction and J's range is orthogonal to it: the
covariance of the mean-zero θ is ``H⁺ J H⁺`` (the limit of arena-rank's ``(H + εI)⁻¹ J (H + εI)⁻¹`` as its
diagonal regulariser ε -> 0).

*Dense* (up to :data:`.uncertainty.HESSIAN_MAX_PLAYERS` players): H⁺ from the same Cholesky factor as the
inverse-Hessian intervals, J as a dense matrix (a cluster adds the outer product of its nonzero entries),
and each reported variance ``r_iᵀ H⁺ J H⁺ r_i`` exactly, rows on threads (each row's sums run in a fixed
order). *Sparse* (more players): the coefficients' (α, β) variances exactly through the Schur complement
(``S⁻¹ [−Yᵀ, I]`` with ``Y = L⁻¹ B``), and each player's as the sparse inverse-Hessian variance times the
local ratio ``J_ii / H_ii``: exact when the misfit is the same across a player's neighbourhood (then J ≈ κH
locally), an approximation otherwise; docs/bradley_terry.md gives its measured error.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.fits.bradley_terry.contextual import Border, border_solves, row_terms
from duckrate.fits.bradley_terry.pairs import Pairs


def cluster_layout(cluster: np.ndarray | None, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by cluster and the boundaries of each cluster in that order; every row its own cluster
    when ``cluster`` is None. Clusters come in the order of their first row and keep their rows' order (the
    canonical one), so J's sums do not depend on the codes' values or the input's row order."""
    if cluster is None:
        return np.arange(n_rows, dtype=np.int64), np.arange(n_rows + 1, dtype=np.int64)
    codes, first_row, relabelled = np.unique(cluster, return_index=True, return_inverse=True)
    by_first_row = np.empty(codes.shape[0], dtype=np.int64)
    by_first_row[np.argsort(first_row, kind="stable")] = np.arange(codes.shape[0])
    order = np.argsort(by_first_row[relabelled.reshape(-1)], kind="stable").astype(np.int64)
    grouped = by_first_row[relabelled.reshape(-1)][order]
    cuts = np.flatnonzero(grouped[1:] != grouped[:-1]) + 1
    start = np.concatenate([[0], cuts, [n_rows]]).astype(np.int64)
    return order, start


@kernel
def _add_cluster_score(c, row_a, row_b, u, features, order, start, n, g, mark, touched, count):
    """Add cluster ``c``'s summed score to ``g`` (θ entries, then the k coefficients' at ``n + j``), its
    games in row order; each θ index met for the first time in it is appended to ``touched`` (``mark[i] = c``).
    Returns the new length of ``touched``."""
    k = features.shape[1]
    for s in range(start[c], start[c + 1]):
        r = order[s]
        for side in range(2):
            i = row_a[r] if side == 0 else row_b[r]
            if mark[i] != c:
                mark[i] = c
                touched[count] = i
                count += 1
        g[row_a[r]] += u[r]
        g[row_b[r]] -= u[r]
        for j in range(k):
            g[n + j] += u[r] * features[r, j]
    return count


@kernel
def _dense_middle(row_a, row_b, u, features, order, start, n):
    """J = Σ_c g_c g_cᵀ as a dense (n + k) square matrix."""
    k = features.shape[1]
    m = n + k
    middle = np.zeros((m, m))
    g = np.zeros(m)
    mark = np.full(m, -1, dtype=np.int64)
    touched = np.empty(m, dtype=np.int64)
    for c in range(start.shape[0] - 1):
        for j in range(k):
            touched[j] = n + j
        count = _add_cluster_score(c, row_a, row_b, u, features, order, start, n, g, mark, touched, k)
        for p in range(count):
            gp = g[touched[p]]
            for q in range(count):
                middle[touched[p], touched[q]] += gp * g[touched[q]]
        for p in range(count):
            g[touched[p]] = 0.0
    return middle


@parallel_kernel
def _inverse_from_factor(w, n, mle):
    """A = W Wᵀ, minus u uᵀ on the θ block for the plain MLE (W from the dense Cholesky step)."""
    m = w.shape[0]
    out = np.empty((m, m))
    for i in prange(m):
        for j in range(m):
            s = 0.0
            for r in range(m):
                s += w[i, r] * w[j, r]
            if mle and i < n and j < n:
                s -= 1.0 / n
            out[i, j] = s
    return out


@parallel_kernel
def _quadratic_diagonal(rows, middle):
    """``diag(R J Rᵀ)``: each row's ``r J rᵀ`` with its sums in a fixed order (one row per thread)."""
    m = rows.shape[0]
    size = middle.shape[0]
    out = np.empty(m)
    for i in prange(m):
        total = 0.0
        for j in range(size):
            rj = rows[i, j]
            if rj == 0.0:
                continue
            s = 0.0
            for q in range(size):
                s += middle[j, q] * rows[i, q]
            total += rj * s
        out[i] = total
    return out


@kernel
def _middle_diagonal_and_border(row_a, row_b, u, features, order, start, n, y):
    """J's θ diagonal (Σ_c g_ci²) and ``T = Σ_c t_c t_cᵀ`` with ``t_c = g_c,β - Yᵀ g_c,θ`` (k × k)."""
    k = features.shape[1]
    diagonal = np.zeros(n)
    outer = np.zeros((k, k))
    g = np.zeros(n + k)
    mark = np.full(n, -1, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    for c in range(start.shape[0] - 1):
        count = _add_cluster_score(c, row_a, row_b, u, features, order, start, n, g, mark, touched, 0)
        for p in range(count):
            i = touched[p]
            diagonal[i] += g[i] * g[i]
            for j in range(k):
                g[n + j] -= y[i, j] * g[i]
            g[i] = 0.0
        for j in range(k):
            for q in range(k):
                outer[j, q] += g[n + j] * g[n + q]
        for j in range(k):
            g[n + j] = 0.0
    return diagonal, outer


def residuals(pairs: Pairs, features: np.ndarray, theta: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Each game's df/dd at (θ, coefficients) (see :func:`.contextual.row_terms`)."""
    loss, out, curvature = (np.empty(pairs.row_pair.shape[0]) for _ in range(3))
    row_terms(
        pairs.row_a, pairs.row_b, pairs.row_wins, pairs.row_losses, features, theta, coefficients, loss, out, curvature
    )
    return out


def _reported_rows(inverse: np.ndarray, n: int, anchor: int | None, centred: bool) -> np.ndarray:
    """Rows ``r_iᵀ A`` of the reported quantities: θ_i - θ_anchor, θ_i - mean(θ) or θ_i, then the
    coefficients."""
    rows = inverse.copy()
    if anchor is not None:
        rows[:n] -= inverse[anchor]
    elif centred:
        rows[:n] -= inverse[:n].mean(axis=0)
    return rows


def dense_sandwich(
    factor: np.ndarray,
    pairs: Pairs,
    u: np.ndarray,
    features: np.ndarray,
    cluster: np.ndarray | None,
    anchor: int | None,
    centred: bool,
    mle: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Sandwich variances of the reported θ and of the coefficients, exactly, from the dense Hessian's
    inverse factor (:func:`.uncertainty.dense_factor`)."""
    n = pairs.n_players
    inverse = _inverse_from_factor(factor, n, mle)
    order, start = cluster_layout(cluster, u.shape[0])
    middle = _dense_middle(pairs.row_a, pairs.row_b, u, features, order, start, n)
    variance = _quadratic_diagonal(_reported_rows(inverse, n, anchor, centred), middle)
    variance = np.maximum(variance, 0.0)
    if anchor is not None:
        variance[anchor] = 0.0
    return variance[:n], variance[n:]


def sparse_sandwich(
    model_variance: np.ndarray,
    pairs: Pairs,
    curvature: np.ndarray,
    diagonal: np.ndarray,
    precision: np.ndarray,
    border: Border | None,
    u: np.ndarray,
    features: np.ndarray,
    cluster: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sandwich variances without a dense matrix: each player's inverse-Hessian variance
    (``model_variance``, from :func:`.uncertainty.sparse_variances`) times ``J_ii / H_ii``; the
    coefficients' exactly, ``S⁻¹ T S⁻¹`` (see :func:`_middle_diagonal_and_border`)."""
    n = pairs.n_players
    mle = not np.any(precision > 0.0)
    k = features.shape[1]
    if k:
        assert border is not None  # covariates (or α's column of ones) come with the Hessian's border
        y, schur = border_solves(pairs, curvature, precision, diagonal, border, mle)
    else:
        y, schur = np.zeros((n, 0)), np.zeros((0, 0))
    order, start = cluster_layout(cluster, u.shape[0])
    middle_diagonal, outer = _middle_diagonal_and_border(pairs.row_a, pairs.row_b, u, features, order, start, n, y)
    hessian_diagonal = diagonal[:n]
    ratio = np.divide(middle_diagonal, hessian_diagonal, out=np.zeros(n), where=hessian_diagonal > 0.0)
    border_var = np.empty(0)
    if k:
        inverse_schur = np.linalg.inv(schur)
        border_var = np.diag(inverse_schur @ outer @ inverse_schur).copy()
    return model_variance * ratio, border_var
