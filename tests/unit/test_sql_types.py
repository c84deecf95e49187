"""The one map from Arrow and Polars column types to DuckDB's (:mod:`duckrate.sql.sql_types`)."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest

from duckrate.sql.sql_types import arrow_struct, arrow_type, sql_type, struct_sql


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (pl.String, "VARCHAR"),
        (pl.Utf8(), "VARCHAR"),
        (pl.Int64, "BIGINT"),
        (pl.Float64, "DOUBLE"),
        (pl.Boolean, "BOOLEAN"),
        (pl.List(pl.Float64), "DOUBLE[]"),
        (pl.List(pl.String), "VARCHAR[]"),
        (pa.large_string(), "VARCHAR"),
        (pa.timestamp("us"), "TIMESTAMP"),
        (pa.list_(pa.int64()), "BIGINT[]"),
    ],
)
def test_each_type_has_its_sql_name(kind, expected):
    assert sql_type(kind) == expected


def test_a_struct_from_a_mapping_or_arrow_fields():
    assert struct_sql({"a": pl.Int64, "b": pl.List(pl.String)}) == "STRUCT(a BIGINT, b VARCHAR[])"
    assert struct_sql(pa.struct([("x", pa.float64()), ("y", pa.bool_())])) == "STRUCT(x DOUBLE, y BOOLEAN)"
    assert arrow_type(pl.List(pl.Int64)) == pa.list_(pa.int64())
    assert arrow_struct({"a": pl.String, "b": pl.Float64}) == pa.struct([("a", pa.string()), ("b", pa.float64())])


@pytest.mark.parametrize("kind", [pl.Int8, pa.int8(), pl.Decimal(10, 2)])
def test_a_type_without_a_mapping_is_named_in_the_error(kind):
    with pytest.raises(TypeError, match="no SQL type for the column type"):
        sql_type(kind)
