"""The scalar UDF behind the leaderboards' ``rank_upper``, ``rank_lower`` and ``tier`` (SQL marts): one call
per (league, system) with its players' ratings and interval bounds as lists in rank order, returning a list
of (rank_upper, rank_lower, tier) in the same order, computed by :func:`duckrate.core.ranks.interval_ranks`.
No maths here."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, interval_ranks
from duckrate.sql._lists import list_per_row, whole

UDF_NAME = "duckrate_interval_ranks"
ELEMENT_TYPE = pa.struct([(name, pa.int64()) for name in INTERVAL_RANK_COLUMNS])
RETURN_TYPE = "STRUCT(" + ", ".join(f"{name} BIGINT" for name in INTERVAL_RANK_COLUMNS) + ")[]"


def _numbers(values: pa.Array) -> np.ndarray:
    return np.asarray(values.cast(pa.float64()).fill_null(np.nan), dtype=np.float64)


def make_udf():
    """``(ratings, lowers, uppers) -> list of (rank_upper, rank_lower, tier)``, lists in rank order."""

    def interval_ranks_udf(ratings, lowers, uppers):
        ratings, lowers, uppers = whole(ratings), whole(lowers), whole(uppers)
        per_row = []
        for row in range(len(ratings)):
            if not ratings[row].is_valid:
                per_row.append(None)
                continue
            ranks = interval_ranks(*(_numbers(column[row].values) for column in (ratings, lowers, uppers)))
            per_row.append(
                pa.StructArray.from_arrays([pa.array(values) for values in ranks], fields=list(ELEMENT_TYPE))
            )
        return list_per_row(per_row, ELEMENT_TYPE)

    interval_ranks_udf.__name__ = UDF_NAME
    return interval_ranks_udf


def ranks_sql(ranked: str) -> str:
    """A SELECT of every row of the CTE ``ranked`` (a leaderboard: league, system, rank, rating, lower,
    upper, ...) with ``rank_upper``, ``rank_lower`` and ``tier`` appended."""
    return f"""SELECT l.*, e.ranks.rank_upper AS rank_upper, e.ranks.rank_lower AS rank_lower, e.ranks.tier AS tier
FROM {ranked} AS l
JOIN (
    SELECT g.league, g.system, unnest(g.ranks) AS ranks, generate_subscripts(g.ranks, 1) AS rank
    FROM (SELECT k.league, k.system,
                 {UDF_NAME}(list(k.rating ORDER BY k.rank), list(k.lower ORDER BY k.rank),
                            list(k.upper ORDER BY k.rank)) AS ranks
          FROM {ranked} AS k GROUP BY k.league, k.system) AS g
) AS e ON e.league IS NOT DISTINCT FROM l.league AND e.system IS NOT DISTINCT FROM l.system AND e.rank = l.rank
ORDER BY l.league NULLS FIRST, l.system, l.rank"""
