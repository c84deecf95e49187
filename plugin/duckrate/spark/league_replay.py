"""One league's replay, as Spark runs it in a Python worker (a cogrouped ``applyInArrow`` function).

It receives the league's matches (or contest results) and its saved state rows as Arrow tables and calls
:func:`duckrate.replay_with_state`, the function behind the Python API (the DuckDB macros run the same
``run_replay``), so validation, replay order, kernels and state are the ones the DuckDB path uses. It returns
the replay rows and the state rows after them, on one schema (``duckrate_part`` tells them apart), or one
error row.
"""

from __future__ import annotations

from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.protocol import System
from duckrate.spark.arrow_tables import frame_part, from_polars, part_table, struct_column
from duckrate.spark.task_errors import league_error
from duckrate.systems.saved_state import check_league_rows, state_frame


def league_rows(state: pl.DataFrame) -> pl.DataFrame:
    """The ``league`` rows of a state table."""
    return state.filter(pl.col("kind") == "league")


class LeagueReplay:
    """The task of :func:`duckrate.spark.replay_with_state`: ``(key, matches, saved) -> rows + state``."""

    def __init__(
        self,
        system: System,
        params: dict,
        priors: pl.DataFrame | None,
        chunk_size: int | None,
        outputs: tuple[str, ...],
        schema: pa.Schema,
    ):
        self.system = system  # the registry entry itself, pickled with the task (a system registered at run time
        # on the driver replays in the workers too)
        self.params = params
        self.priors = priors  # the whole player_priors table: each league reads its own rows, as on one machine
        self.chunk_size = chunk_size
        self.outputs = outputs  # the replay's columns, in order
        self.schema = schema  # the combined schema (see duckrate.spark.replay.combined_type)

    def function(self):
        """The plain function Spark calls (it tells a key-taking function by its number of arguments)."""

        def replay_league(key, matches, saved):
            return self(key, matches, saved)

        return replay_league

    def __call__(self, key: tuple, matches: pa.Table, saved: pa.Table) -> pa.Table:
        try:
            return self._replay(matches, saved)
        except DuckrateInputError as error:  # RebuildRequired too
            return league_error(self.schema, key, error)

    def _replay(self, matches: pa.Table, saved: pa.Table) -> pa.Table:
        state = cast(pl.DataFrame, pl.from_arrow(saved)) if saved.num_rows else None
        if not matches.num_rows:  # a league with no new matches keeps its state as it was saved,
            kept = state_frame(state)  # if saved by this system with these parameters (as a whole state is checked)
            check_league_rows(self.system, self.system.resolve(self.params), league_rows(kept))
            return self._state_part(kept)
        rows, after = self.system.with_state(
            cast(pl.DataFrame, pl.from_arrow(matches)),
            state=state,
            priors=self.priors,
            chunk_size=self.chunk_size,
            **self.params,
        )
        assert after is not None  # the state is asked for
        return pa.concat_tables([frame_part(self.schema, "row", rows, self.outputs), self._state_part(after)])

    def _state_part(self, state: pl.DataFrame) -> pa.Table:
        kind = self.schema.field("duckrate_state").type
        table = from_polars(state, pa.schema(list(kind)))
        return part_table(self.schema, "state", {"duckrate_state": struct_column(table, kind)}, state.height)
