"""``duckrate.spark``'s marts against the DuckDB macros, over the same replay rows (those of
``duckrate.spark.replay``): Elo and Glicko over matches in three leagues and one without a league, tagged with
a ``system`` column, and Elo-MMR over contests labelled with ``system :=``.

The leaderboards and ``contest_metrics`` equal the macros bit for bit; the marts that sum forecasts and log
losses within 1e-12 (Spark rounds a double to a decimal and takes a logarithm its own way), and bit for bit
whatever the partitioning. Bad columns and parameters raise ``DuckrateInputError`` naming them, at the call.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from helpers.spark_frames import from_spark, to_spark
from polars.testing import assert_frame_equal

import duckrate
from duckrate.synthetic import generate_contests, generate_matches

pytest.importorskip("pyspark", reason="duckrate.spark needs PySpark: pip install 'duckrate[spark]'")
from pyspark.sql import functions as F

import duckrate.spark

SYSTEMS = ("elo", "glicko")
# mart -> cases of (Spark keyword arguments, the macro's arguments, exact)
MATCH_MARTS = {
    "leaderboard": [({}, "", True)],
    "calibration_bins": [({"bins": 7}, ", bins := 7", False)],
    "calibration_summary": [
        ({}, "", False),
        ({"min_games": 0, "max_sd": 200, "warmup": 0.25}, ", min_games := 0, max_sd := 200, warmup := 0.25", False),
        (
            {"min_games": 3, "max_sd": {"glicko": 150}, "warmup": 0.1},
            ", min_games := 3, max_sd := MAP {'glicko': 150}, warmup := 0.1",
            False,
        ),
    ],
    "loss_curve": [
        ({}, "", False),
        ({"points": 1}, ", points := 1", False),
        ({"points": 5000}, ", points := 5000", False),
    ],
    "loss_by_gap": [({}, "", False), ({"bin_width": 40}, ", bin_width := 40", False)],
}
CONTEST_MARTS = {
    "contest_leaderboard": [({}, "", True)],
    "contest_metrics": [
        ({}, "", True),
        ({"top": 5, "min_history": 1}, ", top := 5, min_history := 1", True),
        (
            {"definition": "all_contests", "min_contests": 2, "warmup": 0.2},
            ", definition := 'all_contests', min_contests := 2, warmup := 0.2",
            True,
        ),
    ],
}


def _cases(marts: dict) -> list:
    return [
        pytest.param(mart, *case, id=f"{mart}-{i}") for mart, cases in marts.items() for i, case in enumerate(cases)
    ]


@pytest.fixture(scope="module")
def replays(spark):
    """``(tagged, contests)``: the Spark replay rows of Elo and Glicko with a system column, and of Elo-MMR."""
    matches = generate_matches(1200, 60, n_leagues=4, seed=11)
    unnamed = matches["league"].unique().sort()[0]
    matches = matches.with_columns(pl.when(pl.col("league") != unnamed).then(pl.col("league")).alias("league"))
    spark_matches = to_spark(spark, matches)
    per_system = [
        duckrate.spark.replay(spark_matches, system).withColumn("system", F.lit(system)) for system in SYSTEMS
    ]
    tagged = per_system[0].unionByName(per_system[1])
    contests = duckrate.spark.replay(to_spark(spark, generate_contests(24, 8, 30, seed=5, n_leagues=2)), "elo_mmr")
    return tagged, contests


@pytest.fixture(scope="module")
def con(replays):
    """DuckDB with the same replay rows as the tables ``tagged`` and ``contests``."""
    connection = duckrate.register(duckdb.connect())
    for name, rows in zip(("tagged", "contests"), replays):
        connection.register("duckrate_test_frame", from_spark(rows))
        connection.execute(f"CREATE TABLE {name} AS SELECT * FROM duckrate_test_frame")
        connection.unregister("duckrate_test_frame")
    yield connection
    connection.close()


def _mart(name: str):
    return getattr(duckrate.spark, name)


def _assert_equal(got: pl.DataFrame, expected: pl.DataFrame, exact: bool) -> None:
    """Equal rows (a Spark result has no order: both sorted by their keys), columns and types."""
    assert got.height > 0
    keys = [name for name in ("league", "system", "rank", "bin", "t", "gap_bin") if name in got.columns]
    got, expected = (frame.sort(keys, nulls_last=False) for frame in (got, expected))
    assert_frame_equal(got, expected, check_exact=exact, rel_tol=1e-12, abs_tol=0)


@pytest.mark.parametrize(("mart", "params", "arguments", "exact"), _cases(MATCH_MARTS))
def test_match_marts_equal_the_macros(replays, con, mart, params, arguments, exact):
    """Every row, column and type, over both systems and the NULL league."""
    got = from_spark(_mart(mart)(replays[0], **params))
    expected = con.sql(f"SELECT * FROM {mart}('tagged'{arguments})").pl()
    _assert_equal(got, expected, exact)
    assert set(got["system"]) == set(SYSTEMS) and got["league"].null_count() > 0


@pytest.mark.parametrize(("mart", "params", "arguments", "exact"), _cases(CONTEST_MARTS))
def test_contest_marts_equal_the_macros(replays, con, mart, params, arguments, exact):
    """Over a contest replay without a system column, labelled with ``system``."""
    got = from_spark(_mart(mart)(replays[1], system="elo_mmr", **params))
    expected = con.sql(f"SELECT * FROM {mart}('contests'{arguments}, system := 'elo_mmr')").pl()
    _assert_equal(got, expected, exact)
    assert set(got["system"]) == {"elo_mmr"}


def test_system_labels_rows_without_one(replays, con):
    """``system`` labels a replay without a system column; NULL leaves the rows' system NULL."""
    elo = replays[0].filter(F.col("system") == "elo").drop("system")
    got = from_spark(duckrate.spark.leaderboard(elo, system="elo"))
    con.execute("CREATE OR REPLACE TABLE elo AS SELECT * EXCLUDE (system) FROM tagged WHERE system = 'elo'")
    expected = con.sql("SELECT * FROM leaderboard('elo', system := 'elo')").pl()
    _assert_equal(got, expected, True)
    unlabelled = from_spark(duckrate.spark.loss_by_gap(elo))
    assert unlabelled["system"].null_count() == unlabelled.height


