"""bt_fit in real DuckDB: equal to duckrate.bt_fit bit for bit, priors tables, errors, parameters."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import duckrate
from duckrate.synthetic import generate_matches


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    games = generate_matches(3000, 60, n_leagues=2, seed=3)
    # weights on some games, NULL (= 1) on others
    return games.with_columns(
        weight=pl.when(pl.col("match_id") % 7 == 0)
        .then(2.5)
        .when(pl.col("match_id") % 5 == 0)
        .then(None)
        .otherwise(1.0),
        len_diff=((pl.col("match_id") * 37) % 101 - 50) / 25.0,
        bold_diff=((pl.col("match_id") * 11) % 13 - 6).cast(pl.Int32),
        conversation=(pl.col("match_id") // 3).cast(pl.Utf8),
    )


@pytest.fixture
def db(con, frame):
    con.register("frame_view", frame)
    con.execute("CREATE TABLE matches AS SELECT * FROM frame_view")
    con.unregister("frame_view")
    return con


def sorted_frame(result: pl.DataFrame) -> pl.DataFrame:
    return result.sort("league", "kind", "player")


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"prior_sd": 200.0, "home_advantage": True, "uncertainty": "bootstrap", "resamples": 10, "seed": 9},
        {"method": "mm", "anchor_player": "p000004", "anchor_rating": 1800.0, "uncertainty": "none"},
        {"covariates": ["len_diff", "bold_diff"], "uncertainty": "sandwich", "cluster": "conversation"},
        {"covariates": ["len_diff"], "home_advantage": True, "reweight": "inverse_pair_frequency"},
        {"uncertainty": "sandwich", "cluster": "player_a", "min_pair_count": 3, "reweight": "inverse_pair_frequency"},
    ],
)
def test_sql_equals_python(db, frame, params):
    arguments = "".join(
        f", {name} := {str(value).lower() if isinstance(value, bool) else repr(value)}"
        for name, value in params.items()
    )
    table, games = "matches", frame
    if "anchor_player" in params:  # an anchor must play in every league fitted: one league here
        db.execute("CREATE VIEW one_league AS SELECT * FROM matches WHERE league = 'league_2'")
        table, games = "one_league", frame.filter(pl.col("league") == "league_2")
    sql = db.sql(f"SELECT * FROM bt_fit('{table}'{arguments})").pl()
    if "covariates" in params:
        assert sql.filter(pl.col("kind") == "covariate").height == 2 * len(params["covariates"])
    python = duckrate.bt_fit(games, **params)
    assert sql.columns == python.columns
    assert sorted_frame(sql).equals(sorted_frame(python))


def test_priors_table_with_leagues(db, frame):
    db.execute(
        "CREATE TABLE priors AS SELECT * FROM (VALUES ('p000000', 1700.0, 90.0, NULL), ('p000001', 1300.0, NULL, 'league_2'), "
        "('nobody', 2500.0, NULL, NULL)) AS p(player, rating, sd, league)"
    )
    sql = db.sql("SELECT * FROM bt_fit('matches', prior_sd := 150, priors := 'priors')").pl()
    priors = db.sql("SELECT * FROM priors").pl()
    python = duckrate.bt_fit(frame, prior_sd=150.0, priors=priors)
    assert sorted_frame(sql).equals(sorted_frame(python))
    without = duckrate.bt_fit(frame, prior_sd=150.0)
    moved = sql.join(without, on=["league", "player"]).filter(pl.col("player") == "p000000")
    assert (moved["rating"] > moved["rating_right"]).all()  # the 1700 prior pulls p000000 up


def test_integer_player_ids_and_no_league(con):
    con.execute(
        "CREATE TABLE g AS SELECT * FROM (VALUES (1, 1, 10, 20, 1.0), (2, 2, 20, 30, 1.0), (3, 3, 30, 10, 1.0), "
        "(4, 4, 10, 30, 0.5)) AS t(match_id, played_at, player_a, player_b, score_a)"
    )
    rows = con.sql("SELECT league, player, games, converged FROM bt_fit('g') ORDER BY player").fetchall()
    assert rows == [(None, "10", 3, True), (None, "20", 2, True), (None, "30", 3, True)]


def test_errors_name_the_problem(con):
    con.execute(
        "CREATE TABLE g AS SELECT * FROM (VALUES (1, 1, 'ann', 'bob', 1.0), (2, 2, 'bob', 'cid', 1.0), "
        "(3, 3, 'cid', 'bob', 1.0)) AS t(match_id, played_at, player_a, player_b, score_a)"
    )
    with pytest.raises(
        duckdb.InvalidInputException, match=r"never lost to anyone outside their group.*'ann'.*prior_sd"
    ):
        con.sql("SELECT * FROM bt_fit('g')").fetchall()
    with pytest.raises(duckdb.InvalidInputException, match=r"method = 'bfgs'; expected 'newton' or 'mm'"):
        con.sql("SELECT * FROM bt_fit('g', method := 'bfgs')").fetchall()
    assert len(con.sql("SELECT * FROM bt_fit('g', prior_sd := 300)").fetchall()) == 3
    con.execute("UPDATE g SET score_a = 2 WHERE match_id = 2")
    with pytest.raises(duckdb.InvalidInputException, match=r"table 'g': column 'score_a' has 2.0 at match_id=2"):
        con.sql("SELECT * FROM bt_fit('g', prior_sd := 300)").fetchall()


def test_result_is_a_plain_table(db, tmp_path):
    path = tmp_path / "w.duckdb"
    db.execute(f"ATTACH '{path}' AS w")
    db.execute("CREATE TABLE w.bt AS SELECT * FROM bt_fit('matches', prior_sd := 200)")
    db.execute("DETACH w")
    plain = duckdb.connect(str(path), read_only=True)
    assert plain.sql("SELECT count(*), count(DISTINCT league) FROM bt").fetchall() == [(60, 2)]
    plain.close()
