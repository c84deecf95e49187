"""Replay a long history in chunks of bounded size, each continuing from the state the one before left.

A replay's working memory (the encoded input, the kernel's output arrays, its state) grows with the number
of matches it is handed at once. :func:`replay_in_chunks` hands it at most ``chunk_size`` rows at a time, in
replay order (``played_at``, then the key), and continues each chunk from the saved state of the one before
(:mod:`._state`): the rows and the final state are those of one replay over everything, bit for bit (the
saved-state tests prove the continuation exact). Rows sharing one ``played_at`` stay in one chunk; the open
rating period a chunk ends in (Glicko, Glicko-2) is re-rated with the next chunk, as a continuation from a
saved state does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.progress import Progress

# The most input rows (matches, or contest results) a replay hands to its kernel at once, by default: longer
# histories replay in chunks in time order, each continuing from the state the one before left.
DEFAULT_CHUNK_ROWS = 2_000_000


def check_chunk_size(chunk_size) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise DuckrateInputError(f"chunk_size = {chunk_size!r}; expected a whole number of rows >= 1")
    return int(chunk_size)


def chunk_bounds(played_at: pl.Series, chunk_size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` positions of consecutive chunks of a frame sorted by ``played_at``: at most
    ``chunk_size`` rows each, except where more rows than that share one ``played_at`` (they stay together)."""
    n = len(played_at)
    if n <= chunk_size:
        return [(0, n)]
    new_time = (played_at[1:] != played_at[:-1]).fill_null(True).to_numpy()
    time_starts = np.concatenate([[0], np.flatnonzero(new_time) + 1])  # where each played_at's rows begin
    bounds, start = [], 0
    while start < n:
        if start + chunk_size >= n:
            bounds.append((start, n))
            break
        stop = int(time_starts[np.searchsorted(time_starts, start + chunk_size, side="right") - 1])
        if stop <= start:  # one played_at has more rows than a chunk: all of them, together
            later = np.searchsorted(time_starts, start, side="right")
            stop = int(time_starts[later]) if later < len(time_starts) else n
        bounds.append((start, stop))
        start = stop
    return bounds


def replay_in_chunks(
    frame: pl.DataFrame,
    key: str,
    chunk_size: int,
    state,
    run: Callable[[pl.DataFrame, object], tuple[pl.DataFrame, pl.DataFrame]],
    order_by: list[str],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``run(part, state) -> (rows, state after)`` over ``frame`` in chunks of at most ``chunk_size`` rows in
    (``played_at``, ``key``) order, each from the state the one before left; returns all rows (sorted by
    ``order_by``, as one run sorts them) and the final state. Rows of a chunk's open rating period (``seq`` beyond its league's saved ``seq``) are not
    final: they are passed again with the next chunk, which re-rates them."""
    order = frame.select(pl.arg_sort_by(["played_at", key], nulls_last=True)).to_series().to_numpy()
    carried = None
    pending = _pending_of(state)
    if pending is not None:  # the saved state's open period: its matches go with the first chunk
        is_pending = frame[key].cast(pl.Utf8).is_in(pending.implode()).to_numpy()
        carried, order = frame.filter(is_pending), order[~is_pending[order]]
    bounds = chunk_bounds(frame["played_at"].gather(order), chunk_size)
    progress = Progress(f"replay in {len(bounds)} chunks", len(order), "rows")
    rows = []
    for start, stop in bounds:
        part = frame[order[start:stop]]
        if carried is not None and carried.height:
            part = pl.concat([carried, part], how="vertical_relaxed")
        out, state = run(part, state)
        if stop < len(order):
            open_keys = _open_keys(out, state, key)
            carried = part.join(open_keys, on=key, how="semi")
            out = out.join(open_keys, on=key, how="anti")
        rows.append(out)
        progress.advance(stop - start)
    return pl.concat(rows, how="vertical_relaxed").sort(order_by, nulls_last=True), state


def _pending_of(state) -> pl.Series | None:
    """The ids of the matches a saved state's open rating periods wait for (None when it has none)."""
    if not isinstance(state, pl.DataFrame) or "pending_ids" not in state.columns:
        return None
    pending = state.filter(pl.col("kind") == "league")["pending_ids"].explode().drop_nulls()
    return pending if pending.len() else None


def _open_keys(out: pl.DataFrame, state: pl.DataFrame, key: str) -> pl.DataFrame:
    """The keys of rows whose ``seq`` is beyond their league's saved ``seq``: an open rating period."""
    final = state.filter(pl.col("kind") == "league").select("league", pl.col("seq").alias("duckrate_final_seq"))
    return (
        out.join(final, on="league", how="left", nulls_equal=True)
        .filter(pl.col("seq") > pl.col("duckrate_final_seq"))
        .select(key)
        .unique()
    )
