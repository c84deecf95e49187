"""Every league of a WHR fit by one of the two solvers: :func:`solve_league` picks the solver,
:func:`solve_leagues` runs the leagues side by side (they share nothing, so the bits do not depend on the
thread count)."""

from __future__ import annotations

import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.fits.whole_history.newton import newton_league
from duckrate.fits.whole_history.whr import sweep_league


@kernel
def solve_league(
    newton, lo, hi, unit_day_start, day_step, entry_start, opp_day, score, weight, w2, virtual_games, tol, max_iter, r
):
    """The league of players ``lo:hi`` by Newton's method (:func:`.newton.newton_league`) or, without
    ``newton``, the package's sweeps (:func:`.whr.sweep_league`), from and into ``r``. Returns (iterations,
    converged)."""
    arrays = (unit_day_start, day_step, entry_start, opp_day, score, weight)
    if newton:
        count, done, _ = newton_league(lo, hi, *arrays, w2, virtual_games, tol, max_iter, r)
        return count, done
    return sweep_league(lo, hi, *arrays, w2, virtual_games, tol, max_iter, r)


@parallel_kernel
def solve_leagues(
    newton,
    league_unit_start,
    unit_day_start,
    day_step,
    entry_start,
    opp_day,
    score,
    weight,
    w2,
    virtual_games,
    tol,
    max_iter,
    r,
):
    """:func:`solve_league` for every league in parallel, from and into the ratings per day ``r``. Returns per
    league the iterations and whether it converged."""
    n_leagues = league_unit_start.shape[0] - 1
    iterations = np.zeros(n_leagues, dtype=np.int64)
    converged = np.zeros(n_leagues, dtype=np.bool_)
    for league in prange(n_leagues):
        count, done = solve_league(
            newton,
            league_unit_start[league],
            league_unit_start[league + 1],
            unit_day_start,
            day_step,
            entry_start,
            opp_day,
            score,
            weight,
            w2,
            virtual_games,
            tol,
            max_iter,
            r,
        )
        iterations[league] = count
        converged[league] = done
    return iterations, converged
