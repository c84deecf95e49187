"""Test helpers shared by the replay systems' unit tests (Elo, Glicko, Glicko-2, TrueSkill).

Random match histories, the Hypothesis strategies and the property checks every replay has to pass
(swapping sides, relabelling players, row order), small frames for input validation, and the helpers of
the naive references that do not depend on the rating algorithm (rating periods and their batches, prior
lookup). The reference algorithms themselves stay in each system's test file.
"""

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
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

CONTRACT_COLUMNS = [
    "league",
    "seq",
    "match_id",
    "played_at",
    "player_a",
    "player_b",
    "score_a",
    "expected_a",
    "rating_a_before",
    "rating_b_before",
    "sd_a_before",
    "sd_b_before",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
]
SD_COLUMNS = ["sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after"]
MATCH_SCHEMA = {
    "match_id": pl.Int64,
    "played_at": pl.Int64,
    "player_a": pl.Utf8,
    "player_b": pl.Utf8,
    "score_a": pl.Float64,
    "league": pl.Utf8,
    "weight": pl.Float64,
}
EPOCH = dt.datetime(1970, 1, 1)
DATA = Path(__file__).parents[1] / "data"


def load_data(name: str):
    """A JSON file of tests/data."""
    return json.loads((DATA / name).read_text())


def property_settings(max_examples: int):
    """Hypothesis settings of the property tests: no deadline (the first call compiles the kernels)."""
    return settings(max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------------
# Random histories.


def played_at_column(t, time_kind: str, datetime_minutes: int = 1):
    """(values, dtype) of ``played_at`` from integer time steps ``t``: the steps themselves ('int'), minutes
    from 2024-01-01 ('datetime', ``datetime_minutes`` a step), 61 minutes a step from 2023-06-01 at
    nanosecond or millisecond resolution ('datetime_ns', 'datetime_ms'), or days from 2024-01-01 ('date')."""
    if time_kind == "int":
        return [int(x) for x in t], pl.Int64
    if time_kind == "datetime":
        return [dt.datetime(2024, 1, 1) + dt.timedelta(minutes=datetime_minutes * int(x)) for x in t], pl.Datetime("us")
    if time_kind in ("datetime_ns", "datetime_ms"):
        return [dt.datetime(2023, 6, 1) + dt.timedelta(minutes=61 * int(x)) for x in t], pl.Datetime(time_kind[-2:])
    return [dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in t], pl.Date


def match_id_column(ids, n: int, id_kind: str):
    """(values, dtype) of ``match_id``: integers shifted by -n (negative ids too) or strings 'm<i>' (whose
    order, 'm10' < 'm9', is lexicographic, not numeric)."""
    if id_kind == "int":
        return [int(i) - n for i in ids], pl.Int64
    return [f"m{i}" for i in ids], pl.Utf8


def random_history(
    seed,
    n=300,
    time_kind="int",
    leagues=("chess", "go", None),
    n_players=10,
    tie_span=None,
    period=None,
    id_kind="int",
    matches_per_time=3,
    null_weight_share=0.2,
    datetime_minutes=97,
):
    """Random matches over several leagues (one the unnamed NULL league): draws, fractional scores, weights
    with NULLs (``null_weight_share`` of them), ties in played_at (``n / matches_per_time`` distinct times,
    or ``tie_span``), match ids whose order differs from row order. ``period``: None, 'column' (random
    integer periods unrelated to played_at, with gaps) or 'unique' (one game per period). The defaults
    are the Glicko tests' sizes; test_elo binds its own (400 matches of 12 players, ...)."""
    rng = np.random.default_rng(seed)
    league = rng.integers(0, len(leagues), n)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    t = rng.integers(0, tie_span or max(n // matches_per_time, 1), n)
    kind = rng.integers(0, 3, n)
    score = np.where(
        kind == 0, rng.choice([0.0, 0.5, 1.0], n), np.where(kind == 1, rng.random(n), rng.choice([0.0, 1.0], n))
    )
    ids = rng.permutation(n * 3)[:n]
    weight = rng.uniform(0.2, 3.0, n)
    weight_null = rng.random(n) < null_weight_share
    played_at, time_type = played_at_column(t, time_kind, datetime_minutes)
    match_id, id_type = match_id_column(ids, n, id_kind)
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
    """Priors with league-less and league rows (leagues present in the histories), NULL fields, an absent
    player; ``field_names``: the fields besides rating ('sd', 'volatility')."""
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
    schema = {"player": pl.Utf8, "league": pl.Utf8, "rating": pl.Float64, **{name: pl.Float64 for name in field_names}}
    return pl.DataFrame(rows, schema=schema)


def period_scenarios(other_unit: str) -> dict:
    """Name -> (random_history options, period options): every way a Glicko replay gets its periods.
    ``other_unit``: 'ns' or 'ms', the unit of the one timestamp scenario not in microseconds."""
    return {
        "no_periods": ({"time_kind": "int"}, {}),
        "period_column": ({"period": "column"}, {}),
        "one_game_per_period": ({"period": "unique", "id_kind": "str"}, {}),
        "length_integer": ({"time_kind": "int"}, {"period_length": 7}),
        "length_integer_fraction": ({"time_kind": "int"}, {"period_length": 2.5}),
        "length_timestamp": ({"time_kind": "datetime"}, {"period_length": 0.25}),
        f"length_timestamp_{other_unit}": (
            {"time_kind": f"datetime_{other_unit}", "id_kind": "str"},
            {"period_length": 1.5},
        ),
        "length_date": ({"time_kind": "date"}, {"period_length": 2}),
        "unique_times_length_one": ({"time_kind": "int", "tie_span": 100_000}, {"period_length": 1}),
    }


# --------------------------------------------------------------------------------------------------
# Helpers of the naive references (independent of the rating algorithm).


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


def period_batches(frame, period_length):
    """(periodic, {league: [(period, rows), ...]}): the references' replay order. With periods (a period
    column that is not all NULL, or a period_length) each league's rows sorted by (period, played_at,
    match_id) and grouped by period; without, every row alone (period None) in (played_at, match_id) order."""
    periodic = ("period" in frame.columns and frame["period"].null_count() < frame.height) or period_length is not None
    leagues = {}
    for r in frame.to_dicts():
        leagues.setdefault(r.get("league"), []).append(r)
    batches_by_league = {}
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
        batches_by_league[league] = batches
    return periodic, batches_by_league


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


def assert_rows_match_reference(
    out: pl.DataFrame, frame: pl.DataFrame, reference: dict, float_columns, tol, null_columns=()
):
    """``out`` has the contract's columns, one row per match of ``frame`` with its input values, and the
    ``reference`` (match_id -> expected values) within ``tol`` on ``float_columns``; ``null_columns`` are NULL."""
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
        for column in float_columns:
            assert abs(row[column] - want[column]) <= tol, (column, row, want)
        for column in null_columns:
            assert row[column] is None


# --------------------------------------------------------------------------------------------------
# Hypothesis strategies.

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay"]
LEAGUES = [None, "L1", "L2"]
name_permutations = st.permutations(range(len(NAMES)))  # for assert_relabelling_changes_nothing


@st.composite
def histories(draw, max_size=20, max_played_at=4, fractional_scores=True, weights=True, periods=False):
    """Small histories over NAMES and LEAGUES. ``fractional_scores``: any score in [0, 1], else 0, 0.5 or 1;
    ``weights``: a weight column (NULLs included); ``periods``: half the time a period column (gaps, negatives)."""
    n_players = draw(st.integers(2, len(NAMES)))
    score = st.sampled_from([0.0, 0.5, 1.0])
    fields = [
        st.sampled_from(LEAGUES),
        st.integers(0, n_players - 1),
        st.integers(1, n_players - 1),
        st.integers(0, max_played_at),
        st.one_of(score, st.floats(0.0, 1.0)) if fractional_scores else score,
    ]
    if weights:
        fields.append(st.one_of(st.none(), st.floats(0.25, 4.0)))
    if periods:
        fields.append(st.integers(-3, 9))
    rows = draw(st.lists(st.tuples(*fields), min_size=1, max_size=max_size))
    ids = draw(st.permutations(range(len(rows))))
    if draw(st.booleans()):
        match_id, id_type = [f"m{3 * i + 1}" for i in ids], pl.Utf8
    else:
        match_id, id_type = [3 * i - 7 for i in ids], pl.Int64
    columns = {
        "match_id": match_id,
        "played_at": [r[3] for r in rows],
        "player_a": [NAMES[r[1]] for r in rows],
        "player_b": [NAMES[(r[1] + r[2]) % n_players] for r in rows],
        "score_a": [r[4] for r in rows],
        "league": [r[0] for r in rows],
    }
    if weights:
        columns["weight"] = [r[5] for r in rows]
    schema = {name: kind for name, kind in MATCH_SCHEMA.items() if name in columns}
    frame = pl.DataFrame(columns, schema={**schema, "match_id": id_type})
    if periods and draw(st.booleans()):
        frame = frame.with_columns(period=pl.Series([r[-1] for r in rows], dtype=pl.Int64))
    return frame


def period_histories():
    """The Glicko systems' histories: a little longer, more distinct times, and period columns."""
    return histories(max_size=24, max_played_at=6, periods=True)


def prior_values(values):
    """None, or a dictionary (player, league) -> ``values`` (a rating, or a tuple of the prior fields)."""
    return st.one_of(
        st.none(),
        st.dictionaries(st.tuples(st.sampled_from(NAMES), st.sampled_from(LEAGUES)), values, max_size=8),
    )


def priors_frame(values, history, schema):
    """A priors frame from {(player, league): value or tuple of values}, the values in the order of
    ``schema``'s fields other than player and league. League-specific rows only for leagues in the history
    (a player with rows for two absent leagues trips a known plugin bug, tested separately in test_elo)."""
    if values is None:
        return None
    fields = [name for name in schema if name not in ("player", "league")]
    present = set(history["league"].to_list())
    rows = [
        (p, lg, *(v if isinstance(v, tuple) else (v,))) for (p, lg), v in values.items() if lg is None or lg in present
    ]
    data = {"player": [r[0] for r in rows], "league": [r[1] for r in rows]}
    data.update({name: [r[2 + i] for r in rows] for i, name in enumerate(fields)})
    return pl.DataFrame(data, schema=schema)


# --------------------------------------------------------------------------------------------------
# Properties every replay has (``run`` is the system's Python function, e.g. duckrate.elo).


def swap_sides(history: pl.DataFrame) -> pl.DataFrame:
    """The same matches with player_a and player_b exchanged (and the score with them)."""
    return history.with_columns(
        player_a=pl.col("player_b"), player_b=pl.col("player_a"), score_a=1.0 - pl.col("score_a")
    )


def assert_mirrors(out, mirror, kinds=("rating", "sd"), atol=1e-9, expected_atol=1e-12):
    """``mirror`` (the replay of the swapped history) is ``out`` with sides exchanged: same match order and
    seq, expected_a -> 1 - expected_a, each side's ``kinds`` columns equal to the other side's within
    ``atol`` (None: bit for bit)."""
    assert out["match_id"].to_list() == mirror["match_id"].to_list()
    assert out["seq"].to_list() == mirror["seq"].to_list()
    np.testing.assert_allclose(
        mirror["expected_a"].to_numpy(), 1.0 - out["expected_a"].to_numpy(), rtol=0, atol=expected_atol
    )
    for side, other in (("a", "b"), ("b", "a")):
        for when in ("before", "after"):
            for kind in kinds:
                got, want = mirror[f"{kind}_{side}_{when}"], out[f"{kind}_{other}_{when}"]
                if atol is None:
                    assert got.to_list() == want.to_list()
                else:
                    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=atol)


def assert_relabelling_changes_nothing(run, history, priors, permutation, **params):
    """Renaming the players (in the matches and the priors) renames them in the output, nothing else."""
    mapping = {name: f"z{permutation[i]}_{len(NAMES) - i}" for i, name in enumerate(NAMES)}
    relabelled = history.with_columns(pl.col("player_a", "player_b").replace_strict(mapping))
    relabelled_priors = None if priors is None else priors.with_columns(pl.col("player").replace_strict(mapping))
    out = run(history, priors=priors, **params)
    again = run(relabelled, priors=relabelled_priors, **params)
    assert_frame_equal(
        out.with_columns(pl.col("player_a", "player_b").replace_strict(mapping)), again, check_exact=True
    )


def assert_row_order_and_repeats_give_identical_output(run, history, seed, **arguments):
    """Shuffling the input rows changes nothing (bit for bit), and neither does running again."""
    out = run(history, **arguments)
    shuffled = run(history.sample(fraction=1.0, shuffle=True, seed=seed), **arguments)
    repeated = run(history, **arguments)
    key = ["league", "seq"]
    assert_frame_equal(out.sort(key, nulls_last=True), shuffled.sort(key, nulls_last=True), check_exact=True)
    assert_frame_equal(out, repeated, check_exact=True)


def assert_seq_is_one_based_and_contiguous_per_league(out):
    for (league,), group in out.group_by("league"):
        assert sorted(group["seq"].to_list()) == list(range(1, group.height + 1)), league


def assert_after_state_is_carried_into_the_next_match(out: pl.DataFrame) -> None:
    """Each player's before-values in a match equal their after-values in their previous match."""
    last = {}
    for row in out.sort("league", "seq", nulls_last=True).iter_rows(named=True):
        for side in "ab":
            key = (row["league"], row[f"player_{side}"])
            if key in last:
                assert (row[f"rating_{side}_before"], row[f"sd_{side}_before"]) == last[key]
            last[key] = (row[f"rating_{side}_after"], row[f"sd_{side}_after"])


def assert_leagues_are_independent(run, frame):
    """Replaying one league alone gives that league's rows of the whole replay, bit for bit."""
    whole = run(frame)
    for league in ("chess", "go"):
        alone = run(frame.filter(pl.col("league") == league))
        assert_frame_equal(whole.filter(pl.col("league") == league), alone, check_exact=True)


def assert_null_weight_means_one(run, frame):
    """A weight column of NULLs, or of ones, gives the same output as no weight column."""
    unweighted = run(frame.drop("weight", strict=False))
    for weight in (pl.lit(None, dtype=pl.Float64), pl.lit(1.0)):
        assert_frame_equal(run(frame.with_columns(weight=weight)), unweighted, check_exact=True)


def assert_period_column_is_ignored(run, frame):
    """For a system without rating periods, adding a period column to ``frame`` changes nothing."""
    with_periods = frame.with_columns(period=pl.Series(np.arange(frame.height) % 7, dtype=pl.Int64))
    assert_frame_equal(run(with_periods), run(frame), check_exact=True)


def assert_weight_counts_as_repeated_games(run):
    """A game of weight 2 in a period rates its players like the same game played twice in that period."""
    weighted = pl.DataFrame(
        {
            "match_id": [1, 2],
            "played_at": [0, 0],
            "player_a": ["A", "C"],
            "player_b": ["B", "A"],
            "score_a": [0.75, 0.0],
            "period": [4, 4],
            "weight": [2.0, 1.0],
        }
    )
    doubled = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [0, 0, 0],
            "player_a": ["A", "A", "C"],
            "player_b": ["B", "B", "A"],
            "score_a": [0.75, 0.75, 0.0],
            "period": [4, 4, 4],
        }
    )
    out_w = run(weighted).filter(pl.col("match_id") == 1).row(0, named=True)
    out_d = run(doubled).filter(pl.col("match_id") == 1).row(0, named=True)
    for column in ("rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after", "expected_a"):
        assert out_w[column] == pytest.approx(out_d[column], abs=1e-9)


