"""The marts' registry (:data:`MARTS`: each mart's fields, parameters with their SQL defaults, output
columns) and the UDF pattern for a mart computed in Python: the macro packs the needed columns into one
list, the UDF hands them to the Polars function in :mod:`duckrate.evaluation`, and the macro unnests the
result. Every mart reads any replay table (a ``system`` column is optional: rows without one take the
macro's ``system :=`` argument, NULL by default). Most marts are SQL (:mod:`.mart_sql`); only the contest
metrics still go through a UDF.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter
from duckrate.evaluation.calibration import BINS, MAX_SD, MIN_GAMES, WARMUP
from duckrate.evaluation.loss_by_gap import BIN_WIDTH
from duckrate.evaluation.loss_curve import POINTS
from duckrate.sql._lists import map_list_rows, whole

# Columns of the replay table the marts read; absent optional ones arrive as NULL.
OPTIONAL_REPLAY_COLUMNS = "SELECT NULL::VARCHAR AS system, NULL::VARCHAR AS league WHERE false"


@dataclass(frozen=True)
class Mart:
    """A mart function: what it reads, its parameters, what it returns."""

    name: str
    fields: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    returns: tuple[tuple[str, str], ...]
    compute: Callable[..., pl.DataFrame] | None  # None: computed in SQL (:mod:`.mart_sql`), no UDF
    # returns: the output columns; their types type the UDF's result (a SQL mart's last_played_at keeps the
    # replay's own type, whatever is written here)

    @property
    def udf_name(self) -> str:
        return f"duckrate_{self.name}_udf"

    @property
    def return_type(self) -> str:
        return "STRUCT(" + ", ".join(f"{name} {kind}" for name, kind in self.returns) + ")[]"


def number_parameter(mart: str, name: str, value) -> float:
    """A mart parameter as a float; a NULL, text or boolean value is a DuckrateInputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected a number")
    return float(value)


def count_parameter(mart: str, name: str, value, minimum: int) -> int:
    """A mart parameter that must be a whole number >= ``minimum``."""
    number = number_parameter(mart, name, value)
    if not (number.is_integer() and number >= minimum):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected an integer >= {minimum}")
    return int(number)


# Fields the marts read, by kind: names pass as they are, counters must be integers, the rest numbers.
_NAME_FIELDS = ("system", "league", "player", "player_a", "player_b")
_INTEGER_FIELDS = ("seq", "rank")


def check_column_types(mart: str, schema: pa.Schema) -> None:
    """Raise :class:`DuckrateInputError` naming the first column of ``schema`` (a replay table's, or the
    fields of it a mart reads) whose type a mart cannot read: names pass as they are, counters must be
    integers, the rest numbers. A column of untyped NULLs (a field the table lacks) passes."""
    for name in schema.names:
        kind = schema.field(name).type
        if pa.types.is_null(kind) or name in _NAME_FIELDS:
            continue
        numeric = pa.types.is_integer(kind) or (
            name not in _INTEGER_FIELDS and (pa.types.is_floating(kind) or pa.types.is_decimal(kind))
        )
        if not numeric:
            expected = "an integer" if name in _INTEGER_FIELDS else "a number (DOUBLE)"
            raise DuckrateInputError(
                f"{mart}: column '{name}' has type {kind}; expected {expected} (a replay table's column)"
            )


def _replay_frame(mart: Mart, elements: pa.StructArray) -> pl.DataFrame:
    """The packed replay rows as a frame; a column the table lacks (an untyped NULL from the macro's
    marker relation) is left out, so the mart's own check names it; a column of the wrong type is an error."""
    table = pa.Table.from_struct_array(elements)
    check_column_types(mart.name, table.schema)
    present = [
        name
        for name in table.column_names
        if not pa.types.is_null(table.schema.field(name).type) or name in ("system", "league")
    ]
    missing = [name for name in mart.fields if name not in present]
    if missing:
        raise DuckrateInputError(
            f"{mart.name}: the table is missing column(s) {', '.join(map(repr, missing))}; expected a replay table "
            f"(the output of a *_replay macro) with columns {', '.join(mart.fields)}"
        )
    frame = cast(pl.DataFrame, pl.from_arrow(table.select(present)))
    return frame.with_columns(pl.col(name).cast(pl.Utf8) for name in ("system", "league") if name in frame.columns)


