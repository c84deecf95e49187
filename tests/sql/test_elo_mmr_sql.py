"""elo_mmr_replay and the contest marts in real DuckDB: equal to the Python API bit for bit, id types kept,
errors, parameters."""

from __future__ import annotations

import polars as pl
import pytest
from helpers import mart_oracles

import duckrate
from duckrate.synthetic import generate_contests

KEY = ["league", "seq", "rank", "player"]


@pytest.fixture
def results(con):
    frame = generate_contests(15, 40, 150, seed=2, n_leagues=2, tie_rate=0.1)
    con.register("frame", frame)
    con.execute(
        "CREATE TABLE results AS SELECT 'c' || contest_id::VARCHAR AS contest_id, played_at::DATE AS played_at, "
        "league, player, rank FROM frame"
    )
    con.unregister("frame")
    return con.sql("SELECT * FROM results").pl()


@pytest.mark.parametrize(
    "params", [{}, {"variant": "gaussian", "drift_per_day": 2.0}, {"rho": 0.5, "max_history": 3, "algorithm": "exact"}]
)
def test_sql_equals_python_bit_for_bit(con, results, params):
    arguments = "".join(f", {k} := {v!r}" for k, v in params.items())
    sql = con.sql(f"SELECT * FROM elo_mmr_replay('results'{arguments})").pl().sort(KEY)
    python = duckrate.elo_mmr(results, **params).sort(KEY)
    assert sql.columns == python.columns
    assert sql.schema["contest_id"] == pl.Utf8 and sql.schema["played_at"] == pl.Date
    assert sql.equals(python)


def test_priors_weights_and_marts(con, results):
    con.execute("CREATE TABLE priors AS SELECT 'p000010' AS player, 2000.0 AS rating, 100.0 AS sd")
    con.execute("CREATE TABLE weighted AS SELECT *, CASE WHEN contest_id = 'c3' THEN 2.0 END AS weight FROM results")
    sql = con.sql("SELECT * FROM elo_mmr_replay('weighted', priors := 'priors')").pl().sort(KEY)
    weighted = con.sql("SELECT * FROM weighted").pl()
    priors = pl.DataFrame({"player": ["p000010"], "rating": [2000.0], "sd": [100.0]})
    assert sql.equals(duckrate.elo_mmr(weighted, priors=priors).sort(KEY))
    con.execute("CREATE TABLE replay AS SELECT 'elo_mmr' AS system, * FROM elo_mmr_replay('results')")
    replay = con.sql("SELECT * FROM replay").pl()
    metrics = con.sql("SELECT * FROM contest_metrics('replay', min_contests := 3, warmup := 0.2)").pl().sort("league")
    assert metrics.equals(duckrate.contest_metrics(replay, min_contests=3, warmup=0.2).sort("league"))
    board = con.sql("SELECT * FROM contest_leaderboard('replay')").pl().sort("league", "rank")
    expected = mart_oracles.contest_leaderboard(replay).sort("league", "rank")
    assert board.columns == expected.columns
    assert board.equals(expected)


def test_errors_surface_with_the_row_key(con, results):
    con.execute(
        "CREATE TABLE bad AS SELECT * REPLACE (CASE WHEN player = 'p000010' THEN 0 ELSE rank END AS rank) FROM results"
    )
    with pytest.raises(Exception, match=r"column 'rank' has 0 at \(contest_id='c\d+', player='p000010'\)"):
        con.sql("SELECT * FROM elo_mmr_replay('bad')").fetchall()
    with pytest.raises(Exception, match="parameter variant"):
        con.sql("SELECT * FROM elo_mmr_replay('results', variant := 'x')").fetchall()
