"""The oracle of ``contest_leaderboard``, in Polars, independent of the engines' SQL: every player's rating
after their last contest, ranked per ``(league, system)``."""

from __future__ import annotations

import polars as pl

from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, with_interval_ranks
from duckrate.evaluation.replay_rows import GROUP_KEYS, Z_95, require_columns

CONTEST_LEADERBOARD_COLUMNS = (
    "league",
    "system",
    "player",
    "rank",
    "rating",
    "sd",
    "lower",
    "upper",
    "contests",
    "last_played_at",
    *INTERVAL_RANK_COLUMNS,
)


def _with_keys(replay: pl.DataFrame) -> pl.DataFrame:
    if "system" not in replay.columns:
        replay = replay.with_columns(pl.lit(None, dtype=pl.Utf8).alias("system"))
    return replay.with_columns(pl.col("league").cast(pl.Utf8), pl.col("system").cast(pl.Utf8))


def contest_leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Every player's rating after their last contest, ranked per ``(league, system)``.

    Returns
    -------
    DataFrame ``league, system, player, rank, rating, sd, lower, upper, contests, last_played_at, rank_upper,
    rank_lower, tier`` (the last three: :mod:`duckrate.core.ranks`):
    rating/sd = ``rating_after``/``sd_after`` of the player's contest with the largest ``seq``; lower and
    upper = rating ∓ 1.96 sd; contests = number of contests played; rank 1 = highest rating (ties broken
    by player name), sorted by league (null first), system, rank.
    """
    require_columns(
        replay, ("league", "seq", "played_at", "player", "rating_after", "sd_after"), caller="contest_leaderboard"
    )
    replay = _with_keys(replay)
    keys = [*GROUP_KEYS, "player"]
    last = (
        replay.sort([*keys, "seq"])
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("rating_after").last().cast(pl.Float64).alias("rating"),
            pl.col("sd_after").last().cast(pl.Float64).alias("sd"),
            pl.len().cast(pl.Int64).alias("contests"),
            pl.col("played_at").last().alias("last_played_at"),
        )
    )
    ranked = last.sort(
        [*GROUP_KEYS, "rating", "player"],
        descending=[False, False, True, False],
        nulls_last=[False, False, True, False],
    ).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(GROUP_KEYS).alias("rank"),
        (pl.col("rating") - Z_95 * pl.col("sd")).alias("lower"),
        (pl.col("rating") + Z_95 * pl.col("sd")).alias("upper"),
    )
    return with_interval_ranks(ranked, list(GROUP_KEYS)).select(CONTEST_LEADERBOARD_COLUMNS)
