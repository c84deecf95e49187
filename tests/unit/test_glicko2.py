"""duckrate.systems.glicko2 against Glickman's worked example, a naive reference, an independent root
find of the volatility equation, its invariants, rating periods, input validation and defaults."""

from __future__ import annotations

import math

import polars as pl
import pytest
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    SD_COLUMNS,
    assert_leagues_are_independent,
    assert_mirrors,
    assert_period_length_equals_period_column,
    assert_period_states_are_shared,
    assert_relabelling_changes_nothing,
    assert_row_order_and_repeats_give_identical_output,
    assert_rows_match_reference,
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
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from duckrate import DuckrateInputError
from duckrate.systems.glicko import GLICKO
from duckrate.systems.glicko2 import GLICKO2, glicko2
from duckrate.systems.glicko_rules import SCALE, glicko2_e, glicko2_g, glicko2_update, glicko2_volatility
from duckrate.systems.saved_state import RebuildRequired
from duckrate.systems.two_player import replay_with_state

CASES = load_data("glicko_cases.json")
FLOAT_COLUMNS = CONTRACT_COLUMNS[7:]
PRIOR_SCHEMA = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64, "volatility": pl.Float64}
PROPERTY_SETTINGS = property_settings(60)


# --------------------------------------------------------------------------------------------------
# The naive reference: Glickman's steps 1-8 written out over dictionaries, with explicit period batching
# (period_batches and prior_state, shared with Glicko's reference, are in replay_cases).


def volatility_f(x, delta, phi, v, sigma, tau):
    """Step 5's f(x)."""
    return (
        math.exp(x) * (delta**2 - phi**2 - v - math.exp(x)) / (2.0 * (phi**2 + v + math.exp(x)) ** 2)
        - (x - math.log(sigma**2)) / tau**2
    )


def reference_volatility(sigma, phi, v, delta, tau, epsilon=1e-6):
    """Step 5 verbatim: the Illinois algorithm with the paper's `f_C·f_B <= 0` test."""
    a = math.log(sigma**2)

    def f(x):
        return volatility_f(x, delta, phi, v, sigma, tau)

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > epsilon:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


def reference_glicko2(
    frame, initial=1500.0, rd=350.0, volatility=0.06, tau=0.5, rd_min=0.0, period_length=None, priors=None
):
    """match_id -> dict of the expected output values (display scale).

    Products are written in the kernel's order (x * x, not x**2): step 5 stops when the bracket is narrower
    than ε, so a last-bit difference in its inputs can move σ' by ~1e-12, and over a hundred games such
    differences grow past the 1e-9 the comparison asks for.
    """
    phi_min = rd_min / SCALE
    periodic, batches_by_league = period_batches(frame, period_length)
    result = {}
    for league, batches in batches_by_league.items():
        state = {}  # player -> (mu, phi, sigma, period last rated)
        seq = 0
        for q, batch in batches:
            start = {}
            for r in batch:
                for p in (r["player_a"], r["player_b"]):
                    if p in start:
                        continue
                    if p in state:
                        mu, phi, sigma, last = state[p]
                        if periodic:  # φ' = sqrt(φ² + σ²) for each idle period in between
                            phi = max(math.sqrt(phi * phi + (q - last - 1) * sigma * sigma), phi_min)
                    else:
                        prior = prior_state(priors, league, p, {"rating": initial, "sd": rd, "volatility": volatility})
                        mu, phi, sigma = (
                            (prior["rating"] - 1500.0) / SCALE,
                            max(prior["sd"] / SCALE, phi_min),
                            prior["volatility"],
                        )
                    start[p] = (mu, phi, sigma)
            sums = {p: [0.0, 0.0] for p in start}  # 1/v and Σ w g (s - E)
            forecasts = {}
            for r in batch:
                w = 1.0 if r.get("weight") is None else r["weight"]
                for me, opponent, s in (
                    (r["player_a"], r["player_b"], r["score_a"]),
                    (r["player_b"], r["player_a"], 1.0 - r["score_a"]),
                ):
                    mu, (mu_j, phi_j, _) = start[me][0], start[opponent]
                    g = 1.0 / math.sqrt(1.0 + 3.0 * phi_j * phi_j / (math.pi * math.pi))
                    e = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
                    sums[me][0] += w * g * g * e * (1.0 - e)
                    sums[me][1] += w * g * (s - e)
                (mu_a, phi_a, _), (mu_b, phi_b, _) = start[r["player_a"]], start[r["player_b"]]
                g = 1.0 / math.sqrt(1.0 + 3.0 * (phi_a**2 + phi_b**2) / math.pi**2)
                forecasts[r["match_id"]] = 1.0 / (1.0 + math.exp(-g * (mu_a - mu_b)))
            new = {}
            for p, (mu, phi, sigma) in start.items():
                information, surprise = sums[p]
                v = 1.0 / information
                sigma_new = reference_volatility(sigma, phi, v, v * surprise, tau)
                phi_star_squared = phi * phi + sigma_new * sigma_new  # step 6
                phi_new = 1.0 / math.sqrt(1.0 / phi_star_squared + information)  # step 7, 1/v = information
                new[p] = (mu + phi_new * phi_new * surprise, max(phi_new, phi_min), sigma_new)
            for r in batch:
                seq += 1
                a, b = r["player_a"], r["player_b"]
                result[r["match_id"]] = {
                    "league": league,
                    "seq": seq,
                    "expected_a": forecasts[r["match_id"]],
                    "rating_a_before": 1500.0 + SCALE * start[a][0],
                    "rating_b_before": 1500.0 + SCALE * start[b][0],
                    "sd_a_before": max(SCALE * start[a][1], rd_min),
                    "sd_b_before": max(SCALE * start[b][1], rd_min),
                    "rating_a_after": 1500.0 + SCALE * new[a][0],
                    "rating_b_after": 1500.0 + SCALE * new[b][0],
                    "sd_a_after": max(SCALE * new[a][1], rd_min),
                    "sd_b_after": max(SCALE * new[b][1], rd_min),
                }
            for p, (mu, phi, sigma) in new.items():
                state[p] = (mu, phi, sigma, q)
    return result


