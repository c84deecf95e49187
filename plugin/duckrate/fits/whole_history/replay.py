"""Whole-History Rating as a replay with honest forecasts: ``duckrate.whr`` (``whr_replay`` in SQL).

A whole-history fit cannot be scored on the games it was fitted to. Here every match of a time step t is
forecast from the fit over the league's steps strictly before t, so the rows compare with Elo's, Glicko's and
TrueSkill's on equal terms (``calibration_summary``, ``loss_curve``, ``tune``):

- The league's steps with games, s_1 < s_2 < ..., are taken in order. The fit (:mod:`.newton` or the sweeps of
  :mod:`.whr`, the model of ``whr_fit``) is redone over the steps so far after every ``refit_every`` of them and
  after the last: after s_k, s_2k, ... With ``refit_every`` 1 each step's forecasts come from the fit over
  every step before it (the ``whr_fit`` of those matches, to the solver's tolerance).
- A refit starts from the fit before it (a warm start: ratings at the old player-days as they were, a new
  player-day at the estimate below), over the same layout a cold fit would build (:func:`prefix_layout`), and
  reaches the same maximum. It costs about as much as a cold fit of the history so far (measured: the
  tolerance takes several Newton steps however close the start), so a replay costs about ``(R + 1)/2`` cold
  fits of the whole history for R refits.
- Between refits, each step's games update the estimates of the players in them at once (a causal filter
  step, :func:`_filter_step`): the new day's ratings maximise the step's games' likelihood times, for a
  player seen before, a normal prior at their latest estimate with its variance grown by ``w2`` per step
  since, and, for a newcomer, the virtual draws of WHR's prior; the step's players are updated together
  (Gauss-Seidel Newton steps to the solver's tolerance). It reads only the step's own games and earlier
  estimates, and its estimates are the refit's starting point. (Measured in docs/whole-history.md, for a few
  percent of the time: with it, rare refits forecast as well as refits at every step; without it, a rarely
  refitted replay forecasts from stale ratings.)

Columns of a row (display scale, ``1500 + 400/ln10 · r``): ``expected_a`` is the Bradley-Terry forecast on
the two ratings before, ``1 / (1 + 10^((R_b - R_a)/400))`` (the ``whr`` package's forecast; a draw counts as
half a win); ``rating_*_before`` is the player's latest estimate (at their latest step in the last fit, or
their filtered estimate at a later step) and ``sd_*_before`` its sd with the Wiener variance ``w2`` per step
added for the steps elapsed since; a player never seen is at 1500, with the sd of the virtual draws' prior
(``2/sqrt(virtual_games)`` natural units, infinite without them). ``rating_*_after`` and ``sd_*_after`` are
the player's rating and sd at this step in the first fit that includes the step (the refit at the end of its
block of ``refit_every`` steps, or the last one): with ``refit_every`` 1 they use only the games up to this
step. Sds are WHR's (``whr_fit``'s): a rating's sd with the other ratings held at their estimates.

Leagues replay side by side (one thread each); a refit of at least :data:`.leagues.THREADED_MIN_DAYS` player-days
waits for any other such refit to finish and then takes Newton's helper threads (the same bits), so that one
solver's workspace is in memory at a time (measured over 10M matches in two leagues: peak 8.07 GB -> 6.09 GB,
85 s -> 88 s, with the in-place last refit of :func:`refit`).

A replay needs the league's whole history before each step: a saved state cannot be continued (the
continuation refuses with ``RebuildRequired``, and the dbt model then replays in full) and the replay never
runs in chunks.
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np
import polars as pl

from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.matches import PreparedMatches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import reject_priors
from duckrate.core.protocol import Preset
from duckrate.core.scales import DISPLAY_CENTER, NATURAL_PER_POINT, POINTS_PER_NATURAL
from duckrate.fits.league_games import each_league, league_rows
from duckrate.fits.whole_history.days import PlayerDays, player_days
from duckrate.fits.whole_history.fit import WHR_FIT, solver_settings
from duckrate.fits.whole_history.leagues import THREADED_MIN_DAYS, solve_league
from duckrate.fits.whole_history.newton import newton_threaded
from duckrate.fits.whole_history.periods import checked_period, resolve_period, time_steps
from duckrate.fits.whole_history.whr import day_derivatives, variances, variances_into
from duckrate.systems.elo import logistic_forecasts
from duckrate.systems.saved_state import EndState, StartState, StateField
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame, whole_history_resume

#: A step of the filter moves a rating by at most this (natural units), so that a newcomer without virtual
#: games who only wins (no finite maximum) stays finite.
FILTER_MAX_STEP = 1.0
#: The filter's Gauss-Seidel sweeps over a step's players stop after this many.
FILTER_SWEEPS = 50

REFIT_EVERY = Parameter(
    "refit_every",
    1825,
    "an integer >= 1: the fit is redone after every this many of a league's time steps with games (1: "
    "every step's forecasts from the fit over all steps before it)",
    lambda v: math.isfinite(v) and 1 <= v < 2**31,
    integer=True,
)


@kernel
def _prefix_layout(lo, hi, unit_day_start, unit_count, day_step, entry_start, opp_day, score, weight):
    """The player-days of units ``lo .. hi - 1`` up to each unit's first ``unit_count`` days, compacted as
    :func:`.days.player_days` lays out the same games (units without days left out, days and entries in
    the same order): ``(unit_day_start, day_step, entry_start, opp_day, score, weight, full_day)``,
    ``full_day`` mapping each compact day back."""
    n_units = 0
    n_days = 0
    n_entries = 0
    for u in range(lo, hi):
        count = unit_count[u]
        if count > 0:
            n_units += 1
            first = unit_day_start[u]
            n_days += count
            n_entries += entry_start[first + count] - entry_start[first]
    day_lo = unit_day_start[lo]
    compact_day = np.full(unit_day_start[hi] - day_lo, -1, dtype=np.int64)  # league day -> compact (-1: outside)
    c_unit_day_start = np.empty(n_units + 1, dtype=np.int64)
    c_day_step = np.empty(n_days, dtype=np.int64)
    c_entry_start = np.empty(n_days + 1, dtype=np.int64)
    full_day = np.empty(n_days, dtype=np.int64)
    unit = 0
    day = 0
    for u in range(lo, hi):
        count = unit_count[u]
        if count == 0:
            continue
        c_unit_day_start[unit] = day
        unit += 1
        for d in range(unit_day_start[u], unit_day_start[u] + count):
            compact_day[d - day_lo] = day
            full_day[day] = d
            c_day_step[day] = day_step[d]
            day += 1
    c_unit_day_start[n_units] = n_days
    weighted = weight.shape[0] > 1
    c_opp_day = np.empty(n_entries, dtype=np.int64)
    c_score = np.empty(n_entries, dtype=np.float64)
    c_weight = np.empty(n_entries if weighted else 1, dtype=np.float64)
    if not weighted:
        c_weight[0] = 1.0
    entry = 0
    for c in range(n_days):
        d = full_day[c]
        c_entry_start[c] = entry
        for e in range(entry_start[d], entry_start[d + 1]):
            c_opp_day[entry] = compact_day[opp_day[e] - day_lo]
            c_score[entry] = score[e]
            if weighted:
                c_weight[entry] = weight[e]
            entry += 1
    c_entry_start[n_days] = entry
    return c_unit_day_start, c_day_step, c_entry_start, c_opp_day, c_score, c_weight, full_day


def prefix_layout(days: PlayerDays, lo: int, hi: int, unit_count: np.ndarray) -> tuple[PlayerDays, np.ndarray]:
    """The :class:`.days.PlayerDays` of units ``lo .. hi - 1`` (one league) up to each unit's first
    ``unit_count[u]`` days (a prefix in time: the days up to some step), laid out as a fit over those games
    alone lays them out, and each of its days' index in ``days``."""
    unit_day_start, day_step, entry_start, opp_day, score, weight, full_day = _prefix_layout(
        lo, hi, days.unit_day_start, unit_count, days.day_step, days.entry_start, days.opp_day, days.score, days.weight
    )
    n_units = unit_day_start.shape[0] - 1
    day_unit = np.repeat(np.arange(n_units, dtype=np.int64), np.diff(unit_day_start))
    prefix = PlayerDays(
        league_unit_start=np.array([0, n_units], dtype=np.int64),
        unit_slot=days.unit_slot[lo:hi][unit_count[lo:hi] > 0],
        unit_day_start=unit_day_start,
        day_unit=day_unit,
        day_step=day_step,
        entry_start=entry_start,
        opp_day=opp_day,
        score=score,
        weight=weight,
        row_day=np.empty((0, 2), dtype=np.int64),
    )
    return prefix, full_day


