"""team_metrics on hand-made matches whose scores are worked out here, in SQL as in Python; tune over team
systems in Python and SQL, the same whatever the thread count."""

from __future__ import annotations

import math

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import duckrate
from duckrate.synthetic import generate_team_matches


def _replay() -> pl.DataFrame:
    """Three matches (one row per team is enough: team_metrics reads team-level columns):
    1. two teams, A wins, A predicted first with 0.7;
    2. three teams, C wins, predicted second (0.3) behind B (0.5); A last in both the forecast and the result;
    3. two teams tie for first, p_draw 0.2."""
    rows = [
        (1, "A", 1, 0.7, 1, 0.1),
        (1, "B", 2, 0.3, 2, 0.1),
        (2, "A", 3, 0.2, 3, 0.05),
        (2, "B", 2, 0.5, 1, 0.05),
        (2, "C", 1, 0.3, 2, 0.05),
        (3, "A", 1, 0.45, 1, 0.2),
        (3, "B", 1, 0.35, 2, 0.2),
    ]
    return pl.DataFrame(
        rows, schema=["seq", "team", "rank", "p_team_win", "predicted_rank", "p_draw"], orient="row"
    ).with_columns(pl.lit("L").alias("league"), pl.col("seq").cast(pl.Int64))


def test_team_metrics_by_hand():
    got = duckrate.team_metrics(_replay())
    # winner log loss: -ln 0.7, -ln 0.3, -ln 0.2 (a shared first place scores p_draw)
    assert got["winner_log_loss"][0] == pytest.approx((-math.log(0.7) - math.log(0.3) - math.log(0.2)) / 3, abs=1e-15)
    # accuracy: match 1 right, match 2 wrong, match 3 has no single winner
    assert got["accuracy"][0] == pytest.approx(0.5, abs=1e-15)
    # pair inversion: match 1: 1 of 1; match 2 (pairs AB, AC, BC by place 3,2,1 vs predicted 3,1,2): AB, AC agree,
    # BC disagrees: 2/3; match 3: no decided pair
    assert got["pair_inversion"][0] == pytest.approx((1.0 + 2.0 / 3.0) / 2, abs=1e-15)
    # rank deviation: 0; (0 + 1 + 1) / 3 / 3; (0 + 1) / 2 / 2
    assert got["rank_deviation"][0] == pytest.approx((0.0 + 2.0 / 9.0 + 0.25) / 3, abs=1e-15)
    assert got["n"][0] == 3
    assert duckrate.team_metrics(_replay(), warmup=0.5)["n"][0] == 2


def test_team_metrics_sql_equals_python():
    replay = duckrate.trueskill_teams(generate_team_matches(300, 100, seed=2, teams_per_match=(2, 4)))
    con = duckrate.register(duckdb.connect())
    con.register("r", replay)
    sql = con.sql("SELECT * FROM team_metrics('r', warmup := 0.2)").pl()
    assert_frame_equal(sql, duckrate.team_metrics(replay, warmup=0.2), check_exact=True)


def test_tune_teams_sql_equals_python_whatever_the_threads():
    results = generate_team_matches(300, 120, seed=3, teams_per_match=(2, 3))
    grid = {"beta": [3.0, 5.0], "tau": [0.05, 0.2]}
    one = duckrate.tune(results, "plackett_luce", grid=grid, threads=1)
    two = duckrate.tune(results, "plackett_luce", grid=grid, threads=2)
    assert_frame_equal(one, two, check_exact=True)
    assert one["rank"].to_list() == [1, 2, 3, 4]
    con = duckrate.register(duckdb.connect())
    con.register("results", results)
    sql = con.sql(
        "SELECT * FROM tune_teams('plackett_luce', 'results', grid := {'beta': [3.0, 5.0], 'tau': [0.05, 0.2]})"
    ).pl()
    assert_frame_equal(sql, one, check_exact=True)
    with pytest.raises(duckdb.Error, match="tune_teams"):
        con.sql("SELECT * FROM tune('plackett_luce', 'results')").fetchall()
