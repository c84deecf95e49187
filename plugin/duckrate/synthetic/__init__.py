"""Deterministic synthetic data for duckrate: head-to-head matches, ranked contests and team matches.

Everything here is reproducible bit for bit: all randomness comes from one
``numpy.random.Generator(numpy.random.PCG64(seed))`` per call, drawn in a fixed
order (and, for the matches and team matches, in fixed-size chunks), and the
sequential parts run single-threaded in numba. The output therefore depends only
on the arguments, never on the number of threads or on the machine's core count.

One module per job:

* :mod:`.matches` -- :func:`generate_matches`: two-player games (chess-like, with
  draws and a first-mover advantage) between players paired by a running Elo
  estimate.
* :mod:`.contests` -- :func:`generate_contests`: multi-player contests (many
  players, one ranking each) with competition-ranking ties.
* :mod:`.teams` -- :func:`generate_team_matches`: team matches (two or more
  teams of one or more players, fixed or drawn per match) in the ``team_results``
  shape, one row per player per match, with dense-ranked ties, partial play
  (``weight``) and optional scores; a million matches of 5v5 take seconds.
* :mod:`.win_matrices` -- :func:`win_matrix` and :func:`matrix_matches`: the
  known-truth win matrices (Bradley-Terry, SST and WST by row, diagonal or
  entry), drifting win rates and rating-window matchmaking of Tang, Wang & Jin,
  Appendix F.
* :mod:`.battles` -- :func:`generate_battles`: arena-shaped battles
  (LMArena-like): a static Bradley-Terry truth with style covariates, ties,
  users with correlated votes and non-uniform (adaptive) pair sampling; fully
  vectorised, so 10M rows take seconds. ``return_truth=True`` also returns the
  :class:`BattleTruth`.
* :mod:`.demo_seeds` -- :func:`write_demo_seeds`: the two small CSV seeds
  bundled with the dbt package (in a *raw* layout, with a few deliberately bad
  match rows).
* :mod:`.cli` -- :func:`main`, the command line (``python -m duckrate.synthetic``,
  ``duckrate synth``)::

    python -m duckrate.synthetic matches --n-matches 100000 --n-players 5000 --out m.parquet
    python -m duckrate.synthetic contests --n-contests 50 --players-per-contest 300 \\
        --pool-size 2000 --out c.csv
    python -m duckrate.synthetic battles --n-models 130 --n-battles 1500000 --out b.parquet
    python -m duckrate.synthetic teams --n-matches 100000 --pool-size 20000 \\
        --teams-per-match 2-8 --team-size 1-8 --scores --out t.parquet

* :mod:`.columns` -- what their frames share: player and league names, ``played_at``.
"""

from __future__ import annotations

from duckrate.synthetic.battles import BATTLE_COVARIATES, BattleTruth, generate_battles
from duckrate.synthetic.cli import main
from duckrate.synthetic.contests import generate_contests
from duckrate.synthetic.demo_seeds import DEMO_BAD_MATCH_ROWS, DEMO_DUPLICATED_GAME_ID, write_demo_seeds
from duckrate.synthetic.matches import generate_matches
from duckrate.synthetic.teams import generate_team_matches
from duckrate.synthetic.win_matrices import matrix_matches, win_matrix

__all__ = [
    "BATTLE_COVARIATES",
    "DEMO_BAD_MATCH_ROWS",
    "DEMO_DUPLICATED_GAME_ID",
    "BattleTruth",
    "generate_battles",
    "generate_contests",
    "generate_matches",
    "generate_team_matches",
    "main",
    "matrix_matches",
    "win_matrix",
    "write_demo_seeds",
]
