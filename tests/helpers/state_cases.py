"""Two-player histories for the saved-state tests: the cases, random histories, and a replay in batches
each continued from the state the last one saved (as the incremental dbt model does)."""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.systems.two_player import replay_with_state
from helpers.systems import two_player_systems

# (system, parameters, matches have weights, matches have a period column): every preset of every registered
# two-player system (the presets live on the registry entries)
CASES = [
    (system.name, preset.kwargs(), system.weighted, preset.period_column)
    for system in two_player_systems()
    for preset in system.presets
    if preset.resumable
]


def history(n: int, n_players: int, seed: int, weights: bool, periods: bool) -> pl.DataFrame:
    """Random matches over a few days in two leagues plus league-less rows, with many ties in played_at."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    minutes = np.sort(rng.integers(0, 4 * 24 * 60, n)) // 180 * 180  # ties: 3-hour buckets
    frame = pl.DataFrame(
        {
            "match_id": rng.permutation(n).astype(np.int64) + 1000,
            "played_at": pl.Series(minutes * 60_000_000, dtype=pl.Int64).cast(pl.Datetime("us")),
            "league": rng.choice(np.array(["east", "west", None], dtype=object), n).tolist(),
            "player_a": [f"p{x}" for x in a],
            "player_b": [f"p{x}" for x in b],
            "score_a": rng.choice([0.0, 0.5, 1.0], n, p=[0.45, 0.1, 0.45]),
        }
    )
    if weights:
        frame = frame.with_columns(pl.Series("weight", rng.choice([1.0, 0.5, 2.0], n)))
    if periods:
        frame = frame.with_columns((pl.Series(minutes // (24 * 60))).alias("period"))
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)  # input row order carries no meaning


def replay_in_batches(system, matches: pl.DataFrame, cuts: list[int], params: dict):
    """Replay ``matches`` in batches of (played_at, match_id) order cut at ``cuts``, each from the saved
    state of the last; re-passes the open period's matches as the state asks. Returns (rows, state)."""
    ordered = matches.sort("played_at", "match_id")
    bounds = [0, *cuts, ordered.height]
    rows: dict = {}
    state = None
    for start, stop in zip(bounds[:-1], bounds[1:]):
        batch = ordered[start:stop]
        if state is not None:
            pending = state.filter(pl.col("kind") == "league")["pending_ids"].explode().drop_nulls().to_list()
            again = ordered[:start].filter(pl.col("match_id").cast(pl.Utf8).is_in(pending))
            batch = pl.concat([again, batch])
        out, state = replay_with_state(system, batch, state=state, **params)
        rows.update({row["match_id"]: row for row in out.iter_rows(named=True)})
    frame = pl.DataFrame(list(rows.values()), schema=out.schema).sort("league", "seq", nulls_last=True)
    return frame, state
