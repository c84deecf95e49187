"""duckrate.systems.glicko2 against Glickman's worked example, a naive reference, an independent root
find of the volatility equation, its invariants, rating periods, input validation and defaults."""

from __future__ import annotations

import datetime as dt
import inspect
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy.optimize import brentq

from duckrate import DuckrateInputError
from duckrate.systems.glicko2 import (
    GLICKO2, SCALE, glicko2, glicko2_e, glicko2_g, glicko2_update, glicko2_volatility,
)

CASES = json.loads((Path(__file__).parent.parent / "data" / "glicko_cases.json").read_text())
CONTRACT_COLUMNS = [
    "league", "seq", "match_id", "played_at", "player_a", "player_b", "score_a", "expected_a",
    "rating_a_before", "rating_b_before", "sd_a_before", "sd_b_before",
    "rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after",
]
FLOAT_COLUMNS = CONTRACT_COLUMNS[7:]
MATCH_SCHEMA = {
    "match_id": pl.Int64, "played_at": pl.Int64, "player_a": pl.Utf8, "player_b": pl.Utf8,
    "score_a": pl.Float64, "league": pl.Utf8, "weight": pl.Float64,
}
PRIOR_SCHEMA = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64, "volatility": pl.Float64}
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPOCH = dt.datetime(1970, 1, 1)


# --------------------------------------------------------------------------------------------------
# The naive reference: Glickman's steps 1-8 written out over dictionaries, with explicit period batching.


def volatility_f(x, delta, phi, v, sigma, tau):
    """Step 5's f(x)."""
    return (math.exp(x) * (delta**2 - phi**2 - v - math.exp(x)) / (2.0 * (phi**2 + v + math.exp(x)) ** 2)
            - (x - math.log(sigma**2)) / tau**2)


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


def row_period(row, period_length):
    if row.get("period") is not None:
        return row["period"]
    if period_length is None:
        return None
    played = row["played_at"]
    if isinstance(played, dt.datetime):
        delta = played - EPOCH
        units = Fraction(delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds, 86_400_000_000)
    elif isinstance(played, dt.date):
        units = Fraction((played - EPOCH.date()).days)
    else:
        units = Fraction(played)
    return math.floor(units / Fraction(period_length))


def prior_state(priors, league, player, defaults):
    state = dict(defaults)
    rows = [] if priors is None else priors.to_dicts()
    general = [r for r in rows if r["player"] == player and r.get("league") is None]
    specific = [r for r in rows if r["player"] == player and league is not None and r.get("league") == league]
    for row in general + specific:
        for field in defaults:
            if row.get(field) is not None:
                state[field] = row[field]
    return state


def reference_glicko2(frame, initial=1500.0, rd=350.0, volatility=0.06, tau=0.5, rd_min=0.0, period_length=None, priors=None):
    """match_id -> dict of the expected output values (display scale).

    Products are written in the kernel's order (x * x, not x**2): step 5 stops when the bracket is narrower
    than ε, so a last-bit difference in its inputs can move σ' by ~1e-12, and over a hundred games such
    differences grow past the 1e-9 the comparison asks for.
    """
    rows = frame.to_dicts()
    periodic = ("period" in frame.columns and frame["period"].null_count() < frame.height) or period_length is not None
    phi_min = rd_min / SCALE
    leagues = {}
    for r in rows:
        leagues.setdefault(r.get("league"), []).append(r)
    result = {}
    for league, league_rows in leagues.items():
        if periodic:
            batches = []
            for r in sorted(league_rows, key=lambda r: (row_period(r, period_length), r["played_at"], r["match_id"])):
                q = row_period(r, period_length)
                if batches and batches[-1][0] == q:
                    batches[-1][1].append(r)
                else:
                    batches.append((q, [r]))
        else:
            batches = [(None, [r]) for r in sorted(league_rows, key=lambda r: (r["played_at"], r["match_id"]))]
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
                        mu, phi, sigma = (prior["rating"] - 1500.0) / SCALE, max(prior["sd"] / SCALE, phi_min), prior["volatility"]
                    start[p] = (mu, phi, sigma)
            sums = {p: [0.0, 0.0] for p in start}  # 1/v and Σ w g (s - E)
            forecasts = {}
            for r in batch:
                w = 1.0 if r.get("weight") is None else r["weight"]
                for me, opponent, s in ((r["player_a"], r["player_b"], r["score_a"]), (r["player_b"], r["player_a"], 1.0 - r["score_a"])):
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
                    "league": league, "seq": seq, "expected_a": forecasts[r["match_id"]],
                    "rating_a_before": 1500.0 + SCALE * start[a][0], "rating_b_before": 1500.0 + SCALE * start[b][0],
                    "sd_a_before": max(SCALE * start[a][1], rd_min), "sd_b_before": max(SCALE * start[b][1], rd_min),
                    "rating_a_after": 1500.0 + SCALE * new[a][0], "rating_b_after": 1500.0 + SCALE * new[b][0],
                    "sd_a_after": max(SCALE * new[a][1], rd_min), "sd_b_after": max(SCALE * new[b][1], rd_min),
                }
            for p, (mu, phi, sigma) in new.items():
                state[p] = (mu, phi, sigma, q)
    return result


