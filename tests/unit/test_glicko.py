"""duckrate.systems.glicko against Glickman's worked example, a naive reference, its invariants,
rating periods, input validation and defaults."""

from __future__ import annotations

import math

import polars as pl
import pytest
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    SD_COLUMNS,
    assert_leagues_are_independent,
    assert_mirrors,
    assert_null_weight_means_one,
    assert_period_length_equals_period_column,
    assert_period_states_are_shared,
    assert_relabelling_changes_nothing,
    assert_row_order_and_repeats_give_identical_output,
    assert_rows_match_reference,
    assert_seq_is_one_based_and_contiguous_per_league,
    assert_weight_counts_as_repeated_games,
    load_data,
    name_permutations,
    period_batches,
    period_histories,
    period_scenarios,
    prior_state,
    prior_values,
    priors_frame,
    property_settings,
    python_defaults,
    random_history,
    random_priors,
    small_frame,
    swap_sides,
)
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from duckrate import DuckrateInputError
from duckrate.systems.glicko import GLICKO, glicko
from duckrate.systems.glicko_rules import Q, glicko_e, glicko_g, glicko_update
from duckrate.systems.saved_state import RebuildRequired
from duckrate.systems.two_player import replay_with_state

CASES = load_data("glicko_cases.json")
FLOAT_COLUMNS = CONTRACT_COLUMNS[7:]
PRIOR_SCHEMA = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64}
PROPERTY_SETTINGS = property_settings(60)


# --------------------------------------------------------------------------------------------------
# The naive reference: dictionaries, explicit period batching, the paper's formulas written out.
# (period_batches and prior_state, shared with Glicko-2's reference, are in replay_cases.)


def reference_glicko(
    frame, initial=1500.0, rd=350.0, c=34.6, rd_max=350.0, rd_min=0.0, period_length=None, priors=None
):
    """match_id -> dict of the expected output values."""
    periodic, batches_by_league = period_batches(frame, period_length)
    result = {}
    for league, batches in batches_by_league.items():
        state = {}  # player -> (rating, rd, period last rated)
        seq = 0
        for q, batch in batches:
            start = {}
            for r in batch:
                for p in (r["player_a"], r["player_b"]):
                    if p in start:
                        continue
                    if p in state:
                        rating, dev, last = state[p]
                        t = (q - last) if periodic else 1
                        dev = max(min(math.sqrt(dev**2 + c**2 * t), rd_max), rd_min)
                    else:
                        prior = prior_state(priors, league, p, {"rating": initial, "sd": rd})
                        rating, dev = prior["rating"], min(max(prior["sd"], rd_min), rd_max)
                    start[p] = (rating, dev)
            sums = {p: [0.0, 0.0] for p in start}  # Σ w g² E (1-E), Σ w g (s - E)
            forecasts = {}
            for r in batch:
                w = 1.0 if r.get("weight") is None else r["weight"]
                for me, opponent, s in (
                    (r["player_a"], r["player_b"], r["score_a"]),
                    (r["player_b"], r["player_a"], 1.0 - r["score_a"]),
                ):
                    (r0, _), (rj, dj) = start[me], start[opponent]
                    g = 1.0 / math.sqrt(1.0 + 3.0 * Q**2 * dj**2 / math.pi**2)
                    e = 1.0 / (1.0 + 10.0 ** (-g * (r0 - rj) / 400.0))
                    sums[me][0] += w * g * g * e * (1.0 - e)
                    sums[me][1] += w * g * (s - e)
                (ra, da), (rb, db) = start[r["player_a"]], start[r["player_b"]]
                g = 1.0 / math.sqrt(1.0 + 3.0 * Q**2 * (da**2 + db**2) / math.pi**2)
                forecasts[r["match_id"]] = 1.0 / (1.0 + 10.0 ** (-g * (ra - rb) / 400.0))
            new = {}
            for p, (r0, dev) in start.items():
                inverse_d2 = Q**2 * sums[p][0]
                denominator = 1.0 / dev**2 + inverse_d2
                new[p] = (r0 + Q / denominator * sums[p][1], max(math.sqrt(1.0 / denominator), rd_min))
            for r in batch:
                seq += 1
                a, b = r["player_a"], r["player_b"]
                result[r["match_id"]] = {
                    "league": league,
                    "seq": seq,
                    "expected_a": forecasts[r["match_id"]],
                    "rating_a_before": start[a][0],
                    "rating_b_before": start[b][0],
                    "sd_a_before": start[a][1],
                    "sd_b_before": start[b][1],
                    "rating_a_after": new[a][0],
                    "rating_b_after": new[b][0],
                    "sd_a_after": new[a][1],
                    "sd_b_after": new[b][1],
                }
            for p, (rating, dev) in new.items():
                state[p] = (rating, dev, q)
    return result


