"""The marts' table macros in DuckDB: each SQL mart's query (:mod:`duckrate.marts.queries`, written once for
DuckDB and Spark) rendered in DuckDB's spelling (:class:`DuckDBDialect`), over the replay table's columns
and the macro's parameters, both checked in SQL; the Python mart (``contest_metrics``) over its UDF
(:mod:`.evaluation_udf`).

They stream and run in parallel like any DuckDB query and spill to disk under ``memory_limit``; nothing is
packed into a list for Python but the leaderboards' ratings for their interval ranks (:mod:`.ranks_udf`).

Contract: a replay table without a ``system`` column takes ``system :=``; a missing or mistyped column, a
NULL or NaN forecast or an invalid parameter is an error that names it; an empty table gives no rows.
"""

from __future__ import annotations

from duckrate.marts import Input, Mart
from duckrate.marts.dialect import Dialect
from duckrate.marts.parameters import BIN_WIDTH
from duckrate.sql.evaluation_udf import macro_sql as udf_macro_sql
from duckrate.sql.evaluation_udf import replay_source, signature
from duckrate.sql.ranks_udf import ranks_sql

_INTEGER_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)
_INTEGER_LIST = ", ".join(f"'{name}'" for name in _INTEGER_TYPES)
_NUMBER_CHECK = f"typeof({{x}}) IN ({_INTEGER_LIST}, 'FLOAT', 'DOUBLE') OR typeof({{x}}) LIKE 'DECIMAL%'"
_QUOTE = "''''"  # a SQL string literal holding one single quote


class DuckDBDialect(Dialect):
    """DuckDB's spellings; ``mart`` names the macro in its errors."""

    def __init__(self, mart: Mart):
        self.mart = mart

    def double(self, value: float) -> str:
        return f"CAST({float(value)!r} AS DOUBLE)"  # a bare 1.5 would be a DECIMAL in DuckDB

    def error(self, message: str) -> str:
        return f"error({message})"

    def integer_div(self, numerator: str, denominator: str) -> str:
        return f"(({numerator}) // ({denominator}))"

    def floor_double(self, value: str) -> str:
        return f"floor({value})"

    def struct(self, **fields: str) -> str:
        return "struct_pack(" + ", ".join(f"{name} := {value}" for name, value in fields.items()) + ")"

    def bound_by_system(self, parameter: str, system: str) -> str:
        """From the macro's argument (NULL, a number, or a MAP / STRUCT from system to number; its kind in
        ``p.<parameter>_kind``)."""
        json = f"to_json({parameter})"
        return (
            f"CASE WHEN p.{parameter}_kind = 'none' THEN NULL "
            f"WHEN p.{parameter}_kind = 'map' THEN CAST({json} AS MAP(VARCHAR, DOUBLE))[{system}] "
            f"ELSE CAST({json} AS DOUBLE) END"
        )

    def shown(self, parameter: str) -> str:
        return f"CAST(to_json({parameter}) AS VARCHAR)"


def _column(mart: Mart, name: str, kind: str, not_null: bool = False) -> str:
    """``r.<name>``, or an error naming it when the table lacks it, it has the wrong type or (``not_null``)
    it is NULL. ``kind``: 'integer', 'number' or 'any'."""
    missing = (
        f"{mart.name}: the table is missing column(s) ''{name}''; expected a replay table (the output of a "
        f"*_replay macro) with columns {', '.join(mart.fields)}"
    )
    cases = [f"""WHEN typeof(r.{name}) = '"NULL"' THEN error('{missing}')"""]
    if kind != "any":
        expected = "an integer" if kind == "integer" else "a number (DOUBLE)"
        ok = f"typeof(r.{name}) IN ({_INTEGER_LIST})" if kind == "integer" else _NUMBER_CHECK.format(x=f"r.{name}")
        cases.append(
            f"WHEN NOT ({ok}) THEN error('{mart.name}: column ''{name}'' has type ' || CASE typeof(r.{name}) WHEN 'VARCHAR' THEN 'string' WHEN 'BOOLEAN' THEN 'bool' ELSE typeof(r.{name}) END || "
            f"'; expected {expected} (a replay table''s column)')"
        )
    if not_null:
        cases.append(f"WHEN r.{name} IS NULL THEN error('{mart.name}: expected {name} without nulls')")
    return f"CASE {' '.join(cases)} ELSE r.{name} END"


def _forecast(mart: Mart, name: str) -> str:
    """A forecast or score column as DOUBLE, checked: non-null, not NaN, in [0, 1]."""
    value = f"CAST({_column(mart, name, 'number')} AS DOUBLE)"
    return (
        f"CASE WHEN {value} IS NULL OR isnan({value}) THEN error('{mart.name}: expected {name} without nulls or NaN') "
        f"WHEN {value} < 0 OR {value} > 1 THEN error('{mart.name}: expected {name} within [0, 1], found ' || {value}) "
        f"ELSE {value} END"
    )


def _as_it_is(mart: Mart, name: str) -> str:
    """A column read in its own type (``played_at``, ``match_id``), or an error naming it when the table lacks it."""
    message = (
        f"{mart.name}: the table is missing column ''{name}''; expected a replay table (the output of a *_replay macro)"
    )
    return f"""CASE WHEN typeof(r.{name}) = '"NULL"' THEN error('{message}') ELSE r.{name} END"""


