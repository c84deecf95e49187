"""duckrate.elo against a naive reference, its invariants, hand values, input validation and defaults."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import polars as pl
import pytest
from helpers import replay_cases
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    MATCH_SCHEMA,
    SD_COLUMNS,
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
    prior_state,
    prior_values,
    priors_frame,
    property_settings,
    python_defaults,
    swap_sides,
)
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import duckrate
from duckrate import DuckrateInputError

FLOAT_COLUMNS = ["expected_a", "rating_a_before", "rating_b_before", "rating_a_after", "rating_b_after"]
PRIOR_SCHEMA = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64}
PROPERTY_SETTINGS = property_settings(80)


# --------------------------------------------------------------------------------------------------
# The naive reference: a plain loop over the rows in (played_at, match_id) order.


def reference_elo(frame, k=32.0, initial=1500.0, scale=400.0, advantage=0.0, a=None, b=None, priors=None):
    """match_id -> dict of the expected output values."""
    rows = frame.to_dicts()
    general, specific = {}, {}
    for prior in priors.to_dicts() if priors is not None else []:
        if prior.get("league") is None:
            general[prior["player"]] = prior["rating"]
        else:
            specific[(prior["league"], prior["player"])] = prior["rating"]
    players = {}
    for r in rows:
        players.setdefault(r.get("league"), set()).update((r["player_a"], r["player_b"]))
    rating, played, result = {}, {}, {}
    for r in sorted(rows, key=lambda r: (r["played_at"], r["match_id"])):
        league, pa, pb = r.get("league"), r["player_a"], r["player_b"]
        for p in (pa, pb):
            rating.setdefault((league, p), specific.get((league, p), general.get(p, initial)))
        ra, rb = rating[(league, pa)], rating[(league, pb)]
        t = played[league] = played.get(league, 0) + 1
        k_t = k if a is None else scale / math.log(10) * math.sqrt(a * len(players[league]) / (t + b))
        w = 1.0 if r.get("weight") is None else r["weight"]
        p = 1.0 / (1.0 + 10 ** ((rb - ra - advantage) / scale))
        delta = k_t * w * (r["score_a"] - p)
        rating[(league, pa)], rating[(league, pb)] = ra + delta, rb - delta
        result[r["match_id"]] = {
            "league": league,
            "seq": t,
            "expected_a": p,
            "rating_a_before": ra,
            "rating_b_before": rb,
            "rating_a_after": ra + delta,
            "rating_b_after": rb - delta,
        }
    return result


def assert_matches_reference(out: pl.DataFrame, frame: pl.DataFrame, tol=1e-9, **params):
    assert_rows_match_reference(out, frame, reference_elo(frame, **params), FLOAT_COLUMNS, tol, null_columns=SD_COLUMNS)


# The shared generator with Elo's sizes: 400 matches of 12 players, about 4 per played_at, 10% NULL
# weights, timestamps a minute apart.
random_history = partial(
    replay_cases.random_history, n=400, n_players=12, matches_per_time=4, null_weight_share=0.1, datetime_minutes=1
)


RANDOM_PRIORS = pl.DataFrame(
    {
        "player": ["p0", "p1", "p1", "p2", "p3", "nobody", "p4"],
        "rating": [1700.0, 1600.0, 1350.0, 1820.5, 1234.0, 2500.0, 1400.0],
        "league": [None, None, "chess", "go", None, None, "not-a-league"],
    },
    schema={"player": pl.Utf8, "rating": pl.Float64, "league": pl.Utf8},
)

PARAMETER_SETS = {
    "defaults": {},
    "custom": {"k": 20.0, "initial": 1200.0, "scale": 300.0, "advantage": 55.0},
    "schedule": {"a": 0.8, "b": 5.0},
    "schedule_advantage": {"a": 2.5, "b": 0.0, "advantage": -30.0, "scale": 173.7178},
}


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize(
    ("id_kind", "time_kind"), [("int", "int"), ("str", "int"), ("int", "datetime"), ("str", "date")]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference(seed, id_kind, time_kind, params):
    frame = random_history(seed, id_kind=id_kind, time_kind=time_kind)
    assert_matches_reference(duckrate.elo(frame, **params), frame, **params)


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("id_kind", ["int", "str"])
def test_matches_reference_with_priors(id_kind, params):
    frame = random_history(7, id_kind=id_kind)
    out = duckrate.elo(frame, priors=RANDOM_PRIORS, **params)
    assert_matches_reference(out, frame, priors=RANDOM_PRIORS, **params)


def test_priors_without_league_column():
    frame = random_history(3)
    priors = pl.DataFrame({"player": ["p0", "p5"], "rating": [1900.0, 1100.0]})
    assert_matches_reference(duckrate.elo(frame, priors=priors), frame, priors=priors)


@pytest.mark.parametrize("id_kind", ["int", "str"])
def test_long_runs_of_tied_played_at(id_kind):
    """Runs of > 32 rows sharing played_at take a different tie-breaking path."""
    frame = random_history(11, n=700, id_kind=id_kind, tie_span=6)
    assert_matches_reference(duckrate.elo(frame), frame)
    assert_matches_reference(duckrate.elo(frame, a=1.0, b=3.0), frame, a=1.0, b=3.0)


def test_many_leagues_sparse_states():
    """Leagues x players beyond the dense state table: each league has its own three players."""
    rng = np.random.default_rng(5)
    n_leagues, n = 2000, 4000
    league = np.arange(n) % n_leagues
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(1, 3, n)) % 3
    frame = pl.DataFrame(
        {
            "match_id": rng.permutation(n).tolist(),
            "played_at": rng.integers(0, 50, n).tolist(),
            "player_a": [f"L{lg}p{x}" for lg, x in zip(league, a)],
            "player_b": [f"L{lg}p{x}" for lg, x in zip(league, b)],
            "score_a": rng.choice([0.0, 0.5, 1.0], n).tolist(),
            "league": [f"L{lg}" for lg in league],
        }
    )
    priors = pl.DataFrame(
        {"player": ["L7p0", "L7p1", "L1999p2"], "rating": [1600.0, 1450.0, 1510.0], "league": ["L7", None, "L1999"]}
    )
    for params in ({}, {"a": 1.0, "b": 2.0}):
        assert_matches_reference(duckrate.elo(frame, priors=priors, **params), frame, priors=priors, **params)


def test_seq_is_one_based_and_contiguous_per_league():
    assert_seq_is_one_based_and_contiguous_per_league(duckrate.elo(random_history(2)))


def test_period_column_is_ignored():
    assert_period_column_is_ignored(duckrate.elo, random_history(4))


def test_null_weight_means_one():
    assert_null_weight_means_one(duckrate.elo, random_history(6))


def test_leagues_are_independent():
    assert_leagues_are_independent(duckrate.elo, random_history(8))


# --------------------------------------------------------------------------------------------------
# Hypothesis properties.


elo_params = st.builds(
    lambda base, schedule: {**base, **schedule},
    st.fixed_dictionaries(
        {
            "k": st.floats(0.0, 64.0),
            "initial": st.sampled_from([1500.0, 1200.0, 0.0]),
            "scale": st.sampled_from([400.0, 173.7178, 1000.0]),
            "advantage": st.floats(-150.0, 150.0),
        }
    ),
    st.one_of(st.just({}), st.fixed_dictionaries({"a": st.floats(0.01, 4.0), "b": st.floats(0.0, 20.0)})),
)
prior_ratings = prior_values(st.floats(1000.0, 2000.0))


@PROPERTY_SETTINGS
@given(histories(), elo_params, prior_ratings)
def test_property_matches_reference(history, params, ratings):
    priors = priors_frame(ratings, history, PRIOR_SCHEMA)
    out = duckrate.elo(history, priors=priors, **params)
    assert_matches_reference(out, history, tol=1e-9, priors=priors, **params)


@PROPERTY_SETTINGS
@given(histories(), elo_params, prior_ratings)
def test_property_rating_sum_is_invariant(history, params, ratings):
    priors = priors_frame(ratings, history, PRIOR_SCHEMA)
    out = duckrate.elo(history, priors=priors, **params)
    initial = params["initial"]
    for (league,), group in out.group_by("league"):
        players = set(group["player_a"].to_list()) | set(group["player_b"].to_list())
        current = {p: prior_state(priors, league, p, {"rating": initial})["rating"] for p in players}
        total = math.fsum(current.values())
        for row in group.sort("seq").iter_rows(named=True):
            a, b = row["player_a"], row["player_b"]
            assert row["rating_a_before"] == current[a]
            assert row["rating_b_before"] == current[b]
            current[a], current[b] = row["rating_a_after"], row["rating_b_after"]
            assert math.isclose(math.fsum(current.values()), total, rel_tol=0.0, abs_tol=1e-8)


@PROPERTY_SETTINGS
@given(histories(), elo_params)
def test_property_swapping_sides_mirrors(history, params):
    out = duckrate.elo(history, **params)
    mirror = duckrate.elo(swap_sides(history), **{**params, "advantage": -params["advantage"]})
    assert_mirrors(out, mirror, kinds=("rating",), atol=1e-9, expected_atol=1e-12)


@PROPERTY_SETTINGS
@given(histories(), elo_params, prior_ratings, name_permutations)
def test_property_relabelling_players_changes_nothing(history, params, ratings, permutation):
    priors = priors_frame(ratings, history, PRIOR_SCHEMA)
    assert_relabelling_changes_nothing(duckrate.elo, history, priors, permutation, **params)


@PROPERTY_SETTINGS
@given(histories(), elo_params, st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(history, params, seed):
    assert_row_order_and_repeats_give_identical_output(duckrate.elo, history, seed, **params)


# --------------------------------------------------------------------------------------------------
# Hand values.


def test_hand_values_two_newcomers():
    row = duckrate.elo(one_match()).row(0, named=True)
    assert row["expected_a"] == 0.5
    assert row["rating_a_before"] == row["rating_b_before"] == 1500.0
    assert row["rating_a_after"] == 1516.0
    assert row["rating_b_after"] == 1484.0
    assert row["seq"] == 1 and row["league"] is None


def test_hand_values_advantage():
    row = duckrate.elo(one_match(), advantage=100).row(0, named=True)
    p = 1.0 / (1.0 + 10 ** (-0.25))
    assert row["expected_a"] == pytest.approx(p, abs=1e-15)
    assert row["rating_a_after"] == pytest.approx(1500 + 32 * (1 - p), abs=1e-12)
    assert row["rating_b_after"] == pytest.approx(1500 - 32 * (1 - p), abs=1e-12)


def test_hand_values_draw_weight_schedule_priors():
    draw = duckrate.elo(one_match(0.5)).row(0, named=True)
    assert draw["rating_a_after"] == draw["rating_b_after"] == 1500.0
    weighted = duckrate.elo(one_match(weight=2.0)).row(0, named=True)
    assert (weighted["rating_a_after"], weighted["rating_b_after"]) == (1532.0, 1468.0)
    scheduled = duckrate.elo(one_match(), a=1.0, b=0.0).row(0, named=True)
    k1 = 400 / math.log(10) * math.sqrt(1.0 * 2 / (1 + 0.0))  # N = 2 players, t = 1
    assert scheduled["rating_a_after"] == pytest.approx(1500 + k1 / 2, abs=1e-9)
    priors = pl.DataFrame({"player": ["A", "B"], "rating": [1600.0, 1400.0]})
    favoured = duckrate.elo(one_match(0.0), priors=priors).row(0, named=True)
    p = 1.0 / (1.0 + 10 ** (-0.5))
    assert favoured["expected_a"] == pytest.approx(p, abs=1e-15)
    assert favoured["rating_a_after"] == pytest.approx(1600 - 32 * p, abs=1e-12)


def test_league_specific_prior_wins_over_general():
    frame = pl.DataFrame(
        {
            "match_id": [1, 2],
            "played_at": [1, 1],
            "player_a": ["A", "A"],
            "player_b": ["B", "B"],
            "score_a": [0.5, 0.5],
            "league": ["x", "y"],
        }
    )
    priors = pl.DataFrame({"player": ["A", "A"], "rating": [1600.0, 1800.0], "league": [None, "y"]})
    out = duckrate.elo(frame, priors=priors)
    assert dict(zip(out["league"], out["rating_a_before"])) == {"x": 1600.0, "y": 1800.0}


# --------------------------------------------------------------------------------------------------
# Input validation: each message names the column, the match_id and the value.


def base_rows():
    return replay_cases.base_rows(weight=[1.0, 1.0, 1.0])


BASE_SCHEMA = {name: kind for name, kind in MATCH_SCHEMA.items() if name != "league"}


def with_value(column, value):
    return replay_cases.with_value(base_rows(), column, value, BASE_SCHEMA)


BAD_VALUES = [
    ("player_a", None, "None"),
    ("player_b", "", "''"),
    ("player_b", "bob", "'bob'"),  # self-match: player_a is bob on that row
    ("score_a", 1.5, "1.5"),
    ("score_a", -0.25, "-0.25"),
    ("score_a", float("nan"), "nan"),
    ("score_a", None, "None"),
    ("played_at", None, "None"),
    ("weight", 0.0, "0.0"),
    ("weight", -2.0, "-2.0"),
    ("weight", float("inf"), "inf"),
]


@pytest.mark.parametrize(("column", "value", "shown"), BAD_VALUES)
def test_bad_value_names_column_match_id_and_value(column, value, shown):
    with pytest.raises(DuckrateInputError) as error:
        duckrate.elo(with_value(column, value))
    message = str(error.value)
    assert f"'{column}'" in message
    assert "match_id=7" in message
    assert f"has {shown} at" in message


def test_self_match_is_named():
    with pytest.raises(DuckrateInputError, match="self-match"):
        duckrate.elo(with_value("player_b", "bob"))


@pytest.mark.parametrize(
    ("ids", "shown"), [([5, 7, 7], "match_id=7"), (["a", "b", "b"], "match_id='b'")], ids=["integer", "string"]
)
def test_duplicate_match_id(ids, shown):
    frame = pl.DataFrame(base_rows(), schema=BASE_SCHEMA).with_columns(match_id=pl.Series(ids))
    with pytest.raises(DuckrateInputError) as error:
        duckrate.elo(frame)
    message = str(error.value)
    assert "'match_id'" in message and shown in message and "duplicate" in message


def test_missing_score_column():
    frame = pl.DataFrame(base_rows(), schema=BASE_SCHEMA).drop("score_a")
    with pytest.raises(DuckrateInputError, match="score_a"):
        duckrate.elo(frame)


def test_played_at_of_string_type():
    frame = pl.DataFrame(base_rows(), schema=BASE_SCHEMA).with_columns(pl.col("played_at").cast(pl.Utf8))
    with pytest.raises(DuckrateInputError, match="played_at") as error:
        duckrate.elo(frame)
    assert "string" in str(error.value)


def test_unknown_parameter():
    with pytest.raises(TypeError, match="foo"):
        duckrate.elo(pl.DataFrame(base_rows(), schema=BASE_SCHEMA), foo=1)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"k": -1.0}, "k"),
        ({"k": float("nan")}, "k"),
        ({"scale": 0.0}, "scale"),
        ({"scale": -400.0}, "scale"),
        ({"a": 1.0}, "b"),
        ({"b": 1.0}, "a"),
        ({"a": 0.0, "b": 1.0}, "a"),
        ({"a": 1.0, "b": -1.0}, "b"),
        ({"initial": float("inf")}, "initial"),
    ],
)
def test_bad_parameters(params, named):
    with pytest.raises(DuckrateInputError, match=rf"\b{named}\b"):
        duckrate.elo(pl.DataFrame(base_rows(), schema=BASE_SCHEMA), **params)


# --------------------------------------------------------------------------------------------------
# Empty input and defaults.


@pytest.mark.parametrize(
    "schema",
    [
        {"match_id": pl.Int64, "played_at": pl.Int64, "player_a": pl.Utf8, "player_b": pl.Utf8, "score_a": pl.Float64},
        {
            "match_id": pl.Utf8,
            "played_at": pl.Datetime("us"),
            "player_a": pl.Utf8,
            "player_b": pl.Utf8,
            "score_a": pl.Float64,
            "league": pl.Utf8,
            "weight": pl.Float64,
        },
    ],
)
def test_empty_input_returns_empty_frame(schema):
    out = duckrate.elo(pl.DataFrame(schema=schema))
    assert out.height == 0
    assert out.columns == CONTRACT_COLUMNS
    assert out.schema["seq"] == pl.Int64 and out.schema["expected_a"] == pl.Float64


def test_python_defaults_pinned():
    assert python_defaults(duckrate.elo) == {
        "k": 32,
        "initial": 1500,
        "scale": 400,
        "advantage": 0,
        "a": None,
        "b": None,
        "priors": None,
        "state": None,
        "chunk_size": None,
    }


def test_sql_macro_defaults_match(con):
    frame = random_history(9, n=300)
    con.register("history_frame", frame)
    con.execute("CREATE TABLE history AS SELECT * FROM history_frame")
    key = ["league", "seq"]

    def sql(arguments=""):
        return con.sql(f"SELECT * FROM elo_replay('history'{arguments})").pl().sort(key, nulls_last=True)

    default = sql()
    explicit = sql(", k := 32, initial := 1500, scale := 400, advantage := 0, a := NULL, b := NULL")
    assert_frame_equal(default, explicit, check_exact=True)
    python = duckrate.elo(frame).sort(key, nulls_last=True)
    assert_frame_equal(default, python, check_dtypes=False, check_exact=False, abs_tol=1e-12, rel_tol=0)
    assert_matches_reference(default, frame, k=32.0, initial=1500.0, scale=400.0, advantage=0.0)
    assert not sql(", k := 16")["rating_a_after"].equals(default["rating_a_after"])  # parameters are live


# --------------------------------------------------------------------------------------------------
# Regressions: priors for absent leagues, uint64 match ids, categorical player names.


@pytest.mark.parametrize("with_league", [True, False])
def test_priors_for_leagues_absent_from_matches_are_ignored(with_league):
    frame = one_match(league="chess") if with_league else one_match()
    priors = pl.DataFrame({"player": ["A", "A"], "rating": [1600.0, 1700.0], "league": ["go", "shogi"]})
    row = duckrate.elo(frame, priors=priors).row(0, named=True)
    assert row["rating_a_before"] == 1500.0


def test_unsigned_match_id_breaks_ties_numerically():
    frame = pl.DataFrame(
        {
            "match_id": pl.Series([2**63 + 5, 3], dtype=pl.UInt64),
            "played_at": [1, 1],
            "player_a": ["A", "C"],
            "player_b": ["B", "D"],
            "score_a": [1.0, 0.0],
        }
    )
    out = duckrate.elo(frame)
    assert out.sort("seq")["match_id"].to_list() == [3, 2**63 + 5]


def test_categorical_player_names_are_accepted():
    frame = pl.DataFrame(
        {"match_id": [1, 2], "played_at": [1, 2], "player_a": ["A", "B"], "player_b": ["B", "A"], "score_a": [1.0, 0.5]}
    )
    plain = duckrate.elo(frame)
    categorical = duckrate.elo(frame.with_columns(pl.col("player_a", "player_b").cast(pl.Categorical)))
    assert categorical.drop("player_a", "player_b").equals(plain.drop("player_a", "player_b"))
    assert categorical["player_a"].cast(pl.Utf8).to_list() == plain["player_a"].to_list()
