"""``duckrate.spark.replay``: a replay over a Spark DataFrame, one task per league.

On the driver: duckrate's own checks of the parameters and of the columns' names and types (the Python
path's, on an empty frame of the same schema), then one Spark job: the table grouped by ``league``,
cogrouped with the saved state's rows of the league, each group replayed by :class:`.LeagueReplay`. The
result is checkpointed (computed once, held by the executors), so the rows, the state and the errors are
read from one run; an input error is raised on the driver as the Python API raises it, and a ``match_id``
repeated across leagues is found by one more aggregation. Two-player systems replay matches, contest
systems contest results (:mod:`.rated_tables`).
"""

from __future__ import annotations

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..state import replay_with_state as python_replay
from .arrow_tables import STATE_TYPE, arrow_schema, empty_frame
from .canonical import canonical_columns
from .league_replay import LeagueReplay
from .rated_tables import RatedTable, rated_table
from .saved_state import no_state, state_columns
from .task_errors import ERROR_FIELDS, raise_first_error


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
    Python API reads it). ``chunk_size`` bounds the matches one kernel call replays within a league (as for
    :func:`duckrate.replay_with_state`).
    """
    rated = rated_table(system)
    frame = canonical_columns(matches, rated.columns)
    if isinstance(priors, DataFrame):
        priors = pl.from_arrow(priors.toArrow())
    # parameters, columns, types and the priors table, checked as the Python API checks them
    python_replay(system, empty_frame(frame), priors=priors, chunk_size=chunk_size, **params)
    saved = state_columns(state) if state is not None else no_state(frame.sparkSession)
    schema = combined_type(rated, frame.schema)
    task = LeagueReplay(system, params, priors, chunk_size, rated.outputs, arrow_schema(schema, frame))
    combined = (
        frame.groupBy("league")
        .cogroup(saved.groupBy("league"))
        .applyInArrow(task.function(), schema)
        .localCheckpoint(eager=True)
    )
    raise_first_error(combined, "league")
    if rated.check_keys is not None:
        rated.check_keys(frame)
    rows = combined.filter(F.col("duckrate_part") == "row").select(*rated.outputs)
    after = combined.filter(F.col("duckrate_part") == "state").select("duckrate_state.*")
    return rows, after


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
