"""duckrate: rating systems (Elo, Glicko, TrueSkill, Elo-MMR, Bradley-Terry) inside DuckDB and dbt.

Python: ``duckrate.elo(matches_df, k=32)`` etc. return Polars DataFrames; ``duckrate.leaderboard``,
``calibration_bins``, ``calibration_summary``, ``loss_curve`` and ``loss_by_gap`` turn any replay into the marts; ``win_probability``
and ``win_matrix`` forecast games between rated players.
SQL: ``duckrate.register(con)`` then ``SELECT * FROM elo_replay('matches', k := 32)``.
"""

from duckrate import evaluation
from duckrate import systems as _systems
from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.contest_marts import contest_metrics
from duckrate.evaluation.win_probability import win_matrix, win_probability
from duckrate.fits import bt_fit
from duckrate.fits.bt_lr_test import bt_lr_test
from duckrate.registry import CONTEST_SYSTEMS, REPLAY_SYSTEMS
from duckrate.sql.mart_functions import (
    calibration_bins,
    calibration_summary,
    contest_leaderboard,
    leaderboard,
    loss_by_gap,
    loss_curve,
)
from duckrate.sql.registry import register
from duckrate.systems.replay_by_name import RebuildRequired, replay_state, replay_with_state
from duckrate.systems.two_player import DEFAULT_CHUNK_ROWS
from duckrate.tuning import tune

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "DuckrateInputError",
    "RebuildRequired",
    "bt_fit",
    "bt_lr_test",
    "calibration_bins",
    "calibration_summary",
    "contest_leaderboard",
    "contest_metrics",
    "evaluation",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
    "register",
    "replay_state",
    "replay_with_state",
    "tune",
    "win_matrix",
    "win_probability",
]
# duckrate.<system>(...): the Python function of every registered system, named as the system (each system's
# module defines it; systems/__init__.py imports it beside the registry entry).
SYSTEM_FUNCTIONS = {system.name: getattr(_systems, system.name) for system in (*REPLAY_SYSTEMS, *CONTEST_SYSTEMS)}
globals().update(SYSTEM_FUNCTIONS)
__all__ += sorted(SYSTEM_FUNCTIONS)
__version__ = "0.1.0"
