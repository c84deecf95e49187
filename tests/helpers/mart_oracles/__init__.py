"""The marts' oracles: the former Polars implementations, independent of the engines' one SQL definition
(:mod:`duckrate.marts`), which the tests compare the DuckDB macros, the Python API and Spark against."""

from helpers.mart_oracles.calibration import calibration_bins, calibration_summary
from helpers.mart_oracles.contest_leaderboard import contest_leaderboard
from helpers.mart_oracles.leaderboard import leaderboard
from helpers.mart_oracles.loss_by_gap import loss_by_gap
from helpers.mart_oracles.loss_curve import loss_curve
from helpers.mart_oracles.team_marts import team_leaderboard, team_match_forecasts

__all__ = [
    "calibration_bins",
    "calibration_summary",
    "contest_leaderboard",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
    "team_leaderboard",
    "team_match_forecasts",
]
