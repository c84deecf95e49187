"""``calibration_bins`` on Spark, as :func:`duckrate.sql.mart_sql.calibration_bins_sql` computes it: per
(league, system) and equal-width forecast bin, n, the mean forecast and score (exact sums) and the 95% Wilson
interval of the mean score, operation for operation."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from duckrate.evaluation.calibration import calibration_bins as python_calibration_bins
from duckrate.evaluation.replay_rows import Z_95
from duckrate.spark.marts.expressions import exact_sum, forecast
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows

CALIBRATION_BINS = mart_named("calibration_bins")


def _clipped(value: Column) -> Column:
    return F.least(F.greatest(value, F.lit(0.0)), F.lit(1.0))


def calibration_bins(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``calibration_bins`` macro over a Spark DataFrame of replay rows (``bins``: the macro's parameter,
    its default from the registry); ``system`` labels rows without a system."""
    params = mart_parameters(CALIBRATION_BINS, params)
    source = replay_rows(rows, CALIBRATION_BINS, system, python_calibration_bins, params)
    bins = int(params["bins"])
    binned = source.select(
        "league",
        "system",
        forecast(CALIBRATION_BINS, "expected_a").alias("expected_a"),
        forecast(CALIBRATION_BINS, "score_a").alias("score_a"),
    ).withColumn(
        "bin", F.least(F.greatest(F.floor(F.col("expected_a") * F.lit(float(bins))), F.lit(0)), F.lit(bins - 1)) + 1
    )
    n = F.count(F.lit(1))
    per_bin = binned.groupBy("league", "system", "bin").agg(
        n.alias("n"),
        (exact_sum(F.col("expected_a")).cast("double") / n.cast("double")).alias("mean_expected"),
        (exact_sum(F.col("score_a")).cast("double") / n.cast("double")).alias("mean_score"),
    )
    z2, z = F.lit(Z_95 * Z_95), F.lit(Z_95)
    one, two, four = F.lit(1.0), F.lit(2.0), F.lit(4.0)
    trials, score = F.col("n").cast("double"), F.col("mean_score")
    denominator = one + z2 / trials
    centre = (score + z2 / (two * trials)) / denominator
    half_width = z * F.sqrt(score * (one - score) / trials + z2 / (four * trials * trials)) / denominator
    result = per_bin.select(
        "league",
        "system",
        F.col("bin").cast("bigint").alias("bin"),
        "n",
        "mean_expected",
        "mean_score",
        _clipped(centre - half_width).alias("lower"),
        _clipped(centre + half_width).alias("upper"),
    )
    return result
