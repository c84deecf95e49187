"""Spark schemas and the Arrow tables that cross between Spark and duckrate's Python functions.

Runs on the driver (schemas) and in the Python workers (tables). A task returns one Arrow table whose
schema Spark fixed beforehand, so every part it returns (replay rows, state rows, an error) is laid out
on that one schema, NULL where a part has no value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from duckrate.systems.saved_state import STATE_SCHEMA

_SPARK_TYPES = {
    pl.Utf8: T.StringType(),
    pl.Int64: T.LongType(),
    pl.Float64: T.DoubleType(),
    pl.List(pl.Float64): T.ArrayType(T.DoubleType()),
    pl.List(pl.Utf8): T.ArrayType(T.StringType()),
}


def spark_fields(schema: Mapping[str, pl.DataType | type[pl.DataType]]) -> list[T.StructField]:
    """A Polars schema of duckrate's (column name to type) as Spark fields, column for column."""
    return [T.StructField(name, _SPARK_TYPES[kind]) for name, kind in schema.items()]


#: The saved state's columns as Spark types (the state table of the DuckDB path, column for column).
STATE_TYPE = T.StructType(spark_fields(STATE_SCHEMA))


def arrow_schema(schema: T.StructType, frame: DataFrame) -> pa.Schema:
    """``schema`` as the Arrow schema Spark hands a Python task (timestamps in the session's time zone)."""
    return to_arrow_schema(schema, timezone=frame.sparkSession.conf.get("spark.sql.session.timeZone"))


def empty_frame(frame: DataFrame) -> pl.DataFrame:
    """A Polars frame with no rows and the columns a task receives from ``frame``: duckrate's own checks of
    names and types run on it on the driver, before any Spark job."""
    return cast(pl.DataFrame, pl.from_arrow(arrow_schema(frame.schema, frame).empty_table()))


def from_polars(frame: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """The columns of ``frame`` that ``schema`` names, cast to its types (large strings and lists to Spark's,
    integer players to text); the fields ``frame`` lacks are NULL."""
    table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
    return pa.table(
        [
            table[field.name].cast(field.type) if field.name in table.column_names else pa.nulls(len(table), field.type)
            for field in schema
        ],
        schema=schema,
    )


def frame_part(schema: pa.Schema, part: str, frame: pl.DataFrame, names: tuple[str, ...]) -> pa.Table:
    """The rows of ``frame`` as part ``part`` of ``schema``: its columns ``names`` cast to their fields'
    types (see :func:`from_polars`), NULL elsewhere."""
    table = from_polars(frame, pa.schema([schema.field(name) for name in names]))
    return part_table(schema, part, {name: table[name].combine_chunks() for name in names}, frame.height)


def struct_column(table: pa.Table, kind: pa.StructType) -> pa.StructArray:
    """The columns of ``table`` (laid out as ``kind``'s fields) as one struct column."""
    return pa.StructArray.from_arrays([table[field.name].combine_chunks() for field in kind], fields=list(kind))


def part_table(schema: pa.Schema, part: str, columns: dict[str, pa.Array], n_rows: int) -> pa.Table:
    """``n_rows`` rows of ``schema``: ``duckrate_part`` = ``part``, the given ``columns``, NULL elsewhere."""
    given = {"duckrate_part": pa.array([part] * n_rows, pa.string()), **columns}
    return pa.table(
        [given[field.name] if field.name in given else pa.nulls(n_rows, field.type) for field in schema],
        schema=schema,
    )
