"""The grid system's forecast between players whose posteriors are known (e.g. read from a saved state).

Model 2.1's ``L = Σ_j Σ_k ρA(x_j) ρB(x_k) Λ(x_j, x_k)``, P(A wins) + ½ P(draw) in this model, by the
naive sums of Section 4.1 (the replay's reference path, :func:`.replay._naive_luck` for a win): ``Λ·ρB`` once
per player B, then one dot product per pair. The replay's default ``fast`` path agrees to ~1e-13.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.chance.grid import grid_step, luck_table, sigmoid_code, vector_dot
from duckrate.systems.chance.naive import toeplitz_apply


@kernel
def _pair_forecasts(table, rho, a_rows, b_rows):
    """L for each pair of rows of ``rho``; ``table`` is Λ tabulated as :func:`.grid.luck_table` gives it."""
    size = rho.shape[1]
    luck_times = np.zeros((rho.shape[0], size), dtype=np.float64)
    done = np.zeros(rho.shape[0], dtype=np.bool_)
    out = np.empty(a_rows.shape[0], dtype=np.float64)
    for i in range(a_rows.shape[0]):
        b = b_rows[i]
        if not done[b]:
            toeplitz_apply(table, rho[b], luck_times[b], False)  # (Λ ρB)_j = Σ_k ρB_k Λ(x_j, x_k)
            done[b] = True
        out[i] = vector_dot(rho[a_rows[i]], luck_times[b])
    return out


def chance_forecasts(rho: np.ndarray, a_rows: np.ndarray, b_rows: np.ndarray, params: dict) -> np.ndarray:
    """``expected_a`` for each pair (``a_rows[i]``, ``b_rows[i]``) of rows of ``rho`` (players x grid points,
    each row a posterior on the grid of ``params``: the resolved parameters of :data:`.replay.CHANCE`)."""
    size = params["grid_points"]
    if rho.shape[1] != size:
        raise ValueError(f"chance: posteriors of {rho.shape[1]} points; expected grid_points = {size}")
    table = luck_table(1.0, params["beta"], sigmoid_code(params["sigmoid"]), size, grid_step(size, params["grid_max"]))
    return _pair_forecasts(
        table,
        np.ascontiguousarray(rho, dtype=np.float64),
        np.ascontiguousarray(a_rows, dtype=np.int64),
        np.ascontiguousarray(b_rows, dtype=np.int64),
    )
