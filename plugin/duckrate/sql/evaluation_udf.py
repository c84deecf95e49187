"""UDFs and TEMP macros for the marts: ``leaderboard``, ``calibration_bins``, ``calibration_summary``,
``loss_curve``, each over any replay table (a ``system`` column is optional: rows without one take the
macro's ``system :=`` argument, NULL by default).

Same pattern as the replays: the macro packs the needed columns into one list, the UDF hands them to
the Polars function in :mod:`duckrate.evaluation`, and the macro unnests the result. The leaderboard's
``last_played_at`` keeps the replay's own type (TIMESTAMP, DATE or integer) by joining the replay row
back on ``seq`` rather than passing times through Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

import polars as pl
import pyarrow as pa

from .. import evaluation
from ..errors import DuckrateInputError
from ._lists import map_list_rows, whole

# Columns of the replay table the marts read; absent optional ones arrive as NULL.
OPTIONAL_REPLAY_COLUMNS = "SELECT NULL::VARCHAR AS system, NULL::VARCHAR AS league WHERE false"


@dataclass(frozen=True)
class Mart:
    """A mart function: what it reads, its parameters (name, SQL default), what it returns."""

    name: str
    fields: tuple[str, ...]
    parameters: tuple[tuple[str, str], ...]
    returns: tuple[tuple[str, str], ...]
    compute: Callable[..., pl.DataFrame] | None  # None: computed in SQL (:mod:`.mart_sql`), no UDF

    @property
    def udf_name(self) -> str:
        return f"duckrate_{self.name}_udf"

    @property
    def return_type(self) -> str:
        return "STRUCT(" + ", ".join(f"{name} {kind}" for name, kind in self.returns) + ")[]"


def _max_sd(value):
    """A number, or a per-system bound given as a DuckDB MAP (a list of pairs) or STRUCT (a dict)."""
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        pairs = value.items() if isinstance(value, dict) else value
        return {system: None if bound is None else _number("calibration_summary", "max_sd", bound) for system, bound in pairs}
    return _number("calibration_summary", "max_sd", value)


def _number(mart: str, name: str, value) -> float:
    """A mart parameter as a float; a NULL, text or boolean value is a DuckrateInputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected a number")
    return float(value)


def _count(mart: str, name: str, value, minimum: int) -> int:
    """A mart parameter that must be a whole number >= ``minimum``."""
    number = _number(mart, name, value)
    if not (number.is_integer() and number >= minimum):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected an integer >= {minimum}")
    return int(number)


# Fields the marts read, by kind: names pass as they are, counters must be integers, the rest numbers.
_NAME_FIELDS = ("system", "league", "player", "player_a", "player_b")
_INTEGER_FIELDS = ("seq", "rank")


def _replay_frame(mart: "Mart", elements: pa.StructArray) -> pl.DataFrame:
    """The packed replay rows as a frame; a column the table lacks (an untyped NULL from the macro's
    marker relation) is left out, so the mart's own check names it; a column of the wrong type is an error."""
    table = pa.Table.from_struct_array(elements)
    for name in table.column_names:
        kind = table.schema.field(name).type
        if pa.types.is_null(kind) or name in _NAME_FIELDS:
            continue
        numeric = pa.types.is_integer(kind) or (name not in _INTEGER_FIELDS and (pa.types.is_floating(kind) or pa.types.is_decimal(kind)))
        if not numeric:
            expected = "an integer" if name in _INTEGER_FIELDS else "a number (DOUBLE)"
            raise DuckrateInputError(f"{mart.name}: column '{name}' has type {kind}; expected {expected} (a replay table's column)")
    present = [name for name in table.column_names if not pa.types.is_null(table.schema.field(name).type) or name in ("system", "league")]
    missing = [name for name in mart.fields if name not in present]
    if missing:
        raise DuckrateInputError(
            f"{mart.name}: the table is missing column(s) {', '.join(map(repr, missing))}; expected a replay table "
            f"(the output of a *_replay macro) with columns {', '.join(mart.fields)}"
        )
    frame = pl.from_arrow(table.select(present))
    return frame.with_columns(pl.col(name).cast(pl.Utf8) for name in ("system", "league") if name in frame.columns)


