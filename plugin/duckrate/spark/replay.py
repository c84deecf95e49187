"""``duckrate.spark.replay``: a two-player replay over a Spark DataFrame, one task per league.

On the driver: duckrate's own checks of the parameters and of the columns' names and types (the Python
path's, on an empty frame of the same schema), then one Spark job: matches grouped by ``league``,
cogrouped with the saved state's rows of the league, each group replayed by :class:`.LeagueReplay`. The
result is checkpointed (computed once, held by the executors), so the rows, the state and the errors are
read from one run; an input error is raised on the driver as the Python API raises it, and a ``match_id``
repeated across leagues is found by one more aggregation.
"""

from __future__ import annotations

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..errors import DuckrateInputError
from ..state import replay_with_state as python_replay
from ..systems import CONTEST_SYSTEMS, REPLAY_SYSTEMS
from ..systems._replay import OUTPUT_COLUMNS
from .arrow_tables import STATE_TYPE, arrow_schema, empty_frame
from .canonical import canonical_columns
from .league_replay import LeagueReplay
from .saved_state import no_state, state_columns
from .task_errors import ERROR_FIELDS, raise_first_error
from .unique_keys import check_unique_match_ids

_TEXT = ("league", "player_a", "player_b")


def combined_type(matches: T.StructType) -> T.StructType:
    """The schema every league's task returns: ``duckrate_part`` ('row', 'state' or 'error'), the replay's
    columns (``match_id`` and ``played_at`` in their input types), the state row as the struct
    ``duckrate_state``, and the error's class and message."""

    def output_type(name: str) -> T.DataType:
        if name in ("match_id", "played_at"):
            return matches[name].dataType
        if name == "seq":
            return T.LongType()
        return T.StringType() if name in _TEXT else T.DoubleType()

    return T.StructType(
        [
            T.StructField("duckrate_part", T.StringType()),
            *(T.StructField(name, output_type(name)) for name in OUTPUT_COLUMNS),
            T.StructField("duckrate_state", STATE_TYPE),
            *(T.StructField(name, T.StringType()) for name, _ in ERROR_FIELDS),
        ]
    )


def _check_system(system: str) -> None:
    if system in {s.name for s in CONTEST_SYSTEMS}:
        raise DuckrateInputError(
            f"duckrate.spark: {system!r} rates contests; Spark replays the two-player systems "
            f"({', '.join(s.name for s in REPLAY_SYSTEMS)}); replay contests with duckrate.replay_with_state"
        )


def replay_with_state(
    matches: DataFrame,
    system: str,
    state: DataFrame | None = None,
    priors: DataFrame | pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> tuple[DataFrame, DataFrame]:
    """Replay ``system`` (``"elo"``, ``"glicko"``, ...) over a Spark DataFrame of canonical matches,
    continuing ``state`` (a state DataFrame from an earlier call, or a table of the DuckDB path) when given.

    Returns ``(rows, state)``: the replay rows (the columns of ``<system>_replay``) and the state after them
    (the columns of ``<system>_state``), both read from one checkpointed run. Raises
    :class:`~duckrate.DuckrateInputError` on bad input and :class:`~duckrate.RebuildRequired` when the
    state cannot be continued with these matches, with the Python API's messages. ``priors``: a Spark or
    Polars ``player_priors`` frame, collected on the driver and handed whole to every league's task (as the
    Python API reads it). ``chunk_size`` bounds the matches one kernel call replays within a league (as for
    :func:`duckrate.replay_with_state`).
    """
    _check_system(system)
    frame = canonical_columns(matches)
    if isinstance(priors, DataFrame):
        priors = pl.from_arrow(priors.toArrow())
    # parameters, columns, types and the priors table, checked as the Python API checks them
    python_replay(system, empty_frame(frame), priors=priors, chunk_size=chunk_size, **params)
    saved = state_columns(state) if state is not None else no_state(frame.sparkSession)
    schema = combined_type(frame.schema)
    task = LeagueReplay(system, params, priors, chunk_size, arrow_schema(schema, frame))
    combined = (
        frame.groupBy("league")
        .cogroup(saved.groupBy("league"))
        .applyInArrow(task.function(), schema)
        .localCheckpoint(eager=True)
    )
    raise_first_error(combined, "league")
    check_unique_match_ids(frame)
    rows = combined.filter(F.col("duckrate_part") == "row").select(*OUTPUT_COLUMNS)
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
