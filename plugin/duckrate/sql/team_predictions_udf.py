"""The UDF and TEMP table macros behind ``predict_win(tbl, teams, ...)``, ``predict_rank``, ``predict_draw``,
``match_quality`` and ``balance_teams(tbl, players, n_teams := 2, ...)``.

The macro brings the table to the rows :mod:`duckrate.evaluation.team_predictions` reads (a team replay:
each named player's row with the largest ``seq``; a leaderboard's rows of the named players; a saved state's
league rows and its rows of the named players), packs them into one list and hands it to the UDF with the
teams (or players) as JSON and the parameters as one STRUCT; the macro unnests the result. No maths here.
The macros' parameters are every team system's, NULL by default (the table's saved parameters, else the
system's defaults).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter
from duckrate.evaluation import team_predictions
from duckrate.evaluation.team_predictions import BALANCE_COLUMNS, PREDICTION_COLUMNS, RATED_COLUMNS
from duckrate.sql._lists import list_per_row, list_values, struct_rows, whole
from duckrate.sql.sql_types import struct_sql
from duckrate.systems import team

UDF_NAME = "duckrate_team_prediction_udf"
# What each macro returns: (Python function, its columns).
_OUTPUTS: dict[str, tuple[Callable, dict]] = {
    "predict_win": (team_predictions.predict_win, PREDICTION_COLUMNS),
    "predict_rank": (team_predictions.predict_rank, PREDICTION_COLUMNS),
    "predict_draw": (team_predictions.predict_draw, {"p_draw": pl.Float64}),
    "match_quality": (team_predictions.match_quality, {"quality": pl.Float64}),
    "balance_teams": (team_predictions.balance_teams, BALANCE_COLUMNS),
}
# One return type for all: every column any macro returns (each macro selects its own).
_ALL_COLUMNS = {name: kind for _, columns in _OUTPUTS.values() for name, kind in columns.items()}
_ELEMENT = pa.struct(pl.DataFrame(schema=_ALL_COLUMNS).to_arrow().schema)


RETURN_TYPE = struct_sql(_ALL_COLUMNS) + "[]"


def parameters() -> tuple[Parameter, ...]:
    """Every registered team system's parameters, by name (the first declaration of each), defaulting to NULL."""
    seen: dict[str, Parameter] = {}
    for system in team.registered():
        for parameter in system.parameters:
            seen.setdefault(parameter.name, parameter)
    return tuple(seen.values())


def _rated(lists, row: int) -> pl.DataFrame:
    elements = list_values(lists, row)
    if elements is None or not len(elements):
        return pl.DataFrame(schema=RATED_COLUMNS)
    frame = cast(pl.DataFrame, pl.from_arrow(pa.Table.from_struct_array(elements)))
    return frame.select(pl.col(name).cast(kind) for name, kind in RATED_COLUMNS.items())


def _result(what: str, rated: pl.DataFrame, table: str, names: str | None, extra: dict, given: dict) -> pl.DataFrame:
    function, columns = _OUTPUTS[what]
    if names is None:
        raise DuckrateInputError(f"{what}: {'players' if what == 'balance_teams' else 'teams'} is NULL; expected names")
    listed = json.loads(names)
    options = {key: value for key, value in {**extra, **given}.items() if value is not None}
    try:
        value = function(rated, listed, **options)
    except DuckrateInputError as error:
        raise DuckrateInputError(f"{error} (table {table!r})") from None
    frame = value if isinstance(value, pl.DataFrame) else pl.DataFrame({next(iter(columns)): [value]}, schema=columns)
    return frame.with_columns(
        pl.lit(None, dtype=kind).alias(name) for name, kind in _ALL_COLUMNS.items() if name not in frame.columns
    ).select(pl.col(name).cast(kind) for name, kind in _ALL_COLUMNS.items())


def make_udf():
    """``(what, packed rows, table name, names as JSON, extra STRUCT, parameters STRUCT) -> rows``."""

    def udf(what, packed, table, names, extra, given):
        what, packed, table, names, extra, given = (whole(a) for a in (what, packed, table, names, extra, given))
        per_row = []
        for row in range(len(table)):
            result = _result(
                str(what[row].as_py()),
                _rated(packed, row),
                str(table[row].as_py()),
                names[row].as_py(),
                extra[row].as_py() or {},
                given[row].as_py() or {},
            )
            per_row.append(struct_rows(result.to_arrow().cast(pa.schema(_ELEMENT))))
        return list_per_row(per_row, _ELEMENT)

    udf.__name__ = UDF_NAME
    return udf