def assert_matches_reference(out: pl.DataFrame, frame: pl.DataFrame, tol=1e-9, **params):
    assert_rows_match_reference(out, frame, reference_glicko(frame, **params), FLOAT_COLUMNS, tol)


# --------------------------------------------------------------------------------------------------
# Random histories (replay_cases.random_history and random_priors; their defaults are the Glicko sizes).


PARAMETER_SETS = {
    "defaults": {},
    "custom": {"initial": 1200.0, "rd": 300.0, "c": 60.0, "rd_max": 320.0, "rd_min": 40.0},
    "no_growth": {"c": 0.0, "rd": 200.0},
    "floor": {"rd_min": 250.0, "c": 10.0},
}
SCENARIOS = period_scenarios("ns")


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_matches_reference(scenario, params):
    history, periods = scenario
    frame = random_history(3, **history)
    assert_matches_reference(glicko(frame, **params, **periods), frame, **params, **periods)


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("scenario", ["no_periods", "period_column", "length_timestamp"])
def test_matches_reference_with_priors(scenario, params):
    history, periods = SCENARIOS[scenario]
    frame = random_history(5, **history)
    priors = random_priors(6)
    out = glicko(frame, priors=priors, **params, **periods)
    assert_matches_reference(out, frame, priors=priors, **params, **periods)


def test_long_runs_of_tied_played_at():
    frame = random_history(11, n=600, tie_span=5, id_kind="str")
    assert_matches_reference(glicko(frame), frame)
    assert_matches_reference(glicko(frame, period_length=2), frame, period_length=2)


# --------------------------------------------------------------------------------------------------
# Glickman's worked example and hand values.


def worked_example():
    matches = pl.DataFrame(CASES["matches"])
    priors = pl.DataFrame(CASES["priors"]).drop("volatility")
    return matches, priors


def test_worked_example_helpers():
    expected = CASES["glicko"]["expected"]
    information, surprise = 0.0, 0.0
    for rating, rd, score in ((1400.0, 30.0, 1.0), (1550.0, 100.0, 0.0), (1700.0, 300.0, 0.0)):
        g = glicko_g(rd)
        e = glicko_e(1500.0, rating, g)
        information += g * g * e * (1.0 - e)
        surprise += g * (score - e)
    d2 = 1.0 / (Q * Q * information)
    assert abs(d2 - expected["d2"]["value"]) <= expected["d2"]["abs_tolerance"]
    rating, rd = glicko_update(1500.0, 200.0, information, surprise)
    assert abs(rating - expected["rating_after"]["value"]) <= expected["rating_after"]["abs_tolerance"]
    assert abs(rd - expected["sd_after"]["value"]) <= expected["sd_after"]["abs_tolerance"]
    assert Q == pytest.approx(0.00575646273, abs=1e-11)
    assert glicko_g(30.0) == pytest.approx(0.9955, abs=5e-5)  # the paper's table
    assert glicko_g(300.0) == pytest.approx(0.7242, abs=5e-5)


def test_worked_example_replay():
    matches, priors = worked_example()
    expected = CASES["glicko"]["expected"]
    out = glicko(matches, priors=priors, **CASES["glicko"]["params"])
    for row in out.iter_rows(named=True):
        assert row["rating_a_before"] == 1500.0 and row["sd_a_before"] == 200.0
        assert (
            abs(row["rating_a_after"] - expected["rating_after"]["value"]) <= expected["rating_after"]["abs_tolerance"]
        )
        assert abs(row["sd_a_after"] - expected["sd_after"]["value"]) <= expected["sd_after"]["abs_tolerance"]
    assert_matches_reference(out, matches, priors=priors)
    # without the period column the three games are rated one after another: a different answer
    sequential = glicko(matches.drop("period"), priors=priors).sort("seq")
    assert abs(sequential["rating_a_after"][-1] - expected["rating_after"]["value"]) > 1.0


