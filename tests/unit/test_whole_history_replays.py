"""The whole-history replays ``whr`` and ``ttt`` (honest forecasts): each step's forecasts against a cold
``whr_fit`` / ``ttt_fit`` of the matches before the step, the after-columns against the fit that first includes
the step, the warm-start entry points of the solvers against cold fits, refits every few steps, the refused
continuation and chunks, determinism, and bad input. (The shared tests run both systems through SQL, the marts,
dbt and Spark.)"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import duckrate
from duckrate import DuckrateInputError, RebuildRequired
from duckrate.core.matches import columns_from_polars, prepare_matches
from duckrate.fits.through_time import passes
from duckrate.fits.through_time.gaussian import draw_margin
from duckrate.fits.through_time.layout import build_layout, prefix
from duckrate.fits.whole_history import replay as whr_replay
from duckrate.fits.whole_history.days import player_days
from duckrate.fits.whole_history.fit import WHR_FIT, solve
from duckrate.fits.whole_history.periods import time_steps
from duckrate.synthetic import generate_matches
from duckrate.systems.two_player import new_outputs

POINTS = 400.0 / math.log(10.0)


def history(n: int, players: int, per_day: float, seed: int = 3, leagues: int = 1, draws: bool = True) -> pl.DataFrame:
    """Synthetic games spread over days (``per_day`` a day on average)."""
    frame = generate_matches(n, players, leagues, seed=seed, seconds_between_matches=86_400 / per_day)
    frame = frame.select(
        "match_id", "played_at", "player_a", "player_b", "score_a", *(["league"] if leagues > 1 else [])
    )
    if not draws:
        frame = frame.with_columns(
            pl.when(pl.col("score_a") == 0.5).then(1.0).otherwise(pl.col("score_a")).alias("score_a")
        )
    return frame


def with_steps(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(day=pl.col("played_at").dt.epoch("d"))


def latest(fit: pl.DataFrame) -> dict:
    """Each player's (rating, sd, step) at their last step in a fit."""
    last = fit.sort("step").group_by("player").last()
    return {p: (r, s, t) for p, r, s, t in zip(last["player"], last["rating"], last["sd"], last["step"])}


