"""The naive algorithms of Section 4.1: the reference every faster path is checked against.

Two forms of the same sums:

- :func:`posterior` and :func:`drift` take an arbitrary luck matrix Λ(a_j, b_k) and kernel matrix K(x_i, x_k)
  on arbitrary finite supports S_A, S_B (eq. 7 with results θ as in eq. 1, and eq. 8), so the paper's worked
  examples (4.1 with Λ = x/(x+y), 4.2 with a box kernel) can be replayed exactly as printed.
- :func:`toeplitz_apply` is the same sums on the grid, where Λ and K depend on i - k only and come as
  tables of the 2n + 1 grid differences (``_chance_grid.luck_table`` / ``kernel_table``): O(n²) per match,
  no approximation at all.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel


def posterior(rho_a, rho_b, lam_ab, lam_ba=None, theta: float = 1.0):
    """One match by eq. (1) / (7) on finite supports: (ρA', ρB', expected score of A).

    Parameters
    ----------
    rho_a, rho_b : probabilities of A on S_A = (a_j) and of B on S_B = (b_k).
    lam_ab : matrix Λ(a_j, b_k), shape (|S_A|, |S_B|).
    lam_ba : matrix Λ(b_k, a_j), shape (|S_B|, |S_A|); default ``1 - lam_ab.T`` (Model 2.1's symmetry).
    theta : A's result, 1 a win, 0 a loss, ½ a draw.

    ``ρA'(a) ∝ ρA(a) Σ_k ρB(b_k) Λ(a, b_k)^θ Λ(b_k, a)^(1-θ)`` and ``ρB'(b) ∝ ρB(b) Σ_j ρA(a_j)
    Λ(a_j, b)^θ Λ(b, a_j)^(1-θ)``, both from the pre-match vectors (Example 4.1); the expected score is
    ``Σ_j Σ_k ρA(a_j) ρB(b_k) Λ(a_j, b_k)`` (Model 2.1's L).
    """
    rho_a = np.asarray(rho_a, dtype=np.float64)
    rho_b = np.asarray(rho_b, dtype=np.float64)
    lam_ab = np.asarray(lam_ab, dtype=np.float64)
    lam_ba = 1.0 - lam_ab.T if lam_ba is None else np.asarray(lam_ba, dtype=np.float64)
    factor_a = lam_ab**theta * lam_ba.T ** (1.0 - theta)  # [j, k]: Λ(a_j, b_k)^θ Λ(b_k, a_j)^(1-θ)
    new_a = rho_a * (factor_a @ rho_b)
    new_b = rho_b * (rho_a @ factor_a)
    return new_a / new_a.sum(), new_b / new_b.sum(), float(rho_a @ lam_ab @ rho_b)


def drift(rho, kernel_matrix):
    """Eq. (8): ρ~(x_i) ∝ Σ_k ρ(x_k) K(x_i, x_k), renormalised on the support (mass leaving it is dropped)."""
    out = np.asarray(kernel_matrix, dtype=np.float64) @ np.asarray(rho, dtype=np.float64)
    return out / out.sum()


@kernel
def toeplitz_apply(table, v, out, flip):
    """out_i = Σ_k v_k D((i - k)h), or Σ_k v_k D((k - i)h) with ``flip``; D tabulated at index n + (i - k).

    Each out_i is summed over k in increasing order (written as one axpy per k, which vectorises).
    """
    size = v.shape[0]
    n = size - 1
    for i in range(size):
        out[i] = 0.0
    # D((k - i)h) = table[n + k - i] = reversed[n - k + i]: both cases read table[n - k + i] of one table
    source = table[::-1].copy() if flip else table
    for k in range(size):
        weight = v[k]
        column = source[n - k : n - k + size]
        for i in range(size):
            out[i] += weight * column[i]
