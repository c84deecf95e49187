"""The Arrow UDF and TEMP table macro behind ``bt_fit(tbl, ...)``: a Bradley-Terry fit of a matches table.

Same pattern as the replays (:mod:`.replay_udf`): the macro packs the table's columns into one unordered
``LIST(STRUCT)`` (players and league as 64-bit hash keys, with the name lists beside), the priors table
into another, and the UDF hands them to :func:`duckrate.fits.bradley_terry.fit_columns`, which returns
one row per (league, player); the macro unnests it. No maths here.
"""

from __future__ import annotations

import pyarrow as pa

from duckrate.fits.bradley_terry import BT_FIT, OUTPUT_SCHEMA, fit_columns
from duckrate.sql._lists import list_per_row, whole
from duckrate.sql.bridge import collected_ctes
from duckrate.sql.replay_udf import EMPTY_PRIORS_VIEW, PRIORS_SOURCE, match_macro_rows, names_ctes, packed_matches_sql

UDF_NAME = "duckrate_bt_fit_udf"
# (name, SQL default) in the UDF's argument order; priors is the macro's table argument.
PARAMETERS = tuple((p.name, p.sql_default) for p in BT_FIT.parameters)
_SQL_TYPES = {pa.string(): "VARCHAR", pa.float64(): "DOUBLE", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN"}
RETURN_TYPE = "STRUCT(" + ", ".join(f"{f.name} {_SQL_TYPES[f.type]}" for f in OUTPUT_SCHEMA) + ")[]"


def make_udf():
    """``(token, n_input, n_priors, player names, league names, table name, parameters...) -> list of fit
    rows``: the matches and priors were collected under the token (see :mod:`.bridge`)."""
    names = [name for name, _ in PARAMETERS]
    element_type = pa.struct(list(OUTPUT_SCHEMA))

    def bt_fit_udf(token, n_input, n_priors, player_names, league_names, table_name, *parameters):
        parameters = [whole(column) for column in parameters]
        per_row = []
        for row, columns, priors, table in match_macro_rows(
            token, n_input, n_priors, player_names, league_names, table_name
        ):
            if columns is None:
                per_row.append(None)
                continue
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            result = fit_columns(columns, priors, values, table=table)
            per_row.append(result.to_struct_array().combine_chunks() if result.num_rows else None)
        return list_per_row(per_row, element_type)

    bt_fit_udf.__name__ = UDF_NAME
    return bt_fit_udf


def macro_sql() -> str:
    """``CREATE TEMP MACRO bt_fit(tbl, <params>, priors := <empty view>) AS TABLE ...``."""
    params = ", ".join(f"{name} := {default}" for name, default in PARAMETERS)
    args = ", ".join(name for name, _ in PARAMETERS)
    named = "list_concat(covariates, [cluster])"  # the row-level options' columns, passed as they are
    parts = {"input": packed_matches_sql(key=None, named_columns=named), "priors": PRIORS_SOURCE}
    return f"""
CREATE OR REPLACE TEMP MACRO bt_fit(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}') AS TABLE
WITH {collected_ctes(parts)}, {names_ctes()}
SELECT unnest({UDF_NAME}(k.t, c.n_input, c.n_priors, (SELECT pn.names FROM player_names AS pn),
              (SELECT ln.names FROM league_names AS ln), tbl, {args}), recursive := true)
FROM duckrate_token AS k, duckrate_collected AS c
"""