def assert_matches_reference(out: pl.DataFrame, frame: pl.DataFrame, tol=1e-9, **params):
    assert_rows_match_reference(out, frame, reference_glicko2(frame, **params), FLOAT_COLUMNS, tol)


# --------------------------------------------------------------------------------------------------
# Random histories (replay_cases.random_history and random_priors; their defaults are the Glicko sizes).


PARAMETER_SETS = {
    "defaults": {},
    "custom": {"initial": 1200.0, "rd": 300.0, "volatility": 0.09, "tau": 0.3, "rd_min": 40.0},
    "wild": {"rd": 120.0, "volatility": 0.2, "tau": 1.2},
    "floor": {"rd_min": 300.0},
}
SCENARIOS = period_scenarios("ms")


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_matches_reference(scenario, params):
    history, periods = scenario
    frame = random_history(3, **history)
    assert_matches_reference(glicko2(frame, **params, **periods), frame, **params, **periods)


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("scenario", ["no_periods", "period_column", "length_timestamp"])
def test_matches_reference_with_priors(scenario, params):
    history, periods = SCENARIOS[scenario]
    frame = random_history(5, **history)
    priors = random_priors(6, field_names=("sd", "volatility"))
    out = glicko2(frame, priors=priors, **params, **periods)
    assert_matches_reference(out, frame, priors=priors, **params, **periods)


def test_long_runs_of_tied_played_at():
    frame = random_history(11, n=600, tie_span=5, id_kind="str")
    assert_matches_reference(glicko2(frame), frame)
    assert_matches_reference(glicko2(frame, period_length=2), frame, period_length=2)


# --------------------------------------------------------------------------------------------------
# Glickman's worked example, the volatility solve, hand values.


def test_worked_example_steps():
    expected = CASES["glicko2"]["expected"]
    tau = CASES["glicko2"]["params"]["tau"]
    mu, phi, sigma = 0.0, 200.0 / SCALE, 0.06
    information, surprise = 0.0, 0.0
    for rating, rd, score in ((1400.0, 30.0, 1.0), (1550.0, 100.0, 0.0), (1700.0, 300.0, 0.0)):
        g = glicko2_g(rd / SCALE)
        e = glicko2_e(mu, (rating - 1500.0) / SCALE, g)
        information += g * g * e * (1.0 - e)
        surprise += g * (score - e)
    v = 1.0 / information
    delta = v * surprise
    new_sigma = glicko2_volatility(sigma, phi, v, delta, tau)
    new_mu, new_phi, sigma_again = glicko2_update(mu, phi, sigma, information, surprise, tau)
    for name, value in (
        ("v", v),
        ("delta", delta),
        ("volatility_after", new_sigma),
        ("rating_after", 1500.0 + SCALE * new_mu),
        ("sd_after", SCALE * new_phi),
    ):
        assert abs(value - expected[name]["value"]) <= expected[name]["abs_tolerance"], name
    assert sigma_again == new_sigma
    assert glicko2_g(30.0 / SCALE) == pytest.approx(0.9955, abs=5e-5)  # the paper's table
    assert glicko2_e(0.0, (1700.0 - 1500.0) / SCALE, glicko2_g(300.0 / SCALE)) == pytest.approx(0.303, abs=5e-4)