@pytest.mark.parametrize("mart", ["calibration_bins", "calibration_summary", "loss_by_gap"])
def test_sums_do_not_depend_on_the_partitioning(replays, mart):
    """Exact DECIMAL sums: the rows in one partition or spread over seven give the same bits."""
    rows = replays[0]
    one, spread = (from_spark(_mart(mart)(frame)) for frame in (rows.coalesce(1), rows.repartition(7, "seq")))
    keys = [name for name in ("league", "system", "bin", "gap_bin") if name in one.columns]
    assert_frame_equal(one.sort(keys, nulls_last=False), spread.sort(keys, nulls_last=False), check_exact=True)


@pytest.mark.parametrize(
    ("mart", "change", "named"),
    [
        ("leaderboard", lambda rows: rows.drop("sd_b_after"), "'sd_b_after'"),
        ("contest_leaderboard", lambda rows: rows.drop("played_at"), "'played_at'"),
        ("loss_curve", lambda rows: rows.withColumn("seq", F.col("seq").cast("double")), "column 'seq' has type"),
        (
            "calibration_bins",
            lambda rows: rows.withColumn("expected_a", F.col("expected_a").cast("string")),
            "column 'expected_a' has type",
        ),
    ],
)
def test_bad_columns_are_named_at_the_call(replays, mart, change, named):
    rows = replays[1] if mart.startswith("contest") else replays[0]
    with pytest.raises(duckrate.DuckrateInputError, match=named):
        _mart(mart)(change(rows))


@pytest.mark.parametrize(
    ("mart", "params", "named"),
    [
        ("calibration_bins", {"bins": 0}, "bins"),
        ("calibration_summary", {"warmup": 1.0}, "warmup"),
        ("calibration_summary", {"max_sd": {"glicko": -1}}, "max_sd"),
        ("loss_by_gap", {"bin_width": -5}, "bin_width"),
        ("loss_curve", {"point": 3}, "unknown parameter.*point"),
        ("contest_metrics", {"definition": "paper"}, "definition"),
    ],
)
def test_bad_parameters_are_named_at_the_call(replays, mart, params, named):
    rows = replays[1] if mart.startswith("contest") else replays[0]
    with pytest.raises(duckrate.DuckrateInputError, match=named):
        _mart(mart)(rows, **params)


def test_a_null_forecast_fails_the_job_naming_it(replays):
    """Values are checked as Spark computes (the macro's ``error()``): the job fails with the message."""
    rows = replays[0].withColumn("expected_a", F.when(F.col("seq") == 17, None).otherwise(F.col("expected_a")))
    result = duckrate.spark.calibration_bins(rows)
    with pytest.raises(Exception, match="calibration_bins: expected expected_a without nulls or NaN"):
        result.collect()
