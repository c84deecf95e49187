"""Evaluation of rating replays: leaderboards, calibration, loss curves and log loss by rating gap.

Every function takes a replay frame (one row per match, ordered by ``seq``
within each ``(league, system)``) and returns a small Polars table.
"""

from duckrate.evaluation.calibration import calibration_bins, calibration_summary
from duckrate.evaluation.leaderboard import leaderboard
from duckrate.evaluation.loss_by_gap import loss_by_gap
from duckrate.evaluation.loss_curve import loss_curve

__all__ = ["calibration_bins", "calibration_summary", "leaderboard", "loss_by_gap", "loss_curve"]
