"""The canonical columns of a Spark DataFrame, as the DuckDB macros read them from a table.

Column names match case-insensitively (as in DuckDB); only the canonical columns travel to the tasks, in
their own types, except ``league``, which is text (the replay's and the state's ``league`` column) and
NULL for a table without leagues.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from duckrate.core.matches import OPTIONAL_COLUMNS, REQUIRED_COLUMNS

MATCH_COLUMNS = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)


def _column(frame: DataFrame, name: str) -> Column | None:
    for actual in frame.columns:
        if actual.lower() == name:
            return F.col(f"`{actual}`")
    return None


def canonical_columns(frame: DataFrame, names: tuple[str, ...] = MATCH_COLUMNS, named=()) -> DataFrame:
    """``frame``'s columns among ``names`` under their canonical names, and ``league`` as text (NULL when
    ``frame`` has none); then those of the columns ``named`` (e.g. ``bt_fit``'s covariates) it has, as
    they are."""
    selected = []
    for name in names:
        column = _column(frame, name)
        if name == "league":
            selected.append((column if column is not None else F.lit(None)).cast("string").alias("league"))
        elif column is not None:
            selected.append(column.alias(name))
    extra = [F.col(f"`{name}`") for name in dict.fromkeys(named) if name in frame.columns and name not in names]
    return frame.select(*selected, *extra)
