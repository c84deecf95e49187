"""The UDFs and TEMP table macro behind each batch fit, ``<fit>(tbl, ...)`` (``bt_fit``, ``whr_fit``,
``ttt_fit``: every entry of :data:`duckrate.core.registry.FITS`).

The bridge's pattern (:mod:`.bridge`): the macro collects the table's columns (for a matches table, players
and league as 64-bit hash keys, with the name lists beside; for another input shape, e.g. ``team_results``,
its columns as they are, NULL where absent, as the event replays of :mod:`.event_udf`) and the priors table
when the fit takes one; the compute UDF hands them to the fit's ``run`` and keeps its rows under the token
(:class:`~duckrate.sql.bridge.TableStore`), returning their count; the macro reads them back over
the positions ``unnest(range(count))`` in pieces (``duckrate_fetch_<fit>``), so a fit's millions of rows (per player and day) are
never one list value that DuckDB copies and unnests. No maths here: the rows are only given the macro's
fixed column types (:func:`sql_rows`).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core import crash_points
from duckrate.core.matches import MATCHES
from duckrate.core.protocol import Fit, InputShape
from duckrate.sql._lists import whole
from duckrate.sql.bridge import TABLES, collected_ctes, one_at_a_time
from duckrate.sql.event_udf import TYPED_WHEN_ABSENT
from duckrate.sql.replay_udf import (
    EMPTY_PRIORS_VIEW,
    PRIORS_SOURCE,
    collected_columns,
    match_macro_rows,
    names_ctes,
    packed_matches_sql,
)
from duckrate.sql.sql_types import struct_sql


def udf_name(fit: Fit) -> str:
    """The compute UDF: runs the fit and keeps its rows; returns their count."""
    return f"duckrate_{fit.name}_compute_udf"


def fetch_udf_name(fit: Fit) -> str:
    """The UDF reading the kept rows back by position."""
    return f"duckrate_fetch_{fit.name}"


def parameters(fit: Fit) -> tuple[tuple[str, str], ...]:
    """(name, SQL default) of the fit's parameters in the UDF's argument order (priors is the macro's table
    argument)."""
    return tuple((p.name, p.sql_default) for p in fit.parameters)


def _output(fit: Fit) -> pa.Schema:
    if fit.output is None or fit.run is None:
        raise TypeError(f"duckrate: fit {fit.name!r} declares no run or output columns; please report this")
    return fit.output


def fetch_type(fit: Fit) -> pa.StructType:
    return pa.struct(list(_output(fit)))


def fetch_return_type(fit: Fit) -> str:
    return struct_sql(_output(fit))


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
    """``(token, n_input, n_priors, player names, league names, table name, parameters...) -> row count``: the
    matches (and priors) were collected under the token (see :mod:`.bridge`); the fit's rows are kept under
    it for ``duckrate_fetch_<fit>``."""
    names = [name for name, _ in parameters(fit)]
    schema = _output(fit)
    run = fit.run
    assert run is not None

    def fit_udf(token, n_input, n_priors, player_names, league_names, table_name, *values):
        crash_points.reached("fit.compute")
        values = tuple(whole(column) for column in values)
        tokens = np.asarray(whole(token).fill_null(0), dtype=np.int64)
        counts = []
        rows = (
            match_macro_rows(token, n_input, n_priors, player_names, league_names, table_name)
            if fit.input is MATCHES
            else _shape_rows(token, n_input, n_priors, table_name)
        )
        for row, columns, priors, table in rows:
            if columns is None:
                counts.append(0)
                continue
            given = {name: column[row].as_py() for name, column in zip(names, values)}
            result = run(columns, priors, given, table)
            del columns, priors  # the collected input is freed before the rows are converted
            counts.append(TABLES.put(int(tokens[row]), sql_rows(result, schema)))
            del result
        return pa.array(counts, pa.int64())

    fit_udf.__name__ = udf_name(fit)
    return one_at_a_time(fit_udf)


def _shape_rows(token, n_input, n_priors, table_name):
    """For each query row of the UDF call of a fit over an input other than matches: ``(row, columns, priors,
    table)``, the collected columns as the table has them (None when it has no rows; a league column of
    NULLs only dropped, as no league)."""
    tokens, n_inputs, n_priors = (np.asarray(whole(a).fill_null(0), dtype=np.int64) for a in (token, n_input, n_priors))
    table_name = whole(table_name)
    for row in range(len(tokens)):
        columns, _ = collected_columns(int(tokens[row]), "input", int(n_inputs[row]))
        priors, _ = collected_columns(int(tokens[row]), "priors", int(n_priors[row]))
        if columns is not None and columns["league"].null_count == len(columns["league"]):
            del columns["league"]
        yield row, columns, priors, f"table {table_name[row].as_py()!r}"


def _shape_source(shape: InputShape) -> str:
    """The rows a fit over ``shape`` collects: its columns as the table has them, NULL where absent."""
    absent = ", ".join(
        f"NULL::{TYPED_WHEN_ABSENT[name]} AS {name}" if name in TYPED_WHEN_ABSENT else f"NULL AS {name}"
        for name in shape.columns
    )
    fields = ", ".join(f"s.{name}" for name in shape.columns)
    return (
        f"(SELECT {fields} FROM ((SELECT {absent} WHERE false) UNION ALL BY NAME "
        "(SELECT * FROM query_table(tbl))) AS s)"
    )


def macro_sql(fit: Fit) -> str:
    """``CREATE TEMP MACRO <fit>(tbl, <params>[, priors := <empty view>]) AS TABLE ...``."""
    pairs = parameters(fit)
    params = "".join(f", {name} := {default}" for name, default in pairs)
    args = "".join(f", {name}" for name, _ in pairs)
    matches = fit.input is MATCHES
    parts = {
        "input": packed_matches_sql(key=None, named_columns=fit.row_columns) if matches else _shape_source(fit.input)
    }
    if fit.priors:
        parts["priors"] = PRIORS_SOURCE
        params += f", priors := '{EMPTY_PRIORS_VIEW}'"
    n_priors = "c.n_priors" if fit.priors else "0"
    # Each field once, qualified (a macro parameter shadows a bare column name): ``unnest`` of the struct
    # would call the fetch UDF once per field.
    columns = ", ".join(f"z.f.{f.name} AS {f.name}" for f in _output(fit))
    names = f", {names_ctes()}" if matches else ""
    name_lists = (
        "(SELECT pn.names FROM player_names AS pn), (SELECT ln.names FROM league_names AS ln)"
        if matches
        else "NULL, NULL"
    )
    return f"""
CREATE OR REPLACE TEMP MACRO {fit.name}(tbl{params}) AS TABLE
WITH {collected_ctes(parts)}{names},
duckrate_fitted AS MATERIALIZED (
    SELECT k.t, coalesce({udf_name(fit)}(k.t, c.n_input, {n_priors}, {name_lists}, tbl{args}), 0) AS n
    FROM duckrate_token AS k, duckrate_collected AS c
)
SELECT {columns}
FROM (SELECT {fetch_udf_name(fit)}(p.t, p.position) AS f
      FROM (SELECT d.t, unnest(range(d.n)) AS position FROM duckrate_fitted AS d) AS p) AS z
"""
