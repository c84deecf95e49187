"""duckrate: rating systems (Elo, Glicko, TrueSkill, Elo-MMR, Bradley-Terry) inside DuckDB and dbt.

Python: ``duckrate.elo(matches_df, k=32)`` etc. return Polars DataFrames; ``duckrate.leaderboard``,
``calibration_bins``, ``calibration_summary`` and ``loss_curve`` turn any replay into the marts.
SQL: ``duckrate.register(con)`` then ``SELECT * FROM elo_replay('matches', k := 32)``.
"""

from . import evaluation
from .errors import DuckrateInputError
from .evaluation import calibration_bins, calibration_summary, leaderboard, loss_curve
from .fits import bt_fit
from .sql.registry import register
from .systems import chance, elo, glicko, glicko2, trueskill

__all__ = [
    "DuckrateInputError",
    "bt_fit",
    "calibration_bins",
    "calibration_summary",
    "chance",
    "elo",
    "evaluation",
    "glicko",
    "glicko2",
    "leaderboard",
    "loss_curve",
    "register",
    "trueskill",
]
__version__ = "0.1.0"
