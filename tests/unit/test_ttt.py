"""TrueSkill Through Time (``ttt_fit``): agreement with the trueskillthroughtime package 1.1.0 after the same
iterations and at convergence, with a naive expectation propagation written here from the papers (another
schedule, exact normal functions) at its fixed point, with the exact posterior of one game, bad input, and
row-order invariance bit for bit."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from statistics import NormalDist

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
import trueskillthroughtime as ttt

import duckrate
from duckrate import DuckrateInputError
from duckrate.fits.through_time import passes
from duckrate.fits.whole_history.periods import time_steps
from duckrate.synthetic import generate_matches

COLUMNS = ["match_id", "played_at", "player_a", "player_b", "score_a"]


def history(n_matches: int, n_players: int, per_day: float, seed: int = 3, n_leagues: int = 1) -> pl.DataFrame:
    """Synthetic games (draws included) spread over days: ``per_day`` games a day on average."""
    frame = generate_matches(n_matches, n_players, n_leagues, seed=seed, seconds_between_matches=86_400 / per_day)
    return frame.select([*COLUMNS, "league"] if n_leagues > 1 else COLUMNS)


@pytest.fixture(scope="module")
def games() -> pl.DataFrame:
    """300 games among 30 players over about 60 days, 18% draws."""
    return history(300, 30, 5.0)


def package_fit(frame: pl.DataFrame, epsilon: float, iterations: int, **params) -> tuple[dict, int]:
    """The package's learning curves, ``{(player, step): (mu, sigma)}``, and its iterations, with the games
    given in ttt_fit's canonical order (time step, then played_at and match_id)."""
    if frame["played_at"].dtype == pl.Int64:
        frame = frame.with_columns(step=pl.col("played_at"))
    else:
        frame = frame.with_columns(step=pl.col("played_at").dt.date().cast(pl.Int64))
    frame = frame.sort(["step", "played_at", "match_id"])
    composition = [[[a], [b]] for a, b in zip(frame["player_a"], frame["player_b"])]
    results = [[s, 1.0 - s] for s in frame["score_a"]]
    fitted = ttt.History(composition, results, frame["step"].to_list(), **params)
    _, done = fitted.convergence(epsilon=epsilon, iterations=iterations, verbose=False)
    curves = fitted.learning_curves()
    return {(player, t): (g.mu, g.sigma) for player, curve in curves.items() for t, g in curve}, done


def largest_differences(result: pl.DataFrame, reference: dict) -> tuple[float, float]:
    assert result.height == len(reference)
    mu = np.array([reference[key][0] for key in zip(result["player"], result["step"])])
    sigma = np.array([reference[key][1] for key in zip(result["player"], result["step"])])
    return float(np.abs(result["rating"].to_numpy() - mu).max()), float(np.abs(result["sd"].to_numpy() - sigma).max())


# --------------------------------------------------------------------------------------------------
# The package
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [0, 1, 6])
def test_equals_the_package_after_the_same_iterations(games, iterations):
    """Measured: within 1e-13 (the same numerics, in natural parameters and with fewer square roots)."""
    result = duckrate.ttt_fit(games, p_draw=0.2, epsilon=0.0, iterations=iterations, accelerate=False)
    reference, done = package_fit(games, 0.0, iterations, p_draw=0.2)
    assert done == iterations
    assert (result["iterations"] == iterations).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_equals_the_package_at_convergence():
    """With the package's schedule both stop at the same iteration (483 here: the common level of all skills
    converges slowly)."""
    frame = history(60, 6, 10.0)
    result = duckrate.ttt_fit(frame, p_draw=0.2, epsilon=1e-6, iterations=1000, accelerate=False)
    reference, done = package_fit(frame, 1e-6, 1000, p_draw=0.2)
    assert result["converged"].all()
    assert (result["iterations"] == done).all() and 100 < done < 1000
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


