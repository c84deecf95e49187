"""``loss_curve`` on Spark, as :func:`duckrate.sql.mart_sql.loss_curve_sql` computes it: per (league, system)
the mean log loss of the first t matches (in ``seq`` order) at ``points`` evenly spaced t from 1 to T (every
t when T <= points), with ``t_over_n`` = t / the group's distinct players.

Each match's log loss is summed (exact, DECIMAL) into the first checkpoint at or after its position, and a
window adds the checkpoints' sums in order. Every checkpoint ``k < min(T, points)`` receives at least its own
match (the one at ``t_k``), so the checkpoints are those of the sums, with no list to unnest.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from duckrate.evaluation.loss_curve import loss_curve as python_loss_curve
from duckrate.spark.marts.expressions import checked_seq, exact_sum, forecast, log_loss, same, text
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows

LOSS_CURVE = mart_named("loss_curve")


def _checkpoint(points: int) -> Column:
    """The checkpoint a match at ``position`` (1-based, of ``matches``) first counts towards (0-based)."""
    if points == 1:
        return F.lit(0).cast("bigint")
    spread = F.expr(f"greatest(0, ((2 * position - 3) * {points - 1} + 2 * (matches - 1) - 1) div (2 * (matches - 1)))")
    return F.when(F.col("matches") <= F.lit(points), F.col("position") - 1).otherwise(spread)


def _step(points: int) -> Column:
    """The ``t`` of ``checkpoint`` (0-based): ``1 + round((T - 1)·k / (points - 1))``, halves up, in integers."""
    if points == 1:
        return F.col("matches")
    spread = F.expr(f"1 + (2 * (matches - 1) * checkpoint + {points - 1}) div {2 * (points - 1)}")
    return F.when(F.col("matches") <= F.lit(points), F.col("checkpoint") + 1).otherwise(spread)


def loss_curve(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``loss_curve`` macro over a Spark DataFrame of replay rows (``points``: the macro's parameter);
    ``system`` labels rows without a system."""
    params = mart_parameters(LOSS_CURVE, params)
    source = replay_rows(rows, LOSS_CURVE, system, python_loss_curve, params)
    points = int(params["points"])
    matches = source.select(
        "league",
        "system",
        checked_seq(LOSS_CURVE).alias("seq"),
        text("player_a").alias("player_a"),
        text("player_b").alias("player_b"),
        forecast(LOSS_CURVE, "expected_a").alias("expected_a"),
        forecast(LOSS_CURVE, "score_a").alias("score_a"),
    )
    group = Window.partitionBy("league", "system")
    positioned = matches.select(
        "league",
        "system",
        log_loss(F.col("expected_a"), F.col("score_a")).alias("log_loss"),
        F.row_number().over(group.orderBy("seq")).cast("bigint").alias("position"),
        F.count(F.lit(1)).over(group).alias("matches"),
    ).withColumn("checkpoint", _checkpoint(points))
    buckets = positioned.groupBy("league", "system", "checkpoint").agg(
        exact_sum(F.col("log_loss")).alias("total"), F.max("matches").alias("matches")
    )
    running = buckets.select(
        "league",
        "system",
        _step(points).alias("t"),
        F.sum("total")
        .over(group.orderBy("checkpoint").rowsBetween(Window.unboundedPreceding, Window.currentRow))
        .alias("total"),
    )
    players = (
        matches.select("league", "system", F.col("player_a").alias("player"))
        .unionByName(matches.select("league", "system", F.col("player_b").alias("player")))
        .groupBy("league", "system")
        .agg(F.count_distinct("player").alias("players"))
    )
    curve = running.alias("c").join(players.alias("n"), same("c", "n", "league", "system"))
    t = F.col("c.t")
    result = curve.select(
        F.col("c.league").alias("league"),
        F.col("c.system").alias("system"),
        t.cast("bigint").alias("t"),
        (t.cast("double") / F.col("n.players").cast("double")).alias("t_over_n"),
        (F.col("c.total").cast("double") / t.cast("double")).alias("mean_log_loss"),
    )
    return result
