"""Marts over a contest replay (one row per contest and player, as written by ``elo_mmr``): the final
leaderboard and the predictive metrics of Ebtekar & Liu, Section 6.2.

A contest replay has ``league``, ``seq`` (the contest's 1-based position in its league), ``contest_id``,
``played_at``, ``player``, ``rank``, ``rating_before``, ``rating_after``, ``sd_after`` and optionally
``system``; its row order carries no meaning.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate._numba import kernel
from duckrate.errors import DuckrateInputError
from duckrate.evaluation._replay_frame import GROUP_KEYS, Z_95, require_columns
from duckrate.parameters import Parameter

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
)
CONTEST_METRICS_COLUMNS = ("league", "system", "pair_inversion", "rank_deviation", "n")


def _with_keys(replay: pl.DataFrame) -> pl.DataFrame:
    if "system" not in replay.columns:
        replay = replay.with_columns(pl.lit(None, dtype=pl.Utf8).alias("system"))
    return replay.with_columns(pl.col("league").cast(pl.Utf8), pl.col("system").cast(pl.Utf8))


def contest_leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Every player's rating after their last contest, ranked per ``(league, system)``.

    Returns
    -------
    DataFrame ``league, system, player, rank, rating, sd, lower, upper, contests, last_played_at``:
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
    return ranked.select(CONTEST_LEADERBOARD_COLUMNS)


@kernel
def contest_pair_metrics(contest_start, rating, rank, included, pair_inversion, rank_deviation):
    """Per row (NaN where not ``included`` or alone in its contest), Section 6.2:

    * pair inversion: the share of the other participants j for which the prior ratings predicted the
      pair right, i.e. the higher-rated of the two finished ahead or tied (equal ratings: a tie in rank
      counts 1, anything else ½);
    * rank deviation: |actual place - predicted place| / (|P| - 1), places taken as ranges (tied ranks
      span a range of places, equal ratings a range of predicted places) and the distance between the
      two ranges used, so a tie is read at the place nearest the prediction.
    """
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        stop = contest_start[c + 1]
        n = stop - first
        for i in range(first, stop):
            if not included[i] or n < 2:
                pair_inversion[i] = np.nan
                rank_deviation[i] = np.nan
                continue
            correct = 0.0
            higher = 0
            same_rating = 0
            ahead = 0
            same_rank = 0
            for j in range(first, stop):
                if rating[j] > rating[i]:
                    higher += 1
                elif rating[j] == rating[i]:
                    same_rating += 1
                if rank[j] < rank[i]:
                    ahead += 1
                elif rank[j] == rank[i]:
                    same_rank += 1
                if j == i:
                    continue
                if rating[i] > rating[j]:
                    correct += 1.0 if rank[i] <= rank[j] else 0.0
                elif rating[i] < rating[j]:
                    correct += 1.0 if rank[j] <= rank[i] else 0.0
                else:
                    correct += 1.0 if rank[i] == rank[j] else 0.5
            pair_inversion[i] = correct / (n - 1)
            predicted_low = higher + 1
            predicted_high = higher + same_rating
            actual_low = ahead + 1
            actual_high = ahead + same_rank
            gap = 0
            if actual_high < predicted_low:
                gap = predicted_low - actual_high
            elif predicted_high < actual_low:
                gap = actual_low - predicted_high
            rank_deviation[i] = gap / (n - 1)


MIN_CONTESTS = Parameter(
    "min_contests", 5, "an integer number of contests >= 0 (paper: 5)", lambda v: v >= 0, integer=True
)
CONTEST_WARMUP = Parameter(
    "warmup", 0.1, "a share in [0, 1) of each league's contests (paper: 10%)", lambda v: 0 <= v < 1
)


def contest_metrics(
    replay: pl.DataFrame, min_contests: int = MIN_CONTESTS.default, warmup: float = CONTEST_WARMUP.default
) -> pl.DataFrame:
    """Pair inversion and rank deviation (Ebtekar & Liu, Section 6.2) of the prior ratings, per
    ``(league, system)``, averaged over the (contest, player) rows that count.

    Parameters
    ----------
    replay : contest replay with ``league``, ``seq``, ``player``, ``rank``, ``rating_before`` (optional ``system``).
    min_contests : only players with at least this many contests in the whole replay count (paper: 5);
        their opponents are every participant.
    warmup : the first ``floor(warmup · number of contests)`` contests of each league count for nothing
        (paper: 10%).

    Returns
    -------
    DataFrame ``league, system, pair_inversion, rank_deviation, n``: both metrics as fractions in [0, 1]
    (the paper prints percentages; higher pair inversion and lower rank deviation are better), n the
    number of (contest, player) rows averaged.
    """
    require_columns(replay, ("league", "seq", "player", "rank", "rating_before"), caller="contest_metrics")
    if not (0.0 <= warmup < 1.0) or math.isnan(warmup):
        raise DuckrateInputError(f"contest_metrics: expected warmup in [0, 1), got {warmup}")
    replay = _with_keys(replay)
    frame = (
        replay.select(
            *GROUP_KEYS, "seq", "player", pl.col("rank").cast(pl.Int64), pl.col("rating_before").cast(pl.Float64)
        )
        .with_columns(
            pl.len().over([*GROUP_KEYS, "player"]).alias("played"),
            pl.col("seq").max().over(GROUP_KEYS).alias("n_contests"),
        )
        .with_columns(
            ((pl.col("played") >= min_contests) & (pl.col("seq") > (pl.col("n_contests") * warmup).floor())).alias(
                "included"
            )
        )
        .sort([*GROUP_KEYS, "seq", "rank", "player"], nulls_last=False)
    )
    if frame.height == 0:
        return pl.DataFrame(
            schema={
                "league": pl.Utf8,
                "system": pl.Utf8,
                "pair_inversion": pl.Float64,
                "rank_deviation": pl.Float64,
                "n": pl.Int64,
            }
        )
    contest = frame.select(pl.struct(*GROUP_KEYS, "seq").rle_id()).to_series().to_numpy()
    new = np.ones(frame.height, dtype=np.bool_)
    new[1:] = contest[1:] != contest[:-1]
    starts = np.append(np.flatnonzero(new), frame.height).astype(np.int64)
    pair = np.empty(frame.height)
    deviation = np.empty(frame.height)
    contest_pair_metrics(
        starts,
        frame["rating_before"].to_numpy().copy(),
        frame["rank"].to_numpy().copy(),
        frame["included"].to_numpy().copy(),
        pair,
        deviation,
    )
    scored = frame.with_columns(pl.Series("pair_inversion", pair), pl.Series("rank_deviation", deviation))
    return (
        scored.filter(pl.col("pair_inversion").is_not_nan())
        .group_by(GROUP_KEYS)
        .agg(pl.col("pair_inversion").mean(), pl.col("rank_deviation").mean(), pl.len().cast(pl.Int64).alias("n"))
        .sort(GROUP_KEYS, nulls_last=False)
        .select(CONTEST_METRICS_COLUMNS)
    )