@kernel
def _filter_step(new_days, unit_day_start, day_unit, day_step, entry_start, opp_day, score, weight, r, var, settings):
    """The causal filter over one step's new player-days ``new_days`` (their ratings ``r`` start at their
    prior's mode): Gauss-Seidel Newton steps on the step's log-posterior (its games; a normal prior at the
    player's previous day's estimate, of variance ``var`` there plus ``w2`` per step since; the virtual draws
    on a newcomer's first day) to the tolerance, then each day's variance ``-1/h`` (the others held)."""
    w2, virtual_games, tol = settings[0], settings[1], settings[2]
    n = new_days.shape[0]
    for _ in range(FILTER_SWEEPS):
        largest = 0.0
        for k in range(n):
            d = new_days[k]
            first = d == unit_day_start[day_unit[d]]
            g, h = day_derivatives(d, r, entry_start, opp_day, score, weight, first, virtual_games)
            if not first:
                inv = 1.0 / (var[d - 1] + w2 * (day_step[d] - day_step[d - 1]))
                g -= (r[d] - r[d - 1]) * inv
                h -= inv
            if not h < 0.0:
                continue
            x = min(max(g / h, -FILTER_MAX_STEP), FILTER_MAX_STEP)
            r[d] -= x
            largest = max(largest, abs(x))
        if largest <= tol:
            break
    for k in range(n):
        d = new_days[k]
        first = d == unit_day_start[day_unit[d]]
        _, h = day_derivatives(d, r, entry_start, opp_day, score, weight, first, virtual_games)
        if not first:
            h -= 1.0 / (var[d - 1] + w2 * (day_step[d] - day_step[d - 1]))
        var[d] = -1.0 / h if h < 0.0 else np.inf