MARTS = (
    Mart(
        name="leaderboard",
        fields=(
            "system",
            "league",
            "seq",
            "player_a",
            "player_b",
            "rating_a_after",
            "rating_b_after",
            "sd_a_after",
            "sd_b_after",
        ),
        parameters=(),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("player", "VARCHAR"),
            ("rank", "BIGINT"),
            ("rating", "DOUBLE"),
            ("sd", "DOUBLE"),
            ("lower", "DOUBLE"),
            ("upper", "DOUBLE"),
            ("games", "BIGINT"),
            ("last_played_at", "ANY"),
            ("rank_upper", "BIGINT"),
            ("rank_lower", "BIGINT"),
            ("tier", "BIGINT"),
        ),
        compute=None,
    ),
    Mart(
        name="calibration_bins",
        fields=("system", "league", "seq", "score_a", "expected_a"),
        parameters=(BINS,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("bin", "BIGINT"),
            ("n", "BIGINT"),
            ("mean_expected", "DOUBLE"),
            ("mean_score", "DOUBLE"),
            ("lower", "DOUBLE"),
            ("upper", "DOUBLE"),
        ),
        compute=None,
    ),
    Mart(
        name="calibration_summary",
        fields=(
            "system",
            "league",
            "seq",
            "player_a",
            "player_b",
            "score_a",
            "expected_a",
            "sd_a_before",
            "sd_b_before",
        ),
        parameters=(MIN_GAMES, MAX_SD, WARMUP),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("n", "BIGINT"),
            ("log_loss", "DOUBLE"),
            ("brier", "DOUBLE"),
            ("accuracy", "DOUBLE"),
            ("n_established", "BIGINT"),
            ("log_loss_established", "DOUBLE"),
        ),
        compute=None,
    ),
    Mart(
        name="loss_curve",
        fields=("system", "league", "seq", "player_a", "player_b", "score_a", "expected_a"),
        parameters=(POINTS,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("t", "BIGINT"),
            ("t_over_n", "DOUBLE"),
            ("mean_log_loss", "DOUBLE"),
        ),
        compute=None,
    ),
    Mart(
        name="loss_by_gap",
        fields=("system", "league", "rating_a_before", "rating_b_before", "score_a", "expected_a"),
        parameters=(BIN_WIDTH,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("gap_bin", "DOUBLE"),
            ("n", "BIGINT"),
            ("mean_log_loss", "DOUBLE"),
            ("share_of_total_loss", "DOUBLE"),
        ),
        compute=None,
    ),
)


def mart_table(mart: Mart, elements: pa.StructArray, values: list) -> pa.Table:
    """A UDF mart's rows over the replay rows ``elements`` (one struct per row; the packed list of the macro,
    or one group's rows on Spark) with the parameter ``values`` (in :attr:`Mart.parameters` order): its
    Polars function, typed as :attr:`Mart.returns`."""
    assert mart.compute is not None  # a UDF mart
    frame = _replay_frame(mart, elements)
    result = mart.compute(frame, *values).select([name for name, _ in mart.returns])
    return result.to_arrow().cast(returns_schema(mart))


def returns_schema(mart: Mart) -> pa.Schema:
    """A UDF mart's output columns (:attr:`Mart.returns`) as an Arrow schema."""
    return pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in mart.returns])


def make_udf(mart: Mart):
    """``(packed replay list, parameters...) -> list of mart rows``."""
    arrow_type = pa.struct(list(returns_schema(mart)))

    def mart_udf(*columns):  # (replay list, parameters...); a bare *args keeps DuckDB from demanding more
        replay, *parameters = [whole(column) for column in columns]

        def mart_row(row: int, elements: pa.Array) -> pa.StructArray:
            values = [column[row].as_py() for column in parameters]
            return mart_table(mart, elements, values).to_struct_array().combine_chunks()

        return map_list_rows(replay, mart_row, arrow_type)

    mart_udf.__name__ = mart.udf_name
    return mart_udf


_ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64()}


def replay_source(mart: Mart) -> str:
    """The replay table ``tbl`` as a subquery with every field of ``mart`` (a field the table lacks arrives
    as an untyped NULL column, reported missing by name) and ``system`` labelled: ``system :=`` labels the
    rows of a replay table that has no system column (or a NULL one)."""
    markers = ", ".join(f"NULL AS {name}" for name in (*mart.fields, "played_at") if name not in ("system", "league"))
    return (
        f"(SELECT * REPLACE (coalesce(u.system, CAST(system AS VARCHAR)) AS system) FROM (({OPTIONAL_REPLAY_COLUMNS}) "
        f"UNION ALL BY NAME (SELECT {markers} WHERE false) UNION ALL BY NAME (SELECT * FROM query_table(tbl))) AS u)"
    )


def signature(mart: Mart) -> str:
    """``tbl, <parameter> := <default>, ..., system := NULL``: a mart macro's parameters, from :data:`MARTS`."""
    return "tbl" + "".join(f", {p.name} := {p.sql_default}" for p in mart.parameters) + ", system := NULL"


def macro_sql(mart: Mart) -> str:
    """``CREATE TEMP MACRO <mart>(tbl, <params>, system := NULL) AS TABLE ...`` over the mart's UDF. ``system``
    names the system of a replay table without a ``system`` column (e.g. ``contest_metrics('replay',
    system := 'elo_mmr')``)."""
    args = "".join(f", {p.name}" for p in mart.parameters)
    fields = ", ".join(f"{name} := r.{name}" for name in mart.fields)
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH packed AS (SELECT list(struct_pack({fields})) AS replay_list FROM {replay_source(mart)} AS r),
rows AS (SELECT unnest({mart.udf_name}(packed.replay_list{args}), recursive := true) FROM packed)
SELECT * FROM rows
"""
