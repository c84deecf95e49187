"""Whole-History Rating: agreement with the ``whr`` package (2.2.0) and with a naive dense maximisation of the
whole log-posterior, the time steps, bad input, and invariance to row order and to other leagues."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl
import pytest
import whr
from scipy.optimize import minimize

import duckrate
from duckrate import DuckrateInputError
from duckrate.fits.whole_history import leagues, newton
from duckrate.synthetic import generate_matches

POINTS = 400.0 / math.log(10.0)  # rating points per natural unit
RIDGE = 1e-3  # the package's ridge on a player's Hessian diagonal


def history(n_games: int, n_players: int, seed: int, hours_between: float, **options) -> pl.DataFrame:
    """A synthetic history with draws whose players play on many different days."""
    frame = generate_matches(n_games, n_players, seed=seed, seconds_between_matches=3600.0 * hours_between, **options)
    return frame.select("match_id", "played_at", "player_a", "player_b", "score_a")


def with_days(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with ``day``, whole days since 1970 (the package's time step)."""
    return frame.with_columns(pl.col("played_at").dt.epoch("d").cast(pl.Int64).alias("day"))


# --------------------------------------------------------------------------------------------------
# The package, iterated to convergence
# --------------------------------------------------------------------------------------------------


def package_ratings(frame: pl.DataFrame, w2: float, virtual_games: int, steps: str = "day") -> dict:
    """``{player: [[step, elo, sd], ...]}`` from ``whr.Base`` iterated in rounds of 20 iterations until the
    ratings are within 1e-7 Elo of the package's limit (its own ``iterate_until_converge`` stops at a 0.01 Elo
    grid). The sweeps converge linearly: a round that moves no rating by more than ``step``, at a ratio ``q``
    of the round before's largest move, leaves them at most about ``step · q / (1 - q)`` from the limit."""
    base = whr.Base(config={"w2": w2, "virtual_games": virtual_games})
    winner = {1.0: "B", 0.0: "W", 0.5: "D"}  # player_a plays black
    base.create_games(
        [[a, b, winner[s], int(t)] for a, b, s, t in frame.select("player_a", "player_b", "score_a", steps).iter_rows()]
    )
    previous, previous_step = None, math.inf
    for _ in range(500):
        base.iterate(20)
        current = dict(base.get_ordered_ratings())
        elos = np.array([elo for name in sorted(current) for _, elo, _ in current[name]])
        if previous is not None:
            step = float(np.max(np.abs(elos - previous)))
            q = step / previous_step  # 0 after the first round: no ratio yet
            if step < 1e-12 or (0.0 < q < 0.95 and step * q / (1.0 - q) < 1e-7):
                return current
            previous_step = step
        previous = elos
    raise AssertionError("the whr package did not converge in 10,000 iterations")