@inlined_kernel
def _latest(u, known, unit_day_start, day_step, r, var, step, w2, prior_var):
    """Unit ``u``'s rating and variance at ``step``: at its latest known day, the variance grown by ``w2`` per
    step since; the prior's (0, ``prior_var``) before any."""
    if known[u] == 0:
        return 0.0, prior_var
    last = unit_day_start[u] + known[u] - 1
    return r[last], var[last] + w2 * (step - day_step[last])


@kernel
def _forecast_steps(
    step_lo,
    step_hi,
    step_start,
    league_rows,
    row_day,
    unit_day_start,
    day_unit,
    day_step,
    entry_start,
    opp_day,
    score,
    weight,
    unit_count,
    known,
    filtered,
    r,
    var,
    settings,
    outputs,
):
    """The rows of the league's steps ``step_lo .. step_hi - 1`` (``league_rows[step_start[i] :
    step_start[i + 1]]`` for step i): each forecast from the players' latest known days (``known[u]`` of
    unit u's days: the fitted ones, or with ``filtered`` every one so far), then the step's new days added to
    the units' ``unit_count`` at their warm start: with ``filtered`` the causal filter's estimates
    (:func:`_filter_step`), without it the player's latest rating."""
    w2, prior_var = settings[0], settings[3]
    seq, expected_a, rating_a_before, rating_b_before, sd_a_before, sd_b_before, _, _, _, _ = outputs
    new_days = np.empty(2 * (step_start[step_hi] - step_start[step_lo]), dtype=np.int64)
    for i in range(step_lo, step_hi):
        lo, hi = step_start[i], step_start[i + 1]
        step = day_step[row_day[league_rows[lo], 0]]
        for k in range(lo, hi):
            row = league_rows[k]
            u_a = day_unit[row_day[row, 0]]
            u_b = day_unit[row_day[row, 1]]
            r_a, var_a = _latest(u_a, known, unit_day_start, day_step, r, var, step, w2, prior_var)
            r_b, var_b = _latest(u_b, known, unit_day_start, day_step, r, var, step, w2, prior_var)
            seq[row] = k + 1
            expected_a[row] = 1.0 / (1.0 + math.exp(r_b - r_a))
            rating_a_before[row] = DISPLAY_CENTER + POINTS_PER_NATURAL * r_a
            rating_b_before[row] = DISPLAY_CENTER + POINTS_PER_NATURAL * r_b
            sd_a_before[row] = POINTS_PER_NATURAL * math.sqrt(var_a)
            sd_b_before[row] = POINTS_PER_NATURAL * math.sqrt(var_b)
        n_new = 0
        for k in range(lo, hi):
            row = league_rows[k]
            for side in range(2):
                d = row_day[row, side]
                u = day_unit[d]
                if d == unit_day_start[u] + unit_count[u]:  # the unit's next day, not added yet
                    unit_count[u] += 1
                    new_days[n_new] = d
                    n_new += 1
                    first = d == unit_day_start[u]
                    r[d] = 0.0 if first else r[d - 1]
                    var[d] = prior_var if first else var[d - 1] + w2 * (step - day_step[d - 1])
        if filtered:
            _filter_step(
                new_days[:n_new],
                unit_day_start,
                day_unit,
                day_step,
                entry_start,
                opp_day,
                score,
                weight,
                r,
                var,
                settings,
            )


