"""Every league of a WHR fit by one of the two solvers: :func:`solve_league` picks the solver,
:func:`solve_leagues` runs leagues side by side, and :func:`solve_all` decides which leagues run where.

Threads: a league that holds most of the fit's days (more than half, and at least :data:`THREADED_MIN_DAYS`)
is solved first by Newton's method with helper threads (:func:`.newton.newton_threaded`: numba's thread
count in all); the other leagues then run side by side in a numba parallel region, each on one thread
(:func:`.newton.newton_league`), so the two levels never nest. Leagues share nothing and the Newton solver
gives the same bits with or without helpers, so the result does not depend on the thread count or on which
league ran where.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.fits.whole_history.newton import newton_league, newton_threaded
from duckrate.fits.whole_history.whr import sweep_league

#: A league with fewer days is never solved with helper threads: its passes (a few hundred per solve) are
#: too short to share.
THREADED_MIN_DAYS = 50_000


@kernel
def solve_league(
    newton, lo, hi, unit_day_start, day_step, entry_start, opp_day, score, weight, w2, virtual_games, tol, max_iter, r
):
    """The league of players ``lo:hi`` by Newton's method (:func:`.newton.newton_league`) or, without
    ``newton``, the package's sweeps (:func:`.whr.sweep_league`), on the calling thread, from and into ``r``.
    Returns (iterations, converged)."""
    arrays = (unit_day_start, day_step, entry_start, opp_day, score, weight)
    if newton:
        count, done, _ = newton_league(lo, hi, *arrays, w2, virtual_games, tol, max_iter, r)
        return count, done
    return sweep_league(lo, hi, *arrays, w2, virtual_games, tol, max_iter, r)


@parallel_kernel
def solve_leagues(
    newton,
    leagues,
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
    iterations,
    converged,
):
    """:func:`solve_league` (each on one thread) for the given ``leagues`` in parallel, from and into ``r``,
    with each league's iterations and whether it converged."""
    for k in prange(leagues.shape[0]):
        league = leagues[k]
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


def solve_all(
    newton: bool,
    league_unit_start: np.ndarray,
    arrays: tuple[np.ndarray, ...],
    w2: float,
    virtual_games: float,
    tol: float,
    max_iter: int,
    r: np.ndarray | None = None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every league (``arrays``: ``unit_day_start, day_step, entry_start, opp_day, score, weight``), from the
    ratings per day ``r`` (updated in place; None: all 0): the ratings per day, and per league the iterations
    and whether it converged. ``threads`` (default: numba's thread count) changes which league runs where
    (module docstring), never a bit of the result."""
    unit_day_start = arrays[0]
    n_leagues = league_unit_start.shape[0] - 1
    threads = numba.get_num_threads() if threads is None else max(1, int(threads))
    if r is None:
        r = np.zeros(unit_day_start[-1])
    iterations = np.zeros(n_leagues, dtype=np.int64)
    converged = np.zeros(n_leagues, dtype=np.bool_)
    league_days = np.diff(unit_day_start[league_unit_start])
    rest = np.arange(n_leagues, dtype=np.int64)
    if newton and threads > 1 and n_leagues:
        big = int(np.argmax(league_days))
        if league_days[big] >= THREADED_MIN_DAYS and 2 * league_days[big] > r.shape[0]:
            bounds = (int(league_unit_start[big]), int(league_unit_start[big + 1]))
            count, done, _, _ = newton_threaded(*bounds, arrays, w2, virtual_games, tol, max_iter, r, threads)
            iterations[big], converged[big] = count, done
            rest = rest[rest != big]
    if rest.shape[0] == 1:  # no parallel region for one league
        league = rest[0]
        bounds = (league_unit_start[league], league_unit_start[league + 1])
        iterations[league], converged[league] = solve_league(
            newton, *bounds, *arrays, w2, virtual_games, tol, max_iter, r
        )
    elif rest.shape[0] > 1:
        solve_leagues(
            newton, rest, league_unit_start, *arrays, w2, virtual_games, tol, max_iter, r, iterations, converged
        )
    return r, iterations, converged
