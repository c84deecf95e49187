"""Polars frames to Spark DataFrames and back, for the Spark tests' comparisons with the DuckDB path."""

from __future__ import annotations

import polars as pl
import pyarrow as pa


def _spark_arrow_type(kind: pa.DataType) -> pa.DataType:
    """``kind`` with large strings and lists as the plain ones Spark reads."""
    if pa.types.is_large_string(kind):
        return pa.string()
    if pa.types.is_large_list(kind) or pa.types.is_list(kind):
        return pa.list_(_spark_arrow_type(kind.value_type))
    return kind


def to_spark(spark, frame: pl.DataFrame):
    """A Spark DataFrame of ``frame`` (naive timestamps become Spark timestamps, read as UTC)."""
    table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
    schema = pa.schema([field.with_type(_spark_arrow_type(field.type)) for field in table.schema])
    return spark.createDataFrame(table.cast(schema))


def from_spark(frame) -> pl.DataFrame:
    """A Spark DataFrame collected as Polars, its timestamps as the naive UTC values DuckDB returns."""
    collected = pl.from_arrow(frame.toArrow())
    return collected.with_columns(
        pl.col(name).dt.replace_time_zone(None)
        for name, kind in collected.schema.items()
        if isinstance(kind, pl.Datetime) and kind.time_zone is not None
    )
