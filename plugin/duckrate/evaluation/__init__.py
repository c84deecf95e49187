"""Evaluation of rating replays computed in Python: forecasts (``win_probability``, ``win_matrix``), the
contest metrics and the leaderboards' interval ranks. The SQL marts (leaderboards, calibration, loss
curves, log loss by rating gap) are :mod:`duckrate.marts`, run by an engine (``duckrate.leaderboard`` etc.
through DuckDB).
"""

from duckrate.evaluation.win_probability import win_matrix, win_probability

__all__ = ["win_matrix", "win_probability"]
