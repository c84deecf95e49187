"""``duckrate.spark.bt_lr_test`` in Spark local mode: each league's tests in one task, rows equal to the
Python API's and the DuckDB macro's bit for bit, and the Python API's errors with its messages.

The leagues differ in what the Python path could let leak from one league into another if it computed
over the whole table: one weighted league beside unweighted ones (the whole table is then weighted), one
league of NULL (no league), and each league's randomness drawn from the seed and its name alone."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers.spark_frames import from_spark, match_id_repeated_across_leagues, to_spark, with_values
from polars.testing import assert_frame_equal

import duckrate
from duckrate.fits.bt_lr_test import OUTPUT_SCHEMA, TESTS
from duckrate.synthetic import generate_matches

pytest.importorskip("pyspark", reason="duckrate.spark needs PySpark: pip install 'duckrate[spark]'")
import duckrate.spark

PARAMS = {"seed": 5, "permutations": 9, "lowrank_epochs": 40}  # small: the tests run in seconds
ORDER = ["league", "test"]
TYPES = {
    "league": "string",
    "test": "string",
    "n_players": "bigint",
    "n_games": "bigint",
    "games_per_player": "double",
    "statistic": "double",
    "df": "double",
    "p_value": "double",
    "seed": "bigint",
}


@pytest.fixture(scope="module")
def matches() -> pl.DataFrame:
    """Three leagues of about 300 games: 'league_1' weighted, 'league_2' not, and 'league_3' as NULL."""
    frame = generate_matches(900, 40, n_leagues=3, seed=7)
    weights = np.random.default_rng(7).uniform(0.5, 2.0, frame.height)
    return frame.with_columns(
        pl.when(pl.col("league") == "league_1").then(pl.Series(weights)).otherwise(None).alias("weight"),
        pl.when(pl.col("league") == "league_3").then(None).otherwise(pl.col("league")).alias("league"),
    )


def sorted_rows(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(ORDER, nulls_last=True)


def test_rows_equal_the_python_api_and_the_duckdb_macro(spark, matches):
    """Each league tested alone in its task gives its rows of the whole table (weighted, as 'league_1' is,
    while 'league_2''s task sees no weights)."""
    got = duckrate.spark.bt_lr_test(to_spark(spark, matches), **PARAMS)
    assert dict(got.dtypes) == TYPES and got.columns == list(OUTPUT_SCHEMA)
    rows = sorted_rows(from_spark(got))
    assert rows.height == 3 * len(TESTS)
    assert rows["league"].to_list().count(None) == len(TESTS)
    assert rows["p_value"].is_not_null().sum() > 2 * len(TESTS)  # the tests ran, not just rows of NULLs
    expected = duckrate.bt_lr_test(matches, **PARAMS)
    assert_frame_equal(rows, sorted_rows(expected), check_exact=True)
    with duckrate.register(duckdb.connect()) as con:
        con.register("frame_view", matches)
        con.execute("CREATE TABLE matches AS SELECT * FROM frame_view")
        args = ", ".join(f"{name} := {value}" for name, value in PARAMS.items())
        macro = con.sql(f"SELECT * FROM bt_lr_test('matches', {args})").pl()
    assert_frame_equal(rows, sorted_rows(macro), check_exact=True)


BAD_INPUTS = {
    "score out of range": lambda m: with_values(m, 17, score_a=1.5),
    "weight not positive": lambda m: with_values(
        m, m.filter(pl.col("league") == "league_1")["match_id"][3], weight=0.0
    ),
    "match_id repeated across leagues": match_id_repeated_across_leagues,
    "missing column": lambda m: m.drop("player_b"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_input_errors_are_the_python_apis(spark, matches, case):
    bad = BAD_INPUTS[case](matches)
    with pytest.raises(duckrate.DuckrateInputError) as python_error:
        duckrate.bt_lr_test(bad, **PARAMS)
    with pytest.raises(duckrate.DuckrateInputError) as spark_error:
        duckrate.spark.bt_lr_test(to_spark(spark, bad), **PARAMS)
    assert type(spark_error.value) is type(python_error.value)
    assert str(spark_error.value) == str(python_error.value)


@pytest.mark.parametrize(
    "params, error",
    [
        ({"permutations": 0}, duckrate.DuckrateInputError),
        ({"test_ridge": float("nan")}, duckrate.DuckrateInputError),
        ({"alpha": 1.0}, TypeError),  # not a parameter of bt_lr_test
    ],
)
def test_parameter_errors_are_the_python_apis(spark, matches, params, error):
    with pytest.raises(error) as python_error:
        duckrate.bt_lr_test(matches, **params)
    with pytest.raises(error) as spark_error:
        duckrate.spark.bt_lr_test(to_spark(spark, matches), **params)
    assert str(spark_error.value) == str(python_error.value)
