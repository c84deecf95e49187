"""bt_fit's covariates, sandwich intervals and reweighting against naive dense transcriptions.

The references below build the per-game design matrix Z (a row ``e_a - e_b`` then the covariates), the
Hessian ``Zᵀ diag(w p(1-p)) Z`` (plus the prior's precision) and the middle matrix ``Σ_c g_c g_cᵀ`` with dense
NumPy, and take the Moore-Penrose pseudo-inverse: nothing is shared with duckrate's kernels.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize

import duckrate
from duckrate.core.errors import DuckrateInputError
from duckrate.fits.bradley_terry.contextual import Border
from duckrate.fits.bradley_terry.pairs import pairs_from_rows
from duckrate.fits.bradley_terry.reweight import inverse_pair_frequency
from duckrate.fits.bradley_terry.uncertainty import hessian_variances, sparse_variances

POINTS = 400.0 / math.log(10.0)


def battles(n_players=25, n_games=6000, beta=(0.4, -0.25), seed=0, n_users=300, ties=0.1, user_sd=0.6):
    """Games with two covariates, a per-user effect (so clustering matters) and some ties."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.8, n_players)
    activity = rng.pareto(1.2, n_players) + 1.0
    activity /= activity.sum()
    a = rng.choice(n_players, n_games, p=activity)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    x = rng.normal(0.0, 1.0, (n_games, len(beta)))
    user = rng.integers(0, n_users, n_games)
    effect = rng.normal(0.0, user_sd, n_users)
    d = theta[a] - theta[b] + x @ np.asarray(beta) + effect[user]
    won = rng.random(n_games) < 1.0 / (1.0 + np.exp(-d))
    score = np.where(rng.random(n_games) < ties, 0.5, won.astype(float))
    names = np.array([f"p{i:03d}" for i in range(n_players)])
    frame = pl.DataFrame(
        {
            "match_id": np.arange(n_games),
            "played_at": np.arange(n_games),
            "player_a": names[a],
            "player_b": names[b],
            "score_a": score,
            "user_id": [f"u{u}" for u in user],
        }
    )
    return frame.with_columns(pl.Series(f"x{j + 1}", x[:, j]) for j in range(len(beta)))


def design(frame, players, covariates, home=False):
    index = {name: i for i, name in enumerate(players)}
    a = np.array([index[p] for p in frame["player_a"]])
    b = np.array([index[p] for p in frame["player_b"]])
    n, rows = len(players), frame.height
    extra = ([np.ones(rows)] if home else []) + [frame[c].to_numpy() for c in covariates]
    z = np.zeros((rows, n + len(extra)))
    z[np.arange(rows), a] += 1.0
    z[np.arange(rows), b] -= 1.0
    for j, column in enumerate(extra):
        z[:, n + j] = column
    return z


def naive_sandwich(z, params, score, weight, clusters, n, precision=None, anchor=None, centred=True):
    """Variances of the reported θ and of the coefficients: r_iᵀ H⁺ J H⁺ r_i, dense."""
    p = 1.0 / (1.0 + np.exp(-(z @ params)))
    hessian = (z * (weight * p * (1 - p))[:, None]).T @ z
    if precision is not None:
        hessian[:n, :n] += np.diag(precision)
    g = (weight * (score - p))[:, None] * z
    if clusters is not None:
        codes = np.unique(clusters, return_inverse=True)[1]
        g = np.vstack([g[codes == c].sum(axis=0) for c in range(codes.max() + 1)])
    inverse = np.linalg.pinv(hessian, rcond=1e-13, hermitian=True)
    cov = inverse @ (g.T @ g) @ inverse
    report = np.eye(cov.shape[0])
    if anchor is not None:
        report[:n, anchor] -= 1.0
    elif centred:
        report[:n, :n] -= 1.0 / n
    cov = report @ cov @ report.T
    return np.diag(cov)


def split(fit):
    players = fit.filter(pl.col("kind") == "player").sort("player")
    coefficients = fit.filter(pl.col("kind") == "covariate")
    return players, coefficients


def theta_of(players, anchor_rating=1500.0):
    return (players["rating"].to_numpy() - 1500.0) / POINTS


@pytest.fixture(scope="module")
def games():
    return battles()


