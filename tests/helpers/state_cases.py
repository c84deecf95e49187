"""Two-player histories for the saved-state tests: the cases, random histories, and a replay in batches
each continued from the state the last one saved (as the incremental dbt model does)."""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.systems.two_player import replay_with_state

# (system, parameters, matches have weights, matches have a period column)
CASES = [
    ("elo", {}, True, False),
    ("elo", {"k": 20, "advantage": 30}, True, False),
    ("glicko", {}, True, False),
    ("glicko", {"period_length": 1.0}, True, False),
    ("glicko", {}, True, True),
    ("glicko2", {}, True, False),
    ("glicko2", {"period_length": 1.0}, True, False),
    ("trueskill", {}, False, False),
    # options that change the saved state: RD floor and cap, growth, period length, priors of newcomers
    ("glicko", {"c": 60.0, "rd_max": 300.0, "rd": 250.0, "rd_min": 40.0, "period_length": 0.5}, True, False),
    (
        "glicko",
        {
            "rd_min": 30.0,
            "priors": pl.DataFrame(
                {
                    "player": ["p1", "p2", "p3", "p4"],
                    "league": ["east", None, "west", None],
                    "rating": [1700.0, 1300.0, 1550.0, 1800.0],
                    "sd": [80.0, 500.0, 10.0, None],
                }
            ),
        },
        True,
        True,
    ),
    ("glicko2", {}, True, True),
    (
        "glicko2",
        {
            "tau": 1.1,
            "rd_min": 45.0,
            "volatility": 0.09,
            "priors": pl.DataFrame(
                {
                    "player": ["p1", "p2", "p3"],
                    "league": ["east", None, "west"],
                    "rating": [1700.0, 1300.0, 1550.0],
                    "sd": [80.0, 500.0, 10.0],
                    "volatility": [0.2, None, 0.01],
                }
            ),
        },
        True,
        True,
    ),
    (
        "trueskill",
        {
            "tau": 0.5,
            "draw_probability": 0.0,
            "priors": pl.DataFrame(
                {
                    "player": ["p1", "p2", "p3"],
                    "league": ["east", None, "west"],
                    "rating": [30.0, 20.0, 25.0],
                    "sd": [1.0, 12.0, None],
                }
            ),
        },
        False,
        False,
    ),
    ("chance", {"grid_points": 201}, False, False),
    ("chance", {"grid_points": 51, "algorithm": "naive", "kernel": "laplace", "drift_sd": 0.1}, False, False),
    ("chance", {"grid_points": 61, "sigmoid": "laplace", "kernel": "laplace", "beta": 1.0}, False, False),
    ("elo2k", {}, True, False),
    ("elo2k", {"dim": 2, "seed": 7}, True, False),
    ("pairwise", {}, True, False),
    ("pairwise", {"prior_games": 3.0, "initial": 0.0, "scale": 1.0}, True, False),
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
