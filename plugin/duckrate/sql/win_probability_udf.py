"""The UDFs and TEMP table macros behind ``win_probability(tbl, player_a, player_b, ...)`` and
``win_matrix(tbl, top := 20, ...)``.

The macro brings the table to one row per player in DuckDB (a replay table: each player's row with the
largest ``seq``, only picked; a table of ratings as it is; a saved state's rows, for ``win_probability`` only
those of the named players), packs those rows into one list (:data:`~duckrate.evaluation.forecast_inputs.PACKED_COLUMNS`)
and hands it to the UDF, which calls :mod:`duckrate.evaluation.win_probability`; the macro unnests the
result. No maths here.
"""

from __future__ import annotations

import json
from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import sql_parameter_list
from duckrate.evaluation.forecast_inputs import PACKED_COLUMNS, RATINGS_FIELDS, REPLAY_FIELDS
from duckrate.evaluation.win_probability import (
    WIN_MATRIX_COLUMNS,
    WIN_PROBABILITY_COLUMNS,
    win_matrix_of,
    win_matrix_signature,
    win_probability_of,
    win_probability_signature,
)
from duckrate.sql._lists import list_per_row, list_values, struct_rows, whole
from duckrate.sql.sql_types import struct_sql

PROBABILITY_UDF = "duckrate_win_probability_udf"
MATRIX_UDF = "duckrate_win_matrix_udf"


def _return_type(columns: dict) -> str:
    return struct_sql(columns) + "[]"


PROBABILITY_RETURN_TYPE = _return_type(WIN_PROBABILITY_COLUMNS)
MATRIX_RETURN_TYPE = _return_type(WIN_MATRIX_COLUMNS)


def _arrow_type(columns: dict) -> pa.StructType:
    return pa.struct(pl.DataFrame(schema=columns).to_arrow().schema)


def _packed(lists, row: int) -> pl.DataFrame:
    elements = list_values(lists, row)
    if elements is None or not len(elements):
        return pl.DataFrame(schema=PACKED_COLUMNS)
    frame = cast(pl.DataFrame, pl.from_arrow(pa.Table.from_struct_array(elements)))
    return frame.select(pl.col(name).cast(kind) for name, kind in PACKED_COLUMNS.items())


def _names(text: str | None, which: str):
    if text is None:
        raise DuckrateInputError(f"win_probability: {which} is NULL; expected a player's name or a list of names")
    return json.loads(text)


def _udf(name: str, compute, columns: dict, leading: int):
    """A UDF ``(packed list, table name, <leading arguments>, parameters)``, the macro's named parameters as
    one STRUCT (``system``, ``league``, every forecast's; the set the macro was made with):
    ``compute(packed, table, *leading values, **parameters)`` per row."""
    element_type = _arrow_type(columns)

    def udf(packed, table, *arguments):
        packed, table = whole(packed), whole(table)
        arguments = [whole(column) for column in arguments]
        per_row = []
        for row in range(len(table)):
            values = [column[row].as_py() for column in arguments]
            given = values[leading] or {}
            result = compute(_packed(packed, row), str(table[row].as_py()), *values[:leading], **given)
            per_row.append(struct_rows(result.to_arrow().cast(pa.schema(element_type))))
        return list_per_row(per_row, element_type)

    udf.__name__ = name
    return udf


def _probability(packed: pl.DataFrame, table: str, player_a, player_b, **given) -> pl.DataFrame:
    return win_probability_of(packed, _names(player_a, "player_a"), _names(player_b, "player_b"), table, **given)


def make_probability_udf():
    return _udf(PROBABILITY_UDF, _probability, WIN_PROBABILITY_COLUMNS, leading=2)


def make_matrix_udf():
    return _udf(
        MATRIX_UDF,
        lambda packed, table, top, **given: win_matrix_of(packed, table, top=top, **given),
        WIN_MATRIX_COLUMNS,
        leading=1,
    )


# ---- the macros ------------------------------------------------------------------------------------------

_MARKERS = sorted(
    {
        "league",
        "system",
        *REPLAY_FIELDS,
        *RATINGS_FIELDS,
        "sd",
        "home_advantage",
        "method",
        "kind",
        "opponent",
        "value",
        "params",
    }
)


def _present(caller: str, name: str, what: str) -> str:
    """``t.<name>``, or an error naming it when the table lacks it."""
    message = f"{caller}: the table is missing column ''{name}''; expected {what}"
    return f"""CASE WHEN typeof(t.{name}) = '"NULL"' THEN error('{message}') ELSE t.{name} END"""


def _as_list(name: str) -> str:
    """A macro argument that is a name or a list of names, as a VARCHAR[]."""
    text = f"CAST(to_json({name}) AS VARCHAR)"
    return (
        f"from_json(CASE WHEN json_type({text}) = 'ARRAY' THEN {text} ELSE '[' || {text} || ']' END, '[\"VARCHAR\"]')"
    )


