"""Evaluation of rating replays: leaderboards, calibration, loss curves and log loss by rating gap.

Every function takes a replay frame (one row per match, ordered by ``seq``
within each ``(league, system)``) and returns a small Polars table; ``win_probability``
and ``win_matrix`` also read leaderboards, ``bt_fit`` results and saved states.
"""

from duckrate.evaluation.calibration import calibration_bins, calibration_summary
from duckrate.evaluation.leaderboard import leaderboard
from duckrate.evaluation.loss_by_gap import loss_by_gap
from duckrate.evaluation.loss_curve import loss_curve
from duckrate.evaluation.win_probability import win_matrix, win_probability

__all__ = [
    "calibration_bins",
    "calibration_summary",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
    "win_matrix",
    "win_probability",
]
