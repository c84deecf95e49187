"""The Appendix F generators of duckrate.synthetic: each matrix has the transitivity it is built to have
(and, where the construction says so, lacks the stronger one), and game streams follow their matrix."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from duckrate.synthetic import matrix_matches, win_matrix

KINDS = ["bt", "sst_byrow", "sst_bydiagonal", "sst_byentry", "wst_byrow", "wst_bydiagonal", "wst_byentry"]


def is_wst(p):
    """π(i) = N - i: i < j implies P[i, j] >= ½."""
    i, j = np.triu_indices(p.shape[0], k=1)
    return bool((p[i, j] >= 0.5).all())


def is_sst(p):
    """i stronger than j implies P[i, k] >= P[j, k] for every k: each column falls down the rows."""
    return bool((np.diff(p, axis=0) <= 1e-15).all())


@pytest.mark.parametrize("kind", KINDS)
def test_matrix_is_a_win_matrix(kind):
    p = win_matrix(kind, 40, seed=5)
    assert p.shape == (40, 40)
    np.testing.assert_array_equal(np.diag(p), 0.5)
    np.testing.assert_allclose(p + p.T, 1.0, rtol=0, atol=1e-15)
    assert ((p >= 0) & (p <= 1)).all()
    np.testing.assert_array_equal(p, win_matrix(kind, 40, seed=5))  # deterministic
    assert not np.array_equal(p, win_matrix(kind, 40, seed=6)) or kind == "sst_byentry"


@pytest.mark.parametrize("kind", KINDS)
def test_transitivity_as_constructed(kind):
    p = win_matrix(kind, 60, seed=2)
    assert is_wst(p)  # every construction is at least weakly transitive
    if kind == "bt" or kind.startswith("sst"):
        assert is_sst(p)
    else:
        assert not is_sst(p)  # WST constructions break strong transitivity


def test_bt_matrix_has_additive_logits():
    p = win_matrix("bt", 30, seed=1, bt_sd=1.5)
    logits = np.log(p / (1 - p))
    theta = logits[:, 0]  # θ_i - θ_0
    np.testing.assert_allclose(logits, theta[:, None] - theta[None, :], atol=1e-9)
    assert np.std(theta) == pytest.approx(1.5, rel=0.35)


def test_sst_byrow_and_bydiagonal_values():
    r = np.sort(np.random.Generator(np.random.PCG64(4)).uniform(0, 1, 4))[::-1]  # descending r_1..r_4
    by_row, by_diagonal = win_matrix("sst_byrow", 5, seed=4), win_matrix("sst_bydiagonal", 5, seed=4)
    for i in range(1, 5):  # 1-based, i < j
        for j in range(i + 1, 6):
            assert by_row[i - 1, j - 1] == 0.5 + 0.5 * r[i - 1]
            assert by_diagonal[i - 1, j - 1] == 0.5 + 0.5 * r[5 - j + i - 1]


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        win_matrix("cyclic", 5)
    with pytest.raises(ValueError, match="n_players"):
        win_matrix("bt", 1)
    with pytest.raises(ValueError, match="matchmaking"):
        matrix_matches(win_matrix("bt", 5), 10, matchmaking="swiss")


def test_uniform_games_follow_the_matrix():
    p = win_matrix("sst_byentry", 20, seed=0)
    games = matrix_matches(p, 40_000, seed=3)
    assert games.columns == ["match_id", "played_at", "player_a", "player_b", "score_a", "p_true"]
    assert (games["player_a"] != games["player_b"]).all()
    a = games["player_a"].str.slice(1).cast(pl.Int64).to_numpy() - 1
    b = games["player_b"].str.slice(1).cast(pl.Int64).to_numpy() - 1
    np.testing.assert_array_equal(games["p_true"].to_numpy(), p[a, b])
    # wins over many games match their probabilities (0.6 for the stronger side): 5 standard errors
    stronger = a < b
    rate = games.filter(pl.Series(stronger))["score_a"].mean()
    assert abs(rate - 0.6) < 5 * np.sqrt(0.24 / stronger.sum())
    counts = np.bincount(a, minlength=20)
    assert counts.min() > 0.8 * counts.mean()  # i uniform
    assert games.equals(matrix_matches(p, 40_000, seed=3))


def test_drift_interpolates_between_matrices():
    start, end = win_matrix("bt", 10, seed=1), win_matrix("wst_byentry", 10, seed=2)
    games = matrix_matches(start, 1000, seed=0, final_matrix=end)
    a = games["player_a"].str.slice(1).cast(pl.Int64).to_numpy() - 1
    b = games["player_b"].str.slice(1).cast(pl.Int64).to_numpy() - 1
    share = np.arange(1000) / 1000
    np.testing.assert_allclose(games["p_true"].to_numpy(), (1 - share) * start[a, b] + share * end[a, b], atol=1e-15)


def test_rating_window_pairs_near_equals():
    """Matchmaking by running Elo rank pairs players closer in true strength than uniform pairing."""
    p = win_matrix("bt", 200, seed=3, bt_sd=2.0)
    uniform = matrix_matches(p, 30_000, seed=1)
    window = matrix_matches(p, 30_000, seed=1, matchmaking="rating_window")
    gap = {name: np.abs(g["p_true"].to_numpy() - 0.5).mean() for name, g in (("uniform", uniform), ("window", window))}
    assert gap["window"] < 0.6 * gap["uniform"]
    assert (window["player_a"] != window["player_b"]).all()
