"""The Arrow UDF and TEMP table macro behind ``bt_fit(tbl, ...)``: a Bradley-Terry fit of a matches table.

Same pattern as the replays (:mod:`.replay_udf`): the macro packs the table's columns into one unordered
``LIST(STRUCT)`` (players and league as 64-bit hash keys, with the name lists beside), the priors table
into another, and the UDF hands them to :func:`duckrate.fits.bradley_terry.fit_columns`, which returns
one row per (league, player); the macro unnests it. No maths here.
"""

from __future__ import annotations

import pyarrow as pa

from ..fits.bradley_terry import BT_FIT, OUTPUT_SCHEMA, fit_columns
from ._lists import list_values, map_list_rows, struct_columns, whole
from .replay_udf import EMPTY_PRIORS_VIEW, names_and_priors_ctes, packed_matches_sql

UDF_NAME = "duckrate_bt_fit_udf"
# (name, SQL default) in the UDF's argument order; priors is the macro's table argument.
PARAMETERS = (
    ("prior_sd", "NULL"), ("method", "'newton'"), ("home_advantage", "false"), ("anchor_player", "NULL::VARCHAR"),
    ("anchor_rating", "1500.0"), ("uncertainty", "'auto'"), ("resamples", "100"), ("seed", "0"),
    ("tol", "1e-9"), ("max_iter", "NULL"),
)
_SQL_TYPES = {pa.string(): "VARCHAR", pa.float64(): "DOUBLE", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN"}
RETURN_TYPE = "STRUCT(" + ", ".join(f"{f.name} {_SQL_TYPES[f.type]}" for f in OUTPUT_SCHEMA) + ")[]"
assert {name for name, _ in PARAMETERS} == {p.name for p in BT_FIT.parameters} | {"home_advantage", "anchor_player"}


def make_udf():
    """``(matches, player names, league names, priors, table name, parameters...) -> list of fit rows``."""
    names = [name for name, _ in PARAMETERS]
    element_type = pa.struct(list(OUTPUT_SCHEMA))

    def bt_fit_udf(matches, player_names, league_names, priors, table_name, *parameters):
        matches, player_names, league_names = whole(matches), whole(player_names), whole(league_names)
        priors, table_name = whole(priors), whole(table_name)
        parameters = [whole(column) for column in parameters]

        def fit_row(row: int, elements: pa.Array) -> pa.StructArray:
            columns = struct_columns(elements)
            columns["player_names"] = list_values(player_names, row)
            leagues = list_values(league_names, row)
            if leagues is not None:
                columns["league_names"] = leagues
            prior_elements = list_values(priors, row)
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            result = fit_columns(
                columns,
                struct_columns(prior_elements) if prior_elements is not None and len(prior_elements) else None,
                values,
                table=f"table {table_name[row].as_py()!r}",
            )
            return result.to_struct_array().combine_chunks() if result.num_rows else pa.array([], element_type)

        return map_list_rows(matches, fit_row, element_type)

    bt_fit_udf.__name__ = UDF_NAME
    return bt_fit_udf


def macro_sql() -> str:
    """``CREATE TEMP MACRO bt_fit(tbl, <params>, priors := <empty view>) AS TABLE ...``."""
    params = ", ".join(f"{name} := {default}" for name, default in PARAMETERS)
    args = ", ".join(name for name, _ in PARAMETERS)
    return f"""
CREATE OR REPLACE TEMP MACRO bt_fit(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}') AS TABLE
WITH packed AS (
    SELECT list(m) AS match_list
    FROM {packed_matches_sql()} AS m
), {names_and_priors_ctes()}
SELECT unnest({UDF_NAME}(packed.match_list, (SELECT pn.names FROM player_names AS pn),
              (SELECT ln.names FROM league_names AS ln), (SELECT pp.prior_list FROM packed_priors AS pp),
              tbl, {args}), recursive := true)
FROM packed
"""
