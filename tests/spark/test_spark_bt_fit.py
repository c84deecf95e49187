"""``duckrate.spark.bt_fit`` (games summed per pair in Spark, solved on the driver) equals ``duckrate.bt_fit``
within 1e-9, raises its input errors with its messages, and refuses, saying why, the options that need
every game's row."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.spark_frames import from_spark, to_spark
from polars.testing import assert_frame_equal

import duckrate
from duckrate.synthetic import generate_matches

pytest.importorskip("pyspark", reason="duckrate.spark needs PySpark: pip install 'duckrate[spark]'")
import duckrate.spark

ORDER = ["league", "kind", "player"]


@pytest.fixture(scope="module")
def games() -> pl.DataFrame:
    """Two leagues of weighted games (weights make the per-pair sums inexact, so order matters)."""
    frame = generate_matches(2000, 60, n_leagues=2, seed=3)
    rng = np.random.default_rng(3)
    return frame.with_columns(
        pl.Series("weight", rng.uniform(0.5, 2.0, frame.height)), pl.Series("len_diff", rng.normal(size=frame.height))
    )


PRIORS = pl.DataFrame(
    {
        "player": ["p000001", "p000002", "p000004"],
        "rating": [1650.0, 1400.0, 1500.0],
        "sd": [90.0, None, 300.0],
        "league": [None, None, "league_2"],
    }
)
CASES = {
    "mle, dense intervals": {},
    "ridge with a side-A effect": {"prior_sd": 200.0, "home_advantage": True},
    "sparse intervals": {"uncertainty": "sparse"},
    "mm, no intervals": {"method": "mm", "uncertainty": "none"},
    "priors": {"prior_sd": 250.0, "priors": PRIORS},
}


@pytest.mark.parametrize("case", list(CASES))
def test_equals_the_python_fit(spark, games, case):
    params = CASES[case]
    expected = duckrate.bt_fit(games, **params)
    got = from_spark(duckrate.spark.bt_fit(to_spark(spark, games), **params))
    assert got.columns == expected.columns
    assert_frame_equal(got.sort(ORDER), expected.sort(ORDER), check_exact=False, rel_tol=0.0, abs_tol=1e-9)


def test_input_errors_are_the_python_apis(spark, games):
    bad = games.with_columns(pl.when(pl.col("match_id") == 40).then(-0.5).otherwise(pl.col("score_a")).alias("score_a"))
    with pytest.raises(duckrate.DuckrateInputError) as python_error:
        duckrate.bt_fit(bad)
    with pytest.raises(duckrate.DuckrateInputError) as spark_error:
        duckrate.spark.bt_fit(to_spark(spark, bad))
    assert str(spark_error.value) == str(python_error.value)


@pytest.mark.parametrize(
    "params, named",
    [
        ({"uncertainty": "bootstrap"}, "uncertainty := 'bootstrap'"),
        ({"uncertainty": "sandwich", "cluster": "player_a"}, "cluster"),
        ({"uncertainty": "sandwich"}, "uncertainty := 'sandwich'"),
        ({"covariates": ["len_diff"]}, "covariates"),
        ({"reweight": "inverse_pair_frequency"}, "reweight"),
    ],
)
def test_row_level_options_are_refused_with_the_reason(spark, games, params, named):
    with pytest.raises(duckrate.DuckrateInputError, match=f"{named} is not supported on Spark: it needs"):
        duckrate.spark.bt_fit(to_spark(spark, games), **params)