@pytest.mark.parametrize("gamma", [0.03, 0.0])
def test_the_coarse_correction_reaches_the_packages_fixed_point_in_fewer_iterations(gamma):
    """accelerate (the default) against the package run to a step of 1e-11: the same fixed point; with drift
    the blocks' correction, without it the one common level."""
    frame = history(40, 6, 2.0, seed=7)
    reference, done = package_fit(frame, 1e-11, 20_000, p_draw=0.2, gamma=gamma)
    result = duckrate.ttt_fit(frame, p_draw=0.2, gamma=gamma, epsilon=1e-11, iterations=20_000)
    assert result["converged"].all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-8 and d_sigma < 1e-8, (d_mu, d_sigma)
    assert result["iterations"][0] < done / 3, (result["iterations"][0], done)
    plain = duckrate.ttt_fit(frame, p_draw=0.2, gamma=gamma, epsilon=1e-11, iterations=20_000, accelerate=False)
    assert plain["iterations"][0] == done


def test_equals_the_package_with_its_other_parameters_and_integer_steps():
    """No draws (p_draw 0), an integer played_at whose values are the steps, gaps of several steps and
    parameters other than the defaults."""
    frame = history(250, 12, 5.0, seed=11).filter(pl.col("score_a") != 0.5)
    frame = frame.with_columns(played_at=(pl.col("match_id") // 9) * 3)
    params = {"mu": 25.0, "sigma": 8.0, "beta": 4.0, "gamma": 0.5}
    result = duckrate.ttt_fit(frame, epsilon=1e-5, iterations=12, accelerate=False, **params)
    reference, done = package_fit(frame, 1e-5, 12, **params)
    assert (result["iterations"] == done).all()
    assert result["period_start"].dtype == pl.Int64 and (result["period_start"] == result["step"]).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_one_batch_runs_to_the_batchs_own_convergence():
    """All games at one time step: each iteration runs the batch's games to its own convergence, as the
    package does for a history of one batch."""
    frame = history(40, 6, 5.0, seed=5).with_columns(played_at=pl.lit(7, dtype=pl.Int64))
    result = duckrate.ttt_fit(frame, p_draw=0.3, epsilon=1e-8, iterations=5, accelerate=False)
    reference, done = package_fit(frame, 1e-8, 5, p_draw=0.3)
    assert (result["iterations"] == done).all() and (result["step"] == 7).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


@pytest.mark.slow
def test_equals_the_package_on_a_few_thousand_games():
    """3,000 games among 60 players over 150 days, 30 iterations (the package: about 10 s)."""
    frame = history(3000, 60, 20.0)
    result = duckrate.ttt_fit(frame, p_draw=0.2, epsilon=0.0, iterations=30, accelerate=False)
    reference, done = package_fit(frame, 0.0, 30, p_draw=0.2)
    assert done == 30
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


# --------------------------------------------------------------------------------------------------
# A naive implementation, from the papers
# --------------------------------------------------------------------------------------------------

NORMAL = NormalDist()


def truncated_moments(mean: float, variance: float, margin: float, draw: bool) -> tuple[float, float]:
    """Mean and variance of ``N(mean, variance)`` restricted to ``d > margin`` (a win) or ``|d| <= margin``."""
    sd = math.sqrt(variance)
    if not draw:
        a = (margin - mean) / sd
        ratio = NORMAL.pdf(a) / (0.5 * math.erfc(a / math.sqrt(2.0)))  # phi(a) / (1 - Phi(a))
        return mean + sd * ratio, variance * (1.0 + a * ratio - ratio * ratio)
    a, b = (-margin - mean) / sd, (margin - mean) / sd
    mass = NORMAL.cdf(b) - NORMAL.cdf(a)
    first = (NORMAL.pdf(a) - NORMAL.pdf(b)) / mass
    second = (a * NORMAL.pdf(a) - b * NORMAL.pdf(b)) / mass
    return mean + sd * first, variance * (1.0 + second - first * first)


def naive_ttt(games, mu, sigma, beta, gamma, p_draw, tolerance=1e-13, max_rounds=200_000):
    """Expectation propagation on the TTT factor graph, plainly: ``games`` is a list of (step, a, b, outcome)
    with outcome 1 (a won), 0.5 (draw) or 0; each game keeps its Gaussian message to each player's skill at
    its step (natural parameters). A round updates the games one at a time; before each update both players'
    chains of skills are solved exactly (a Gaussian random walk observed through the messages: Kalman
    smoothing) and the game's message divided out (the cavity). Rounds repeat until no message moves by
    ``tolerance``. Returns ``{(player, step): (mean, sd)}``."""
    margin = NORMAL.inv_cdf((1.0 + p_draw) / 2.0) * math.sqrt(2.0) * beta
    steps: dict = {}
    for t, a, b, _ in games:
        steps.setdefault(a, set()).add(t)
        steps.setdefault(b, set()).add(t)
    steps = {player: sorted(ts) for player, ts in steps.items()}
    messages = {(g, side): (0.0, 0.0) for g in range(len(games)) for side in (0, 1)}

    def chain(player):
        """Posterior (tau, pi) of the player's skill at each of their steps."""
        ts = steps[player]
        observed = {t: [0.0, 0.0] for t in ts}
        for g, (t, a, b, _) in enumerate(games):
            for side, who in ((0, a), (1, b)):
                if who == player:
                    observed[t][0] += messages[g, side][0]
                    observed[t][1] += messages[g, side][1]

        def drift(tau, pi, elapsed):  # N(m, v) -> N(m, v + gamma^2 elapsed)
            if pi == 0.0:
                return 0.0, 0.0
            variance = 1.0 / pi + gamma * gamma * elapsed
            return tau / pi / variance, 1.0 / variance

        forward = [(mu / sigma**2, 1.0 / sigma**2)]
        for k in range(1, len(ts)):
            tau, pi = forward[-1]
            forward.append(drift(tau + observed[ts[k - 1]][0], pi + observed[ts[k - 1]][1], ts[k] - ts[k - 1]))
        backward = [(0.0, 0.0)] * len(ts)
        for k in range(len(ts) - 2, -1, -1):
            tau, pi = backward[k + 1]
            backward[k] = drift(tau + observed[ts[k + 1]][0], pi + observed[ts[k + 1]][1], ts[k + 1] - ts[k])
        return {
            t: (forward[k][0] + backward[k][0] + observed[t][0], forward[k][1] + backward[k][1] + observed[t][1])
            for k, t in enumerate(ts)
        }

    for _ in range(max_rounds):
        moved = 0.0
        for g, (t, a, b, outcome) in enumerate(games):
            cavity = []
            for side, who in ((0, a), (1, b)):
                tau, pi = chain(who)[t]
                own_tau, own_pi = messages[g, side]
                cavity.append(((tau - own_tau) / (pi - own_pi), 1.0 / (pi - own_pi)))  # mean, variance
            (mean_w, var_w), (mean_l, var_l) = cavity if outcome >= 0.5 else cavity[::-1]
            mean, variance = mean_w - mean_l, var_w + var_l + 2.0 * beta**2
            new_mean, new_variance = truncated_moments(mean, variance, margin, outcome == 0.5)
            pi_d = 1.0 / new_variance - 1.0 / variance  # the message to the difference
            mean_d = (new_mean / new_variance - mean / variance) / pi_d
            to_winner = (mean_d + mean_l, 1.0 / pi_d + var_l + 2.0 * beta**2)
            to_loser = (mean_w - mean_d, 1.0 / pi_d + var_w + 2.0 * beta**2)
            sides = (to_winner, to_loser) if outcome >= 0.5 else (to_loser, to_winner)
            for side, (m, v) in enumerate(sides):
                new = (m / v, 1.0 / v)
                moved = max(moved, abs(new[0] - messages[g, side][0]), abs(new[1] - messages[g, side][1]))
                messages[g, side] = new
        if moved < tolerance:
            break
    posterior = {}
    for player in steps:
        for t, (tau, pi) in chain(player).items():
            posterior[player, t] = (tau / pi, math.sqrt(1.0 / pi))
    return posterior


def test_agrees_with_a_naive_expectation_propagation_at_its_fixed_point():
    """Another schedule reaches the same fixed point: within 1e-6 (measured 5e-8; the package's erfc
    approximation, which ttt_fit keeps, accounts for the rest)."""
    frame = history(40, 5, 5.0)
    params = {"p_draw": 0.25, "gamma": 0.2}
    result = duckrate.ttt_fit(frame, epsilon=1e-11, iterations=100_000, **params)
    assert result["converged"].all()
    days = frame["played_at"].dt.date().cast(pl.Int64).to_list()
    games = list(zip(days, frame["player_a"], frame["player_b"], frame["score_a"]))
    reference = naive_ttt(games, 0.0, 6.0, 1.0, **params)
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


@pytest.mark.parametrize("score_a, p_draw", [(1.0, 0.0), (0.0, 0.0), (0.5, 0.3), (1.0, 0.3)])
def test_one_game_gives_the_exact_posterior_moments(score_a, p_draw):
    """One game's expectation propagation is exact in the first two moments: they equal a quadrature of
    prior x likelihood over the two skills, within the package's erfc approximation (measured: 3.3e-6 in the
    sd after a draw, where the approximation's 1e-7 meets the difference of two cdfs; below 1e-6 otherwise)."""
    frame = pl.DataFrame(
        {"match_id": [1], "played_at": [0], "player_a": ["a"], "player_b": ["b"], "score_a": [score_a]}
    )
    mu_a, sigma, beta = 0.0, 6.0, 1.0
    result = duckrate.ttt_fit(frame, mu=mu_a, sigma=sigma, beta=beta, p_draw=p_draw).sort("player")
    grid = np.linspace(-10 * sigma, 10 * sigma, 2001)
    s_a, s_b = np.meshgrid(grid, grid, indexing="ij")
    sd_d = math.sqrt(2.0) * beta
    margin = NORMAL.inv_cdf((1.0 + p_draw) / 2.0) * sd_d
    cdf = np.vectorize(NORMAL.cdf)
    if score_a == 0.5:
        likelihood = cdf((margin - (s_a - s_b)) / sd_d) - cdf((-margin - (s_a - s_b)) / sd_d)
    else:
        sign = 1.0 if score_a == 1.0 else -1.0
        likelihood = cdf((sign * (s_a - s_b) - margin) / sd_d)
    weight = np.exp(-0.5 * ((s_a - mu_a) ** 2 + (s_b - mu_a) ** 2) / sigma**2) * likelihood
    weight /= weight.sum()
    for skill, row in ((s_a, 0), (s_b, 1)):
        mean = float((weight * skill).sum())
        sd = math.sqrt(float((weight * (skill - mean) ** 2).sum()))
        tolerance = 1e-5 if score_a == 0.5 else 1e-6
        assert result["rating"][row] == pytest.approx(mean, abs=tolerance)
        assert result["sd"][row] == pytest.approx(sd, abs=tolerance)


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sigma": 0.0}, r"parameter sigma = 0.0; expected a finite prior sd > 0"),
        ({"sigma": -1.0}, r"parameter sigma = -1.0; expected a finite prior sd > 0"),
        ({"beta": 0.0}, r"parameter beta = 0.0; expected a finite performance sd > 0"),
        ({"gamma": -0.1}, r"parameter gamma = -0.1; expected a finite skill drift per time step >= 0"),
        ({"p_draw": 1.0}, r"parameter p_draw = 1.0; expected a draw probability between equal players in \[0, 1\)"),
        ({"p_draw": -0.1}, r"parameter p_draw = -0.1; expected a draw probability"),
        ({"mu": math.nan}, r"parameter mu = nan; expected a finite prior mean"),
        ({"epsilon": -1e-6}, r"parameter epsilon = -1e-06; expected a finite convergence tolerance >= 0"),
        ({"iterations": -1}, r"parameter iterations = -1; expected an integer number of forward-backward"),
        ({"iterations": 2.5}, r"parameter iterations = 2.5; expected an integer"),
    ],
)
def test_bad_parameters_are_named(games, params, message):
    with pytest.raises(DuckrateInputError, match=r"ttt_fit: " + message):
        duckrate.ttt_fit(games, **params)


