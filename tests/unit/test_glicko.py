"""duckrate.systems.glicko against Glickman's worked example, a naive reference, its invariants,
rating periods, input validation and defaults."""

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

from duckrate import DuckrateInputError
from duckrate.systems.glicko import GLICKO, Q, glicko, glicko_e, glicko_g, glicko_update

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
PRIOR_SCHEMA = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64}
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPOCH = dt.datetime(1970, 1, 1)


# --------------------------------------------------------------------------------------------------
# The naive reference: dictionaries, explicit period batching, the paper's formulas written out.


def row_period(row, period_length):
    """The row's rating period (None: no periods), with exact arithmetic on played_at."""
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
    """Field by field: the league's own prior row, else the league-less row, else the default."""
    state = dict(defaults)
    rows = [] if priors is None else priors.to_dicts()
    general = [r for r in rows if r["player"] == player and r.get("league") is None]
    specific = [r for r in rows if r["player"] == player and league is not None and r.get("league") == league]
    for row in general + specific:
        for field in defaults:
            if row.get(field) is not None:
                state[field] = row[field]
    return state


def reference_glicko(frame, initial=1500.0, rd=350.0, c=34.6, rd_max=350.0, rd_min=0.0, period_length=None, priors=None):
    """match_id -> dict of the expected output values."""
    rows = frame.to_dicts()
    periodic = ("period" in frame.columns and frame["period"].null_count() < frame.height) or period_length is not None
    leagues = {}
    for r in rows:
        leagues.setdefault(r.get("league"), []).append(r)
    result = {}
    for league, league_rows in leagues.items():
        if periodic:
            ordered = sorted(league_rows, key=lambda r: (row_period(r, period_length), r["played_at"], r["match_id"]))
            batches = []
            for r in ordered:
                q = row_period(r, period_length)
                if batches and batches[-1][0] == q:
                    batches[-1][1].append(r)
                else:
                    batches.append((q, [r]))
        else:
            batches = [(None, [r]) for r in sorted(league_rows, key=lambda r: (r["played_at"], r["match_id"]))]
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
                for me, opponent, s in ((r["player_a"], r["player_b"], r["score_a"]), (r["player_b"], r["player_a"], 1.0 - r["score_a"])):
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
                    "league": league, "seq": seq, "expected_a": forecasts[r["match_id"]],
                    "rating_a_before": start[a][0], "rating_b_before": start[b][0],
                    "sd_a_before": start[a][1], "sd_b_before": start[b][1],
                    "rating_a_after": new[a][0], "rating_b_after": new[b][0],
                    "sd_a_after": new[a][1], "sd_b_after": new[b][1],
                }
            for p, (rating, dev) in new.items():
                state[p] = (rating, dev, q)
    return result


def assert_matches_reference(out: pl.DataFrame, frame: pl.DataFrame, tol=1e-9, **params):
    reference = reference_glicko(frame, **params)
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
    elif time_kind == "datetime_ns":
        played_at, time_type = [dt.datetime(2023, 6, 1) + dt.timedelta(minutes=61 * int(x)) for x in t], pl.Datetime("ns")
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


