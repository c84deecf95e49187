"""What every sequential replay shares: its parameter list, its output columns, and the Polars wrapper.

A system module declares a :class:`ReplaySystem` (name, parameters with defaults and checks, and a
``run`` function from prepared matches to output arrays). The Python API and the SQL layer are both
built from that one declaration, so a parameter's default or check lives in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import MATCHES, PreparedMatches, columns_from_polars, prepare_matches
from duckrate.core.priors import prior_columns
from duckrate.core.protocol import InputShape, System
from duckrate.core.registry import SYSTEMS
from duckrate.systems.chunks import DEFAULT_CHUNK_ROWS, check_chunk_size, replay_in_chunks
from duckrate.systems.saved_state import (
    EndState,
    RebuildRequired,
    StartState,
    StateField,
    check_continuation,
    end_frame,
    fresh_start,
    params_json,
    start_from_state,
    state_frame,
    subset,
    used_slots,
    with_player_counts,
)

# Columns of one replay row, in the contract's order. The first seven come from the input table.
PASSTHROUGH_COLUMNS = ("league", "match_id", "played_at", "player_a", "player_b", "score_a")
COMPUTED_COLUMNS = (
    "seq",
    "expected_a",
    "rating_a_before",
    "rating_b_before",
    "sd_a_before",
    "sd_b_before",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
)
OUTPUT_COLUMNS = (
    "league",
    "seq",
    "match_id",
    "played_at",
    "player_a",
    "player_b",
    "score_a",
    "expected_a",
    "rating_a_before",
    "rating_b_before",
    "sd_a_before",
    "sd_b_before",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
)
SD_COLUMNS = ("sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after")


def new_outputs(n_rows: int, has_sd: bool = True) -> dict[str, np.ndarray | None]:
    """Uninitialised output arrays of a run, indexed by input row, for every computed column in order
    (``seq`` int64, the rest float64; the sd columns None without ``has_sd``). Kernels take them, in
    this order, as ``kernel_outputs(outputs)``."""
    return {
        name: None if not has_sd and name in SD_COLUMNS else np.empty(n_rows, np.int64 if name == "seq" else np.float64)
        for name in COMPUTED_COLUMNS
    }


def kernel_outputs(outputs: dict[str, np.ndarray | None]) -> tuple[np.ndarray, ...]:
    """The arrays of :func:`new_outputs` a kernel writes, in column order, as the one ``outputs`` argument of a
    replay kernel (which unpacks it)."""
    return tuple(values for values in outputs.values() if values is not None)


@dataclass(frozen=True, kw_only=True)
class ReplaySystem(System):
    """A rating system replayed over two-player matches in time order (:class:`~duckrate.core.protocol.System`
    over :data:`~duckrate.core.matches.MATCHES`): its signature, its ``run`` and its saved state.

    ``run(prepared, priors, params, start) -> (outputs, end)`` rates prepared matches from a start state:
    ``outputs`` are the computed columns by input row (:func:`new_outputs`), ``end`` the state after them."""

    input: ClassVar[InputShape] = MATCHES
    weighted: bool = True  # False: a match weight other than 1 is refused (check_matches says so, naming the row)
    run: Callable[
        [PreparedMatches, dict[str, pa.Array] | None, dict, StartState], tuple[dict[str, np.ndarray | None], EndState]
    ]
    # Checks the matches against the system's own model (e.g. TrueSkill's win/draw/loss) with the raw
    # columns at hand, so errors can name the match_id: (columns, prepared, table) -> None or raise.
    check_matches: Callable[[dict, PreparedMatches, str], None] = field(default=lambda columns, prepared, table: None)
    # Checks the matches against the model under the resolved parameters (e.g. TrueSkill Through Time: a draw
    # needs p_draw > 0; a period that fits played_at's type), with the raw columns at hand to name the match
    # and the column: (columns, prepared, table, params) -> None or raise.
    check_model: Callable[[dict, PreparedMatches, str, dict], None] = field(
        default=lambda columns, prepared, table, params: None
    )
    # Saved state (see saved_state.py): the per-player, per-league and per-pair fields a run starts from and
    # leaves, ``periods`` (prepared, params) -> int64 period per row or None for the periodic systems, and
    # ``check_resume`` (prepared, params, start) -> a reason to replay from scratch, or None.
    player_state: tuple[StateField, ...] = ()
    league_state: tuple[StateField, ...] = ()
    pair_state: tuple[StateField, ...] = ()
    periods: Callable[[PreparedMatches, dict], np.ndarray | None] | None = None
    check_resume: Callable[[PreparedMatches, dict, StartState], str | None] = field(
        default=lambda prepared, params, start: None
    )

    def replay(self, columns, priors, params, table=None, state=None, want_state=False, partial_state=False):
        """:func:`run_replay` (the SQL macros pass ``partial_state``)."""
        return run_replay(self, columns, priors, params, table or MATCHES.name, state, want_state, partial_state)

    def resume_problem(self, columns, params, state, table=None, partial_state=False):
        """:func:`resume_problem`."""
        return resume_problem(self, columns, params, state, table or MATCHES.name, partial_state)

    def with_state(self, frame, state=None, priors=None, chunk_size=None, want_state=True, **params):
        """:func:`replay_with_state`."""
        return replay_with_state(self, frame, priors, state, chunk_size, want_state, **params)

    def forecasts(self, prepared: PreparedMatches, priors, params: dict) -> np.ndarray:
        """:func:`replay_forecasts` (tuning)."""
        return replay_forecasts(self, prepared, priors, params)


def registered() -> tuple[ReplaySystem, ...]:
    """Every registered two-player system: the registry's entries over :data:`~duckrate.core.matches.MATCHES`."""
    return tuple(system for system in SYSTEMS.of(MATCHES) if isinstance(system, ReplaySystem))


