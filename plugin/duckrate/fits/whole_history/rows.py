"""The rows both whole-history fits return (``whr_fit``, ``ttt_fit``): one per (league, player, time step at
which the player played), in this column order.

``period_start`` has ``played_at``'s type in the Python functions (DATE, TIMESTAMP of the input's unit and
zone, or the integer step). A SQL table macro's column types are fixed when it is registered, so the SQL
macros return it as a TIMESTAMP (UTC; a DATE's midnight) and as NULL for an integer ``played_at``, whose
step is then ``step`` itself: :data:`SQL_SCHEMA`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.fits.bradley_terry.uncertainty import Z_95


def history_schema(period_type: pa.DataType) -> pa.Schema:
    """The output columns with ``period_start`` of type ``period_type``."""
    return pa.schema(
        [
            ("league", pa.string()),
            ("player", pa.string()),
            ("period_start", period_type),
            ("step", pa.int64()),
            ("rating", pa.float64()),
            ("sd", pa.float64()),
            ("lower", pa.float64()),
            ("upper", pa.float64()),
            ("games", pa.int64()),
            ("iterations", pa.int64()),
            ("converged", pa.bool_()),
        ]
    )


#: The columns the SQL macros return.
SQL_SCHEMA = history_schema(pa.timestamp("us"))
#: The column names, in order.
COLUMNS = tuple(SQL_SCHEMA.names)


def history_table(
    league: pa.Array,
    player: pa.Array,
    start: pa.Array,
    step: np.ndarray,
    rating: np.ndarray,
    sd: np.ndarray,
    games: np.ndarray,
    iterations: pa.Array,
    converged: pa.Array,
) -> pa.Table:
    """The output rows from their columns: ``lower`` and ``upper`` are ``rating`` -+ 1.96 ``sd``; ``start``
    (``period_start``) sets the schema's type."""
    return pa.Table.from_arrays(
        [
            league,
            player,
            start,
            pa.array(step, pa.int64()),
            pa.array(rating),
            pa.array(sd),
            pa.array(rating - Z_95 * sd),
            pa.array(rating + Z_95 * sd),
            pa.array(games, pa.int64()),
            iterations,
            converged,
        ],
        schema=history_schema(start.type),
    )