@pytest.mark.parametrize("cluster", [None, "user_id"])
def test_sandwich_with_covariates_matches_the_dense_formula(games, cluster):
    fit = duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="sandwich", cluster=cluster)
    players, coefficients = split(fit)
    assert (fit["uncertainty"] == "sandwich").all()
    n = players.height
    z = design(games, players["player"].to_list(), ["x1", "x2"])
    params = np.concatenate([theta_of(players), coefficients["rating"].to_numpy() / POINTS])
    clusters = None if cluster is None else games[cluster].to_numpy()
    variance = naive_sandwich(z, params, games["score_a"].to_numpy(), np.ones(games.height), clusters, n)
    np.testing.assert_allclose(players["sd"].to_numpy(), np.sqrt(variance[:n]) * POINTS, rtol=1e-9)
    np.testing.assert_allclose(coefficients["sd"].to_numpy(), np.sqrt(variance[n:]) * POINTS, rtol=1e-9)
    half = coefficients["upper"].to_numpy() - coefficients["rating"].to_numpy()
    np.testing.assert_allclose(half, 1.959963984540054 * coefficients["sd"].to_numpy(), rtol=1e-12)


def test_clusters_of_repeated_games_count_once(games):
    """Each game repeated four times within one conversation: per-game intervals halve (four times the
    data), clustered by conversation they equal the per-game intervals of the games once."""
    repeated = pl.concat([games.with_columns(conversation=pl.col("match_id"))] * 4).with_columns(
        match_id=pl.int_range(0, 4 * games.height)
    )
    options = {"covariates": ["x1", "x2"], "uncertainty": "sandwich"}
    once = duckrate.bt_fit(games, **options)
    per_game = duckrate.bt_fit(repeated, **options)
    clustered = duckrate.bt_fit(repeated, cluster="conversation", **options)
    np.testing.assert_allclose(per_game["sd"].to_numpy(), once["sd"].to_numpy() / 2.0, rtol=1e-6)
    np.testing.assert_allclose(clustered["sd"].to_numpy(), once["sd"].to_numpy(), rtol=1e-6)


def test_covariate_fit_is_the_maximum_likelihood(games):
    """θ and β against scipy's BFGS on the naive log-likelihood (draws half a win each way)."""
    fit = duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="none", tol=1e-11)
    players, coefficients = split(fit)
    z = design(games, players["player"].to_list(), ["x1", "x2"])
    score = games["score_a"].to_numpy()
    n = players.height

    def objective(params):
        d = z @ params
        value = np.sum(score * np.logaddexp(0, -d) + (1 - score) * np.logaddexp(0, d))
        p = 1.0 / (1.0 + np.exp(-d))
        return value, z.T @ (p - score)

    start = np.zeros(z.shape[1])
    found = minimize(objective, start, jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 5000}).x
    found[:n] -= found[:n].mean()
    np.testing.assert_allclose(theta_of(players), found[:n], atol=1e-6)
    np.testing.assert_allclose(coefficients["rating"].to_numpy() / POINTS, found[n:], atol=1e-6)


def test_known_coefficients_are_recovered():
    beta = (0.5, -0.3)
    games = battles(n_players=40, n_games=60000, beta=beta, ties=0.0, user_sd=0.0, seed=3)
    coefficients = split(duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="sandwich"))[1]
    estimate = coefficients["rating"].to_numpy() / POINTS
    sd = coefficients["sd"].to_numpy() / POINTS
    assert np.all(np.abs(estimate - np.asarray(beta)) < 4 * sd)
    assert coefficients["player"].to_list() == ["x1", "x2"] and coefficients["games"].to_list() == [60000] * 2


def test_newton_with_covariates_converges_quadratically_on_many_rows():
    """Hundreds of thousands of rows: the θ-block's right-hand sides sum to zero only up to the rounding of
    the row sums, which a singular CG solve must not see (it used to stall near a gradient of 1e-7)."""
    from duckrate.synthetic import generate_battles

    games = generate_battles(n_models=60, n_battles=300_000, seed=3)
    fit = duckrate.bt_fit(games, covariates=["len_diff", "md_headers_diff", "bold_diff"], uncertainty="none")
    assert fit["converged"][0] and fit["iterations"][0] <= 8