def run_replay(
    system: ReplaySystem,
    columns: dict[str, pa.Array],
    priors,
    params: dict,
    table: str = "matches",
    state=None,
    want_state: bool = False,
    partial_state: bool = False,
) -> tuple[PreparedMatches, dict[str, np.ndarray | None], pl.DataFrame | None]:
    """Replay ``system`` over ``columns``, continuing from a saved ``state`` table when given.

    Returns the prepared matches, the output arrays by input row, and (with ``want_state``) the state
    table after these matches (see :mod:`._state`). Raises :class:`._state.RebuildRequired` when the state
    cannot be continued with these matches.

    ``partial_state`` (the SQL macros): ``state`` holds only the rows these matches read (every league
    row, its ``n_players`` counted over the whole saved state; the player and pair rows of the players and
    pairs in ``columns``), and the state returned only the rows the run writes, unordered and with
    ``n_players`` left to the caller, which merges it into the whole saved state.
    """
    params = system.resolve(params)
    prepared = prepare_matches(columns, table)
    system.check_matches(columns, prepared, table)
    system.check_model(columns, prepared, table, params)
    priors = prior_columns(priors)
    periods = system.periods(prepared, params) if system.periods is not None else None
    old = _old_state(state, partial_state)
    if old is not None and old.height:
        start = _continuation_start(system, columns, prepared, params, periods, old)
    else:
        start = fresh_start(prepared, system.player_state, system.league_state, params)
    outputs, end, final_order, open_rows, saved = _run_from(system, prepared, priors, params, start, periods)
    if not want_state:
        return prepared, outputs, None
    league_rows = _league_rows(system, columns, prepared, params, start, final_order, periods, open_rows)
    new_state = end_frame(system, prepared, params, end, saved, league_rows, old, ordered=not partial_state)
    return prepared, outputs, new_state if partial_state else with_player_counts(new_state)


