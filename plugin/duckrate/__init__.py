"""duckrate: rating systems (Elo, Glicko, TrueSkill, Elo-MMR, Bradley-Terry) inside DuckDB and dbt.

Python: ``duckrate.elo(matches_df, k=32)`` etc. return Polars DataFrames; ``duckrate.leaderboard``,
``calibration_bins``, ``calibration_summary``, ``loss_curve`` and ``loss_by_gap`` turn any replay into the marts; ``win_probability``
and ``win_matrix`` forecast games between rated players; ``team_leaderboard``, ``predict_win``, ``predict_draw``,
``predict_rank``, ``match_quality`` and ``balance_teams`` do the same for team matches.
SQL: ``duckrate.register(con)`` then ``SELECT * FROM elo_replay('matches', k := 32)``.
"""

from duckrate import evaluation
from duckrate.core.errors import DuckrateInputError
from duckrate.core.registry import SYSTEMS
from duckrate.evaluation.contest_marts import contest_metrics
from duckrate.evaluation.team_metrics import team_metrics
from duckrate.evaluation.team_predictions import balance_teams, match_quality, predict_draw, predict_rank, predict_win
from duckrate.evaluation.win_probability import win_matrix, win_probability
from duckrate.fits import bt_fit, bt_lr_test, ttt_fit, ttt_team_fit, whr_fit
from duckrate.sql.mart_functions import (
    calibration_bins,
    calibration_summary,
    contest_leaderboard,
    leaderboard,
    loss_by_gap,
    loss_curve,
    team_leaderboard,
    team_match_forecasts,
)
from duckrate.sql.registry import register
from duckrate.systems.chunks import DEFAULT_CHUNK_ROWS
from duckrate.systems.replay_by_name import RebuildRequired, replay_state, replay_with_state
from duckrate.tuning import tune

# isort: split
# generated (system functions) by `python -m duckrate.cli generate` from the registry: do not edit
from duckrate.fits import (
    ttt,
    whr,
)
from duckrate.systems import (
    bar,
    bradley_terry_full,
    bradley_terry_part,
    chance,
    codeforces,
    elo,
    elo2k,
    elo_mmr,
    glicko,
    glicko2,
    glicko_contest,
    pairwise,
    plackett_luce,
    thurstone_mosteller_full,
    thurstone_mosteller_part,
    topcoder,
    trueskill,
    trueskill_contest,
    trueskill_team,
    trueskill_teams,
)

# end generated

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "SYSTEMS",
    "DuckrateInputError",
    "RebuildRequired",
    "balance_teams",
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
    "match_quality",
    "predict_draw",
    "predict_rank",
    "predict_win",
    "register",
    "replay_state",
    "replay_with_state",
    "team_leaderboard",
    "team_match_forecasts",
    "team_metrics",
    "ttt_fit",
    "ttt_team_fit",
    "tune",
    "whr_fit",
    "win_matrix",
    "win_probability",
]
# generated (their names) by `python -m duckrate.cli generate` from the registry: do not edit
__all__ += [
    "bar",
    "bradley_terry_full",
    "bradley_terry_part",
    "chance",
    "codeforces",
    "elo",
    "elo2k",
    "elo_mmr",
    "glicko",
    "glicko2",
    "glicko_contest",
    "pairwise",
    "plackett_luce",
    "thurstone_mosteller_full",
    "thurstone_mosteller_part",
    "topcoder",
    "trueskill",
    "trueskill_contest",
    "trueskill_team",
    "trueskill_teams",
    "ttt",
    "whr",
]
# end generated
__version__ = "0.1.0"