def _packed_sql(caller: str, only_named: bool) -> str:
    """The CTEs ending in ``duckrate_packed``: the table's rows as :data:`PACKED_COLUMNS` (every column
    qualified: the macro's parameters ``player_a``, ``system``, ``league``... shadow bare column names)."""
    markers = ", ".join(f"NULL AS {name}" for name in _MARKERS)
    replay = "a replay table (the output of a *_replay macro)"
    ratings = "a table of ratings (a leaderboard or a bt_fit result)"
    sides = " UNION ALL ".join(
        f"SELECT CAST(t.league AS VARCHAR) AS league, CAST(t.system AS VARCHAR) AS system, "
        f"{_present(caller, 'seq', replay)} AS seq, CAST(t.player_{side} AS VARCHAR) AS player, "
        f"CAST({_present(caller, f'rating_{side}_after', replay)} AS DOUBLE) AS rating, "
        f"CAST({_present(caller, f'sd_{side}_after', replay)} AS DOUBLE) AS sd FROM duckrate_table AS t "
        f"WHERE t.player_a IS NOT NULL"
        for side in ("a", "b")
    )
    named = "list_contains(n.names, t.player) AND (t.kind <> 'pair' OR list_contains(n.names, t.opponent))"
    state_filter = f"t.kind = 'league' OR ({named})" if only_named else "true"
    names = f"list_concat({_as_list('player_a')}, {_as_list('player_b')})" if only_named else "NULL::VARCHAR[]"
    null_state = "NULL::VARCHAR AS kind, NULL::VARCHAR AS opponent, NULL::DOUBLE[] AS value, NULL::VARCHAR AS params"
    return f"""duckrate_table AS (
    SELECT * FROM ((SELECT {markers} WHERE false) UNION ALL BY NAME (SELECT * FROM query_table(tbl)))
), duckrate_names AS (SELECT {names} AS names),
duckrate_sides AS ({sides}),
duckrate_packed AS (
    SELECT 'replay' AS source, s.league, s.system, s.player, s.last.rating AS rating, s.last.sd AS sd,
           NULL::DOUBLE AS home_advantage, NULL::VARCHAR AS method, {null_state}
    FROM (SELECT d.league, d.system, d.player, arg_max({{'rating': d.rating, 'sd': d.sd}}, d.seq) AS last
          FROM duckrate_sides AS d GROUP BY d.league, d.system, d.player) AS s
    UNION ALL
    SELECT 'ratings', CAST(t.league AS VARCHAR), CAST(t.system AS VARCHAR),
           CAST({_present(caller, "player", ratings)} AS VARCHAR), CAST({_present(caller, "rating", ratings)} AS DOUBLE),
           CAST(t.sd AS DOUBLE), CAST(t.home_advantage AS DOUBLE), CAST(t.method AS VARCHAR), {null_state}
    FROM duckrate_table AS t
    WHERE t.player_a IS NULL AND (t.kind IS NULL OR (t.method IS NOT NULL AND t.kind = 'player'))
    UNION ALL
    SELECT 'state', CAST(t.league AS VARCHAR), CAST(t.system AS VARCHAR), CAST(t.player AS VARCHAR), NULL, NULL, NULL,
           NULL, CAST(t.kind AS VARCHAR), CAST(t.opponent AS VARCHAR), CAST(t.value AS DOUBLE[]), CAST(t.params AS VARCHAR)
    FROM duckrate_table AS t, duckrate_names AS n
    WHERE t.kind IS NOT NULL AND t.method IS NULL AND ({state_filter})
)"""


def _pack() -> str:
    fields = ", ".join(f"{name} := p.{name}" for name in PACKED_COLUMNS)
    return f"(SELECT list(struct_pack({fields})) FROM duckrate_packed AS p)"


def _parameters_struct(parameters) -> str:
    """The macro's named parameters as one STRUCT value for the UDF."""
    return "{" + ", ".join(f"'{p.name}': {p.name}" for p in parameters) + "}"


def probability_macro_sql() -> str:
    """``CREATE TEMP MACRO win_probability(tbl, player_a, player_b, system := NULL, league := NULL, ...)``, with
    the parameters of every forecast registered now."""
    signature = win_probability_signature()
    args = _parameters_struct(signature.parameters)
    return f"""CREATE OR REPLACE TEMP MACRO win_probability(tbl, player_a, player_b, {sql_parameter_list(signature.parameters)}) AS TABLE
WITH {_packed_sql(signature.name, only_named=True)}
SELECT unnest({PROBABILITY_UDF}({_pack()}, tbl, CAST(to_json(player_a) AS VARCHAR), CAST(to_json(player_b) AS VARCHAR), {args}), recursive := true)
"""


def matrix_macro_sql() -> str:
    """``CREATE TEMP MACRO win_matrix(tbl, top := 20, system := NULL, league := NULL, ...)``, with the
    parameters of every forecast registered now."""
    signature = win_matrix_signature()
    top, *rest = signature.parameters
    args = _parameters_struct(rest)
    return f"""CREATE OR REPLACE TEMP MACRO win_matrix(tbl, {sql_parameter_list(signature.parameters)}) AS TABLE
WITH {_packed_sql(signature.name, only_named=False)}
SELECT unnest({MATRIX_UDF}({_pack()}, tbl, {top.name}, {args}), recursive := true)
"""
