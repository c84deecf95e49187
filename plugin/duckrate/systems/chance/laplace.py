"""The O(n) Laplace algorithms of Section 4.3: Algorithm 4.5 (sums of Laplace PDFs) and 4.6 (of CDFs).

With ``f(d | b) = e^(-|d|/b)/(2b)`` and ``F(d | b)`` the Laplace CDF (½e^(d/b) for d < 0, 1 - ½e^(-d/b) for
d >= 0), and a distribution ρ on points x_1..x_n,

    Q(y) = Σ_k ρ(x_k) f(y - x_k | b)        (Algorithm 4.5: the drift step with a Laplace kernel)
    T(y) = Σ_k ρ(x_k) F(y - x_k | b)        (Algorithm 4.6: the match step with a Laplace sigmoid)

are evaluated at all query points in one forward and one backward sweep, by Observation 4.4: between
points the left part decays by e^(-Δ/b) and so does the right part read backwards. Every quantity carried
is a sum of non-negative terms and every step multiplies by a factor below one, so the sums keep their
relative accuracy (the right part is swept backwards, as the paper advises, never grown by e^(+Δ/b)).

:func:`laplace_pdf_sums` / :func:`laplace_cdf_sums` are the paper's algorithms on arbitrary point sets
(merged in sorted order); :func:`grid_pdf_sums` / :func:`grid_cdf_sums` are the same sweeps on the grid,
where Δ is the constant grid step and e^(-Δ/b) is computed once. The grid versions leave out the constant
1/(2b) of the PDF (the drift is renormalised anyway).
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel


@kernel
def laplace_pdf_sums(x, rho, y, b):
    """Algorithm 4.5: Q(y_i) = Σ_k ρ_k f(y_i - x_k | b) for every query y_i (any order, any points)."""
    x_order = np.argsort(x, kind="mergesort")
    y_order = np.argsort(y, kind="mergesort")
    n, m = x.shape[0], y.shape[0]
    out = np.zeros(m, dtype=np.float64)
    # forward: x_k <= y (an x at the same point as a query counts on the left)
    left = 0.0
    i = j = 0
    z0 = -math.inf
    while j < m:
        take_x = i < n and x[x_order[i]] <= y[y_order[j]]
        z = x[x_order[i]] if take_x else y[y_order[j]]
        if left != 0.0:
            left *= math.exp(-(z - z0) / b)
        z0 = z
        if take_x:
            left += rho[x_order[i]]
            i += 1
        else:
            out[y_order[j]] = left
            j += 1
    # backward: x_k > y
    right = 0.0
    i, j = n - 1, m - 1
    z0 = math.inf
    while j >= 0:
        take_x = i >= 0 and x[x_order[i]] > y[y_order[j]]
        z = x[x_order[i]] if take_x else y[y_order[j]]
        if right != 0.0:
            right *= math.exp(-(z0 - z) / b)
        z0 = z
        if take_x:
            right += rho[x_order[i]]
            i -= 1
        else:
            out[y_order[j]] += right
            j -= 1
    for j in range(m):
        out[j] /= 2.0 * b
    return out


@kernel
def laplace_cdf_sums(x, rho, y, b):
    """Algorithm 4.6: T(y_i) = Σ_k ρ_k F(y_i - x_k | b) for every query y_i (any order, any points).

    T = M - L + R with M = Σ_{x_k <= y} ρ_k, L = Σ_{x_k <= y} ½ρ_k e^((x_k - y)/b) and
    R = Σ_{x_k > y} ½ρ_k e^((y - x_k)/b); M - L is a sum of terms ρ_k (1 - ½e^(..)) >= ρ_k/2.
    """
    x_order = np.argsort(x, kind="mergesort")
    y_order = np.argsort(y, kind="mergesort")
    n, m = x.shape[0], y.shape[0]
    out = np.zeros(m, dtype=np.float64)
    mass = 0.0
    left = 0.0
    i = j = 0
    z0 = -math.inf
    while j < m:
        take_x = i < n and x[x_order[i]] <= y[y_order[j]]
        z = x[x_order[i]] if take_x else y[y_order[j]]
        if left != 0.0:
            left *= math.exp(-(z - z0) / b)
        z0 = z
        if take_x:
            mass += rho[x_order[i]]
            left += 0.5 * rho[x_order[i]]
            i += 1
        else:
            out[y_order[j]] = mass - left
            j += 1
    right = 0.0
    i, j = n - 1, m - 1
    z0 = math.inf
    while j >= 0:
        take_x = i >= 0 and x[x_order[i]] > y[y_order[j]]
        z = x[x_order[i]] if take_x else y[y_order[j]]
        if right != 0.0:
            right *= math.exp(-(z0 - z) / b)
        z0 = z
        if take_x:
            right += 0.5 * rho[x_order[i]]
            i -= 1
        else:
            out[y_order[j]] += right
            j -= 1
    return out


@kernel
def grid_pdf_sums(rho, q, out):
    """out_i = Σ_k ρ_k q^|i-k| (Algorithm 4.5 on the grid, q = e^(-h/b), without the 1/(2b))."""
    size = rho.shape[0]
    left = 0.0
    for i in range(size):
        left = q * left + rho[i]
        out[i] = left
    right = 0.0
    for i in range(size - 2, -1, -1):
        right = q * (right + rho[i + 1])
        out[i] += right


@kernel
def grid_cdf_sums(rho, q, out, mirror):
    """out_i = Σ_k ρ_k F((i - k)h | a) (Algorithm 4.6 on the grid, q = e^(-h/a)); with ``mirror``,
    Σ_k ρ_k F((k - i)h | a), the same sweeps read from the other end of the grid."""
    size = rho.shape[0]
    last = size - 1
    mass = 0.0
    left = 0.0
    for step in range(size):
        i = last - step if mirror else step
        mass += rho[i]
        left = q * left + 0.5 * rho[i]
        out[i] = mass - left
    right = 0.0
    for step in range(size - 2, -1, -1):
        i = last - step if mirror else step
        previous = i - 1 if mirror else i + 1
        right = q * (right + 0.5 * rho[previous])
        out[i] += right
