"""bt_fit's sparse-Hessian intervals (uncertainty='sparse', the default above 1000 players per league).

Checked against independent references: Gaussian belief propagation is exact on a tree and, on a loopy
walk-summable graph, never above the true variance (Malioutov, Johnson & Willsky 2006), both against
``numpy.linalg.inv``; the reported sd against the dense inverse Hessian on synthetic leagues (every
reporting convention); and against the bootstrap on games without draws (where the observed information
is the sampling variance the bootstrap estimates)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import duckrate
from duckrate.fits.bradley_terry.propagation import propagated_precisions, undirected_edges
from duckrate.fits.bradley_terry.uncertainty import HESSIAN_MAX_PLAYERS
from duckrate.synthetic import generate_matches

#: Per-player sd ratio sparse / dense on the synthetic leagues: belief propagation drops the returns around
#: loops, at most a few percent here; the level, anchor and side-A terms are exact.
LOW, HIGH = 0.95, 1.005


def _precision_matrix(lo, hi, w, diagonal):
    h = np.diag(diagonal)
    for i, j, v in zip(lo, hi, w):
        h[i, j] -= v
        h[j, i] -= v
    return h


def test_undirected_edges_merge_both_orders_and_keep_first_seen_order():
    a = np.array([2, 0, 1, 0, 3])
    b = np.array([0, 2, 3, 1, 1])
    lo, hi, w = undirected_edges(a, b, np.array([1.0, 2.0, 4.0, 8.0, 16.0]), 4)
    assert lo.tolist() == [0, 0, 1] and hi.tolist() == [2, 1, 3]
    assert w.tolist() == [3.0, 8.0, 20.0]


def test_belief_propagation_is_exact_on_a_tree():
    rng = np.random.default_rng(3)
    n = 300
    lo = np.arange(1, n) * 0
    hi = np.arange(1, n)
    for k in range(1, n):
        lo[k - 1] = rng.integers(0, k)  # a random recursive tree
    w = rng.uniform(0.1, 2.0, n - 1)
    degree = np.bincount(lo, w, n) + np.bincount(hi, w, n)
    diagonal = degree + rng.uniform(0.01, 0.5, n)
    precisions, sweeps = propagated_precisions(lo.astype(np.int64), hi.astype(np.int64), w, diagonal)
    assert sweeps > 0
    exact = np.diag(np.linalg.inv(_precision_matrix(lo, hi, w, diagonal)))
    np.testing.assert_allclose(1.0 / precisions, exact, rtol=1e-12)


def test_belief_propagation_never_exceeds_the_true_variance_on_a_loopy_graph():
    rng = np.random.default_rng(4)
    n, m = 400, 3000
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    lo, hi, w = undirected_edges(a[keep], b[keep], rng.uniform(0.05, 0.25, keep.sum()), n)
    diagonal = np.bincount(lo, w, n) + np.bincount(hi, w, n) + 0.2
    precisions, sweeps = propagated_precisions(lo, hi, w, diagonal)
    assert sweeps > 0
    exact = np.diag(np.linalg.inv(_precision_matrix(lo, hi, w, diagonal)))
    ratio = (1.0 / precisions) / exact
    assert ratio.max() <= 1.0 + 1e-12
    assert ratio.min() > 0.9


@pytest.fixture(scope="module")
def league() -> pl.DataFrame:
    return generate_matches(30_000, 900, seed=3).select("match_id", "played_at", "player_a", "player_b", "score_a")


CASES = {
    "mle": {},
    "ridge": {"prior_sd": 400.0},
    "ridge, anchored": {"prior_sd": 300.0, "anchor": True},
    "ridge, side A": {"prior_sd": 400.0, "home_advantage": True},
    "priors, side A": {"prior_sd": 300.0, "priors": True, "home_advantage": True},
    "mle, anchored, side A": {"anchor": True, "home_advantage": True},
}


@pytest.mark.parametrize("case", CASES)
def test_sparse_sd_is_close_to_the_dense_inverse_hessian(league, case):
    kwargs = dict(CASES[case])
    if kwargs.pop("anchor", False):
        kwargs["anchor_player"] = league["player_a"][0]
    if kwargs.pop("priors", False):
        players = league["player_a"].unique().sort()[:300]
        kwargs["priors"] = pl.DataFrame({"player": players, "rating": 1600.0, "sd": 150.0})
    dense = duckrate.bt_fit(league, uncertainty="hessian", **kwargs)
    sparse = duckrate.bt_fit(league, uncertainty="sparse", **kwargs)
    assert (sparse["uncertainty"] == "sparse").all()
    assert sparse["rating"].equals(dense["rating"])
    both = dense.join(sparse, on="player", suffix="_sparse").filter(pl.col("sd") > 0)  # the anchor has sd 0
    ratio = (both["sd_sparse"] / both["sd"]).to_numpy()
    assert LOW < ratio.min() and ratio.max() < HIGH, (ratio.min(), ratio.max())
    assert abs(ratio.mean() - 1.0) < 0.01
    np.testing.assert_allclose(
        both["upper_sparse"] - both["rating_sparse"], 1.959963984540054 * both["sd_sparse"], rtol=1e-12
    )


def test_auto_uses_the_dense_inverse_up_to_the_limit_and_the_sparse_hessian_above():
    small = generate_matches(4_000, 200, seed=1)
    assert (duckrate.bt_fit(small, prior_sd=300.0)["uncertainty"] == "hessian").all()
    large = generate_matches(40_000, HESSIAN_MAX_PLAYERS + 200, seed=1)
    fit = duckrate.bt_fit(large, prior_sd=300.0)
    assert (fit["uncertainty"] == "sparse").all() and fit["sd"].null_count() == 0
    assert fit.equals(duckrate.bt_fit(large.sample(fraction=1.0, shuffle=True, seed=2), prior_sd=300.0))


def test_sparse_sd_agrees_with_the_bootstrap_on_games_without_draws():
    games = generate_matches(90_000, 3_000, seed=5, draw_width=0.0)
    sparse = duckrate.bt_fit(games, prior_sd=400.0, uncertainty="sparse")
    boot = duckrate.bt_fit(games, prior_sd=400.0, uncertainty="bootstrap", resamples=100, seed=1)
    ratio = (sparse.join(boot, on="player", suffix="_boot").select(pl.col("sd") / pl.col("sd_boot")))["sd"].to_numpy()
    # each bootstrap sd carries a relative Monte-Carlo error of about 1/sqrt(2·99) = 7%; their mean far less
    assert abs(np.median(ratio) - 1.0) < 0.05
    assert np.mean(np.abs(ratio - 1.0) > 3 * 0.071) < 0.05


def test_sparse_falls_back_to_the_bootstrap_where_belief_propagation_diverges():
    # a plain MLE on a ring (every player beat the next once and lost to it once): a single loop whose
    # Laplacian is singular, so the messages run away
    n = 12
    names = [f"p{i:02d}" for i in range(n)]
    rows = [(names[i], names[(i + 1) % n], 1.0) for i in range(n)] + [
        (names[(i + 1) % n], names[i], 0.0) for i in range(n)
    ]
    frame = pl.DataFrame(
        {
            "match_id": range(len(rows)),
            "played_at": [0] * len(rows),
            "player_a": [r[0] for r in rows],
            "player_b": [r[1] for r in rows],
            "score_a": [r[2] for r in rows],
        }
    )
    frame = frame.with_columns(pl.col("played_at").cast(pl.Datetime("us")))
    fit = duckrate.bt_fit(frame, uncertainty="sparse", resamples=20)
    assert (fit["uncertainty"] == "bootstrap").all() and fit["resamples"][0] >= 2
    assert fit["sd"].null_count() == 0
