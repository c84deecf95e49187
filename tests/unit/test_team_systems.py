"""The team family as a whole: bit-for-bit the same ratings whatever numba's thread count or the input's row
order, the waves against a one-by-one replay, parameter checks, and the team marts against their oracles."""

from __future__ import annotations

import sys

import numba
import numpy as np
import polars as pl
import pytest
from helpers import mart_oracles
from helpers.systems import team_systems
from polars.testing import assert_frame_equal

import duckrate
from duckrate.core.errors import DuckrateInputError
from duckrate.registry import SYSTEMS
from duckrate.synthetic import generate_team_matches
from duckrate.systems.team import TeamMatches
from duckrate.systems.team_batches import match_waves, thread_sequences


@pytest.fixture(scope="module")
def results():
    # 3,000 matches among 3,000 equally active players: waves of well over 64 matches, rated on several threads
    return generate_team_matches(
        3_000, 3_000, seed=2, teams_per_match=(2, 3), team_size=(1, 5), partial_play_rate=0.1, activity_sd=0.0
    )


@pytest.mark.parametrize("system", [s.name for s in team_systems()])
def test_same_bits_whatever_the_thread_count_and_row_order(results, system):
    entry = SYSTEMS.get(system)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = entry.frame(results)
        numba.set_num_threads(before)
        many = entry.frame(results.sample(fraction=1.0, shuffle=True, seed=1))
    finally:
        numba.set_num_threads(before)
    assert_frame_equal(one, many, check_exact=True)


def _prepared(results):
    from duckrate.core.matches import columns_from_polars
    from duckrate.core.teams import prepare_team_results

    return prepare_team_results(columns_from_polars(results, "team_results"))


def test_waves_hold_each_match_after_every_earlier_match_of_its_players(results):
    prepared = _prepared(results)
    wave_start, wave_matches, previous = match_waves(
        prepared.order, prepared.team_start, prepared.match_teams, prepared.state, prepared.n_states
    )
    assert sorted(wave_matches.tolist()) == list(range(prepared.n_matches))
    wave_of = np.empty(prepared.n_matches, dtype=np.int64)
    for w in range(len(wave_start) - 1):
        wave_of[wave_matches[wave_start[w] : wave_start[w + 1]]] = w
    last: dict = {}
    for m in range(prepared.n_matches):
        first, stop = prepared.team_start[prepared.match_teams[m]], prepared.team_start[prepared.match_teams[m + 1]]
        for position in range(first, stop):
            slot = prepared.state[prepared.order[position]]
            assert previous[position] == last.get(slot, -1)
            if slot in last:
                assert wave_of[last[slot]] < wave_of[m]
        for position in range(first, stop):
            last[prepared.state[prepared.order[position]]] = m
    assert len(wave_start) - 1 < prepared.n_matches / 10  # the schedule does put matches side by side


def test_thread_sequences_share_out_every_match_in_wave_order(results):
    prepared = _prepared(results)
    matches = TeamMatches.of(prepared)
    for threads in (1, 2, 3, 5):
        sequences = thread_sequences(matches.wave_start, matches.wave_matches, threads)
        assert len(sequences) == threads
        assert sorted(np.concatenate(sequences).tolist()) == list(range(prepared.n_matches))
        position = np.empty(prepared.n_matches, dtype=np.int64)
        position[matches.wave_matches] = np.arange(prepared.n_matches)
        for sequence in sequences:
            assert np.all(np.diff(position[sequence]) > 0)


@pytest.mark.parametrize("system", ["plackett_luce", "trueskill_teams"])
def test_any_number_of_threads_rates_the_same_bits(results, system, monkeypatch):
    """More threads than this machine's cores too: each waits for the matches it depends on."""
    from duckrate.systems import team_batches
    from duckrate.systems.event_state import fresh_start

    prepared, entry = _prepared(results), SYSTEMS.get(system)
    params = entry.resolve({})
    runs = []
    original = team_batches.rate_in_waves
    for threads in (1, 2, 3, 4):
        forced = lambda m, rate, threads=None, n=threads: original(m, rate, n)
        for module in ("duckrate.systems.weng_lin.replay", "duckrate.systems.trueskill_teams.replay"):
            monkeypatch.setattr(sys.modules[module], "rate_in_waves", forced)
        computed, _ = entry.run(prepared, None, params, fresh_start(prepared))
        runs.append(computed)
    for other in runs[1:]:
        for name, values in runs[0].items():
            assert np.array_equal(values, other[name], equal_nan=True), name


def test_a_failing_thread_stops_the_others_and_raises(results):
    from duckrate.systems.team_batches import rate_in_waves

    matches = TeamMatches.of(_prepared(results))

    def rate(sequence, done):
        if sequence[0] != matches.wave_matches[0]:  # not the first thread's share: fail at once
            raise RuntimeError("boom")
        first = sequence[0]
        while done[-1] == 0:  # the first thread waits for a match the failed thread would rate
            pass
        assert first >= 0

    with pytest.raises(RuntimeError, match="boom"):
        rate_in_waves(matches, rate, threads=2)


