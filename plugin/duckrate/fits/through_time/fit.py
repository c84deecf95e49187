"""TrueSkill Through Time over a matches table: ``duckrate.ttt_fit``.

Model (Dangauthier, Herbrich, Minka & Graepel 2007; Landfried & Mocskos, "TrueSkill Through Time: reliable
initial skill estimates and historical comparability"): each player has a skill per time step at which they
play, ``s_{i,t0} ~ N(mu, sigma^2)`` at their first and ``s_{i,t} ~ N(s_{i,t'}, gamma^2 (t - t'))`` after a
gap of ``t - t'`` steps; in a game each plays a performance ``N(s, beta^2)`` and the higher one wins, a
draw when they are within the margin that makes a draw between equals happen with probability
``p_draw``. Expectation propagation over the whole history (every game informs every estimate, past and
future) gives each skill a Gaussian posterior: ``rating`` its mean, ``sd`` its sd, on TTT's own scale.

The numbers are those of the ``trueskillthroughtime`` package (1.1.0): its numerics (:mod:`.gaussian`),
its game update (:mod:`.game`) and its schedule (:mod:`.passes`), so that after the same iterations both
agree to 1e-6 and better. Games are laid out per league in a canonical order (:mod:`.layout`): the same
matches in any row order give the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core.contests import PlayerRows
from duckrate.core.counting import counting_order
from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import (
    MATCHES,
    PreparedMatches,
    columns_from_polars,
    input_error,
    prepare_matches,
    reject_weights,
    row_key_text,
)
from duckrate.core.parameters import Parameter
from duckrate.core.protocol import Fit
from duckrate.fits.league_games import league_rows, name_ordered_codes
from duckrate.fits.through_time.game import A_WINS, B_WINS, DRAW
from duckrate.fits.through_time.gaussian import draw_margin
from duckrate.fits.through_time.layout import Layout, build_layout
from duckrate.fits.through_time.passes import fit_history
from duckrate.fits.whole_history.periods import PERIOD, period_starts, resolve_period, time_steps
from duckrate.fits.whole_history.rows import SQL_SCHEMA, history_schema, history_table

TTT_FIT = Fit(
    name="ttt_fit",
    input=MATCHES,
    run=lambda columns, priors, given, table: fit_columns(columns, given, table),
    output=SQL_SCHEMA,
    summary=(
        "TrueSkill Through Time (Dangauthier et al. 2007; Landfried & Mocskos' trueskillthroughtime): "
        "Gaussian skills per player and time step, drifting by gamma per step, fitted to the whole history "
        "by forward-backward expectation propagation."
    ),
    parameters=(
        Parameter("mu", 0.0, "a finite prior mean"),
        Parameter("sigma", 6.0, "a finite prior sd > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("beta", 1.0, "a finite performance sd > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("gamma", 0.03, "a finite skill drift per time step >= 0", lambda v: math.isfinite(v) and v >= 0),
        Parameter("p_draw", 0.0, "a draw probability between equal players in [0, 1)", lambda v: 0 <= v < 1),
        Parameter("epsilon", 1e-6, "a finite convergence tolerance >= 0", lambda v: math.isfinite(v) and v >= 0),
        Parameter(
            "iterations",
            30,
            "an integer number of forward-backward iterations >= 0",
            lambda v: math.isfinite(v) and 0 <= v < 2**31,
            integer=True,
        ),
        PERIOD,
        Parameter(
            "accelerate",
            True,
            "true (each iteration ends with a coarse correction of the skills' level over time: the same "
            "fixed point in far fewer iterations) or false (the package's schedule, iteration by iteration)",
            boolean=True,
        ),
    ),
)


def outcomes(columns: dict, prepared: PreparedMatches, table: str) -> np.ndarray:
    """Each row's outcome code; a score other than 0, 0.5 or 1 is an error naming the match."""
    score = prepared.score
    outcome = np.full(score.shape[0], DRAW, dtype=np.int8)
    outcome[score == 1.0] = A_WINS
    outcome[score == 0.0] = B_WINS
    bad = np.flatnonzero((score != 1.0) & (score != 0.0) & (score != 0.5))
    if bad.size:
        row = int(bad[0])
        raise input_error(columns, table, "score_a", row, float(score[row]), "0, 0.5 or 1 (a loss, draw or win)")
    return outcome


