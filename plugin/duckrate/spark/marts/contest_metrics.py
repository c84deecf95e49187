"""``contest_metrics`` on Spark: one task per (league, system) (a grouped ``applyInArrow`` function) that calls
the mart's Python computation, as the DuckDB macro's UDF does (:func:`duckrate.marts.compute.mart_table`).

The metrics (Ebtekar & Liu 2021, Section 6.2) are computed within each (league, system), so each group's
task returns the group's row as the UDF computes it over the whole table. An input error a task meets (a
NULL ``rating_before``, say) fails the Spark job with the Python function's message.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from duckrate.marts import Mart
from duckrate.marts.compute import mart_table, returns_schema
from duckrate.spark.arrow_tables import struct_column


class GroupContestMetrics:
    """The task: ``(a group's contest replay rows) -> its contest_metrics row``."""

    def __init__(self, mart: Mart, values: list):
        self.mart = mart
        self.values = values  # the parameters, in the order of mart.parameters

    def function(self):
        """The plain function Spark calls."""

        def contest_metrics_of_group(table):
            return self(table)

        return contest_metrics_of_group

    def __call__(self, table: pa.Table) -> pa.Table:
        return mart_table(self.mart, struct_column(table, pa.struct(list(table.schema))), self.values)


def run_computation(mart: Mart, frame: DataFrame, values: dict) -> DataFrame:
    """A Python mart (``contest_metrics``) over the replay rows ``frame``, one task per (league, system)."""
    task = GroupContestMetrics(mart, [values[parameter.name] for parameter in mart.parameters])
    schema = from_arrow_schema(returns_schema(mart))
    return frame.select(*mart.fields).groupBy("league", "system").applyInArrow(task.function(), schema)
