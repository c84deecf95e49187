"""duckrate.pairwise against a naive reference (pair counts in a dict, field ratings summed over every
opponent), invariants, hand values, input validation and defaults."""

from __future__ import annotations

import math
from fractions import Fraction

import polars as pl
import pytest
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    assert_leagues_are_independent,
    assert_mirrors,
    assert_null_weight_means_one,
    assert_period_column_is_ignored,
    assert_relabelling_changes_nothing,
    assert_row_order_and_repeats_give_identical_output,
    assert_rows_match_reference,
    assert_seq_is_one_based_and_contiguous_per_league,
    histories,
    name_permutations,
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


def reference_pairwise(frame, prior_games=10.0, initial=1500.0, scale=400.0):
    """Eq. (8) of Tang, Wang & Jin with exact fractions for the counts; the field of a league is the
    players seen so far, this match's two included."""
    leagues = {}
    for r in frame.to_dicts():
        leagues.setdefault(r.get("league"), []).append(r)
    expected = {}
    for league, rows in leagues.items():
        players = []
        wins, games = {}, {}

        def p(i, j):
            return (prior_games / 2 + wins.get((i, j), 0.0)) / (prior_games + games.get(frozenset((i, j)), 0.0))

        def field_rating(i):
            total = math.fsum(math.log(p(i, j) / (1 - p(i, j))) for j in players if j != i)
            return initial + scale / math.log(10) * total / (len(players) - 1)

        for t, r in enumerate(sorted(rows, key=lambda r: (r["played_at"], r["match_id"])), start=1):
            a, b = r["player_a"], r["player_b"]
            players.extend(name for name in (a, b) if name not in players)
            forecast = p(a, b)
            before = field_rating(a), field_rating(b)
            w = r.get("weight") or 1.0
            wins[(a, b)] = wins.get((a, b), 0.0) + w * r["score_a"]
            wins[(b, a)] = wins.get((b, a), 0.0) + w * (1 - r["score_a"])
            games[frozenset((a, b))] = games.get(frozenset((a, b)), 0.0) + w
            expected[r["match_id"]] = {
                "league": league,
                "seq": t,
                "expected_a": forecast,
                "rating_a_before": before[0],
                "rating_b_before": before[1],
                "rating_a_after": field_rating(a),
                "rating_b_after": field_rating(b),
            }
    return expected


@pytest.mark.parametrize("params", [{}, {"prior_games": 2.0, "initial": 0.0, "scale": 1.0}], ids=["defaults", "custom"])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference(seed, params):
    frame = random_history(seed, n=400, n_players=6)  # dense: pairs meet many times
    out = duckrate.pairwise(frame, **params)
    assert_rows_match_reference(
        out,
        frame,
        reference_pairwise(frame, **params),
        FLOAT_COLUMNS,
        tol=1e-9,
        null_columns=["sd_a_before", "sd_b_after"],
    )


def test_hand_values_first_meetings_and_counts():
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [1, 2, 3, 4],
            "player_a": ["A", "B", "A", "C"],
            "player_b": ["B", "A", "B", "A"],
            "score_a": [1.0, 0.5, 1.0, 0.0],
        }
    )
    out = duckrate.pairwise(frame).sort("seq")
    # (5 + wins) / (10 + games), wins of side A counted from both sides, a draw half a win each way
    want = [Fraction(1, 2), Fraction(5, 11), Fraction(13, 24), Fraction(1, 2)]
    assert out["expected_a"].to_list() == [float(x) for x in want]


@PROPERTY_SETTINGS
@given(histories(), st.floats(0.5, 20.0))
def test_property_matches_reference(history, prior_games):
    out = duckrate.pairwise(history, prior_games=prior_games)
    assert_rows_match_reference(
        out, history, reference_pairwise(history, prior_games=prior_games), FLOAT_COLUMNS, tol=1e-9
    )


@PROPERTY_SETTINGS
@given(histories())
def test_property_swapping_sides_mirrors(history):
    assert_mirrors(duckrate.pairwise(history), duckrate.pairwise(swap_sides(history)), kinds=("rating",), atol=1e-9)


@PROPERTY_SETTINGS
@given(histories(), name_permutations)
def test_property_relabelling_players_changes_nothing(history, permutation):
    assert_relabelling_changes_nothing(duckrate.pairwise, history, None, permutation)


@PROPERTY_SETTINGS
@given(histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(history, seed):
    assert_row_order_and_repeats_give_identical_output(duckrate.pairwise, history, seed)


@PROPERTY_SETTINGS
@given(histories())
def test_property_field_ratings_average_to_the_offset(history):
    """Σ_i Σ_{j≠i} logit P[i, j] = 0 (P[j, i] = 1 - P[i, j]): each rating times (N - 1), N the league's
    players seen when it was reported, gives back the player's logit sum, and those sum to zero after
    every match."""
    out = duckrate.pairwise(history)
    per_logit = 400.0 / math.log(10.0)
    for (_league,), group in out.group_by("league"):
        logit_sums, seen = {}, set()
        for row in group.sort("seq").iter_rows(named=True):
            seen |= {row["player_a"], row["player_b"]}
            others = max(len(seen) - 1, 1)
            for side in ("a", "b"):
                logit_sums[row[f"player_{side}"]] = (row[f"rating_{side}_after"] - 1500.0) / per_logit * others
            assert math.fsum(logit_sums.values()) == pytest.approx(0.0, abs=1e-9)


def test_structure_leagues_weights_periods():
    frame = random_history(7, n=300)
    out = duckrate.pairwise(frame)
    assert out.columns == CONTRACT_COLUMNS
    assert_seq_is_one_based_and_contiguous_per_league(out)
    assert_leagues_are_independent(duckrate.pairwise, frame)
    assert_null_weight_means_one(duckrate.pairwise, frame)
    assert_period_column_is_ignored(duckrate.pairwise, frame)


def test_defaults_are_pinned():
    assert python_defaults(duckrate.pairwise) == {
        "prior_games": 10.0,
        "initial": 1500.0,
        "scale": 400.0,
        "priors": None,
        "state": None,
        "chunk_size": None,
    }


@pytest.mark.parametrize(("params", "shown"), [({"prior_games": 0.0}, "prior_games"), ({"scale": -1.0}, "scale")])
def test_bad_parameters(params, shown):
    with pytest.raises(DuckrateInputError, match=shown):
        duckrate.pairwise(one_match(), **params)


def test_priors_are_refused_not_ignored():
    with pytest.raises(DuckrateInputError, match="no scalar starting state"):
        duckrate.pairwise(one_match(), priors=pl.DataFrame({"player": ["A"], "rating": [1700.0]}))
