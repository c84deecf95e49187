"""The leaderboards' ``rank_upper``, ``rank_lower`` and ``tier``, one Spark task per (league, system) (a
grouped ``applyInArrow`` function).

The task receives a group's leaderboard rows, puts them in rank order and calls
:func:`duckrate.core.ranks.interval_ranks`, the function the DuckDB macros' UDF and the Python API
call (tiers are a scan in rank order, not a window function), and returns the rows with the three columns
appended.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, interval_ranks
from duckrate.spark.arrow_tables import arrow_schema


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A column as doubles, NULL as NaN (a player without a rating or an interval)."""
    return pc.fill_null(column.cast(pa.float64()), np.nan).to_numpy()


class GroupIntervalRanks:
    """The task: ``(a group's leaderboard rows) -> the rows in rank order with the interval ranks``."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema  # the leaderboard's columns, then INTERVAL_RANK_COLUMNS

    def function(self):
        """The plain function Spark calls."""

        def interval_ranks_of_group(table):
            return self(table)

        return interval_ranks_of_group

    def __call__(self, table: pa.Table) -> pa.Table:
        table = table.sort_by("rank")
        ranks = interval_ranks(*(_numbers(table[name]) for name in ("rating", "lower", "upper")))
        for name, values in zip(INTERVAL_RANK_COLUMNS, ranks):
            table = table.append_column(name, pa.array(values, pa.int64()))
        return table.cast(self.schema)


def with_interval_ranks(ranked: DataFrame) -> DataFrame:
    """``ranked`` (a leaderboard: league, system, rank, rating, lower, upper, ...) with ``rank_upper``,
    ``rank_lower`` and ``tier`` appended, computed per (league, system)."""
    schema = T.StructType(
        [
            *(T.StructField(field.name, field.dataType) for field in ranked.schema),
            *(T.StructField(name, T.LongType()) for name in INTERVAL_RANK_COLUMNS),
        ]
    )
    task = GroupIntervalRanks(arrow_schema(schema, ranked))
    return ranked.groupBy("league", "system").applyInArrow(task.function(), schema)
