"""What the families over inputs with one row per player share (ranked contests, team matches): the run
over an event table (a contest, a team match) from a saved state, the check of a continuation, and the
Python API in chunks of whole events.

A family subclasses :class:`EventSystem` and sets, as class variables, its input shape, how it prepares its
input (``prepare(columns, table) -> PlayerRows``), its output columns (in the contract's order), the
columns its systems compute and the sort of its rows. A system of the family is one entry with one function,
``run``, which rates prepared events from a start::

    run(prepared, priors, params, start) -> (computed, player_values)

``start`` (:class:`.event_state.EventStart`) holds the saved player rows of the players in these events;
``computed`` are the family's computed columns but ``seq``, by input row, and ``player_values()`` (called
only when the state is wanted) the player row of every state slot after the events, in slot order (a
List(Float64) Series; its layout is the system's own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core.contests import PlayerRows
from duckrate.core.matches import columns_from_polars
from duckrate.core.priors import prior_columns
from duckrate.core.protocol import System
from duckrate.systems.chunks import DEFAULT_CHUNK_ROWS, check_chunk_size, replay_in_chunks
from duckrate.systems.event_state import EventStart, continue_events, event_state_frame, fresh_start
from duckrate.systems.saved_state import RebuildRequired, state_frame

Run = Callable[[Any, dict | None, dict, EventStart], tuple[dict[str, np.ndarray], Callable[[], pl.Series]]]


@dataclass(frozen=True, kw_only=True)
class EventSystem(System):
    """A rating system over events with one row per player (see the module docstring)."""

    prepare: ClassVar[Callable[[dict[str, pa.Array], str], PlayerRows]]
    output_columns: ClassVar[tuple[str, ...]]
    computed_columns: ClassVar[tuple[str, ...]]  # by input row; the rest pass through from the input
    integer_columns: ClassVar[tuple[str, ...]]  # the computed columns that are BIGINT (the rest are DOUBLE)
    row_order: ClassVar[list[str]]

    run: Run

    @classmethod
    def passthrough_columns(cls) -> tuple[str, ...]:
        return tuple(name for name in cls.output_columns if name not in cls.computed_columns)

    def replay(
        self,
        columns: dict[str, pa.Array],
        priors,
        params: dict,
        table: str | None = None,
        state=None,
        want_state: bool = False,
    ):
        """Resolve parameters, validate the events, rate them (continuing a saved ``state`` table when given).
        Returns the prepared events, the computed columns by input row, and (with ``want_state``) the state
        table after these events (:mod:`.event_state`). Raises :class:`RebuildRequired` when ``state``
        cannot be continued with these events."""
        params = self.resolve(params)
        prepared: Any = type(self).prepare(columns, table or self.input.name)  # the family's PlayerRows
        old = state_frame(state) if state is not None else None
        if old is not None and old.height:
            start = continue_events(self, columns, prepared, params, old)
        else:
            start = fresh_start(prepared)
        computed, player_values = self.run(prepared, prior_columns(priors), params, start)
        seq = np.empty(prepared.n_rows, dtype=np.int64)
        seq[prepared.order] = np.repeat(prepared.event_seq + start.seq[prepared.event_league], prepared.event_sizes)
        computed = {name: seq if name == "seq" else computed[name] for name in self.computed_columns}
        if not want_state:
            return prepared, computed, None
        new_state = event_state_frame(self, columns, prepared, params, start, player_values(), old)
        return prepared, computed, new_state

    def resume_problem(self, columns: dict[str, pa.Array], params: dict, state, table: str | None = None) -> str | None:
        """Why ``state`` cannot be continued with these events (the :class:`RebuildRequired` message a
        continuation would raise), or None when it can; nothing is rated."""
        params = self.resolve(params)
        prepared = type(self).prepare(columns, table or self.input.name)
        old = state_frame(state)
        try:
            if old.height:
                continue_events(self, columns, prepared, params, old)
        except RebuildRequired as error:
            return str(error)
        return None

    def with_state(
        self,
        frame: pl.DataFrame,
        state: pl.DataFrame | None = None,
        priors: pl.DataFrame | None = None,
        chunk_size: int | None = None,
        want_state: bool = True,
        **params,
    ) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        """The replay rows of ``frame`` (:attr:`output_columns`, sorted by :attr:`row_order`) and the state table
        after them; at most ``chunk_size`` rows (default ``DEFAULT_CHUNK_ROWS``) are rated at once, whole
        events, in chunks that each continue from the state the one before left (:mod:`.chunks`)."""
        size = DEFAULT_CHUNK_ROWS if chunk_size is None else check_chunk_size(chunk_size)
        if not isinstance(frame, pl.DataFrame) or frame.height <= size or "played_at" not in frame.columns:
            return self._output_frame(frame, priors, state, params, want_state)
        self.resolve(params)  # a bad parameter is reported before any work
        return replay_in_chunks(
            frame,
            self.input.key,
            size,
            state,
            lambda part, before: self._output_frame(part, priors, before, params, True),
            self.row_order,
        )

    def _output_frame(self, rows, priors, state, params, want_state):
        columns = columns_from_polars(rows, self.input.name)
        _, computed, new_state = self.replay(columns, priors, params, state=state, want_state=want_state)
        out = rows.select([name for name in self.passthrough_columns() if name in rows.columns])
        if "league" not in out.columns:
            out = out.with_columns(pl.lit(None, dtype=pl.Utf8).alias("league"))
        out = out.with_columns(pl.Series(name, values) for name, values in computed.items())
        return out.select(self.output_columns).sort(self.row_order, nulls_last=True), new_state
