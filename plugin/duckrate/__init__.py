"""duckrate: rating systems (Elo, Glicko, TrueSkill, Elo-MMR, Bradley-Terry) inside DuckDB and dbt.

Python: ``duckrate.elo(matches_df, k=32)`` etc. return Polars DataFrames; ``duckrate.leaderboard``,
``calibration_bins``, ``calibration_summary`` and ``loss_curve`` turn any replay into the marts.
SQL: ``duckrate.register(con)`` then ``SELECT * FROM elo_replay('matches', k := 32)``.
"""

from . import evaluation
from .errors import DuckrateInputError
from .evaluation import calibration_bins, calibration_summary, leaderboard, loss_curve
from .evaluation.contests import contest_leaderboard, contest_metrics
from .fits import bt_fit
from .fits.bt_lr_test import bt_lr_test
from .sql.registry import register
from .state import RebuildRequired, replay_state, replay_with_state
from .systems import chance, elo, elo2k, glicko, glicko2, pairwise, trueskill
from .systems._replay import DEFAULT_CHUNK_ROWS
from .systems.elo_mmr import elo_mmr

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "DuckrateInputError",
    "RebuildRequired",
    "bt_fit",
    "bt_lr_test",
    "calibration_bins",
    "calibration_summary",
    "chance",
    "contest_leaderboard",
    "contest_metrics",
    "elo",
    "elo2k",
    "elo_mmr",
    "evaluation",
    "glicko",
    "glicko2",
    "leaderboard",
    "loss_curve",
    "pairwise",
    "register",
    "replay_state",
    "replay_with_state",
    "trueskill",
]
__version__ = "0.1.0"
