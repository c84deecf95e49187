"""Elo-MMR saved state: contests replayed batch by batch, each from the state the last one saved, equal
one replay over the whole history bit for bit (rows, ``seq`` included, and the final state), and a
continuation the state cannot support is refused with a reason.

Histories: several leagues (and league-less contests), newcomers arriving in later contests, ties in
rank and in ``played_at``, contest weights, ``drift_per_day`` over dates, both variants, a small
``max_history`` (so factors are folded while a player's list is restored from the state), the fast and
the exact phase 1, opponent subsampling, ρ = ∞, and priors for newcomers.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from helpers.contest_cases import KEY, contest_history, contest_order, in_batches
from polars.testing import assert_frame_equal

import duckrate
from duckrate import RebuildRequired
from duckrate.systems.elo_mmr.beliefs import HEADER
from duckrate.systems.event_state import STATE_ORDER
from duckrate.systems.saved_state import STATE_COLUMNS

CASES = [
    {},
    {"max_history": 2},
    {"max_history": 1, "algorithm": "exact", "drift_per_day": 15.0},
    {"variant": "gaussian", "drift_per_day": 10.0},
    {"rho": math.inf, "max_history": 3},
    {"rho": 0.3, "history_tolerance": 0.0, "max_opponents": 4, "beta": 150.0},
    {"history_tolerance": 0.05, "drift_per_day": 5.0, "algorithm": "exact"},
]


@pytest.mark.parametrize("params", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("seed", [1, 2])
def test_batches_equal_one_replay(params, seed):
    results = contest_history(40, seed, string_ids=seed == 2)
    full, full_state = duckrate.replay_with_state("elo_mmr", results, **params)
    rng = np.random.default_rng(seed + 10)
    cuts = sorted(set(rng.integers(1, 39, 4).tolist()) | {1, 39})
    rows, state = in_batches(results, cuts, params)
    assert rows.height == results.height
    assert_frame_equal(rows, full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)
    assert_frame_equal(full, duckrate.elo_mmr(results, **params), check_exact=True)  # rows alone: same


def test_priors_apply_to_newcomers_of_later_batches():
    results = contest_history(30, 3)
    priors = pl.DataFrame(
        {
            "player": ["p40", "p3", "p55"],
            "league": [None, "east", None],
            "rating": [2100.0, 1200.0, 1800.0],
            "sd": [90.0, None, 400.0],
        }
    )
    params = {"max_history": 2, "drift_per_day": 3.0}
    full, full_state = duckrate.replay_with_state("elo_mmr", results, priors=priors, **params)
    rows, state = in_batches(results, [4, 17], params, priors=priors)
    assert_frame_equal(rows, full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)


def test_state_layout():
    results = contest_history(25, 4)
    out, state = duckrate.replay_with_state("elo_mmr", results, max_history=3, drift_per_day=2.0)
    assert tuple(state.columns) == STATE_COLUMNS
    assert state.equals(state.sort(STATE_ORDER, nulls_last=True))
    leagues = state.filter(pl.col("kind") == "league").sort("league", nulls_last=True)
    contests = out.group_by("league").agg(pl.col("seq").max(), pl.col("player").n_unique().alias("players"))
    joined = leagues.join(contests, on="league", nulls_equal=True, suffix="_rows")
    assert joined.height == 3 and (joined["seq"] == joined["seq_rows"]).all()
    assert (joined["n_players"] == joined["players"]).all() and set(leagues["system"]) == {"elo_mmr"}
    # the league row names its last contest; one contest row per contest with its seq, key and id
    last = out.sort("seq").group_by("league").last().select("league", "contest_id")
    named = leagues.join(last, on="league", nulls_equal=True)
    assert (named["last_match_id"] == named["contest_id"].cast(pl.Utf8)).all()
    saved = state.filter(pl.col("kind") == "contest").select("league", "seq", contest_id=pl.col("last_match_id"))
    replayed = out.select("league", "seq", pl.col("contest_id").cast(pl.Utf8)).unique()
    assert_frame_equal(saved.sort("league", "seq", nulls_last=True), replayed.sort("league", "seq", nulls_last=True))
    # a player row: [mu, sig, normal_mu, normal_sig, last_day, n, n × (centre, arg_scale, out_scale)]
    players = state.filter(pl.col("kind") == "player")
    values = players["value"].to_list()
    assert all(len(v) == len(HEADER) + 3 * int(v[5]) and 1 <= v[5] <= 3 for v in values)
    final = out.sort("seq").group_by("league", "player").last()
    check = players.join(final, on=["league", "player"], nulls_equal=True)
    assert check.height == players.height == final.height
    assert check["value"].list.get(0).equals(check["rating_after"], check_names=False)
    assert check["value"].list.get(1).equals(check["sd_after"], check_names=False)
    days = check["played_at"].cast(pl.Int64).cast(pl.Float64)
    assert check["value"].list.get(4).equals(days, check_names=False)


def test_no_new_contests_leave_the_state_unchanged():
    results = contest_history(10, 1)
    _, state = duckrate.replay_with_state("elo_mmr", results, max_history=2)
    rows, same = duckrate.replay_with_state("elo_mmr", results.clear(), state=state, max_history=2)
    assert rows.height == 0
    assert_frame_equal(same, state, check_exact=True)


def test_memoryless_variants_keep_at_most_the_last_factor():
    """Elo-MMχ keeps no logistic factor; Elo-MMR(∞) only the last contest's (collapsed at the next drift)."""
    results = contest_history(15, 5)
    for params, n in (({"variant": "gaussian"}, 0), ({"rho": math.inf}, 1)):
        state = duckrate.replay_state("elo_mmr", results, **params)
        values = state.filter(pl.col("kind") == "player")["value"]
        assert (values.list.len() == len(HEADER) + 3 * n).all() and (values.list.get(5) == n).all()


