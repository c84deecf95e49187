"""The oracle of ``leaderboard``, in Polars, independent of the engines' SQL: each player's state after
their last match."""

from __future__ import annotations

import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, with_interval_ranks
from duckrate.evaluation.replay_rows import GROUP_KEYS, Z_95, require_columns

LEADERBOARD_INPUT_COLUMNS: tuple[str, ...] = (
    "league",
    "system",
    "seq",
    "played_at",
    "player_a",
    "player_b",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
)
"""Replay columns that :func:`leaderboard` reads."""

LEADERBOARD_COLUMNS: tuple[str, ...] = (
    "league",
    "system",
    "player",
    "rank",
    "rating",
    "sd",
    "lower",
    "upper",
    "games",
    "last_played_at",
    *INTERVAL_RANK_COLUMNS,
)
"""Columns of the frame :func:`leaderboard` returns, in order."""


_ROW_BITS = 32
"""Low bits of the packed ``(seq, row)`` key that hold the row number."""

_MAX_SEQ = 2**31 - 1
"""Largest ``seq`` the packed key can hold without overflowing Int64."""


def _require_packable_seq(replay: pl.DataFrame) -> None:
    """Raise unless ``seq`` is non-null and in ``[1, 2**31 - 1]`` and the frame fits the key."""
    if replay.height >= 2**_ROW_BITS:
        raise DuckrateInputError(f"leaderboard: expected fewer than {2**_ROW_BITS} replay rows, got {replay.height}")
    stats = replay.select(
        pl.col("seq").null_count().alias("nulls"),
        pl.col("seq").min().alias("low"),
        pl.col("seq").max().alias("high"),
    ).row(0, named=True)
    if stats["nulls"]:
        raise DuckrateInputError(f"leaderboard: expected seq without nulls, found {stats['nulls']}")
    if stats["low"] is not None and (stats["low"] < 1 or stats["high"] > _MAX_SEQ):
        raise DuckrateInputError(
            f"leaderboard: expected seq to be 1-based replay positions in [1, {_MAX_SEQ}], "
            f"found values from {stats['low']} to {stats['high']}"
        )


def _last_match_per_player(replay: pl.DataFrame) -> pl.DataFrame:
    """Per ``(league, system, player)``: games, and row number and side of the last match.

    Each row gets the key ``seq * 2**32 + row``; since ``seq`` orders the
    matches of a ``(league, system)``, the largest key among a player's rows
    is their last match, and a plain ``max`` finds it (much faster than
    ``get(arg_max)``).  Each side is reduced on its own, then the two small
    per-side results are merged.
    """
    keyed = replay.lazy().select(
        *GROUP_KEYS,
        "player_a",
        "player_b",
        (pl.col("seq").cast(pl.Int64) * (2**_ROW_BITS) + pl.int_range(pl.len(), dtype=pl.Int64)).alias("last_key"),
    )
    per_side = pl.concat(
        [
            keyed.group_by(*GROUP_KEYS, pl.col(f"player_{side}").alias("player")).agg(
                pl.col("last_key").max(),
                pl.len().cast(pl.Int64).alias("games"),
                pl.lit(side).alias("last_side"),
            )
            for side in ("a", "b")
        ],
        how="vertical",
    )
    at_last_side = pl.col("last_key").arg_max()
    return (
        per_side.group_by(*GROUP_KEYS, "player")
        .agg(
            pl.col("last_key").max(),
            pl.col("last_side").get(at_last_side),
            pl.col("games").sum(),
        )
        .with_columns((pl.col("last_key") % (2**_ROW_BITS)).alias("last_row"))
        .drop("last_key")
        .collect(engine="in-memory")  # the streaming engine sums floats in a timing-dependent order
    )


def _last_state_per_player(replay: pl.DataFrame) -> pl.DataFrame:
    """Per ``(league, system, player)``: games and rating, sd, played_at after the last match."""
    last_match = _last_match_per_player(replay)
    last_rows = replay.select("played_at", "rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after")[
        last_match["last_row"]
    ]
    on_side_a = last_match["last_side"] == "a"
    state = last_rows.select(
        pl.when(on_side_a)
        .then(pl.col("rating_a_after"))
        .otherwise(pl.col("rating_b_after"))
        .cast(pl.Float64)
        .alias("rating"),
        pl.when(on_side_a).then(pl.col("sd_a_after")).otherwise(pl.col("sd_b_after")).cast(pl.Float64).alias("sd"),
        pl.col("played_at").alias("last_played_at"),
    )
    return pl.concat([last_match.select(*GROUP_KEYS, "player", "games"), state], how="horizontal")


def leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Rank every player by their rating after their last match.

    Parameters
    ----------
    replay : pl.DataFrame
        One row per match with at least the columns in
        ``LEADERBOARD_INPUT_COLUMNS``; row order does not matter, ``seq``
        orders the matches within each ``(league, system)``.  A null
        ``league`` is one unnamed league.

    Returns
    -------
    pl.DataFrame
        One row per ``(league, system, player)`` with columns
        ``league, system, player, rank, rating, sd, lower, upper, games,
        last_played_at``:

        - ``rating`` / ``sd``: the player's ``rating_*_after`` / ``sd_*_after``
          from the side they played in their match with the largest ``seq``;
        - ``lower`` / ``upper``: ``rating -/+ 1.959963984540054 * sd`` (a 95%
          normal interval), null when ``sd`` is null;
        - ``games``: number of matches the player played (Int64);
        - ``last_played_at``: ``played_at`` of that last match;
        - ``rank``: 1 for the highest rating within ``(league, system)``,
          ordinal, ties broken by player name ascending, so ranks run 1..n
          without gaps; null ratings rank last (Int64);
        - ``rank_upper`` / ``rank_lower`` / ``tier``: the best and worst rank
          consistent with the intervals, and the tier of statistically tied
          players (:mod:`duckrate.core.ranks`; a player without an sd
          counts as the point interval at its rating).

        Sorted by ``league`` (null first), ``system``, ``rank``.

    Raises
    ------
    ValueError
        If a required column is missing, or ``seq`` holds nulls or values
        outside ``[1, 2**31 - 1]``.

    Notes
    -----
    ``seq`` is assumed unique within each ``(league, system)``; with
    duplicates the "last" match among equal ``seq`` values is arbitrary.
    """
    require_columns(replay, LEADERBOARD_INPUT_COLUMNS, caller="leaderboard")
    _require_packable_seq(replay)
    per_player = _last_state_per_player(replay)
    ranked = per_player.sort(
        [*GROUP_KEYS, "rating", "player"],
        descending=[False, False, True, False],
        nulls_last=[False, False, True, False],
    ).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(GROUP_KEYS).alias("rank"),
        (pl.col("rating") - Z_95 * pl.col("sd")).alias("lower"),
        (pl.col("rating") + Z_95 * pl.col("sd")).alias("upper"),
    )
    return with_interval_ranks(ranked, list(GROUP_KEYS)).select(LEADERBOARD_COLUMNS)