def assert_matches_reference(out: pl.DataFrame, frame: pl.DataFrame, tol=1e-9, **params):
    reference = reference_glicko2(frame, **params)
    assert out.columns == CONTRACT_COLUMNS
    assert out.height == frame.height == len(reference)
    by_id = {r["match_id"]: r for r in frame.to_dicts()}
    for row in out.iter_rows(named=True):
        want = reference[row["match_id"]]
        source = by_id[row["match_id"]]
        assert row["league"] == want["league"]
        assert row["seq"] == want["seq"]
        for column in ("played_at", "player_a", "player_b", "score_a"):
            assert row[column] == source[column]
        for column in FLOAT_COLUMNS:
            assert abs(row[column] - want[column]) <= tol, (column, row, want)


# --------------------------------------------------------------------------------------------------
# Random histories.


def random_history(seed, n=300, time_kind="int", leagues=("chess", "go", None), n_players=10, tie_span=None,
                   period=None, id_kind="int"):
    """Random matches over several leagues (one the unnamed NULL league): draws, fractional scores, weights
    with NULLs, ties in played_at, match ids whose order differs from row order. ``period``: None, 'column'
    (random integer periods unrelated to played_at, with gaps) or 'unique' (one game per period)."""
    rng = np.random.default_rng(seed)
    league = rng.integers(0, len(leagues), n)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    t = rng.integers(0, tie_span or max(n // 3, 1), n)
    kind = rng.integers(0, 3, n)
    score = np.where(kind == 0, rng.choice([0.0, 0.5, 1.0], n), np.where(kind == 1, rng.random(n), rng.choice([0.0, 1.0], n)))
    ids = rng.permutation(n * 3)[:n]
    weight = rng.uniform(0.2, 3.0, n)
    weight_null = rng.random(n) < 0.2
    if time_kind == "int":
        played_at, time_type = [int(x) for x in t], pl.Int64
    elif time_kind == "datetime":
        played_at, time_type = [dt.datetime(2024, 1, 1) + dt.timedelta(minutes=97 * int(x)) for x in t], pl.Datetime("us")
    elif time_kind == "datetime_ms":
        played_at, time_type = [dt.datetime(2023, 6, 1) + dt.timedelta(minutes=61 * int(x)) for x in t], pl.Datetime("ms")
    else:
        played_at, time_type = [dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in t], pl.Date
    match_id, id_type = ([int(i) - n for i in ids], pl.Int64) if id_kind == "int" else ([f"m{i}" for i in ids], pl.Utf8)
    columns = {
        "match_id": match_id,
        "played_at": played_at,
        "player_a": [f"p{x}" for x in a],
        "player_b": [f"p{x}" for x in b],
        "score_a": score.tolist(),
        "league": [leagues[i] for i in league],
        "weight": [None if null else float(w) for w, null in zip(weight, weight_null)],
    }
    schema = {**MATCH_SCHEMA, "match_id": id_type, "played_at": time_type}
    if period == "column":
        columns["period"] = (rng.integers(0, n // 12, n) * rng.choice([1, 3], n) - 5).tolist()
        schema["period"] = pl.Int64
    elif period == "unique":
        columns["period"] = rng.permutation(n).tolist()
        schema["period"] = pl.Int64
    frame = pl.DataFrame(columns, schema=schema)
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


def random_priors(seed, players=10):
    """Priors with league-less and league rows, NULL sd/volatility, and a player absent from the matches."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(players):
        for league in (None, "chess", "go"):
            if rng.random() < 0.4:
                rows.append({
                    "player": f"p{i}", "league": league, "rating": float(rng.uniform(1100, 1900)),
                    "sd": None if rng.random() < 0.25 else float(rng.uniform(20.0, 400.0)),
                    "volatility": None if rng.random() < 0.25 else float(rng.uniform(0.01, 0.2)),
                })
    rows.append({"player": "nobody", "league": None, "rating": 2500.0, "sd": 1.0, "volatility": 1.0})
    return pl.DataFrame(rows, schema=PRIOR_SCHEMA)


PARAMETER_SETS = {
    "defaults": {},
    "custom": {"initial": 1200.0, "rd": 300.0, "volatility": 0.09, "tau": 0.3, "rd_min": 40.0},
    "wild": {"rd": 120.0, "volatility": 0.2, "tau": 1.2},
    "floor": {"rd_min": 300.0},
}
SCENARIOS = {
    "no_periods": ({"time_kind": "int"}, {}),
    "period_column": ({"period": "column"}, {}),
    "one_game_per_period": ({"period": "unique", "id_kind": "str"}, {}),
    "length_integer": ({"time_kind": "int"}, {"period_length": 7}),
    "length_integer_fraction": ({"time_kind": "int"}, {"period_length": 2.5}),
    "length_timestamp": ({"time_kind": "datetime"}, {"period_length": 0.25}),
    "length_timestamp_ms": ({"time_kind": "datetime_ms", "id_kind": "str"}, {"period_length": 1.5}),
    "length_date": ({"time_kind": "date"}, {"period_length": 2}),
    "unique_times_length_one": ({"time_kind": "int", "tie_span": 100_000}, {"period_length": 1}),
}


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
    priors = random_priors(6)
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
        ("v", v), ("delta", delta), ("volatility_after", new_sigma),
        ("rating_after", 1500.0 + SCALE * new_mu), ("sd_after", SCALE * new_phi),
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
        assert abs(row["rating_a_after"] - expected["rating_after"]["value"]) <= expected["rating_after"]["abs_tolerance"]
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
    st.floats(0.005, 0.3), st.floats(0.01, 3.0), st.floats(0.05, 80.0), st.floats(-6.0, 6.0),
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
    frame = pl.DataFrame({"match_id": [1, 2, 3], "played_at": [0, 1, 2], "player_a": ["A", "A", "A"],
                          "player_b": ["B", "C", "D"], "score_a": [0.5, 1.0, 0.0], "period": [0, 10, 11]})
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
    frame = pl.DataFrame({"match_id": [1, 2], "played_at": [0, 1], "player_a": ["A", "A"], "player_b": ["B", "B"],
                          "score_a": [1.0, 1.0]})
    calm = glicko2(frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.01]})).sort("seq")
    wild = glicko2(frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.5]})).sort("seq")
    assert wild["sd_a_after"][0] > calm["sd_a_after"][0]
    assert_matches_reference(calm, frame, priors=pl.DataFrame({"player": ["A"], "rating": [1500.0], "volatility": [0.01]}))


def test_weight_counts_as_repeated_games():
    weighted = pl.DataFrame({"match_id": [1, 2], "played_at": [0, 0], "player_a": ["A", "C"], "player_b": ["B", "A"],
                             "score_a": [0.75, 0.0], "period": [4, 4], "weight": [2.0, 1.0]})
    doubled = pl.DataFrame({"match_id": [1, 2, 3], "played_at": [0, 0, 0], "player_a": ["A", "A", "C"],
                            "player_b": ["B", "B", "A"], "score_a": [0.75, 0.75, 0.0], "period": [4, 4, 4]})
    out_w = glicko2(weighted).filter(pl.col("match_id") == 1).row(0, named=True)
    out_d = glicko2(doubled).filter(pl.col("match_id") == 1).row(0, named=True)
    for column in ("rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after", "expected_a"):
        assert out_w[column] == pytest.approx(out_d[column], abs=1e-9)


def test_period_length_equals_period_column():
    frame = random_history(12, time_kind="int")
    assert_frame_equal(glicko2(frame, period_length=7), glicko2(frame.with_columns(period=pl.col("played_at") // 7)), check_exact=True)
    stamps = random_history(12, time_kind="datetime")
    by_date = stamps.with_columns(period=pl.col("played_at").dt.date().cast(pl.Int64))
    assert_frame_equal(glicko2(stamps, period_length=1), glicko2(by_date), check_exact=True)


def test_before_and_after_are_period_states():
    frame = random_history(13, period="column")
    joined = glicko2(frame).join(frame.select("match_id", "period"), on="match_id")
    for side in ("a", "b"):
        per = joined.group_by("league", f"player_{side}", "period").agg(
            pl.col(f"sd_{side}_before").n_unique().alias("before"), pl.col(f"rating_{side}_after").n_unique().alias("after")
        )
        assert per["before"].max() == 1 and per["after"].max() == 1


def test_leagues_are_independent():
    frame = random_history(8, period="column")
    whole = glicko2(frame)
    for league in ("chess", "go"):
        assert_frame_equal(whole.filter(pl.col("league") == league), glicko2(frame.filter(pl.col("league") == league)), check_exact=True)


def test_extreme_rating_gap_stays_finite():
    """E rounds to 1.0 (no information, v infinite): σ' = σ and φ' = sqrt(φ² + σ²), no NaN."""
    frame = pl.DataFrame({"match_id": [1, 2], "played_at": [0, 1], "player_a": ["A", "A"], "player_b": ["B", "B"],
                          "score_a": [1.0, 0.0]})
    priors = pl.DataFrame({"player": ["A", "B"], "rating": [1e6, -1e6], "sd": [30.0, 30.0]})
    out = glicko2(frame, priors=priors)
    assert all(out[c].is_finite().all() for c in FLOAT_COLUMNS)


# --------------------------------------------------------------------------------------------------
# Hypothesis properties.

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay"]
LEAGUES = [None, "L1", "L2"]


@st.composite
def histories(draw, max_size=24):
    n_players = draw(st.integers(2, len(NAMES)))
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(LEAGUES),
                st.integers(0, n_players - 1),
                st.integers(1, n_players - 1),
                st.integers(0, 6),
                st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 1.0)),
                st.one_of(st.none(), st.floats(0.25, 4.0)),
                st.integers(-3, 9),
            ),
            min_size=1,
            max_size=max_size,
        )
    )
    ids = draw(st.permutations(range(len(rows))))
    match_id, id_type = ([f"m{3 * i + 1}" for i in ids], pl.Utf8) if draw(st.booleans()) else ([3 * i - 7 for i in ids], pl.Int64)
    frame = pl.DataFrame(
        {
            "match_id": match_id,
            "played_at": [r[3] for r in rows],
            "player_a": [NAMES[r[1]] for r in rows],
            "player_b": [NAMES[(r[1] + r[2]) % n_players] for r in rows],
            "score_a": [r[4] for r in rows],
            "league": [r[0] for r in rows],
            "weight": [r[5] for r in rows],
        },
        schema={**MATCH_SCHEMA, "match_id": id_type},
    )
    if draw(st.booleans()):
        frame = frame.with_columns(period=pl.Series([r[6] for r in rows], dtype=pl.Int64))
    return frame


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


prior_values = st.one_of(
    st.none(),
    st.dictionaries(
        st.tuples(st.sampled_from(NAMES), st.sampled_from(LEAGUES)),
        st.tuples(st.floats(1000.0, 2000.0), st.one_of(st.none(), st.floats(10.0, 600.0)),
                  st.one_of(st.none(), st.floats(0.005, 0.3))),
        max_size=8,
    ),
)


def priors_frame(values, history):
    if values is None:
        return None
    present = set(history["league"].to_list())
    rows = [(p, lg, *v) for (p, lg), v in values.items() if lg is None or lg in present]
    return pl.DataFrame(
        {"player": [r[0] for r in rows], "league": [r[1] for r in rows], "rating": [r[2] for r in rows],
         "sd": [r[3] for r in rows], "volatility": [r[4] for r in rows]},
        schema=PRIOR_SCHEMA,
    )


@PROPERTY_SETTINGS
@given(st.data(), histories(), prior_values)
def test_property_matches_reference_and_bounds(data, history, values):
    params = data.draw(glicko2_params(history))
    priors = priors_frame(values, history)
    out = glicko2(history, priors=priors, **params)
    assert_matches_reference(out, history, priors=priors, **params)
    for column in ("sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after"):
        assert out[column].min() >= params["rd_min"]
    assert out["expected_a"].is_between(0.0, 1.0).all()


@PROPERTY_SETTINGS
@given(st.data(), histories())
def test_property_swapping_sides_mirrors(data, history):
    params = data.draw(glicko2_params(history))
    swapped = history.with_columns(player_a=pl.col("player_b"), player_b=pl.col("player_a"), score_a=1.0 - pl.col("score_a"))
    out = glicko2(history, **params)
    mirror = glicko2(swapped, **params)
    assert out["match_id"].to_list() == mirror["match_id"].to_list()
    assert out["seq"].to_list() == mirror["seq"].to_list()
    np.testing.assert_allclose(mirror["expected_a"].to_numpy(), 1.0 - out["expected_a"].to_numpy(), rtol=0, atol=1e-12)
    for side, other in (("a", "b"), ("b", "a")):
        for when in ("before", "after"):
            for kind in ("rating", "sd"):
                np.testing.assert_allclose(
                    mirror[f"{kind}_{side}_{when}"].to_numpy(), out[f"{kind}_{other}_{when}"].to_numpy(), rtol=0, atol=1e-9
                )


@PROPERTY_SETTINGS
@given(st.data(), histories(), prior_values, st.permutations(range(len(NAMES))))
def test_property_relabelling_players_changes_nothing(data, history, values, permutation):
    params = data.draw(glicko2_params(history))
    mapping = {name: f"z{permutation[i]}_{len(NAMES) - i}" for i, name in enumerate(NAMES)}
    priors = priors_frame(values, history)
    relabelled = history.with_columns(pl.col("player_a", "player_b").replace_strict(mapping))
    relabelled_priors = None if priors is None else priors.with_columns(pl.col("player").replace_strict(mapping))
    out = glicko2(history, priors=priors, **params)
    again = glicko2(relabelled, priors=relabelled_priors, **params)
    assert_frame_equal(out.with_columns(pl.col("player_a", "player_b").replace_strict(mapping)), again, check_exact=True)


@PROPERTY_SETTINGS
@given(st.data(), histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(data, history, seed):
    params = data.draw(glicko2_params(history))
    out = glicko2(history, **params)
    shuffled = glicko2(history.sample(fraction=1.0, shuffle=True, seed=seed), **params)
    key = ["league", "seq"]
    assert_frame_equal(out.sort(key, nulls_last=True), shuffled.sort(key, nulls_last=True), check_exact=True)
    assert_frame_equal(out, glicko2(history, **params), check_exact=True)


# --------------------------------------------------------------------------------------------------
# Validation and defaults.


def small_frame(**extra):
    data = {"match_id": [5, 7, 9], "played_at": [1, 2, 3], "player_a": ["ann", "bob", "cy"],
            "player_b": ["bob", "cy", "ann"], "score_a": [1.0, 0.5, 0.0]}
    data.update(extra)
    return pl.DataFrame(data)


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
    priors = pl.DataFrame({"player": ["ann", "cy"], "rating": [1500.0, 1600.0], "sd": [100.0, 80.0], "volatility": [0.06, 0.05]})
    priors = priors.with_columns(pl.when(pl.col("player") == "cy").then(bad).otherwise(pl.col(field)).alias(field))
    with pytest.raises(DuckrateInputError) as error:
        glicko2(small_frame(), priors=priors)
    message = str(error.value)
    assert "'cy'" in message and repr(bad) in message and f"'{field}'" in message


def test_empty_input_returns_empty_frame():
    schema = {"match_id": pl.Utf8, "played_at": pl.Date, "player_a": pl.Utf8, "player_b": pl.Utf8, "score_a": pl.Float64}
    for period_length in (None, 3.0):
        out = glicko2(pl.DataFrame(schema=schema), period_length=period_length)
        assert out.height == 0 and out.columns == CONTRACT_COLUMNS


def test_defaults_pinned():
    parameters = inspect.signature(glicko2).parameters
    defaults = {name: p.default for name, p in parameters.items() if name != "matches"}
    assert defaults == {"initial": 1500, "rd": 350, "volatility": 0.06, "tau": 0.5, "rd_min": 0, "period_length": None, "priors": None}
    assert GLICKO2.defaults == {"initial": 1500, "rd": 350, "volatility": 0.06, "tau": 0.5, "rd_min": 0, "period_length": None}
    assert GLICKO2.name == "glicko2" and GLICKO2.has_sd and SCALE == 173.7178