def _split(results: pl.DataFrame, at: int):
    contests = contest_order(results)
    head = results.join(contests[:at], on=["league", "contest_id", "played_at"], how="semi", nulls_equal=True)
    tail = results.join(contests[at:], on=["league", "contest_id", "played_at"], how="semi", nulls_equal=True)
    return contests, head, tail


def test_late_contest_refused():
    results = contest_history(30, 6, weights=False)
    contests, head, tail = _split(results, 20)
    _, state = duckrate.replay_with_state("elo_mmr", head)
    old = contests[5]
    late = results.filter(pl.col("contest_id") == old["contest_id"][0]).with_columns(
        pl.lit(99999, dtype=pl.Int64).alias("contest_id")
    )
    with pytest.raises(RebuildRequired, match="contest_id 99999 arrived late for league"):
        duckrate.replay_with_state("elo_mmr", pl.concat([tail, late]), state=state)
    duckrate.replay_with_state("elo_mmr", tail, state=state)  # without it: continues


def test_same_played_at_later_contest_id_continues_earlier_refused():
    rows = pl.DataFrame(
        {
            "contest_id": [1, 1, 2, 2, 3, 3],
            "played_at": [5, 5, 5, 5, 5, 5],
            "player": ["a", "b", "b", "c", "a", "c"],
            "rank": [1, 2, 1, 2, 2, 1],
        }
    )
    full, full_state = duckrate.replay_with_state("elo_mmr", rows)
    first, state = duckrate.replay_with_state("elo_mmr", rows[:4])
    rest, rest_state = duckrate.replay_with_state("elo_mmr", rows[4:], state=state)
    assert_frame_equal(pl.concat([first, rest]).sort(KEY), full, check_exact=True)
    assert_frame_equal(rest_state, full_state, check_exact=True)
    earlier = rows[4:].with_columns(pl.lit(0, dtype=pl.Int64).alias("contest_id"))  # same played_at, smaller id
    with pytest.raises(RebuildRequired, match="contest_id 0 arrived late"):
        duckrate.replay_with_state("elo_mmr", earlier, state=state)


def test_contest_replayed_again_refused():
    results = contest_history(20, 7)
    contests, head, tail = _split(results, 12)
    _, state = duckrate.replay_with_state("elo_mmr", head)
    # contest 3 again, moved after the saved ones: not late, but already replayed
    again = results.join(contests[3:4], on=["league", "contest_id", "played_at"], how="semi", nulls_equal=True)
    again = again.with_columns(pl.lit(tail["played_at"].max()).alias("played_at"))
    with pytest.raises(
        RebuildRequired, match=f"contest_id {contests['contest_id'][3]} of league .* was already replayed"
    ):
        duckrate.replay_with_state("elo_mmr", pl.concat([tail, again]), state=state)


def test_other_parameters_system_and_time_type_refused():
    results = contest_history(20, 8, weights=False)
    _, head, tail = _split(results, 10)
    _, state = duckrate.replay_with_state("elo_mmr", head, beta=150.0)
    with pytest.raises(RebuildRequired, match="parameters"):
        duckrate.replay_with_state("elo_mmr", tail, state=state, beta=200.0)
    with pytest.raises(RebuildRequired, match="parameters"):
        duckrate.elo_mmr(tail, beta=150.0, algorithm="exact", state=state)
    with pytest.raises(RebuildRequired, match="played_at was days"):
        duckrate.replay_with_state(
            "elo_mmr", tail.with_columns(pl.col("played_at").cast(pl.Datetime("us"))), state=state, beta=150.0
        )
    matches = pl.DataFrame({"match_id": [1], "played_at": [1], "player_a": ["a"], "player_b": ["b"], "score_a": [1.0]})
    elo_state = duckrate.replay_state("elo", matches)
    with pytest.raises(RebuildRequired, match="saved by elo; expected a elo_mmr state"):
        duckrate.replay_with_state("elo_mmr", tail, state=elo_state)
    with pytest.raises(RebuildRequired, match="expected a glicko state"):
        duckrate.replay_with_state("glicko", matches, state=state)


def test_malformed_player_row_refused():
    results = contest_history(10, 9)
    _, head, tail = _split(results, 5)
    state = duckrate.replay_state("elo_mmr", head, max_history=2)
    broken = state.with_columns(
        pl.when(pl.col("kind") == "player").then(pl.col("value").list.head(7)).otherwise(pl.col("value")).alias("value")
    )
    with pytest.raises(RebuildRequired, match="elo_mmr player row holds 7 values"):
        duckrate.replay_with_state("elo_mmr", tail, state=broken, max_history=2)
