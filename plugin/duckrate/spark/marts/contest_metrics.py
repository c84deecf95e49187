"""``contest_metrics`` on Spark: one task per (league, system) (a grouped ``applyInArrow`` function) that calls
the mart's Python function, as the DuckDB macro's UDF does (:func:`duckrate.sql.evaluation_udf.mart_table`).

The metrics (Ebtekar & Liu 2021, Section 6.2) are computed within each (league, system), so each group's
task returns the group's row as the UDF computes it over the whole table. An input error a task meets (a
NULL ``rating_before``, say) fails the Spark job with the Python function's message.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from duckrate.evaluation.contest_marts import contest_metrics as python_contest_metrics
from duckrate.spark.arrow_tables import struct_column
from duckrate.spark.marts.source import mart_named, mart_parameters, replay_rows
from duckrate.sql.evaluation_udf import Mart, mart_table, returns_schema

CONTEST_METRICS = mart_named("contest_metrics")


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


def contest_metrics(rows: DataFrame, system: str | None = None, **params) -> DataFrame:
    """The ``contest_metrics`` macro over a Spark DataFrame of contest replay rows (``min_contests``,
    ``warmup``, ``definition``, ``min_history``, ``top``: the macro's parameters); ``system`` labels rows
    without a system."""
    params = mart_parameters(CONTEST_METRICS, params)
    source = replay_rows(rows, CONTEST_METRICS, system, python_contest_metrics, params)
    task = GroupContestMetrics(CONTEST_METRICS, [params[parameter.name] for parameter in CONTEST_METRICS.parameters])
    fields = source.select(*CONTEST_METRICS.fields)
    schema = from_arrow_schema(returns_schema(CONTEST_METRICS))
    return fields.groupBy("league", "system").applyInArrow(task.function(), schema)
