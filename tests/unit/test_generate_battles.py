"""Tests for duckrate.synthetic.generate_battles: determinism, schema, ties, connectivity, the truth."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from duckrate.synthetic import BATTLE_COVARIATES, BattleTruth, generate_battles

POINTS = 400.0 / math.log(10.0)


@pytest.fixture(scope="module")
def arena() -> tuple[pl.DataFrame, BattleTruth]:
    return generate_battles(60, 200_000, seed=3, return_truth=True)


def _codes(frame: pl.DataFrame, truth_players: list[str]) -> tuple[np.ndarray, np.ndarray]:
    index = {name: i for i, name in enumerate(truth_players)}
    a = frame["player_a"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    b = frame["player_b"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    return a, b


def test_same_seed_identical_other_seed_differs():
    first = generate_battles(20, 5_000, seed=11)
    assert first.equals(generate_battles(20, 5_000, seed=11))
    assert not first.equals(generate_battles(20, 5_000, seed=12))
    frame, truth = generate_battles(20, 5_000, seed=11, return_truth=True)
    assert frame.equals(first)
    assert truth.ratings.equals(generate_battles(20, 5_000, seed=11, return_truth=True)[1].ratings)


def test_schema_and_columns():
    frame = generate_battles(10, 2_000, seed=1)
    assert frame.schema == pl.Schema(
        {
            "match_id": pl.Int64,
            "played_at": pl.Datetime("us"),
            "player_a": pl.Utf8,
            "player_b": pl.Utf8,
            "score_a": pl.Float64,
            "len_diff": pl.Float64,
            "md_headers_diff": pl.Float64,
            "bold_diff": pl.Float64,
            "user_id": pl.Int64,
        }
    )
    assert frame["match_id"].to_list() == list(range(1, 2_001))
    assert frame["played_at"].is_sorted()
    assert (frame["player_a"] != frame["player_b"]).all()
    assert set(frame["score_a"].unique().to_list()) <= {0.0, 0.5, 1.0}
    assert frame.select(pl.col("len_diff", "md_headers_diff", "bold_diff").abs().max()).max_horizontal()[0] < 1.0
    plain = generate_battles(10, 2_000, seed=1, n_covariates=0)
    assert plain.columns == ["match_id", "played_at", "player_a", "player_b", "score_a", "user_id"]
    wide = generate_battles(10, 2_000, seed=1, n_covariates=6)
    assert wide.columns[5:11] == [*BATTLE_COVARIATES, "x5_diff", "x6_diff"]


def test_tie_rate_and_users(arena):
    frame, truth = arena
    assert abs(float((frame["score_a"] == 0.5).mean()) - 0.10) < 0.005
    assert frame["user_id"].min() >= 1 and frame["user_id"].max() <= 200_000 // 20
    per_user = frame.group_by("user_id").len()["len"]
    assert per_user.mean() > 5 and per_user.max() > 5 * per_user.median()
    assert 0.0 < truth.tie_scale <= 0.5
    no_ties = generate_battles(10, 5_000, seed=2, tie_rate=0.0)
    assert (no_ties["score_a"] == 0.5).sum() == 9  # only the chain


def test_every_player_plays_and_the_graph_is_connected_even_when_sparse():
    frame, truth = generate_battles(3_000, 4_000, seed=5, n_covariates=0, return_truth=True)
    players = truth.ratings["player"].to_list()
    a, b = _codes(frame, players)
    assert np.bincount(np.concatenate([a, b]), minlength=len(players)).min() >= 1
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(players), len(players)))
    assert connected_components(graph, directed=False)[0] == 1
    # The beat graph (a draw links both ways) is strongly connected: the plain MLE is finite.
    s = frame["score_a"].to_numpy()
    rows = np.concatenate([a[s > 0], b[s < 1]])
    cols = np.concatenate([b[s > 0], a[s < 1]])
    beat = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=graph.shape)
    assert connected_components(beat, directed=True, connection="strong")[0] == 1


def test_pairs_are_non_uniform_when_adaptive():
    def spread(frame):
        pairs = frame.select(lo=pl.min_horizontal("player_a", "player_b"), hi=pl.max_horizontal("player_a", "player_b"))
        counts = pairs.group_by("lo", "hi").len()["len"]
        return float(counts.std() / counts.mean())

    adaptive = generate_battles(30, 100_000, seed=4, activity_sd=0.0, n_covariates=0)
    uniform = generate_battles(30, 100_000, seed=4, activity_sd=0.0, n_covariates=0, adaptive=False)
    assert spread(adaptive) > 1.0 > 0.2 > spread(uniform)


def test_truth_is_mean_zero_and_the_expected_score_is_the_model(arena):
    frame, truth = arena
    assert abs(truth.theta.mean()) < 1e-12
    np.testing.assert_allclose(truth.ratings["rating"].to_numpy(), 1500.0 + POINTS * truth.theta)
    np.testing.assert_allclose(truth.beta, [0.8, 0.4, 0.2])
    np.testing.assert_allclose(truth.beta_points, POINTS * truth.beta)
    assert truth.covariates == ("len_diff", "md_headers_diff", "bold_diff")
    a, b = _codes(frame, truth.ratings["player"].to_list())
    x = frame.select(truth.covariates).to_numpy()
    p = expit(truth.theta[a] - truth.theta[b] + x @ truth.beta)
    residual = frame["score_a"].to_numpy() - p
    # Mean score equals p overall and within bins of p (ties are half points of an exact BT model).
    assert abs(residual.mean()) < 0.005
    for low, high in [(0.0, 0.3), (0.3, 0.7), (0.7, 1.0)]:
        inside = (p >= low) & (p < high)
        assert abs(residual[inside].mean()) < 0.01


def test_users_correlate_votes():
    def ratio(user_corr):
        frame, truth = generate_battles(40, 200_000, seed=6, n_covariates=1, user_corr=user_corr, return_truth=True)
        a, b = _codes(frame, truth.ratings["player"].to_list())
        x = frame["len_diff"].to_numpy()
        residual = frame["score_a"].to_numpy() - expit(truth.theta[a] - truth.theta[b] + truth.beta[0] * x)
        # The length coefficient's score contributions: per-user sums vs independent battles.
        score = residual * x
        sums = np.bincount(frame["user_id"].to_numpy(), score)
        return (sums**2).sum() / (score**2).sum()

    assert ratio(0.3) > 2.0
    assert 0.8 < ratio(0.0) < 1.25


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_models": 1},
        {"n_battles": 5},
        {"tie_rate": 0.5},
        {"beta": [1.0]},
        {"user_corr": 1.5},
        {"n_users": 0},
        {"match_window": 0.0},
    ],
)
def test_invalid_arguments(kwargs):
    arguments = {"n_models": 10, "n_battles": 100} | kwargs
    with pytest.raises(ValueError):
        generate_battles(**arguments)


def test_command_line(tmp_path):
    from duckrate.synthetic import main

    out = tmp_path / "battles.parquet"
    assert main(["battles", "--n-models", "12", "--n-battles", "3000", "--n-covariates", "1", "--out", str(out)]) == 0
    assert pl.read_parquet(out).equals(generate_battles(12, 3_000, n_covariates=1))
