"""TrueSkill Through Time as a replay with honest forecasts: ``duckrate.ttt`` (``ttt_replay`` in SQL).

Every match of a time step t is forecast from the fit over the league's steps strictly before t, so the
rows compare with the sequential systems' on equal terms (``calibration_summary``, ``loss_curve``, ``tune``):

- The league's batches (one per time step with games, :mod:`.layout`) are taken in order. Each new batch
  gets the forward pass a fit gives a batch added at the end of its history (the package's History when
  events are added): each player's skill starts from their latest belief, ``N(mu, sigma^2 + gamma^2 t)``
  after ``t`` steps (the prior at their first), and the batch's games are passed once. That is also the
  forecast: every game of the batch is forecast from those beliefs before any of it is passed.
- After every ``refit_every`` batches, and after the last, the message passing iterates over the history so
  far (:func:`.passes.run_sweeps`: to ``epsilon``, at most ``iterations`` times, as ``ttt_fit``), keeping the
  messages of the older batches: a warm start towards the fixed point a cold fit reaches. (On long histories
  the iterations rarely reach ``epsilon``, so a refit costs about a cold fit of the history so far, and a
  replay about ``(R + 1)/2`` cold fits of the whole history for R refits.) With ``refit_every`` 1 each step's
  forecasts come from the fit over every step before it (the ``ttt_fit`` of those matches, to its
  ``epsilon``); with ``iterations`` 0 the replay is TrueSkill Through Time's filtering pass.

Columns of a row (TTT's own mu/sigma scale): ``expected_a`` is P(A wins) + ½ P(draw) of the performance
model, the difference of the two performances ``N(mu_a - mu_b, sigma_a^2 + sigma_b^2 + 2 beta^2)`` against
the draw margin of ``p_draw``; ``rating_*_before``/``sd_*_before`` are the beliefs it used (the drift
included); ``rating_*_after``/``sd_*_after`` the player's posterior at this step in the first fit that
includes the step (the refit at the end of its block of ``refit_every`` steps, or the last one).

A replay needs the league's whole history before each step: a saved state cannot be continued
(``RebuildRequired``; the dbt model then replays in full) and the replay never runs in chunks.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches, reject_weights
from duckrate.core.parameters import Parameter
from duckrate.core.priors import reject_priors
from duckrate.core.protocol import Preset
from duckrate.core.scales import TTT_MU
from duckrate.fits.league_games import each_league, league_rows, name_ordered_codes
from duckrate.fits.through_time.fit import TTT_FIT, check_draws, outcomes, row_steps
from duckrate.fits.through_time.game import A_WINS, B_WINS, DRAW, TEAM_COLUMNS
from duckrate.fits.through_time.gaussian import draw_margin
from duckrate.fits.through_time.layout import Layout, build_layout, prefix
from duckrate.fits.through_time.passes import (
    BACK_PI,
    BACK_TAU,
    FWD_PI,
    FWD_TAU,
    LIK_PI,
    LIK_TAU,
    batch_pass,
    forward_batch,
    posterior,
    run_sweeps,
)
from duckrate.fits.whole_history.periods import checked_period, time_steps
from duckrate.systems.saved_state import EndState, StartState, StateField
from duckrate.systems.trueskill import forecast_1vs1, trueskill_forecasts
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame, whole_history_resume

REFIT_EVERY = Parameter(
    "refit_every",
    3650,
    "an integer >= 1: the message passing is iterated over the history so far after every this many of a "
    "league's time steps with games (1: every step's forecasts from the fit over all steps before it)",
    lambda v: math.isfinite(v) and 1 <= v < 2**31,
    integer=True,
)


@kernel
def _forecast_batches(
    b_lo,
    b_hi,
    max_batch_slots,
    batch_games,
    batch_slots,
    game_teams,
    team_members,
    team_rank,
    member_slot,
    member_weight,
    slot_player,
    slot_prev,
    slot_elapsed,
    game_row,
    prior_tau,
    prior_pi,
    beta,
    gamma2,
    margin,
    state,
    message,
    outputs,
):
    """Batches ``b_lo .. b_hi - 1``: each slot's forward message from its player's latest belief (the prior
    at their first), every game forecast from those (into the before-columns of its input row
    ``game_row[g]``), then the batch's games passed once (the initial pass of a fit)."""
    seq, expected_a, rating_a_before, rating_b_before, sd_a_before, sd_b_before, _, _, _, _ = outputs
    beta2 = beta * beta
    game_slots = member_slot.reshape(-1, 2)  # two-player games: side A's and side B's slots
    work = np.empty((2, TEAM_COLUMNS))
    linked = np.empty((max_batch_slots, 2))  # forward_batch's scratch
    for b in range(b_lo, b_hi):
        forward_batch(b, batch_slots, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2, linked)
        for g in range(batch_games[b], batch_games[b + 1]):
            row = game_row[g]
            sa, sb = game_slots[g, 0], game_slots[g, 1]
            mu_a, sigma_a = state[sa, FWD_TAU] / state[sa, FWD_PI], 1.0 / math.sqrt(state[sa, FWD_PI])
            mu_b, sigma_b = state[sb, FWD_TAU] / state[sb, FWD_PI], 1.0 / math.sqrt(state[sb, FWD_PI])
            seq[row] = g + 1
            expected_a[row] = forecast_1vs1(mu_a, sigma_a, mu_b, sigma_b, beta, 0.0, margin)[0]
            rating_a_before[row] = mu_a
            rating_b_before[row] = mu_b
            sd_a_before[row] = sigma_a
            sd_b_before[row] = sigma_b
        batch_pass(
            b,
            batch_games,
            game_teams,
            team_members,
            team_rank,
            member_slot,
            member_weight,
            state,
            message,
            beta2,
            margin,
            work,
        )