@kernel
def _record_after(step_lo, step_hi, step_start, league_rows, row_day, r, var, outputs):
    """The after-columns of the rows of steps ``step_lo .. step_hi - 1`` from the fit just made."""
    _, _, _, _, _, _, rating_a_after, rating_b_after, sd_a_after, sd_b_after = outputs
    for k in range(step_start[step_lo], step_start[step_hi]):
        row = league_rows[k]
        day_a, day_b = row_day[row, 0], row_day[row, 1]
        rating_a_after[row] = DISPLAY_CENTER + POINTS_PER_NATURAL * r[day_a]
        rating_b_after[row] = DISPLAY_CENTER + POINTS_PER_NATURAL * r[day_b]
        sd_a_after[row] = POINTS_PER_NATURAL * math.sqrt(var[day_a])
        sd_b_after[row] = POINTS_PER_NATURAL * math.sqrt(var[day_b])


def refit(
    days: PlayerDays,
    lo: int,
    hi: int,
    unit_count: np.ndarray,
    r: np.ndarray,
    var: np.ndarray,
    params: dict,
    alone: bool = False,
):
    """The fit of league units ``lo .. hi - 1`` over their first ``unit_count`` days, warm-started from ``r``
    at those days; the ratings and variances written back into ``r`` and ``var``. ``alone``: no other league
    runs beside this one, so Newton's method may take numba's threads when the fit has at least
    :data:`.leagues.THREADED_MIN_DAYS` days (the same bits as on one). Returns (iterations, converged).

    A fit over every day of the league (the last refit, and the only one of a league with at most
    ``refit_every`` steps) runs in place over the league's part of ``days``; an earlier one over a compact
    copy of the prefix (:func:`prefix_layout`). Both lay the same games out in the same order, so the two
    give the same bits; the first saves the copy (at 10M matches, about a gigabyte per league)."""
    _, w2, virtual_games, _, _ = solver_settings(params)
    if _covers_league(days, lo, hi, unit_count):
        arrays = (days.unit_day_start, days.day_step, days.entry_start, days.opp_day, days.score, days.weight)
        count, done = _solve(arrays, lo, hi, r, params, alone)
        variances_into(lo, hi, days.unit_day_start, r, *arrays[1:], w2, virtual_games, var)
        return count, done
    prefix, full_day = prefix_layout(days, lo, hi, unit_count)
    arrays = (prefix.unit_day_start, prefix.day_step, prefix.entry_start, prefix.opp_day, prefix.score, prefix.weight)
    ratings = r[full_day]
    count, done = _solve(arrays, 0, prefix.unit_day_start.shape[0] - 1, ratings, params, alone)
    r[full_day] = ratings
    var[full_day] = variances(prefix.unit_day_start, ratings, *arrays[1:], w2, virtual_games)
    return count, done


