"""Whole-History Rating as a batch fit over a matches table: ``duckrate.whr_fit``.

Coulom's WHR (Computers and Games 2008) rates every player at every time step at which they played, from
the whole history at once (the maximum a posteriori of a dynamic Bradley-Terry model with a Wiener-process
prior), as the ``whr`` package (2.2.0) computes it: :mod:`.whr` holds the model, the package's solver
(per-player Newton steps swept Gauss-Seidel) and the sd, :mod:`.newton` a faster solver of the same
maximum (Newton's method on all ratings at once), :mod:`.days` the layout, :mod:`.periods` the time steps.
Each league is an independent fit; :mod:`.leagues` runs them side by side, and a league holding most of the days
on all threads (the same bits on any number of threads).

Ratings are reported on the display scale, ``1500 + 400/ln10 · r``: the package's Elo plus 1500 (its
virtual opponent, rated 0 there, sits at 1500 here). ``sd`` is the package's uncertainty (the sd of one
player's rating with the other players' ratings held at their estimates), ``lower``/``upper`` the rating
∓ 1.96 sd.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import MATCHES, columns_from_polars, prepare_matches
from duckrate.core.parameters import Parameter, nonnegative, positive
from duckrate.core.protocol import Fit
from duckrate.core.scales import DISPLAY_CENTER, NATURAL_PER_POINT, POINTS_PER_NATURAL
from duckrate.fits.whole_history.days import PlayerDays, player_days
from duckrate.fits.whole_history.leagues import solve_all
from duckrate.fits.whole_history.newton import newton_threaded
from duckrate.fits.whole_history.periods import PERIOD, period_starts, resolve_period, time_steps
from duckrate.fits.whole_history.rows import SQL_SCHEMA, history_table
from duckrate.fits.whole_history.whr import variances

METHODS = ("newton", "sweeps")
#: A rating beyond this (natural units, about 3,500 rating points from 1500) means the maximum is not finite.
RUNAWAY = 20.0
DEFAULT_MAX_ITERATIONS = {"newton": 100, "sweeps": 10_000}

WHR_FIT = Fit(
    name="whr_fit",
    input=MATCHES,
    run=lambda columns, priors, given, table: fit_columns(columns, given, table),
    output=SQL_SCHEMA,
    summary=(
        "Whole-History Rating (Coulom 2008): every player's rating at every time step they played, the "
        "maximum a posteriori of a dynamic Bradley-Terry model with a Wiener-process prior, as the whr package."
    ),
    parameters=(
        Parameter("w2", 300.0, "a Wiener variance > 0 in rating points² per time step", positive),
        Parameter(
            "virtual_games",
            2.0,
            "a number >= 0 of virtual draws against a 1500-rated player on each player's first step",
            nonnegative,
        ),
        PERIOD,
        Parameter("method", "newton", "'newton' or 'sweeps'", choices=METHODS),
        Parameter(
            "max_iterations",
            None,
            "an integer >= 1 and < 2^31 (Newton steps, or sweeps over a league's players), or NULL for the "
            f"method's default (newton {DEFAULT_MAX_ITERATIONS['newton']}, sweeps {DEFAULT_MAX_ITERATIONS['sweeps']})",
            lambda v: math.isfinite(v) and 1 <= v < 2**31,
            nullable=True,
            integer=True,
        ),
        Parameter(
            "tolerance",
            1e-6,
            "a tolerance > 0 in rating points (the estimated largest distance of any rating from the optimum)",
            positive,
        ),
    ),
)


def solver_settings(params: dict) -> tuple[bool, float, float, float, int]:
    """``(newton, w2, virtual_games, tol, max_iterations)``: the solvers' arguments from resolved parameters
    (w2 and the tolerance in natural units)."""
    method = params["method"]
    return (
        method == "newton",
        params["w2"] * NATURAL_PER_POINT * NATURAL_PER_POINT,
        params["virtual_games"],
        params["tolerance"] * NATURAL_PER_POINT,
        params["max_iterations"] or DEFAULT_MAX_ITERATIONS[method],
    )


def solve(days: PlayerDays, params: dict, initial: np.ndarray | None = None):
    """Ratings and variances per day (natural units) and per league (iterations, converged). ``initial``:
    the ratings per day (natural units) the solver starts from, e.g. an earlier fit's, with a new day at its
    player's latest rating (a warm start: the same maximum, usually in fewer steps); None starts every
    rating at 0."""
    newton, w2, virtual_games, tol, max_iterations = solver_settings(params)
    arrays = (days.unit_day_start, days.day_step, days.entry_start, days.opp_day, days.score, days.weight)
    n_leagues = days.league_unit_start.shape[0] - 1
    r = np.zeros(days.n_days) if initial is None else np.array(initial, dtype=np.float64)
    if r.shape != (days.n_days,):
        raise ValueError(f"solve: initial has shape {r.shape}; expected ({days.n_days},), one rating per day")
    r, iterations, converged = solve_all(
        newton, days.league_unit_start, arrays, w2, virtual_games, tol, max_iterations, r
    )
    variance = variances(days.unit_day_start, r, *arrays[1:], w2, virtual_games)
    runaway = np.abs(r) > RUNAWAY
    if runaway.any():  # no finite maximum (possible only without virtual games): not converged, whatever the rule
        league_of_day = np.searchsorted(days.league_unit_start, days.day_unit, side="right") - 1
        converged = converged & (np.bincount(league_of_day[runaway], minlength=n_leagues) == 0)
    return r, variance, iterations, converged


def compile_helpers(matches: pl.DataFrame) -> None:
    """Run the Newton solve with one helper thread over ``matches`` (a few steps), so that the kernels only a
    league past :data:`.leagues.THREADED_MIN_DAYS` runs are compiled and cached too (``duckrate warm``)."""
    columns = columns_from_polars(matches)
    prepared = prepare_matches(columns)
    period = resolve_period(None, columns["played_at"].type)
    days = player_days(prepared, time_steps(prepared.time_key, prepared.time_unit, period))
    arrays = (days.unit_day_start, days.day_step, days.entry_start, days.opp_day, days.score, days.weight)
    bounds = (int(days.league_unit_start[0]), int(days.league_unit_start[1]))
    newton_threaded(*bounds, arrays, 1.0, 2.0, 1e-6, 3, np.zeros(days.n_days), 2)


def output_order(league_names: list, days: PlayerDays) -> np.ndarray | None:
    """The order of the days that sorts the rows by league (by name, the unnamed league last), player and step,
    or None when they are in it already. A league's units are in name order and a unit's days in step order
    (:mod:`.days`), so only the leagues' order can differ: the days are taken league block by league block."""
    ranked = sorted(range(len(league_names)), key=lambda i: (league_names[i] is None, league_names[i] or ""))
    if ranked == list(range(len(league_names))):
        return None
    bounds = days.unit_day_start[days.league_unit_start]
    return np.concatenate([np.arange(bounds[i], bounds[i + 1], dtype=np.int64) for i in ranked])


