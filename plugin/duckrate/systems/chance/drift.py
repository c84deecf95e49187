"""The drift step (eq. 8): ρ~(x_i) ∝ Σ_k ρ(x_k) K((i - k)h), by whichever exact method suits the kernel.

- ``DRIFT_NONE``: σκ = 0, the identity.
- ``DRIFT_NAIVE``: the O(n²) sums over the whole grid (Section 4.1), with the kernel tabulated by
  ``_chance_grid.kernel_table``.
- ``DRIFT_TAPS``: the Gaussian kernel without the taps below ``TAP_CUTOFF`` of the central one (beyond
  10.06 σκ): O(n·σκ/h). The terms left out weigh less than 1e-22 of the kept ones.
- ``DRIFT_LAPLACE``: the Laplace kernel by Algorithm 4.5's two sweeps, O(n), exact.

All return the unnormalised sums; the caller renormalises on the grid (mass carried past ±M is lost, as
in Example 4.2). Terms that would come from outside the grid are simply absent.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.chance.laplace import grid_pdf_sums
from duckrate.systems.chance.naive import toeplitz_apply

DRIFT_NONE, DRIFT_NAIVE, DRIFT_TAPS, DRIFT_LAPLACE = 0, 1, 2, 3
TAP_CUTOFF = 1e-22


def gaussian_taps(table: np.ndarray, grid_points: int) -> np.ndarray:
    """K(j·h) for j = 0..J from a kernel table (entry n + j), J the last tap >= TAP_CUTOFF."""
    half = table[grid_points - 1 :]
    kept = np.flatnonzero(half >= TAP_CUTOFF)
    return np.ascontiguousarray(half[: int(kept[-1]) + 1])


@kernel
def symmetric_taps(taps, source, out):
    """out_i = Σ_{|j| <= J} taps[|j|] · source_{i+j}, for the i + j on the grid."""
    size = source.shape[0]
    reach = taps.shape[0] - 1
    if 2 * reach + 1 > size:  # a kernel as wide as the grid: the plain sums
        for i in range(size):
            total = 0.0
            for k in range(max(0, i - reach), min(size, i + reach + 1)):
                total += taps[abs(i - k)] * source[k]
            out[i] = total
        return
    for i in range(size):
        out[i] = taps[0] * source[i]
    # interior points: two taps per sweep over shifted views of the source (each sweep vectorises)
    inner = size - 2 * reach
    middle = out[reach : reach + inner]
    j = 1
    while j + 1 <= reach:
        t1, t2 = taps[j], taps[j + 1]
        l1, r1 = source[reach - j : reach - j + inner], source[reach + j : reach + j + inner]
        l2, r2 = source[reach - j - 1 : reach - j - 1 + inner], source[reach + j + 1 : reach + j + 1 + inner]
        for i in range(inner):
            middle[i] += t1 * (l1[i] + r1[i]) + t2 * (l2[i] + r2[i])
        j += 2
    if j == reach:
        t1 = taps[j]
        l1, r1 = source[reach - j : reach - j + inner], source[reach + j : reach + j + inner]
        for i in range(inner):
            middle[i] += t1 * (l1[i] + r1[i])
    # the first and last `reach` points: only the terms that stay on the grid
    for edge in range(2 * reach):
        i = edge if edge < reach else size - 2 * reach + edge
        total = taps[0] * source[i]
        for j in range(1, reach + 1):
            if i - j >= 0:
                total += taps[j] * source[i - j]
            if i + j < size:
                total += taps[j] * source[i + j]
        out[i] = total


@kernel
def drift(method, table, taps, q, source, out):
    """out_i ∝ Σ_k source_k K((i - k)h) (unnormalised) by ``method``; ``q`` = e^(-h/b) for the Laplace kernel."""
    if method == DRIFT_NONE:
        for i in range(source.shape[0]):
            out[i] = source[i]
    elif method == DRIFT_NAIVE:
        toeplitz_apply(table, source, out, False)
    elif method == DRIFT_LAPLACE:
        grid_pdf_sums(source, q, out)
    else:
        symmetric_taps(taps, source, out)