def test_parameters_are_checked():
    frame = generate_team_matches(5, 20, seed=1)
    with pytest.raises(DuckrateInputError, match="weight_min"):
        duckrate.plackett_luce(frame, weight_min=2.0, weight_max=1.0)
    with pytest.raises(DuckrateInputError, match="both NULL"):
        duckrate.plackett_luce(frame, weight_min=None)
    with pytest.raises(DuckrateInputError, match="window_size"):
        duckrate.bradley_terry_part(frame, window_size=0)
    with pytest.raises(DuckrateInputError, match="draw_probability"):
        duckrate.trueskill_teams(frame, draw_probability=1.0)
    with pytest.raises(DuckrateInputError, match="sigma"):
        duckrate.thurstone_mosteller_full(frame, sigma=-1.0)


def test_team_marts_equal_their_oracles(results):
    replay = pl.concat(
        [
            duckrate.plackett_luce(results).with_columns(system=pl.lit("plackett_luce")),
            duckrate.trueskill_teams(results).with_columns(system=pl.lit("trueskill_teams")),
        ],
        how="diagonal_relaxed",
    )
    board = duckrate.team_leaderboard(replay)
    assert_frame_equal(board, mart_oracles.team_leaderboard(replay), check_exact=False, rel_tol=0, abs_tol=1e-12)
    pairs = duckrate.team_match_forecasts(replay)
    expected = mart_oracles.team_match_forecasts(replay)
    columns = [c for c in expected.columns]
    got = pairs.select(columns).sort("league", "system", "seq")
    assert_frame_equal(
        got, expected.sort("league", "system", "seq"), check_exact=False, rel_tol=0, abs_tol=1e-12, check_dtypes=False
    )
    summary = duckrate.calibration_summary(pairs)
    assert summary.height == 2 and (summary["n"] > 0).all()


def test_the_saved_state_holds_players_and_leagues_only_and_refuses_a_match_again():
    """A team state does not grow with the matches (one row per player and league), and a match passed again
    is refused as late, naming it."""
    from duckrate.systems.saved_state import RebuildRequired

    history = generate_team_matches(400, 50, seed=3, n_leagues=2)
    system = SYSTEMS.get("plackett_luce")
    _, state = system.with_state(history)
    assert sorted(state["kind"].unique().to_list()) == ["league", "player"]
    assert state.filter(pl.col("kind") == "player").height == history.select("league", "player").n_unique()
    again = history.filter(pl.col("match_id") == 399)
    with pytest.raises(RebuildRequired, match="match_id 399 arrived late"):
        system.with_state(again, state=state)


def test_weight_bounds_is_openskills_spelling_of_weight_min_and_weight_max():
    frame = generate_team_matches(200, 50, seed=4, partial_play_rate=0.4)
    spelled = duckrate.plackett_luce(frame, weight_min=0.5, weight_max=3.0)
    assert_frame_equal(duckrate.plackett_luce(frame, weight_bounds=(0.5, 3.0)), spelled, check_exact=True)
    assert_frame_equal(
        duckrate.plackett_luce(frame, weight_bounds=None),
        duckrate.plackett_luce(frame, weight_min=None, weight_max=None),
        check_exact=True,
    )
    assert not duckrate.plackett_luce(frame, weight_bounds=None).equals(spelled)
    with pytest.raises(DuckrateInputError, match="one spelling of the weight bounds"):
        duckrate.plackett_luce(frame, weight_bounds=(1.0, 3.0), weight_min=0.5, weight_max=3.0)
    with pytest.raises(DuckrateInputError, match=r"weight_bounds = \(3.0, 1.0\); expected \[low, high\]"):
        duckrate.plackett_luce(frame, weight_bounds=(3.0, 1.0))


def test_weight_bounds_in_sql_takes_a_list_or_null():
    import duckdb

    frame = generate_team_matches(200, 50, seed=4, partial_play_rate=0.4)
    con = duckdb.connect()
    duckrate.register(con)
    con.register("results", frame)
    order = ["league", "seq", "team", "player"]
    for given, python in (("[0.5, 3.0]", (0.5, 3.0)), ("NULL", None)):
        sql = con.sql(f"SELECT * FROM bradley_terry_full_replay('results', weight_bounds := {given})").pl()
        expected = duckrate.bradley_terry_full(frame, weight_bounds=python)
        assert sql.sort(order)["rating_after"].to_list() == expected.sort(order)["rating_after"].to_list()
    with pytest.raises(duckdb.Error, match="weight_bounds"):
        con.sql("SELECT * FROM plackett_luce_replay('results', weight_bounds := [2.0])").fetchall()


def test_trueskill_team_is_the_contracts_name_for_trueskill_teams():
    import duckdb

    frame = generate_team_matches(150, 40, seed=5)
    assert duckrate.trueskill_team is duckrate.trueskill_teams
    assert SYSTEMS.get("trueskill_team") is SYSTEMS.get("trueskill_teams")
    assert "trueskill_team" not in SYSTEMS.names()  # listed once, under its own name
    con = duckdb.connect()
    duckrate.register(con)
    con.register("results", frame)
    for macro, columns in (("replay", "*"), ("state", "* EXCLUDE (system)")):  # a state records its maker's name
        ours = con.sql(f"SELECT {columns} FROM trueskill_team_{macro}('results', draw_probability := 0.2)").fetchall()
        theirs = con.sql(
            f"SELECT {columns} FROM trueskill_teams_{macro}('results', draw_probability := 0.2)"
        ).fetchall()
        assert sorted(ours, key=repr) == sorted(theirs, key=repr)