def _run_from(system, prepared, priors, params: dict, start: StartState, periods):
    """Run ``system`` over ``prepared`` from ``start``: ``(outputs, end, final_order, open_rows, saved)``.
    With ``periods`` (the periodic systems) the league's last period stays open: the state is saved at its
    start (``end``), then it is rated too."""
    if periods is None:
        outputs, end = system.run(prepared, priors, params, start)
        return outputs, end, prepared.order, None, start.known | used_slots(prepared)
    last = np.full(prepared.n_leagues, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last, prepared.league, periods)
    open_rows = periods == last[prepared.league]
    first = subset(prepared, ~open_rows)
    outputs, end = system.run(first, priors, params, start)
    saved = start.known | used_slots(prepared, first.order)
    rest = StartState(
        known=saved,
        player={name: np.array(values) for name, values in end.player.items()},
        league_known=start.league_known | (np.bincount(prepared.league[first.order], minlength=prepared.n_leagues) > 0),
        league={name: np.array(values) for name, values in end.league.items()},
        seq=start.seq + np.bincount(prepared.league[first.order], minlength=prepared.n_leagues),
        n_players=start.n_players,
        saved_players=start.saved_players,
        pairs=end.pairs if end.pairs is not None else start.pairs,
    )
    open_outputs, _ = system.run(subset(prepared, open_rows), priors, params, rest)
    outputs = {
        name: None if values is None else np.where(open_rows, open_outputs[name], values)
        for name, values in outputs.items()
    }
    return outputs, end, first.order, open_rows, saved


def replay_forecasts(system: ReplaySystem, prepared: PreparedMatches, priors, params: dict) -> np.ndarray:
    """``expected_a`` by input row of a fresh replay of already prepared and checked matches with resolved
    ``params`` (tuning runs many parameter sets over one preparation)."""
    start = fresh_start(prepared, system.player_state, system.league_state, params)
    periods = system.periods(prepared, params) if system.periods is not None else None
    return _run_from(system, prepared, priors, params, start, periods)[0]["expected_a"]


def _old_state(state, partial_state: bool) -> pl.DataFrame | None:
    """The saved state as a frame; a whole one with its league rows' ``n_players`` counted afresh."""
    if state is None:
        return None
    frame = state_frame(state)
    return frame if partial_state or not frame.height else with_player_counts(frame)


def resume_problem(
    system: ReplaySystem,
    columns: dict[str, pa.Array],
    params: dict,
    state,
    table: str = "matches",
    partial_state: bool = False,
) -> str | None:
    """Why ``state`` cannot be continued with these matches (the message of the :class:`RebuildRequired` a
    continuation would raise), or None when it can; the replay itself is not run."""
    params = system.resolve(params)
    prepared = prepare_matches(columns, table)
    old = _old_state(state, partial_state)
    if old is None or not old.height:
        return None
    try:
        _continuation_start(
            system, columns, prepared, params, system.periods(prepared, params) if system.periods else None, old
        )
    except RebuildRequired as error:
        return str(error)
    return None


def whole_history_resume(prepared: PreparedMatches, params: dict, start: StartState) -> str | None:
    """The ``check_resume`` of a whole-history system (:attr:`~duckrate.core.protocol.System.whole_history`):
    a league with saved state cannot be continued, since its forecasts need the fit over its whole history,
    which a state of per-player values does not hold (a league new to the state replays as a fresh one)."""
    saved = np.flatnonzero(start.league_known)
    if saved.size:
        return (
            f"league {prepared.league_names[saved[0]]!r} has saved state, and a whole-history replay forecasts "
            "each match from a fit over every earlier match, which the state does not hold"
        )
    return None


def _continuation_start(system, columns, prepared, params, periods, old: pl.DataFrame) -> StartState:
    """The saved state ``old`` mapped onto ``prepared``, after every check that it can be continued with
    these matches; raises :class:`RebuildRequired` otherwise."""
    check_continuation(system, columns, prepared, params, periods, old)
    start = start_from_state(system, prepared, params, old)
    reason = system.check_resume(prepared, params, start)
    if reason:
        raise RebuildRequired(f"state: {reason}; replay the whole history")
    return start


