"""The oracles of ``team_leaderboard`` and ``team_match_forecasts``, in Polars, independent of the engines' SQL."""

from __future__ import annotations

import math
from fractions import Fraction

import polars as pl

from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, with_interval_ranks
from duckrate.evaluation.replay_rows import GROUP_KEYS, Z_95

TEAM_LEADERBOARD_COLUMNS = (
    "league",
    "system",
    "player",
    "rank",
    "rating",
    "sd",
    "ordinal",
    "lower",
    "upper",
    "matches",
    "last_played_at",
    *INTERVAL_RANK_COLUMNS,
)


def _with_keys(replay: pl.DataFrame) -> pl.DataFrame:
    if "system" not in replay.columns:
        replay = replay.with_columns(pl.lit(None, dtype=pl.Utf8).alias("system"))
    return replay.with_columns(pl.col("league").cast(pl.Utf8), pl.col("system").cast(pl.Utf8))


def team_leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Each player's rating and sd after their last match (largest seq), ordinal = rating - 3 sd, ranked by rating
    (ties by player name) per (league, system), with the interval ranks."""
    replay = _with_keys(replay)
    keys = [*GROUP_KEYS, "player"]
    last = (
        replay.sort([*keys, "seq"])
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("rating_after").last().alias("rating"),
            pl.col("sd_after").last().alias("sd"),
            pl.len().cast(pl.Int64).alias("matches"),
            pl.col("played_at").last().alias("last_played_at"),
        )
    )
    ranked = last.sort(
        [*GROUP_KEYS, "rating", "player"],
        descending=[False, False, True, False],
        nulls_last=[False, False, True, False],
    ).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(GROUP_KEYS).alias("rank"),
        (pl.col("rating") - 3.0 * pl.col("sd")).alias("ordinal"),
        (pl.col("rating") - Z_95 * pl.col("sd")).alias("lower"),
        (pl.col("rating") + Z_95 * pl.col("sd")).alias("upper"),
    )
    return with_interval_ranks(ranked, list(GROUP_KEYS)).select(TEAM_LEADERBOARD_COLUMNS)


def _exact_sum(values) -> float:
    return float(sum((Fraction(v) for v in values), Fraction(0)))


def team_match_forecasts(replay: pl.DataFrame) -> pl.DataFrame:
    """Per two-team match: team A (first key as text) against B, score 1/½/0 by place, expected = p_A + ½ (1 - p_A
    - p_B) clipped to [0, 1], summed ratings and root summed variances before the match."""
    replay = _with_keys(replay).with_columns(pl.col("team").cast(pl.Utf8))
    rows = []
    for (league, system, seq), match in replay.group_by([*GROUP_KEYS, "seq"], maintain_order=True):
        teams = sorted(match["team"].unique().to_list())
        if len(teams) != 2:
            continue
        a, b = (match.filter(pl.col("team") == team) for team in teams)
        place_a, place_b = a["rank"][0], b["rank"][0]
        p_a, p_b = a["p_team_win"][0], b["p_team_win"][0]
        rows.append(
            {
                "league": league,
                "system": system,
                "seq": seq,
                "player_a": teams[0],
                "player_b": teams[1],
                "score_a": 1.0 if place_a < place_b else 0.0 if place_a > place_b else 0.5,
                "expected_a": min(max(p_a + 0.5 * (1.0 - p_a - p_b), 0.0), 1.0),
                "rating_a_before": _exact_sum(a["rating_before"]),
                "rating_b_before": _exact_sum(b["rating_before"]),
                "sd_a_before": math.sqrt(_exact_sum(a["sd_before"] * a["sd_before"])),
                "sd_b_before": math.sqrt(_exact_sum(b["sd_before"] * b["sd_before"])),
            }
        )
    return pl.DataFrame(rows)
