"""TrueSkill Through Time over team results (``ttt_team_fit``): agreement with the trueskillthroughtime package
1.1.0 (History with teams, several teams a game, ties, partial-play weights) after the same iterations and at
convergence, the coarse correction's fixed point, the bits of ``ttt_fit`` on one-player teams, row-order
invariance, bad input, and the SQL macro."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
import trueskillthroughtime as ttt

import duckrate
from duckrate import DuckrateInputError
from duckrate.fits.through_time import OUTPUT_COLUMNS
from duckrate.synthetic import generate_matches, generate_team_matches


def teams(n_matches: int, n_players: int, per_day: float, seed: int, partial: float = 0.0, **kwargs) -> pl.DataFrame:
    """Random team matches: 2-4 teams of 1-3 players, ties (equal ranks) included, ``per_day`` a day."""
    frame = generate_team_matches(
        n_matches,
        n_players,
        seed=seed,
        teams_per_match=kwargs.pop("teams_per_match", (2, 4)),
        team_size=kwargs.pop("team_size", (1, 3)),
        matches_per_day=per_day,
        partial_play_rate=partial,
        tie_rate=kwargs.pop("tie_rate", 0.2),
        **kwargs,
    )
    return frame.drop("league")


def package_fit(frame: pl.DataFrame, epsilon: float, iterations: int, **params) -> tuple[dict, int]:
    """The package's learning curves ``{(player, step): (mu, sigma)}`` and its iterations, the matches given in
    ttt_team_fit's canonical order (time step, played_at, match_id), each match's teams best first (ties by
    team key), with the weights when the frame has a weight column. Teams are given best first because the
    package, for three teams or more, hands the message of the team in sorted place ``o[e]`` to the team in
    place ``e`` of the input: the same team only when the sort is its own inverse."""
    if frame["played_at"].dtype == pl.Int64:
        frame = frame.with_columns(step=pl.col("played_at"))
    else:
        frame = frame.with_columns(step=pl.col("played_at").dt.date().cast(pl.Int64))
    weighted = "weight" in frame.columns
    composition, results, times, weights = [], [], [], []
    for _, match in frame.sort(["step", "played_at", "match_id"]).group_by("match_id", maintain_order=True):
        sides = match.sort(["rank", "team", "player"]).partition_by("team", maintain_order=True)
        composition.append([side["player"].to_list() for side in sides])
        results.append([-float(side["rank"][0]) for side in sides])
        times.append(int(match["step"][0]))
        weights.append([side["weight"].to_list() for side in sides] if weighted else [])
    fitted = ttt.History(composition, results, times, weights=weights if weighted else [], **params)
    _, done = fitted.convergence(epsilon=epsilon, iterations=iterations, verbose=False)
    curves = fitted.learning_curves()
    return {(player, t): (g.mu, g.sigma) for player, curve in curves.items() for t, g in curve}, done


def largest_differences(result: pl.DataFrame, reference: dict) -> tuple[float, float]:
    assert result.height == len(reference)
    mu = np.array([reference[key][0] for key in zip(result["player"], result["step"])])
    sigma = np.array([reference[key][1] for key in zip(result["player"], result["step"])])
    return float(np.abs(result["rating"].to_numpy() - mu).max()), float(np.abs(result["sd"].to_numpy() - sigma).max())


@pytest.fixture(scope="module")
def games() -> pl.DataFrame:
    """150 matches of 2-4 teams of 1-3 players among 30 players over about 20 days, a fifth of the places tied,
    30% of the players playing part of their match."""
    return teams(150, 30, 8.0, seed=2, partial=0.3)


# --------------------------------------------------------------------------------------------------
# The package
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("iterations", [0, 1, 5])
@pytest.mark.parametrize("weighted", [True, False])
def test_equals_the_package_after_the_same_iterations(games, iterations, weighted):
    """Measured: within 3e-14 (two teams without partial play in closed form, the rest by the chain of
    differences iterated, as the package)."""
    frame = games if weighted else games.drop("weight")
    result = duckrate.ttt_team_fit(frame, p_draw=0.2, epsilon=0.0, iterations=iterations, accelerate=False)
    reference, done = package_fit(frame, 0.0, iterations, p_draw=0.2)
    assert done == iterations and (result["iterations"] == iterations).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_equals_the_package_at_convergence():
    """The package's schedule: both stop at the same iteration, on the same estimates."""
    frame = teams(60, 14, 3.0, seed=4, partial=0.3)
    result = duckrate.ttt_team_fit(frame, p_draw=0.2, epsilon=1e-6, iterations=1000, accelerate=False)
    reference, done = package_fit(frame, 1e-6, 1000, p_draw=0.2)
    assert result["converged"].all() and (result["iterations"] == done).all() and 5 < done < 1000
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_equals_the_package_without_draws_with_gaps_and_other_parameters():
    """p_draw 0 (no ties), an integer played_at whose values are the steps, with gaps of several steps, and
    parameters other than the defaults."""
    frame = teams(120, 16, 6.0, seed=8, tie_rate=0.0).with_columns(played_at=(pl.col("match_id") // 7) * 3)
    params = {"mu": 25.0, "sigma": 8.0, "beta": 4.0, "gamma": 0.5}
    result = duckrate.ttt_team_fit(frame, epsilon=1e-5, iterations=12, accelerate=False, **params)
    reference, done = package_fit(frame, 1e-5, 12, **params)
    assert (result["iterations"] == done).all()
    assert result["period_start"].dtype == pl.Int64 and (result["period_start"] == result["step"]).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_one_batch_runs_to_the_batchs_own_convergence():
    frame = teams(30, 12, 5.0, seed=5, partial=0.2).with_columns(played_at=pl.lit(7, dtype=pl.Int64))
    result = duckrate.ttt_team_fit(frame, p_draw=0.3, epsilon=1e-8, iterations=5, accelerate=False)
    reference, done = package_fit(frame, 1e-8, 5, p_draw=0.3)
    assert (result["iterations"] == done).all() and (result["step"] == 7).all()
    d_mu, d_sigma = largest_differences(result, reference)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


@pytest.mark.parametrize("gamma", [0.03, 0.0])
def test_the_coarse_correction_reaches_the_packages_fixed_point(gamma):
    """accelerate (the default) against the package run to a step of 1e-11, with teams of unequal sizes and
    partial play (games that a common shift changes, whose messages the correction leaves in place) and
    with equal teams (2 against 2, which it shifts with their players)."""
    for frame in (
        teams(60, 10, 2.0, seed=4, partial=0.3, teams_per_match=(2, 3)),
        teams(60, 10, 2.0, seed=6, teams_per_match=2, team_size=2),
    ):
        reference, done = package_fit(frame, 1e-11, 20_000, p_draw=0.2, gamma=gamma)
        result = duckrate.ttt_team_fit(frame, p_draw=0.2, gamma=gamma, epsilon=1e-11, iterations=20_000)
        assert result["converged"].all()
        d_mu, d_sigma = largest_differences(result, reference)
        assert d_mu < 1e-8 and d_sigma < 1e-8, (d_mu, d_sigma)
        assert result["iterations"][0] <= done


# --------------------------------------------------------------------------------------------------
# ttt_fit, row order, output
# --------------------------------------------------------------------------------------------------


def as_team_results(matches: pl.DataFrame) -> pl.DataFrame:
    """A matches table as team results: team 'a' (player_a) and team 'b', ranked by score_a."""
    side_a = matches.select("match_id", "played_at", team=pl.lit("a"), player="player_a", score=pl.col("score_a"))
    side_b = matches.select("match_id", "played_at", team=pl.lit("b"), player="player_b", score=1.0 - pl.col("score_a"))
    return pl.concat([side_a, side_b])


def test_one_player_teams_give_the_bits_of_ttt_fit():
    """Two teams of one player are a two-player match: the same layout, the same kernels, the same bits,
    with the coarse correction and without, in a draw the first team ('a') in the part of side A."""
    matches = generate_matches(400, 20, seed=3, seconds_between_matches=86_400 / 6.0)
    matches = matches.select("match_id", "played_at", "player_a", "player_b", "score_a")
    for params in ({"p_draw": 0.2, "iterations": 6, "accelerate": False}, {"p_draw": 0.2, "gamma": 0.1}):
        expected = duckrate.ttt_fit(matches, **params)
        result = duckrate.ttt_team_fit(as_team_results(matches), **params)
        assert result.equals(expected)
        for column in ("rating", "sd"):
            assert np.array_equal(result[column].to_numpy().view(np.int64), expected[column].to_numpy().view(np.int64))


def test_shuffled_rows_give_the_same_bits():
    frame = generate_team_matches(
        200, 24, seed=9, teams_per_match=(2, 4), team_size=(1, 3), matches_per_day=8.0, partial_play_rate=0.2,
        n_leagues=2,
    )  # fmt: skip
    result = duckrate.ttt_team_fit(frame, p_draw=0.2, iterations=8)
    assert result["league"].n_unique() == 2
    for seed in (1, 2):
        again = duckrate.ttt_team_fit(frame.sample(fraction=1.0, shuffle=True, seed=seed), p_draw=0.2, iterations=8)
        assert again.equals(result)
        for column in ("rating", "sd"):
            assert np.array_equal(again[column].to_numpy().view(np.int64), result[column].to_numpy().view(np.int64))


def test_output_rows_and_a_score_column(games):
    """One row per player and day played, ``games`` the player's matches that day; scores order the teams as
    the ranks do (higher is better) and give the same fit."""
    result = duckrate.ttt_team_fit(games, p_draw=0.2)
    days = games.with_columns(step=pl.col("played_at").dt.date().cast(pl.Int64))
    expected = days.group_by("player", "step").len().sort("player", "step")
    assert result.select("player", "step").equals(expected.select("player", "step"))
    assert result["games"].to_list() == expected["len"].cast(pl.Int64).to_list()
    assert result["period_start"].dtype == games["played_at"].dtype
    assert result.columns == list(OUTPUT_COLUMNS)
    scored = games.with_columns(score=10.0 - pl.col("rank")).drop("rank")
    assert duckrate.ttt_team_fit(scored, p_draw=0.2).equals(result)


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


def test_bad_input_is_named(games):
    with pytest.raises(DuckrateInputError, match=r"ttt_team_fit: .*match\(es\) with tied teams.*p_draw = 0"):
        duckrate.ttt_team_fit(games)
    heavy = games.with_columns(weight=pl.when(pl.col("match_id") == 3).then(1.5).otherwise(pl.col("weight")))
    with pytest.raises(
        DuckrateInputError, match=r"column 'weight' has 1.5 at .*match_id.*3.*expected a weight in \(0, 1\]"
    ):
        duckrate.ttt_team_fit(heavy, p_draw=0.2)
    lonely = games.with_columns(
        team=pl.when(pl.col("match_id") == 5).then(pl.lit("x")).otherwise(pl.col("team")),
        rank=pl.when(pl.col("match_id") == 5).then(1).otherwise(pl.col("rank")),
    )
    with pytest.raises(DuckrateInputError, match=r"column 'team' has 'x' at .*expected at least two teams"):
        duckrate.ttt_team_fit(lonely, p_draw=0.2)
    with pytest.raises(DuckrateInputError, match=r"missing column\(s\) 'rank' or 'score'"):
        duckrate.ttt_team_fit(games.drop("rank"), p_draw=0.2)
    with pytest.raises(DuckrateInputError, match=r"ttt_team_fit: parameter sigma = 0.0; expected a finite prior sd"):
        duckrate.ttt_team_fit(games, p_draw=0.2, sigma=0.0)
    with pytest.raises(DuckrateInputError, match=r"period = 'fortnight' does not fit column 'played_at'"):
        duckrate.ttt_team_fit(games, p_draw=0.2, period="fortnight")


# --------------------------------------------------------------------------------------------------
# SQL
# --------------------------------------------------------------------------------------------------


def test_sql_equals_python_bit_for_bit():
    frame = generate_team_matches(
        300, 40, seed=5, teams_per_match=(2, 4), team_size=(1, 3), matches_per_day=10.0, partial_play_rate=0.2,
        n_leagues=2, scores=True,
    )  # fmt: skip
    params = {"p_draw": 0.1, "gamma": 0.05, "iterations": 4}
    con = duckrate.register(duckdb.connect())
    try:
        con.register("frame_view", frame)
        con.execute("CREATE TABLE tr AS SELECT * FROM frame_view")
        given = "".join(f", {key} := {value!r}" for key, value in params.items())
        sql = con.sql(f"SELECT * FROM ttt_team_fit('tr'{given})").pl().sort("league", "player", "step")
    finally:
        con.close()
    python = duckrate.ttt_team_fit(frame, **params).sort("league", "player", "step")
    assert sql.columns == python.columns and sql.height == python.height > 0
    assert sql.schema["period_start"] == pl.Datetime("us")
    assert sql.equals(python)
