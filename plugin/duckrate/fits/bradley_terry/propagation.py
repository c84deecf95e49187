"""Marginal variances of a sparse Bradley-Terry Hessian by Gaussian belief propagation, in O(pairs) per sweep.

The Laplace approximation of a fit is the Gaussian with precision matrix ``H = L_w + diag(C)`` (its graph
Laplacian with the per-pair curvatures ``v`` as weights, plus the prior precisions). Gaussian belief
propagation (Weiss & Freeman, "Correctness of belief propagation in Gaussian graphical models of arbitrary
topology", 2001) passes one precision message per edge direction,

    P_{i→j} = -w_ij² / (H_ii + Σ_{k ∈ N(i), k ≠ j} P_{k→i}),      marginal precision  P_i = H_ii + Σ_k P_{k→i},

and reports ``1/P_i`` as the variance of θ_i. On a tree it is exact. Our H is an M-matrix (non-positive
off-diagonals), so with a prior it is walk-summable and the messages converge (Malioutov, Johnson &
Willsky, "Walk-sums and belief propagation in Gaussian graphical models", 2006); the variances then count
every walk that returns to i by retracing its steps, which is all of them on a tree and most of them on the
sparse, high-degree graphs of real match data, and never more than the true variance. What they leave out
are the returns around loops and the common level that only the whole graph pins down, so they estimate
the variance of θ_i about the mean (the reported convention for MLE and ridge fits); the caller adds the
level where the report needs it.

The sweeps are synchronous (every message from the previous sweep's values) and every sum runs in a fixed
order, so the result does not depend on the thread count.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel
from duckrate.fits.bradley_terry.pairs import group_pairs

#: Stop when no marginal precision changed by more than this, relatively, in a sweep.
RELATIVE_TOLERANCE = 1e-13
MAX_SWEEPS = 500


@kernel
def undirected_edges(a, b, weight, n_players):
    """Merge ordered pairs (a, b) and (b, a) into one undirected edge (lo < hi) with the summed weight
    (:func:`._bt_pairs.group_pairs` on (min, max): edges grouped by ``lo``, then in order of their first pair)."""
    n_pairs = a.shape[0]
    lo = np.empty(n_pairs, dtype=np.int64)
    hi = np.empty(n_pairs, dtype=np.int64)
    for p in range(n_pairs):
        lo[p] = min(a[p], b[p])
        hi[p] = max(a[p], b[p])
    edge, edge_lo, edge_hi = group_pairs(lo, hi, n_players)
    total = np.zeros(edge_lo.shape[0], dtype=np.float64)
    for p in range(n_pairs):
        total[edge[p]] += weight[p]
    return edge_lo, edge_hi, total


@kernel
def propagated_precisions(lo, hi, w, diagonal):
    """Marginal precisions ``P_i`` of the Gaussian with precision ``H`` (diagonal ``diagonal``,
    off-diagonal ``-w`` on each undirected edge) after Gaussian belief propagation has converged.

    Returns ``(precisions, sweeps)``; ``sweeps`` is -1 when a cavity precision became non-positive (the
    messages diverge: too little information around some player) or the sweeps did not converge."""
    n = diagonal.shape[0]
    m = lo.shape[0]
    to_hi = np.zeros(m)  # message lo -> hi
    to_lo = np.zeros(m)  # message hi -> lo
    w2 = w * w
    marginal = diagonal.copy()
    for sweep in range(1, MAX_SWEEPS + 1):
        for e in range(m):
            cavity_lo = marginal[lo[e]] - to_lo[e]
            cavity_hi = marginal[hi[e]] - to_hi[e]
            if not (cavity_lo > 0.0 and cavity_hi > 0.0):
                return marginal, -1
            to_hi[e] = -w2[e] / cavity_lo
            to_lo[e] = -w2[e] / cavity_hi
        updated = diagonal.copy()
        for e in range(m):
            updated[hi[e]] += to_hi[e]
            updated[lo[e]] += to_lo[e]
        change = 0.0
        for i in range(n):
            if not updated[i] > 0.0:
                return updated, -1
            change = max(change, abs(updated[i] - marginal[i]) / updated[i])
        marginal = updated
        if change <= RELATIVE_TOLERANCE:
            return marginal, sweep
    return marginal, -1
