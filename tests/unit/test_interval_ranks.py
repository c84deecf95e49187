"""rank_upper, rank_lower and tier: against a naive O(n²) transcription of their definitions, on every
leaderboard (replays, contests, bt_fit), in SQL and Python alike."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers import mart_oracles

import duckrate
from duckrate.core.ranks import interval_ranks
from duckrate.synthetic import generate_contests, generate_matches


def naive(rating, lower, upper):
    n = len(rating)
    best = [1 + sum(lower[j] > upper[i] for j in range(n)) for i in range(n)]
    worst = [n - sum(upper[j] < lower[i] for j in range(n)) for i in range(n)]
    tiers, tier, anchor = [], 0, None
    for k in range(n):
        if anchor is None or upper[k] < lower[anchor]:
            tier, anchor = tier + 1, k
        tiers.append(tier)
    return best, worst, tiers


@pytest.mark.parametrize("seed", range(5))
def test_definitions(seed):
    rng = np.random.default_rng(seed)
    n = 60
    rating = np.sort(rng.normal(1500, 200, n))[::-1]
    rating[rng.integers(0, n, 5)] = rating[0]  # ties in rating and in bounds
    rating = np.sort(rating)[::-1]
    sd = rng.uniform(5, 80, n)
    sd[::7] = 0.0
    lower, upper = rating - 1.96 * sd, rating + 1.96 * sd
    got = interval_ranks(rating, lower, upper)
    assert [list(values) for values in got] == [list(values) for values in naive(rating, lower, upper)]
    rank = np.arange(1, n + 1)
    assert np.all(got[0] <= rank) and np.all(rank <= got[1])
    assert np.all(np.diff(got[2]) >= 0)


@pytest.mark.parametrize(
    "lower, upper, tiers",
    [
        ([100.0, 90.0, 75.0, 70.0], [120.0, 110.0, 95.0, 80.0], [1, 1, 2, 2]),  # C overlaps B, not the leader A
        ([10.0, 0.0, -20.0], [20.0, 10.0, -1.0], [1, 1, 2]),  # touching intervals overlap
        ([9.0, 7.0, 5.0], [10.0, 8.0, 6.0], [1, 2, 3]),
    ],
)
def test_tiers_compare_with_the_first_player_of_the_tier(lower, upper, tiers):
    rating = (np.array(lower) + np.array(upper)) / 2
    assert list(interval_ranks(rating, np.array(lower), np.array(upper))[2]) == tiers


def test_players_without_interval_or_rating():
    rating = np.array([3.0, 2.0, 1.0, np.nan])
    lower = np.array([np.nan, 1.5, 0.0, np.nan])
    upper = np.array([np.nan, 2.5, 2.0, np.nan])
    best, worst, tier = interval_ranks(rating, lower, upper)
    assert list(best) == [1, 2, 2, 4] and list(worst) == [1, 3, 3, 4] and list(tier) == [1, 2, 2, 3]


def check_groups(table: pl.DataFrame, keys: list[str]):
    for _, part in table.group_by(keys, maintain_order=True):
        part = part.sort("rating", descending=True, nulls_last=True)
        expected = naive(*(part[c].fill_null(np.nan).to_numpy() for c in ("rating", "lower", "upper")))
        assert [part[c].to_list() for c in ("rank_upper", "rank_lower", "tier")] == [list(e) for e in expected]


def test_every_leaderboard_has_them_in_sql_and_python():
    matches = generate_matches(2000, 40, seed=2, n_leagues=2)
    replay = duckrate.glicko(matches).with_columns(system=pl.lit("glicko"))
    results = generate_contests(15, 20, 60, seed=2)
    contest_replay = duckrate.elo_mmr(results).with_columns(system=pl.lit("elo_mmr"))
    con = duckrate.register(duckdb.connect())
    con.register("r", replay)
    con.register("c", contest_replay)
    con.register("m", matches)
    for name, python, sql in [
        ("leaderboard", mart_oracles.leaderboard(replay), con.sql("SELECT * FROM leaderboard('r')").pl()),
        (
            "contest_leaderboard",
            mart_oracles.contest_leaderboard(contest_replay),
            con.sql("SELECT * FROM contest_leaderboard('c')").pl(),
        ),
    ]:
        assert python.drop("last_played_at").equals(sql.drop("last_played_at")), name
        check_groups(
            python.with_columns(
                pl.col("lower").fill_null(pl.col("rating")), pl.col("upper").fill_null(pl.col("rating"))
            ),
            ["league", "system"],
        )
    fit = duckrate.bt_fit(matches)
    check_groups(fit, ["league"])
    assert fit.select("rank_upper", "rank_lower", "tier").equals(
        con.sql("SELECT rank_upper, rank_lower, tier FROM bt_fit('m')").pl()
    )