_MARKERS = ("league", "system", "player", "rating", "sd", "rating_after", "sd_after", "seq", "kind", "value", "params")


def _rated_sql(names: str) -> str:
    """The CTEs ending in ``duckrate_rated``: the table's rows the forecasts read (every column qualified: the
    macro's parameters shadow bare column names)."""
    markers = ", ".join(f"NULL AS {name}" for name in _MARKERS)
    keep = "list_contains(n.names, CAST(t.player AS VARCHAR))"
    nothing = "NULL::VARCHAR AS kind, NULL::DOUBLE[] AS value, NULL::VARCHAR AS params"
    return f"""duckrate_table AS (
    SELECT * FROM ((SELECT {markers} WHERE false) UNION ALL BY NAME (SELECT * FROM query_table(tbl)))
), duckrate_names AS (SELECT {names} AS names),
duckrate_rated AS (
    SELECT 'replay' AS source, CAST(t.league AS VARCHAR) AS league, CAST(t.system AS VARCHAR) AS system,
           CAST(t.player AS VARCHAR) AS player, arg_max(CAST(t.rating_after AS DOUBLE), t.seq) AS rating,
           arg_max(CAST(t.sd_after AS DOUBLE), t.seq) AS sd, {nothing}
    FROM duckrate_table AS t, duckrate_names AS n
    WHERE t.kind IS NULL AND t.rating_after IS NOT NULL AND {keep}
    GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT 'ratings', CAST(t.league AS VARCHAR), CAST(t.system AS VARCHAR), CAST(t.player AS VARCHAR),
           CAST(t.rating AS DOUBLE), CAST(t.sd AS DOUBLE), {nothing}
    FROM duckrate_table AS t, duckrate_names AS n
    WHERE t.kind IS NULL AND t.rating_after IS NULL AND t.rating IS NOT NULL AND {keep}
    UNION ALL
    SELECT 'state', CAST(t.league AS VARCHAR), CAST(t.system AS VARCHAR), CAST(t.player AS VARCHAR), NULL, NULL,
           CAST(t.kind AS VARCHAR), CAST(t.value AS DOUBLE[]), CAST(t.params AS VARCHAR)
    FROM duckrate_table AS t, duckrate_names AS n
    WHERE t.kind = 'league' OR (t.kind = 'player' AND {keep})
)"""


def _pack() -> str:
    fields = ", ".join(f"{name} := r.{name}" for name in RATED_COLUMNS)
    return f"(SELECT list(struct_pack({fields})) FROM duckrate_rated AS r)"


def macro_sql(what: str) -> str:
    """``CREATE TEMP MACRO <what>(tbl, teams | players, ..., system := NULL, league := NULL, <parameters> := NULL)``."""
    own = parameters()
    listed = ", ".join(f"{p.name} := NULL" for p in own)
    given = "{" + ", ".join(f"'{p.name}': {p.name}" for p in own) + "}"
    if what == "balance_teams":
        head, names = "players, n_teams := 2, exact := NULL, ", "CAST(players AS VARCHAR[])"
        extra, argument = "{'n_teams': n_teams, 'exact': exact, 'system': system, 'league': league}", "players"
    else:
        head, names = "teams, ", "flatten(CAST(teams AS VARCHAR[][]))"
        extra, argument = "{'system': system, 'league': league}", "teams"
    columns = ", ".join(f"o.{name}" for name in _OUTPUTS[what][1])  # qualified: parameters shadow bare names
    return f"""CREATE OR REPLACE TEMP MACRO {what}(tbl, {head}system := NULL::VARCHAR, league := NULL::VARCHAR, {listed}) AS TABLE
WITH {_rated_sql(names)}
SELECT {columns} FROM (
    SELECT unnest({UDF_NAME}('{what}', {_pack()}, tbl, CAST(to_json({argument}) AS VARCHAR), {extra}, {given}), recursive := true)
) AS o
"""


def macro_sqls() -> list[str]:
    return [macro_sql(what) for what in _OUTPUTS]
