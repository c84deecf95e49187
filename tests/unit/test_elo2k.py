"""duckrate.elo2k against a naive reference (its own seeding, its own O(N) field ratings), invariants,
hand values, input validation and defaults."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import polars as pl
import pytest
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    assert_leagues_are_independent,
    assert_mirrors,
    assert_null_weight_means_one,
    assert_period_column_is_ignored,
    assert_row_order_and_repeats_give_identical_output,
    assert_rows_match_reference,
    assert_seq_is_one_based_and_contiguous_per_league,
    histories,
    one_match,
    property_settings,
    python_defaults,
    random_history,
    swap_sides,
)
from hypothesis import given
from hypothesis import strategies as st

import duckrate
from duckrate import DuckrateInputError

FLOAT_COLUMNS = ["expected_a", "rating_a_before", "rating_b_before", "rating_a_after", "rating_b_after"]
PROPERTY_SETTINGS = property_settings(60)
MASK = (1 << 64) - 1


# --------------------------------------------------------------------------------------------------
# The naive reference: the paper's update on Python lists, each player's start drawn by a plain-Python
# splitmix64 from a keyed BLAKE2b digest of the name, and the field rating summed over every opponent.


def reference_start(name: str, seed: int, dim: int, init_max: float):
    state = int.from_bytes(
        hashlib.blake2b(name.encode(), digest_size=8, key=seed.to_bytes(8, "little", signed=True)).digest(), "little"
    )
    values = []
    for _ in range(2 * dim):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        values.append(init_max * ((z >> 11) * 2.0**-53))
    return values[:dim], values[dim:]


def reference_elo2k(
    frame, dim=4, eta=32 * math.log(10) / 400, a=None, b=None, seed=0, init_max=0.1, initial=1500.0, scale=400.0
):
    rows = frame.to_dicts()
    leagues = {}
    for r in rows:
        leagues.setdefault(r.get("league"), []).append(r)
    expected = {}
    for league, league_rows in leagues.items():
        players = sorted({r["player_a"] for r in league_rows} | {r["player_b"] for r in league_rows})
        u, v = {}, {}
        for p in players:
            u[p], v[p] = reference_start(p, seed, dim, init_max)
        n = len(players)  # the decaying schedule's N: the league's players over the whole input
        seen = []  # the field: players seen so far, this match's two included

        def field_rating(i):
            total = math.fsum(sum(u[i][d] * v[j][d] - u[j][d] * v[i][d] for d in range(dim)) for j in seen if j != i)
            return initial + scale / math.log(10) * total / (len(seen) - 1)

        for t, r in enumerate(sorted(league_rows, key=lambda r: (r["played_at"], r["match_id"])), start=1):
            pa_, pb = r["player_a"], r["player_b"]
            seen.extend(name for name in (pa_, pb) if name not in seen)
            logit = sum(u[pa_][d] * v[pb][d] - u[pb][d] * v[pa_][d] for d in range(dim))
            p = 1 / (1 + math.exp(-logit))
            before = field_rating(pa_), field_rating(pb)
            step = math.sqrt(a * n / (t + b)) if a is not None else eta
            g = step * (r.get("weight") or 1.0) * (r["score_a"] - p)
            ua, ub, va, vb = list(u[pa_]), list(u[pb]), list(v[pa_]), list(v[pb])
            u[pa_] = [ua[d] + g * vb[d] for d in range(dim)]
            u[pb] = [ub[d] - g * va[d] for d in range(dim)]
            v[pa_] = [va[d] - g * ub[d] for d in range(dim)]
            v[pb] = [vb[d] + g * ua[d] for d in range(dim)]
            expected[r["match_id"]] = {
                "league": league,
                "seq": t,
                "expected_a": p,
                "rating_a_before": before[0],
                "rating_b_before": before[1],
                "rating_a_after": field_rating(pa_),
                "rating_b_after": field_rating(pb),
            }
    return expected


PARAMETER_SETS = {
    "defaults": {},
    "dim1_big_start": {"dim": 1, "init_max": 1.0, "eta": 0.5},
    "schedule_seed": {"a": 0.05, "b": 10.0, "seed": 12345, "dim": 3},
    "display": {"initial": 0.0, "scale": 173.7178, "seed": -3},
}


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference(seed, params):
    frame = random_history(seed, n=250, n_players=9)
    out = duckrate.elo2k(frame, **params)
    assert_rows_match_reference(
        out,
        frame,
        reference_elo2k(frame, **params),
        FLOAT_COLUMNS,
        tol=1e-9,
        null_columns=["sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after"],
    )


def test_start_depends_only_on_name_and_seed():
    """A player's start does not depend on who else plays or on row order: alone against a stranger, the
    first forecast is the same as in a crowd."""
    crowd = random_history(3, n=200, n_players=8, leagues=(None,))
    first = duckrate.elo2k(crowd).sort("seq").row(0, named=True)
    alone = pl.DataFrame(
        {
            "match_id": [1],
            "played_at": [0],
            "player_a": [first["player_a"]],
            "player_b": [first["player_b"]],
            "score_a": [1.0],
        }
    )
    assert duckrate.elo2k(alone)["expected_a"][0] == first["expected_a"]
    assert duckrate.elo2k(alone, seed=1)["expected_a"][0] != first["expected_a"]


def test_zero_start_never_moves():
    """With every entry starting at 0 the gradient is 0: forecasts stay ½ and ratings at the offset."""
    out = duckrate.elo2k(random_history(5, n=100), init_max=0.0)
    assert (out["expected_a"] == 0.5).all()
    assert (out["rating_a_after"] == 1500.0).all()


def test_rock_paper_scissors_is_learned():
    """A cyclic game no scalar rating can fit: Elo2k's forecasts approach the true 0.9 while Elo's stay near ½."""
    cycle = [("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")]
    rng = np.random.default_rng(0)
    rows = []
    for t in range(6000):
        winner, loser = cycle[t % 3]
        won = rng.random() < 0.9
        a, b = (winner, loser) if rng.random() < 0.5 else (loser, winner)
        rows.append((t, t, a, b, float(won if a == winner else not won)))
    frame = pl.DataFrame(rows, schema=["match_id", "played_at", "player_a", "player_b", "score_a"], orient="row")
    elo2k_late = duckrate.elo2k(frame, eta=0.2, init_max=0.5).filter(pl.col("seq") > 5000)
    elo_late = duckrate.elo(frame).filter(pl.col("seq") > 5000)
    wins = {w: l for w, l in cycle}
    p_true = [0.9 if wins[a] == b else 0.1 for a, b in zip(elo2k_late["player_a"], elo2k_late["player_b"])]
    assert np.abs(elo2k_late["expected_a"].to_numpy() - p_true).mean() < 0.1  # noise of a fixed step
    assert np.abs(elo_late["expected_a"].to_numpy() - p_true).mean() > 0.3


@PROPERTY_SETTINGS
@given(histories(), st.integers(1, 5), st.floats(0.01, 1.0), st.integers(-5, 5))
def test_property_matches_reference(history, dim, eta, seed):
    out = duckrate.elo2k(history, dim=dim, eta=eta, seed=seed, init_max=0.5)
    assert_rows_match_reference(
        out,
        history,
        reference_elo2k(history, dim=dim, eta=eta, seed=seed, init_max=0.5),
        FLOAT_COLUMNS,
        tol=1e-9,
        null_columns=["sd_a_before"],
    )


@PROPERTY_SETTINGS
@given(histories(), st.integers(1, 5))
def test_property_swapping_sides_mirrors(history, dim):
    out = duckrate.elo2k(history, dim=dim, init_max=0.5)
    assert_mirrors(out, duckrate.elo2k(swap_sides(history), dim=dim, init_max=0.5), kinds=("rating",), atol=1e-9)


@PROPERTY_SETTINGS
@given(histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(history, seed):
    assert_row_order_and_repeats_give_identical_output(duckrate.elo2k, history, seed, init_max=0.5)


def test_structure_leagues_weights_periods():
    frame = random_history(7, n=300)
    out = duckrate.elo2k(frame)
    assert out.columns == CONTRACT_COLUMNS
    assert_seq_is_one_based_and_contiguous_per_league(out)
    assert_leagues_are_independent(duckrate.elo2k, frame)
    assert_null_weight_means_one(duckrate.elo2k, frame)
    assert_period_column_is_ignored(duckrate.elo2k, frame)


def test_hand_values_one_match():
    u_a, v_a = reference_start("A", 0, 4, 0.1)
    u_b, v_b = reference_start("B", 0, 4, 0.1)
    logit = sum(x * y for x, y in zip(u_a, v_b)) - sum(x * y for x, y in zip(u_b, v_a))
    row = duckrate.elo2k(one_match()).row(0, named=True)
    assert row["expected_a"] == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-15)
    assert row["rating_a_before"] == pytest.approx(1500 + 400 / math.log(10) * logit, abs=1e-9)
    assert row["rating_b_before"] == pytest.approx(1500 - 400 / math.log(10) * logit, abs=1e-9)


def test_defaults_are_pinned():
    assert python_defaults(duckrate.elo2k) == {
        "dim": 4,
        "eta": 32 * math.log(10) / 400,
        "a": None,
        "b": None,
        "seed": 0,
        "init_max": 0.1,
        "initial": 1500.0,
        "scale": 400.0,
        "priors": None,
        "state": None,
        "chunk_size": None,
    }
    assert duckrate.systems.ELO2K.defaults == {
        k: v for k, v in python_defaults(duckrate.elo2k).items() if k not in ("priors", "state", "chunk_size")
    }


@pytest.mark.parametrize(
    ("params", "shown"),
    [
        ({"dim": 0}, "dim = 0"),
        ({"dim": 2.5}, "dim = 2.5"),
        ({"eta": -1.0}, "eta"),
        ({"a": 1.0}, "a and b"),
        ({"init_max": float("nan")}, "init_max"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_bad_parameters(params, shown):
    with pytest.raises(DuckrateInputError, match=shown):
        duckrate.elo2k(one_match(), **params)


def test_priors_are_refused_not_ignored():
    priors = pl.DataFrame({"player": ["A"], "rating": [1700.0]})
    with pytest.raises(DuckrateInputError, match="no scalar starting state"):
        duckrate.elo2k(one_match(), priors=priors)
    empty = priors.clear()
    assert duckrate.elo2k(one_match(), priors=empty).height == 1