def _covers_league(days: PlayerDays, lo: int, hi: int, unit_count: np.ndarray) -> bool:
    """Whether the first ``unit_count`` days of units ``lo .. hi - 1`` are all of their days."""
    return bool(np.array_equal(unit_count[lo:hi], np.diff(days.unit_day_start[lo : hi + 1])))


def _solve(arrays: tuple[np.ndarray, ...], lo: int, hi: int, r: np.ndarray, params: dict, alone: bool):
    """Units ``lo .. hi - 1`` of the layout ``arrays`` fitted from and into ``r`` (see :func:`refit`)."""
    newton, w2, virtual_games, tol, max_iterations = solver_settings(params)
    unit_day_start = arrays[0]
    threads = numba.get_num_threads() if alone else 1
    if newton and threads > 1 and unit_day_start[hi] - unit_day_start[lo] >= THREADED_MIN_DAYS:
        count, done, _, _ = newton_threaded(lo, hi, arrays, w2, virtual_games, tol, max_iterations, r, threads)
        return count, done
    return solve_league(newton, lo, hi, *arrays, w2, virtual_games, tol, max_iterations, r)


def _steps(prepared: PreparedMatches, params: dict) -> np.ndarray:
    return time_steps(prepared.time_key, prepared.time_unit, checked_period(params["period"], prepared.time_unit))


def replay_matches(
    prepared: PreparedMatches, params: dict, outputs: dict, filtered: bool = True
) -> tuple[PlayerDays, np.ndarray, np.ndarray]:
    """The replay of every league of ``prepared`` into ``outputs`` (:func:`new_outputs`): the player-days and
    each day's rating and variance (natural units) in the last fit. ``filtered`` False leaves out the filter
    between refits (new days then start at the player's latest rating, and forecasts read fitted days only):
    for measuring what the filter brings."""
    newton, w2, virtual_games, tol, _ = solver_settings(params)
    prior_var = 4.0 / virtual_games if virtual_games > 0.0 else math.inf
    settings = np.array([w2, virtual_games, tol, prior_var])
    steps = _steps(prepared, params)
    days = player_days(prepared, steps)
    r = np.zeros(days.n_days)
    var = np.zeros(days.n_days)
    unit_count = np.zeros(days.unit_slot.shape[0], dtype=np.int64)
    fitted = np.zeros_like(unit_count)
    known = unit_count if filtered else fitted
    every = params["refit_every"]
    out = kernel_outputs(outputs)
    layout = (days.unit_day_start, days.day_unit, days.day_step, days.entry_start, days.opp_day, days.score)
    per_league = league_rows(prepared)  # in replay order: steps never decrease along them
    turns = threading.Lock()

    def replay(league: int, alone: bool) -> None:  # the league's units, days and rows only
        rows = per_league[league]
        step_start = np.concatenate([[0], np.flatnonzero(np.diff(steps[rows])) + 1, [rows.size]]).astype(np.int64)
        n_steps = step_start.size - 1
        lo, hi = int(days.league_unit_start[league]), int(days.league_unit_start[league + 1])
        for block in range(0, n_steps, every):
            stop = min(block + every, n_steps)
            state = (unit_count, known, filtered, r, var, settings, out)
            _forecast_steps(block, stop, step_start, rows, days.row_day, *layout, days.weight, *state)
            if alone or unit_count[lo:hi].sum() < THREADED_MIN_DAYS:
                refit(days, lo, hi, unit_count, r, var, params, alone)
            else:  # large refits one at a time, each with Newton's threads (the same bits)
                with turns:
                    refit(days, lo, hi, unit_count, r, var, params, alone=True)
            fitted[lo:hi] = unit_count[lo:hi]
            _record_after(block, stop, step_start, rows, days.row_day, r, var, out)

    each_league(replay, [league for league, rows in enumerate(per_league) if rows.size])
    return days, r, var


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    reject_priors(priors, "whr")
    outputs = new_outputs(prepared.n_rows)
    days, r, var = replay_matches(prepared, params, outputs)
    # each player's latest day in the last fit: rating, sd (display scale) and step
    last = days.unit_day_start[1:] - 1
    player = {name: np.full(prepared.n_states, np.nan) for name in ("rating", "sd", "step")}
    player["rating"][days.unit_slot] = DISPLAY_CENTER + POINTS_PER_NATURAL * r[last]
    player["sd"][days.unit_slot] = POINTS_PER_NATURAL * np.sqrt(var[last])
    player["step"][days.unit_slot] = days.day_step[last]
    return outputs, EndState(player=player)


