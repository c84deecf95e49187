"""The Arrow UDFs and TEMP table macros behind ``tune(system, tbl, ...)`` (a two-player system over a matches
table) and ``tune_contests(system, tbl, ...)`` (a contest system over a contest_results table). Same pattern as ``bt_fit`` (:mod:`.fit_udf`): the macro collects the table's columns, the UDF
hands them to :func:`duckrate.tuning.tune.tune_columns` and returns its rows as one list, which the macro
unnests. No maths here. ``grid`` is JSON text (``'{"k": [16, 24, 32]}'``) or a STRUCT of lists
(``{'k': [16, 24, 32]}``); NULL takes the system's default grid. ``fixed`` (JSON text or a STRUCT) holds
parameters every set shares, e.g. a project's own settings (``{'advantage': 35}``).

``tune_contests`` hands the whole contest table over as one list value (each parameter set replays it
through the Python API, which checks it as any contest replay does): contest tables are far smaller than
match tables, and the replays, not the hand-over, dominate.
"""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.marts.parameters import POINTS
from duckrate.sql._lists import list_per_row, struct_rows, whole
from duckrate.sql.bridge import collected_ctes, one_at_a_time
from duckrate.sql.replay_udf import EMPTY_PRIORS_VIEW, PRIORS_SOURCE, match_macro_rows, names_ctes, packed_matches_sql
from duckrate.sql.sql_types import arrow_struct, struct_sql
from duckrate.tuning.tune import PROTOCOL, TRAIN_SHARE, TUNING_SCHEMA, tune_columns

UDF_NAME = "duckrate_tune_udf"
CONTEST_UDF_NAME = "duckrate_tune_contests_udf"
PARAMETERS = tuple((p.name, p.sql_default) for p in (PROTOCOL, TRAIN_SHARE, POINTS))  # the UDF's order
RETURN_TYPE = struct_sql(TUNING_SCHEMA) + "[]"
ELEMENT_TYPE = arrow_struct(TUNING_SCHEMA)


def _elements(frame: pl.DataFrame) -> pa.StructArray:
    """A tuning table as the UDF's list elements."""
    return struct_rows(frame.to_arrow().cast(pa.schema(list(ELEMENT_TYPE))))


def make_udf():
    """``(token, n_input, n_priors, player names, league names, table name, system, grid, protocol,
    train_share, points) -> list of tuning rows``."""

    def tune_udf(token, n_input, n_priors, player_names, league_names, table_name, system, grid, fixed, *parameters):
        system, grid, fixed = whole(system), whole(grid), whole(fixed)
        parameters = [whole(column) for column in parameters]
        per_row = []
        for row, columns, priors, table in match_macro_rows(
            token, n_input, n_priors, player_names, league_names, table_name
        ):
            if columns is None:
                per_row.append(None)
                continue
            values = {name: column[row].as_py() for (name, _), column in zip(PARAMETERS, parameters)}
            frame = tune_columns(
                columns,
                system[row].as_py(),
                grid[row].as_py(),
                priors=priors,
                table=table,
                **values,
                **fixed_parameters(fixed[row].as_py()),
            )
            per_row.append(_elements(frame))
        return list_per_row(per_row, ELEMENT_TYPE)

    tune_udf.__name__ = UDF_NAME
    return one_at_a_time(tune_udf)


def make_contest_udf():
    """``(rows, system, grid, fixed, protocol, train_share) -> list of tuning rows``: ``rows`` the contest
    table as one LIST of its rows."""

    def tune_contests_udf(rows, system, grid, fixed, protocol, train_share):
        rows, system, grid, fixed = whole(rows), whole(system), whole(grid), whole(fixed)
        protocol, train_share = whole(protocol), whole(train_share)
        per_row = []
        for row in range(len(system)):
            records = rows[row].values
            if records is None or len(records) == 0:
                per_row.append(None)
                continue
            frame = pl.from_arrow(pa.Table.from_struct_array(records))
            table = tune_columns(
                frame,
                system[row].as_py(),
                grid[row].as_py(),
                protocol=protocol[row].as_py(),
                train_share=train_share[row].as_py(),
                **fixed_parameters(fixed[row].as_py()),
            )
            per_row.append(_elements(table))
        return list_per_row(per_row, ELEMENT_TYPE)

    tune_contests_udf.__name__ = CONTEST_UDF_NAME
    return one_at_a_time(tune_contests_udf)


def fixed_parameters(text: str | None) -> dict:
    """The ``fixed`` argument's parameters (JSON text of an object, or NULL)."""
    if text is None:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise DuckrateInputError(f"tune: fixed = {text}; expected an object of parameter values")
    return value


def _json_argument(name: str) -> str:
    """A macro argument given as JSON text or as a STRUCT, as JSON text (NULL stays NULL)."""
    return (
        f"CASE WHEN {name} IS NULL THEN NULL WHEN typeof({name}) = 'VARCHAR' THEN {name}::VARCHAR "
        f"ELSE to_json({name})::VARCHAR END"
    )


def macro_sql() -> str:
    """``CREATE TEMP MACRO tune(system, tbl, grid := NULL, <params>, priors := <empty view>) AS TABLE ...``."""
    params = ", ".join(f"{name} := {default}" for name, default in PARAMETERS)
    args = ", ".join(name for name, _ in PARAMETERS)
    parts = {"input": packed_matches_sql(key=None), "priors": PRIORS_SOURCE}
    return f"""
CREATE OR REPLACE TEMP MACRO tune(system, tbl, grid := NULL, fixed := NULL, {params}, priors := '{EMPTY_PRIORS_VIEW}') AS TABLE
WITH {collected_ctes(parts)}, {names_ctes()}
SELECT unnest({UDF_NAME}(k.t, c.n_input, c.n_priors, (SELECT pn.names FROM player_names AS pn),
              (SELECT ln.names FROM league_names AS ln), tbl, system, {_json_argument("grid")},
              {_json_argument("fixed")}, {args}), recursive := true)
FROM duckrate_token AS k, duckrate_collected AS c
"""


def contest_macro_sql() -> str:
    """``CREATE TEMP MACRO tune_contests(system, tbl, grid := NULL, fixed := NULL, protocol, train_share)``."""
    return f"""
CREATE OR REPLACE TEMP MACRO tune_contests(system, tbl, grid := NULL, fixed := NULL, protocol := {PROTOCOL.sql_default},
                                           train_share := {TRAIN_SHARE.sql_default}) AS TABLE
SELECT unnest({CONTEST_UDF_NAME}((SELECT list(r) FROM query_table(tbl) AS r), system, {_json_argument("grid")},
              {_json_argument("fixed")}, protocol, train_share), recursive := true)
"""


def team_macro_sql() -> str:
    """``CREATE TEMP MACRO tune_teams(system, tbl, grid := NULL, fixed := NULL, protocol, train_share)``: a team
    system tuned over a ``team_results`` table (the same UDF as ``tune_contests``: the table's rows as a frame)."""
    return contest_macro_sql().replace("MACRO tune_contests(", "MACRO tune_teams(")