def check_against_cold_fits(rows, frame, fit, every, drift2, prior, tol, check_before=None):
    """For each step of a replay (``rows``, refit every ``every`` steps): the before-columns of the rows of a
    block's first step (or of every step, with ``check_before``) are the cold fit over the steps before it
    (the player's latest rating; the sd grown by ``drift2`` per step; ``prior`` for a newcomer), the
    after-columns the cold fit through the block's last step. Returns the largest differences."""
    frame, rows = with_steps(frame), with_steps(rows)
    days = sorted(set(frame["day"].to_list()))
    worst_before = worst_after = 0.0
    for i, day in enumerate(days):
        block_end = days[min((i // every + 1) * every, len(days)) - 1]
        step_rows = rows.filter(pl.col("day") == day)
        if i % every == 0 or check_before:
            known = latest(fit(frame.filter(pl.col("day") < day))) if i else {}
            for row in step_rows.iter_rows(named=True):
                for side in "ab":
                    r, s, t = known.get(row[f"player_{side}"], (*prior, day))
                    sd = math.sqrt(s * s + drift2 * (day - t))
                    worst_before = max(
                        worst_before, abs(row[f"rating_{side}_before"] - r), abs(row[f"sd_{side}_before"] - sd)
                    )
        after = fit(frame.filter(pl.col("day") <= block_end)).filter(pl.col("step") == day)
        at = {p: (r, s) for p, r, s in zip(after["player"], after["rating"], after["sd"])}
        for row in step_rows.iter_rows(named=True):
            for side in "ab":
                r, s = at[row[f"player_{side}"]]
                worst_after = max(worst_after, abs(row[f"rating_{side}_after"] - r), abs(row[f"sd_{side}_after"] - s))
    assert worst_before < tol and worst_after < tol, (worst_before, worst_after)


# --------------------------------------------------------------------------------------------------
# Each step's forecast from the fit over the steps before it
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_whr_every_step_from_the_cold_fit_of_the_steps_before(method):
    """refit_every 1: each step's before-columns are whr_fit of the matches before the step (measured: 6e-9
    rating points with Newton, 2e-7 with the sweeps, against the fits' tolerance of 1e-6), the forecast the
    logistic on them, and the after-columns whr_fit of the matches through the step."""
    frame = history(150, 16, 3.0)
    params = {"w2": 100.0, "method": method}
    rows = duckrate.whr(frame, refit_every=1, **params)
    assert with_steps(rows)["day"].n_unique() > 40
    check_against_cold_fits(
        rows,
        frame,
        lambda part: duckrate.whr_fit(part, **params),
        1,
        100.0,
        (1500.0, 2.0 / math.sqrt(2.0) * POINTS),
        1e-5,
        check_before=True,
    )
    gap = rows["rating_b_before"] - rows["rating_a_before"]
    expected = 1.0 / (1.0 + 10.0 ** (gap / 400.0))
    assert (rows["expected_a"] - expected).abs().max() < 1e-13


def test_ttt_every_step_from_the_cold_fit_of_the_steps_before():
    """refit_every 1: each step's beliefs are the posteriors of ttt_fit over the matches before the step (the
    drift added), both run to a tight epsilon; the forecast the performance model's P(win) + P(draw)/2."""
    frame = history(90, 18, 2.0, seed=5)
    params = {"p_draw": 0.2, "gamma": 0.1, "epsilon": 1e-10, "iterations": 20_000}
    rows = duckrate.ttt(frame, refit_every=1, **params)
    check_against_cold_fits(
        rows,
        frame,
        lambda part: duckrate.ttt_fit(part, **params),
        1,
        0.1**2,
        (0.0, 6.0),
        1e-6,
        check_before=True,
    )
    margin = draw_margin(0.2, 1.0)
    for row in rows.head(40).iter_rows(named=True):
        sd = math.sqrt(row["sd_a_before"] ** 2 + row["sd_b_before"] ** 2 + 2.0)
        diff = row["rating_a_before"] - row["rating_b_before"]
        p_win = 0.5 * math.erfc((margin - diff) / (sd * math.sqrt(2.0)))
        p_loss = 0.5 * math.erfc((margin + diff) / (sd * math.sqrt(2.0)))
        assert row["expected_a"] == pytest.approx(p_win + 0.5 * (1.0 - p_win - p_loss), abs=1e-12)


def test_refits_every_few_steps():
    """refit_every 4: a block's first step is forecast from the fit over the steps before it, every after-column
    from the fit through the block's last step (WHR and TTT)."""
    frame = history(120, 16, 3.0, seed=8)
    whr_params = {"w2": 100.0, "tolerance": 1e-8}
    check_against_cold_fits(
        duckrate.whr(frame, refit_every=4, **whr_params),
        frame,
        lambda part: duckrate.whr_fit(part, **whr_params),
        4,
        100.0,
        (1500.0, 2.0 / math.sqrt(2.0) * POINTS),
        1e-5,
    )
    ttt_params = {"p_draw": 0.2, "gamma": 0.1, "epsilon": 1e-10, "iterations": 20_000}
    check_against_cold_fits(
        duckrate.ttt(frame, refit_every=4, **ttt_params),
        frame,
        lambda part: duckrate.ttt_fit(part, **ttt_params),
        4,
        0.1**2,
        (0.0, 6.0),
        1e-6,
    )


def test_ttt_between_refits_is_the_forward_pass():
    """With iterations 0 no refit moves a message: the replay is TrueSkill Through Time's filtering pass, whose
    after-columns are ttt_fit's with iterations 0 (the initial pass alone)."""
    frame = history(200, 20, 4.0)
    rows = duckrate.ttt(frame, p_draw=0.1, iterations=0, refit_every=7)
    assert rows.equals(duckrate.ttt(frame, p_draw=0.1, iterations=0, refit_every=1))
    fit = duckrate.ttt_fit(frame, p_draw=0.1, iterations=0)
    at = {(p, t): (r, s) for p, t, r, s in zip(fit["player"], fit["step"], fit["rating"], fit["sd"])}
    rows = with_steps(rows)
    got = np.array([(row["rating_a_after"], row["sd_a_after"]) for row in rows.iter_rows(named=True)])
    want = np.array([at[(row["player_a"], row["day"])] for row in rows.iter_rows(named=True)])
    assert np.abs(got - want).max() < 1e-12


def test_whr_filter_between_refits():
    """Between refits the players of a step get the filter's estimate: a player's second game in a block is
    forecast from a rating that moved with their first; without the filter (the measuring switch) from the
    fitted rating alone, and the replay's forecasts are the worse for it."""
    frame = history(400, 30, 4.0, seed=2)
    prepared = prepare_matches(columns_from_polars(frame))
    params = WHR_FIT.resolve({}) | {"refit_every": 10**6}
    filtered, plain = new_outputs(prepared.n_rows), new_outputs(prepared.n_rows)
    whr_replay.replay_matches(prepared, params, filtered)
    whr_replay.replay_matches(prepared, params, plain, filtered=False)
    assert np.array_equal(filtered["rating_a_after"], plain["rating_a_after"]) or np.allclose(
        filtered["rating_a_after"], plain["rating_a_after"], atol=1e-5
    )  # the same last fit, from two warm starts
    assert (plain["rating_a_before"] == 1500.0).all()  # nothing fitted before the end
    assert not (filtered["rating_a_before"] == 1500.0).all()
    score = prepared.score

    def log_loss(p):
        return -np.mean(score * np.log(p) + (1 - score) * np.log(1 - p))

    assert log_loss(filtered["expected_a"]) < log_loss(plain["expected_a"])


# --------------------------------------------------------------------------------------------------
# The solvers' warm starts
# --------------------------------------------------------------------------------------------------


def test_whr_warm_started_solve_reaches_the_cold_fit():
    """solve(..., initial=): from an earlier fit's ratings (new days at the player's latest rating) to the cold
    fit's maximum within 1e-6 rating points."""
    frame = history(600, 40, 6.0, seed=4)
    prepared = prepare_matches(columns_from_polars(frame))
    steps = time_steps(prepared.time_key, prepared.time_unit, "day")
    days = player_days(prepared, steps)
    params = WHR_FIT.resolve({"tolerance": 1e-7})
    cold, _, _, converged = solve(days, params)
    # the fit of the first two thirds, its days at their ratings there and later days at the latest one
    cut = np.quantile(days.day_step, 2 / 3)
    counts = np.array(
        [np.sum(days.day_step[a:b] <= cut) for a, b in zip(days.unit_day_start[:-1], days.unit_day_start[1:])]
    )
    early, full_day = whr_replay.prefix_layout(days, 0, days.unit_slot.size, counts)
    earlier, _, _, _ = solve(early, params)
    initial = np.zeros(days.n_days)
    initial[full_day] = earlier
    for u in range(days.unit_slot.size):
        first, stop = days.unit_day_start[u], days.unit_day_start[u + 1]
        for d in range(first + counts[u], stop):
            initial[d] = initial[d - 1] if d > first else 0.0
    warm, _, _, warm_converged = solve(days, params, initial=initial)
    assert converged.all() and warm_converged.all()
    assert np.abs(warm - cold).max() * POINTS < 1e-6
    with pytest.raises(ValueError, match="one rating per day"):
        solve(days, params, initial=np.zeros(3))


def test_ttt_warm_started_sweeps_reach_the_cold_fit():
    """run_sweeps(..., first_new=): the fit of the first batches, then later batches added with their forward
    pass and the whole iterated: the cold fit's posteriors within 1e-6."""
    frame = history(150, 20, 3.0, seed=6)
    prepared = prepare_matches(columns_from_polars(frame))
    order = prepared.order
    steps = time_steps(prepared.time_key, prepared.time_unit, "day")[order]
    codes = {name: i for i, name in enumerate(sorted(set(frame["player_a"]) | set(frame["player_b"])))}
    names = np.asarray(prepared.players.to_pylist(), dtype=object)
    a = np.array([codes[n] for n in names[prepared.state_player[prepared.state_a[order]]]])
    b = np.array([codes[n] for n in names[prepared.state_player[prepared.state_b[order]]]])
    outcome = np.where(prepared.score[order] == 1.0, 1, np.where(prepared.score[order] == 0.0, -1, 0))
    layout = build_layout(steps, a, b, outcome, len(codes))
    n = len(codes)
    prior_pi, prior_tau = np.full(n, 1 / 36.0), np.zeros(n)
    settings = (1.0, 0.1, draw_margin(0.2, 1.0), 1e-10, 50_000)
    mu, sigma, _, step_mu, step_sigma = passes.fit_history(layout, np.zeros(n), np.full(n, 6.0), *settings)
    assert max(step_mu, step_sigma) <= 1e-10
    state = np.zeros((layout.n_slots, 6))
    message = np.zeros((layout.game_slots.shape[0], 4))
    half = layout.n_batches // 2
    early = prefix(layout, half)
    passes.run_sweeps(
        early, prior_tau, prior_pi, *settings, state[: early.n_slots], message[: early.game_slots.shape[0]]
    )
    done, _, _ = passes.run_sweeps(layout, prior_tau, prior_pi, *settings, state, message, first_new=half)
    warm_mu, warm_sigma = np.empty(layout.n_slots), np.empty(layout.n_slots)
    passes._posteriors(state, warm_mu, warm_sigma)
    assert np.abs(warm_mu - mu).max() < 1e-6 and np.abs(warm_sigma - sigma).max() < 1e-6
    assert done > 0


# --------------------------------------------------------------------------------------------------
# State, chunks, determinism
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["whr", "ttt"])
def test_a_saved_state_is_not_continued(name):
    """A league with saved state refuses to continue (the dbt model then replays in full); a league new to the
    state continues, as a fresh replay of it."""
    frame = history(300, 20, 10.0, leagues=2).sort("played_at", "match_id")
    params = {"p_draw": 0.2} if name == "ttt" else {}
    first, rest = frame[:200], frame[200:]
    _, state = duckrate.replay_with_state(name, first, **params)
    assert state.filter(pl.col("kind") == "player")["value"].list.len().unique().to_list() == [3]
    with pytest.raises(RebuildRequired, match="has saved state, and a whole-history replay forecasts each match"):
        duckrate.replay_with_state(name, rest, state=state, **params)
    assert "whole-history" in duckrate.SYSTEMS.get(name).resume_problem(columns_from_polars(rest), params, state)
    elsewhere = rest.with_columns(league=pl.lit("new"))
    rows, after = duckrate.replay_with_state(name, elsewhere, state=state, **params)
    assert rows.equals(getattr(duckrate, name)(elsewhere, **params))
    assert after.filter(pl.col("league") == "league_1").equals(state.filter(pl.col("league") == "league_1"))


@pytest.mark.parametrize("name", ["whr", "ttt"])
def test_chunks_are_refused_or_one_run(name):
    frame = history(120, 12, 10.0, draws=False)
    function = getattr(duckrate, name)
    with pytest.raises(DuckrateInputError, match=rf"{name}: chunk_size = 50 is below the 120 matches"):
        function(frame, chunk_size=50)
    assert function(frame, chunk_size=120).equals(function(frame))
    with pytest.raises(DuckrateInputError, match="chunk_size"):
        function(frame, chunk_size=0)


@pytest.mark.parametrize("name", ["whr", "ttt"])
def test_row_order_leagues_and_threads_give_the_same_bits(name, monkeypatch):
    frame = history(900, 40, 40.0, leagues=2, seed=9)
    params = {"p_draw": 0.2, "refit_every": 3} if name == "ttt" else {"refit_every": 3}
    function = getattr(duckrate, name)
    rows = function(frame, **params)
    assert rows.equals(function(frame.sample(fraction=1.0, shuffle=True, seed=1), **params))
    alone = function(frame.filter(pl.col("league") == "league_1"), **params)
    assert alone.equals(rows.filter(pl.col("league") == "league_1"))
    if name == "ttt":  # the refits' message passing on several threads: the same bits
        monkeypatch.setattr(passes, "THREADED_MIN_GAMES", 0)
        monkeypatch.setattr(passes, "THREADED_MAX_NEIGHBOUR_SHARE", 1.0)
        monkeypatch.setattr(passes.numba, "get_num_threads", lambda: 2)
        assert function(frame, **params).equals(rows)
    if name == "whr":  # a lone league's refits by Newton's method with a helper thread: the same bits
        monkeypatch.setattr(whr_replay, "THREADED_MIN_DAYS", 0)
        monkeypatch.setattr(whr_replay.numba, "get_num_threads", lambda: 2)
        assert function(frame.filter(pl.col("league") == "league_1"), **params).equals(alone)
        # two leagues side by side: their large refits take turns, each with the helper thread
        running, most, calls = [0], [0], []
        plain = whr_replay.refit

        def counted(*args, **kwargs):
            running[0] += 1
            most[0] = max(most[0], running[0])
            calls.append(kwargs.get("alone", args[-1] if len(args) > 7 else False))
            try:
                return plain(*args, **kwargs)
            finally:
                running[0] -= 1

        monkeypatch.setattr(whr_replay, "refit", counted)
        assert function(frame, **params).equals(rows)
        assert most[0] == 1 and len(calls) > 2 and all(calls)


def test_ttt_period_column_gives_the_steps():
    """A period column's values are the time steps (as for ttt_fit): the first match of period 3 is forecast from
    the fit of periods 0-2."""
    frame = history(200, 20, 10.0, draws=False).with_columns(period=(pl.col("match_id") // 25).cast(pl.Int64))
    params = {"gamma": 0.1, "epsilon": 1e-10, "iterations": 20_000}
    rows = duckrate.ttt(frame, refit_every=1, **params)
    first = frame.filter(pl.col("period") == 3).sort("played_at", "match_id").row(0, named=True)
    row = rows.filter(pl.col("match_id") == first["match_id"]).row(0, named=True)
    assert row["seq"] == frame.filter(pl.col("period") < 3).height + 1
    rating, sd, step = latest(duckrate.ttt_fit(frame.filter(pl.col("period") < 3), **params))[row["player_a"]]
    assert row["rating_a_before"] == pytest.approx(rating, abs=1e-6)
    assert row["sd_a_before"] == pytest.approx(math.sqrt(sd * sd + 0.01 * (3 - step)), abs=1e-6)
    with pytest.raises(DuckrateInputError, match="ttt: the matches have a 'period' column and period = 'week'"):
        duckrate.ttt(frame, period="week")


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("whr", {"refit_every": 0}, "whr: parameter refit_every = 0; expected an integer >= 1"),
        ("whr", {"refit_every": 2.5}, "parameter refit_every = 2.5"),
        ("whr", {"w2": -1.0}, "whr: parameter w2 = -1.0"),
        ("whr", {"period": "fortnight"}, "whr: parameter period = 'fortnight' does not fit column 'played_at'"),
        ("ttt", {"refit_every": -1}, "ttt: parameter refit_every = -1"),
        ("ttt", {}, "ttt: matches has .* draw.* and p_draw = 0"),
        ("ttt", {"p_draw": 0.1, "period": "value"}, "ttt: parameter period = 'value' does not fit"),
    ],
)
def test_bad_parameters_are_named(name, params, message):
    with pytest.raises(DuckrateInputError, match=message):
        getattr(duckrate, name)(history(30, 6, 10.0), **params)


def test_bad_matches_get_the_usual_errors():
    frame = history(30, 6, 10.0)
    with pytest.raises(DuckrateInputError, match="column 'score_a' has 0.25 at match_id=3; expected 0, 0.5 or 1"):
        duckrate.ttt(
            frame.with_columns(score_a=pl.when(pl.col("match_id") == 3).then(0.25).otherwise("score_a")), p_draw=0.1
        )
    with pytest.raises(DuckrateInputError, match="column 'weight' has 2.0"):
        duckrate.ttt(frame.with_columns(weight=pl.lit(2.0)), p_draw=0.1)
    weighted = duckrate.whr(frame.with_columns(weight=pl.lit(2.0)))
    assert weighted.height == 30
    with pytest.raises(DuckrateInputError, match="whr: a player_priors table was given"):
        duckrate.whr(frame, priors=pl.DataFrame({"player": ["p1"], "rating": [1600.0]}))
    with pytest.raises(DuckrateInputError, match="self-match"):
        duckrate.whr(frame.with_columns(player_b=pl.col("player_a")))


def test_empty_and_one_match():
    frame = history(5, 4, 10.0, draws=False)
    for name in ("whr", "ttt"):
        function = getattr(duckrate, name)
        assert function(frame.head(0)).height == 0
        one = function(frame.head(1))
        assert one["expected_a"][0] == 0.5 and one["seq"][0] == 1