def assert_matches_package(result: pl.DataFrame, expected: dict, tol: float = 1e-6) -> tuple[float, float]:
    """Every (player, step) in both, ratings (minus 1500) and sds within ``tol`` Elo; returns the largest gaps."""
    rows = {(p, s): (r, sd) for p, s, r, sd in result.select("player", "step", "rating", "sd").iter_rows()}
    flat = {(p, t): (elo, sd) for p, days in expected.items() for t, elo, sd in days}
    assert set(rows) == set(flat)
    rating_gap = max(abs(rows[k][0] - 1500.0 - flat[k][0]) for k in flat)
    sd_gap = max(abs(rows[k][1] - flat[k][1]) for k in flat)
    assert rating_gap < tol, rating_gap
    assert sd_gap < tol, sd_gap
    return rating_gap, sd_gap


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_package_docstring_example_at_convergence(method):
    """The package's own example (w2 = 30, integer days), iterated to convergence."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [0, 10, 30, 60],
            "player_a": ["Alice", "Bob", "Dave", "Bob"],
            "player_b": ["Carol", "Dave", "Alice", "Carol"],
            "score_a": [0.5, 1.0, 0.0, 0.0],
        }
    )
    result = duckrate.whr_fit(frame, w2=30.0, method=method)
    expected = package_ratings(frame.with_columns(pl.col("played_at").alias("day")), 30.0, 2)
    assert_matches_package(result, expected)
    assert result["converged"].all()


@pytest.mark.parametrize(
    ("w2", "virtual_games", "method"),
    [(300.0, 2, "newton"), (300.0, 2, "sweeps"), (30.0, 1, "newton"), (3000.0, 5, "newton"), (3000.0, 5, "sweeps")],
)
def test_package_small(w2, virtual_games, method):
    frame = with_days(history(1500, 30, seed=3, hours_between=3.0))
    result = duckrate.whr_fit(frame.drop("day"), w2=w2, virtual_games=virtual_games, method=method)
    assert result["step"].n_unique() > 100  # many days: the Wiener prior matters
    assert result["converged"].all()
    assert_matches_package(result, package_ratings(frame, w2, virtual_games))


@pytest.mark.slow
def test_package_20k_games():
    """20,000 games with draws between 500 players over ~7 years of days; both methods."""
    frame = with_days(history(20_000, 500, seed=11, hours_between=3.0))
    assert (frame["score_a"] == 0.5).sum() > 1000
    expected = package_ratings(frame, 300.0, 2)
    for method in ("newton", "sweeps"):
        result = duckrate.whr_fit(frame.drop("day"), method=method)
        assert result.height > 20_000 and result["converged"].all()
        assert_matches_package(result, expected)


# --------------------------------------------------------------------------------------------------
# A naive dense maximisation of the whole log-posterior
# --------------------------------------------------------------------------------------------------


class DenseModel:
    """The log-posterior of every (player, step) rating at once, dense, in natural units (the test's own,
    independent implementation of the model: games, Wiener prior between a player's steps, virtual draws
    against a 0-rated player on the player's first step)."""

    def __init__(self, frame: pl.DataFrame, w2: float, virtual_games: float, steps: str):
        weight = frame["weight"].to_numpy() if "weight" in frame.columns else np.ones(frame.height)
        keys = sorted(
            set(zip(frame["player_a"], frame[steps])) | set(zip(frame["player_b"], frame[steps])),
        )
        self.keys = keys
        index = {key: i for i, key in enumerate(keys)}
        self.a = np.array([index[k] for k in zip(frame["player_a"], frame[steps])])
        self.b = np.array([index[k] for k in zip(frame["player_b"], frame[steps])])
        self.s = frame["score_a"].to_numpy().astype(float)
        self.w = weight.astype(float)
        self.n = len(keys)
        self.first = np.array([i for i, k in enumerate(keys) if i == 0 or keys[i - 1][0] != k[0]])
        links = [(i, i + 1) for i in range(self.n - 1) if keys[i][0] == keys[i + 1][0]]
        self.left = np.array([i for i, _ in links], dtype=int)
        self.right = np.array([j for _, j in links], dtype=int)
        gaps = np.array([keys[j][1] - keys[i][1] for i, j in links], dtype=float)
        self.inv_var = 1.0 / (w2 / POINTS**2 * gaps)
        self.virtual = virtual_games

    def objective(self, r):
        d = r[self.a] - r[self.b]
        games = np.sum(self.w * (self.s * -np.logaddexp(0.0, -d) + (1 - self.s) * -np.logaddexp(0.0, d)))
        f = r[self.first]
        virtual = self.virtual * np.sum(0.5 * -np.logaddexp(0.0, -f) + 0.5 * -np.logaddexp(0.0, f))
        wiener = -0.5 * np.sum(self.inv_var * (r[self.right] - r[self.left]) ** 2)
        return games + virtual + wiener

    def gradient(self, r):
        d = r[self.a] - r[self.b]
        residual = self.w * (self.s - 1.0 / (1.0 + np.exp(-d)))
        g = np.bincount(self.a, residual, self.n) - np.bincount(self.b, residual, self.n)
        f = r[self.first]
        g[self.first] += self.virtual * (0.5 - 1.0 / (1.0 + np.exp(-f)))
        pull = self.inv_var * (r[self.right] - r[self.left])
        g += np.bincount(self.left, pull, self.n) - np.bincount(self.right, pull, self.n)
        return g

    def hessian(self, r):
        h = np.zeros((self.n, self.n))
        p = 1.0 / (1.0 + np.exp(-(r[self.a] - r[self.b])))
        c = self.w * p * (1 - p)
        np.add.at(h, (self.a, self.a), -c)
        np.add.at(h, (self.b, self.b), -c)
        np.add.at(h, (self.a, self.b), c)
        np.add.at(h, (self.b, self.a), c)
        q = 1.0 / (1.0 + np.exp(-r[self.first]))
        h[self.first, self.first] -= self.virtual * q * (1 - q)
        np.add.at(h, (self.left, self.left), -self.inv_var)
        np.add.at(h, (self.right, self.right), -self.inv_var)
        np.add.at(h, (self.left, self.right), self.inv_var)
        np.add.at(h, (self.right, self.left), self.inv_var)
        return h

    def maximise(self) -> np.ndarray:
        result = minimize(
            lambda r: -self.objective(r),
            np.zeros(self.n),
            jac=lambda r: -self.gradient(r),
            hess=lambda r: -self.hessian(r),
            method="trust-exact",
            options={"gtol": 1e-11, "maxiter": 1000},
        )
        assert np.max(np.abs(self.gradient(result.x))) < 1e-9
        return result.x

    def player_sd(self, r) -> np.ndarray:
        """Each rating's sd as the package defines it: from the inverse of its player's own block of the
        Hessian (the ridge on its diagonal), the other players held fixed."""
        h = self.hessian(r)
        sd = np.empty(self.n)
        players = [k[0] for k in self.keys]
        start = 0
        while start < self.n:
            stop = start
            while stop < self.n and players[stop] == players[start]:
                stop += 1
            block = h[start:stop, start:stop] - RIDGE * np.eye(stop - start)
            sd[start:stop] = np.sqrt(np.diag(-np.linalg.inv(block)))
            start = stop
        return sd


def assert_matches_dense(result: pl.DataFrame, model: DenseModel, tol: float = 1e-6):
    r = model.maximise()
    sd = model.player_sd(r)
    ours = {(p, s): (x, y) for p, s, x, y in result.select("player", "step", "rating", "sd").iter_rows()}
    assert set(ours) == set(model.keys)
    rating_gap = max(abs(ours[k][0] - 1500.0 - POINTS * r[i]) for i, k in enumerate(model.keys))
    sd_gap = max(abs(ours[k][1] - POINTS * sd[i]) for i, k in enumerate(model.keys))
    assert rating_gap < tol, rating_gap
    assert sd_gap < tol, sd_gap


@pytest.mark.parametrize(
    ("w2", "virtual_games", "method"), [(300.0, 2.0, "newton"), (30.0, 1.0, "sweeps"), (5000.0, 0.5, "newton")]
)
def test_dense_small(w2, virtual_games, method):
    frame = with_days(history(250, 10, seed=5, hours_between=4.0))
    result = duckrate.whr_fit(frame.drop("day"), w2=w2, virtual_games=virtual_games, method=method)
    assert_matches_dense(result, DenseModel(frame, w2, virtual_games, "day"))


def test_dense_weights_and_fractional_scores():
    """Beyond the package: game weights and scores other than 0, ½, 1 (a share of a win)."""
    frame = with_days(history(300, 10, seed=9, hours_between=6.0))
    rng = np.random.default_rng(1)
    frame = frame.with_columns(
        pl.Series("weight", rng.uniform(0.2, 3.0, frame.height)),
        pl.Series("score_a", np.round(rng.uniform(0.0, 1.0, frame.height), 2)),
    )
    for method in ("newton", "sweeps"):
        result = duckrate.whr_fit(frame.drop("day"), method=method)
        assert_matches_dense(result, DenseModel(frame, 300.0, 2.0, "day"))


def test_dense_integer_steps():
    """An integer played_at: each value a step, the Wiener variance growing with the gap between values."""
    rng = np.random.default_rng(4)
    n = 200
    players = [f"p{i}" for i in range(8)]
    a = rng.integers(0, 8, n)
    b = (a + rng.integers(1, 8, n)) % 8
    frame = pl.DataFrame(
        {
            "match_id": np.arange(n),
            "played_at": np.sort(rng.integers(-50, 400, n)),
            "player_a": [players[i] for i in a],
            "player_b": [players[i] for i in b],
            "score_a": rng.choice([0.0, 0.5, 1.0], n),
        }
    )
    result = duckrate.whr_fit(frame, w2=100.0, period="value")
    assert result["period_start"].dtype == pl.Int64
    assert (result["period_start"] == result["step"]).all()
    assert_matches_dense(result, DenseModel(frame.with_columns(pl.col("played_at").alias("t")), 100.0, 2.0, "t"))
    expected = package_ratings(frame.with_columns(pl.col("played_at").alias("t")), 100.0, 2, steps="t")
    assert_matches_package(result, expected)


# --------------------------------------------------------------------------------------------------
# Output, time steps
# --------------------------------------------------------------------------------------------------


def test_output_columns_and_rows():
    frame = history(500, 20, seed=2, hours_between=5.0)
    result = duckrate.whr_fit(frame)
    assert result.columns == [
        "league",
        "player",
        "period_start",
        "step",
        "rating",
        "sd",
        "lower",
        "upper",
        "games",
        "iterations",
        "converged",
    ]
    assert result.schema["period_start"] == pl.Datetime("us")
    assert result.equals(result.sort(["league", "player", "step"]))
    assert result["games"].sum() == 2 * frame.height
    assert result.select(pl.struct("player", "step").n_unique()).item() == result.height
    np.testing.assert_allclose(result["upper"] - result["rating"], 1.959963984540054 * result["sd"], rtol=1e-12)
    np.testing.assert_allclose(result["rating"] - result["lower"], 1.959963984540054 * result["sd"], rtol=1e-12)
    assert result["converged"].all() and result["iterations"].min() >= 2
    days = frame.with_columns(pl.col("played_at").dt.epoch("d").alias("step"))
    played = set(zip(days["player_a"], days["step"])) | set(zip(days["player_b"], days["step"]))
    assert set(zip(result["player"], result["step"])) == played


def test_periods_of_timestamps_and_dates():
    times = [
        datetime(1969, 12, 31, 23, 59),  # before the epoch: day -1, week 0 (Monday 1969-12-29)
        datetime(1970, 1, 4, 12, 0),  # Sunday: still week 0
        datetime(1970, 1, 5, 0, 0),  # Monday: week 1
        datetime(2024, 2, 29, 8, 30),
        datetime(2024, 3, 1, 0, 0),
    ]
    frame = pl.DataFrame(
        {
            "match_id": range(5),
            "played_at": times,
            "player_a": ["a"] * 5,
            "player_b": ["b"] * 5,
            "score_a": [1.0, 0.0, 0.5, 1.0, 0.0],
        }
    )

    def steps(period, played_at=None):
        source = frame if played_at is None else frame.with_columns(played_at)
        result = duckrate.whr_fit(source, period=period).filter(pl.col("player") == "a")
        return result["step"].to_list(), result["period_start"].to_list()

    assert steps(None) == steps("day")
    day_steps, day_starts = steps("day")
    assert day_steps == [-1, 3, 4, 19782, 19783]
    assert day_starts[0] == datetime(1969, 12, 31) and day_starts[3] == datetime(2024, 2, 29)
    assert steps("week") == (
        [0, 1, 2826],
        [datetime(1969, 12, 29), datetime(1970, 1, 5), datetime(2024, 2, 26)],
    )
    assert steps("month") == (
        [-1, 0, 649, 650],
        [datetime(1969, 12, 1), datetime(1970, 1, 1), datetime(2024, 2, 1), datetime(2024, 3, 1)],
    )
    assert steps("year") == ([-1, 0, 54], [datetime(1969, 1, 1), datetime(1970, 1, 1), datetime(2024, 1, 1)])
    # DATE played_at: steps alike, period_start a DATE
    as_date = pl.col("played_at").dt.date()
    date_steps, date_starts = steps("month", as_date)
    assert date_steps == [-1, 0, 649, 650] and date_starts[2] == date(2024, 2, 1)
    # a zoned timestamp: days in UTC, period_start keeps the zone
    zoned = pl.col("played_at").dt.replace_time_zone("UTC")
    zoned_steps, zoned_starts = steps("day", zoned)
    assert zoned_steps == day_steps
    assert zoned_starts[3] == datetime(2024, 2, 29, tzinfo=UTC)
    # a coarser period pools a player's games into fewer steps, each with its games counted
    result = duckrate.whr_fit(frame, period="year").filter(pl.col("player") == "b")
    assert result["games"].to_list() == [1, 2, 2]


def test_week_steps_are_seven_days_of_w2():
    """A week step is the Wiener process's unit: weekly steps with w2 equal daily steps 7 days apart with w2/7."""
    start = datetime(2024, 1, 1)  # a Monday
    rng = np.random.default_rng(8)
    n = 120
    frame = pl.DataFrame(
        {
            "match_id": range(n),
            "played_at": [start + timedelta(days=7 * int(k)) for k in np.sort(rng.integers(0, 30, n))],
            "player_a": [f"p{i}" for i in rng.integers(0, 3, n)],
            "player_b": ["q"] * n,
            "score_a": rng.choice([0.0, 0.5, 1.0], n),
        }
    )
    weekly = duckrate.whr_fit(frame, period="week", w2=70.0)
    daily = duckrate.whr_fit(frame, period="day", w2=10.0)
    np.testing.assert_allclose(weekly["rating"], daily["rating"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(weekly["sd"], daily["sd"], rtol=0, atol=1e-6)


# --------------------------------------------------------------------------------------------------
# Determinism and independence
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_row_order_invariance(method):
    frame = history(3000, 60, seed=13, hours_between=2.0)
    result = duckrate.whr_fit(frame, method=method)
    for seed in (0, 1):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        assert duckrate.whr_fit(shuffled, method=method).equals(result)


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_leagues_are_independent(method):
    """Two leagues fitted together give each league's rows bit for bit as fitted alone, iterations included."""
    first = history(800, 20, seed=21, hours_between=3.0).with_columns(pl.lit("x").alias("league"))
    second = history(600, 15, seed=22, hours_between=5.0).with_columns(
        pl.lit("y").alias("league"), pl.col("match_id") + 10_000
    )
    together = duckrate.whr_fit(pl.concat([second, first]), method=method)
    assert together["league"].unique(maintain_order=True).to_list() == ["x", "y"]
    assert together.filter(pl.col("league") == "x").equals(duckrate.whr_fit(first, method=method))
    assert together.filter(pl.col("league") == "y").equals(duckrate.whr_fit(second, method=method))


def test_rows_come_sorted_by_league_player_and_step():
    """The rows are in the order a sort by league (the unnamed league last), player and step gives, though the
    leagues come in another order in the input and the players' names are in several scripts."""
    frame = history(300, 12, seed=5, hours_between=4.0)
    names = ["Zoë", "zoe", "Åsa", "éclair", "Ωmega", "ß", "a", "B", "日本", "😀", "Ärger", "aa"]
    renamed = dict(zip(sorted(set(frame["player_a"]) | set(frame["player_b"])), names, strict=True))
    league = pl.Series([None] * 100 + ["β"] * 100 + ["a"] * 100, dtype=pl.String)
    frame = frame.with_columns(pl.col("player_a").replace(renamed), pl.col("player_b").replace(renamed), league=league)
    result = duckrate.whr_fit(frame)
    assert result["league"].unique(maintain_order=True).to_list() == ["a", "β", None]
    assert result.equals(result.sort(["league", "player", "step"], nulls_last=True))
    assert set(result["player"]) == set(names)


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_iteration_cap(method):
    frame = history(500, 20, seed=2, hours_between=5.0)
    capped = duckrate.whr_fit(frame, method=method, max_iterations=2)
    assert capped["iterations"].to_list() == [2] * capped.height
    assert not capped["converged"].any()
    loose = duckrate.whr_fit(frame, method=method, tolerance=1.0)
    full = duckrate.whr_fit(frame, method=method)
    assert loose["iterations"][0] < full["iterations"][0]
    assert (loose["rating"] - full["rating"]).abs().max() < 1.0


def test_methods_agree_tightly():
    """The two solvers reach one maximum: with a tight tolerance they agree far below the default's 1e-6."""
    frame = history(4000, 80, seed=17, hours_between=2.0)
    newton = duckrate.whr_fit(frame, tolerance=1e-9)
    sweeps = duckrate.whr_fit(frame, method="sweeps", tolerance=1e-9)
    assert newton["iterations"][0] < 20 < sweeps["iterations"][0]
    assert (newton["rating"] - sweeps["rating"]).abs().max() < 1e-8
    assert (newton["sd"] - sweeps["sd"]).abs().max() < 1e-8


def test_empty_input():
    frame = history(10, 4, seed=0, hours_between=1.0).head(0)
    result = duckrate.whr_fit(frame)
    assert result.height == 0 and result.columns[:4] == ["league", "player", "period_start", "step"]


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"w2": 0.0}, "parameter w2 = 0.0; expected a Wiener variance > 0"),
        ({"w2": -5.0}, "parameter w2 = -5.0"),
        ({"w2": math.inf}, "parameter w2 = inf"),
        ({"w2": math.nan}, "parameter w2 = nan"),
        ({"w2": "300"}, "parameter w2 = '300'"),
        ({"virtual_games": -1.0}, "parameter virtual_games = -1.0; expected a number >= 0"),
        ({"max_iterations": 0}, "parameter max_iterations = 0; expected an integer >= 1"),
        ({"max_iterations": 2.5}, "parameter max_iterations = 2.5"),
        ({"tolerance": 0.0}, "parameter tolerance = 0.0; expected a tolerance > 0"),
        ({"method": "mm"}, "parameter method = 'mm'; expected 'newton' or 'sweeps'"),
        ({"period": "fortnight"}, "parameter period = 'fortnight' does not fit column 'played_at' of type timestamp"),
        ({"period": "value"}, "expected NULL or one of 'day', 'week', 'month', 'year'"),
        ({"period": 7}, "parameter period = 7"),
    ],
)
def test_bad_parameters(params, message):
    frame = history(50, 6, seed=1, hours_between=1.0)
    with pytest.raises(DuckrateInputError, match="^whr_fit: ") as error:
        duckrate.whr_fit(frame, **params)
    assert message in str(error.value)


