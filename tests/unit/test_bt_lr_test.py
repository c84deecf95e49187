"""duckrate.bt_lr_test: the game-level logistic fits against scipy, the statistics against a direct
computation, determinism, league independence and the behaviour the paper's tests should have on data
whose truth is known. (Calibration over many seeds and power per generator: bench/bt_lr_test_*.py.)"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import optimize, stats

import duckrate
from duckrate import DuckrateInputError
from duckrate.fits.bt_lr_test import TESTS, _matchmaking
from duckrate.fits.game_logistic import fit_games
from duckrate.synthetic import matrix_matches, win_matrix


def scipy_fit(a, b, o, w, n, features, ridge):
    m = 0 if features is None else features.shape[1]

    def f(x):
        z = x[a] - x[b] + (features @ x[n:] if m else 0.0)
        return np.sum(w * (np.logaddexp(0.0, z) - o * z)) + 0.5 * ridge * np.sum(x[:n] ** 2)

    def g(x):
        z = x[a] - x[b] + (features @ x[n:] if m else 0.0)
        r = w * (1 / (1 + np.exp(-z)) - o)
        grad = np.zeros(n + m)
        np.add.at(grad, a, r)
        np.add.at(grad, b, -r)
        grad[:n] += ridge * x[:n]
        if m:
            grad[n:] = features.T @ r
        return grad

    return optimize.minimize(
        f, np.zeros(n + m), jac=g, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000}
    )


def small_games(seed, n=12, t=600):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, t)
    b = (a + rng.integers(1, n, t)) % n
    theta = rng.normal(0, 1, n)
    o = np.where(rng.random(t) < 0.1, 0.5, (rng.random(t) < 1 / (1 + np.exp(theta[b] - theta[a]))).astype(float))
    return a, b, o, rng.uniform(0.5, 2.0, t), rng.normal(0, 1, (t, 2)), n


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_features", [False, True])
def test_game_fit_matches_scipy(seed, with_features):
    a, b, o, w, g, n = small_games(seed)
    features = g if with_features else None
    fit = fit_games(a, b, o, w, n, features, ridge=0.05)
    reference = scipy_fit(a, b, o, w, n, features, 0.05)
    assert fit.converged and fit.gradient_norm < 1e-7
    assert fit.value == pytest.approx(reference.fun, abs=1e-9)
    np.testing.assert_allclose(np.r_[fit.theta, fit.alpha], reference.x, atol=1e-5)


def test_game_fit_weight_two_equals_a_repeated_game():
    a, b, o, _, _, n = small_games(3, t=200)
    weighted = fit_games(a, b, o, np.r_[2.0, np.ones(199)], n, None, ridge=0.1)
    repeated = fit_games(np.r_[a[0], a], np.r_[b[0], b], np.r_[o[0], o], np.ones(1), n, None, ridge=0.1)
    np.testing.assert_allclose(weighted.theta, repeated.theta, atol=1e-9)


def bt_games(n=40, t=8000, seed=1, kind="bt", **options):
    return matrix_matches(win_matrix(kind, n, seed=seed), t, seed=seed + 7, **options).drop("p_true")


def test_columns_and_values():
    out = duckrate.bt_lr_test(bt_games(), seed=5, permutations=19)
    assert out.columns == [
        "league",
        "test",
        "n_players",
        "n_games",
        "games_per_player",
        "statistic",
        "df",
        "p_value",
        "seed",
    ]
    assert out["test"].to_list() == list(TESTS)
    assert (out["n_players"] == 40).all() and (out["n_games"] == 8000).all() and (out["seed"] == 5).all()
    assert out["games_per_player"][0] == 400.0
    assert out["p_value"].is_between(0, 1).all()
    assert dict(zip(out["test"], out["df"].to_list()))["split"] == 1.0  # see the module docstring
    assert dict(zip(out["test"], out["df"].to_list()))["lowrank"] == 2.0


def test_split_statistic_equals_a_direct_computation():
    """Recompute the split test's Λ with scipy from the same flips and split (drawn from the documented
    per-league generator) and compare."""
    from duckrate.fits.bt_lr_test import _league_generator

    games = bt_games(n=15, t=3000, seed=2)
    out = duckrate.bt_lr_test(games, seed=11, permutations=9)
    split = out.filter(pl.col("test") == "split").row(0, named=True)
    names = sorted(set(games["player_a"]) | set(games["player_b"]))
    code = {name: i for i, name in enumerate(names)}
    a = np.array([code[x] for x in games["player_a"]])
    b = np.array([code[x] for x in games["player_b"]])
    o = games["score_a"].to_numpy()
    rng = _league_generator(11, None)
    flip = rng.random(a.size) < 0.5
    a, b, o = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1 - o, o)
    perm = rng.permutation(a.size)
    train, test = np.sort(perm[: a.size // 2]), np.sort(perm[a.size // 2 :])
    ones = np.ones(train.size)
    theta = scipy_fit(a[train], b[train], o[train], ones, 15, None, 10.0).x
    features = np.column_stack([theta[a[test]], theta[b[test]]])
    ones = np.ones(test.size)
    null = scipy_fit(a[test], b[test], o[test], ones, 15, None, 1e-3).fun
    alternative = scipy_fit(a[test], b[test], o[test], ones, 15, features, 1e-3).fun
    assert split["statistic"] == pytest.approx(2 * (null - alternative), abs=1e-6)
    assert split["p_value"] == pytest.approx(stats.chi2.sf(split["statistic"] / 1.25, 1), rel=1e-12)


@pytest.mark.parametrize("kind", ["halves", "other scores", "weighted"])
def test_permutation_runs_are_elo_over_the_shuffled_orders(kind):
    """Each random-order run is plain Elo over the games in the order random_orders.shuffle_into draws from
    its seed (here 4 buckets), whichever pool runs it; run 0 is the real order. Games with scores 0, ½, 1
    are packed one float a game, others not."""
    import math
    from concurrent.futures import ThreadPoolExecutor

    from duckrate.fits.bt_lr_test import _game_records, _submit_permutation_runs
    from duckrate.fits.random_orders import bucket_bits, shuffle_into

    rng = np.random.default_rng(8)
    t, n, eta = 70_000, 150, 0.05
    assert bucket_bits(t) == 2
    a = rng.integers(0, n, t)
    b = (a + rng.integers(1, n, t)) % n
    weighted = kind == "weighted"
    target = rng.choice([0.0, 0.5, 1.0] if kind != "other scores" else [0.0, 0.3, 1.0], t)
    weight = rng.random(t) + 0.5 if weighted else np.ones(1)
    games = _game_records(a, b, target, weight, n)
    assert games.shape[1] == (1 if kind == "halves" else 3 if weighted else 2)
    seeds = np.arange(11, dtype=np.uint64) * np.uint64(2**61 + 3)  # two tasks, the second partial
    rows = []
    for workers in (1, 3):
        with ThreadPoolExecutor(workers) as pool:
            finals, runs = _submit_permutation_runs(pool, games, n, eta, seeds)
            for run in runs:
                run.result()
        rows.append(finals)
    assert np.array_equal(rows[0], rows[1])

    def plain_elo(order):
        rating = [0.0] * n
        for g in order:
            w = weight[g] if weighted else 1.0
            change = eta * w * (target[g] - 1.0 / (1.0 + math.exp(rating[b[g]] - rating[a[g]])))
            rating[a[g]] += change
            rating[b[g]] -= change
        return rating

    assert finals[0].tolist() == plain_elo(range(t))
    index = np.column_stack([np.arange(t, dtype=np.float64), np.zeros(t)])
    for r in (1, 8, 9, 11):  # both tasks
        shuffled = np.empty_like(index)
        shuffle_into(index, seeds[r - 1], 2, shuffled, np.empty(4, np.int64))
        assert finals[r].tolist() == plain_elo(shuffled[:, 0].astype(np.int64))


def test_deterministic_row_order_free_and_seeded():
    games = bt_games(n=30, t=4000).with_columns(league=pl.lit("x"))
    first = duckrate.bt_lr_test(games, seed=3, permutations=19)
    shuffled = duckrate.bt_lr_test(games.sample(fraction=1.0, shuffle=True, seed=4), seed=3, permutations=19)
    assert first.equals(shuffled)
    assert not first.equals(duckrate.bt_lr_test(games, seed=4, permutations=19))


def test_leagues_are_tested_independently():
    one = bt_games(n=20, t=3000, seed=1).with_columns(league=pl.lit("one"))
    two = bt_games(n=25, t=2000, seed=2).with_columns(league=pl.lit("two"), match_id=pl.col("match_id") + 10**6)
    both = duckrate.bt_lr_test(pl.concat([one, two]), permutations=9)
    assert both.filter(pl.col("league") == "one").equals(duckrate.bt_lr_test(one, permutations=9))
    assert both.filter(pl.col("league") == "two")["n_players"].to_list() == [25] * len(TESTS)


def test_matchmaking_null_for_equally_active_players():
    """Pairing uniform over distinct players: E[corr] = -1/(N-1), which the test takes as its null."""
    n = 10
    theta = np.linspace(-1, 1, n)
    rng = np.random.default_rng(0)
    a = np.repeat(np.arange(n), n - 1)
    b = np.array([j for i in range(n) for j in range(n) if j != i])
    r, _, p = _matchmaking(theta[a], theta[b], a, b, theta, n)
    assert r == pytest.approx(-1 / (n - 1), abs=1e-12)
    assert p == pytest.approx(1.0, abs=1e-9)
    assert rng is not None


def test_matchmaking_by_rating_is_detected():
    games = bt_games(n=200, t=20_000, seed=3, matchmaking="rating_window")
    row = duckrate.bt_lr_test(games, permutations=9).filter(pl.col("test") == "matchmaking").row(0, named=True)
    assert row["statistic"] > 0.3 and row["p_value"] < 1e-10


def test_order_permutation_detects_drift():
    start = win_matrix("bt", 30, seed=1)
    games = matrix_matches(start, 20_000, seed=2, final_matrix=start.T.copy()).drop("p_true")  # the order reverses
    row = duckrate.bt_lr_test(games, permutations=39).filter(pl.col("test") == "order_permutation").row(0, named=True)
    assert row["p_value"] <= 0.05


def test_lowrank_rejects_noisy_sorting_and_split_is_blind_to_it():
    """A prototype's finding: on SST-by-entry data the low-rank test rejects strongly
    while the split test does not (a fixed seed; bench/bt_lr_test_power.py measures the rates)."""
    out = duckrate.bt_lr_test(bt_games(n=100, t=100_000, seed=4, kind="sst_byentry"), permutations=9)
    p = dict(zip(out["test"], out["p_value"]))
    assert p["lowrank"] < 0.01
    assert p["split"] > 0.01


def test_bad_parameters_and_input():
    games = bt_games(n=10, t=200)
    with pytest.raises(DuckrateInputError, match="permutations"):
        duckrate.bt_lr_test(games, permutations=0)
    with pytest.raises(DuckrateInputError, match="ridge"):
        duckrate.bt_lr_test(games, ridge=-1.0)
    with pytest.raises(DuckrateInputError, match="score_a"):
        duckrate.bt_lr_test(games.with_columns(score_a=pl.lit(2.0)))
