"""Tests for duckrate.synthetic.generate_team_matches: determinism, the team_results shape, ranks and scores,
partial play, variable sizes, leagues, and the ``teams`` command."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl
import pytest

from duckrate.core.matches import columns_from_polars
from duckrate.core.teams import prepare_team_results
from duckrate.synthetic import generate_team_matches, main

TEAM_SCHEMA = {
    "match_id": pl.Int64,
    "played_at": pl.Datetime("us"),
    "league": pl.Utf8,
    "team": pl.Utf8,
    "player": pl.Utf8,
    "rank": pl.Int64,
    "weight": pl.Float64,
}


@pytest.fixture(scope="module")
def five_a_side() -> pl.DataFrame:
    return generate_team_matches(4_000, 2_000, seed=3, scores=True, partial_play_rate=0.2)


@pytest.fixture(scope="module")
def mixed() -> pl.DataFrame:
    # 2-8 teams of 1-8 players (up to 64 per match) in three leagues of 200: dense pools, Gumbel top-k.
    return generate_team_matches(
        1_500, 600, seed=5, teams_per_match=(2, 8), team_size=(1, 8), n_leagues=3, scores=True, tie_rate=0.2
    )


def team_table(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per team: its size, rank and score, checking that every row of a team agrees on them."""
    teams = frame.group_by("match_id", "team").agg(
        pl.len().alias("size"),
        pl.col("rank").n_unique().alias("ranks"),
        pl.col("score").n_unique().alias("scores"),
        pl.col("league").n_unique().alias("leagues"),
        pl.first("rank"),
        pl.first("score"),
    )
    assert (teams["ranks"] == 1).all() and (teams["scores"] == 1).all() and (teams["leagues"] == 1).all()
    return teams


def assert_ranks_dense_and_scores_agree(frame: pl.DataFrame) -> None:
    by_match = team_table(frame).sort("match_id", "rank").group_by("match_id", maintain_order=True)
    for ranks, scores in by_match.agg("rank", "score").select("rank", "score").iter_rows():
        assert len(ranks) >= 2
        assert sorted(set(ranks)) == list(range(1, len(set(ranks)) + 1))  # dense: 1, 1, 2, ...
        for j in range(1, len(ranks)):
            assert scores[j] <= scores[j - 1]
            assert (scores[j] == scores[j - 1]) == (ranks[j] == ranks[j - 1])  # equal scores exactly when tied


def test_same_seed_identical_and_other_seed_differs():
    arguments = {"teams_per_match": (2, 4), "team_size": (1, 3), "partial_play_rate": 0.1, "scores": True}
    first = generate_team_matches(500, 300, seed=11, **arguments)
    assert first.equals(generate_team_matches(500, 300, seed=11, **arguments))
    assert not first.equals(generate_team_matches(500, 300, seed=12, **arguments))
    fixed = generate_team_matches(500, 300, seed=11)
    assert fixed.equals(generate_team_matches(500, 300, seed=11))
    assert not fixed.equals(generate_team_matches(500, 300, seed=12))


def test_schema_shape_and_columns(five_a_side):
    assert five_a_side.schema == pl.Schema({**TEAM_SCHEMA, "score": pl.Float64})
    assert five_a_side.height == 4_000 * 10
    assert five_a_side["match_id"].to_list() == list(np.repeat(np.arange(1, 4_001), 10))
    assert five_a_side["played_at"].is_sorted()
    assert five_a_side["played_at"][0] == datetime(2024, 1, 1)
    assert five_a_side["league"].unique().to_list() == ["main"]
    assert five_a_side["team"].head(10).to_list() == ["red"] * 5 + ["blue"] * 5
    assert (five_a_side["score"] == five_a_side["score"].round()).all()
    sizes = five_a_side.group_by("match_id", "team").len()["len"]
    assert (sizes == 5).all()

    plain = generate_team_matches(50, 100, seed=1)
    assert plain.schema == pl.Schema(TEAM_SCHEMA)
    assert (plain["weight"] == 1.0).all()
    empty = generate_team_matches(0, 10, scores=True)
    assert empty.height == 0
    assert empty.schema == pl.Schema({**TEAM_SCHEMA, "score": pl.Float64})


def test_players_once_per_match_and_at_least_two_teams(five_a_side, mixed):
    for frame in (five_a_side, mixed):
        assert frame.select(pl.struct("match_id", "player").is_unique().all()).item()
        assert frame.group_by("match_id").agg(pl.col("team").n_unique())["team"].min() >= 2