def test_period_of_integer_played_at():
    frame = pl.DataFrame(
        {"match_id": [1, 2], "played_at": [3, 5], "player_a": ["a", "b"], "player_b": ["b", "a"], "score_a": [1.0, 0.0]}
    )
    assert duckrate.whr_fit(frame)["step"].to_list() == [3, 5, 3, 5]
    assert duckrate.whr_fit(frame, period="VALUE").equals(duckrate.whr_fit(frame))
    with pytest.raises(DuckrateInputError) as error:
        duckrate.whr_fit(frame, period="day")
    text = str(error.value)
    assert "parameter period = 'day'" in text and "type int64" in text and "expected NULL or one of 'value'" in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (pl.lit("2024-01-01").alias("played_at"), "column 'played_at' has type"),
        (pl.lit(1.5).alias("score_a"), "column 'score_a' has 1.5"),
        (pl.col("player_a").alias("player_b"), "self-match"),
        (pl.lit(None, dtype=pl.Utf8).alias("player_a"), "column 'player_a' has None"),
        (pl.lit(0.0).alias("weight"), "column 'weight' has 0.0"),
    ],
)
def test_bad_matches(change, message):
    frame = history(50, 6, seed=1, hours_between=1.0).with_columns(change)
    with pytest.raises(DuckrateInputError, match=message):
        duckrate.whr_fit(frame)