@kernel
def _record_after(g_lo, g_hi, game_slots, game_row, state, outputs):
    """The after-columns of games ``g_lo .. g_hi - 1``: their slots' posteriors in the fit just made."""
    _, _, _, _, _, _, rating_a_after, rating_b_after, sd_a_after, sd_b_after = outputs
    for g in range(g_lo, g_hi):
        row = game_row[g]
        rating_a_after[row], sd_a_after[row] = posterior(state, game_slots[g, 0])
        rating_b_after[row], sd_b_after[row] = posterior(state, game_slots[g, 1])


def replay_league(
    layout: Layout,
    n_players: int,
    game_row: np.ndarray,
    params: dict,
    margin: float,
    outputs: tuple,
    threads: int | None = None,
) -> np.ndarray:
    """One league's replay (its games in ``layout``'s order, ``game_row[g]`` the input row of game g, players
    coded ``0 .. n_players - 1``) into the ``outputs`` arrays; returns the messages per slot after the last
    fit."""
    prior_pi = np.full(n_players, 1.0 / (params["sigma"] * params["sigma"]))
    prior_tau = np.full(n_players, params["mu"]) * prior_pi
    state = np.zeros((layout.n_slots, 6), dtype=np.float64)
    message = np.zeros((layout.n_members, 2), dtype=np.float64)
    beta, gamma, every = params["beta"], params["gamma"], params["refit_every"]
    arrays = (
        layout.batch_games,
        layout.batch_slots,
        layout.game_teams,
        layout.team_members,
        layout.team_rank,
        layout.member_slot,
        layout.member_weight,
        layout.slot_player,
        layout.slot_prev,
        layout.slot_elapsed,
    )
    for block in range(0, layout.n_batches, every):
        stop = min(block + every, layout.n_batches)
        _forecast_batches(
            block,
            stop,
            layout.max_batch_slots,
            *arrays,
            game_row,
            prior_tau,
            prior_pi,
            beta,
            gamma * gamma,
            margin,
            state,
            message,
            outputs,
        )
        fitted = prefix(layout, stop)
        slots, games = fitted.n_slots, fitted.n_games
        run_sweeps(
            fitted,
            prior_tau,
            prior_pi,
            beta,
            gamma,
            margin,
            params["epsilon"],
            params["iterations"],
            state[:slots],
            message[: fitted.n_members],
            first_new=stop,
            threads=threads,
            accelerate=params["accelerate"],
        )
        _record_after(layout.batch_games[block], games, layout.game_slots, game_row, state, outputs)
    return state


def _steps(prepared: PreparedMatches, params: dict) -> np.ndarray:
    if prepared.period is not None:
        return prepared.period
    return time_steps(prepared.time_key, prepared.time_unit, checked_period(params["period"], prepared.time_unit))