def check_draws(columns: dict, outcome: np.ndarray, p_draw: float, table: str, owner: str = "ttt_fit") -> None:
    """Draws are impossible under ``p_draw`` 0: an error naming a drawn match."""
    if p_draw > 0.0:
        return
    draws = np.flatnonzero(outcome == DRAW)
    if draws.size:
        raise DuckrateInputError(
            f"{owner}: {table} has {draws.size} draw(s) (score_a = 0.5, e.g. at {row_key_text(columns, int(draws[0]))}) "
            "and p_draw = 0, under which a draw is impossible; expected p_draw > 0 (the probability of a draw "
            "between equal players), or no draws"
        )


def row_steps(
    columns: dict, prepared: PreparedMatches, period: str | None, owner: str = "ttt_fit"
) -> tuple[np.ndarray, str | None]:
    """Each row's time step, and the period it was derived by from ``played_at``
    (:mod:`duckrate.fits.whole_history.periods`), or None when it came from the ``period`` column."""
    if prepared.period is not None:
        if period is not None:
            raise DuckrateInputError(
                f"{owner}: the matches have a 'period' column and period = {period!r} was given; expected one "
                "(the period column's values are the time steps, or period derives them from played_at)"
            )
        return prepared.period, None
    resolved = resolve_period(period, columns["played_at"].type, owner)
    return time_steps(prepared.time_key, prepared.time_unit, resolved), resolved


def fit_columns(columns: dict[str, pa.Array], given: dict, table: str = "matches") -> pa.Table:
    """``ttt_fit`` over Arrow columns: one row per (league, player, time step the player played at), sorted
    by league, player and step."""
    params = TTT_FIT.resolve(given)
    prepared = prepare_matches(columns, table)
    reject_weights(columns, prepared, table, "ttt_fit")
    steps, by_period = row_steps(columns, prepared, params["period"])
    outcome = outcomes(columns, prepared, table)
    check_draws(columns, outcome, params["p_draw"], table)
    margin = draw_margin(params["p_draw"], params["beta"])
    local, members = name_ordered_codes(prepared)
    shared = LeagueFit(params, margin, prepared, by_period, columns["played_at"].type)
    parts: list[pa.Table] = []
    for league, rows in enumerate(league_rows(prepared)):
        if rows.size == 0:
            continue
        rows = rows[np.argsort(steps[rows], kind="stable")]  # by step, then played_at and match_id
        slots = members[league]
        # the layout is fitted_league's alone (no name holds it here): it lets it go before building the rows
        parts.append(
            fitted_league(_league_layout(prepared, rows, steps, local, outcome, slots.size), league, slots, shared)
        )
    return history_rows(parts, prepared, by_period, columns)


def _league_layout(
    prepared: PreparedMatches, rows: np.ndarray, steps: np.ndarray, local: np.ndarray, outcome: np.ndarray, n: int
) -> Layout:
    """The layout of a league's matches ``rows`` (in step order) among its ``n`` players (``local``: each state
    slot's player code)."""
    return build_layout(steps[rows], local[prepared.state_a[rows]], local[prepared.state_b[rows]], outcome[rows], n)


@dataclass(frozen=True)
class LeagueFit:
    """What the leagues of one ``ttt_fit`` or ``ttt_team_fit`` call share: the resolved ``params``, the draw
    ``margin``, the prepared input (for the players' and leagues' names), the ``period`` the steps came by
    (None: a period column or integer steps) and ``played_at``'s type."""

    params: dict
    margin: float
    prepared: PreparedMatches | PlayerRows
    by_period: str | None
    played_at: pa.DataType


def fitted_league(layout: Layout, league: int, slots: np.ndarray, shared: LeagueFit) -> pa.Table:
    """One league's rows: the fit of its ``layout`` (its players the state ``slots``, by name), sorted by
    player (name) and step. Shared by ``ttt_fit`` and ``ttt_team_fit``, which pass the layout alone: it is
    let go before the rows are built (at 10M games it holds about a gigabyte)."""
    params, prepared, by_period = shared.params, shared.prepared, shared.by_period
    mu, sigma, iterations, step_mu, step_sigma = fit_history(
        layout,
        np.full(slots.size, params["mu"]),
        np.full(slots.size, params["sigma"]),
        params["beta"],
        params["gamma"],
        shared.margin,
        params["epsilon"],
        params["iterations"],
        accelerate=params["accelerate"],
    )
    converged = step_mu <= params["epsilon"] and step_sigma <= params["epsilon"]
    # by player (name order), then step: the slots are in step order
    order = counting_order(layout.slot_player, slots.size)
    step = np.repeat(layout.batch_step, np.diff(layout.batch_slots))[order]
    player, games, rating, sd = layout.slot_player[order], layout.slot_games[order], mu[order], sigma[order]
    del layout, order, mu, sigma
    names = prepared.players.take(pa.array(prepared.state_player[slots])).cast(pa.string())
    start = pa.array(step, pa.int64()) if by_period is None else period_starts(step, by_period, shared.played_at)
    n = step.shape[0]
    return history_table(
        pa.repeat(pa.scalar(prepared.league_names[league], pa.string()), n),
        names.take(pa.array(player)),
        start,
        step,
        rating,
        sd,
        games,
        pa.repeat(pa.scalar(iterations, pa.int64()), n),
        pa.repeat(pa.scalar(converged, pa.bool_()), n),
    )