def test_not_a_frame():
    with pytest.raises(DuckrateInputError, match="expected a polars DataFrame"):
        duckrate.whr_fit({"match_id": [1]})  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["newton", "sweeps"])
def test_no_finite_maximum_without_virtual_games(method):
    """Without virtual games a player who only wins runs off to infinity: never reported as converged."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [1, 2, 3],
            "player_a": ["a", "a", "b"],
            "player_b": ["b", "c", "c"],
            "score_a": [1.0, 1.0, 0.5],
        }
    )
    assert not duckrate.whr_fit(frame, virtual_games=0, method=method, max_iterations=200)["converged"].any()
    assert duckrate.whr_fit(frame, method=method)["converged"].all()


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_threads_give_the_same_bits(monkeypatch, threads):
    """A league solved with helper threads (chunks claimed by whichever thread comes first, every sum in chunk
    order), alone and beside smaller leagues solved side by side: the one-thread fit, bit for bit, over a
    league of several chunks."""
    big = history(20_000, 500, seed=31, hours_between=3.0).with_columns(pl.lit("big").alias("league"))
    small = [
        history(n, 30, seed=32 + i, hours_between=5.0).with_columns(
            pl.lit(f"small{i}").alias("league"), pl.col("match_id") + 100_000 * (i + 1)
        )
        for i, n in enumerate((3000, 1000))
    ]
    several = pl.concat([big, *small])
    monkeypatch.setattr(leagues.numba, "get_num_threads", lambda: 1)
    one = [duckrate.whr_fit(frame) for frame in (big, several)]
    assert one[0].height > 2 * newton.CHUNK_WORK  # several chunks (of days and game sides)
    helped = []

    def spy(*args):
        result = newton.newton_threaded(*args)
        helped.append(result[-1])
        return result

    monkeypatch.setattr(leagues, "newton_threaded", spy)
    monkeypatch.setattr(leagues, "THREADED_MIN_DAYS", 0)
    monkeypatch.setattr(leagues.numba, "get_num_threads", lambda: threads)
    for _ in range(20):  # until the helpers have run chunks (at once, unless the machine is very busy)
        for expected, frame in zip(one, (big, several), strict=True):
            result = duckrate.whr_fit(frame)
            assert result.equals(expected) and expected["converged"].all()
            for column in ("rating", "sd"):
                bits = result[column].to_numpy().view(np.int64)
                assert np.array_equal(bits, expected[column].to_numpy().view(np.int64))
        if min(helped[-2:]) > 0:
            break
    assert min(helped[-2:]) > 0, helped
