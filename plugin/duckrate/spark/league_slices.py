"""Leagues too large for one task, cut into time slices that Spark replays one after another.

A league of more than ``chunk_size`` matches (or contest results) is cut by ``played_at`` into slices of
about ``chunk_size`` rows: a ``played_at``'s rows start the slice their first row falls in (``floor(rows
before that time / chunk_size)``) and stay together, so a slice holds at most ``chunk_size`` rows plus the
rest of one ``played_at``'s rows (a contest shares one ``played_at``, so it is never split). Slice ``k`` of
every large league replays in round ``k``, one task per league continuing the state its slice ``k - 1``
left, as :func:`duckrate.replay_with_state` replays chunks on one machine: the rows and the final state are
those of one replay over the whole league, bit for bit.

A rating period still open at a slice's end (Glicko, Glicko-2 with a period column) is re-rated with the
next slice, as a continuation from a saved state does: its matches (the rows whose ``seq`` is beyond the
league's saved ``seq``) go again with the next slice, and their rows of the earlier round are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

SLICE = "duckrate_slice"


def _on_league(left: DataFrame, right: DataFrame):
    """Equal leagues, NULL (a table without leagues) equal to NULL."""
    return left["league"].eqNullSafe(right["league"])


def _on_keys(frame: DataFrame, keys: DataFrame, key: str, how: str) -> DataFrame:
    """``frame`` joined ``how`` ('left_semi', 'left_anti') with ``keys`` on (``league``, ``key``)."""
    return frame.join(keys, _on_league(frame, keys) & (frame[key] == keys[key]), how)


@dataclass(frozen=True)
class LeagueSlices:
    """The rows of the leagues longer than a slice, tagged with their slice (checkpointed once), the other
    leagues' rows, and each large league's last slice."""

    small: DataFrame  # the rows of the leagues that replay whole, in round 0
    large: DataFrame  # the rows of the others, with SLICE
    last_slice: DataFrame  # (league, last slice) of each large league
    rounds: int  # the number of rounds: the largest league's slices

    def round_rows(self, k: int) -> DataFrame:
        """The rows round ``k`` replays (before the open periods carried from round ``k - 1``)."""
        sliced = self.large.filter(F.col(SLICE) == k).drop(SLICE)
        return self.small.unionByName(sliced) if k == 0 else sliced

    def continuing(self, k: int) -> DataFrame:
        """The leagues with a slice after ``k``: one ``league`` column."""
        return self.last_slice.filter(F.col("last_slice") > k).select("league")

    def of_continuing(self, frame: DataFrame, k: int, keep: bool = True) -> DataFrame:
        """``frame``'s rows of the leagues with a slice after ``k`` (``keep``), or of the others."""
        leagues = F.broadcast(self.continuing(k))
        return frame.join(leagues, _on_league(frame, leagues), "left_semi" if keep else "left_anti")

    def carried(self, open_keys: DataFrame, key: str) -> DataFrame:
        """The rows of the large leagues whose (``league``, ``key``) ``open_keys`` holds: an open period's."""
        return _on_keys(self.large, open_keys, key, "left_semi").drop(SLICE)


def league_slices(frame: DataFrame, chunk_size: int) -> LeagueSlices | None:
    """``frame`` cut into slices of about ``chunk_size`` rows per league, or None when every league has at
    most ``chunk_size`` rows (one round: each league one task)."""
    counts = frame.groupBy("league").agg(F.count(F.lit(1)).alias("duckrate_rows"))
    large_leagues = counts.filter(F.col("duckrate_rows") > chunk_size).select("league").collect()
    if not large_leagues:
        return None
    names = frame.sparkSession.createDataFrame([tuple(row) for row in large_leagues], "league string")
    leagues = F.broadcast(names)
    large = frame.join(leagues, _on_league(frame, leagues), "left_semi")
    small = frame.join(leagues, _on_league(frame, leagues), "left_anti")
    times = large.groupBy("league", "played_at").agg(F.count(F.lit(1)).alias("duckrate_rows"))
    before = Window.partitionBy("league").orderBy(F.col("played_at").asc_nulls_first())
    starts = times.select(
        F.col("league").alias("duckrate_league"),
        F.col("played_at").alias("duckrate_played_at"),
        F.floor(
            F.coalesce(F.sum("duckrate_rows").over(before.rowsBetween(Window.unboundedPreceding, -1)), F.lit(0))
            / F.lit(chunk_size)
        )
        .cast("long")
        .alias(SLICE),
    )
    on_time = large["league"].eqNullSafe(starts["duckrate_league"]) & large["played_at"].eqNullSafe(
        starts["duckrate_played_at"]
    )
    tagged = (
        large.join(starts, on_time, "inner").drop("duckrate_league", "duckrate_played_at").localCheckpoint(eager=True)
    )
    last_slice = tagged.groupBy("league").agg(F.max(SLICE).alias("last_slice")).localCheckpoint(eager=True)
    rounds = last_slice.agg(F.max("last_slice")).collect()[0][0] + 1
    return LeagueSlices(small=small, large=tagged, last_slice=last_slice, rounds=rounds)


def open_period_keys(rows: DataFrame, after: DataFrame, key: str) -> DataFrame:
    """(``league``, ``key``) of the replay ``rows`` whose ``seq`` is beyond their league's ``seq`` in the
    state ``after``: the matches of a rating period still open, which the next slice re-rates."""
    final = after.filter(F.col("kind") == "league").select(
        F.col("league").alias("duckrate_league"), F.col("seq").alias("duckrate_final_seq")
    )
    joined = rows.join(final, rows["league"].eqNullSafe(final["duckrate_league"]), "inner")
    return joined.filter(F.col("seq") > F.col("duckrate_final_seq")).select("league", key).distinct()


def without_keys(rows: DataFrame, keys: DataFrame, key: str) -> DataFrame:
    """``rows`` but those whose (``league``, ``key``) ``keys`` holds."""
    return _on_keys(rows, keys, key, "left_anti")