def _check_model(columns: dict, prepared: PreparedMatches, table: str, params: dict) -> None:
    """``period`` must fit ``played_at``'s type (the error names both)."""
    resolve_period(params["period"], columns["played_at"].type, "whr")


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """The replay's ``expected_a`` between two rated players: the Bradley-Terry forecast on their ratings."""
    advantage = np.zeros(a.shape[0])
    return logistic_forecasts(
        column(players, "rating", a), column(players, "rating", b), advantage, NATURAL_PER_POINT
    ), None


WHR = ReplaySystem(
    name="whr",
    summary=(
        "Whole-History Rating (Coulom 2008) with honest forecasts: each match forecast from the whr_fit of the "
        "league's earlier time steps, refitted (warm-started) every refit_every steps, filtered in between."
    ),
    parameters=(*WHR_FIT.parameters, REFIT_EVERY),
    run=_run,
    check_model=_check_model,
    has_sd=True,
    whole_history=True,
    player_state=(StateField("rating"), StateField("sd"), StateField("step")),
    check_resume=whole_history_resume,
    forecast=Forecast(_forecast),
    grid={"w2": [30.0, 100.0, 300.0, 1000.0]},
    presets=(
        Preset(resumable=False),
        Preset({"w2": 100.0, "virtual_games": 1.0, "refit_every": 1, "method": "sweeps"}, resumable=False),
    ),
)


def whr(
    matches: pl.DataFrame,
    w2: float = 300.0,
    virtual_games: float = 2.0,
    period: str | None = None,
    method: str = "newton",
    max_iterations: int | None = None,
    tolerance: float = 1e-6,
    refit_every: int = REFIT_EVERY.default,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Whole-History Rating replay with honest forecasts: every match forecast from the ``whr_fit`` of the
    league's time steps before it (see the module docstring).

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at`` (TIMESTAMP, DATE or an integer), ``player_a``,
        ``player_b``, ``score_a`` and optionally ``league`` (independent replays) and ``weight``.
    w2, virtual_games, period, method, max_iterations, tolerance : the model and solver of
        :func:`duckrate.whr_fit`, whose parameters these are.
    refit_every : the fit is redone after every this many of a league's time steps with games (and after
        the last); between refits each step's games update their players' estimates at once (a causal
        filter step). 1: each step's forecasts come from the fit over every step before it.
    priors : not taken (an error when it has rows): WHR's prior is its virtual games.
    state : a saved state cannot be continued (``RebuildRequired``): the forecasts need the whole history.
    chunk_size : the replay needs every match at once; a ``chunk_size`` below the number of matches is an
        error.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}`` on the display scale.
    """
    return replay_frame(
        WHR,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        w2=w2,
        virtual_games=virtual_games,
        period=period,
        method=method,
        max_iterations=max_iterations,
        tolerance=tolerance,
        refit_every=refit_every,
    )
