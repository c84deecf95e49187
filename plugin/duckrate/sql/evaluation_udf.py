"""The DuckDB side of every mart's macro: the replay table it reads (a ``system`` column is optional: rows
without one take the macro's ``system :=`` argument, NULL by default), its signature, and the UDF pattern
for a mart computed in Python (``contest_metrics``): the macro packs the needed columns into one list, the
UDF hands them to the mart's computation (:func:`duckrate.marts.compute.mart_table`), and the macro unnests
the result. The SQL marts' macros are :mod:`.mart_sql`.
"""

from __future__ import annotations

import pyarrow as pa

from duckrate.core import crash_points
from duckrate.marts import Mart
from duckrate.marts.compute import mart_table, returns_schema
from duckrate.sql._lists import map_list_rows, struct_rows, whole
from duckrate.sql.bridge import one_at_a_time

# Columns of the replay table the marts read; absent optional ones arrive as NULL.
OPTIONAL_REPLAY_COLUMNS = "SELECT NULL::VARCHAR AS system, NULL::VARCHAR AS league WHERE false"


def udf_name(mart: Mart) -> str:
    """The UDF behind a Python mart's macro."""
    return f"duckrate_{mart.name}_udf"


def return_type(mart: Mart) -> str:
    """The SQL type of a Python mart's UDF result: a list of its rows."""
    return "STRUCT(" + ", ".join(f"{name} {kind}" for name, kind in mart.returns) + ")[]"


def make_udf(mart: Mart):
    """``(packed replay list, parameters...) -> list of mart rows``."""
    arrow_type = pa.struct(list(returns_schema(mart)))

    def mart_udf(*columns):  # (replay list, parameters...); a bare *args keeps DuckDB from demanding more
        crash_points.reached("mart.compute")
        replay, *parameters = [whole(column) for column in columns]

        def mart_row(row: int, elements: pa.Array) -> pa.StructArray:
            values = [column[row].as_py() for column in parameters]
            return struct_rows(mart_table(mart, elements, values))

        return map_list_rows(replay, mart_row, arrow_type)

    mart_udf.__name__ = udf_name(mart)
    return one_at_a_time(mart_udf)


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
    """``tbl, <parameter> := <default>, ..., system := NULL``: a mart macro's parameters, from its registry entry."""
    return "tbl" + "".join(f", {p.name} := {p.sql_default}" for p in mart.parameters) + ", system := NULL"


def macro_sql(mart: Mart) -> str:
    """``CREATE TEMP MACRO <mart>(tbl, <params>, system := NULL) AS TABLE ...`` over the mart's UDF. ``system``
    names the system of a replay table without a ``system`` column (e.g. ``contest_metrics('replay',
    system := 'elo_mmr')``)."""
    args = "".join(f", {p.name}" for p in mart.parameters)
    fields = ", ".join(f"{name} := r.{name}" for name in mart.fields)
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH packed AS (SELECT list(struct_pack({fields})) AS replay_list FROM {replay_source(mart)} AS r),
rows AS (SELECT unnest({udf_name(mart)}(packed.replay_list{args}), recursive := true) FROM packed)
SELECT * FROM rows
"""