def test_ranks_dense_and_consistent_with_scores(five_a_side, mixed):
    assert_ranks_dense_and_scores_agree(five_a_side)
    assert_ranks_dense_and_scores_agree(mixed)
    # Two teams: the lower rank wins, and about tie_rate (0.10 by default) of the matches are draws.
    draws = five_a_side.group_by("match_id").agg(pl.col("rank").max())["rank"].eq(1).mean()
    assert 0.07 < draws < 0.13


def test_weights_and_partial_play_share(five_a_side):
    weight = five_a_side["weight"]
    assert ((weight > 0.0) & (weight <= 1.0)).all()
    partial = weight.filter(weight < 1.0)
    assert abs(partial.len() / weight.len() - 0.2) < 0.01
    assert partial.min() >= 0.2


def test_variable_sizes_stay_within_bounds(mixed):
    teams = team_table(mixed)
    assert teams["size"].min() == 1 and teams["size"].max() == 8
    per_match = teams.group_by("match_id").len()["len"]
    assert per_match.min() == 2 and per_match.max() == 8
    assert set(mixed["team"].unique().to_list()) == {f"t{i}" for i in range(1, 9)}
    # Within a match, teams are labelled t1, t2, ... in order.
    labels = mixed.group_by("match_id").agg(pl.col("team").unique(), pl.col("team").n_unique().alias("n"))
    for names, n in labels.select("team", "n").iter_rows():
        assert sorted(names) == sorted(f"t{i}" for i in range(1, n + 1))


def test_leagues_have_disjoint_pools(mixed):
    assert mixed.group_by("player").agg(pl.col("league").n_unique())["league"].max() == 1
    assert mixed["league"].unique().sort().to_list() == ["league_1", "league_2", "league_3"]
    # Match m (1-based) is in league ((m - 1) % 3) + 1; player i (1-based) in ((i - 1) % 3) + 1.
    league = mixed["league"].str.slice(7).cast(pl.Int64)
    assert ((mixed["match_id"] - 1) % 3 + 1 == league).all()
    assert ((mixed["player"].str.slice(1).cast(pl.Int64) - 1) % 3 + 1 == league).all()


def test_activity_and_skill_matter():
    frame = generate_team_matches(5_000, 500, seed=8, team_size=2)
    entries = frame.group_by("player").len()["len"]
    assert entries.max() > 4 * entries.quantile(0.1)  # active players play far more often
    # One-player teams, no ties: win rates spread far wider than coin flips' (about 0.035 over ~200 games).
    solo = generate_team_matches(20_000, 200, seed=9, team_size=1, tie_rate=0.0)
    wins = solo.group_by("player").agg((pl.col("rank") == 1).mean().alias("win_rate"))["win_rate"]
    assert wins.std() > 0.2


def test_output_is_valid_team_results(mixed):
    prepared = prepare_team_results(columns_from_polars(mixed, "team_results"))
    assert prepared.n_matches == 1_500


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="teams_per_match"):
        generate_team_matches(10, 100, teams_per_match=1)
    with pytest.raises(ValueError, match="team_size"):
        generate_team_matches(10, 100, team_size=(3, 2))
    with pytest.raises(ValueError, match="pool"):
        generate_team_matches(10, 100, teams_per_match=(2, 8), team_size=(1, 8), n_leagues=2)
    with pytest.raises(ValueError, match="partial_play_rate"):
        generate_team_matches(10, 100, partial_play_rate=1.5)
    with pytest.raises(ValueError, match="tie_rate"):
        generate_team_matches(10, 100, tie_rate=-0.1)
    with pytest.raises(ValueError, match="matches_per_day"):
        generate_team_matches(10, 100, matches_per_day=0)


def test_cli_writes_parquet(tmp_path):
    out = tmp_path / "teams.parquet"
    arguments = ["teams", "--n-matches", "300", "--pool-size", "400", "--teams-per-match", "2-4"]
    arguments += ["--team-size", "3", "--n-leagues", "2", "--scores", "--partial-play-rate", "0.1"]
    assert main([*arguments, "--seed", "4", "--out", str(out)]) == 0
    expected = generate_team_matches(
        300, 400, seed=4, teams_per_match=(2, 4), team_size=3, n_leagues=2, scores=True, partial_play_rate=0.1
    )
    assert pl.read_parquet(out).equals(expected)
    with pytest.raises(SystemExit):
        main(["teams", "--n-matches", "5", "--pool-size", "50", "--team-size", "x", "--out", str(out)])
