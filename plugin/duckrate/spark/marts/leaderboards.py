"""``leaderboard`` and ``contest_leaderboard`` on Spark: each player's state after their last match (or
contest), ranked per (league, system), as :func:`duckrate.sql.mart_sql.leaderboard_sql` and
:func:`~duckrate.sql.mart_sql.contest_leaderboard_sql` compute them.

Only rows are picked (each player's row with the largest ``seq``, Spark's ``max_by``) and ranked
(``row_number`` by rating, descending, NULL last, ties by player name): the ratings are the replay's own,
bit for bit. The interval ranks and tiers come from :mod:`.interval_ranks`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from duckrate.evaluation.contest_marts import contest_leaderboard as python_contest_leaderboard
from duckrate.evaluation.leaderboard import leaderboard as python_leaderboard
from duckrate.evaluation.replay_rows import Z_95
from duckrate.spark.marts.expressions import checked_seq, number, text
from duckrate.spark.marts.interval_ranks import with_interval_ranks
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows

LEADERBOARD = mart_named("leaderboard")
CONTEST_LEADERBOARD = mart_named("contest_leaderboard")


def _last_state(appearances: DataFrame, count: str) -> DataFrame:
    """Per (league, system, player) of ``appearances`` (one row per player and match: seq, rating, sd,
    played_at): ``count`` = their rows, and rating, sd and played_at of the row with the largest seq."""
    return (
        appearances.groupBy("league", "system", "player")
        .agg(
            F.count(F.lit(1)).alias(count),
            F.max_by(F.struct("rating", "sd", "played_at"), "seq").alias("last"),
        )
        .select("league", "system", "player", count, "last.*")
    )


def _ranked(players: DataFrame, count: str) -> DataFrame:
    """The leaderboard of ``players``: rank 1 = highest rating per (league, system), NULL last, ties by player
    name; rating ∓ z·sd; the interval ranks; in the macro's order."""
    by_rating = Window.partitionBy("league", "system").orderBy(
        F.col("rating").desc_nulls_last(), F.col("player").asc_nulls_last()
    )
    z = F.lit(Z_95)
    ranked = players.select(
        "league",
        "system",
        "player",
        F.row_number().over(by_rating).cast("bigint").alias("rank"),
        "rating",
        "sd",
        (F.col("rating") - z * F.col("sd")).alias("lower"),
        (F.col("rating") + z * F.col("sd")).alias("upper"),
        count,
        F.col("played_at").alias("last_played_at"),
    )
    return with_interval_ranks(ranked)


def leaderboard(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``leaderboard`` macro over a Spark DataFrame of replay rows: per (league, system, player) the
    rating and sd after their last match (largest ``seq``), rank, 95% interval (rating ∓ 1.96·sd), games,
    ``last_played_at`` (in ``played_at``'s own type), ``rank_upper``, ``rank_lower`` and ``tier``.
    ``system`` labels rows without a system."""
    params = mart_parameters(LEADERBOARD, params)
    source = replay_rows(rows, LEADERBOARD, system, python_leaderboard, params)
    matches = source.select(
        "league",
        "system",
        checked_seq(LEADERBOARD).alias("seq"),
        "played_at",
        *(text(f"player_{side}").alias(f"player_{side}") for side in "ab"),
        *(number(f"{kind}_{side}_after").alias(f"{kind}_{side}_after") for kind in ("rating", "sd") for side in "ab"),
    )
    sides = [
        matches.select(
            "league",
            "system",
            F.col(f"player_{side}").alias("player"),
            "seq",
            F.col(f"rating_{side}_after").alias("rating"),
            F.col(f"sd_{side}_after").alias("sd"),
            "played_at",
        )
        for side in "ab"
    ]
    return _ranked(_last_state(sides[0].unionByName(sides[1]), "games"), "games")


def contest_leaderboard(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``contest_leaderboard`` macro over a Spark DataFrame of contest replay rows: as :func:`leaderboard`,
    from each player's ``rating_after``/``sd_after`` of their contest with the largest ``seq``; ``contests``
    = contests played."""
    params = mart_parameters(CONTEST_LEADERBOARD, params)
    source = replay_rows(rows, CONTEST_LEADERBOARD, system, python_contest_leaderboard, params)
    appearances = source.select(
        "league",
        "system",
        text("player").alias("player"),
        checked_seq(CONTEST_LEADERBOARD).alias("seq"),
        number("rating_after").alias("rating"),
        number("sd_after").alias("sd"),
        "played_at",
    )
    return _ranked(_last_state(appearances, "contests"), "contests")