def assert_period_length_equals_period_column(run, random_history):
    """period_length on an integer played_at is floor(played_at / length); on a timestamp, days."""
    frame = random_history(12, time_kind="int")
    assert_frame_equal(
        run(frame, period_length=7), run(frame.with_columns(period=pl.col("played_at") // 7)), check_exact=True
    )
    stamps = random_history(12, time_kind="datetime")
    by_date = stamps.with_columns(period=pl.col("played_at").dt.date().cast(pl.Int64))
    assert_frame_equal(run(stamps, period_length=1), run(by_date), check_exact=True)


def assert_period_states_are_shared(out, frame, before_kind, after_kind):
    """Within one period a player's ``before_kind`` (the period-start state) and ``after_kind`` (the state
    after the period's update) are the same on every row of the player."""
    joined = out.join(frame.select("match_id", "period"), on="match_id")
    for side in ("a", "b"):
        per = joined.group_by("league", f"player_{side}", "period").agg(
            pl.col(f"{before_kind}_{side}_before").n_unique().alias("before"),
            pl.col(f"{after_kind}_{side}_after").n_unique().alias("after"),
        )
        assert per["before"].max() == 1 and per["after"].max() == 1


# --------------------------------------------------------------------------------------------------
# Small frames for hand values and input validation, and the Python defaults.


def one_match(score=1.0, **columns):
    """One game of A against B at played_at 1; ``columns`` adds columns (e.g. league, weight)."""
    data = {"match_id": [1], "played_at": [1], "player_a": ["A"], "player_b": ["B"], "score_a": [score]}
    data.update({name: [value] for name, value in columns.items()})
    return pl.DataFrame(data)


def base_rows(**extra):
    """Columns of three valid matches (match_id 5, 7, 9); ``extra`` adds or replaces columns."""
    return {
        "match_id": [5, 7, 9],
        "played_at": [1, 2, 3],
        "player_a": ["ann", "bob", "cy"],
        "player_b": ["bob", "cy", "ann"],
        "score_a": [1.0, 0.5, 0.0],
        **extra,
    }


def small_frame(**extra):
    return pl.DataFrame(base_rows(**extra))


def with_value(rows, column, value, schema=None):
    """``rows`` with ``value`` in ``column`` (all ones if absent) on the row of match_id 7."""
    rows.setdefault(column, [1.0, 1.0, 1.0])[1] = value
    return pl.DataFrame(rows, schema=schema)


def python_defaults(function, skip=("matches",)):
    """The defaults of a system's Python function, by parameter name (without the names in ``skip`` and the
    parameters that have no default)."""
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if name not in skip and p.default is not inspect.Parameter.empty
    }


# --------------------------------------------------------------------------------------------------
# SQL: the rows-and-state macro the dbt materialization builds from.


def assert_rows_and_state_equal(
    con, call: str, rows: pl.DataFrame, state: pl.DataFrame, row_order, state_order
) -> None:
    """``<system>_replay_and_state`` (what the dbt materialization builds from) gives, from one run, the rows of
    ``<system>_replay`` and, in its ``duckrate_state`` column, the table of ``<system>_state``."""
    con.execute(f"CREATE OR REPLACE TABLE computed AS SELECT * FROM {call}")
    both_rows = con.sql("SELECT * EXCLUDE (duckrate_state) FROM computed WHERE seq IS NOT NULL").pl()
    both_state = con.sql("SELECT unnest(duckrate_state) FROM computed WHERE duckrate_state IS NOT NULL").pl()
    assert_frame_equal(
        both_rows.sort(row_order, nulls_last=True), rows.sort(row_order, nulls_last=True), check_exact=True
    )
    assert_frame_equal(both_state.sort(state_order, nulls_last=True), state, check_exact=True)
