"""What every contest rating system provides: the interface the SQL macros, the dbt models and the Python
API are generated from (in the spirit of the Elo-MMR reference implementation's ``RatingSystem``, whose
``round_update`` rates one contest's standings).

A contest system is registered in :data:`duckrate.core.registry.SYSTEMS` as a :class:`ContestSystem`:
its name, summary and parameters (a :class:`~duckrate.core.parameters.Signature`) and one function, ``run``,
which rates prepared contests from a start::

    run(prepared, priors, params, start) -> (computed, player_values)

``prepared`` (:class:`~duckrate.core.contests.PreparedContests`) holds the contests in (played_at, contest_id)
order per league, ``start`` (:class:`.event_state.EventStart`) the saved player rows of the players in
them; ``computed`` are the columns the system computes (:data:`COMPUTED_COLUMNS` but ``seq``), by input
row, and ``player_values()`` (called only when the state is wanted) the player row of every state slot after
the contests, in slot order (a List(Float64) Series; its layout is the system's own). The interface builds the rest from ``run`` for every system alike:

- :meth:`ContestSystem.replay` over a ``contest_results`` table (``contest_id``, ``played_at``, ``player``,
  ``rank``, optional ``league`` and ``weight``) given as Arrow columns, continuing a saved state;
- :meth:`ContestSystem.resume_problem`: why a saved state cannot be continued with these contests;
- :meth:`ContestSystem.with_state`: the Python API over a Polars frame, in chunks of whole contests.

Every system returns the same columns (:data:`OUTPUT_COLUMNS`), so the contest marts read any of them.
Systems whose player row is a fixed list of numbers (rating, sd, ...) keep it with
:func:`.event_state.fixed_values` and :func:`.event_state.restore_fixed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa

from duckrate.core.contests import CONTEST_RESULTS, PreparedContests, prepare_contests
from duckrate.core.parameters import Parameter, positive
from duckrate.core.priors import check_positive_priors, initial_states
from duckrate.core.protocol import InputShape
from duckrate.core.registry import SYSTEMS
from duckrate.systems.event_replay import EventSystem
from duckrate.systems.event_state import fixed_values, restore_fixed

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
# A newcomer's rating and sd, the first two parameters of every contest system (or its ``priors`` row).
INITIAL = Parameter("initial", 1500.0, "a finite newcomer rating")
INITIAL_SD = Parameter("initial_sd", 350.0, "a finite newcomer sd > 0", positive)


@dataclass(frozen=True, kw_only=True)
class ContestSystem(EventSystem):
    """A rating system over ranked contests (:class:`~duckrate.core.protocol.System` over
    :data:`~duckrate.core.contests.CONTEST_RESULTS`): its signature and its ``run`` (see the module docstring;
    the run, the saved state and the chunks are :class:`.event_replay.EventSystem`'s)."""

    input: ClassVar[InputShape] = CONTEST_RESULTS
    prepare: ClassVar[Callable[[dict[str, pa.Array], str], PreparedContests]] = staticmethod(prepare_contests)
    output_columns: ClassVar[tuple[str, ...]] = OUTPUT_COLUMNS
    computed_columns: ClassVar[tuple[str, ...]] = COMPUTED_COLUMNS
    integer_columns: ClassVar[tuple[str, ...]] = ("n_players", "seq")
    row_order: ClassVar[list[str]] = ROW_ORDER


def registered() -> tuple[ContestSystem, ...]:
    """Every registered contest system: the registry's entries over
    :data:`~duckrate.core.contests.CONTEST_RESULTS`."""
    return tuple(system for system in SYSTEMS.of(CONTEST_RESULTS) if isinstance(system, ContestSystem))


def run_fixed_kernel(name, fields, prepared, priors, params, start, kernel, settings, adjust=None):
    """``run`` for a system whose saved player row is ``fields`` (rating, sd, then any counters, which start at
    0) and whose kernel is ``kernel(contests, players, settings, outputs)``: ``contests`` = (order, contest
    start, contest weight, state slot, rank), ``players`` the field arrays by slot (updated in place),
    ``outputs`` the computed columns but ``seq``. Newcomers start at ``params['initial']`` and
    ``params['initial_sd']`` or their ``priors`` row; ``adjust(players)`` may then amend the starting values."""
    if priors is not None:
        check_positive_priors(priors, ("sd",), name)
    starting = initial_states(prepared, priors, {"rating": params["initial"], "sd": params["initial_sd"]})
    players = (starting["rating"], starting["sd"], *(np.zeros(prepared.n_states) for _ in fields[2:]))
    restore_fixed(name, fields, players, start)
    if adjust is not None:
        adjust(players)
    out = {
        column: np.empty(prepared.n_rows, np.int64 if column == "n_players" else np.float64)
        for column in COMPUTED_COLUMNS
        if column != "seq"
    }
    contests = (prepared.order, prepared.contest_start, prepared.contest_weight, prepared.state, prepared.rank)
    kernel(contests, players, settings, tuple(out.values()))
    return out, lambda: fixed_values(players)
