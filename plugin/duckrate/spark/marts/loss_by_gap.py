"""``loss_by_gap`` on Spark, as :func:`duckrate.sql.mart_sql.loss_by_gap_sql` computes it: per (league, system)
and equal-width bin of ``gap = rating_a_before - rating_b_before`` (lower edge ``floor(gap / w) * w``, NULL
when a rating is NULL or NaN), n, the mean log loss and the bin's share of the group's log loss, from exact
sums; ``bin_width`` NULL: each system's default width."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from duckrate.evaluation.loss_by_gap import DEFAULT_BIN_WIDTH, system_bin_widths
from duckrate.evaluation.loss_by_gap import loss_by_gap as python_loss_by_gap
from duckrate.spark.marts.expressions import exact_sum, floor_double, forecast, log_loss, number
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows

LOSS_BY_GAP = mart_named("loss_by_gap")


def _default_width():
    """The bin width of each row's system when none is given."""
    width = F.lit(DEFAULT_BIN_WIDTH)
    for system, system_width in system_bin_widths().items():
        width = F.when(F.col("system") == F.lit(system), F.lit(float(system_width))).otherwise(width)
    return width


def loss_by_gap(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``loss_by_gap`` macro over a Spark DataFrame of replay rows (``bin_width``: the macro's parameter);
    ``system`` labels rows without a system."""
    params = mart_parameters(LOSS_BY_GAP, params)
    source = replay_rows(rows, LOSS_BY_GAP, system, python_loss_by_gap, params)
    given = params["bin_width"]
    width = _default_width() if given is None else F.lit(float(given))
    matches = source.select(
        "league",
        "system",
        (number("rating_a_before") - number("rating_b_before")).alias("gap"),
        forecast(LOSS_BY_GAP, "expected_a").alias("expected_a"),
        forecast(LOSS_BY_GAP, "score_a").alias("score_a"),
    )
    gap = F.col("gap")
    binned = matches.select(
        "league",
        "system",
        F.when(F.isnan(gap), F.lit(None)).otherwise(floor_double(gap / width) * width).alias("gap_bin"),
        log_loss(F.col("expected_a"), F.col("score_a")).alias("log_loss"),
    )
    per_bin = binned.groupBy("league", "system", "gap_bin").agg(
        F.count(F.lit(1)).alias("n"), exact_sum(F.col("log_loss")).alias("total")
    )
    group_total = F.sum("total").over(Window.partitionBy("league", "system")).cast("double")
    result = per_bin.select(
        "league",
        "system",
        F.col("gap_bin").cast("double").alias("gap_bin"),
        "n",
        (F.col("total").cast("double") / F.col("n").cast("double")).alias("mean_log_loss"),
        (F.col("total").cast("double") / F.nullif(group_total, F.lit(0.0))).alias("share_of_total_loss"),
    )
    return result
