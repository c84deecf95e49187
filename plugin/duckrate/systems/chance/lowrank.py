"""The fast match step: the luck matrix replaced by a low-rank factorisation exact to rounding.

On the grid the match step multiplies a vector by the Toeplitz matrix ``T[i, k] = D_θ((i - k)h)`` (Λ for a
win or a loss, D_½ for a draw; ``_chance_grid.luck_table``). For the logistic and normal sigmoids D_θ is
analytic, so T has numerically low rank: ``T ≈ U·Vᵀ`` with rank r = 52 (logistic, β = 0.8, n = 1000,
M = 7; 55 for the draw's D_½, 28 for the normal CDF) leaves every entry within 1e-13 of the largest (the
residual stops shrinking near 1e-15), and a product costs 2·n·r instead of n². An earlier
prototype used a truncated SVD; here the factorisation is an adaptive cross approximation with
complete pivoting (Gaussian elimination stopped early, :func:`cross_approximation`), because

- its stopping rule bounds the largest *entry* of the residual, which bounds the error of every product
  entry by the same number (ρ sums to one); a truncated SVD bounds the spectral norm, and its entries
  stall near ε·σ₁ ≈ 1e-13 at this size, while the cross approximation can go down to ~1e-15;
- it is a plain loop in this module: no LAPACK, no threads, so the factors (and every replay built on
  them) are the same bit for bit whatever the thread settings.

Measured against the naive sums over 3,000 matches among 30 players: max |Δρ| ≈ 2e-16 at this tolerance
(6e-15 at 1e-12, rank 49). Where an entry of T is tiny (β near 1, far-apart players) the absolute error can
be large relative to it; the replay recomputes such matches with the naive sums (``chance.py``).

The factors are cached per process by (sigmoid, β, θ, grid) (:func:`factors`). Where the rank would not pay
(the Laplace sigmoid's kink at 0, or grids too coarse or too large) :func:`factors` returns None and the
caller uses the exact O(n) Laplace sweeps or the naive sums instead.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.chance.grid import grid_step, luck_table

# Stop when the largest residual entry is at most this fraction of the largest entry of T (the residual
# stalls near 1e-15 in double precision; 1e-13 saves ~10% of the rank for no visible loss, see above).
RESIDUAL_TOLERANCE = 1e-13
# Complete pivoting keeps the n x n residual: 8 n² bytes (134 MB at 4097 points). Beyond this size the
# fast path uses the naive sums for the luck step.
MAX_GRID_POINTS = 4097
_MIN_GRID_POINTS = 64  # below this the naive sums are as fast as anything


@kernel
def cross_approximation(table, size, tolerance, max_rank):
    """Complete-pivoting cross approximation of T[i, k] = table[size - 1 + i - k] (size x size).

    Returns (V, Ut, rank, residual): ``T ≈ Σ_m Ut[m, :]ᵀ ⊗ V[:, m]`` in the layouts the products stream
    (V is size x rank, Ut is rank x size), and the largest residual entry left (rank = -1 when ``max_rank``
    steps did not bring it below ``tolerance``).
    """
    n = size - 1
    residual = np.empty((size, size), dtype=np.float64)
    best = 0.0
    best_i = 0
    best_k = 0
    for i in range(size):
        for k in range(size):
            value = table[n + i - k]
            residual[i, k] = value
            if abs(value) > best:
                best, best_i, best_k = abs(value), i, k
    columns = np.zeros((max_rank, size), dtype=np.float64)  # U's columns, scaled by 1/pivot
    rows = np.zeros((max_rank, size), dtype=np.float64)  # V's columns: the pivot rows
    rank = 0
    while best > tolerance:
        if rank == max_rank:
            return np.zeros((size, 0)), np.zeros((0, size)), -1, best
        pivot = residual[best_i, best_k]
        for i in range(size):
            columns[rank, i] = residual[i, best_k] / pivot
        for k in range(size):
            rows[rank, k] = residual[best_i, k]
        # subtract the cross and find the next pivot in the same pass
        best = 0.0
        for i in range(size):
            u = columns[rank, i]
            for k in range(size):
                value = residual[i, k] - u * rows[rank, k]
                residual[i, k] = value
                if abs(value) > best:
                    best, best_i, best_k = abs(value), i, k
        rank += 1
    v = np.empty((size, rank), dtype=np.float64)
    for m in range(rank):
        for k in range(size):
            v[k, m] = rows[m, k]
    return v, columns[:rank].copy(), rank, best


@lru_cache(maxsize=16)
def factors(sigmoid_code: int, beta: float, theta: float, grid_points: int, grid_max: float):
    """Cached (V, Ut, rank) of the luck matrix D_θ on the grid, or None where a factorisation does not pay.

    ``D_θ ≈ Utᵀ·Vᵀ`` in the sense ``(D v)_i = Σ_m Ut[m, i] · Σ_k V[k, m] v_k``. The transpose (B's side of a
    fractional result, D_{1-θ} = D_θᵀ) is the same pair with the roles of U and V exchanged, see
    :func:`transposed`.
    """
    if sigmoid_code == 2 or not (_MIN_GRID_POINTS <= grid_points <= MAX_GRID_POINTS):
        return None
    table = luck_table(theta, beta, sigmoid_code, grid_points, grid_step(grid_points, grid_max))
    max_rank = min(grid_points // 4, 256)
    tolerance = RESIDUAL_TOLERANCE * float(np.max(np.abs(table)))
    v, ut, rank, _ = cross_approximation(table, grid_points, tolerance, max_rank)
    if rank < 0:
        return None
    v.setflags(write=False)
    ut.setflags(write=False)
    return v, ut, rank


def transposed(pair):
    """(V, Ut) of Dᵀ from (V, Ut) of D: D = U Vᵀ gives Dᵀ = V Uᵀ."""
    v, ut, rank = pair
    return np.ascontiguousarray(ut.T), np.ascontiguousarray(v.T), rank


@kernel
def _project_pair(v, va, vb, t_a, t_b):
    """t_a = Vᵀ·va, t_b = Vᵀ·vb (V is size x rank): four rows of V per step, so the accumulators are
    read and written a quarter as often; each t[m] adds its terms in increasing k."""
    size, rank = v.shape
    for m in range(rank):
        t_a[m] = 0.0
        t_b[m] = 0.0
    k = 0
    while k + 3 < size:
        a0, a1, a2, a3 = va[k], va[k + 1], va[k + 2], va[k + 3]
        b0, b1, b2, b3 = vb[k], vb[k + 1], vb[k + 2], vb[k + 3]
        r0, r1, r2, r3 = v[k], v[k + 1], v[k + 2], v[k + 3]
        for m in range(rank):
            c0, c1, c2, c3 = r0[m], r1[m], r2[m], r3[m]
            t_a[m] += ((c0 * a0 + c1 * a1) + c2 * a2) + c3 * a3
            t_b[m] += ((c0 * b0 + c1 * b1) + c2 * b2) + c3 * b3
        k += 4
    while k < size:
        a0, b0, r0 = va[k], vb[k], v[k]
        for m in range(rank):
            t_a[m] += r0[m] * a0
            t_b[m] += r0[m] * b0
        k += 1


@kernel
def _expand_pair(ut, t_a, t_b, out_a, out_b):
    """out_a = Utᵀ·t_a, out_b = Utᵀ·t_b (Ut is rank x size), eight rows of Ut per sweep over the outputs."""
    rank, size = ut.shape
    for i in range(size):
        out_a[i] = 0.0
        out_b[i] = 0.0
    m = 0
    while m + 7 < rank:
        a0, a1, a2, a3 = t_a[m], t_a[m + 1], t_a[m + 2], t_a[m + 3]
        a4, a5, a6, a7 = t_a[m + 4], t_a[m + 5], t_a[m + 6], t_a[m + 7]
        b0, b1, b2, b3 = t_b[m], t_b[m + 1], t_b[m + 2], t_b[m + 3]
        b4, b5, b6, b7 = t_b[m + 4], t_b[m + 5], t_b[m + 6], t_b[m + 7]
        u0, u1, u2, u3 = ut[m], ut[m + 1], ut[m + 2], ut[m + 3]
        u4, u5, u6, u7 = ut[m + 4], ut[m + 5], ut[m + 6], ut[m + 7]
        for i in range(size):
            c0, c1, c2, c3, c4, c5, c6, c7 = u0[i], u1[i], u2[i], u3[i], u4[i], u5[i], u6[i], u7[i]
            out_a[i] += ((((((c0 * a0 + c1 * a1) + c2 * a2) + c3 * a3) + c4 * a4) + c5 * a5) + c6 * a6) + c7 * a7
            out_b[i] += ((((((c0 * b0 + c1 * b1) + c2 * b2) + c3 * b3) + c4 * b4) + c5 * b5) + c6 * b6) + c7 * b7
        m += 8
    while m < rank:
        a0, b0, u0 = t_a[m], t_b[m], ut[m]
        for i in range(size):
            out_a[i] += u0[i] * a0
            out_b[i] += u0[i] * b0
        m += 1


@kernel
def lowrank_pair(fac_v, fac_ut, offset_v, offset_u, rank, size, va, vb, out_a, out_b, t_a, t_b):
    """out_a = D·va and out_b = D·vb for the operator whose factors start at ``offset_v`` / ``offset_u`` of
    the flat factor arrays: one pass over V and one over Ut serve both vectors."""
    v = fac_v[offset_v : offset_v + size * rank].reshape((size, rank))
    ut = fac_ut[offset_u : offset_u + rank * size].reshape((rank, size))
    _project_pair(v, va, vb, t_a, t_b)
    _expand_pair(ut, t_a, t_b, out_a, out_b)


@kernel
def lowrank_single(fac_v, fac_ut, offset_v, offset_u, rank, size, vec, out, t):
    """out = D·vec for the operator whose factors start at ``offset_v`` / ``offset_u``."""
    v = fac_v[offset_v : offset_v + size * rank].reshape((size, rank))
    ut = fac_ut[offset_u : offset_u + rank * size].reshape((rank, size))
    _project_single(v, vec, t)
    for i in range(size):
        out[i] = 0.0
    m = 0
    while m + 7 < rank:
        a0, a1, a2, a3 = t[m], t[m + 1], t[m + 2], t[m + 3]
        a4, a5, a6, a7 = t[m + 4], t[m + 5], t[m + 6], t[m + 7]
        u0, u1, u2, u3 = ut[m], ut[m + 1], ut[m + 2], ut[m + 3]
        u4, u5, u6, u7 = ut[m + 4], ut[m + 5], ut[m + 6], ut[m + 7]
        for i in range(size):
            out[i] += (
                (((((u0[i] * a0 + u1[i] * a1) + u2[i] * a2) + u3[i] * a3) + u4[i] * a4) + u5[i] * a5) + u6[i] * a6
            ) + u7[i] * a7
        m += 8
    while m < rank:
        a0, u0 = t[m], ut[m]
        for i in range(size):
            out[i] += u0[i] * a0
        m += 1


@kernel
def _project_single(v, vec, t):
    size, rank = v.shape
    for m in range(rank):
        t[m] = 0.0
    k = 0
    while k + 3 < size:
        a0, a1, a2, a3 = vec[k], vec[k + 1], vec[k + 2], vec[k + 3]
        r0, r1, r2, r3 = v[k], v[k + 1], v[k + 2], v[k + 3]
        for m in range(rank):
            t[m] += ((r0[m] * a0 + r1[m] * a1) + r2[m] * a2) + r3[m] * a3
        k += 4
    while k < size:
        a0, r0 = vec[k], v[k]
        for m in range(rank):
            t[m] += r0[m] * a0
        k += 1