def test_hand_values_two_newcomers():
    row = glicko(
        pl.DataFrame({"match_id": [1], "played_at": [0], "player_a": ["A"], "player_b": ["B"], "score_a": [1.0]})
    ).row(0, named=True)
    assert row["expected_a"] == 0.5
    assert row["rating_a_before"] == row["rating_b_before"] == 1500.0
    assert row["sd_a_before"] == row["sd_b_before"] == 350.0
    g = 1.0 / math.sqrt(1.0 + 3.0 * Q**2 * 350.0**2 / math.pi**2)
    variance = 1.0 / (1.0 / 350.0**2 + Q**2 * g**2 / 4.0)
    assert row["rating_a_after"] == pytest.approx(1500.0 + Q * variance * g / 2.0, abs=1e-9)
    assert row["rating_b_after"] == pytest.approx(1500.0 - Q * variance * g / 2.0, abs=1e-9)
    assert row["sd_a_after"] == row["sd_b_after"] == pytest.approx(math.sqrt(variance), abs=1e-9)


def test_idle_growth_by_hand():
    """A player with RD 50 idle for 100 periods: RD = min(sqrt(50² + 100·34.6²), 350) (the paper's c)."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [0, 1, 2],
            "player_a": ["A", "A", "A"],
            "player_b": ["B", "C", "D"],
            "score_a": [0.5, 0.5, 0.5],
            "period": [0, 100, 500],
        }
    )
    priors = pl.DataFrame({"player": ["A"], "rating": [1500.0], "sd": [50.0]})
    out = glicko(frame, priors=priors).sort("seq")
    after_first = out["sd_a_after"][0]
    assert out["sd_a_before"][1] == pytest.approx(min(math.sqrt(after_first**2 + 100 * 34.6**2), 350.0), abs=1e-12)
    assert out["sd_a_before"][2] == 350.0  # capped at rd_max
    assert out["sd_b_before"][1] == 350.0  # newcomers start at the default RD, no growth
    # without periods a returning player grows by c² (t = 1) per game
    plain = glicko(frame.drop("period"), priors=priors).sort("seq")
    assert plain["sd_a_before"][1] == pytest.approx(math.sqrt(plain["sd_a_after"][0] ** 2 + 34.6**2), abs=1e-12)


def test_weight_counts_as_repeated_games():
    assert_weight_counts_as_repeated_games(glicko)


def test_one_game_per_period_equals_no_periods_without_growth():
    """With c = 0 the only difference between the two modes is idle growth: none, so results agree."""
    frame = random_history(21)
    ranked = frame.sort("played_at", "match_id").with_row_index("period").with_columns(pl.col("period").cast(pl.Int64))
    assert_frame_equal(glicko(ranked, c=0.0), glicko(frame, c=0.0), check_exact=True)


def test_period_length_equals_period_column():
    assert_period_length_equals_period_column(glicko, random_history)
    dates = random_history(12, time_kind="date")
    assert_frame_equal(
        glicko(dates, period_length=3),
        glicko(dates.with_columns(period=pl.col("played_at").cast(pl.Int64) // 3)),
        check_exact=True,
    )


def test_period_length_floors_negative_played_at():
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4, 5],
            "played_at": [-3, -2, -1, 0, 1],
            "player_a": ["A", "B", "A", "C", "A"],
            "player_b": ["B", "C", "C", "A", "B"],
            "score_a": [1.0, 0.0, 0.5, 1.0, 0.25],
        }
    )
    expected_periods = frame.with_columns(period=pl.Series([-2, -1, -1, 0, 0]))
    assert_frame_equal(glicko(frame, period_length=2), glicko(expected_periods), check_exact=True)
    assert_frame_equal(
        glicko(frame, period_length=1.5),
        glicko(frame.with_columns(period=pl.Series([-2, -2, -1, 0, 0]))),
        check_exact=True,
    )


def test_before_and_after_are_period_states():
    frame = random_history(13, period="column")
    assert_period_states_are_shared(glicko(frame), frame, "rating", "sd")


def test_seq_is_one_based_and_contiguous_per_league():
    assert_seq_is_one_based_and_contiguous_per_league(glicko(random_history(2, period="column")))


def test_leagues_are_independent():
    assert_leagues_are_independent(glicko, random_history(8, period="column"))


def test_null_weight_means_one():
    assert_null_weight_means_one(glicko, random_history(6, period="column"))


# --------------------------------------------------------------------------------------------------
# Hypothesis properties.


@st.composite
def glicko_params(draw, history):
    rd_max = draw(st.sampled_from([350.0, 500.0, 200.0]))
    rd = draw(st.floats(30.0, rd_max))
    params = {
        "initial": draw(st.sampled_from([1500.0, 1200.0, 0.0])),
        "rd": rd,
        "c": draw(st.sampled_from([34.6, 0.0, 80.0])),
        "rd_max": rd_max,
        "rd_min": draw(st.sampled_from([0.0, 0.5 * rd, 0.99 * rd])),
    }
    if "period" not in history.columns:
        params["period_length"] = draw(st.sampled_from([None, 1, 2, 3.5]))
    return params


prior_ratings_and_sds = prior_values(st.tuples(st.floats(1000.0, 2000.0), st.one_of(st.none(), st.floats(10.0, 600.0))))


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), prior_ratings_and_sds)
def test_property_matches_reference_and_bounds(data, history, values):
    params = data.draw(glicko_params(history))
    priors = priors_frame(values, history, PRIOR_SCHEMA)
    out = glicko(history, priors=priors, **params)
    assert_matches_reference(out, history, priors=priors, **params)
    for column in SD_COLUMNS:
        assert out[column].min() >= params["rd_min"]
        assert out[column].max() <= params["rd_max"]
    assert out["expected_a"].is_between(0.0, 1.0).all()


@PROPERTY_SETTINGS
@given(st.data(), period_histories())
def test_property_swapping_sides_mirrors(data, history):
    params = data.draw(glicko_params(history))
    assert_mirrors(glicko(history, **params), glicko(swap_sides(history), **params), kinds=("rating", "sd"), atol=1e-9)


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), prior_ratings_and_sds, name_permutations)
def test_property_relabelling_players_changes_nothing(data, history, values, permutation):
    params = data.draw(glicko_params(history))
    priors = priors_frame(values, history, PRIOR_SCHEMA)
    assert_relabelling_changes_nothing(glicko, history, priors, permutation, **params)


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(data, history, seed):
    params = data.draw(glicko_params(history))
    assert_row_order_and_repeats_give_identical_output(glicko, history, seed, **params)


# --------------------------------------------------------------------------------------------------
# Validation and defaults.


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"rd": 0.0}, "rd"),
        ({"rd": -50.0}, "rd"),
        ({"rd": float("nan")}, "rd"),
        ({"c": -1.0}, "c"),
        ({"c": float("inf")}, "c"),
        ({"rd_max": 0.0}, "rd_max"),
        ({"rd": 400.0}, "rd_max"),  # rd above rd_max
        ({"rd_min": -1.0}, "rd_min"),
        ({"rd_min": 350.0}, "rd_min"),  # not below rd
        ({"period_length": 0.0}, "period_length"),
        ({"period_length": -7.0}, "period_length"),
        ({"period_length": float("inf")}, "period_length"),
        ({"initial": float("nan")}, "initial"),
        ({"c": "34.6"}, "c"),
    ],
)
def test_bad_parameters(params, named):
    with pytest.raises(DuckrateInputError, match=rf"glicko: parameter .*\b{named}\b"):
        glicko(small_frame(), **params)


def test_bad_parameter_messages_say_what_is_expected():
    with pytest.raises(DuckrateInputError, match=r"rd = -50.0; expected a finite starting rating deviation > 0"):
        glicko(small_frame(), rd=-50.0)
    with pytest.raises(DuckrateInputError, match=r"expected rd <= rd_max"):
        glicko(small_frame(), rd=400.0)


def test_unknown_parameter():
    with pytest.raises(TypeError, match="argument 'tau'"):
        glicko(small_frame(), tau=0.5)
    with pytest.raises(DuckrateInputError, match="unknown parameter"):
        GLICKO.resolve({"tau": 0.5})


def test_period_column_and_period_length_together():
    with pytest.raises(DuckrateInputError, match="give one"):
        glicko(small_frame(period=[1, 1, 2]), period_length=7)


@pytest.mark.parametrize("bad", [0.0, -25.0])
def test_bad_prior_sd_names_player_and_value(bad):
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [1500.0, 1600.0], "sd": [100.0, bad]})
    with pytest.raises(DuckrateInputError) as error:
        glicko(small_frame(), priors=priors)
    message = str(error.value)
    assert "'bob'" in message and repr(bad) in message and "'sd'" in message


def test_prior_sd_is_clamped_into_bounds():
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [1500.0, 1600.0], "sd": [900.0, 1.0]})
    out = glicko(small_frame(), priors=priors, rd_min=20.0).sort("seq")
    assert out["sd_a_before"][0] == 350.0 and out["sd_b_before"][0] == 20.0


def test_empty_input_returns_empty_frame():
    schema = {
        "match_id": pl.Int64,
        "played_at": pl.Datetime("us"),
        "player_a": pl.Utf8,
        "player_b": pl.Utf8,
        "score_a": pl.Float64,
        "league": pl.Utf8,
        "weight": pl.Float64,
    }
    for period_length in (None, 1.0):
        out = glicko(pl.DataFrame(schema=schema), period_length=period_length)
        assert out.height == 0 and out.columns == CONTRACT_COLUMNS


def test_defaults_pinned():
    assert python_defaults(glicko) == {
        "initial": 1500,
        "rd": 350,
        "c": 34.6,
        "rd_max": 350,
        "rd_min": 0,
        "period_length": None,
        "priors": None,
        "state": None,
        "chunk_size": None,
    }
    assert GLICKO.defaults == {"initial": 1500, "rd": 350, "c": 34.6, "rd_max": 350, "rd_min": 0, "period_length": None}
    assert GLICKO.name == "glicko" and GLICKO.has_sd


# --------------------------------------------------------------------------------------------------
# Saved state (test_replay_state.py checks that batches equal one replay; here: the layout and the
# refusals of a periodic state).


def periodic_matches() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4, 5, 6, 7],
            "played_at": [1, 2, 3, 10, 11, 12, 20],
            "period": [0, 0, 0, 1, 1, 1, 2],
            "player_a": ["a", "b", "c", "a", "b", "a", "c"],
            "player_b": ["b", "c", "a", "c", "a", "b", "b"],
            "score_a": [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 0.5],
        }
    )


def test_state_holds_rating_rd_seen_last_period_at_the_open_period():
    matches = periodic_matches()
    _, state = replay_with_state(GLICKO, matches[:6])
    league = state.filter(pl.col("kind") == "league").row(0, named=True)
    assert (league["seq"], league["resume_period"], league["pending_ids"]) == (3, 1, ["4", "5", "6"])
    period0 = glicko(matches[:3])  # the state is the one after period 0, where a, b and c all played
    after = {}
    for row in period0.iter_rows(named=True):
        for side in "ab":
            after[row[f"player_{side}"]] = [row[f"rating_{side}_after"], row[f"sd_{side}_after"], 1.0, 0.0]
    players = state.filter(pl.col("kind") == "player")
    assert dict(zip(players["player"], players["value"].to_list())) == after


def test_state_late_match_inside_the_open_period_is_rated_with_it():
    matches = periodic_matches()
    late = pl.DataFrame(
        {"match_id": [8], "played_at": [9], "period": [1], "player_a": ["c"], "player_b": ["b"], "score_a": [1.0]}
    )
    _, state = replay_with_state(GLICKO, matches[:6])
    rest, _ = replay_with_state(GLICKO, pl.concat([matches[3:], late]), state=state)
    full = glicko(pl.concat([matches, late])).filter(pl.col("seq") > 3)
    assert_frame_equal(rest, full, check_exact=True)


def test_state_refusals_of_a_periodic_state():
    matches = periodic_matches()
    _, state = replay_with_state(GLICKO, matches[:6])
    with pytest.raises(RebuildRequired, match="open rating period 1: .* pass them again"):
        replay_with_state(GLICKO, matches[6:], state=state)
    early = pl.DataFrame(
        {"match_id": [9], "played_at": [4], "period": [0], "player_a": ["a"], "player_b": ["b"], "score_a": [1.0]}
    )
    with pytest.raises(RebuildRequired, match="match_id 9 arrived late .* period 0 is before the open period 1"):
        replay_with_state(GLICKO, pl.concat([matches[3:], early]), state=state)
    with pytest.raises(RebuildRequired, match="replayed in rating periods; these matches have none"):
        replay_with_state(GLICKO, matches[3:].drop("period"), state=state)
    _, unperiodic = replay_with_state(GLICKO, matches[:6].drop("period"))
    with pytest.raises(RebuildRequired, match="replayed without rating periods; these matches have them"):
        replay_with_state(GLICKO, matches[6:], state=unperiodic)


def test_state_refuses_another_played_at_type_with_period_length():
    matches = (
        periodic_matches()
        .drop("period")
        .with_columns((pl.col("played_at").cast(pl.Int64) * 86_400_000_000).cast(pl.Datetime("us")))
    )
    _, state = replay_with_state(GLICKO, matches[:6], period_length=7.0)
    as_integers = matches.with_columns(pl.col("played_at").dt.epoch("d"))
    with pytest.raises(RebuildRequired, match="played_at was microseconds when the state was saved, now integer"):
        replay_with_state(GLICKO, as_integers[3:], state=state, period_length=7.0)
    with pytest.raises(RebuildRequired):  # other periods (pending matches missing from the open one), other parameters
        replay_with_state(GLICKO, matches[3:], state=state, period_length=3.0)
