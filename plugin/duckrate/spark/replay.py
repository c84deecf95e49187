"""``duckrate.spark.replay``: a replay over a Spark DataFrame, one task per league.

On the driver: duckrate's own checks of the parameters and of the columns' names and types (the Python
path's, on an empty frame of the same schema), then one Spark job: the table grouped by ``league``,
cogrouped with the saved state's rows of the league, each group replayed by :class:`.LeagueReplay`. The
result is checkpointed (computed once, held by the executors), so the rows, the state and the errors are
read from one run; an input error is raised on the driver as the Python API raises it, and a ``match_id``
repeated across leagues is found by one more aggregation. A league longer than ``chunk_size`` replays in
time slices, round after round (:mod:`.league_slices`). Two-player systems replay matches, contest
systems contest results (:mod:`.rated_tables`).
"""

from __future__ import annotations

from functools import reduce
from typing import cast

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from duckrate.core.registry import SYSTEMS
from duckrate.spark.arrow_tables import STATE_TYPE, arrow_schema, empty_frame
from duckrate.spark.canonical import canonical_columns
from duckrate.spark.league_replay import LeagueReplay
from duckrate.spark.league_slices import LeagueSlices, league_slices, open_period_keys, without_keys
from duckrate.spark.rated_tables import RatedTable, rated_table
from duckrate.spark.saved_state import no_state, state_columns
from duckrate.spark.task_errors import ERROR_FIELDS, raise_first_error
from duckrate.systems.chunks import DEFAULT_CHUNK_ROWS


def combined_type(rated: RatedTable, inputs: T.StructType) -> T.StructType:
    """The schema every league's task returns: ``duckrate_part`` ('row', 'state' or 'error'), the replay's
    columns, the state row as the struct ``duckrate_state``, and the error's class and message."""
    return T.StructType(
        [
            T.StructField("duckrate_part", T.StringType()),
            *(T.StructField(name, rated.output_type(name, inputs)) for name in rated.outputs),
            T.StructField("duckrate_state", STATE_TYPE),
            *(T.StructField(name, T.StringType()) for name, _ in ERROR_FIELDS),
        ]
    )


def replay_with_state(
    matches: DataFrame,
    system: str,
    state: DataFrame | None = None,
    priors: DataFrame | pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> tuple[DataFrame, DataFrame]:
    """Replay ``system`` (``"elo"``, ``"glicko"``, ...) over a Spark DataFrame of canonical matches (of
    contest results for a contest system: ``"elo_mmr"``, ...), continuing ``state`` (a state DataFrame from
    an earlier call, or a table of the DuckDB path) when given.

    Returns ``(rows, state)``: the replay rows (the columns of ``<system>_replay``) and the state after them
    (the columns of ``<system>_state``), both read from one checkpointed run. Raises
    :class:`~duckrate.DuckrateInputError` on bad input and :class:`~duckrate.RebuildRequired` when the
    state cannot be continued with these matches, with the Python API's messages. ``priors``: a Spark or
    Polars ``player_priors`` frame, collected on the driver and handed whole to every league's task (as the
    Python API reads it). ``chunk_size`` (default ``DEFAULT_CHUNK_ROWS``) is the most matches one task replays:
    a longer league replays in time slices of about that many, one Spark round per slice, each continuing
    the state the slice before left (:mod:`.league_slices`); rows and state are one replay's all the same.
    A whole-history system (WHR, TrueSkill Through Time) replays each league in one task: its forecasts
    need the league's whole history, so an explicit ``chunk_size`` below a league's matches is an error.
    """
    entry = SYSTEMS.get(system, "duckrate.spark.replay")
    rated = rated_table(entry.input)
    frame = canonical_columns(matches, rated.columns)
    if isinstance(priors, DataFrame):
        priors = cast(pl.DataFrame, pl.from_arrow(priors.toArrow()))
    # parameters, columns, types and the priors table, checked as the Python API checks them
    entry.with_state(empty_frame(frame), priors=priors, chunk_size=chunk_size, **params)
    size = DEFAULT_CHUNK_ROWS if chunk_size is None else chunk_size
    saved = state_columns(state) if state is not None else no_state(frame.sparkSession)
    schema = combined_type(rated, frame.schema)
    task = LeagueReplay(entry, params, priors, chunk_size, rated.outputs, arrow_schema(schema, frame))

    def replayed(part: DataFrame, before: DataFrame) -> tuple[DataFrame, DataFrame]:
        combined = part.groupBy("league").cogroup(before.groupBy("league")).applyInArrow(task.function(), schema)
        combined = combined.localCheckpoint(eager=True)
        raise_first_error(combined, "league")
        rows = combined.filter(F.col("duckrate_part") == "row").select(*rated.outputs)
        return rows, combined.filter(F.col("duckrate_part") == "state").select("duckrate_state.*")

    slices = None if entry.whole_history else league_slices(frame, size)  # a whole-history league: one task
    if slices is None:  # every league one task
        rows, after = replayed(frame, saved)
    else:
        rows, after = _replay_in_slices(slices, saved, replayed, rated.key)
    if rated.check_keys is not None:
        rated.check_keys(frame)
    return rows, after


def _replay_in_slices(slices: LeagueSlices, saved: DataFrame, replayed, key: str) -> tuple[DataFrame, DataFrame]:
    """Round after round, each large league's next slice from the state the round before left; every other
    league replays whole in round 0. Returns all rows and the final state."""
    rows_of, state_of = [], []
    part, before = slices.round_rows(0), saved
    for k in range(slices.rounds):
        rows, after = replayed(part, before)
        if k + 1 < slices.rounds:
            before = slices.of_continuing(after, k)
            open_keys = slices.of_continuing(open_period_keys(rows, after, key), k)
            rows = without_keys(rows, open_keys, key)
            part = slices.round_rows(k + 1).unionByName(slices.carried(open_keys, key))
            after = slices.of_continuing(after, k, keep=False)
        rows_of.append(rows)
        state_of.append(after)
    return reduce(DataFrame.unionByName, rows_of), reduce(DataFrame.unionByName, state_of)


def replay(
    matches: DataFrame,
    system: str,
    state: DataFrame | None = None,
    priors: DataFrame | pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> DataFrame:
    """The replay rows of :func:`replay_with_state`."""
    return replay_with_state(matches, system, state, priors, chunk_size, **params)[0]


def replay_state(
    matches: DataFrame,
    system: str,
    state: DataFrame | None = None,
    priors: DataFrame | pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> DataFrame:
    """The state after the matches, of :func:`replay_with_state`."""
    return replay_with_state(matches, system, state, priors, chunk_size, **params)[1]


__all__ = ["combined_type", "replay", "replay_state", "replay_with_state"]