def _outcome_codes(score: np.ndarray) -> np.ndarray:
    """Each row's outcome code (the scores are checked to be 0, 0.5 or 1)."""
    return np.where(score == 1.0, A_WINS, np.where(score == 0.0, B_WINS, DRAW)).astype(np.int8)


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    reject_priors(priors, "ttt")
    outputs = new_outputs(prepared.n_rows)
    out = kernel_outputs(outputs)
    steps = _steps(prepared, params)
    outcome = _outcome_codes(prepared.score)
    margin = draw_margin(params["p_draw"], params["beta"])
    local, members = name_ordered_codes(prepared)
    player = {name: np.full(prepared.n_states, np.nan) for name in ("mu", "sigma", "step")}
    per_league = league_rows(prepared)

    def replay(league: int, alone: bool) -> None:  # the league's slots and rows only
        rows = per_league[league]
        rows = rows[np.argsort(steps[rows], kind="stable")]  # by step, then played_at and match_id
        slots = members[league]
        layout = build_layout(
            steps[rows], local[prepared.state_a[rows]], local[prepared.state_b[rows]], outcome[rows], slots.size
        )
        threads = None if alone else 1  # leagues side by side: no threads of its own
        state = replay_league(layout, slots.size, rows.astype(np.int64), params, margin, out, threads)
        # each player's latest slot: its posterior in the last fit, and its step
        last = np.full(slots.size, -1, dtype=np.int64)
        last[layout.slot_player] = np.arange(layout.n_slots)  # slots are in time order: the last write wins
        pi = state[last, LIK_PI] + state[last, BACK_PI] + state[last, FWD_PI]
        tau = state[last, LIK_TAU] + state[last, BACK_TAU] + state[last, FWD_TAU]
        slot_batch = np.repeat(np.arange(layout.n_batches), np.diff(layout.batch_slots))
        player["mu"][slots] = tau / pi
        player["sigma"][slots] = 1.0 / np.sqrt(pi)
        player["step"][slots] = layout.batch_step[slot_batch[last]]

    each_league(replay, [league for league, rows in enumerate(per_league) if rows.size])
    return outputs, EndState(player=player)


def _check_matches(columns: dict, prepared: PreparedMatches, table: str) -> None:
    """Scores must be a win, a draw or a loss, and weights absent, NULL or 1."""
    outcomes(columns, prepared, table)
    reject_weights(columns, prepared, table, "ttt (TrueSkill Through Time has no match weights)")


def _check_model(columns: dict, prepared: PreparedMatches, table: str, params: dict) -> None:
    """Draws need ``p_draw`` > 0; ``period`` must fit ``played_at``'s type and not come with a period column."""
    check_draws(columns, _outcome_codes(prepared.score), params["p_draw"], table, "ttt")
    row_steps(columns, prepared, params["period"], "ttt")


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """P(A wins) + ½ P(draw) and P(draw) of the performance model from the two players' mu and sigma."""
    margin = draw_margin(params["p_draw"], params["beta"])
    mu_a, sigma_a = column(players, "rating", a), column(players, "sd", a)
    mu_b, sigma_b = column(players, "rating", b), column(players, "sd", b)
    return trueskill_forecasts(mu_a, sigma_a, mu_b, sigma_b, params["beta"], 0.0, margin)


TTT = ReplaySystem(
    name="ttt",
    summary=(
        "TrueSkill Through Time (Dangauthier et al. 2007) with honest forecasts: each match forecast from the "
        "ttt_fit of the league's earlier time steps, iterated (warm-started) every refit_every steps."
    ),
    parameters=(*TTT_FIT.parameters, REFIT_EVERY),
    run=_run,
    check_matches=_check_matches,
    check_model=_check_model,
    weighted=False,
    has_sd=True,
    whole_history=True,
    scale=TTT_MU,
    player_state=(StateField("mu"), StateField("sigma"), StateField("step")),
    check_resume=whole_history_resume,
    forecast=Forecast(_forecast, uses=("beta", "p_draw")),
    grid={"gamma": [0.01, 0.03, 0.1], "p_draw": [0.1, 0.25]},
    presets=(
        Preset({"p_draw": 0.1}, resumable=False),
        Preset({"p_draw": 0.25, "gamma": 0.1, "beta": 0.5, "refit_every": 1}, resumable=False),
    ),
)


def ttt(
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
    refit_every: int = REFIT_EVERY.default,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """TrueSkill Through Time replay with honest forecasts: every match forecast from the ``ttt_fit`` of the
    league's time steps before it (see the module docstring).

    Parameters
    ----------
    matches : the canonical ``matches`` columns (``score_a`` in {0, 0.5, 1}; optional ``league``, replayed
        independently, and ``period``, whose integer values are then the time steps). A ``weight`` other
        than 1 is an error.
    mu, sigma, beta, gamma, p_draw, epsilon, iterations, period, accelerate : the model and its message passing, as for
        :func:`duckrate.ttt_fit`, whose parameters these are (draws need ``p_draw`` > 0).
    refit_every : the message passing is iterated to convergence after every this many of a league's time
        steps with games (and after the last); each batch in between gets the forward pass alone. 1: each
        step's forecasts come from the fit over every step before it.
    priors : not taken (an error when it has rows).
    state : a saved state cannot be continued (``RebuildRequired``): the forecasts need the whole history.
    chunk_size : the replay needs every match at once; a ``chunk_size`` below the number of matches is an
        error.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}`` (mu and sigma), ``seq`` in the order
    (time step, played_at, match_id).
    """
    return replay_frame(
        TTT,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        mu=mu,
        sigma=sigma,
        beta=beta,
        gamma=gamma,
        p_draw=p_draw,
        epsilon=epsilon,
        iterations=iterations,
        period=period,
        accelerate=accelerate,
        refit_every=refit_every,
    )
