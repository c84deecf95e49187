"""Tests for duckrate.synthetic: determinism, schema, model properties, CLI, demo seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from duckrate.synthetic import (
    DEMO_BAD_MATCH_ROWS,
    DEMO_DUPLICATED_GAME_ID,
    generate_contests,
    generate_matches,
    main,
    write_demo_seeds,
)
from duckrate.synthetic.demo_seeds import (
    DEMO_BAD_TEAM_MATCHES,
    demo_team_results,
)

MATCH_SCHEMA = {
    "match_id": pl.Int64,
    "played_at": pl.Datetime("us"),
    "league": pl.Utf8,
    "player_a": pl.Utf8,
    "player_b": pl.Utf8,
    "score_a": pl.Float64,
}
CONTEST_SCHEMA = {
    "contest_id": pl.Int64,
    "played_at": pl.Datetime("us"),
    "league": pl.Utf8,
    "player": pl.Utf8,
    "rank": pl.Int64,
}
REPO_SEEDS = Path(__file__).resolve().parents[2] / "seeds"


@pytest.fixture(scope="module")
def matches_with_skills() -> pl.DataFrame:
    return generate_matches(50_000, 1_000, seed=7, include_true_skills=True)


@pytest.fixture(scope="module")
def contests() -> pl.DataFrame:
    return generate_contests(30, 150, 900, seed=3, n_leagues=3, tie_rate=0.05)


# --- matches -------------------------------------------------------------------------


def test_matches_same_seed_identical_and_other_seed_differs():
    first = generate_matches(5_000, 300, n_leagues=2, seed=11)
    again = generate_matches(5_000, 300, n_leagues=2, seed=11)
    other = generate_matches(5_000, 300, n_leagues=2, seed=12)
    assert first.equals(again)
    assert not first.equals(other)


def test_matches_schema_and_column_order():
    frame = generate_matches(1_000, 100, n_leagues=3, seed=1)
    assert frame.schema == pl.Schema(MATCH_SCHEMA)
    assert frame.height == 1_000


def test_matches_empty():
    frame = generate_matches(0, 10)
    assert frame.height == 0
    assert frame.schema == pl.Schema(MATCH_SCHEMA)


def test_matches_ids_time_players_and_scores(matches_with_skills):
    frame = matches_with_skills
    assert frame["match_id"].to_list() == list(range(1, frame.height + 1))
    played_at = frame["played_at"]
    assert played_at.is_sorted()
    assert played_at.n_unique() < frame.height  # several matches share a minute
    assert (played_at.dt.second() == 0).all()
    assert (frame["player_a"] != frame["player_b"]).all()
    assert set(frame["score_a"].unique().to_list()) == {0.0, 0.5, 1.0}
    assert frame["league"].unique().to_list() == ["main"]
    assert frame["player_a"].str.contains(r"^p\d{6}$").all()


def test_matches_stay_within_leagues():
    frame = generate_matches(20_000, 600, n_leagues=3, seed=5)
    assert sorted(frame["league"].unique().to_list()) == ["league_1", "league_2", "league_3"]
    league_of_player = pl.concat(
        [
            frame.select(pl.col("player_a").alias("player"), "league"),
            frame.select(pl.col("player_b").alias("player"), "league"),
        ]
    ).unique()
    assert league_of_player["player"].is_unique().all()


def test_first_move_advantage_shows():
    frame = generate_matches(50_000, 1_000, seed=3, advantage=100.0)
    assert frame["score_a"].mean() > 0.55


def test_draws_present_and_more_common_between_close_players(matches_with_skills):
    gap = (pl.col("true_skill_a") - pl.col("true_skill_b")).abs()
    is_draw = pl.col("score_a") == 0.5
    draw_rates = matches_with_skills.select(
        overall=is_draw.mean(),
        close=is_draw.filter(gap < 100).mean(),
        far=is_draw.filter(gap > 300).mean(),
    ).row(0, named=True)
    assert draw_rates["overall"] > 0.05
    assert draw_rates["close"] > 1.5 * draw_rates["far"]


def test_matchmaking_pairs_similar_skills(matches_with_skills):
    skill_a = matches_with_skills["true_skill_a"].to_numpy()
    skill_b = matches_with_skills["true_skill_b"].to_numpy()
    paired_gap = np.abs(skill_a - skill_b).mean()
    random_gap = np.abs(skill_a - np.random.default_rng(0).permutation(skill_b)).mean()
    assert paired_gap < 0.7 * random_gap


def test_matches_reject_bad_arguments():
    with pytest.raises(ValueError):
        generate_matches(10, 3, n_leagues=2)
    with pytest.raises(ValueError):
        generate_matches(10, 10, draw_width=1.5)


# --- contests ------------------------------------------------------------------------


def test_contests_same_seed_identical_and_other_seed_differs():
    first = generate_contests(10, 50, 200, seed=1)
    assert first.equals(generate_contests(10, 50, 200, seed=1))
    assert not first.equals(generate_contests(10, 50, 200, seed=2))


def test_contests_schema_sizes_and_unique_players(contests):
    assert contests.schema == pl.Schema(CONTEST_SCHEMA)
    sizes = contests.group_by("contest_id").len().sort("contest_id")
    assert sizes["contest_id"].to_list() == list(range(1, 31))
    assert (sizes["len"] == 150).all()
    assert contests.select(pl.struct("contest_id", "player").is_unique().all()).item()
    per_contest = contests.group_by("contest_id").agg(
        pl.col("played_at").n_unique().alias("timestamps"),
        pl.col("league").n_unique().alias("leagues"),
    )
    assert (per_contest["timestamps"] == 1).all()
    assert (per_contest["leagues"] == 1).all()
    assert contests["played_at"].is_sorted()


def test_contest_ranks_are_competition_ranks(contests):
    saw_tie = False
    for ranks in contests.group_by("contest_id").agg("rank")["rank"].to_list():
        assert ranks[0] == 1
        for place, (previous, current) in enumerate(zip(ranks, ranks[1:]), start=2):
            # a place either ties the one above it or takes its own place number
            assert current in (previous, place)
            saw_tie = saw_tie or current == previous
    assert saw_tie


def test_contest_activity_is_uneven():
    frame = generate_contests(100, 50, 500, seed=4)
    entries = frame.group_by("player").len()["len"]
    assert entries.max() > 5 * entries.quantile(0.1)


# --- CLI -----------------------------------------------------------------------------


def test_cli_writes_csv_and_parquet(tmp_path):
    csv_path = tmp_path / "matches.csv"
    parquet_path = tmp_path / "contests.parquet"
    assert (
        main(
            [
                "matches",
                "--n-matches",
                "500",
                "--n-players",
                "50",
                "--n-leagues",
                "2",
                "--seed",
                "9",
                "--out",
                str(csv_path),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "contests",
                "--n-contests",
                "4",
                "--players-per-contest",
                "20",
                "--pool-size",
                "60",
                "--seed",
                "9",
                "--out",
                str(parquet_path),
            ]
        )
        == 0
    )

    expected_matches = generate_matches(500, 50, n_leagues=2, seed=9)
    read_matches = pl.read_csv(csv_path, try_parse_dates=True)
    assert read_matches.columns == list(MATCH_SCHEMA)
    assert read_matches.with_columns(pl.col("played_at").cast(pl.Datetime("us"))).equals(expected_matches)

    assert pl.read_parquet(parquet_path).equals(generate_contests(4, 20, 60, seed=9))


def test_cli_rejects_unknown_extension(tmp_path):
    with pytest.raises(SystemExit):
        main(["matches", "--n-matches", "5", "--n-players", "5", "--out", str(tmp_path / "x.json")])


# --- demo seeds ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_directory(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("demo_seeds")
    write_demo_seeds(directory)
    return directory


def test_demo_matches_bad_rows_as_documented(demo_directory):
    raw = pl.read_csv(demo_directory / "demo_matches.csv", infer_schema=False)
    assert raw.columns == ["game_id", "played_at", "league", "white", "black", "result"]
    assert raw.height == 30_000 + DEMO_BAD_MATCH_ROWS

    valid_timestamp = pl.col("played_at").str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).is_not_null()
    checks = {
        "empty black": raw.filter(pl.col("black").is_null()),
        "self-match": raw.filter(pl.col("white") == pl.col("black")),
        "bad result": raw.filter(~pl.col("result").is_in(["1-0", "0-1", "1/2-1/2"])),
        "empty played_at": raw.filter(pl.col("played_at").is_null()),
        "bad played_at": raw.filter(pl.col("played_at").is_not_null() & ~valid_timestamp),
        "duplicate game_id": raw.filter(pl.col("game_id").is_duplicated()),
    }
    assert {name: rows.height for name, rows in checks.items()} == {
        "empty black": 1,
        "self-match": 1,
        "bad result": 1,
        "empty played_at": 1,
        "bad played_at": 1,
        "duplicate game_id": 2,
    }
    assert checks["bad result"]["result"].to_list() == ["2-0"]
    assert checks["duplicate game_id"]["game_id"].to_list() == [str(DEMO_DUPLICATED_GAME_ID)] * 2
    bad_ids = {rows["game_id"][0] for name, rows in checks.items() if name != "duplicate game_id"}
    assert bad_ids == {"30001", "30002", "30003", "30004", "30005"}
    # one invalid row per documented defect
    assert len(checks) == DEMO_BAD_MATCH_ROWS

    # Dropping the injected rows (keeping the first of the duplicated id) gives the generator output.
    valid = raw.filter(pl.col("game_id").cast(pl.Int64) <= 30_000).unique("game_id", keep="first", maintain_order=True)
    canonical = valid.select(
        pl.col("game_id").cast(pl.Int64).alias("match_id"),
        pl.col("played_at").str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us"),
        "league",
        pl.col("white").alias("player_a"),
        pl.col("black").alias("player_b"),
        pl.col("result").replace_strict({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}).alias("score_a"),
    )
    assert canonical.equals(generate_matches(30_000, 1_000, n_leagues=2, seed=2024))


def test_demo_contests_layout(demo_directory):
    raw = pl.read_csv(demo_directory / "demo_contest_results.csv", infer_schema=False)
    assert raw.columns == ["contest_id", "played_at", "league", "handle", "place"]
    canonical = raw.select(
        pl.col("contest_id").cast(pl.Int64),
        pl.col("played_at").str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us"),
        "league",
        pl.col("handle").alias("player"),
        pl.col("place").cast(pl.Int64).alias("rank"),
    )
    assert canonical.equals(generate_contests(40, 200, 1_000, seed=2024))


def test_demo_team_results_layout(demo_directory):
    raw = pl.read_csv(demo_directory / "demo_team_results.csv", infer_schema=False)
    assert raw.columns == ["match", "played_at", "league", "squad", "gamer", "place", "goals", "share"]
    bad = raw.filter(pl.col("match").cast(pl.Int64) > 2_000)
    assert bad["match"].n_unique() == DEMO_BAD_TEAM_MATCHES
    canonical = raw.filter(pl.col("match").cast(pl.Int64) <= 2_000).select(
        pl.col("match").cast(pl.Int64).alias("match_id"),
        pl.col("played_at").str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us"),
        "league",
        pl.col("squad").alias("team"),
        pl.col("gamer").alias("player"),
        pl.col("place").cast(pl.Int64).alias("rank"),
        pl.col("goals").cast(pl.Float64).alias("score"),
        pl.col("share").cast(pl.Float64).fill_null(1.0).alias("weight"),
    )
    assert canonical.equals(demo_team_results())
    by_league = canonical.group_by("league").agg(pl.col("rank").is_null().all(), pl.col("score").is_null().all())
    assert sorted(by_league.rows()) == [("arena_5v5", True, False), ("squads", False, True)]


@pytest.mark.parametrize("name", ["demo_matches.csv", "demo_contest_results.csv", "demo_team_results.csv"])
def test_bundled_seeds_match_generator(demo_directory, name):
    bundled = REPO_SEEDS / name
    assert bundled.exists(), f"{bundled} is missing: the demo and this check need the bundled seed"
    assert bundled.read_bytes() == (demo_directory / name).read_bytes()
