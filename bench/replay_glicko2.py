"""Benchmark: Glicko-2 through SQL, against the PyPI ``glicko2`` package.

Targets (issue "Glicko, Glicko-2 and two-player TrueSkill replays"): Glicko-2 over 1M matches in at
most 2 s, and at least 10x faster than the ``glicko2`` package on the same 100k matches in the same run.
Each match is its own rating period for its two players (no ``period`` column, no ``period_length``),
which is also how the peer is driven: one ``update_player`` per side per match, from the ratings
before the match. See ``bench/_peer_replay.py`` for what is timed.

Usage (from the repository root)::

    .venv/bin/python bench/replay_glicko2.py
    .venv/bin/python bench/replay_glicko2.py --size 100000 --peer-sample 20000 --repeats 1
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _peer_replay as harness


def peer_glicko2(rows) -> dict:
    """The ``glicko2`` package over ``(player_a, player_b, score_a)`` rows in replay order."""
    import glicko2

    players = {}
    for player_a, player_b, score_a in rows:
        a = players.get(player_a)
        if a is None:
            a = players[player_a] = glicko2.Player()
        b = players.get(player_b)
        if b is None:
            b = players[player_b] = glicko2.Player()
        rating_a, rd_a, rating_b, rd_b = a.rating, a.rd, b.rating, b.rd
        a.update_player([rating_b], [rd_b], [score_a])
        b.update_player([rating_a], [rd_a], [1.0 - score_a])
    return {name: (player.rating, player.rd) for name, player in players.items()}


BENCH = harness.PeerBenchmark(
    title="Glicko-2",
    system="glicko2",
    sql_params="",
    peer_name="glicko2",
    peer=peer_glicko2,
    target_seconds=2.0,
    target_ratio=10.0,
    agreement_note=(
        "The peer's volatility step has a known bug (its f(x) uses the rating mu^2 where Glickman's step 5 "
        "has phi^2), so its ratings drift from Glickman's; duckrate is checked against Glickman's published "
        "example and a reference implementation in tests/unit instead."
    ),
)

if __name__ == "__main__":
    raise SystemExit(harness.main(BENCH, str(Path(__file__).resolve())))
