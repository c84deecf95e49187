"""Contest histories for the Elo-MMR saved-state tests: random histories, their contests in replay order,
and a replay in batches of whole contests each continued from the state the last one saved."""

from __future__ import annotations

import numpy as np
import polars as pl

import duckrate

KEY = ["league", "seq", "rank", "player"]


def contest_history(n_contests: int, seed: int, weights: bool = True, string_ids: bool = False) -> pl.DataFrame:
    """Random contests over a few weeks: 2-14 players each from a pool that grows over time (newcomers
    keep arriving), ranks with ties, several contests a day (ties in played_at), ids not in time order."""
    rng = np.random.default_rng(seed)
    days = np.sort(rng.integers(0, 30, n_contests))
    ids = rng.permutation(n_contests) + 100
    leagues = rng.choice(np.array(["east", "west", None], dtype=object), n_contests)
    frames = []
    for c in range(n_contests):
        pool = 8 + 2 * c  # later contests reach players never seen before
        size = int(rng.integers(2, 15))
        players = rng.choice(pool, size=min(size, pool), replace=False)
        ranks = np.sort(rng.integers(1, size + 1, len(players)))
        ranks[0] = 1
        frames.append(
            pl.DataFrame(
                {
                    "contest_id": [f"c{ids[c]:04d}" if string_ids else int(ids[c])] * len(players),
                    "played_at": pl.Series([int(days[c])] * len(players), dtype=pl.Int64).cast(pl.Date),
                    "league": pl.Series([leagues[c]] * len(players), dtype=pl.Utf8),
                    "player": [f"p{p}" for p in players],
                    "rank": ranks.astype(np.int64),
                    "weight": pl.Series(
                        [float(rng.choice([1.0, 0.5, 2.0])) if weights and c % 3 else None] * len(players),
                        dtype=pl.Float64,
                    ),
                }
            )
        )
    frame = pl.concat(frames)
    if not weights:
        frame = frame.drop("weight")
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)  # input row order carries no meaning


def contest_order(results: pl.DataFrame) -> pl.DataFrame:
    """The contests in replay order: (played_at, contest_id), one row each."""
    return (
        results.select("league", "contest_id", "played_at")
        .unique()
        .sort("played_at", "contest_id", "league", nulls_last=True)
    )


def in_batches(results: pl.DataFrame, cuts: list[int], params: dict, priors=None, system: str = "elo_mmr"):
    """Replay ``results`` with ``system`` in batches of whole contests cut at ``cuts`` (positions in replay
    order), each continuing the state of the last. Returns (rows, state)."""
    contests = contest_order(results)
    bounds = [0, *cuts, contests.height]
    parts, state = [], None
    for start, stop in zip(bounds[:-1], bounds[1:]):
        batch = results.join(
            contests[start:stop], on=["league", "contest_id", "played_at"], how="semi", nulls_equal=True
        )
        rows, state = duckrate.replay_with_state(system, batch, state=state, priors=priors, **params)
        parts.append(rows)
    return pl.concat(parts).sort(KEY, nulls_last=True), state