def test_sandwich_with_home_advantage_prior_and_anchor(games):
    """α as a column of ones; ridge (centred) and anchored reporting."""
    for options, precision_of, anchor_name in (
        ({"prior_sd": 300.0}, 1.0 / (300.0 / POINTS) ** 2, None),
        ({"anchor_player": "p003", "anchor_rating": 1000.0}, None, "p003"),
    ):
        fit = duckrate.bt_fit(games, covariates=["x1"], home_advantage=True, uncertainty="sandwich", **options)
        players, coefficients = split(fit)
        n = players.height
        names = players["player"].to_list()
        anchor = None if anchor_name is None else names.index(anchor_name)
        theta = theta_of(players)
        if anchor is not None:
            theta = theta - theta.mean()  # the likelihood only sees differences
        alpha = fit["home_advantage"][0] / POINTS
        z = design(games, names, ["x1"], home=True)
        params = np.concatenate([theta, [alpha], coefficients["rating"].to_numpy() / POINTS])
        precision = None if precision_of is None else np.full(n, precision_of)
        variance = naive_sandwich(
            z, params, games["score_a"].to_numpy(), np.ones(games.height), None, n, precision, anchor
        )
        np.testing.assert_allclose(players["sd"].to_numpy(), np.sqrt(variance[:n]) * POINTS, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(coefficients["sd"].to_numpy(), np.sqrt(variance[n + 1 :]) * POINTS, rtol=1e-8)


def test_sandwich_without_covariates_uses_the_pairs_fit(games):
    fit = duckrate.bt_fit(games, uncertainty="sandwich", cluster="user_id")
    players, coefficients = split(fit)
    assert coefficients.height == 0
    n = players.height
    z = design(games, players["player"].to_list(), [])
    variance = naive_sandwich(
        z, theta_of(players), games["score_a"].to_numpy(), np.ones(games.height), games["user_id"].to_numpy(), n
    )
    np.testing.assert_allclose(players["sd"].to_numpy(), np.sqrt(variance) * POINTS, rtol=1e-9)


@pytest.mark.slow  # about 20 s on 2 cores: two sandwich fits of 60,000 battles
def test_sparse_sandwich_stays_close_to_the_exact_one():
    """Above 1000 players the sandwich is the sparse inverse Hessian times J_ii/H_ii: measured against the
    dense formula (here within 3% for every player, 1% on average); the coefficients' sd stays exact."""
    games = battles(n_players=1100, n_games=45000, beta=(0.3,), n_users=2000, seed=5)
    fit = duckrate.bt_fit(games, prior_sd=400.0, covariates=["x1"], uncertainty="sandwich", cluster="user_id")
    players, coefficients = split(fit)
    assert (fit["uncertainty"] == "sandwich_sparse").all()
    n = players.height
    z = design(games, players["player"].to_list(), ["x1"])
    params = np.concatenate([theta_of(players), coefficients["rating"].to_numpy() / POINTS])
    precision = np.full(n, 1.0 / (400.0 / POINTS) ** 2)
    variance = naive_sandwich(
        z, params, games["score_a"].to_numpy(), np.ones(games.height), games["user_id"].to_numpy(), n, precision
    )
    ratio = players["sd"].to_numpy() / (np.sqrt(variance[:n]) * POINTS)
    assert np.max(np.abs(ratio - 1.0)) < 0.03 and abs(ratio.mean() - 1.0) < 0.01
    np.testing.assert_allclose(coefficients["sd"].to_numpy(), np.sqrt(variance[n:]) * POINTS, rtol=1e-7)


def test_inverse_pair_frequency_weights():
    a = np.array([0, 1, 0, 2, 0, 1, 3])
    b = np.array([1, 0, 2, 0, 1, 0, 2])
    counts = np.array([4, 4, 2, 2, 4, 4, 1], dtype=float)  # unordered pairs {0,1}: 4, {0,2}: 2, {2,3}: 1
    for floor in (1, 3):
        expected = 1.0 / np.maximum(counts, floor)
        np.testing.assert_allclose(inverse_pair_frequency(a, b, 4, floor), expected / expected.mean(), rtol=1e-15)


def test_inverse_pair_frequency_of_summed_pairs_is_each_games_factor():
    """Summed ordered pairs (the Spark path: an entry per pair and its number of games) get the factor each
    of their games gets, scaled to mean 1 over the games, not over the pairs."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 6, 400)
    b = (a + rng.integers(1, 6, 400)) % 6
    per_game = inverse_pair_frequency(a, b, 6, 15)
    pairs = (
        pl.DataFrame({"a": a, "b": b, "factor": per_game}).group_by("a", "b").agg(pl.len(), pl.col("factor").first())
    )
    summed = inverse_pair_frequency(pairs["a"].to_numpy(), pairs["b"].to_numpy(), 6, 15, pairs["len"].to_numpy())
    assert len(np.unique(per_game)) > 3
    np.testing.assert_allclose(summed, pairs["factor"].to_numpy(), rtol=1e-14)


def test_reweighting_is_a_weighted_fit(games):
    """reweight equals passing the weights as a ``weight`` column (arena-rank's floor of 50)."""
    reweighted = duckrate.bt_fit(games, reweight="inverse_pair_frequency", min_pair_count=50, uncertainty="sandwich")
    low = np.minimum(games["player_a"].to_numpy(), games["player_b"].to_numpy())
    high = np.maximum(games["player_a"].to_numpy(), games["player_b"].to_numpy())
    keys = pl.DataFrame({"low": low, "high": high})
    count = keys.group_by(["low", "high"]).agg(pl.len().alias("n"))
    n_pair = keys.join(count, on=["low", "high"], how="left")["n"].to_numpy()
    weight = 1.0 / np.maximum(n_pair, 50)
    weighted = duckrate.bt_fit(games.with_columns(weight=weight / weight.mean()), uncertainty="sandwich")
    np.testing.assert_allclose(reweighted["rating"].to_numpy(), weighted["rating"].to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(reweighted["sd"].to_numpy(), weighted["sd"].to_numpy(), rtol=1e-9)


def test_bootstrap_with_covariates_agrees_roughly_with_the_sandwich(games):
    boot = split(duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="bootstrap", resamples=60, seed=1))
    sandwich = split(duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="sandwich"))
    assert (boot[0]["resamples"] == 60).all()
    ratio = boot[1]["sd"].to_numpy() / sandwich[1]["sd"].to_numpy()
    assert np.all((ratio > 0.6) & (ratio < 1.5))
    ratio = boot[0]["sd"].to_numpy() / sandwich[0]["sd"].to_numpy()
    assert 0.8 < np.median(ratio) < 1.25


def test_model_based_intervals_with_covariates(games):
    """'hessian' gives the inverse Hessian's variances (H bordered by the covariates)."""
    players, coefficients = split(duckrate.bt_fit(games, covariates=["x1", "x2"], uncertainty="hessian"))
    n = players.height
    z = design(games, players["player"].to_list(), ["x1", "x2"])
    params = np.concatenate([theta_of(players), coefficients["rating"].to_numpy() / POINTS])
    p = 1.0 / (1.0 + np.exp(-(z @ params)))
    inverse = np.linalg.pinv((z * (p * (1 - p))[:, None]).T @ z, rcond=1e-13, hermitian=True)
    centre = np.eye(z.shape[1])
    centre[:n, :n] -= 1.0 / n
    variance = np.diag(centre @ inverse @ centre.T)
    np.testing.assert_allclose(players["sd"].to_numpy(), np.sqrt(variance[:n]) * POINTS, rtol=1e-8)
    np.testing.assert_allclose(coefficients["sd"].to_numpy(), np.sqrt(variance[n:]) * POINTS, rtol=1e-8)


@pytest.mark.parametrize("report", ["centred", "anchor", "priors"])
def test_sparse_border_term_is_exact(report):
    """The sparse path adds the coefficients' share through the Schur complement: what a border adds to
    the sparse variances equals what it adds to the dense inverse's (propagation's part cancels)."""
    rng = np.random.default_rng(11)
    n, n_games = 40, 3000
    a = rng.integers(0, n, n_games)
    b = (a + rng.integers(1, n, n_games)) % n
    pairs = pairs_from_rows(a, b, rng.integers(0, 2, n_games).astype(float), None, n)
    curvature = rng.uniform(0.1, 0.25, pairs.n_pairs) * (pairs.wins + pairs.losses)
    precision = np.full(n, 0.5) if report == "priors" else np.zeros(n)
    diagonal = precision.copy()
    np.add.at(diagonal, pairs.a, curvature)
    np.add.at(diagonal, pairs.b, curvature)
    cross = rng.normal(0.0, 3.0, (n, 2))
    cross -= cross.mean(axis=0)  # a border's θ part sums to zero, as every game's does
    fisher = np.array([[400.0, 30.0], [30.0, 300.0]])
    border = Border(cross, fisher)
    anchor = 3 if report == "anchor" else None
    centred = report == "centred"
    dense_with, dense_coefficients = hessian_variances(pairs, curvature, precision, border, anchor, centred)
    dense_without, _ = hessian_variances(pairs, curvature, precision, None, anchor, centred)
    sparse_with, sparse_coefficients = sparse_variances(pairs, curvature, diagonal, precision, border, anchor, centred)
    sparse_without, _ = sparse_variances(pairs, curvature, diagonal, precision, None, anchor, centred)
    np.testing.assert_allclose(sparse_with - sparse_without, dense_with - dense_without, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(sparse_coefficients, dense_coefficients, rtol=1e-9)


def test_row_order_does_not_change_a_bit(games):
    options = {
        "covariates": ["x1", "x2"],
        "uncertainty": "sandwich",
        "cluster": "user_id",
        "reweight": "inverse_pair_frequency",
    }
    first = duckrate.bt_fit(games, **options)
    shuffled = duckrate.bt_fit(games.sample(fraction=1.0, shuffle=True, seed=9), **options)
    assert first.equals(shuffled)


def test_bad_options_are_named(games):
    with pytest.raises(DuckrateInputError, match="cluster := 'user_id' needs uncertainty := 'sandwich'"):
        duckrate.bt_fit(games, cluster="user_id")
    with pytest.raises(DuckrateInputError, match="no column 'len_diff' \\(named as a covariate\\)"):
        duckrate.bt_fit(games, covariates=["len_diff"])
    with pytest.raises(DuckrateInputError, match="covariates names 'score_a'"):
        duckrate.bt_fit(games, covariates=["score_a"])
    with pytest.raises(DuckrateInputError, match="names 'x1' twice"):
        duckrate.bt_fit(games, covariates=["x1", "x1"])
    bad = games.with_columns(pl.when(pl.col("match_id") == 17).then(float("nan")).otherwise(pl.col("x1")).alias("x1"))
    with pytest.raises(DuckrateInputError, match="column 'x1' has nan at match_id=17; expected a finite number"):
        duckrate.bt_fit(bad, covariates=["x1"])
    nulls = games.with_columns(
        pl.when(pl.col("match_id") == 5).then(None).otherwise(pl.col("user_id")).alias("user_id")
    )
    with pytest.raises(DuckrateInputError, match="column 'user_id' has None at match_id=5; expected a cluster key"):
        duckrate.bt_fit(nulls, uncertainty="sandwich", cluster="user_id")
    with pytest.raises(DuckrateInputError, match="expected method := 'newton'"):
        duckrate.bt_fit(games, covariates=["x1"], method="mm")


def test_plain_mle_over_a_tree_falls_back_to_the_bootstrap():
    """Propagation is exact on a tree and finds the free level of a plain MLE (zero marginal precision):
    the sparse intervals fall back to the bootstrap instead of reporting a huge sd."""
    rng = np.random.default_rng(8)
    a = np.repeat(np.arange(9), 300)
    b = a + 1
    won = rng.random(a.size) < 1.0 / (1.0 + np.exp(-0.3 * (a - b)))
    frame = pl.DataFrame(
        {
            "match_id": np.arange(a.size),
            "played_at": np.arange(a.size),
            "player_a": [f"p{i}" for i in a],
            "player_b": [f"p{i}" for i in b],
            "score_a": won.astype(float),
        }
    )
    fit = duckrate.bt_fit(frame, uncertainty="sparse", resamples=20)
    assert (fit["uncertainty"] == "bootstrap").all() and fit["sd"].max() < 100.0