def test_worked_example_replay():
    matches = pl.DataFrame(CASES["matches"])
    priors = pl.DataFrame(CASES["priors"])
    expected = CASES["glicko2"]["expected"]
    out = glicko2(matches, priors=priors, **CASES["glicko2"]["params"])
    for row in out.iter_rows(named=True):
        assert row["rating_a_before"] == 1500.0 and row["sd_a_before"] == pytest.approx(200.0, abs=1e-12)
        assert (
            abs(row["rating_a_after"] - expected["rating_after"]["value"]) <= expected["rating_after"]["abs_tolerance"]
        )
        assert abs(row["sd_a_after"] - expected["sd_after"]["value"]) <= expected["sd_after"]["abs_tolerance"]
    assert_matches_reference(out, matches, priors=priors, tau=0.5)


def brentq_volatility(sigma, phi, v, delta, tau):
    """σ' from an independent bracketing root find of step 5's f (decreasing in x)."""
    a = math.log(sigma**2)
    low, high = a - 1.0, a + 1.0
    while volatility_f(low, delta, phi, v, sigma, tau) < 0:
        low -= 1.0
    while volatility_f(high, delta, phi, v, sigma, tau) > 0:
        high += 1.0
    root = brentq(lambda x: volatility_f(x, delta, phi, v, sigma, tau), low, high, xtol=1e-14, rtol=1e-15, maxiter=500)
    return math.exp(root / 2.0)


@settings(max_examples=300, deadline=None)
@given(
    st.floats(0.005, 0.3),
    st.floats(0.01, 3.0),
    st.floats(0.05, 80.0),
    st.floats(-6.0, 6.0),
    st.sampled_from([0.2, 0.3, 0.5, 0.8, 1.2, 0.05, 2.0]),
)
def test_volatility_matches_independent_root_find(sigma, phi, v, delta, tau):
    got = glicko2_volatility(sigma, phi, v, delta, tau)
    assert abs(got - brentq_volatility(sigma, phi, v, delta, tau)) <= 1e-6
    assert got == pytest.approx(reference_volatility(sigma, phi, v, delta, tau), rel=1e-12)


def test_volatility_both_branches_of_the_bracket():
    # Δ² > φ² + v (B = ln(Δ² - φ² - v)) and Δ² <= φ² + v (B = a - kτ)
    for delta in (4.0, 0.1):
        sigma, phi, v, tau = 0.06, 0.5, 1.5, 0.5
        assert (delta**2 > phi**2 + v) == (delta == 4.0)
        assert abs(glicko2_volatility(sigma, phi, v, delta, tau) - brentq_volatility(sigma, phi, v, delta, tau)) <= 1e-6


@pytest.mark.parametrize("case", CASES["glicko2_volatility_boundary"]["cases"])
def test_volatility_boundary_uses_less_or_equal(case):
    """Inputs on which f(C) == 0.0 exactly mid-iteration: the paper's `<=` moves A to B and stops at once;
    the `<` of several ports keeps halving f_A and drifts (the reference here has `<=`)."""
    got = glicko2_volatility(*case)
    assert got == pytest.approx(reference_volatility(*case), rel=1e-13, abs=0)
    assert abs(got - brentq_volatility(*case)) <= 1e-9