def fit_columns(columns: dict[str, pa.Array], given: dict, table: str = "matches") -> pa.Table:
    """``whr_fit`` over Arrow columns: one row per (league, player, step at which the player played), sorted
    by league, player and step. The layout is let go before the rows are built (at 10M games it would hold
    a gigabyte and more through their strings)."""
    params = WHR_FIT.resolve(given)
    prepared = prepare_matches(columns, table)
    played_at_type = columns["played_at"].type
    period = resolve_period(params["period"], played_at_type)
    days = player_days(prepared, time_steps(prepared.time_key, prepared.time_unit, period))
    r, variance, league_iterations, converged = solve(days, params)
    league_names, state_league, state_player = prepared.league_names, prepared.state_league, prepared.state_player
    players = prepared.players.cast(pa.string())  # before the take: one copy of the names, not one per row
    order = output_order(league_names, days)
    slot = days.unit_slot[days.day_unit]
    day_step, games = days.day_step, days.games
    del days, prepared
    if order is not None:
        slot, day_step, games, r, variance = (values[order] for values in (slot, day_step, games, r, variance))
    league = state_league[slot]
    rating = DISPLAY_CENTER + POINTS_PER_NATURAL * r
    sd = POINTS_PER_NATURAL * np.sqrt(variance)
    return history_table(
        pa.array(league_names, pa.string()).take(pa.array(league)),
        players.take(pa.array(state_player[slot])),
        period_starts(day_step, period, played_at_type),
        day_step,
        rating,
        sd,
        games,
        pa.array(league_iterations[league], pa.int64()),
        pa.array(converged[league], pa.bool_()),
    )


