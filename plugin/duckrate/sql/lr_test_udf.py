"""The Arrow UDF and TEMP table macro behind ``bt_lr_test``: the matches packed as one list, the tests
run by :func:`duckrate.fits.bt_lr_test.lr_test_columns`, one row per (league, test) unnested back."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from ..fits.bt_lr_test import OUTPUT_SCHEMA, PARAMETERS, lr_test_columns
from ._lists import map_list_rows, struct_columns, whole
from .replay_udf import MISSING_MATCH_COLUMNS, OPTIONAL_MATCH_COLUMNS

UDF_NAME = "duckrate_bt_lr_test_udf"
FIELDS = ("match_id", "played_at", "player_a", "player_b", "score_a", "league", "weight")
_SQL_TYPES = {pl.Utf8: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE"}
_ARROW_TYPES = {pl.Utf8: pa.string(), pl.Int64: pa.int64(), pl.Float64: pa.float64()}
RETURN_TYPE = "STRUCT(" + ", ".join(f"{name} {_SQL_TYPES[kind]}" for name, kind in OUTPUT_SCHEMA.items()) + ")[]"
_ELEMENT = pa.struct([(name, _ARROW_TYPES[kind]) for name, kind in OUTPUT_SCHEMA.items()])


def make_udf():
    """``(packed matches, table name, parameters...) -> list of test rows``."""
    names = [p.name for p in PARAMETERS]

    def lr_test_udf(matches, table_name, *parameters):
        matches, table_name = whole(matches), whole(table_name)
        parameters = [whole(column) for column in parameters]

        def test_row(row: int, elements: pa.Array) -> pa.StructArray:
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            result = lr_test_columns(struct_columns(elements), values, table=f"table {table_name[row].as_py()!r}")
            return result.to_arrow().cast(pa.schema(_ELEMENT)).to_struct_array().combine_chunks()

        return map_list_rows(matches, test_row, _ELEMENT)

    lr_test_udf.__name__ = UDF_NAME
    return lr_test_udf


def macro_sql() -> str:
    """``CREATE TEMP MACRO bt_lr_test(tbl, seed := 0, ...) AS TABLE ...``."""
    params = ", ".join(f"{p.name} := {p.default!r}" for p in PARAMETERS)
    args = ", ".join(p.name for p in PARAMETERS)
    fields = ", ".join(f"{name} := m.{name}" for name in FIELDS)
    source = (f"(({OPTIONAL_MATCH_COLUMNS}) UNION ALL BY NAME ({MISSING_MATCH_COLUMNS}) "
              "UNION ALL BY NAME (SELECT * FROM query_table(tbl)))")
    return f"""
CREATE OR REPLACE TEMP MACRO bt_lr_test(tbl, {params}) AS TABLE
WITH packed AS (SELECT list(struct_pack({fields})) AS match_list FROM {source} AS m)
SELECT unnest({UDF_NAME}(packed.match_list, tbl, {args}), recursive := true) FROM packed
"""
