"""duckrate on Apache Spark: the same replays, Bradley-Terry fits and tests over Spark DataFrames.

An optional extra (``pip install duckrate[spark]``: PySpark 4, which needs Java 17); ``import duckrate``
never imports it. Each league replays as one Spark task that calls the very functions the Python API and
the DuckDB macros run (:func:`duckrate.replay_with_state`), so rows and state are those of the DuckDB path
bit for bit; ``bt_fit`` sums games into per-pair statistics in Spark and solves on the driver;
``bt_lr_test`` runs each league's tests as one task, with the Python API.

- :func:`replay` / :func:`replay_with_state` / :func:`replay_state`: a rating system over a Spark
  DataFrame of canonical matches (or contest results), continuing a saved state (a Spark DataFrame) when
  given;
- :func:`bt_fit`: Bradley-Terry fits of every league;
- :func:`bt_lr_test`: the likelihood-ratio tests of Bradley-Terry (Tang, Wang & Jin) of every league;
- :func:`leaderboard`, :func:`calibration_bins`, :func:`calibration_summary`, :func:`loss_curve`,
  :func:`loss_by_gap`, :func:`contest_leaderboard`, :func:`contest_metrics` and :func:`team_leaderboard`: the marts over a Spark
  DataFrame of replay rows, equal to the DuckDB macros (:mod:`.marts`).

See docs/spark.md.
"""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ImportError as error:  # the extra is not installed
    raise ImportError("duckrate.spark needs PySpark (and Java 17): pip install 'duckrate[spark]'") from error

from duckrate.spark.bt_fit import bt_fit
from duckrate.spark.lr_test import bt_lr_test
from duckrate.spark.marts import (
    calibration_bins,
    calibration_summary,
    contest_leaderboard,
    contest_metrics,
    leaderboard,
    loss_by_gap,
    loss_curve,
    team_leaderboard,
    team_match_forecasts,
    team_metrics,
)
from duckrate.spark.replay import replay, replay_state, replay_with_state

__all__ = [
    "bt_fit",
    "bt_lr_test",
    "calibration_bins",
    "calibration_summary",
    "contest_leaderboard",
    "contest_metrics",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
    "replay",
    "replay_state",
    "replay_with_state",
    "team_leaderboard",
    "team_match_forecasts",
    "team_metrics",
]
