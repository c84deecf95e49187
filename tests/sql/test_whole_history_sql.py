"""whr_fit and ttt_fit in real DuckDB: the same rows as the Python functions bit for bit, period_start as a
TIMESTAMP (NULL for an integer played_at), parameters passed through, bad input named, empty tables."""

from __future__ import annotations

from datetime import datetime

import duckdb
import polars as pl
import pytest

import duckrate
from duckrate.synthetic import generate_matches

FITS = {
    "whr_fit": (duckrate.whr_fit, {"w2": 150.0, "virtual_games": 1.5}),
    "ttt_fit": (duckrate.ttt_fit, {"p_draw": 0.1, "gamma": 0.05, "iterations": 4}),
}


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    games = generate_matches(1500, 40, n_leagues=2, seed=5, seconds_between_matches=4 * 3600.0)
    return games.select("match_id", "played_at", "league", "player_a", "player_b", "score_a")


def table(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    con.register("frame_view", frame)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM frame_view")
    con.unregister("frame_view")


def call(name: str, table_name: str, params: dict) -> str:
    given = "".join(f", {key} := {value!r}" for key, value in params.items())
    return f"SELECT * FROM {name}('{table_name}'{given})"


@pytest.mark.parametrize("name", FITS)
def test_sql_equals_python_bit_for_bit(con, frame, name):
    function, params = FITS[name]
    table(con, "matches", frame)
    sql = con.sql(call(name, "matches", params)).pl().sort("league", "player", "step")
    python = function(frame, **params).sort("league", "player", "step")
    assert sql.columns == python.columns
    assert sql.height == python.height > 0
    assert sql.schema["period_start"] == pl.Datetime("us")
    assert sql.equals(python)


@pytest.mark.parametrize("name", FITS)
def test_a_date_played_at_starts_each_period_at_midnight(con, frame, name):
    function, params = FITS[name]
    dated = frame.with_columns(pl.col("played_at").dt.date())
    table(con, "dated", dated)
    sql = con.sql(call(name, "dated", {**params, "period": "week"})).pl().sort("league", "player", "step")
    python = function(dated, **params, period="week").sort("league", "player", "step")
    assert python.schema["period_start"] == pl.Date
    assert sql["period_start"].to_list() == python["period_start"].cast(pl.Datetime("us")).to_list()
    assert sql.drop("period_start").equals(python.drop("period_start"))
    assert all(start.weekday() == 0 for start in sql["period_start"].to_list())


@pytest.mark.parametrize("name", FITS)
def test_an_integer_played_at_has_no_period_start_and_its_values_as_steps(con, frame, name):
    function, params = FITS[name]
    ordered = frame.with_columns(pl.col("played_at").dt.epoch("s") // 86_400)
    table(con, "ordered", ordered)
    sql = con.sql(call(name, "ordered", params)).pl().sort("league", "player", "step")
    python = function(ordered, **params).sort("league", "player", "step")
    assert sql["period_start"].null_count() == sql.height
    assert sql["step"].equals(python["period_start"])
    assert sql.drop("period_start").equals(python.drop("period_start"))


@pytest.mark.parametrize("name", FITS)
def test_an_empty_table_gives_no_rows(con, frame, name):
    table(con, "nothing", frame.head(0))
    result = con.sql(call(name, "nothing", FITS[name][1])).pl()
    assert result.height == 0
    assert result.columns[:8] == ["league", "player", "period_start", "step", "rating", "sd", "lower", "upper"]


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("whr_fit", {"w2": 0.0}, "w2"),
        ("whr_fit", {"period": "value"}, "period"),
        ("ttt_fit", {"sigma": -1.0}, "sigma"),
        ("ttt_fit", {"period": "fortnight"}, "period"),
    ],
)
def test_bad_parameters_are_named(con, frame, name, params, message):
    table(con, "matches", frame)
    with pytest.raises(duckdb.Error, match=message):
        con.sql(call(name, "matches", params)).fetchall()


def test_a_bad_row_is_named_with_its_match(con, frame):
    bad = frame.with_columns(score_a=pl.when(pl.col("match_id") == 17).then(pl.lit(1.5)).otherwise(pl.col("score_a")))
    table(con, "bad", bad)
    for name in FITS:
        with pytest.raises(duckdb.Error, match=r"score_a.*17|17.*score_a"):
            con.sql(call(name, "bad", FITS[name][1])).fetchall()


def test_whr_rows_change_with_w2(con, frame):
    table(con, "matches", frame)
    narrow = con.sql(call("whr_fit", "matches", {"w2": 10.0})).pl().sort("league", "player", "step")
    wide = con.sql(call("whr_fit", "matches", {"w2": 1000.0})).pl().sort("league", "player", "step")
    assert narrow.height == wide.height
    assert (narrow["rating"] - wide["rating"]).abs().max() > 1.0


def test_a_timestamptz_played_at_gives_utc_period_starts(con):
    games = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [datetime(2024, 3, 9, 23, 30), datetime(2024, 3, 10, 1, 0), datetime(2024, 3, 10, 23, 0)],
            "player_a": ["a", "b", "a"],
            "player_b": ["b", "c", "c"],
            "score_a": [1.0, 0.0, 1.0],
        }
    )
    table(con, "zoned", games)
    con.execute("SET TimeZone = 'America/New_York'")
    con.execute("CREATE OR REPLACE TABLE zoned AS SELECT * REPLACE (played_at::TIMESTAMPTZ AS played_at) FROM zoned")
    rows = con.sql("SELECT DISTINCT period_start FROM whr_fit('zoned') ORDER BY 1").fetchall()
    con.execute("SET TimeZone = 'UTC'")
    utc_days = con.sql(
        "SELECT DISTINCT date_trunc('day', played_at AT TIME ZONE 'UTC') FROM zoned ORDER BY 1"
    ).fetchall()
    assert rows == utc_days
