"""The dbt materialization's chunks hand the state on in memory (the token macro's ``carry``): the same rows
and state, bit for bit, as merging the state into a table after every chunk, including each league's
player count (Elo's decaying schedule reads it), new players in later chunks, the saved state's players
met again in a later chunk, pair state (Pairwise) and an empty chunk."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import duckrate

STATE_ORDER = ["kind", "league", "player", "opponent"]
# Elo's decaying schedule refuses to continue a state whose league gained players (its N changes): there
# every player plays in the first chunk, and a wrong carried count is an error.
CASES = [
    ("elo", {"a": 4000.0, "b": 50.0}, False),
    ("elo", {"k": 24.0}, True),
    ("pairwise", {}, True),
    ("chance", {"grid_points": 101}, True),
    ("trueskill", {}, True),
]


def history(n: int, n_players: int, seed: int, joining: bool) -> pl.DataFrame:
    """Matches, many sharing a played_at; with ``joining``, in two leagues and league-less, players joining
    over time; else in one league whose every player plays in its first ``n_players`` matches."""
    rng = np.random.default_rng(seed)
    pool = np.maximum(4, (np.arange(n) * n_players) // n + 1) if joining else np.full(n, n_players)
    a = (rng.random(n) * pool).astype(np.int64)
    b = (a + 1 + (rng.random(n) * (pool - 1)).astype(np.int64)) % pool
    leagues = rng.choice(np.array(["east", "west", None], dtype=object), n).tolist()
    if not joining:
        a[:n_players], b[:n_players], leagues = (
            np.arange(n_players),
            (np.arange(n_players) + 1) % n_players,
            ["east"] * n,
        )
    return pl.DataFrame(
        {
            "match_id": np.arange(n, dtype=np.int64) + 1000,
            "played_at": pl.Series(np.arange(n) // 7 * 3_600_000_000, dtype=pl.Int64).cast(pl.Datetime("us")),
            "league": leagues,
            "player_a": [f"p{x}" for x in a],
            "player_b": [f"p{x}" for x in b],
            "score_a": rng.choice([0.0, 0.5, 1.0], n, p=[0.45, 0.1, 0.45]),
        }
    )


def _params(params: dict) -> str:
    return "".join(f", {name} := {value!r}" for name, value in params.items())


def replay_in_sql_chunks(con, system: str, params: dict, saved: str | None, carry: bool, n_chunks: int):
    """Replay table ``m`` in ``n_chunks`` chunks of whole played_at values (the last one empty) as the
    materialization does: handing the state on in memory (``carry``) or merging it into a table each time."""
    times = [row[0] for row in con.execute("SELECT DISTINCT played_at FROM m ORDER BY 1").fetchall()]
    cuts = [f"'{times[len(times) * j // (n_chunks - 1)]}'" for j in range(1, n_chunks - 1)]
    ranges = list(zip(["'-infinity'", *cuts], [*cuts, "'infinity'"])) + [
        ("'infinity'", "'infinity'")
    ]  # the last: empty
    rows, state_from = [], saved
    for j, (lower, upper) in enumerate(ranges):
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE c AS SELECT * FROM m WHERE played_at >= {lower} AND played_at < {upper}"
        )
        state = f", state := '{saved if carry else state_from}'" if (saved if carry else state_from) else ""
        handed = ", carry := 'carried'" if carry and j else ""
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE t AS SELECT token FROM duckrate_{system}_token('c'{_params(params)}{state}{handed})"
        )
        rows.append(con.sql(f"SELECT * FROM duckrate_{system}_rows('c', 't')").pl())
        if carry and j < len(ranges) - 1:
            leagues = con.sql("SELECT * FROM duckrate_carried_leagues('t')").pl()
            assert leagues["kind"].to_list() == ["league"] * leagues.height
            con.execute("DROP TABLE IF EXISTS carried; ALTER TABLE t RENAME TO carried")
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE s{j} AS SELECT * FROM duckrate_next_state('t'{state})")
            state_from = f"s{j}"
    return pl.concat(rows), con.sql(f"SELECT * FROM {state_from}").pl()


@pytest.mark.parametrize("continued", [False, True])
@pytest.mark.parametrize("system, params, joining", CASES, ids=[f"{s}-{i}" for i, (s, _, _) in enumerate(CASES)])
def test_carried_state_equals_merged_state(system, params, joining, continued):
    matches = history(900, 60, 3, joining)
    con = duckrate.register(duckdb.connect())
    saved = None
    if continued:
        con.register("first", matches[:300].to_arrow())
        con.execute(f"CREATE TABLE saved AS SELECT * FROM {system}_state('first'{_params(params)})")
        matches, saved = matches[300:], "saved"
    con.register("m_view", matches.to_arrow())
    con.execute("CREATE TABLE m AS SELECT * FROM m_view")
    merged = replay_in_sql_chunks(con, system, params, saved, carry=False, n_chunks=5)
    carried = replay_in_sql_chunks(con, system, params, saved, carry=True, n_chunks=5)
    assert merged[0].height == matches.height
    assert_frame_equal(carried[0].sort("match_id"), merged[0].sort("match_id"), check_exact=True)
    assert_frame_equal(
        carried[1].sort(STATE_ORDER, nulls_last=True), merged[1].sort(STATE_ORDER, nulls_last=True), check_exact=True
    )
    assert (
        carried[1].filter(pl.col("kind") == "league")["n_players"].sum()
        == carried[1].filter(pl.col("kind") == "player").height
    )
