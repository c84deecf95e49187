"""What every contest rating system provides: the interface the SQL macros, the dbt models and the Python
API are generated from (in the spirit of the Elo-MMR reference implementation's ``RatingSystem``, whose
``round_update`` rates one contest's standings).

A contest system is registered in :data:`duckrate.systems.CONTEST_SYSTEMS` as a :class:`ContestSystem`:
its name and parameters (a :class:`~duckrate.parameters.Signature`), and three functions over a
``contest_results`` table (``contest_id``, ``played_at``, ``player``, ``rank``, optional ``league`` and
``weight``) given as Arrow columns:

- ``replay(columns, priors, params, table, state, want_state)`` rates the contests in (played_at,
  contest_id) order, continuing a saved ``state`` table when given, and returns ``(prepared, computed,
  state)``: the computed columns (:data:`COMPUTED_COLUMNS`) by input row and, with ``want_state``, the
  state table after these contests;
- ``resume_problem(columns, params, state, table)`` says why ``state`` cannot be continued with these
  contests (None when it can), without rating them;
- ``with_state(results, state, priors, chunk_size, want_state, **params)``, the Python API over a Polars
  frame: ``(rows, state)``, in chunks of whole contests.

Every system returns the same columns (:data:`OUTPUT_COLUMNS`), so the contest marts read any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..parameters import Signature

# Columns of one contest replay row (one per contest and participant), in the contract's order.
OUTPUT_COLUMNS = (
    "league",
    "contest_id",
    "played_at",
    "player",
    "rank",
    "n_players",
    "performance",
    "rating_before",
    "sd_before",
    "rating_after",
    "sd_after",
    "seq",
)
# The columns the system computes (the rest come from the input table).
COMPUTED_COLUMNS = ("n_players", "performance", "rating_before", "sd_before", "rating_after", "sd_after", "seq")
PASSTHROUGH_COLUMNS = tuple(name for name in OUTPUT_COLUMNS if name not in COMPUTED_COLUMNS)
ROW_ORDER = ["league", "seq", "rank", "player"]


@dataclass(frozen=True, kw_only=True)
class ContestSystem(Signature):
    """A rating system over ranked contests (see the module docstring for the three functions)."""

    replay: Callable
    resume_problem: Callable
    with_state: Callable
