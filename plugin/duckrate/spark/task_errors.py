"""Input errors raised inside Spark tasks, handed back as rows and raised again on the driver.

A task that meets bad input (duckrate's :class:`~duckrate.DuckrateInputError`, or
:class:`~duckrate.RebuildRequired` for a state that cannot be continued) returns one error row instead of
failing the job; the driver raises the same exception with the same message, as the Python API would.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from duckrate.core.errors import DuckrateInputError
from duckrate.spark.arrow_tables import part_table
from duckrate.systems.saved_state import RebuildRequired

#: The columns of an error row: the exception's class name and its message.
ERROR_FIELDS = (("duckrate_error", pa.string()), ("duckrate_message", pa.string()))
_RAISED = {cls.__name__: cls for cls in (DuckrateInputError, RebuildRequired)}


def error_columns(error: DuckrateInputError) -> dict[str, pa.Array]:
    """One error row's columns for ``error``."""
    return {
        "duckrate_error": pa.array([type(error).__name__], pa.string()),
        "duckrate_message": pa.array([str(error)], pa.string()),
    }


def league_error(schema: pa.Schema, key: tuple, error: DuckrateInputError) -> pa.Table:
    """A league task's one error row on ``schema``: part 'error', the league of the group ``key`` (a tuple
    of Arrow scalars, as Spark passes it) and the error's columns."""
    league = pa.array([key[0].as_py()], pa.string())
    return part_table(schema, "error", {"league": league, **error_columns(error)}, 1)


def raise_error(kind: str, message: str) -> None:
    """Raise the exception a task's error row describes."""
    raise _RAISED.get(kind, DuckrateInputError)(message)


def raise_first_error(frame: DataFrame, order_by: str) -> None:
    """Raise the first error row of ``frame`` (by ``order_by``, NULLs last, as a state table is sorted) as the
    exception it was, if any."""
    found = (
        frame.filter(F.col("duckrate_error").isNotNull())
        .orderBy(F.col(order_by).asc_nulls_last(), F.col("duckrate_message"))
        .select("duckrate_error", "duckrate_message")
        .limit(1)
        .collect()
    )
    if found:
        raise_error(*found[0])
