"""The saved state as a Spark DataFrame: the state table of the DuckDB path (:data:`STATE_TYPE`), one row
per league, player and pair, every row carrying its ``league``, so each league's task receives its own
rows (a cogroup by ``league``) and returns its rows after the replay."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from duckrate.spark.arrow_tables import STATE_TYPE, empty_frame
from duckrate.systems.saved_state import state_frame


def state_columns(state: DataFrame) -> DataFrame:
    """``state`` with the state table's columns in their types (absent optional ones NULL). A missing
    required column is the Python path's error, raised on the driver."""
    state_frame(empty_frame(state))  # names the missing columns as duckrate.replay_with_state does
    by_lower = {name.lower(): name for name in state.columns}
    return state.select(
        *(
            (F.col(f"`{by_lower[field.name]}`") if field.name in by_lower else F.lit(None))
            .cast(field.dataType)
            .alias(field.name)
            for field in STATE_TYPE
        )
    )


def no_state(spark: SparkSession) -> DataFrame:
    """An empty state (a replay from scratch)."""
    return spark.createDataFrame([], STATE_TYPE)
