"""Ranks people can trust: the best and worst rank consistent with each player's interval, and tiers.

For the players of one (league, system) with ratings and intervals [lower, upper] (a player without an
interval counts as the point [rating, rating])::

    rank_upper_i = 1 + #{j : lower_j > upper_i}      the best rank i can hold: only players whose whole
                                                     interval lies above i's are surely ahead (LMArena's
                                                     "rank (UB)")
    rank_lower_i = n - #{j : upper_j < lower_i}      the worst rank: only players whose whole interval lies
                                                     below i's are surely behind

so rank_upper <= rank <= rank_lower, and a player whose interval overlaps nobody else's has both equal to
its rank. Tiers: in rating order (the leaderboard's rank), tier 1 starts with the first player; a player
whose upper bound is below the lower bound of its tier's first player starts the next tier. Every player of
a tier has an interval overlapping that of the tier's first (statistically tied with the tier's leader).
O(n log n) per group.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.jit import kernel

INTERVAL_RANK_COLUMNS = ("rank_upper", "rank_lower", "tier")


@kernel
def _tiers(lower, upper):
    n = lower.shape[0]
    tier = np.empty(n, dtype=np.int64)
    current = 0
    anchor_lower = np.inf
    for k in range(n):
        if k == 0 or upper[k] < anchor_lower:
            current += 1
            anchor_lower = lower[k]
        tier[k] = current
    return tier


def interval_ranks(rating, lower, upper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rank_upper, rank_lower, tier)`` of one group's players given in rank order (best first; players
    without a rating, NaN, last: they rank after every rated player and form the last tier)."""
    rating = np.asarray(rating, dtype=np.float64)
    lower = np.where(np.isnan(np.asarray(lower, dtype=np.float64)), rating, lower)
    upper = np.where(np.isnan(np.asarray(upper, dtype=np.float64)), rating, upper)
    n = rating.shape[0]
    rated = ~np.isnan(rating)
    n_rated = int(rated.sum())
    rank_upper = np.full(n, n_rated + 1, dtype=np.int64)
    rank_lower = np.full(n, n, dtype=np.int64)
    rank_upper[rated] = 1 + n_rated - np.searchsorted(np.sort(lower[rated]), upper[rated], side="right")
    rank_lower[rated] = n_rated - np.searchsorted(np.sort(upper[rated]), lower[rated], side="left")
    tier = _tiers(lower[rated], upper[rated])
    last = (tier[-1] if n_rated else 0) + 1
    return rank_upper, rank_lower, np.concatenate([tier, np.full(n - n_rated, last, dtype=np.int64)])


def with_interval_ranks(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``frame`` (sorted by ``keys`` then rank, with ``rating``, ``lower``, ``upper``) with the columns
    :data:`INTERVAL_RANK_COLUMNS` appended, computed per group of ``keys``."""
    if frame.height == 0:
        return frame.with_columns(pl.lit(None, dtype=pl.Int64).alias(name) for name in INTERVAL_RANK_COLUMNS)
    columns = {name: np.empty(frame.height, dtype=np.int64) for name in INTERVAL_RANK_COLUMNS}
    starts = (
        frame.with_row_index("_row")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("_row").first().alias("start"), pl.len().alias("size"))
    )
    rating = frame["rating"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    lower = frame["lower"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    upper = frame["upper"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    for start, size in zip(starts["start"].to_list(), starts["size"].to_list()):
        part = slice(start, start + size)
        for name, values in zip(INTERVAL_RANK_COLUMNS, interval_ranks(rating[part], lower[part], upper[part])):
            columns[name][part] = values
    return frame.with_columns(pl.Series(name, values) for name, values in columns.items())
