"""Benchmark: two-player TrueSkill through SQL, against the PyPI ``trueskill`` package.

Targets (issue "Glicko, Glicko-2 and two-player TrueSkill replays"): TrueSkill over 1M matches in at
most 1 s, and at least 50x the ``trueskill`` package on the same 100k matches in the same run. The
peer uses its default environment (mu 25, sigma 25/3, beta 25/6, tau 25/300, draw probability 0.10)
and its default pure-Python backend, its fastest. See ``bench/_peer_replay.py`` for what is timed.

Usage (from the repository root)::

    .venv/bin/python bench/replay_trueskill.py
    .venv/bin/python bench/replay_trueskill.py --size 100000 --peer-sample 20000 --repeats 1
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _peer_replay as harness


def peer_trueskill(rows) -> dict:
    """The ``trueskill`` package's ``rate_1vs1`` over ``(player_a, player_b, score_a)`` rows in replay order."""
    import trueskill

    env = trueskill.TrueSkill()
    ratings = {}
    fresh = env.create_rating()
    for player_a, player_b, score_a in rows:
        a = ratings.get(player_a, fresh)
        b = ratings.get(player_b, fresh)
        if score_a == 1.0:
            a, b = env.rate_1vs1(a, b)
        elif score_a == 0.0:
            b, a = env.rate_1vs1(b, a)
        else:
            a, b = env.rate_1vs1(a, b, drawn=True)
        ratings[player_a], ratings[player_b] = a, b
    return {name: (rating.mu, rating.sigma) for name, rating in ratings.items()}


BENCH = harness.PeerBenchmark(
    title="TrueSkill (two players)",
    system="trueskill",
    sql_params="",
    peer_name="trueskill",
    peer=peer_trueskill,
    target_seconds=1.0,
    target_ratio=50.0,
    tolerance=1e-4,
    agreement_note=(
        "The peer's default backend approximates erfc by the Numerical Recipes Chebyshev fit (fractional error "
        "< 1.2e-7) and its inverse by two Newton steps, and these per-update errors accumulate along 100k "
        "sequential updates; hence the loose tolerance here. tests/unit compare every column against the "
        "package's scipy backend to 2e-13."
    ),
)

if __name__ == "__main__":
    raise SystemExit(harness.main(BENCH, str(Path(__file__).resolve())))