def history_rows(parts: list[pa.Table], prepared, by_period: str | None, columns: dict) -> pa.Table:
    """The leagues' rows together, sorted by league (by name, the unnamed league last), player and step (no
    rows: :func:`empty_rows`). A league's rows are in player (name) and step order already
    (:func:`fitted_league`), so only the leagues are put in order, not the rows."""
    if not parts:
        return empty_rows(prepared, by_period, columns["played_at"].type)

    def league_key(part: pa.Table) -> tuple[bool, str]:
        name = part.column("league")[0].as_py()
        return name is None, name or ""

    return pa.concat_tables(sorted(parts, key=league_key))


def empty_rows(prepared: PreparedMatches | PlayerRows, by_period: str | None, played_at_type: pa.DataType) -> pa.Table:
    """The output of a fit over no games."""
    start = (
        pa.int64() if by_period is None else period_starts(np.empty(0, dtype=np.int64), by_period, played_at_type).type
    )
    return history_schema(start).empty_table()


def ttt_fit(
    matches: pl.DataFrame,
    mu: float = 0.0,
    sigma: float = 6.0,
    beta: float = 1.0,
    gamma: float = 0.03,
    p_draw: float = 0.0,
    epsilon: float = 1e-6,
    iterations: int = 30,
    period: str | None = None,
    accelerate: bool = True,
) -> pl.DataFrame:
    """TrueSkill Through Time: every player's skill at every time step they played, from the whole history.

    Parameters
    ----------
    matches : the canonical ``matches`` columns (``match_id``, ``played_at``, ``player_a``, ``player_b``,
        ``score_a`` in {0, 0.5, 1}; optional ``league``, fitted independently, and ``period``, whose integer
        values are then the time steps). A ``weight`` other than 1 is an error: the model has no match weights.
    mu, sigma : the prior of a player's skill at their first time step.
    beta : the sd of a performance around the skill (the scale of the ratings).
    gamma : the sd of the skill's drift per time step (its variance grows by ``gamma^2`` per step).
    p_draw : the probability of a draw between equal players; 0 (the default) when there are no draws.
    epsilon, iterations : forward-backward iterations run until no posterior mean or sd moves by more than
        ``epsilon`` in one, at most ``iterations`` (0: TrueSkill's filtering pass alone).
    period : the time step of a TIMESTAMP or DATE ``played_at``: 'day' (the default: days since 1970-01-01,
        UTC), 'week', 'month' or 'year'; of an integer one, the value itself (None or 'value'). All games of
        one step are a batch: simultaneous.
    accelerate : True (the default): each iteration ends with a coarse correction (:mod:`.passes`), which
        reaches the same fixed point in far fewer iterations (on a 50-year history, 16 instead of 359 to
        1e-6); False: the package's schedule, so that after ``iterations`` iterations both agree.

    Returns
    -------
    DataFrame, one row per (league, player, time step at which the player played), sorted by league,
    player and step: ``league, player, period_start`` (the step's start in ``played_at``'s type, or the
    integer step), ``step, rating, sd, lower, upper`` (``rating`` -+ 1.96 ``sd``), ``games`` (the player's
    games in that step), ``iterations`` (run for the league) and ``converged`` (whether the last one moved
    nothing by more than ``epsilon``).

    Raises
    ------
    DuckrateInputError
        On bad input (the message names the column, the match and the value) or parameters, and on draws
        with ``p_draw`` 0.
    """
    given = {
        "mu": mu,
        "sigma": sigma,
        "beta": beta,
        "gamma": gamma,
        "p_draw": p_draw,
        "epsilon": epsilon,
        "iterations": iterations,
        "period": period,
        "accelerate": accelerate,
    }
    return cast(pl.DataFrame, pl.from_arrow(fit_columns(columns_from_polars(matches), given)))
