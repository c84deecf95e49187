"""The grid system replays matches that share no player in parallel (waves): the result must be the serial
replay's bit for bit, whatever the number of threads."""

from __future__ import annotations

import numba
import numpy as np
import polars as pl
import pytest

import duckrate
from duckrate.synthetic import generate_matches
from duckrate.systems.chance.replay import waves


def test_waves_keep_each_players_order_and_never_share_a_player():
    rng = np.random.default_rng(5)
    n_states, n = 40, 3000
    a = rng.integers(0, n_states, n)
    b = (a + 1 + rng.integers(0, n_states - 1, n)) % n_states
    order = rng.permutation(n)
    grouped, start = waves(order, a, b, n_states)
    assert sorted(grouped.tolist()) == sorted(order.tolist())
    position = {row: p for p, row in enumerate(order.tolist())}
    wave_of = {}
    for w in range(start.shape[0] - 1):
        rows = grouped[start[w] : start[w + 1]]
        players = np.concatenate([a[rows], b[rows]])
        assert len(set(players.tolist())) == players.size  # no player twice in a wave
        assert [position[r] for r in rows] == sorted(position[r] for r in rows)  # replay order within a wave
        wave_of.update({int(r): w for r in rows})
    for player in range(n_states):  # every player's matches in replay order, one wave each
        rows = [r for r in order.tolist() if a[r] == player or b[r] == player]
        assert [wave_of[r] for r in rows] == sorted(set(wave_of[r] for r in rows))


@pytest.mark.slow  # 5-7 s on 2 cores: the replay on one thread and on all
def test_the_replay_is_the_same_on_one_thread_and_on_all():
    games = generate_matches(20_000, 400, n_leagues=2, seed=8)
    priors = pl.DataFrame({"player": games["player_a"].unique().sort()[:50], "rating": 1600.0, "sd": 120.0})
    threads = numba.get_num_threads()
    results = []
    try:
        for count in (1, max(2, threads)):
            numba.set_num_threads(min(count, numba.config.NUMBA_NUM_THREADS))
            results.append(
                [
                    duckrate.chance(games),
                    duckrate.chance(games, sigmoid="normal", priors=priors),
                    duckrate.chance(games.head(3000), algorithm="naive"),
                ]
            )
    finally:
        numba.set_num_threads(threads)
    for serial, parallel in zip(*results):
        assert serial.equals(parallel)