def _league_rows(system, columns, prepared, params, start, final_order, periods, open_rows) -> dict[int, dict]:
    """The ``league`` state rows of the leagues these matches touch (see _state.STATE_SCHEMA)."""
    rows = {}
    batch_leagues = np.unique(prepared.league)
    final_counts = np.bincount(prepared.league[final_order], minlength=prepared.n_leagues)
    last_row = np.full(prepared.n_leagues, -1, dtype=np.int64)
    last_row[prepared.league[final_order]] = final_order  # the last assignment per league wins
    for league in batch_leagues.tolist():
        row = {
            "system": system.name,
            "params": params_json(params),
            "seq": int(start.seq[league] + final_counts[league]),
            "time_unit": prepared.time_unit,
            "last_time_key": None,
            "last_match_id": None,
            "resume_period": None,
            "pending_ids": None,
        }
        if periods is None:
            at = int(last_row[league])
            row["last_time_key"] = int(prepared.time_key[at])
            row["last_match_id"] = str(columns["match_id"][at].as_py())
        else:  # the open period's match ids in replay order (input row order carries no meaning)
            in_open = prepared.order[(open_rows & (prepared.league == league))[prepared.order]]
            row["resume_period"] = int(periods[in_open[0]])
            row["pending_ids"] = [str(v) for v in pc.take(columns["match_id"], pa.array(in_open)).to_pylist()]
        rows[league] = row
    return rows


def replay_frame(
    system: ReplaySystem, matches: pl.DataFrame, priors=None, state=None, chunk_size: int | None = None, **params
) -> pl.DataFrame:
    """Run ``system`` over a Polars matches frame (continuing a saved ``state`` when given); one output
    row per match in replay order. At most ``chunk_size`` matches (default :data:`DEFAULT_CHUNK_ROWS`) are
    replayed at once; longer histories replay in chunks (:mod:`._chunks`), with the same result."""
    return replay_with_state(system, matches, priors, state, chunk_size, want_state=False, **params)[0]


def replay_with_state(
    system: ReplaySystem,
    matches: pl.DataFrame,
    priors=None,
    state=None,
    chunk_size: int | None = None,
    want_state: bool = True,
    **params,
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Like :func:`replay_frame`, plus the state table after these matches (one run)."""
    size = DEFAULT_CHUNK_ROWS if chunk_size is None else check_chunk_size(chunk_size)
    if system.whole_history:  # every match at once, or a clear error
        if chunk_size is not None and isinstance(matches, pl.DataFrame) and matches.height > size:
            raise DuckrateInputError(
                f"{system.name}: chunk_size = {chunk_size} is below the {matches.height} matches, and a "
                "whole-history replay needs them all at once (each forecast comes from a fit over every "
                f"earlier match); expected chunk_size >= {matches.height}, or none"
            )
        return _output_frame(system, matches, priors, state, params, want_state)
    if not isinstance(matches, pl.DataFrame) or matches.height <= size or "played_at" not in matches.columns:
        return _output_frame(system, matches, priors, state, params, want_state)
    system.resolve(params)  # a bad parameter is reported before any work
    return replay_in_chunks(
        matches,
        "match_id",
        size,
        state,
        lambda part, before: _output_frame(system, part, priors, before, params, want_state=True),
        ["league", "seq"],
    )


def _output_frame(system, matches, priors, state, params, want_state):
    columns = columns_from_polars(matches)
    _, computed, new_state = run_replay(system, columns, priors, params, state=state, want_state=want_state)
    out = matches.select([name for name in PASSTHROUGH_COLUMNS if name in matches.columns])
    if "league" not in out.columns:
        out = out.with_columns(pl.lit(None, dtype=pl.Utf8).alias("league"))
    out = out.with_columns(
        pl.Series(name, values) if values is not None else pl.lit(None, dtype=pl.Float64).alias(name)
        for name, values in computed.items()
    )
    return out.select(OUTPUT_COLUMNS).sort("league", "seq", nulls_last=True), new_state
