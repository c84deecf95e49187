"""Polars frames to Spark DataFrames and back, for the Spark tests' comparisons with the DuckDB path, and the bad rows
the error tests plant."""

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


def with_values(frame: pl.DataFrame, at_id, **values) -> pl.DataFrame:
    """``frame`` with the row whose ``match_id`` is ``at_id`` given ``values`` (a bad row for the error tests)."""
    at = pl.col("match_id") == at_id
    return frame.with_columns(pl.when(at).then(pl.lit(v)).otherwise(pl.col(k)).alias(k) for k, v in values.items())


def match_id_repeated_across_leagues(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the second league's first ``match_id`` set to the first league's."""
    first_of = frame.group_by("league").agg(pl.col("match_id").min()).sort("league")["match_id"].to_list()
    return with_values(frame, first_of[1], match_id=first_of[0])
