"""``match_id`` is the matches table's key across all leagues; each league's task sees only its own rows, so
a key repeated in two leagues is found here, by one Spark aggregation, with the Python path's message."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from duckrate.core.matches import DUPLICATE_KEY, input_error


def check_unique_match_ids(matches: DataFrame, table: str = "matches") -> None:
    """Raise :class:`~duckrate.DuckrateInputError` naming a ``match_id`` that more than one row holds."""
    repeated = (
        matches.groupBy("match_id")
        .agg(F.count(F.lit(1)).alias("duckrate_rows"))
        .filter((F.col("duckrate_rows") > 1) & F.col("match_id").isNotNull())
        .select("match_id")
        .orderBy("match_id")
        .limit(1)
        .collect()
    )
    if repeated:
        value = repeated[0][0]
        raise input_error({"match_id": pa.array([value])}, table, "match_id", 0, value, DUPLICATE_KEY)
