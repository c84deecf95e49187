"""Every registered contest system through the one contest-system interface: agreement with the Elo-MMR
reference implementation where duckrate's defaults are the reference's (through ``elo-mmr-py``, to 1e-6
rating points after every contest), batches continued from saved states equal one replay bit for bit, the
input row order and chunking change nothing, and the SQL macros give what the Python API gives."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.contest_cases import KEY, contest_history, in_batches
from helpers.contest_peer import reference_ratings
from helpers.systems import contest_systems
from polars.testing import assert_frame_equal

import duckrate
from duckrate.synthetic import generate_contests

NEW_SYSTEMS = [system.name for system in contest_systems() if system.name != "elo_mmr"]  # Elo-MMR: its own tests
# duckrate's system (with its defaults) and the reference's name for the same system and defaults.
REFERENCE_NAMES = {
    "bar": "bar",
    "codeforces": "cfsys",
    "glicko_contest": "glicko",
    "topcoder": "tcsys",
    "trueskill_contest": "trueskill",
}
# Rating points. TrueSkill's tie updates subtract nearly equal erfc values, and the reference's erfc (statrs
# 0.18.0) is off by up to ~1e-10 relative for |z| >= 0.5 (its interval constants are 10-digit decimals of
# single-precision values; fixed in later statrs): measured against a 40-digit transcription of the
# reference, duckrate (math.erfc) agrees to ~1e-12 and the reference is off by ~1e-8 per contest, which
# adds up to a few 1e-6 over hundreds of contests. The other systems agree to ~1e-9.
TOLERANCE = {"bar": 1e-6, "codeforces": 1e-6, "glicko_contest": 1e-6, "topcoder": 1e-6, "trueskill_contest": 5e-6}


def one_league_history(seed: int) -> pl.DataFrame:
    """A few hundred contests of 5-40 players from a pool of 300, with ties (never all tied)."""
    results = generate_contests(300, 25, 300, seed=seed, tie_rate=0.05)
    return results.drop("league")


@pytest.mark.parametrize("system", sorted(REFERENCE_NAMES))
def test_agrees_with_the_reference_implementation(system):
    results = one_league_history(7)
    rows = getattr(duckrate, system)(results)
    reference = reference_ratings(results, REFERENCE_NAMES[system])
    expected = np.array([reference[(c, p)] for c, p in zip(rows["contest_id"], rows["player"])])
    assert np.abs(rows["rating_after"].to_numpy() - expected[:, 0]).max() < TOLERANCE[system]
    assert np.abs(rows["sd_after"].to_numpy() - expected[:, 1]).max() < TOLERANCE[system]


@pytest.mark.parametrize("system", sorted(REFERENCE_NAMES))
def test_agrees_with_the_reference_implementation_on_large_contests(system):
    """Contests of a few hundred players: the systems that fit their shared sums once per contest
    (codeforces, glicko_contest; exact below 64 participants) take that path here."""
    results = generate_contests(30, 300, 3000, seed=4, tie_rate=0.05).drop("league")
    assert results.group_by("contest_id").len()["len"].min() >= 64
    rows = getattr(duckrate, system)(results)
    reference = reference_ratings(results, REFERENCE_NAMES[system])
    expected = np.array([reference[(c, p)] for c, p in zip(rows["contest_id"], rows["player"])])
    assert np.abs(rows["rating_after"].to_numpy() - expected[:, 0]).max() < TOLERANCE[system]
    assert np.abs(rows["sd_after"].to_numpy() - expected[:, 1]).max() < TOLERANCE[system]


@pytest.mark.parametrize("system", NEW_SYSTEMS)
@pytest.mark.parametrize("seed", [1, 2])
def test_batches_equal_one_replay(system, seed):
    results = contest_history(40, seed, string_ids=seed == 2)
    full, full_state = duckrate.replay_with_state(system, results)
    rows, state = in_batches(results, [1, 9, 22, 39], {}, system=system)
    assert rows.height == results.height
    assert_frame_equal(rows, full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)
    assert_frame_equal(full, getattr(duckrate, system)(results), check_exact=True)


@pytest.mark.parametrize("system", NEW_SYSTEMS)
def test_row_order_and_chunks_change_nothing(system):
    results = contest_history(30, 5)
    rows = getattr(duckrate, system)(results)
    shuffled = getattr(duckrate, system)(results.sample(fraction=1.0, shuffle=True, seed=9))
    chunked = getattr(duckrate, system)(results, chunk_size=40)
    assert_frame_equal(shuffled, rows, check_exact=True)
    assert_frame_equal(chunked, rows, check_exact=True)
    assert rows.columns == list(duckrate.systems.contest.OUTPUT_COLUMNS)


@pytest.mark.parametrize("system", NEW_SYSTEMS)
def test_sql_macros_give_the_python_results(con, system):
    results = contest_history(30, 6)
    con.register("frame", results)
    con.execute("CREATE TABLE contest_results AS SELECT * FROM frame")
    sql_rows = con.sql(f"SELECT * FROM {system}_replay('contest_results')").pl().sort(KEY, nulls_last=True)
    python_rows, python_state = duckrate.replay_with_state(system, results)
    assert_frame_equal(sql_rows, python_rows, check_exact=True)
    sql_state = con.sql(f"SELECT * FROM {system}_state('contest_results')").pl()
    order = ["kind", "league", "player", "opponent", "seq"]
    assert_frame_equal(
        sql_state.sort(order, nulls_last=True), python_state.sort(order, nulls_last=True), check_exact=True
    )


@pytest.mark.parametrize("system", NEW_SYSTEMS)
def test_priors_give_newcomers_their_rating(system):
    results = contest_history(10, 3)
    first = results.sort("played_at", "contest_id").row(0, named=True)["player"]
    priors = pl.DataFrame({"player": [first], "rating": [2222.0], "sd": [120.0]})
    rows = getattr(duckrate, system)(results, priors=priors)
    mine = rows.filter(pl.col("player") == first).sort("seq")
    assert mine["rating_before"][0] == 2222.0