def test_hand_values_two_newcomers():
    frame = pl.DataFrame({"match_id": [1], "played_at": [0], "player_a": ["A"], "player_b": ["B"], "score_a": [1.0]})
    row = glicko2(frame).row(0, named=True)
    assert row["expected_a"] == 0.5
    assert row["rating_a_before"] == row["rating_b_before"] == 1500.0
    assert row["sd_a_before"] == pytest.approx(350.0, abs=1e-12)
    phi = 350.0 / SCALE
    g = 1.0 / math.sqrt(1.0 + 3.0 * phi**2 / math.pi**2)
    information, surprise = g * g / 4.0, g / 2.0
    sigma = reference_volatility(0.06, phi, 1.0 / information, surprise / information, 0.5)
    new_phi = 1.0 / math.sqrt(1.0 / (phi**2 + sigma**2) + information)
    assert row["rating_a_after"] == pytest.approx(1500.0 + SCALE * new_phi**2 * surprise, abs=1e-9)
    assert row["rating_b_after"] == pytest.approx(1500.0 - SCALE * new_phi**2 * surprise, abs=1e-9)
    assert row["sd_a_after"] == pytest.approx(SCALE * new_phi, abs=1e-9)


def test_idle_growth_by_hand():
    """Last rated in period 0, next game in period 10: φ = sqrt(φ² + 9σ²) at the start of period 10."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [0, 1, 2],
            "player_a": ["A", "A", "A"],
            "player_b": ["B", "C", "D"],
            "score_a": [0.5, 1.0, 0.0],
            "period": [0, 10, 11],
        }
    )
    priors = pl.DataFrame({"player": ["A"], "rating": [1500.0], "sd": [60.0], "volatility": [0.1]})
    out = glicko2(frame, priors=priors).sort("seq")
    phi = out["sd_a_after"][0] / SCALE
    g = glicko2_g(350.0 / SCALE)  # period 0: a draw with a 1500/350 newcomer, E = 1/2
    _, phi_check, sigma = glicko2_update(0.0, 60.0 / SCALE, 0.1, g * g * 0.25, 0.0, 0.5)
    assert phi_check == pytest.approx(phi, abs=1e-12)
    assert out["sd_a_before"][1] == pytest.approx(SCALE * math.sqrt(phi**2 + 9 * sigma**2), abs=1e-9)
    # adjacent periods: no idle growth beyond step 6 of the previous period
    assert out["sd_a_before"][2] == pytest.approx(out["sd_a_after"][1], abs=1e-12)
    # without periods there is no idle growth at all
    plain = glicko2(frame.drop("period"), priors=priors).sort("seq")
    assert plain["sd_a_before"][1] == plain["sd_a_after"][0]
    assert plain["sd_a_before"][2] == plain["sd_a_after"][1]


def test_prior_volatility_is_used():
    frame = pl.DataFrame(
        {"match_id": [1, 2], "played_at": [0, 1], "player_a": ["A", "A"], "player_b": ["B", "B"], "score_a": [1.0, 1.0]}
    )
    calm = glicko2(frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.01]})).sort("seq")
    wild = glicko2(frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.5]})).sort("seq")
    assert wild["sd_a_after"][0] > calm["sd_a_after"][0]
    assert_matches_reference(
        calm, frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.01]})
    )


def test_weight_counts_as_repeated_games():
    assert_weight_counts_as_repeated_games(glicko2)


def test_period_length_equals_period_column():
    assert_period_length_equals_period_column(glicko2, random_history)


def test_before_and_after_are_period_states():
    frame = random_history(13, period="column")
    assert_period_states_are_shared(glicko2(frame), frame, "sd", "rating")


def test_leagues_are_independent():
    assert_leagues_are_independent(glicko2, random_history(8, period="column"))


def test_extreme_rating_gap_stays_finite():
    """E rounds to 1.0 (no information, v infinite): σ' = σ and φ' = sqrt(φ² + σ²), no NaN."""
    frame = pl.DataFrame(
        {"match_id": [1, 2], "played_at": [0, 1], "player_a": ["A", "A"], "player_b": ["B", "B"], "score_a": [1.0, 0.0]}
    )
    priors = pl.DataFrame({"player": ["A", "B"], "rating": [1e6, -1e6], "sd": [30.0, 30.0]})
    out = glicko2(frame, priors=priors)
    assert all(out[c].is_finite().all() for c in FLOAT_COLUMNS)


# --------------------------------------------------------------------------------------------------
# Hypothesis properties.


@st.composite
def glicko2_params(draw, history):
    rd = draw(st.floats(30.0, 500.0))
    params = {
        "initial": draw(st.sampled_from([1500.0, 1200.0, 0.0])),
        "rd": rd,
        "volatility": draw(st.floats(0.01, 0.3)),
        "tau": draw(st.sampled_from([0.5, 0.2, 1.2, 0.05])),
        "rd_min": draw(st.sampled_from([0.0, 0.5 * rd, 0.99 * rd])),
    }
    if "period" not in history.columns:
        params["period_length"] = draw(st.sampled_from([None, 1, 2, 3.5]))
    return params


prior_states = prior_values(
    st.tuples(
        st.floats(1000.0, 2000.0),
        st.one_of(st.none(), st.floats(10.0, 600.0)),
        st.one_of(st.none(), st.floats(0.005, 0.3)),
    )
)


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), prior_states)
def test_property_matches_reference_and_bounds(data, history, values):
    params = data.draw(glicko2_params(history))
    priors = priors_frame(values, history, PRIOR_SCHEMA)
    out = glicko2(history, priors=priors, **params)
    assert_matches_reference(out, history, priors=priors, **params)
    for column in SD_COLUMNS:
        assert out[column].min() >= params["rd_min"]
    assert out["expected_a"].is_between(0.0, 1.0).all()


@PROPERTY_SETTINGS
@given(st.data(), period_histories())
def test_property_swapping_sides_mirrors(data, history):
    params = data.draw(glicko2_params(history))
    # 1 - score_a rounds, and step 5's Illinois iteration (stopping at |B - A| <= 1e-6) can amplify that last
    # bit: seen 1.07e-9 on an rd of 62.5 (volatility 0.17, two games of a pair in one period)
    assert_mirrors(
        glicko2(history, **params), glicko2(swap_sides(history), **params), kinds=("rating", "sd"), atol=1e-7
    )


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), prior_states, name_permutations)
def test_property_relabelling_players_changes_nothing(data, history, values, permutation):
    params = data.draw(glicko2_params(history))
    priors = priors_frame(values, history, PRIOR_SCHEMA)
    assert_relabelling_changes_nothing(glicko2, history, priors, permutation, **params)


@PROPERTY_SETTINGS
@given(st.data(), period_histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(data, history, seed):
    params = data.draw(glicko2_params(history))
    assert_row_order_and_repeats_give_identical_output(glicko2, history, seed, **params)


# --------------------------------------------------------------------------------------------------
# Validation and defaults.


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"tau": 0.0}, "tau"),
        ({"tau": -0.5}, "tau"),
        ({"tau": float("nan")}, "tau"),
        ({"volatility": 0.0}, "volatility"),
        ({"volatility": -0.06}, "volatility"),
        ({"rd": 0.0}, "rd"),
        ({"rd": -350.0}, "rd"),
        ({"rd_min": -1.0}, "rd_min"),
        ({"rd_min": 400.0}, "rd_min"),  # not below rd
        ({"period_length": 0.0}, "period_length"),
        ({"period_length": float("nan")}, "period_length"),
        ({"initial": float("-inf")}, "initial"),
        ({"tau": True}, "tau"),
    ],
)
def test_bad_parameters(params, named):
    with pytest.raises(DuckrateInputError, match=rf"glicko2: parameter {named}\b"):
        glicko2(small_frame(), **params)


def test_bad_parameter_messages_say_what_is_expected():
    with pytest.raises(DuckrateInputError, match=r"tau = -0.5; expected a finite volatility constraint tau > 0"):
        glicko2(small_frame(), tau=-0.5)
    with pytest.raises(DuckrateInputError, match=r"expected rd_min < rd"):
        glicko2(small_frame(), rd_min=400.0)


def test_unknown_parameter():
    with pytest.raises(TypeError, match="argument 'c'"):
        glicko2(small_frame(), c=34.6)
    with pytest.raises(DuckrateInputError, match="unknown parameter"):
        GLICKO2.resolve({"rd_max": 350.0})


def test_period_column_and_period_length_together():
    with pytest.raises(DuckrateInputError, match="give one"):
        glicko2(small_frame(period=[1, 1, 2]), period_length=1)


@pytest.mark.parametrize(("field", "bad"), [("sd", 0.0), ("sd", -3.0), ("volatility", 0.0), ("volatility", -0.06)])
def test_bad_prior_names_player_and_value(field, bad):
    priors = pl.DataFrame(
        {"player": ["ann", "cy"], "rating": [1500.0, 1600.0], "sd": [100.0, 80.0], "volatility": [0.06, 0.05]}
    )
    priors = priors.with_columns(pl.when(pl.col("player") == "cy").then(bad).otherwise(pl.col(field)).alias(field))
    with pytest.raises(DuckrateInputError) as error:
        glicko2(small_frame(), priors=priors)
    message = str(error.value)
    assert "'cy'" in message and repr(bad) in message and f"'{field}'" in message


def test_empty_input_returns_empty_frame():
    schema = {
        "match_id": pl.Utf8,
        "played_at": pl.Date,
        "player_a": pl.Utf8,
        "player_b": pl.Utf8,
        "score_a": pl.Float64,
    }
    for period_length in (None, 3.0):
        out = glicko2(pl.DataFrame(schema=schema), period_length=period_length)
        assert out.height == 0 and out.columns == CONTRACT_COLUMNS


def test_defaults_pinned():
    assert python_defaults(glicko2) == {
        "initial": 1500,
        "rd": 350,
        "volatility": 0.06,
        "tau": 0.5,
        "rd_min": 0,
        "period_length": None,
        "priors": None,
        "state": None,
        "chunk_size": None,
    }
    assert GLICKO2.defaults == {
        "initial": 1500,
        "rd": 350,
        "volatility": 0.06,
        "tau": 0.5,
        "rd_min": 0,
        "period_length": None,
    }
    assert GLICKO2.name == "glicko2" and GLICKO2.has_sd and SCALE == 173.7178


# --------------------------------------------------------------------------------------------------
# Saved state (test_replay_state.py checks that batches equal one replay; here: the layout and refusals).


def test_state_holds_mu_phi_volatility_seen_last_period():
    matches = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [1, 2, 3, 10],
            "period": [0, 0, 2, 5],
            "player_a": ["a", "b", "a", "c"],
            "player_b": ["b", "c", "c", "a"],
            "score_a": [1.0, 0.0, 0.5, 1.0],
        }
    )
    out, state = replay_with_state(GLICKO2, matches, rd_min=60.0)
    # saved at the start of the open period 5: a, b and c after period 0 (b, and a and c again after period 2)
    values = dict(zip(*state.filter(pl.col("kind") == "player").select("player", "value").to_dict().values()))
    last = {"a": (3, "a", 2), "b": (2, "a", 0), "c": (3, "b", 2)}
    for player, (match_id, side, period) in last.items():
        row = out.filter(pl.col("match_id") == match_id).row(0, named=True)
        mu, phi, sigma, seen, last_period = values[player]
        assert 1500.0 + SCALE * mu == row[f"rating_{side}_after"]  # the kernel's own conversion, bit for bit
        assert max(SCALE * phi, 60.0) == row[f"sd_{side}_after"]
        assert 0.0 < sigma < 1.0 and (seen, last_period) == (1.0, float(period))
    assert values["b"][2] != 0.06  # the volatility moved in period 0 and is saved


def test_state_refusals():
    matches = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [1, 2, 3, 10],
            "player_a": ["a", "b", "a", "c"],
            "player_b": ["b", "c", "c", "a"],
            "score_a": [1.0, 0.0, 0.5, 1.0],
        }
    )
    _, state = replay_with_state(GLICKO2, matches[:2], tau=0.8)
    with pytest.raises(RebuildRequired, match="expected a glicko state"):
        replay_with_state(GLICKO, matches[2:], state=state)
    with pytest.raises(RebuildRequired, match="parameters"):
        replay_with_state(GLICKO2, matches[2:], state=state, tau=0.5)
    with pytest.raises(RebuildRequired, match="match_id 1 arrived late"):
        replay_with_state(GLICKO2, matches[:1], state=state, tau=0.8)
    with pytest.raises(RebuildRequired, match="replayed without rating periods; these matches have them"):
        replay_with_state(GLICKO2, matches[2:].with_columns(pl.col("played_at").alias("period")), state=state, tau=0.8)
    _, periodic = replay_with_state(GLICKO2, matches.with_columns(pl.col("played_at").alias("period")), tau=0.8)
    with pytest.raises(RebuildRequired, match="period 3 is before the open period 10"):
        replay_with_state(
            GLICKO2, matches.with_columns(pl.col("played_at").alias("period"))[2:], state=periodic, tau=0.8
        )
