"""The marts over a Spark DataFrame of replay rows, from the same definitions as the DuckDB macros of the
same names (:mod:`duckrate.marts`).

Each takes the replay rows (the output of :func:`duckrate.spark.replay`, or any table with the columns of a
``<system>_replay`` macro), the macro's parameters with its defaults, and ``system`` for rows without one,
and returns a Spark DataFrame of the macro's rows and columns, in its column order and types. The rows come
in no particular order, as any Spark result's (the macro sorts them by league, NULL first, system, then
rank, bin, t or gap_bin): a global sort would cost a pass of its own. The SQL marts run their one query as
Spark SQL (:mod:`.queries`); the interval ranks of the leaderboards and ``contest_metrics`` run duckrate's
Python functions in one task per (league, system), as the macros run them in a UDF. Columns, types and
parameters are checked on the driver at the call (:mod:`.source`); values (a NULL or out-of-range
forecast) when Spark computes the result, as DuckDB checks them while it runs.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from duckrate.marts import mart_named
from duckrate.spark.marts.contest_metrics import run_computation
from duckrate.spark.marts.queries import run_query
from duckrate.spark.marts.source import replay_rows


def run_mart(name: str, rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The mart ``name`` over a Spark DataFrame of replay rows (``params``: the macro's parameters, its
    defaults from the registry); ``system`` labels rows without a system."""
    mart = mart_named(name)
    frame, values = replay_rows(rows, mart, system, params)
    return (run_computation if mart.query is None else run_query)(mart, frame, values)


def leaderboard(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``leaderboard`` macro: per (league, system, player) the rating and sd after their last match
    (largest ``seq``), rank, 95% interval (rating ∓ 1.96·sd), games, ``last_played_at`` (in ``played_at``'s
    own type), ``rank_upper``, ``rank_lower`` and ``tier``."""
    return run_mart("leaderboard", rows, system, **params)


def contest_leaderboard(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``contest_leaderboard`` macro over contest replay rows: as :func:`leaderboard`, from each player's
    ``rating_after``/``sd_after`` of their contest with the largest ``seq``; ``contests`` = contests played."""
    return run_mart("contest_leaderboard", rows, system, **params)


def team_leaderboard(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``team_leaderboard`` macro over team replay rows: as :func:`contest_leaderboard`, with ``ordinal``
    (rating - 3·sd) beside rating and sd; ``matches`` = matches played."""
    return run_mart("team_leaderboard", rows, system, **params)


def team_match_forecasts(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``team_match_forecasts`` macro over team replay rows: the two-team matches as two-player replay rows,
    which the calibration marts score."""
    return run_mart("team_match_forecasts", rows, system, **params)


def team_metrics(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``team_metrics`` macro over team replay rows (``warmup``)."""
    return run_mart("team_metrics", rows, system, **params)


def calibration_bins(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``calibration_bins`` macro (``bins``)."""
    return run_mart("calibration_bins", rows, system, **params)


def calibration_summary(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``calibration_summary`` macro (``min_games``, ``max_sd``: a number or a mapping from system to
    number, ``warmup``)."""
    return run_mart("calibration_summary", rows, system, **params)


def loss_curve(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``loss_curve`` macro (``points``)."""
    return run_mart("loss_curve", rows, system, **params)


def loss_by_gap(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``loss_by_gap`` macro (``bin_width``)."""
    return run_mart("loss_by_gap", rows, system, **params)


def contest_metrics(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``contest_metrics`` macro over contest replay rows (``min_contests``, ``warmup``, ``definition``,
    ``min_history``, ``top``)."""
    return run_mart("contest_metrics", rows, system, **params)


__all__ = [
    "calibration_bins",
    "calibration_summary",
    "contest_leaderboard",
    "contest_metrics",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
    "run_mart",
    "team_leaderboard",
    "team_match_forecasts",
    "team_metrics",
]
