"""bt_lr_test in real DuckDB: equal to the Python function, per league, parameters passed through, errors."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import duckrate
from duckrate.synthetic import matrix_matches, win_matrix


def games(league: str, seed: int, n: int = 30, t: int = 3000) -> pl.DataFrame:
    frame = matrix_matches(win_matrix("sst_bydiagonal", n, seed=seed), t, seed=seed).drop("p_true")
    return frame.with_columns(league=pl.lit(league), match_id=pl.col("match_id") + seed * 10**6)


@pytest.fixture
def matches(con):
    frame = pl.concat([games("one", 1), games("two", 2, n=20)])
    con.register("frame_view", frame)
    con.execute("CREATE TABLE matches AS SELECT * FROM frame_view")
    con.unregister("frame_view")
    return frame


def test_sql_equals_python(con, matches):
    got = con.sql("SELECT * FROM bt_lr_test('matches', seed := 4, permutations := 19)").pl()
    want = duckrate.bt_lr_test(matches, seed=4, permutations=19)
    assert got.sort("league", "test").equals(want.sort("league", "test"))
    assert got.height == 16


def test_sql_defaults_and_threads(con, matches):
    query = "SELECT * FROM bt_lr_test('matches') ORDER BY league, test"
    con.execute("SET threads = 1")
    first = con.sql(query).fetchall()
    con.execute("SET threads = 2")
    assert con.sql(query).fetchall() == first
    assert {row[-1] for row in first} == {0}  # seed column: the default seed


def test_sql_bad_parameter_and_missing_table(con, matches):
    with pytest.raises(duckdb.Error, match="permutations"):
        con.sql("SELECT * FROM bt_lr_test('matches', permutations := 0)").fetchall()
    with pytest.raises(duckdb.Error, match="no_such_table"):
        con.sql("SELECT * FROM bt_lr_test('no_such_table')").fetchall()