MARTS = (
    Mart(
        name="leaderboard",
        fields=("system", "league", "seq", "player_a", "player_b", "rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after"),
        parameters=(),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("player", "VARCHAR"), ("rank", "BIGINT"),
                 ("rating", "DOUBLE"), ("sd", "DOUBLE"), ("lower", "DOUBLE"), ("upper", "DOUBLE"),
                 ("games", "BIGINT"), ("last_seq", "BIGINT")),
        compute=None,
    ),
    Mart(
        name="calibration_bins",
        fields=("system", "league", "seq", "score_a", "expected_a"),
        parameters=(("bins", "10"),),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("bin", "BIGINT"), ("n", "BIGINT"),
                 ("mean_expected", "DOUBLE"), ("mean_score", "DOUBLE"), ("lower", "DOUBLE"), ("upper", "DOUBLE")),
        compute=None,
    ),
    Mart(
        name="calibration_summary",
        fields=("system", "league", "seq", "player_a", "player_b", "score_a", "expected_a", "sd_a_before", "sd_b_before"),
        parameters=(("min_games", "10"), ("max_sd", "NULL"), ("warmup", "0.0")),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("n", "BIGINT"), ("log_loss", "DOUBLE"),
                 ("brier", "DOUBLE"), ("accuracy", "DOUBLE"), ("n_established", "BIGINT"),
                 ("log_loss_established", "DOUBLE")),
        compute=None,
    ),
    Mart(
        name="loss_curve",
        fields=("system", "league", "seq", "player_a", "player_b", "score_a", "expected_a"),
        parameters=(("points", "200"),),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("t", "BIGINT"), ("t_over_n", "DOUBLE"),
                 ("mean_log_loss", "DOUBLE")),
        compute=None,
    ),
)


def make_udf(mart: Mart):
    """``(packed replay list, parameters...) -> list of mart rows``."""
    arrow_type = pa.struct([(name, _ARROW_TYPES[kind]) for name, kind in mart.returns])

    def mart_udf(*columns):  # (replay list, parameters...); a bare *args keeps DuckDB from demanding more
        replay, *parameters = [whole(column) for column in columns]

        def mart_row(row: int, elements: pa.Array) -> pa.StructArray:
            frame = _replay_frame(mart, elements)
            values = [column[row].as_py() for column in parameters]
            result = mart.compute(frame, *values).select([name for name, _ in mart.returns])
            return result.to_arrow().cast(pa.schema(arrow_type)).to_struct_array().combine_chunks()

        return map_list_rows(replay, mart_row, arrow_type)

    mart_udf.__name__ = mart.udf_name
    return mart_udf


_ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64()}


def _played_at(mart: str) -> str:
    """``r.played_at``, or a clear error when the table has no such column (an untyped NULL marker)."""
    message = f"{mart}: the table is missing column ''played_at''; expected a replay table (the output of a *_replay macro)"
    return f"""CASE WHEN typeof(r.played_at) = '"NULL"' THEN error('{message}') ELSE r.played_at END"""


def replay_source(mart: Mart) -> str:
    """The replay table ``tbl`` as a subquery with every field of ``mart`` (a field the table lacks arrives
    as an untyped NULL column, reported missing by name) and ``system`` labelled: ``system :=`` labels the
    rows of a replay table that has no system column (or a NULL one)."""
    markers = ", ".join(f"NULL AS {name}" for name in (*mart.fields, "played_at") if name not in ("system", "league"))
    return (f"(SELECT * REPLACE (coalesce(u.system, CAST(system AS VARCHAR)) AS system) FROM (({OPTIONAL_REPLAY_COLUMNS}) "
            f"UNION ALL BY NAME (SELECT {markers} WHERE false) UNION ALL BY NAME (SELECT * FROM query_table(tbl))) AS u)")


def macro_sql(mart: Mart) -> str:
    """``CREATE TEMP MACRO <mart>(tbl, <params>, system := NULL) AS TABLE ...``. ``system`` names the system
    of a replay table without a ``system`` column (e.g. ``leaderboard('replay_elo', system := 'elo')``).
    A mart whose UDF returns ``last_seq`` (the contest leaderboard) gets the time of that replay row joined
    back in the replay's own type (TIMESTAMP, DATE or integer) as ``last_played_at``; a contest replay has
    one row per player of a contest, hence the DISTINCT."""
    params = "".join(f", {name} := {default}" for name, default in mart.parameters) + ", system := NULL"
    args = "".join(f", {name}" for name, _ in mart.parameters)
    fields = ", ".join(f"{name} := r.{name}" for name in mart.fields)
    source = replay_source(mart)
    rows = f"""
WITH packed AS (SELECT list(struct_pack({fields})) AS replay_list FROM {source} AS r),
rows AS (SELECT unnest({mart.udf_name}(packed.replay_list{args}), recursive := true) FROM packed)"""
    if any(name == "last_seq" for name, _ in mart.returns):
        columns = ", ".join(f"o.{name}" for name, _ in mart.returns if name != "last_seq")
        select = f"""
SELECT {columns}, t.played_at AS last_played_at
FROM rows AS o
JOIN (SELECT DISTINCT r.league, r.system, r.seq, {_played_at(mart.name)} AS played_at FROM {source} AS r) AS t
  ON t.seq = o.last_seq AND t.league IS NOT DISTINCT FROM o.league AND t.system IS NOT DISTINCT FROM o.system"""
    else:
        select = "\nSELECT * FROM rows"
    return f"CREATE OR REPLACE TEMP MACRO {mart.name}(tbl{params}) AS TABLE{rows}{select}\n"