def test_bad_input_is_named(games):
    with pytest.raises(DuckrateInputError, match=r"has 54 draw\(s\).*match_id=2.*p_draw = 0.*expected p_draw > 0"):
        duckrate.ttt_fit(games)
    partial = games.with_columns(score_a=pl.when(pl.col("match_id") == 4).then(0.75).otherwise(pl.col("score_a")))
    with pytest.raises(DuckrateInputError, match=r"'score_a' has 0.75 at match_id=4; expected 0, 0.5 or 1"):
        duckrate.ttt_fit(partial, p_draw=0.2)
    weighted = games.with_columns(weight=pl.lit(2.0))
    with pytest.raises(DuckrateInputError, match=r"'weight' has 2.0 at match_id=1; ttt_fit has no match weights"):
        duckrate.ttt_fit(weighted, p_draw=0.2)
    integers = games.with_columns(played_at=pl.col("match_id"))
    with pytest.raises(DuckrateInputError, match=r"period = 'day' does not fit column 'played_at' of type int64"):
        duckrate.ttt_fit(integers, p_draw=0.2, period="day")
    periods = games.with_columns(period=pl.col("match_id") // 10)
    with pytest.raises(DuckrateInputError, match=r"'period' column and period = 'day' was given"):
        duckrate.ttt_fit(periods, p_draw=0.2, period="day")
    with pytest.raises(DuckrateInputError, match=r"missing column\(s\) 'score_a'"):
        duckrate.ttt_fit(games.drop("score_a"))


# --------------------------------------------------------------------------------------------------
# Canonical order, leagues, time steps
# --------------------------------------------------------------------------------------------------


def test_shuffled_rows_give_the_same_bits():
    frame = history(400, 24, 8.0, n_leagues=2)
    result = duckrate.ttt_fit(frame, p_draw=0.2, iterations=8)
    for seed in (1, 2):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        again = duckrate.ttt_fit(shuffled, p_draw=0.2, iterations=8)
        assert again.equals(result)
        for column in ("rating", "sd"):
            assert np.array_equal(again[column].to_numpy().view(np.int64), result[column].to_numpy().view(np.int64))


def test_rows_come_sorted_by_league_player_and_step():
    """The rows are in the order a sort by league (the unnamed league last), player and step gives, though
    the leagues come in another order in the input and the players' names are in several scripts (the rows
    are laid out in that order, not sorted)."""
    frame = history(300, 12, 6.0, seed=5)
    names = ["Zoë", "zoe", "Åsa", "éclair", "Ωmega", "ß", "a", "B", "日本", "😀", "Ärger", "aa"]
    renamed = dict(zip(sorted(set(frame["player_a"]) | set(frame["player_b"])), names, strict=True))
    league = pl.Series([None] * 100 + ["β"] * 100 + ["a"] * 100, dtype=pl.String)
    frame = frame.with_columns(pl.col("player_a").replace(renamed), pl.col("player_b").replace(renamed), league=league)
    result = duckrate.ttt_fit(frame, p_draw=0.2, iterations=4)
    assert result["league"].unique(maintain_order=True).to_list() == ["a", "β", None]
    assert result.equals(result.sort(["league", "player", "step"], nulls_last=True))
    assert set(result["player"]) == set(names)


def test_leagues_are_fitted_independently():
    frame = history(400, 24, 8.0, n_leagues=2)
    together = duckrate.ttt_fit(frame, p_draw=0.2, iterations=8)
    assert set(together["league"]) == set(frame["league"])
    for league in frame["league"].unique():
        alone = duckrate.ttt_fit(frame.filter(pl.col("league") == league).drop("league"), p_draw=0.2, iterations=8)
        part = together.filter(pl.col("league") == league).drop("league")
        assert part.equals(alone.drop("league"))


def test_output_rows_and_columns(games):
    result = duckrate.ttt_fit(games, p_draw=0.2)
    assert result.columns[:10] == [
        "league", "player", "period_start", "step", "rating", "sd", "lower", "upper", "games", "iterations",
    ]  # fmt: skip
    days = games.with_columns(step=pl.col("played_at").dt.date().cast(pl.Int64))
    per_step = (
        pl.concat([days.select(player=pl.col(side), step="step") for side in ("player_a", "player_b")])
        .group_by("player", "step")
        .len()
    )
    expected = per_step.sort("player", "step")
    assert result.select("player", "step").equals(expected.select("player", "step"))
    assert result["games"].to_list() == expected["len"].cast(pl.Int64).to_list()
    assert result["period_start"].dtype == games["played_at"].dtype
    assert (result["period_start"].dt.date().cast(pl.Int64) == result["step"]).all()
    assert np.allclose(result["upper"] - result["rating"], 1.959963984540054 * result["sd"])
    assert result["league"].is_null().all()
    assert (result["iterations"] <= 30).all()


def test_time_steps_are_the_shared_periods_of_played_at():
    """ttt_fit's steps are :mod:`duckrate.fits.whole_history.periods`' (whole days since the epoch in UTC by
    default; weeks, months, years on request), as whr_fit's."""
    frame = history(200, 12, 30.0, seed=5)
    for period in (None, "day", "week", "month"):
        fitted = duckrate.ttt_fit(frame, p_draw=0.2, period=period)
        played = frame["played_at"].to_arrow()
        unit = {"us": "microseconds", "ns": "nanoseconds", "ms": "milliseconds"}[played.type.unit]
        expected = time_steps(np.asarray(played.cast(pa.int64())), unit, period or "day")
        assert set(fitted["step"].to_list()) == set(expected.tolist())
    assert time_steps(np.array([-60_000_000, 0]), "microseconds", "day").tolist() == [-1, 0]
    with pytest.raises(DuckrateInputError, match="period = 'fortnight' does not fit column 'played_at'"):
        duckrate.ttt_fit(frame, p_draw=0.2, period="fortnight")


def test_a_date_played_at_and_a_period_column():
    frame = history(120, 10, 4.0, seed=9)
    on_dates = frame.with_columns(played_at=pl.col("played_at").dt.date())
    by_time, by_date = (duckrate.ttt_fit(f, p_draw=0.2) for f in (frame, on_dates))
    assert by_date["period_start"].dtype == pl.Date
    assert by_date.drop("period_start").equals(by_time.drop("period_start"))
    start = frame["played_at"].min()
    weeks = frame.with_columns(period=((pl.col("played_at") - start).dt.total_days() // 7))
    by_week = duckrate.ttt_fit(weeks, p_draw=0.2)
    assert by_week["period_start"].dtype == pl.Int64
    assert sorted(set(by_week["step"])) == sorted(set(weeks["period"]))


def test_gaps_grow_the_uncertainty_by_gamma_squared_per_step():
    """A player's skill between two games a long time apart: with no other information, the drift makes the
    later estimate less certain before its game."""
    start = datetime(2024, 1, 1)
    frame = pl.DataFrame(
        {
            "match_id": [1, 2],
            "played_at": [start, start + timedelta(days=100)],
            "player_a": ["a", "a"],
            "player_b": ["b", "c"],
            "score_a": [1.0, 1.0],
        }
    )
    flat, drifting = (duckrate.ttt_fit(frame, gamma=g, epsilon=1e-13, iterations=500) for g in (0.0, 0.5))
    a_flat = flat.filter(pl.col("player") == "a")
    a_drift = drifting.filter(pl.col("player") == "a")
    assert a_flat["rating"][0] == pytest.approx(a_flat["rating"][1], abs=1e-12)  # gamma 0: one skill throughout
    assert a_drift["sd"][1] > a_flat["sd"][1]


@pytest.mark.parametrize("threads, accelerate, iterations", [(2, False, 237), (2, True, 4), (3, True, 4)])
def test_threads_give_the_same_bits(monkeypatch, threads, accelerate, iterations):
    """Batches fitted side by side, each waiting for the batches it reads: the one-thread result, bit for
    bit, over dense batches (players meet again within a few days) and at convergence, with the package's
    schedule and with the coarse correction (computed by every thread between two barriers)."""
    frame = history(600, 20, 12.0, seed=4)
    one = duckrate.ttt_fit(frame, p_draw=0.2, epsilon=1e-4, iterations=300, accelerate=accelerate)
    monkeypatch.setattr(passes, "THREADED_MIN_GAMES", 0)
    monkeypatch.setattr(passes, "THREADED_MAX_NEIGHBOUR_SHARE", 1.0)
    monkeypatch.setattr(passes.numba, "get_num_threads", lambda: threads)
    several = duckrate.ttt_fit(frame, p_draw=0.2, epsilon=1e-4, iterations=300, accelerate=accelerate)
    assert several.equals(one) and one["converged"].all() and one["iterations"][0] == iterations
    for column in ("rating", "sd"):
        assert np.array_equal(several[column].to_numpy().view(np.int64), one[column].to_numpy().view(np.int64))