def whr_fit(
    matches: pl.DataFrame,
    w2: float = 300.0,
    virtual_games: float = 2.0,
    period: str | None = None,
    method: str = "newton",
    max_iterations: int | None = None,
    tolerance: float = 1e-6,
) -> pl.DataFrame:
    """Whole-History Rating of every league of a matches table (Coulom 2008; the ``whr`` package's model).

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at`` (TIMESTAMP, DATE or an integer), ``player_a``,
        ``player_b``, ``score_a`` (1 win, 0.5 draw, 0 loss; fractions count as that share of a win) and
        optionally ``league`` (independent fits) and ``weight`` (multiplies a game's log-likelihood).
    w2 : the Wiener variance of a rating in rating points² per time step (the package's ``w2``).
    virtual_games : virtual draws against a 1500-rated player on each player's first step (the prior; the
        package's ``virtual_games``). 0 is allowed, but then nothing fixes the ratings' common level (it is
        wherever the solver, started at 1500, stops) and a player who only wins has no finite rating: a
        league with a rating beyond 1500 ± 3,500 is reported with ``converged`` false.
    period : the time step: 'day' (default for TIMESTAMP and DATE: whole days since 1970-01-01, UTC),
        'week' (ISO, from Monday), 'month' or 'year'; for an integer ``played_at`` each value is a step
        (NULL or 'value'), the gap between two values their difference.
    method : 'newton' (default): Newton's method on all of a league's ratings at once, each step solved by
        conjugate gradients preconditioned with each player's tridiagonal block (:mod:`.newton`);
        'sweeps': the package's algorithm, one Newton step per player in turn (Gauss-Seidel) per sweep
        (:mod:`.whr`). Both reach the same maximum; Newton takes about ten steps where the sweeps take
        hundreds.
    max_iterations : at most this many Newton steps or sweeps per league (NULL: 100 Newton steps, 10,000
        sweeps); ``converged`` says whether the tolerance was reached.
    tolerance : stop when no rating is estimated to be further than this (rating points) from the maximum
        (from the last iterations' largest changes: see :mod:`.newton` and :mod:`.whr`).

    Returns
    -------
    DataFrame, one row per (league, player, step at which the player played): ``league, player,
    period_start`` (the step's first instant, in ``played_at``'s type; the value for integers), ``step``,
    ``rating`` (display scale), ``sd``, ``lower``, ``upper`` (rating ∓ 1.96 sd), ``games`` (that step),
    ``iterations`` (the league's Newton steps or sweeps), ``converged``; sorted by league, player and step.

    Raises
    ------
    DuckrateInputError
        On bad input (the matches checks) or parameters (naming the parameter and what is expected).
    """
    given = {
        "w2": w2,
        "virtual_games": virtual_games,
        "period": period,
        "method": method,
        "max_iterations": max_iterations,
        "tolerance": tolerance,
    }
    if not isinstance(matches, pl.DataFrame):
        raise DuckrateInputError(f"whr_fit: expected a polars DataFrame of matches, got {type(matches).__name__}")
    return cast(pl.DataFrame, pl.from_arrow(fit_columns(columns_from_polars(matches), given)))