def random_priors(seed, players=10, field_names=("sd",)):
    """Priors with league-less and league rows (leagues present in the histories), NULL fields, an absent player."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(players):
        for league in (None, "chess", "go"):
            if rng.random() < 0.4:
                row = {"player": f"p{i}", "league": league, "rating": float(rng.uniform(1100, 1900))}
                for name in field_names:
                    low, high = (20.0, 400.0) if name == "sd" else (0.01, 0.2)
                    row[name] = None if rng.random() < 0.25 else float(rng.uniform(low, high))
                rows.append(row)
    rows.append({"player": "nobody", "league": None, "rating": 2500.0, **{name: 1.0 for name in field_names}})
    schema = {**{k: v for k, v in PRIOR_SCHEMA.items() if k in ("player", "league", "rating")},
              **{name: pl.Float64 for name in field_names}}
    return pl.DataFrame(rows, schema=schema)


PARAMETER_SETS = {
    "defaults": {},
    "custom": {"initial": 1200.0, "rd": 300.0, "c": 60.0, "rd_max": 320.0, "rd_min": 40.0},
    "no_growth": {"c": 0.0, "rd": 200.0},
    "floor": {"rd_min": 250.0, "c": 10.0},
}
SCENARIOS = {
    "no_periods": ({"time_kind": "int"}, {}),
    "period_column": ({"period": "column"}, {}),
    "one_game_per_period": ({"period": "unique", "id_kind": "str"}, {}),
    "length_integer": ({"time_kind": "int"}, {"period_length": 7}),
    "length_integer_fraction": ({"time_kind": "int"}, {"period_length": 2.5}),
    "length_timestamp": ({"time_kind": "datetime"}, {"period_length": 0.25}),
    "length_timestamp_ns": ({"time_kind": "datetime_ns", "id_kind": "str"}, {"period_length": 1.5}),
    "length_date": ({"time_kind": "date"}, {"period_length": 2}),
    "unique_times_length_one": ({"time_kind": "int", "tie_span": 100_000}, {"period_length": 1}),
}


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
        assert abs(row["rating_a_after"] - expected["rating_after"]["value"]) <= expected["rating_after"]["abs_tolerance"]
        assert abs(row["sd_a_after"] - expected["sd_after"]["value"]) <= expected["sd_after"]["abs_tolerance"]
    assert_matches_reference(out, matches, priors=priors)
    # without the period column the three games are rated one after another: a different answer
    sequential = glicko(matches.drop("period"), priors=priors).sort("seq")
    assert abs(sequential["rating_a_after"][-1] - expected["rating_after"]["value"]) > 1.0


def test_hand_values_two_newcomers():
    row = glicko(pl.DataFrame({"match_id": [1], "played_at": [0], "player_a": ["A"], "player_b": ["B"], "score_a": [1.0]})).row(0, named=True)
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
    frame = pl.DataFrame({"match_id": [1, 2, 3], "played_at": [0, 1, 2], "player_a": ["A", "A", "A"],
                          "player_b": ["B", "C", "D"], "score_a": [0.5, 0.5, 0.5], "period": [0, 100, 500]})
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
    """A game of weight 2 in a period rates its players like the same game played twice in that period."""
    base = {"played_at": [0, 0], "player_a": ["A", "C"], "player_b": ["B", "A"], "score_a": [0.75, 0.0], "period": [4, 4]}
    weighted = pl.DataFrame({"match_id": [1, 2], **base, "weight": [2.0, 1.0]})
    doubled = pl.DataFrame({"match_id": [1, 2, 3], "played_at": [0, 0, 0], "player_a": ["A", "A", "C"],
                            "player_b": ["B", "B", "A"], "score_a": [0.75, 0.75, 0.0], "period": [4, 4, 4]})
    out_w = glicko(weighted).filter(pl.col("match_id") == 1).row(0, named=True)
    out_d = glicko(doubled).filter(pl.col("match_id") == 1).row(0, named=True)
    for column in ("rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after", "expected_a"):
        assert out_w[column] == pytest.approx(out_d[column], abs=1e-9)


def test_one_game_per_period_equals_no_periods_without_growth():
    """With c = 0 the only difference between the two modes is idle growth: none, so results agree."""
    frame = random_history(21)
    ranked = frame.sort("played_at", "match_id").with_row_index("period").with_columns(pl.col("period").cast(pl.Int64))
    assert_frame_equal(glicko(ranked, c=0.0), glicko(frame, c=0.0), check_exact=True)


def test_period_length_equals_period_column():
    frame = random_history(12, time_kind="int")
    by_length = glicko(frame, period_length=7)
    by_column = glicko(frame.with_columns(period=pl.col("played_at") // 7))
    assert_frame_equal(by_length, by_column, check_exact=True)
    stamps = random_history(12, time_kind="datetime")
    by_days = glicko(stamps, period_length=1)
    by_date = glicko(stamps.with_columns(period=pl.col("played_at").dt.date().cast(pl.Int64)))
    assert_frame_equal(by_days, by_date, check_exact=True)
    dates = random_history(12, time_kind="date")
    assert_frame_equal(glicko(dates, period_length=3),
                       glicko(dates.with_columns(period=pl.col("played_at").cast(pl.Int64) // 3)), check_exact=True)


def test_period_length_floors_negative_played_at():
    frame = pl.DataFrame({"match_id": [1, 2, 3, 4, 5], "played_at": [-3, -2, -1, 0, 1], "player_a": ["A", "B", "A", "C", "A"],
                          "player_b": ["B", "C", "C", "A", "B"], "score_a": [1.0, 0.0, 0.5, 1.0, 0.25]})
    expected_periods = frame.with_columns(period=pl.Series([-2, -1, -1, 0, 0]))
    assert_frame_equal(glicko(frame, period_length=2), glicko(expected_periods), check_exact=True)
    assert_frame_equal(glicko(frame, period_length=1.5), glicko(frame.with_columns(period=pl.Series([-2, -2, -1, 0, 0]))),
                       check_exact=True)


def test_before_and_after_are_period_states():
    frame = random_history(13, period="column")
    out = glicko(frame)
    joined = out.join(frame.select("match_id", "period"), on="match_id")
    for side in ("a", "b"):
        per = joined.group_by("league", f"player_{side}", "period").agg(
            pl.col(f"rating_{side}_before").n_unique().alias("before"), pl.col(f"sd_{side}_after").n_unique().alias("after")
        )
        assert per["before"].max() == 1 and per["after"].max() == 1


def test_seq_is_one_based_and_contiguous_per_league():
    out = glicko(random_history(2, period="column"))
    for (league,), group in out.group_by("league"):
        assert sorted(group["seq"].to_list()) == list(range(1, group.height + 1)), league


def test_leagues_are_independent():
    frame = random_history(8, period="column")
    whole = glicko(frame)
    for league in ("chess", "go"):
        alone = glicko(frame.filter(pl.col("league") == league))
        assert_frame_equal(whole.filter(pl.col("league") == league), alone, check_exact=True)


def test_null_weight_means_one():
    frame = random_history(6, period="column")
    ones = frame.with_columns(weight=pl.lit(1.0))
    assert_frame_equal(glicko(ones), glicko(frame.drop("weight")), check_exact=True)
    nulls = frame.with_columns(weight=pl.lit(None, dtype=pl.Float64))
    assert_frame_equal(glicko(nulls), glicko(frame.drop("weight")), check_exact=True)


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


prior_values = st.one_of(
    st.none(),
    st.dictionaries(
        st.tuples(st.sampled_from(NAMES), st.sampled_from(LEAGUES)),
        st.tuples(st.floats(1000.0, 2000.0), st.one_of(st.none(), st.floats(10.0, 600.0))),
        max_size=8,
    ),
)


def priors_frame(values, history):
    """{(player, league): (rating, sd)} as a priors frame; league rows only for leagues in the history."""
    if values is None:
        return None
    present = set(history["league"].to_list())
    rows = [(p, lg, r, s) for (p, lg), (r, s) in values.items() if lg is None or lg in present]
    return pl.DataFrame(
        {"player": [r[0] for r in rows], "league": [r[1] for r in rows], "rating": [r[2] for r in rows], "sd": [r[3] for r in rows]},
        schema=PRIOR_SCHEMA,
    )


@PROPERTY_SETTINGS
@given(st.data(), histories(), prior_values)
def test_property_matches_reference_and_bounds(data, history, values):
    params = data.draw(glicko_params(history))
    priors = priors_frame(values, history)
    out = glicko(history, priors=priors, **params)
    assert_matches_reference(out, history, priors=priors, **params)
    for column in ("sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after"):
        assert out[column].min() >= params["rd_min"]
        assert out[column].max() <= params["rd_max"]
    assert out["expected_a"].is_between(0.0, 1.0).all()


@PROPERTY_SETTINGS
@given(st.data(), histories())
def test_property_swapping_sides_mirrors(data, history):
    params = data.draw(glicko_params(history))
    swapped = history.with_columns(player_a=pl.col("player_b"), player_b=pl.col("player_a"), score_a=1.0 - pl.col("score_a"))
    out = glicko(history, **params)
    mirror = glicko(swapped, **params)
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
    params = data.draw(glicko_params(history))
    mapping = {name: f"z{permutation[i]}_{len(NAMES) - i}" for i, name in enumerate(NAMES)}
    priors = priors_frame(values, history)
    relabelled = history.with_columns(pl.col("player_a", "player_b").replace_strict(mapping))
    relabelled_priors = None if priors is None else priors.with_columns(pl.col("player").replace_strict(mapping))
    out = glicko(history, priors=priors, **params)
    again = glicko(relabelled, priors=relabelled_priors, **params)
    assert_frame_equal(out.with_columns(pl.col("player_a", "player_b").replace_strict(mapping)), again, check_exact=True)


@PROPERTY_SETTINGS
@given(st.data(), histories(), st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(data, history, seed):
    params = data.draw(glicko_params(history))
    out = glicko(history, **params)
    shuffled = glicko(history.sample(fraction=1.0, shuffle=True, seed=seed), **params)
    repeated = glicko(history, **params)
    key = ["league", "seq"]
    assert_frame_equal(out.sort(key, nulls_last=True), shuffled.sort(key, nulls_last=True), check_exact=True)
    assert_frame_equal(out, repeated, check_exact=True)


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
    schema = {"match_id": pl.Int64, "played_at": pl.Datetime("us"), "player_a": pl.Utf8, "player_b": pl.Utf8,
              "score_a": pl.Float64, "league": pl.Utf8, "weight": pl.Float64}
    for period_length in (None, 1.0):
        out = glicko(pl.DataFrame(schema=schema), period_length=period_length)
        assert out.height == 0 and out.columns == CONTRACT_COLUMNS


def test_defaults_pinned():
    parameters = inspect.signature(glicko).parameters
    defaults = {name: p.default for name, p in parameters.items() if name != "matches"}
    assert defaults == {"initial": 1500, "rd": 350, "c": 34.6, "rd_max": 350, "rd_min": 0, "period_length": None, "priors": None}
    assert GLICKO.defaults == {"initial": 1500, "rd": 350, "c": 34.6, "rd_max": 350, "rd_min": 0, "period_length": None}
    assert GLICKO.name == "glicko" and GLICKO.has_sd
