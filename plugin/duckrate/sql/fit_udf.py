"""The Arrow UDF and TEMP table macro behind each batch fit, ``<fit>(tbl, ...)`` (``bt_fit``, ``whr_fit``,
``ttt_fit``: every entry of :data:`duckrate.core.registry.FITS`).

Same pattern as the replays (:mod:`.replay_udf`): the macro packs the table's columns into one unordered
``LIST(STRUCT)`` (players and league as 64-bit hash keys, with the name lists beside), the priors table
into another when the fit takes one, and the UDF hands them to the fit's ``run``, which returns its rows;
the macro unnests them. No maths here: the rows are only given the macro's fixed column types
(:func:`sql_rows`).
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from duckrate.core.protocol import Fit
from duckrate.sql._lists import list_per_row, whole
from duckrate.sql.bridge import collected_ctes
from duckrate.sql.replay_udf import EMPTY_PRIORS_VIEW, PRIORS_SOURCE, match_macro_rows, names_ctes, packed_matches_sql

_SQL_TYPES = {
    pa.string(): "VARCHAR",
    pa.float64(): "DOUBLE",
    pa.int64(): "BIGINT",
    pa.bool_(): "BOOLEAN",
    pa.timestamp("us"): "TIMESTAMP",
}


def udf_name(fit: Fit) -> str:
    return f"duckrate_{fit.name}_udf"


def parameters(fit: Fit) -> tuple[tuple[str, str], ...]:
    """(name, SQL default) of the fit's parameters in the UDF's argument order (priors is the macro's table
    argument)."""
    return tuple((p.name, p.sql_default) for p in fit.parameters)


def _output(fit: Fit) -> pa.Schema:
    if fit.output is None or fit.run is None:
        raise TypeError(f"duckrate: fit {fit.name!r} declares no run or output columns; please report this")
    return fit.output


def return_type(fit: Fit) -> str:
    return "STRUCT(" + ", ".join(f"{f.name} {_SQL_TYPES[f.type]}" for f in _output(fit)) + ")[]"


def sql_rows(result: pa.Table | pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """A fit's rows with the macro's column types: each column cast to its type in ``schema``, except that an
    integer column where the macro has a TIMESTAMP (``period_start`` of an integer ``played_at``: no instant)
    becomes NULL."""
    table = result.to_arrow() if isinstance(result, pl.DataFrame) else result
    arrays = []
    for field in schema:
        column = table.column(field.name)
        if pa.types.is_timestamp(field.type) and pa.types.is_integer(column.type):
            arrays.append(pa.nulls(table.num_rows, field.type))
        else:
            arrays.append(column.cast(field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def make_udf(fit: Fit):
    """``(token, n_input, n_priors, player names, league names, table name, parameters...) -> list of fit
    rows``: the matches (and priors) were collected under the token (see :mod:`.bridge`)."""
    names = [name for name, _ in parameters(fit)]
    schema = _output(fit)
    run = fit.run
    assert run is not None
    element_type = pa.struct(list(schema))

    def fit_udf(token, n_input, n_priors, player_names, league_names, table_name, *values):
        values = tuple(whole(column) for column in values)
        per_row = []
        for row, columns, priors, table in match_macro_rows(
            token, n_input, n_priors, player_names, league_names, table_name
        ):
            if columns is None:
                per_row.append(None)
                continue
            given = {name: column[row].as_py() for name, column in zip(names, values)}
            result = sql_rows(run(columns, priors, given, table), schema)
            per_row.append(result.to_struct_array().combine_chunks() if result.num_rows else None)
        return list_per_row(per_row, element_type)

    fit_udf.__name__ = udf_name(fit)
    return fit_udf


def macro_sql(fit: Fit) -> str:
    """``CREATE TEMP MACRO <fit>(tbl, <params>[, priors := <empty view>]) AS TABLE ...``."""
    pairs = parameters(fit)
    params = "".join(f", {name} := {default}" for name, default in pairs)
    args = "".join(f", {name}" for name, _ in pairs)
    parts = {"input": packed_matches_sql(key=None, named_columns=fit.row_columns)}
    if fit.priors:
        parts["priors"] = PRIORS_SOURCE
        params += f", priors := '{EMPTY_PRIORS_VIEW}'"
    n_priors = "c.n_priors" if fit.priors else "0"
    return f"""
CREATE OR REPLACE TEMP MACRO {fit.name}(tbl{params}) AS TABLE
WITH {collected_ctes(parts)}, {names_ctes()}
SELECT unnest({udf_name(fit)}(k.t, c.n_input, {n_priors}, (SELECT pn.names FROM player_names AS pn),
              (SELECT ln.names FROM league_names AS ln), tbl{args}), recursive := true)
FROM duckrate_token AS k, duckrate_collected AS c
"""
