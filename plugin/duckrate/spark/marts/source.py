"""The replay rows a mart reads, as its DuckDB macro reads them, checked on the driver.

A mart reads any replay table (the rows of :func:`duckrate.spark.replay`, or a table of the DuckDB path):
its columns matched by name case-insensitively (as in DuckDB), ``league`` as text (NULL for a table without
leagues), ``system`` as text, from the ``system`` argument where the table has no ``system`` column (or a
NULL one), as :func:`duckrate.sql.evaluation_udf.replay_source` labels them. Before any Spark job the driver
runs the checks the other paths run, on the DataFrame's schema: the marts' check of the columns' types, then
the mart's Python function over an empty frame of that schema (its parameters' checks and the columns it
needs), so bad input raises :class:`~duckrate.DuckrateInputError` naming it where the call is.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from duckrate.core.errors import DuckrateInputError
from duckrate.registry import MARTS
from duckrate.spark.arrow_tables import arrow_schema, empty_frame
from duckrate.spark.canonical import canonical_columns
from duckrate.sql.evaluation_udf import Mart, check_column_types


def mart_named(name: str) -> Mart:
    """The registry entry of the mart ``name`` (:data:`duckrate.registry.MARTS`): fields, parameters, columns."""
    return next(mart for mart in MARTS if mart.name == name)


def mart_parameters(mart: Mart, given: dict) -> dict:
    """The mart's parameters: the defaults its registry entry declares, overlaid with ``given``; an unknown
    name raises (the values are checked by the mart's Python function, :func:`replay_rows`)."""
    known = {parameter.name: parameter.default for parameter in mart.parameters}
    unknown = sorted(set(given) - set(known))
    if unknown:
        expected = f"expected some of {', '.join(known)}" if known else "it takes none"
        raise DuckrateInputError(f"{mart.name}: unknown parameter(s) {', '.join(unknown)}; {expected}")
    return {**known, **given}


def replay_rows(rows: DataFrame, mart: Mart, system: str | None, check: Callable, params: dict) -> DataFrame:
    """The fields of ``mart`` (and ``played_at``) that ``rows`` has, under their own names, ``league`` and
    ``system`` as text; raises on a mistyped column, a missing one or a bad parameter (``check``: the mart's
    Python function, called with ``params`` on an empty frame of the same columns)."""
    fields = tuple(name for name in mart.fields if name != "system")
    frame = canonical_columns(rows, (*fields, "played_at", "system"))
    label = F.lit(system).cast("string")
    labelled = F.coalesce(F.col("system").cast("string"), label) if "system" in frame.columns else label
    frame = frame.withColumn("system", labelled)
    schema = arrow_schema(frame.schema, frame)
    check_column_types(mart.name, pa.schema([field for field in schema if field.name in mart.fields]))
    check(empty_frame(frame), **params)
    return frame
