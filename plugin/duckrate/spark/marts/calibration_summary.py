"""``calibration_summary`` on Spark, as :func:`duckrate.sql.mart_sql.calibration_summary_sql` computes it: per
(league, system) n, mean log loss, Brier score, accuracy over decisive games, and the log loss of the
*established* matches (both players had at least ``min_games`` earlier matches and, with ``max_sd``, both
sds before the match at most that bound); ``warmup`` drops the first share of each (league, system)'s matches
in ``seq`` order from every figure (not from the games counted). Exact sums (DECIMAL)."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from duckrate.evaluation.calibration import calibration_summary as python_calibration_summary
from duckrate.spark.marts.expressions import checked_seq, exact_mean, forecast, log_loss, number, same, text
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows

CALIBRATION_SUMMARY = mart_named("calibration_summary")
_SIDES = ("a", "b")


def _bound(max_sd) -> Column:
    """The sd bound of each row's system: none, one number, or a mapping from system to number."""
    if max_sd is None:
        return F.lit(None).cast("double")
    if not isinstance(max_sd, Mapping):
        return F.lit(float(max_sd))
    bound = F.lit(None).cast("double")
    for system, value in max_sd.items():
        bound = F.when(F.col("system") == F.lit(system), F.lit(float(value))).otherwise(bound)
    return bound


def _experienced(matches: DataFrame, min_games: int) -> DataFrame:
    """``matches`` with ``experienced``: both players had at least ``min_games`` earlier matches (the seq of
    each player's (min_games + 1)-th match, joined to both sides)."""
    if min_games == 0:
        return matches.withColumn("experienced", F.lit(True))
    sides = [matches.select("league", "system", "seq", F.col(f"player_{side}").alias("player")) for side in _SIDES]
    by_seq = Window.partitionBy("league", "system", "player").orderBy("seq")
    thresholds = (
        sides[0]
        .unionByName(sides[1])
        .withColumn("nth", F.row_number().over(by_seq))
        .filter(F.col("nth") == F.lit(min_games + 1))
        .select("league", "system", "player", F.col("seq").alias("from_seq"))
    )
    joined = matches.alias("r")
    for side in _SIDES:
        on = same("r", side, "league", "system") & (F.col(f"{side}.player") == F.col(f"r.player_{side}"))
        joined = joined.join(thresholds.alias(side), on, "left")
    experienced = (F.col("r.seq") >= F.col("a.from_seq")) & (F.col("r.seq") >= F.col("b.from_seq"))
    return joined.select("r.*", experienced.alias("experienced"))


def calibration_summary(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``calibration_summary`` macro over a Spark DataFrame of replay rows (``min_games``, ``max_sd``: a
    number or a mapping from system to number, ``warmup``: the macro's parameters); ``system`` labels rows
    without a system."""
    params = mart_parameters(CALIBRATION_SUMMARY, params)
    source = replay_rows(rows, CALIBRATION_SUMMARY, system, python_calibration_summary, params)
    max_sd, warmup = params["max_sd"], float(params["warmup"])
    sds = [
        (number(f"sd_{side}_before") if max_sd is not None else F.lit(None).cast("double")).alias(f"sd_{side}_before")
        for side in _SIDES
    ]
    matches = source.select(
        "league",
        "system",
        checked_seq(CALIBRATION_SUMMARY).alias("seq"),
        *(text(f"player_{side}").alias(f"player_{side}") for side in _SIDES),
        forecast(CALIBRATION_SUMMARY, "expected_a").alias("expected_a"),
        forecast(CALIBRATION_SUMMARY, "score_a").alias("score_a"),
        *sds,
    )
    matches = _experienced(matches, int(params["min_games"]))
    if warmup > 0:  # drop the first floor(T · warmup) matches of each (league, system) in seq order
        group = Window.partitionBy("league", "system")
        position = F.row_number().over(group.orderBy("seq")).cast("double")
        dropped = F.floor(F.count(F.lit(1)).over(group).cast("double") * F.lit(warmup))
        matches = matches.withColumn("kept", position > dropped).filter(F.col("kept")).drop("kept")
    bound = F.col("bound")
    within = [F.col(f"sd_{side}_before").isNull() | (F.col(f"sd_{side}_before") <= bound) for side in _SIDES]
    p, s = F.col("expected_a"), F.col("score_a")
    one, half = F.lit(1.0), F.lit(0.5)
    scored = matches.withColumn("bound", _bound(max_sd)).select(
        "league",
        "system",
        p.alias("p"),
        s.alias("s"),
        log_loss(p, s).alias("log_loss"),
        F.when((s == 0) | (s == 1), F.when(p > half, s).when(p < half, one - s).otherwise(half)).alias("correct"),
        (F.coalesce(F.col("experienced"), F.lit(False)) & (bound.isNull() | (within[0] & within[1]))).alias(
            "established"
        ),
    )
    established = F.col("established")
    n, n_established = F.count(F.lit(1)), F.count(F.when(established, F.lit(1)))
    summary = scored.groupBy("league", "system").agg(
        n.alias("n"),
        exact_mean(F.col("log_loss"), n).alias("log_loss"),
        exact_mean((F.col("p") - F.col("s")) * (F.col("p") - F.col("s")), n).alias("brier"),
        exact_mean(F.col("correct"), F.count("correct")).alias("accuracy"),
        n_established.alias("n_established"),
        exact_mean(F.when(established, F.col("log_loss")), n_established).alias("log_loss_established"),
    )
    return summary
