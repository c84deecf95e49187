"""Games summed into per-pair statistics inside Spark, batch by batch (a ``mapInArrow`` function).

Each Arrow batch of matches is validated by :func:`duckrate.core.matches.prepare_matches` (the Python path's
checks and messages) and summed by :func:`~duckrate.fits.bradley_terry.pairs.pairs_from_rows` into its
ordered pairs (side A, side B, league): weighted wins and losses (a draw half a win each way; exact
decimal sums, see :func:`exact_sums`), games, and
the pair's first game in replay order (``played_at``, then ``match_id``), which orders the pairs as the
Python path meets them. Spark then adds the batches' sums per pair.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import prepare_matches
from duckrate.fits.bradley_terry.pairs import pairs_from_rows
from duckrate.spark.arrow_tables import part_table
from duckrate.spark.task_errors import error_columns


def exact_sums(row_pair: np.ndarray, values: dict[str, np.ndarray], exact: pa.DataType) -> dict[str, pa.Array]:
    """Each pair's sums of its rows' ``values`` (``row_pair``: each row's pair, every pair 0..n-1 present; one
    grouping for all the columns), as the decimal type ``exact``: every value rounded once to its scale, then
    added exactly (integers), so a sum is the same in any order and any split into batches."""
    limit = 10.0 ** (exact.precision - exact.scale - 1)  # a batch's total below it: no pair's sum can wrap
    for column in values.values():
        total = column.sum()
        if total >= limit:
            raise DuckrateInputError(
                f"bt_fit on Spark: a batch's weighted scores add up to {total:.6g}; its exact sums "
                f"(DECIMAL({exact.precision}, {exact.scale})) hold less than {limit:.0e}: expected smaller weights"
            )
    table = pa.table({"pair": pa.array(row_pair), **{name: pa.array(v).cast(exact) for name, v in values.items()}})
    summed = table.group_by("pair").aggregate([(name, "sum") for name in values])
    order = pc.sort_indices(summed["pair"])
    return {name: summed[f"{name}_sum"].take(order).combine_chunks() for name in values}


def batch_pairs(batch: pa.RecordBatch, exact: pa.DataType) -> dict[str, pa.Array]:
    """The ordered pairs of one batch of matches and their sums (the weighted ones exact, as ``exact``), as
    columns of :class:`BatchPairSums`."""
    columns = {name: batch.column(name) for name in batch.schema.names}
    prepared = prepare_matches(columns, "matches")
    order = prepared.order
    weighted = prepared.weight.shape[0] == prepared.n_rows
    pairs = pairs_from_rows(
        prepared.state_a[order],
        prepared.state_b[order],
        prepared.score[order],
        prepared.weight[order] if weighted else None,
        prepared.n_states,
    )
    first = np.full(pairs.n_pairs, order.shape[0], dtype=np.int64)
    np.minimum.at(first, pairs.row_pair, np.arange(order.shape[0]))
    first_row = order[first]
    names = prepared.players.cast(pa.string())
    leagues = pa.array(prepared.league_names, pa.string())
    return {
        "league": leagues.take(pa.array(prepared.state_league[pairs.a])),
        "player_a": names.take(pa.array(prepared.state_player[pairs.a])),
        "player_b": names.take(pa.array(prepared.state_player[pairs.b])),
        **exact_sums(pairs.row_pair, {"wins": pairs.row_wins, "losses": pairs.row_losses}, exact),
        "games": pa.array(np.bincount(pairs.row_pair, minlength=pairs.n_pairs).astype(np.int64)),
        "first_time": pa.array(prepared.time_key[first_row]),
        "first_id": columns["match_id"].take(pa.array(first_row)),
    }


class BatchPairSums:
    """The ``mapInArrow`` function: each batch's pair sums on ``schema``, or one error row."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema

    def function(self):
        """The plain function Spark calls."""

        def sum_pairs(batches):
            return self(batches)

        return sum_pairs

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if not batch.num_rows:
                continue
            try:
                columns = batch_pairs(batch, self.schema.field("wins").type)
                n_rows = len(columns["wins"])
                part = "pairs"
            except DuckrateInputError as error:
                columns, n_rows, part = error_columns(error), 1, "error"
            columns = {name: values.cast(self.schema.field(name).type) for name, values in columns.items()}
            yield from part_table(self.schema, part, columns, n_rows).to_batches()
