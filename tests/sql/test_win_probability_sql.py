"""win_probability and win_matrix in real DuckDB: equal to the Python functions over every kind of table (replay,
leaderboard, bt_fit, saved state), the replay's own expected_a for one more match, and the errors."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import duckrate
from duckrate.synthetic import generate_matches

CHANCE = "grid_points := 201, grid_max := 6.0"


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return generate_matches(1200, 20, n_leagues=2, seed=4).with_columns(pl.col("score_a").round(1))


@pytest.fixture(scope="module")
def db(frame):
    con = duckrate.register(duckdb.connect())
    con.register("frame_view", frame)
    con.execute("CREATE TABLE matches AS SELECT * FROM frame_view")
    con.unregister("frame_view")
    con.execute("CREATE TABLE replay_elo AS SELECT * FROM elo_replay('matches', k := 24, advantage := 35)")
    con.execute("CREATE TABLE replay_glicko AS SELECT * FROM glicko_replay('matches')")
    con.execute("CREATE TABLE replay_trueskill AS SELECT * FROM trueskill_replay('matches')")
    con.execute(
        "CREATE TABLE replays AS SELECT 'elo' AS system, * FROM replay_elo "
        "UNION ALL SELECT 'glicko', * FROM replay_glicko UNION ALL SELECT 'trueskill', * FROM replay_trueskill"
    )
    con.execute("CREATE TABLE board AS SELECT * FROM leaderboard('replays')")
    con.execute("CREATE TABLE bt AS SELECT * FROM bt_fit('matches', prior_sd := 300, home_advantage := true)")
    con.execute(f"CREATE TABLE state_chance AS SELECT * FROM chance_state('matches', {CHANCE})")
    con.execute("CREATE TABLE state_elo2k AS SELECT * FROM elo2k_state('matches')")
    con.execute("CREATE TABLE state_pairwise AS SELECT * FROM pairwise_state('matches')")
    yield con
    con.close()


def players(frame: pl.DataFrame, league: str = "league_1") -> list[str]:
    games = frame.filter(pl.col("league") == league)
    return sorted(set(games["player_a"]) | set(games["player_b"]))


CASES = [
    ("replay_elo", "system := 'elo', advantage := 35", {"system": "elo", "advantage": 35.0}),
    ("replays", "system := 'glicko', c := 20", {"system": "glicko", "c": 20.0}),
    ("board", "system := 'trueskill', draw_probability := 0.2", {"system": "trueskill", "draw_probability": 0.2}),
    ("bt", "side_a_advantage := true", {"side_a_advantage": True}),
    ("state_chance", "league := 'league_1'", {"league": "league_1"}),
    ("state_elo2k", "", {}),
    ("state_pairwise", "", {}),
]


def sql_arguments(text: str) -> str:
    return f", {text}" if text else ""


@pytest.mark.parametrize("table, sql, python", CASES, ids=[case[0] for case in CASES])
def test_sql_equals_python(db, frame, table, sql, python):
    names = players(frame)
    a, b, c = names[0], names[1], names[2]
    got = db.sql(f"SELECT * FROM win_probability('{table}', '{a}', ['{b}', '{c}']{sql_arguments(sql)})").pl()
    ratings = db.sql(f"SELECT * FROM {table}").pl()
    assert got.equals(duckrate.win_probability(ratings, a, [b, c], **python))
    assert got.height == 2 and got["player_b"].to_list() == [b, c]
    matrix = db.sql(f"SELECT * FROM win_matrix('{table}', top := 4{sql_arguments(sql)})").pl()
    assert matrix.equals(duckrate.win_matrix(ratings, top=4, **python))
    assert matrix.height == (12 if "league" in python else 24)


def test_sql_over_a_state_reads_only_the_named_players_and_gets_the_whole_states_answer(db, frame):
    """The macro passes the UDF the state rows of the named players (and their pair rows) only."""
    a, b = players(frame)[:2]
    state = db.sql("SELECT * FROM state_pairwise").pl()
    assert (
        db.sql(f"SELECT * FROM win_probability('state_pairwise', '{a}', '{b}')")
        .pl()
        .equals(duckrate.win_probability(state, a, b))
    )


def test_sql_forecast_is_the_replays_expected_a_for_one_more_match(db, frame):
    a, b = players(frame)[:2]
    db.execute(
        f"CREATE TEMP TABLE more AS SELECT * FROM matches UNION ALL "
        f"SELECT 999999, (SELECT max(played_at) FROM matches), 'league_1', '{a}', '{b}', 0.5"
    )
    for system, params in (("glicko", "c := 60"), ("trueskill", "beta := 3.0, tau := 0.5"), ("elo", "scale := 200")):
        expected = db.sql(
            f"SELECT expected_a FROM {system}_replay('more', {params}) WHERE match_id = 999999"
        ).fetchall()[0][0]
        db.execute(f"CREATE OR REPLACE TEMP TABLE base AS SELECT * FROM {system}_replay('matches', {params})")
        got = db.sql(
            f"SELECT p_win_a FROM win_probability('base', '{a}', '{b}', system := '{system}', {params})"
        ).fetchall()[0]
        assert got[0] == pytest.approx(expected, abs=1e-15), system


def error_of(db, sql: str) -> str:
    with pytest.raises(duckdb.Error) as caught:
        db.sql(sql).fetchall()
    return str(caught.value)


def test_sql_errors_name_what_is_wrong(db, frame):
    a, b = players(frame)[:2]
    assert "player 'zed' is not in table 'replay_elo' (league 'league_1')" in error_of(
        db, f"SELECT * FROM win_probability('replay_elo', '{a}', 'zed', system := 'elo', league := 'league_1')"
    )
    assert "a replay table without a system column: say which system made it with system := " in error_of(
        db, f"SELECT * FROM win_probability('replay_elo', '{a}', '{b}')"
    )
    assert "system 'topcoder' has no two-player forecast here" in error_of(
        db, f"SELECT * FROM win_probability('replay_elo', '{a}', '{b}', system := 'topcoder')"
    )
    assert "holds several systems ('elo', 'glicko', 'trueskill'); choose one with system := " in error_of(
        db, "SELECT * FROM win_matrix('board')"
    )
    assert "the elo2k forecast needs each player's vector pair" in error_of(
        db, f"SELECT * FROM win_probability('replay_elo', '{a}', '{b}', system := 'elo2k')"
    )
    assert "the table is missing column 'seq'; expected a replay table" in error_of(
        db, f"SELECT * FROM win_probability('matches', '{a}', '{b}', system := 'elo')"
    )
    assert "player_b is NULL" in error_of(db, f"SELECT * FROM win_probability('bt', '{a}', NULL)")
    assert "parameter top = 0; expected an integer >= 1" in error_of(db, "SELECT * FROM win_matrix('bt', top := 0)")


def test_sql_over_an_empty_table(db):
    db.execute("CREATE OR REPLACE TEMP TABLE nothing AS SELECT * FROM replay_elo WHERE false")
    assert db.sql("SELECT * FROM win_matrix('nothing', system := 'elo')").fetchall() == []
    assert "player 'a' is not in table 'nothing': it has no rows" in error_of(
        db, "SELECT * FROM win_probability('nothing', 'a', 'b', system := 'elo')"
    )


def test_a_fit_with_covariates_forecasts_players_only(db, frame):
    """bt_fit's coefficient rows (kind 'covariate') are not players: the matrix leaves them out, in SQL and
    in Python, and the forecast between two players is the one without them."""
    db.execute("CREATE TABLE styled AS SELECT *, ((match_id * 37) % 101 - 50) / 25.0 AS len_diff FROM matches")
    db.execute("CREATE TABLE bt_styled AS SELECT * FROM bt_fit('styled', prior_sd := 300, covariates := ['len_diff'])")
    fit = db.sql("SELECT * FROM bt_styled").pl()
    assert fit.filter(pl.col("kind") == "covariate").height == 2
    matrix = db.sql("SELECT * FROM win_matrix('bt_styled', top := 5)").pl()
    assert matrix.height == 2 * 5 * 4 and "len_diff" not in set(matrix["player_a"])
    python = duckrate.win_matrix(fit, top=5)
    assert python.sort(matrix.columns[:4]).equals(matrix.sort(matrix.columns[:4]))
    ratings = fit.filter((pl.col("kind") == "player") & (pl.col("league") == "league_1")).sort("player")
    a, b = ratings["player"][0], ratings["player"][1]
    p = db.sql(f"SELECT p_win_a FROM win_probability('bt_styled', '{a}', '{b}')").fetchall()[0][0]
    gap = ratings["rating"][0] - ratings["rating"][1]
    assert p == pytest.approx(1.0 / (1.0 + 10.0 ** (-gap / 400.0)), rel=1e-14)