def _input(mart: Mart, column: Input) -> str:
    """An input column of ``r``, checked as its kind asks."""
    name = column.name
    if column.kind == "seq":
        value = _column(mart, name, "integer", not_null=True)
    elif column.kind == "text":
        value = f"CAST({_column(mart, name, 'any')} AS VARCHAR)"
    elif column.kind == "number":
        value = f"CAST({_column(mart, name, 'number')} AS DOUBLE)"
    elif column.kind == "forecast":
        value = _forecast(mart, name)
    else:
        value = _as_it_is(mart, name)
    if column.parameter is not None:
        value = f"CASE WHEN {column.parameter} IS NULL THEN NULL ELSE {value} END"
    return f"{value} AS {name}"


def _integer_parameter(mart: Mart, name: str, minimum: int) -> str:
    """The macro parameter ``name`` as BIGINT, or an error that shows the value given (as the Python path
    words it: text quoted, NULL as None) when it is not a whole number >= ``minimum``."""
    given = (
        f"'{mart.name}: parameter {name} = ' || CASE WHEN {name} IS NULL THEN 'None' "
        f"WHEN typeof({name}) = 'VARCHAR' THEN {_QUOTE} || CAST({name} AS VARCHAR) || {_QUOTE} ELSE CAST({name} AS VARCHAR) END"
    )
    return (
        f"CASE WHEN {name} IS NULL OR NOT ({_NUMBER_CHECK.format(x=name)}) THEN error({given} || '; expected a number') "
        f"WHEN CAST({name} AS DOUBLE) < {minimum} OR CAST({name} AS DOUBLE) <> floor(CAST({name} AS DOUBLE)) "
        f"THEN error({given} || '; expected an integer >= {minimum}') ELSE CAST({name} AS BIGINT) END AS {name}"
    )


def _warmup(mart: Mart, name: str) -> str:
    given = f"'{mart.name}: expected {name} to be a share in [0, 1), got ' || coalesce(CAST({name} AS VARCHAR), 'None')"
    return (
        f"CASE WHEN {name} IS NULL OR NOT ({_NUMBER_CHECK.format(x=name)}) THEN error({given}) "
        f"WHEN isnan(CAST({name} AS DOUBLE)) OR CAST({name} AS DOUBLE) < 0 OR CAST({name} AS DOUBLE) >= 1 THEN error({given}) "
        f"ELSE CAST({name} AS DOUBLE) END AS {name}"
    )


def _bound_kind(mart: Mart, name: str) -> str:
    """Which a bound by system is: 'none', 'map' or 'number' (the value itself stays the macro's argument)."""
    json = f"to_json({name})"
    return (
        f"CASE WHEN {name} IS NULL THEN 'none' WHEN json_type({json}) = 'OBJECT' THEN 'map' "
        f"WHEN json_type({json}) IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN 'number' "
        f"ELSE error('{mart.name}: parameter {name} = ' || CASE WHEN typeof({name}) = 'VARCHAR' THEN {_QUOTE} || CAST({name} AS VARCHAR) || {_QUOTE} "
        f"ELSE CAST({json} AS VARCHAR) END || '; expected a number') END AS {name}_kind"
    )


def _bin_width(mart: Mart, name: str) -> str:
    given = (
        f"'{mart.name}: parameter {name} = ' || CASE WHEN typeof({name}) = 'VARCHAR' THEN {_QUOTE} || "
        f"CAST({name} AS VARCHAR) || {_QUOTE} ELSE CAST({name} AS VARCHAR) END || '; expected {BIN_WIDTH.expected}'"
    )
    return (
        f"CASE WHEN {name} IS NULL THEN NULL WHEN NOT ({_NUMBER_CHECK.format(x=name)}) THEN error({given}) "
        f"WHEN isnan(CAST({name} AS DOUBLE)) OR isinf(CAST({name} AS DOUBLE)) OR CAST({name} AS DOUBLE) <= 0 "
        f"THEN error({given}) ELSE CAST({name} AS DOUBLE) END AS {name}"
    )


#: Each SQL mart parameter's column of the ``parameters`` CTE, checked in SQL.
_PARAMETERS = {
    "bins": lambda mart: _integer_parameter(mart, "bins", 1),
    "points": lambda mart: _integer_parameter(mart, "points", 1),
    "min_games": lambda mart: _integer_parameter(mart, "min_games", 0),
    "warmup": lambda mart: _warmup(mart, "warmup"),
    "max_sd": lambda mart: _bound_kind(mart, "max_sd"),
    "bin_width": lambda mart: _bin_width(mart, "bin_width"),
}


def query_sql(mart: Mart) -> str:
    """The SELECT of a SQL mart's macro (over the macro's ``tbl`` and parameters), its rows sorted by
    league (NULL first), system and the mart's own keys."""
    parameters = ", ".join(_PARAMETERS[p.name](mart) for p in mart.parameters) or "true AS no_parameters"
    inputs = ",\n       ".join(_input(mart, column) for column in mart.inputs)
    source = f"""SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system,
       {inputs}
FROM {replay_source(mart)} AS r"""
    assert mart.query is not None  # an SQL mart
    query = mart.query(DuckDBDialect(mart)).over(f"SELECT {parameters}", source)
    if mart.interval_ranks:
        return query.then("ranked", ranks_sql("ranked")).sql()
    order = ", ".join(("o.league NULLS FIRST", "o.system", *(f"o.{key}" for key in mart.order)))
    return query.then("result", f"SELECT * FROM result AS o ORDER BY {order}").sql()


def macro_sql(mart: Mart) -> str:
    """The ``CREATE TEMP MACRO`` statement of any mart: its query, or the macro over its UDF."""
    if mart.query is None:
        return udf_macro_sql(mart)
    return f"CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE\n{query_sql(mart)}\n"
