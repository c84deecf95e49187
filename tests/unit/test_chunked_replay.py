"""Chunked replays: a history replayed ``chunk_size`` rows at a time, each chunk continuing from the state the
one before left, equals one replay over the whole history, bit for bit, rows and state, for every system.

The histories are the saved-state tests' (several leagues, ties in ``played_at``, weights, ``period``
columns and ``period_length``, priors); the chunk sizes cut through rating periods, so the open period a
chunk ends in must be re-rated with the next chunk.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.contest_cases import contest_history
from helpers.state_cases import CASES, history
from polars.testing import assert_frame_equal

import duckrate
from duckrate.core.errors import DuckrateInputError
from duckrate.systems.chunks import chunk_bounds

STATE_ORDER = ["kind", "league", "player", "opponent"]


def assert_same(
    actual: tuple[pl.DataFrame, pl.DataFrame], expected: tuple[pl.DataFrame, pl.DataFrame], key: list[str]
) -> None:
    assert_frame_equal(actual[0].sort(key, nulls_last=True), expected[0].sort(key, nulls_last=True), check_exact=True)
    assert_frame_equal(
        actual[1].sort(STATE_ORDER, nulls_last=True), expected[1].sort(STATE_ORDER, nulls_last=True), check_exact=True
    )


@pytest.mark.parametrize("chunk_size", [1, 97, 640])
@pytest.mark.parametrize("name, params, weights, periods", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_chunks_equal_one_replay(name, params, weights, periods, chunk_size):

    matches = history(1500, 50, 3, weights, periods)
    whole = duckrate.replay_with_state(name, matches, **params)
    chunked = duckrate.replay_with_state(name, matches, chunk_size=chunk_size, **params)
    assert_same(chunked, whole, ["league", "seq"])


@pytest.mark.parametrize(
    "name, params, weights, periods", CASES[:8], ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES[:8])]
)
def test_chunks_continue_a_saved_state(name, params, weights, periods):

    matches = history(1200, 40, 8, weights, periods).sort("played_at", "match_id")
    first, saved = duckrate.replay_with_state(name, matches[:500], **params)
    rest = matches[500:]
    pending = saved.filter(pl.col("kind") == "league")["pending_ids"].explode().drop_nulls()
    rest = pl.concat([matches[:500].filter(pl.col("match_id").cast(pl.Utf8).is_in(pending.implode())), rest])
    whole = duckrate.replay_with_state(name, rest, state=saved, **params)
    assert_same(duckrate.replay_with_state(name, rest, state=saved, chunk_size=113, **params), whole, ["league", "seq"])


def test_the_system_functions_take_a_chunk_size():
    matches = history(800, 30, 4, True, False)
    assert_frame_equal(
        duckrate.glicko(matches, period_length=1.0, chunk_size=50),
        duckrate.glicko(matches, period_length=1.0),
        check_exact=True,
    )
    assert_frame_equal(duckrate.elo(matches, k=20, chunk_size=3), duckrate.elo(matches, k=20), check_exact=True)


@pytest.mark.parametrize("chunk_size", [1, 25, 120])
def test_contest_chunks_equal_one_replay(chunk_size):
    results = contest_history(40, 12)
    params = {"max_history": 3, "drift_per_day": 2.0}
    whole = duckrate.replay_with_state("elo_mmr", results, **params)
    chunked = duckrate.replay_with_state("elo_mmr", results, chunk_size=chunk_size, **params)
    assert_same(chunked, whole, ["league", "seq", "rank", "player"])
    assert_frame_equal(
        duckrate.elo_mmr(results, chunk_size=chunk_size, **params).sort(
            "league", "seq", "rank", "player", nulls_last=True
        ),
        whole[0].sort("league", "seq", "rank", "player", nulls_last=True),
        check_exact=True,
    )


def test_chunk_bounds_keep_ties_together_and_sizes_bounded():
    rng = np.random.default_rng(0)
    times = pl.Series(np.sort(rng.integers(0, 300, 5000)))
    for size in (1, 7, 50, 999, 5000, 6000):
        bounds = chunk_bounds(times, size)
        assert bounds[0][0] == 0 and bounds[-1][1] == 5000
        assert all(stop == start for (_, stop), (start, _) in zip(bounds, bounds[1:]))  # consecutive, no gaps
        for start, stop in bounds:
            assert stop > start
            same_time = times[start] == times[stop - 1]
            assert stop - start <= size or same_time  # longer only where one played_at has more rows
            if stop < 5000:
                assert times[stop - 1] != times[stop]  # never splits one played_at
    assert chunk_bounds(pl.Series([5] * 10 + [6] * 3), 4) == [(0, 10), (10, 13)]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_a_bad_chunk_size_is_an_error(bad):
    with pytest.raises(DuckrateInputError, match="chunk_size"):
        duckrate.elo(history(50, 5, 1, False, False), chunk_size=bad)
