"""The replay rows a mart reads, as its DuckDB macro reads them, checked on the driver.

A mart reads any replay table (the rows of :func:`duckrate.spark.replay`, or a table of the DuckDB path):
its columns matched by name case-insensitively (as in DuckDB), ``league`` as text (NULL for a table without
leagues), ``system`` as text, from the ``system`` argument where the table has no ``system`` column (or a
NULL one), as :func:`duckrate.sql.evaluation_udf.replay_source` labels them. Before any Spark job the driver
checks what the other paths check: the parameters (:func:`duckrate.marts.parameters.checked_values`), the
columns' types and the columns the call needs, so bad input raises :class:`~duckrate.DuckrateInputError`
naming it where the call is.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from duckrate.core.errors import DuckrateInputError
from duckrate.marts import Mart, required_columns
from duckrate.marts.parameters import check_column_types, checked_values
from duckrate.spark.arrow_tables import arrow_schema
from duckrate.spark.canonical import canonical_columns


def replay_rows(rows: DataFrame, mart: Mart, system: str | None, given: dict) -> tuple[DataFrame, dict]:
    """The fields of ``mart`` (and ``played_at``) that ``rows`` has, under their own names, ``league`` and
    ``system`` as text, and the call's parameters (``given`` over the defaults, checked); raises on a bad
    parameter, a mistyped column or a missing one."""
    values = checked_values(mart, given)
    fields = tuple(name for name in mart.fields if name != "system")
    frame = canonical_columns(rows, (*fields, "played_at", "system"))
    label = F.lit(system).cast("string")
    labelled = F.coalesce(F.col("system").cast("string"), label) if "system" in frame.columns else label
    frame = frame.withColumn("system", labelled)
    schema = arrow_schema(frame.schema, frame)
    check_column_types(mart.name, pa.schema([field for field in schema if field.name in mart.fields]))
    missing = [name for name in required_columns(mart, values) if name not in frame.columns]
    if missing:
        raise DuckrateInputError(
            f"{mart.name}: the table is missing column(s) {', '.join(map(repr, missing))}; expected a replay table "
            f"(the output of a *_replay macro) with columns {', '.join(mart.fields)}"
        )
    return frame, values
