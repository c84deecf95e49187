"""The Codeforces system: the published integer algorithm (variant 'mirzayanov') against a naive transcription
of Mirzayanov's description kept here, its corrections' guarantee, the reference variant's agreement with
the Elo-MMR reference implementation at contest sizes where the shared-sum fit is used, and monotonicity
in rank."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from helpers.contest_peer import reference_ratings

import duckrate
from duckrate import DuckrateInputError
from duckrate.synthetic import generate_contests


def java_div(a: int, b: int) -> int:
    """Java's int division (truncates towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def naive_mirzayanov(results: pl.DataFrame) -> dict:
    """{(contest_id, player): (need rating, new rating)}, contest by contest, as the 2015 blog describes it."""
    ratings: dict[str, int] = {}
    out = {}
    for (contest_id,), part in results.sort("played_at", "contest_id", "rank", "player").group_by(
        ["contest_id"], maintain_order=True
    ):
        names = part["player"].to_list()
        ranks = part["rank"].to_list()
        current = {name: ratings.get(name, 1500) for name in names}
        place = {}  # the last 1-based place of each tie group
        for i, rank in enumerate(ranks):
            place[rank] = i + 1

        def win(ra, rb):  # P(a beats b)
            return 1.0 / (1.0 + math.pow(10.0, (rb - ra) / 400.0))

        def seed_of(rating):
            return 1.0 + sum(win(current[other], rating) for other in names)

        need, delta = {}, {}
        for name, rank in zip(names, ranks):
            seed = 1.0 + sum(win(current[other], current[name]) for other in names if other != name)
            mid_rank = math.sqrt(place[rank] * seed)
            left, right = 1, 8000
            while right - left > 1:
                mid = (left + right) // 2
                if seed_of(mid) < mid_rank:
                    right = mid
                else:
                    left = mid
            need[name] = left
            delta[name] = java_div(left - current[name], 2)
        by_rating = sorted(names, key=lambda name: -current[name])  # stable: standings order among ties
        increment = java_div(-sum(delta.values()), len(names)) - 1
        for name in names:
            delta[name] += increment
        top = min(4 * int(math.floor(math.sqrt(len(names)) + 0.5)), len(names))
        increment = min(max(java_div(-sum(delta[name] for name in by_rating[:top]), top), -10), 0)
        for name in names:
            ratings[name] = current[name] + delta[name] + increment
            out[(contest_id, name)] = (need[name], ratings[name])
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mirzayanov_equals_the_published_algorithm(seed):
    results = generate_contests(60, 30, 150, seed=seed, tie_rate=0.1).drop("league")
    rows = duckrate.codeforces(results, variant="mirzayanov")
    expected = naive_mirzayanov(results)
    for row in rows.iter_rows(named=True):
        assert (row["performance"], row["rating_after"]) == expected[(row["contest_id"], row["player"])]


def test_mirzayanov_corrections_keep_each_contest_sum_below_zero():
    rows = duckrate.codeforces(generate_contests(40, 50, 200, seed=4).drop("league"), variant="mirzayanov")
    sums = rows.group_by("contest_id").agg((pl.col("rating_after") - pl.col("rating_before")).sum().alias("sum"))
    assert (sums["sum"] < 0).all()
    assert (rows["rating_after"] == rows["rating_after"].round()).all()


def test_mirzayanov_refuses_contest_weights():
    results = generate_contests(5, 10, 30, seed=1).with_columns(pl.lit(2.0).alias("weight"))
    with pytest.raises(DuckrateInputError, match="variant 'mirzayanov' has no contest weights"):
        duckrate.codeforces(results, variant="mirzayanov")


def test_reference_variant_agrees_with_the_reference_at_fitted_sizes():
    """Contests of 300-1500 players use the per-contest fit of the shared sums, not exact sums."""
    results = generate_contests(30, 800, 3000, seed=8, tie_rate=0.02).drop("league")
    rows = duckrate.codeforces(results)
    reference = reference_ratings(results, "cfsys")
    expected = np.array([reference[(c, p)][0] for c, p in zip(rows["contest_id"], rows["player"])])
    assert np.abs(rows["rating_after"].to_numpy() - expected).max() < 1e-6


@pytest.mark.parametrize("variant", ["reference", "mirzayanov"])
def test_a_better_place_never_lowers_the_new_rating(variant):
    results = generate_contests(20, 40, 100, seed=6).drop("league")
    last = results.filter(pl.col("contest_id") == results["contest_id"].max()).sort("rank")
    mover = last["player"][len(last) // 2]

    def rating_after(rank: int) -> float:
        moved = results.with_columns(
            pl.when((pl.col("contest_id") == last["contest_id"][0]) & (pl.col("player") == mover))
            .then(rank)
            .otherwise(pl.col("rank"))
            .alias("rank")
        )
        rows = duckrate.codeforces(moved, variant=variant)
        return rows.filter((pl.col("player") == mover) & (pl.col("contest_id") == last["contest_id"][0]))[
            "rating_after"
        ][0]

    after = [rating_after(rank) for rank in (len(last), len(last) // 2, 2, 1)]
    assert after == sorted(after)
